#!/bin/sh
# The official image's first-start setup, reduced to what docker-compose.yml uses: options
# alone ("--max-connections=200") are mariadbd's; an empty data directory is initialized,
# and the database, the user and root's password are made from the MARIADB_* variables.
set -eu
[ "${1#-}" = "$1" ] || set -- mariadbd "$@"
if [ "$1" = mariadbd ] && [ ! -d /var/lib/mysql/mysql ]; then
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql --auth-root-authentication-method=normal >/dev/null
    mariadbd --user=mysql --skip-networking --socket=/run/mysqld/init.sock &
    pid=$!
    i=0
    until mariadb-admin --socket=/run/mysqld/init.sock ping >/dev/null 2>&1; do
        i=$((i + 1)); [ "$i" -lt 60 ] || { echo "mariadbd did not start" >&2; exit 1; }
        sleep 1
    done
    mariadb --socket=/run/mysqld/init.sock <<SQL
CREATE DATABASE IF NOT EXISTS \`${MARIADB_DATABASE}\`;
CREATE USER '${MARIADB_USER}'@'%' IDENTIFIED BY '${MARIADB_PASSWORD}';
GRANT ALL ON \`${MARIADB_DATABASE}\`.* TO '${MARIADB_USER}'@'%';
ALTER USER 'root'@'localhost' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD}';
FLUSH PRIVILEGES;
SQL
    kill "$pid"
    wait "$pid" || true
fi
if [ "$1" = mariadbd ]; then
    shift
    exec mariadbd --user=mysql --bind-address=0.0.0.0 --skip-name-resolve "$@"
fi
exec "$@"
