#!/bin/sh
# Writes an empty source file for every target the workspace's manifests name, and a
# src/lib.rs for every crate, so that `cargo build` can compile the dependencies alone: the
# Dockerfile's cached layer, rebuilt only when a manifest or Cargo.lock changes.
#
# Run from the workspace root, where only the manifests are. Targets without a `path` get
# Cargo's default one (src/bin/NAME.rs, tests/NAME.rs, benches/NAME.rs, examples/NAME.rs).
set -eu
for manifest in crates/*/Cargo.toml tests/Cargo.toml; do
    dir=$(dirname "$manifest")
    mkdir -p "$dir/src"
    : > "$dir/src/lib.rs"
    awk -v dir="$dir" '
        function flush() {
            if (kind == "") return
            if (path == "") {
                if (kind == "lib") path = "src/lib.rs"
                else if (kind == "bin") path = "src/bin/" name ".rs"
                else if (kind == "test") path = "tests/" name ".rs"
                else if (kind == "bench") path = "benches/" name ".rs"
                else path = "examples/" name ".rs"
            }
            print dir "/" path
            kind = ""
        }
        function value(line) { sub(/^[^=]*= *"/, "", line); sub(/".*/, "", line); return line }
        /^\[/ { flush() }
        /^\[lib\]/ { kind = "lib"; name = ""; path = "" }
        /^\[\[(bin|test|bench|example)\]\]/ { kind = $0; gsub(/[][ ]/, "", kind); name = ""; path = "" }
        kind != "" && /^name *=/ { name = value($0) }
        kind != "" && /^path *=/ { path = value($0) }
        END { flush() }
    ' "$manifest"
done | while read -r file; do
    mkdir -p "$(dirname "$file")"
    echo 'fn main() {}' > "$file"
done
