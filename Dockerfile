# Every crawler binary (crawler-seed, crawler-worker, crawler-reap, crawler-report, and any
# other the worker and coordinator crates define) in one slim image. Built by
# docker-compose.yml; by hand:
#   docker build -t crawler .
#
# The toolchain the project is tested with; the dependencies are those of Cargo.lock.
FROM rust:1.95-bookworm AS build
WORKDIR /src
# Release binaries without debug info, stripped (the workspace profile keeps line tables for
# profiling; an image has no use for them). Set before the first build, so both layers agree.
ENV CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_RELEASE_STRIP=symbols

# 1. The dependencies alone, from the manifests and the lock with empty sources: this layer is
#    rebuilt only when one of them changes, not on every edit of the code.
COPY Cargo.toml Cargo.lock ./
COPY crates/verdict/Cargo.toml crates/verdict/
COPY crates/queue/Cargo.toml crates/queue/
COPY crates/links/Cargo.toml crates/links/
COPY crates/check/Cargo.toml crates/check/
COPY crates/cli/Cargo.toml crates/cli/
COPY crates/coordinator/Cargo.toml crates/coordinator/
COPY crates/worker/Cargo.toml crates/worker/
COPY tests/Cargo.toml tests/
COPY docker/stub-sources.sh /usr/local/bin/
RUN stub-sources.sh \
 && cargo build --release --locked -p crawler-worker -p crawler-coordinator --bins \
 && cargo clean --release -p crawler-verdict -p crawler-queue -p crawler-links -p crawler-check \
      -p crawler-cli -p crawler-worker -p crawler-coordinator

# 2. The crawler itself. Every binary of the two crates, so that a new one is in the image
#    without an edit here; all of them land in /out.
COPY . .
RUN cargo build --release --locked -p crawler-worker -p crawler-coordinator --bins \
 && mkdir /out \
 && find target/release -maxdepth 1 -type f -executable -name 'crawler-*' -exec cp {} /out/ \;

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent crawler
COPY --from=build /out/ /usr/local/bin/
USER crawler
WORKDIR /tmp
CMD ["crawler-worker"]
