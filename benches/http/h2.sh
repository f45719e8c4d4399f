#!/usr/bin/env bash
# HTTP/2 (h2c, prior knowledge) load: each server on one thread pinned to
# core 0, h2load on core 1 with 10 connections of 100 concurrent streams;
# servers alternate within each repetition. Medians of req/s and of server
# CPU per request (from /proc/PID/stat); ratios to the first stack are
# medians of the ratios within each repetition.
#
# Usage: benches/http/h2.sh [SECONDS_PER_RUN] [REPETITIONS]
#        STACKS='axum-defaults axum pronghorn' benches/http/h2.sh ...
#        (default: axum-defaults, axum's `serve` as its users write it,
#        without TCP_NODELAY; axum, with it; pronghorn's `serve`)
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
seconds=${1:-5}
repetitions=${2:-5}
need h2load nghttp2-client
need taskset util-linux
cargo build --release --bin server -q
server=${SERVER:-target/release/server}
read -ra stacks <<< "${STACKS:-axum-defaults axum pronghorn}"
port=18580
raw=$(mktemp)
for run in $(seq 1 "$repetitions"); do
    for i in "${!stacks[@]}"; do
        stack=${stacks[$(( (i + run) % ${#stacks[@]} ))]}
        port=$(( port + 1 ))
        url="http://127.0.0.1:$port${ROUTE:-/json}"
        start "$port" taskset -c 0 "$server" "$stack" "$port" 10
        taskset -c 1 h2load -D 1 -c10 -m100 "$url" > /dev/null
        before=$(cpu_ticks "$pid")
        output=$(taskset -c 1 h2load -D "$seconds" -c10 -m100 "$url")
        after=$(cpu_ticks "$pid")
        stop
        rps=$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' <<< "$output")
        done=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<< "$output")
        cpu=$(awk -v t="$(( after - before ))" -v hz="$(getconf CLK_TCK)" -v n="$done" \
            'BEGIN { printf "%.3f", t / hz * 1e6 / n }')
        printf '%s\t%s\t%s\t%s\n' "$run" "$stack" "$rps" "$cpu" >> "$raw"
    done
done
first=${stacks[0]}
printf '| stack | req/s (median) | × %s | server CPU µs/req | × %s |\n| --- | ---: | ---: | ---: | ---: |\n' "$first" "$first"
for stack in "${stacks[@]}"; do
    awk -F'\t' -v s="$stack" -v f="$first" '
        $2 == f { base_rps[$1] = $3; base_cpu[$1] = $4 }
        $2 == s { rps[$1] = $3; cpu[$1] = $4 }
        function median(a, n,   i, j, t, v) {
            n = 0; for (i in a) v[++n] = a[i]
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        END {
            for (r in rps) { rr[r] = rps[r] / base_rps[r]; cr[r] = cpu[r] / base_cpu[r] }
            printf "| %s | %d | %.2f | %.2f | %.2f |\n", s, median(rps), median(rr), median(cpu), median(cr)
        }' "$raw"
done
rm -f "$raw"
