#!/usr/bin/env bash
# The compose fleet end to end, on a fresh Debian machine (root) that reaches Debian's mirror
# but no image registry: installs Docker, Compose and debootstrap from Debian; makes the base
# images the project names (debian:bookworm-slim from debootstrap, rust:1.95-bookworm with this
# machine's Rust toolchain, Debian's MariaDB standing in for mariadb:11.4); builds the crawler
# with the project's own Dockerfile; runs docker-compose.yml (with examples/fleet-demo/
# docker-compose.local.yml: the local images, short timings, a site to check) — the database,
# the reaper, the dashboard, 4 workers and the site; seeds examples/fleet-demo/urls.txt; kills
# one worker container mid-crawl; waits for the drain; prints `crawler-report --summary`; checks
# every URL's verdict against what its path says it is (site.py); and tears everything down
# whatever happened: the containers, the volume, the network, its own dockerd and the docker0
# bridge. Exits 0 when every verdict is right.
#
# Its dockerd is its own (socket /run/crawler-fleet-demo/docker.sock, data in
# /var/lib/crawler-fleet-demo, kept as a build cache), started with --iptables=false
# --ip-masq=false --ip-forward=false: it changes neither the firewall nor forwarding. The
# containers reach each other on the compose network; builds that install packages use the
# host's network. The Rust toolchain cannot be downloaded here, so rustup's on this machine
# (~/.rustup, rustc 1.95) and Cargo's registry cache are copied into the local rust image,
# which builds offline: the project's Dockerfile runs unchanged.
#
#   examples/fleet-demo.sh
#
# On a 2-core machine, about 9 minutes the first time (most of it the release build of every
# dependency), 6 after a change of the crawler's code, a minute of which is the fleet itself.
# The images stay in /var/lib/crawler-fleet-demo as a build cache (rm -rf it to start afresh).
set -euo pipefail
cd "$(dirname "$0")/.."

readonly demo=examples/fleet-demo
readonly state=/var/lib/crawler-fleet-demo
readonly run_dir=/run/crawler-fleet-demo
readonly project=crawler-fleet-demo
readonly workers=4
export DOCKER_HOST="unix://$run_dir/docker.sock"
started=$(date +%s)
dockerd_pid=""
env_file=""

say() { printf '[fleet-demo %4ss] %s\n' "$(($(date +%s) - started))" "$*" >&2; }

compose() {
    docker-compose -p "$project" --env-file "$env_file" \
        -f docker-compose.yml -f "$demo/docker-compose.local.yml" "$@"
}

# Whatever happened: the fleet, its volume and network, the daemon, the bridge.
teardown() {
    local code=$?
    trap - EXIT INT TERM
    say "tearing down"
    if [ -n "$dockerd_pid" ]; then
        compose down --volumes --remove-orphans --timeout 5 >/dev/null 2>&1 || true
        kill "$dockerd_pid" 2>/dev/null || true
        for _ in $(seq 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
        kill -9 "$dockerd_pid" 2>/dev/null || true
    fi
    ip link delete docker0 2>/dev/null || true
    # The daemon's network namespaces stay mounted under its run directory.
    grep -o " $run_dir/[^ ]*" /proc/mounts | sort -r | xargs -r -n 1 umount 2>/dev/null || true
    rm -rf "$run_dir"
    [ -z "$env_file" ] || rm -f "$env_file"
    say "exit $code after $(($(date +%s) - started)) s"
    exit "$code"
}
trap teardown EXIT
trap 'exit 130' INT TERM

install_packages() {
    local missing=()
    command -v dockerd >/dev/null || missing+=(docker.io)
    command -v docker-compose >/dev/null || missing+=(docker-compose)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    command -v curl >/dev/null || missing+=(curl)
    command -v python3 >/dev/null || missing+=(python3)
    [ ${#missing[@]} -eq 0 ] && return
    say "installing ${missing[*]}"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

start_dockerd() {
    mkdir -p "$state" "$run_dir"
    say "starting dockerd (no iptables, no masquerade, no forwarding)"
    dockerd --iptables=false --ip-masq=false --ip-forward=false \
        --data-root "$state/docker" --exec-root "$run_dir/exec" \
        --pidfile "$run_dir/dockerd.pid" -H "$DOCKER_HOST" >"$state/dockerd.log" 2>&1 &
    dockerd_pid=$!
    for _ in $(seq 60); do docker version >/dev/null 2>&1 && return; sleep 0.5; done
    say "dockerd did not start: $state/dockerd.log"; tail -20 "$state/dockerd.log" >&2
    return 1
}

# The Debian mirror apt uses here: debootstrap takes the same.
mirror() {
    local uri
    uri=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list 2>/dev/null | grep -v '^#' | grep -oE 'https?://[^ ]+' \
        | grep -v security | head -n 1)
    echo "${uri:-http://deb.debian.org/debian}"
}

base_images() {
    if ! docker image inspect debian:bookworm-slim >/dev/null 2>&1; then
        local rootfs="$state/rootfs"
        say "debian:bookworm-slim from debootstrap --variant=minbase bookworm"
        rm -rf "$rootfs"
        debootstrap --variant=minbase bookworm "$rootfs" "$(mirror)" >"$state/debootstrap.log"
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - debian:bookworm-slim >/dev/null
        rm -rf "$rootfs"
    fi
    if ! docker image inspect rust:1.95-bookworm >/dev/null 2>&1; then
        say "rust:1.95-bookworm with this machine's toolchain"
        local toolchain context="$state/rust-context"
        toolchain=$(rustc +1.95 --print sysroot 2>/dev/null || rustc --print sysroot)
        "$toolchain/bin/rustc" --version | grep -q '^rustc 1\.95\.' \
            || { say "rustc 1.95 is needed: $toolchain has $("$toolchain/bin/rustc" --version)"; return 1; }
        rm -rf "$context" && mkdir -p "$context/rust" "$context/cargo"
        cp -al "$toolchain"/{bin,lib,libexec,etc} "$context/rust/" 2>/dev/null \
            || cp -a "$toolchain"/{bin,lib,libexec,etc} "$context/rust/"
        cp -a "${CARGO_HOME:-$HOME/.cargo}"/registry/{index,cache} "$context/cargo/"
        cp "$demo/rust.Dockerfile" "$context/Dockerfile"
        docker build -q --network host -t rust:1.95-bookworm "$context" >/dev/null
        rm -rf "$context"
    fi
}

# A fresh secret of letters and digits (the passwords go into DATABASE_URL as they are).
secret() { head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# One value of the report's JSON summary.
summary_value() {
    compose run --rm -T report --summary --format json 2>/dev/null \
        | tr -d '\n' | grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2
}

install_packages
start_dockerd
base_images

env_file=$(mktemp /tmp/crawler-fleet-demo.XXXXXX.env)
token=$(secret)
{
    echo "MARIADB_PASSWORD=$(secret)"
    echo "MARIADB_ROOT_PASSWORD=$(secret)"
    echo "CRAWLER_DASHBOARD_TOKEN=$token"
} >"$env_file"

say "building the images (the crawler with the project's Dockerfile)"
compose build -q
say "starting the database, the reaper, the dashboard and the site"
compose up -d db site reaper dashboard
say "seeding $demo/urls.txt"
compose run --rm -T seed "/data/$demo/urls.txt"
total=$(grep -c . "$demo/urls.txt")
say "starting $workers workers"
compose up -d --scale worker="$workers" worker

# The dashboard asks for its token.
code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8080/api/state || true)
authorized=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" \
    http://127.0.0.1:8080/api/state || true)
say "dashboard: $code without the token, $authorized with it"
[ "$code" = 401 ] && [ "$authorized" = 200 ]

# Kill one worker container once a fifth of the list is done, while it holds work: the one that
# has checked the most (the fleet's host partitions may all sit with one worker at first), named
# in the summary by its machine, which is its container's id.
for _ in $(seq 300); do
    done_now=$(summary_value done)
    [ "${done_now:-0}" -ge $((total / 5)) ] && break
    sleep 1
done
victim=$(compose run --rm -T report --summary --format json 2>/dev/null | python3 -c '
import json, sys
summary = json.load(sys.stdin)  # a list of one summary
workers = summary[0]["workers"] if summary else []
busiest = max(workers, key=lambda w: w["checked"], default=None)
print(busiest["host"] if busiest and busiest["checked"] > 0 else "")' || true)
[ -n "$victim" ] || victim=$(compose ps -q worker | head -n 1)
say "killing worker container ${victim:0:12} with $done_now of $total done"
docker kill "$victim" >/dev/null

say "waiting for the drain"
deadline=$(($(date +%s) + 600))
while :; do
    pending=$(summary_value pending)
    claimed=$(summary_value claimed)
    left=$((${pending:-1} + ${claimed:-0}))
    [ "$left" -eq 0 ] && break
    [ "$(date +%s)" -lt "$deadline" ] || { say "$left sites still unchecked after 10 minutes"; exit 1; }
    sleep 2
done
say "killed worker: $(docker inspect -f '{{.State.Status}}, exit {{.State.ExitCode}}' "$victim")"

compose run --rm -T report --all --summary

# Every URL's verdict against its path (site.py): alive, slow, redirect alive; dead, gone
# dead; blocked blocked.
wrong=$(compose run --rm -T report --all --format csv | awk -F, '
    NR == 1 { next }
    {
        split($1, p, "/"); kind = p[4]
        want = (kind == "dead" || kind == "gone") ? "dead" : (kind == "blocked") ? "blocked" : "alive"
        n++
        if ($2 != want) { print "  " $1 ": " $2 ", expected " want; bad++ }
    }
    END { if (n != '"$total"') print "  " n " URLs reported, expected '"$total"'" }')
if [ -n "$wrong" ]; then
    say "wrong verdicts:"; echo "$wrong" >&2
    exit 1
fi

# The dashboard's history, from the database: every URL once, and the checks of each worker
# (the killed one's included).
curl -sf -H "Authorization: Bearer $token" 'http://127.0.0.1:8080/api/history?range=0' \
    | python3 -c '
import json, sys
plot = json.load(sys.stdin)
verdicts = sum(sum(s["counts"]) for s in plot["verdicts"])
workers = {s["name"]: sum(s["counts"]) for s in plot["workers"]}
print("dashboard history: %d verdicts; checks by worker: %s" % (verdicts, workers), file=sys.stderr)
sys.exit(0 if verdicts == '"$total"' and len(workers) >= 2 else 1)'
say "every one of the $total URLs has its right verdict, after a worker container was killed"
