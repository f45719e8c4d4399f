#!/usr/bin/env bash
# The cost guard: measures the figures of benches/baseline.tsv and fails,
# naming each, when one is more than 2 % above its baseline.
#
# Every figure is one that does not depend on how busy the machine is:
# instructions per request counted by callgrind (in-process, the rows of
# benches/http/instructions.sh; and pronghorn's `serve` over loopback, the
# rows of benches/http/server-instructions.sh), and the heap a route table
# holds per route (live bytes, counted by the allocator).
#
# A change that means to cost more updates the baseline in the same commit
# (`UPDATE=1 benches/guard.sh` writes what it measured), with one line in
# BENCHMARKS.md saying what bought it.
#
# Usage: benches/guard.sh             (measure, compare, fail on a rise)
#        UPDATE=1 benches/guard.sh    (measure, and write the baseline)
#        ONLY='POST|table' benches/guard.sh   (the figures matching a regex)
#        TOLERANCE=5 benches/guard.sh (another tolerance, in per cent)
set -euo pipefail
cd "$(dirname "$0")/http"
. ./lib.sh
need valgrind
need wrk
need h2load nghttp2-client
baseline=../baseline.tsv
tolerance=${TOLERANCE:-2}
# The same code whatever the caller's flags and wherever the clone is (the
# source's path, in panic messages, can tip the optimiser's choices: it is
# mapped to one name), without debug information (which changes no
# instruction, and would double the build's size), in a target directory
# of its own.
export CARGO_TARGET_DIR=target/guard
root=$(cd ../.. && pwd)
RUSTFLAGS="--remap-path-prefix=$root=/pronghorn" CARGO_PROFILE_RELEASE_DEBUG=0 \
    cargo build --release --locked --bin server --bin instructions --bin table_bytes -q
binary=$CARGO_TARGET_DIR/release/instructions

# over_loopback VARIABLES...: pronghorn's `serve` per request, under wrk
# or h2load, with VARIABLES set for server-instructions.sh.
over_loopback() {
    env "$@" WARM=1 COUNT=3 SERVER="$CARGO_TARGET_DIR/release/server" ./server-instructions.sh pronghorn \
        | awk -F'|' '$2 ~ /pronghorn/ { gsub(/ /, "", $3); print $3 }'
}

# figure NAME: the figure's measured value.
figure() {
    case $1 in
        "in-process "*) per_request "$binary" "${1#in-process }" ;;
        "serve plain GET") over_loopback PIPELINE=0 ;;
        "serve pipelined GET") over_loopback PIPELINE=1 ;;
        "serve POST /echo") over_loopback PIPELINE=0 SCRIPT=post.lua ROUTE=/echo ;;
        "serve HTTP/2 GET") over_loopback H2=1 ;;
        "bytes per route, table") "$CARGO_TARGET_DIR/release/table_bytes" table 100000 ;;
        "bytes per route, Reloadable") "$CARGO_TARGET_DIR/release/table_bytes" reloadable 100000 ;;
        *) echo "no figure named '$1'" >&2; return 1 ;;
    esac
}

failed=()
measured=$(mktemp)
trap 'rm -f "$measured"' EXIT
printf '| figure | baseline | measured | change |\n| --- | ---: | ---: | ---: |\n'
while IFS=$'\t' read -r name base; do
    [[ -z "$name" || "$name" == \#* ]] && { printf '%s\t%s\n' "$name" "$base" >> "$measured"; continue; }
    if [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]]; then
        printf '%s\t%s\n' "$name" "$base" >> "$measured"
        continue
    fi
    value=$(figure "$name")
    [[ "$value" =~ ^[0-9]+$ ]] || { echo "could not measure '$name' (got '$value')" >&2; exit 1; }
    printf '%s\t%s\n' "$name" "$value" >> "$measured"
    change=$(awk -v v="$value" -v b="$base" 'BEGIN { printf "%+.1f %%", (v / b - 1) * 100 }')
    printf '| %s | %d | %d | %s |\n' "$name" "$base" "$value" "$change"
    if awk -v v="$value" -v b="$base" -v t="$tolerance" 'BEGIN { exit !(v > b * (1 + t / 100)) }'; then
        failed+=("$name: $value against $base ($change)")
    fi
done < "$baseline"

if [ "${UPDATE:-0}" = 1 ]; then
    cp "$measured" "$baseline"
    echo "baseline written: $baseline"
    exit 0
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo
    echo "more than $tolerance % above the baseline (benches/baseline.tsv):"
    printf '  %s\n' "${failed[@]}"
    echo "If the change means to cost this, update the baseline (UPDATE=1 benches/guard.sh)"
    echo "in the same commit, with one line in BENCHMARKS.md saying what bought it."
    exit 1
fi
echo
echo "every figure within $tolerance % of its baseline"
