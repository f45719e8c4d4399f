#!/usr/bin/env bash
# Instructions per request of a loopback server under 10-deep pipelined
# GETs, counted by callgrind: each server runs under valgrind, wrk warms it
# up for 2 s, the counters are zeroed, wrk runs again and the counters are
# dumped; instructions in that window divided by the requests wrk counted.
# Instruction counts do not depend on how busy the machine is (the request
# count does not matter either, as long as it is large).
#
# Usage: benches/http/server-instructions.sh [STACK...]   (default: hyper pronghorn pronghorn-h1)
#        PIPELINE=0 benches/http/server-instructions.sh ...  (plain GETs, one per round trip)
#        ROUTE=/task benches/http/server-instructions.sh ...  (another route; default /json)
#        KEEP=DIR benches/http/server-instructions.sh ...     (keep the callgrind dumps in DIR)
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
need valgrind
need wrk
cargo build --release --bin server -q
stacks=("$@")
[ ${#stacks[@]} -eq 0 ] && stacks=(hyper pronghorn pronghorn-h1)
out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
port=19080
load=(-s pipeline.lua)
tail=(-- 10)
if [ "${PIPELINE:-1}" = 0 ]; then load=(); tail=(); fi

printf '| server | instructions / request | × hyper |\n| --- | ---: | ---: |\n'
hyper=
for stack in "${stacks[@]}"; do
    port=$(( port + 1 ))
    start "$port" valgrind --tool=callgrind --callgrind-out-file="$out/$stack.%p" \
        target/release/server "$stack" "$port" 10
    url="http://127.0.0.1:$port${ROUTE:-/json}"
    wrk -t1 -c10 -d2s "${load[@]}" "$url" "${tail[@]}" > /dev/null
    callgrind_control -z "$pid" > /dev/null 2>&1
    requests=$(wrk -t1 -c10 -d6s "${load[@]}" "$url" "${tail[@]}" | requests_in)
    callgrind_control -d "$pid" > /dev/null 2>&1
    stop
    dump=$(ls -t "$out/$stack".*.* 2>/dev/null | head -1)
    total=$(callgrind_annotate "$dump" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
    per=$(( total / requests ))
    [ "$stack" = hyper ] && hyper=$per
    ratio=$([ -n "$hyper" ] && awk -v a="$per" -v b="$hyper" 'BEGIN { printf "%.2f", a / b }' || echo "-")
    printf '| %s | %d | %s |\n' "$stack" "$per" "$ratio"
done
[ -n "${KEEP:-}" ] || rm -rf "$out"
