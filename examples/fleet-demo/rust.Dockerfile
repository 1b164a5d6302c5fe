# A local stand-in for the official rust:1.95-bookworm, for a machine that reaches no image
# registry (examples/fleet-demo.sh): Debian's compiler and linker on the local
# debian:bookworm-slim, with this machine's Rust toolchain (rustup's, which cannot be
# downloaded here) and its Cargo registry (the crates Cargo.lock names, already fetched), so
# that the project's Dockerfile builds unchanged, offline. The context is made by the script:
#   rust/      the toolchain's bin, lib and libexec (no docs)
#   cargo/     ~/.cargo/registry's index and cache (the .crate files; sources are unpacked again)
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY rust/ /usr/local/rust/
COPY cargo/ /usr/local/cargo/registry/
ENV PATH=/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CARGO_HOME=/usr/local/cargo \
    CARGO_NET_OFFLINE=true
RUN rustc --version && cargo --version
