#!/usr/bin/env bash
# Instructions and heap allocations per in-process request, for each stack
# of benches/common/stacks.rs, and instructions per route lookup beside
# matchit, counted by callgrind: the difference between
# runs of 11,000 and 1,000 requests, divided by 10,000, so that start-up and
# the first request's lazy initialisation cancel out. Instruction counts do
# not depend on how busy the machine is.
#
# Usage: benches/http/instructions.sh
set -euo pipefail
cd "$(dirname "$0")"
. ./lib.sh
need valgrind
cargo build --release --bin instructions -q
binary=target/release/instructions

# Each stack beside the bare service (the first row): the performance
# contract asks at most 1.15x for the layers and 1.25x for the router with
# three hooks, and the bare service's allocations for both.
printf '| stack | instructions / request | x bare | allocations / request |\n| --- | ---: | ---: | ---: |\n'
bare=
for stack in bare hand-written tower-http layers layers-by-value async-layers router router-by-value router-1000 router-dynamic reloadable router-plain router-check-prefix router-from-fn router-layers router-trace axum axum-from-fn axum-trace; do
    allocations=$("$binary" "$stack" 10000 2>&1 | sed -n 's/allocations per request: //p')
    count=$(per_request "$binary" "$stack")
    bare=${bare:-$count}
    printf '| %s | %d | %d.%03d | %s |\n' "$stack" "$count" $((count / bare)) $((count * 1000 / bare % 1000)) "$allocations"
done

# Route lookup alone, in the 1,000-route table of benches/router.rs.
printf '\n| lookup (1,000 routes) | pronghorn | matchit |\n| --- | ---: | ---: |\n'
for kind in static dynamic catch-all miss; do
    printf '| %s | %d | %d |\n' "$kind" "$(per_request "$binary" "lookup-pronghorn-$kind")" "$(per_request "$binary" "lookup-matchit-$kind")"
done
