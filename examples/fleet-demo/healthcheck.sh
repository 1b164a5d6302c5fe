#!/bin/sh
# The official image's healthcheck.sh, for the two checks docker-compose.yml asks for: the
# server answers (--connect) and InnoDB is up (--innodb_initialized). As root over the socket.
set -eu
mariadb --protocol=socket -uroot -p"${MARIADB_ROOT_PASSWORD}" -N -e \
    "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = 'InnoDB' AND SUPPORT IN ('YES', 'DEFAULT')" \
    | grep -q 1
