# The four crawler binaries on a slim Debian. Built by docker-compose.yml; by hand:
#   docker build -t crawler .
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p crawler-worker -p crawler-coordinator --bins

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/crawler-seed /src/target/release/crawler-worker \
     /src/target/release/crawler-reap /src/target/release/crawler-report /usr/local/bin/
USER 65534:65534
WORKDIR /tmp
CMD ["crawler-worker"]
