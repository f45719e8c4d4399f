#!/usr/bin/env bash
# Where the time of a pipelined request goes, by function, user space and
# kernel: each server runs pinned to core 0 under 10-deep pipelined wrk on
# core 1 and is sampled by `perf record -e cpu-clock` (a timer, so it works
# where the hardware counters are not available, as on these machines).
# Samples are turned into nanoseconds of the server's core per request
# (samples / frequency / requests wrk counted); with two stacks or more,
# each function's difference to the first stack is printed, largest first.
#
# Sampling slows the servers down (some 35 % at the default frequency),
# evenly enough that their ratio holds; for throughput use run.sh or ab.sh.
#
# Usage: benches/http/profile.sh [STACK...]     (default: hyper pronghorn)
#        ROUTE=/task SECONDS_PER_RUN=8 ROWS=40 HZ=20000 benches/http/profile.sh ...
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
need wrk
need perf linux-perf
need taskset util-linux
cargo build --release --bin server -q
stacks=("$@")
[ ${#stacks[@]} -eq 0 ] && stacks=(hyper pronghorn)
route=${ROUTE:-/json} seconds=${SECONDS_PER_RUN:-8} rows=${ROWS:-40} hz=${HZ:-20000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for stack in "${stacks[@]}"; do
    port=$(( 21000 + RANDOM % 2000 ))
    url="http://127.0.0.1:$port$route"
    start "$port" taskset -c 0 target/release/server "$stack" "$port" 10
    pipelined 2 "$url" > /dev/null
    perf record -q -F "$hz" -e cpu-clock -p "$pid" -o "$out/$stack.data" -- sleep "$seconds" 2> /dev/null &
    recorder=$!
    requests=$(pipelined "$seconds" "$url" | requests_in)
    wait "$recorder"
    stop
    # "<samples> <k|.> <symbol>" per function.
    perf report -i "$out/$stack.data" --stdio --no-children --sort sym -n -g none 2> /dev/null \
        | awk '$1 ~ /%$/ && $3 ~ /^\[.\]$/ { kind = substr($3, 2, 1); $1 = ""; n = $2; $2 = ""; $3 = "";
                                             sub(/^ +/, ""); print n, kind, $0 }' > "$out/$stack.samples"
    [ -s "$out/$stack.samples" ] || { echo "perf recorded nothing for $stack (see perf_event_paranoid)" >&2; exit 1; }
    echo "$requests" > "$out/$stack.requests"
done

awk -v hz="$hz" -v rows="$rows" -v first="${stacks[0]}" -v list="${stacks[*]}" -v dir="$out" '
BEGIN {
    n = split(list, names, " ")
    for (i = 1; i <= n; i++) {
        s = names[i]
        getline requests[s] < (dir "/" s ".requests")
        while ((getline line < (dir "/" s ".samples")) > 0) {
            split(line, f, " "); count = f[1]; kind = f[2]
            sym = substr(line, length(f[1]) + length(f[2]) + 3)
            ns = count / hz / requests[s] * 1e9
            t[s, sym] += ns; kinds[sym] = kind; syms[sym] = 1
            total[s] += ns; if (kind == "k") kernel[s] += ns
        }
    }
    printf "| stack | requests sampled | ns / request | user | kernel | × %s |\n| --- | ---: | ---: | ---: | ---: | ---: |\n", first
    for (i = 1; i <= n; i++) {
        s = names[i]
        printf "| %s | %d | %.0f | %.0f | %.0f | %.3f |\n", s, requests[s], total[s],
            total[s] - kernel[s], kernel[s], total[s] / total[first]
    }
    if (n < 2) {
        for (sym in syms) printf "%9.1f [%s] %s\n", t[first, sym], kinds[sym], sym | "sort -rn | head -" rows
        exit
    }
    for (i = 2; i <= n; i++) {
        s = names[i]
        printf "\nns per request, %s minus %s (then each alone), largest differences first:\n", s, first
        cmd = "sort -t\"\t\" -k1,1 -rn | cut -f2 | head -" rows
        for (sym in syms) {
            d = t[s, sym] - t[first, sym]
            printf "%s\t%+8.1f %8.1f %8.1f  [%s] %s\n", (d < 0 ? -d : d), d, t[first, sym], t[s, sym],
                kinds[sym], substr(sym, 1, 110) | cmd
        }
        close(cmd)
    }
}'
