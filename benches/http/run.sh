#!/usr/bin/env bash
# HTTP load benchmark: pronghorn beside bare hyper, axum and actix-web, on
# the scenarios of the framework pronghorn reimplements. Each server runs on
# one thread pinned to core 0, wrk on one thread pinned to core 1; servers
# alternate within each repetition; medians are reported, and ratios to
# hyper are medians of the ratios within each repetition.
#
# Usage: benches/http/run.sh [SECONDS_PER_RUN] [REPETITIONS]
#        ONLY='dynamic|POST' benches/http/run.sh ...   (scenarios matching a regex)
#        STACKS='hyper pronghorn axum-h1' benches/http/run.sh ...   (other stacks;
#        hyper first: the ratios are to it)
# Output: a markdown table on stdout, raw runs in target/http-bench.tsv.
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
seconds=${1:-5}
repetitions=${2:-3}

need wrk
need taskset util-linux
cargo build --release --bin server -q
server=target/release/server
port=18080
raw=target/http-bench.tsv
printf 'scenario\tstack\trun\treq_per_s\tp99_ms\terrors\tcpu_us_per_req\n' > "$raw"

# name | connections | path | wrk script | script arguments | routes in the table
scenarios=(
    "GET JSON, 10 connections|10|/json|||10"
    "GET JSON, 100 connections|100|/json|||10"
    "dynamic route|50|/users/42|||10"
    "POST JSON|50|/echo|post.lua||10"
    "pipelined x10, sync|10|/json|pipeline.lua|10|10"
    "pipelined x10, async|10|/async|pipeline.lua|10|10"
    "pipelined x10, awaits a task|10|/task|pipeline.lua|10|10"
    "500 error|50|/error|||10"
    "1,000 routes|50|/r/999/x|||1000"
    "10 routes|50|/r/9/x|||10"
)
read -ra stacks <<< "${STACKS:-hyper pronghorn axum actix}"


for run in $(seq 1 "$repetitions"); do
    for scenario in "${scenarios[@]}"; do
        IFS='|' read -r name connections path script script_args routes <<< "$scenario"
        [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]] && continue
        wrk_args=(-t1 -c"$connections")
        [ -n "$script" ] && wrk_args+=(-s "$script")
        tail_args=()
        [ -n "$script_args" ] && tail_args=(-- "$script_args")
        # Rotate the order of the stacks from one repetition to the next.
        for i in "${!stacks[@]}"; do
            stack=${stacks[$(( (i + run) % ${#stacks[@]} ))]}
            port=$(( port + 1 ))   # a fresh port: no wait for the last one to close
            url="http://127.0.0.1:$port$path"
            start "$port" taskset -c 0 "$server" "$stack" "$port" "$routes"
            taskset -c 1 wrk "${wrk_args[@]}" -d1s "$url" "${tail_args[@]}" > /dev/null
            before=$(cpu_ticks "$pid")
            output=$(taskset -c 1 wrk "${wrk_args[@]}" -d"${seconds}s" --latency "$url" "${tail_args[@]}")
            after=$(cpu_ticks "$pid")
            stop KILL
            wrk_figures "$output" "$(( after - before ))"
            socket=$(sed -n 's/.*Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\).*/\1 \2 \3 \4/p' <<< "$output" | awk '{print $1 + $2 + $3 + $4}')
            non2xx=$(sed -n 's/.*Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' <<< "$output")
            [ "$path" = /error ] && non2xx=0   # 500 is the expected answer there
            errors=$(( ${socket:-0} + ${non2xx:-0} ))
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$stack" "$run" "$rps" "$p99" "$errors" "$cpu" >> "$raw"
            echo "run $run  $name  $stack: $rps req/s, p99 $p99 ms, errors $errors, cpu $cpu us/req" >&2
        done
    done
done

python3 - "$raw" "${stacks[@]}" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
stacks = sys.argv[2:]
def median(scenario, stack, field):
    values = [float(r[field]) for r in rows if r["scenario"] == scenario and r["stack"] == stack]
    return statistics.median(values) if values else float("nan")
def ratio(scenario, stack, field):
    # Each repetition runs every stack back to back: the ratio to hyper is
    # taken within a repetition, where the machine's pace is shared, and
    # its median across repetitions is reported.
    runs = {}
    for r in rows:
        if r["scenario"] == scenario:
            runs.setdefault(r["run"], {})[r["stack"]] = float(r[field])
    values = [run[stack] / run["hyper"] for run in runs.values() if stack in run and run.get("hyper")]
    return statistics.median(values) if values else float("nan")
print("| scenario | stack | req/s (median) | × hyper | p99 ms | errors | server CPU µs/req | × hyper |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for scenario in scenarios:
    for stack in stacks:
        rps = median(scenario, stack, "req_per_s")
        cpu = median(scenario, stack, "cpu_us_per_req")
        errors = sum(int(r["errors"]) for r in rows if r["scenario"] == scenario and r["stack"] == stack)
        print(f"| {scenario} | {stack} | {rps:,.0f} | {ratio(scenario, stack, 'req_per_s'):.2f} | {median(scenario, stack, 'p99_ms'):.2f} | {errors} | {cpu:.2f} | {ratio(scenario, stack, 'cpu_us_per_req'):.2f} |")
PY
