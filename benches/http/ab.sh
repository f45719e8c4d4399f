#!/usr/bin/env bash
# A/B of server builds under 10-deep pipelined GETs: each LABEL:STACK:BINARY
# runs in turn, pinned to core 0 with wrk on core 1, REPS times alternated,
# SECS seconds each; prints req/s per run, the mean per label and each
# label's ratio to the first, repetition by repetition. For comparing two
# builds of the same server (copy the first build's binary aside, change
# the code, build again).
#
# Usage: benches/http/ab.sh REPS SECS LABEL:STACK:BINARY...
#   e.g. benches/http/ab.sh 6 4 hyper:hyper:/tmp/a before:pronghorn:/tmp/a \
#            after:pronghorn:target/release/server
#   ROUTE=/task benches/http/ab.sh ...   (another route than /json)
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
need wrk
need taskset util-linux
reps=$1 secs=$2
shift 2
results=$(mktemp)
for r in $(seq "$reps"); do
    for spec in "$@"; do
        IFS=: read -r label stack binary <<< "$spec"
        port=$(( 20000 + RANDOM % 2000 ))
        start "$port" taskset -c 0 "$binary" "$stack" "$port" 10
        rps=$(pipelined "$secs" "http://127.0.0.1:$port${ROUTE:-/json}" | sed -n 's/Requests\/sec: *//p')
        stop
        echo "$r $label $rps" | tee -a "$results"
    done
done
awk -v first="${1%%:*}" '
    { sum[$2] += $3; n[$2]++; rate[$1 " " $2] = $3; if (!($2 in seen)) { seen[$2]; order[++k] = $2 } reps = $1 }
    END {
        for (i = 1; i <= k; i++) {
            label = order[i]; line = sprintf("%s: mean %.0f req/s", label, sum[label] / n[label])
            if (label != first) {
                line = line ", x " first ":"
                for (r = 1; r <= reps; r++) line = line sprintf(" %.3f", rate[r " " label] / rate[r " " first])
            }
            print line
        }
    }' "$results"
rm -f "$results"
