#!/usr/bin/env bash
# The conformance suites others wrote, and this crate's HTTP/1.1 suite,
# against pronghorn's `serve` (examples/conformance.rs). `.ci/run` runs it.
#
#   HTTP/2     httpwg-cli (h2spec's cases) over h2c: at least the floor,
#              and no failure that h2-known.txt does not list
#   HTTP/1.1   http11.py (RFC 9112 and 9110): no failure that
#              http11-known.txt does not list
#   WebSocket  the Autobahn TestSuite's sections 1 to 10 (kosoku), on a
#              route behind a prefix hook: every case passes and closes
#              cleanly with the limits raised; under the default limits,
#              section 9's messages past them are refused with 1009
#
# Usage: conformance/run.sh            (a debug build, as the tests use)
#        PROFILE=release conformance/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. conformance/lib.sh
mkdir -p "$tools"
# The lowest pass count of httpwg's 107 cases over many runs: 107 less
# the cases h2-known.txt lists.
h2_floor=90
profile=${PROFILE:-dev}
cargo build --quiet --example conformance --all-features --profile "$profile"
server=$target_dir/$([ "$profile" = dev ] && echo debug || echo "$profile")/examples/conformance
failed=0

echo "-- HTTP/2: httpwg-cli $httpwg_version, h2spec's cases, over h2c"
install_httpwg
started=$SECONDS
read -r passed total < <(h2_run "$tools/h2-failed" "$server")
sed 's/#.*//; /^ *$/d' conformance/h2-known.txt | sort > "$tools/h2-known"
unlisted=$(comm -23 "$tools/h2-failed" "$tools/h2-known")
echo "${passed:-0} passed, $(( ${total:-0} - ${passed:-0} )) failed, of ${total:-?} cases (floor $h2_floor) in $((SECONDS - started)) s"
if [ -n "$unlisted" ]; then
    echo "failed, and not listed in conformance/h2-known.txt:"
    echo "$unlisted" | sed 's/^/  /'
    failed=1
fi
[ "${passed:-0}" -ge "$h2_floor" ] || { echo "below the floor of $h2_floor"; failed=1; }

echo "-- HTTP/1.1: conformance/http11.py, RFC 9112 and RFC 9110"
port=$(free_port)
start_server "127.0.0.1:$port" "$server" "127.0.0.1:$port"
python3 conformance/http11.py "127.0.0.1:$port" --known conformance/http11-known.txt || failed=1
stop_server

echo "-- WebSocket: the Autobahn TestSuite's sections 1 to 10, kosoku $kosoku_version"
install_kosoku
started=$SECONDS
port=$(free_port)
start_server "127.0.0.1:$port" "$server" "127.0.0.1:$port" --large-messages
autobahn_run "$tools/autobahn-raised" "127.0.0.1:$port" '[1-9].*' '10.*'
stop_server
echo -n "limits raised to 32 MiB: "
python3 conformance/autobahn_check.py "$tools/autobahn-raised" || failed=1
port=$(free_port)
start_server "127.0.0.1:$port" "$server" "127.0.0.1:$port"
autobahn_run "$tools/autobahn-default" "127.0.0.1:$port" '9.*'
stop_server
echo -n "section 9 under the default limits (1 MiB): "
python3 conformance/autobahn_check.py "$tools/autobahn-default" --refusals || failed=1
echo "in $((SECONDS - started)) s"

exit $failed
