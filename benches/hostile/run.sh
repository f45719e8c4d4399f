#!/usr/bin/env bash
# The memory a crowd of hostile clients makes a server with `serve`'s
# default settings hold: each probe of crowds.py against a fresh example
# server (quickstart or streaming for HTTP, websocket for WebSockets), over
# loopback.
# Prints a markdown table: RSS before, with the crowd connected, and after
# the server's timeouts (35 s later), how many of the crowd's connections
# the server closed by then, the RSS 10 s after the crowd left, and what a
# new client got meanwhile. About fifteen minutes in all.
#
# Usage: benches/hostile/run.sh [PROBE...]
#        (default: every probe; names in crowds.py's PROBES)
set -euo pipefail
cd "$(dirname "$0")"
source ../http/lib.sh

need python3
python3 -c 'import h2' 2> /dev/null || python3 -m pip install -q h2
# A thousand connections and more, beside the server's.
ulimit -n "$(ulimit -Hn)"

probes=("$@")
[ ${#probes[@]} -gt 0 ] || probes=(pipelined-unread unfinished-bodies h2-heads h2-windows ws-unfinished ws-unread ws-echoed ws-idle
    slow-readers resets idle-sockets bare-heads ws-silent ws-pings dribble)

# EXAMPLES=DIR runs the example servers built in DIR (another build of
# this crate, to compare) instead of building them here.
examples=${EXAMPLES:-../../target/release/examples}
[ -n "${EXAMPLES:-}" ] || (cd ../.. && cargo build -q --release --example quickstart --example streaming --example websocket --features ws)

echo "| crowd | RSS before | with the crowd | 35 s later | closed by the server | 10 s after it left | a new client's GET | a 100 KB upload (WebSocket: message) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for probe in "${probes[@]}"; do
    case $probe in
        ws-*) example=websocket ;;
        slow-readers | resets | idle-sockets | bare-heads | dribble) example=streaming ;;
        *) example=quickstart ;;
    esac
    port=3990
    start "$port" env PRONGHORN_ADDR="127.0.0.1:$port" "$examples/$example"
    python3 crowds.py "$probe" "$pid" "$port"
    stop
done
