#!/usr/bin/env bash
# The same suites against pronghorn's `serve`, bare hyper (hyper-util's
# auto builder) and axum's `serve`, side by side, on the same routes
# (examples/conformance.rs and src/peer.rs), each a release build with its
# defaults. Prints a markdown table; the runs' logs stay in
# target/conformance.
#
# Usage: conformance/compare.sh [HTTP2_RUNS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
. conformance/lib.sh
mkdir -p "$tools"
runs=${1:-5}
cargo build --quiet --release --example conformance --features ws
(cd conformance && cargo build --quiet --release)
install_httpwg
install_kosoku
pronghorn=("$target_dir/release/examples/conformance")
peer=conformance/target/release/peer

declare -A h2 h1 ws
for stack in pronghorn hyper axum; do
    if [ "$stack" = pronghorn ]; then command=("${pronghorn[@]}"); else command=("$peer" "$stack"); fi
    counts=()
    for run in $(seq 1 "$runs"); do
        read -r passed total < <(h2_run "$tools/h2-$stack-$run" "${command[@]}")
        counts+=("$passed")
    done
    sorted=$(printf '%s\n' "${counts[@]}" | sort -n)
    h2[$stack]="$(head -1 <<< "$sorted")–$(tail -1 <<< "$sorted") of $total"

    port=$(free_port)
    start_server "127.0.0.1:$port" "${command[@]}" "127.0.0.1:$port"
    h1[$stack]=$( (python3 conformance/http11.py "127.0.0.1:$port" || true) | tee "$tools/http11-$stack.log" |
        sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 passed, \2 failed/p')
    stop_server

    ws[$stack]="no WebSocket route"
    if [ "$stack" != hyper ]; then
        port=$(free_port)
        start_server "127.0.0.1:$port" "${command[@]}" "127.0.0.1:$port"
        autobahn_run "$tools/autobahn-$stack" "127.0.0.1:$port" '[1-9].*' '10.*'
        stop_server
        ws[$stack]=$( (python3 conformance/autobahn_check.py "$tools/autobahn-$stack" --refusals || true) |
            tail -1 | sed 's/, 0 refused with 1009//')
    fi
done

echo "| suite | pronghorn | bare hyper | axum |"
echo "|---|---|---|---|"
echo "| HTTP/2, httpwg $httpwg_version, passed over $runs runs | ${h2[pronghorn]} | ${h2[hyper]} | ${h2[axum]} |"
echo "| HTTP/1.1, http11.py | ${h1[pronghorn]} | ${h1[hyper]} | ${h1[axum]} |"
echo "| WebSocket, Autobahn 1–10, defaults | ${ws[pronghorn]} | ${ws[hyper]} | ${ws[axum]} |"
