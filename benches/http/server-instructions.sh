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
#        PIPELINE=0 SCRIPT=post.lua ROUTE=/echo benches/http/server-instructions.sh ...
#            (another wrk script: here a POST with a small JSON body)
#        H2=1 benches/http/server-instructions.sh pronghorn axum
#            (HTTP/2 with h2load, 10 connections of 10 streams; the hyper and
#            -h1 stacks speak HTTP/1 only; H2_POST=1 with ROUTE=/echo POSTs
#            echo.json, post.lua's body)
#        KEEP=DIR benches/http/server-instructions.sh ...     (keep the callgrind dumps in DIR)
#        SERVER=PATH benches/http/server-instructions.sh ...  (another build of the server binary)
#        WARM=1 COUNT=3 benches/http/server-instructions.sh ...  (seconds of warm-up and of counting;
#            default 2 and 6)
#        CACHE=1 benches/http/server-instructions.sh ...      (also simulate the caches and the
#            branch predictor: instruction-cache misses and mispredicted branches per request,
#            with this machine's cache sizes or valgrind's `--I1=SIZE,WAYS,LINE` in CACHE_OPTS)
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
need valgrind
need wrk
need h2load nghttp2-client
server=${SERVER:-target/release/server}
[ -n "${SERVER:-}" ] || cargo build --release --bin server -q
stacks=("$@")
[ ${#stacks[@]} -eq 0 ] && stacks=(hyper pronghorn pronghorn-h1)
out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
port=19080
load=(-s pipeline.lua)
tail=(-- 10)
if [ "${PIPELINE:-1}" = 0 ]; then load=(); tail=(); fi
if [ -n "${SCRIPT:-}" ]; then load=(-s "$SCRIPT"); fi

sim=()
if [ "${CACHE:-0}" = 1 ]; then
    # shellcheck disable=SC2206 # CACHE_OPTS is a list of valgrind options
    sim=(--cache-sim=yes --branch-sim=yes ${CACHE_OPTS:-})
    printf '| server | instructions / request | × hyper | I1 misses / request | D1 misses / request | mispredicted branches / request |\n| --- | ---: | ---: | ---: | ---: | ---: |\n'
else
    printf '| server | instructions / request | × hyper |\n| --- | ---: | ---: |\n'
fi
hyper=
for stack in "${stacks[@]}"; do
    port=$(( port + 1 ))
    start "$port" valgrind --tool=callgrind "${sim[@]}" --callgrind-out-file="$out/$stack.%p" \
        "$server" "$stack" "$port" 10
    url="http://127.0.0.1:$port${ROUTE:-/json}"
    # drive SECONDS: the requests answered in that time.
    drive() {
        if [ "${H2:-0}" = 1 ]; then
            local post=()
            [ "${H2_POST:-0}" = 1 ] && post=(-d echo.json -H 'content-type: application/json')
            h2load -D "$1" -c10 -m10 "${post[@]}" "$url" | sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p'
        else
            wrk -t1 -c10 -d"${1}s" "${load[@]}" "$url" "${tail[@]}" | requests_in
        fi
    }
    drive "${WARM:-2}" > /dev/null
    callgrind_control -z "$pid" > /dev/null 2>&1
    requests=$(drive "${COUNT:-6}")
    callgrind_control -d "$pid" > /dev/null 2>&1
    stop
    dump=$(ls -t "$out/$stack".*.* 2>/dev/null | head -1)
    # The program's totals, one per event, in the order of the `events:` line.
    totals=$(callgrind_annotate "$dump" 2>/dev/null | awk '
        /^Events shown:/ { for (i = 3; i <= NF; i++) name[i - 2] = $i; n = NF - 2 }
        /PROGRAM TOTALS/ { k = 0; for (i = 1; i <= NF && k < n; i++) if ($i ~ /^[0-9,]+$/) { gsub(",", "", $i); print name[++k], $i } }')
    total() { awk -v e="$1" '$1 == e { print $2 }' <<< "$totals"; }
    per=$(( $(total Ir) / requests ))
    [ "$stack" = hyper ] && hyper=$per
    ratio=$([ -n "$hyper" ] && awk -v a="$per" -v b="$hyper" 'BEGIN { printf "%.2f", a / b }' || echo "-")
    if [ ${#sim[@]} -gt 0 ]; then
        awk -v s="$stack" -v p="$per" -v r="$ratio" -v n="$requests" -v i1="$(total I1mr)" \
            -v d1="$(( $(total D1mr) + $(total D1mw) ))" -v b="$(( $(total Bcm) + $(total Bim) ))" \
            'BEGIN { printf "| %s | %d | %s | %.1f | %.1f | %.1f |\n", s, p, r, i1 / n, d1 / n, b / n }'
    else
        printf '| %s | %d | %s |\n' "$stack" "$per" "$ratio"
    fi
done
[ -n "${KEEP:-}" ] || rm -rf "$out"
