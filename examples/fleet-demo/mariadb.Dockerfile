# A local stand-in for the official mariadb:11.4, for a machine that reaches no image registry
# (examples/fleet-demo.sh): Debian's MariaDB 10.11 (the version the test suite runs on), with
# the two things of the official image that docker-compose.yml relies on: the first start
# creates MARIADB_DATABASE and MARIADB_USER with MARIADB_PASSWORD (and root's password), and
# `healthcheck.sh --connect --innodb_initialized` tells when it is ready.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends mariadb-server \
 && rm -rf /var/lib/apt/lists/* /var/lib/mysql/* \
 && mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld /var/lib/mysql
COPY mariadb-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
COPY healthcheck.sh /usr/local/bin/healthcheck.sh
VOLUME /var/lib/mysql
EXPOSE 3306
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["mariadbd"]
