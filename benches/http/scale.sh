#!/usr/bin/env bash
# Scaling over cores: each server with 1, 2, … N workers, and what a
# request costs it as the workers grow. Stacks: pronghorn's `serve` with
# workers of its own (`pronghorn-workers`: `Serve::workers`) and on a
# multi-thread runtime of N threads (`pronghorn-multi-thread`), and `serve`
# once per worker on a listener of its own (`pronghorn-reuseport`, the other
# way to feed workers: SO_REUSEPORT, its limits per worker); bare hyper
# with a single-threaded runtime and an SO_REUSEPORT listener per worker
# (`hyper-per-core`); actix-web with N workers; axum's `serve` on a
# multi-thread runtime of N threads. Every server has the same routes.
#
# wrk runs with two threads and shares the cores with the server (no
# pinning): on a machine with few cores, req/s mostly says how the cores
# were shared, and the server's CPU time per request (user + system, all
# its threads) is the figure that says whether a request costs more with
# more workers. Each figure is a fresh server process; medians over the
# repetitions.
#
# Usage: benches/http/scale.sh [SECONDS_PER_RUN] [REPETITIONS] [MAX_WORKERS]
#        (MAX_WORKERS defaults to the machine's cores)
#        STACKS='pronghorn-workers pronghorn-multi-thread' benches/http/scale.sh ...
#        SCENARIOS='POST JSON' benches/http/scale.sh ...   (comma-separated names)
# Output: a markdown table on stdout, raw runs in target/scale.tsv.
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
seconds=${1:-5}
repetitions=${2:-3}
max_workers=${3:-$(nproc)}

need wrk
cargo build --release --bin server -q
server=target/release/server
port=19080
raw=target/scale.tsv
printf 'scenario\tstack\tworkers\trun\treq_per_s\tp99_ms\tcpu_us_per_req\n' > "$raw"
read -ra stacks <<< "${STACKS:-pronghorn-workers pronghorn-reuseport pronghorn-multi-thread hyper-per-core actix-workers axum-multi-thread}"
# name | path | wrk script
scenarios=("GET JSON|/json|" "POST JSON|/echo|post.lua")
if [ -n "${SCENARIOS:-}" ]; then
    chosen=()
    for scenario in "${scenarios[@]}"; do
        [[ ",$SCENARIOS," == *",${scenario%%|*},"* ]] && chosen+=("$scenario")
    done
    scenarios=("${chosen[@]}")
fi


for run in $(seq 1 "$repetitions"); do
    for workers in $(seq 1 "$max_workers"); do
        for scenario in "${scenarios[@]}"; do
            IFS='|' read -r name path script <<< "$scenario"
            wrk_args=(-t2 -c64)
            [ -n "$script" ] && wrk_args+=(-s "$script")
            for i in "${!stacks[@]}"; do
                stack=${stacks[$(( (i + run) % ${#stacks[@]} ))]}
                port=$(( port + 1 ))
                url="http://127.0.0.1:$port$path"
                WORKERS=$workers start "$port" "$server" "$stack" "$port" 10
                wrk "${wrk_args[@]}" -d1s "$url" > /dev/null
                before=$(cpu_ticks "$pid")
                output=$(wrk "${wrk_args[@]}" -d"${seconds}s" --latency "$url")
                after=$(cpu_ticks "$pid")
                stop KILL
                wrk_figures "$output" "$(( after - before ))"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$stack" "$workers" "$run" "$rps" "$p99" "$cpu" >> "$raw"
                echo "run $run  $workers workers  $name  $stack: $rps req/s, p99 $p99 ms, cpu $cpu us/req" >&2
            done
        done
    done
done

python3 - "$raw" "$max_workers" "${stacks[@]}" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
counts = range(1, int(sys.argv[2]) + 1)
stacks = sys.argv[3:]
scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
def median(scenario, stack, workers, field):
    values = [float(r[field]) for r in rows
              if r["scenario"] == scenario and r["stack"] == stack and int(r["workers"]) == workers]
    return statistics.median(values) if values else float("nan")
head = " | ".join(f"{n} worker{'s' if n > 1 else ''}: req/s, CPU µs/req, p99 ms" for n in counts)
print(f"| scenario | stack | {head} | CPU/req, {counts[-1]} ÷ 1 |")
print("| --- | --- |" + " ---: |" * len(counts) + " ---: |")
for scenario in scenarios:
    for stack in stacks:
        cells = [f"{median(scenario, stack, n, 'req_per_s'):,.0f}, {median(scenario, stack, n, 'cpu_us_per_req'):.2f},"
                 f" {median(scenario, stack, n, 'p99_ms'):.2f}" for n in counts]
        growth = median(scenario, stack, counts[-1], "cpu_us_per_req") / median(scenario, stack, 1, "cpu_us_per_req")
        print(f"| {scenario} | {stack} | {' | '.join(cells)} | {growth:.2f} |")
PY
