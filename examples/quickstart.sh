#!/usr/bin/env bash
# The quick start: builds crawler and runs a whole crawl of examples/urls.txt on the default
# SQLite database, against a local demo site, then prints the report. Needs no server and no
# network; leaves its database in a temporary directory it names at the end.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --manifest-path "$repo/Cargo.toml" --bins
bin="$repo/target/release"

"$bin/crawler-demo-site" 127.0.0.1:8808 &
site=$!
trap 'kill $site 2>/dev/null' EXIT

work="$(mktemp -d)"
cd "$work"                                    # crawler.db is created here: the SQLite default
"$bin/crawler-seed" "$repo/examples/urls.txt"
"$bin/crawler-worker" --drain --retry-delay 1s
echo "--- crawler-report --dead"
"$bin/crawler-report" --dead
echo "--- crawler-report --summary"
"$bin/crawler-report" --summary
echo "(the database is $work/crawler.db)"
