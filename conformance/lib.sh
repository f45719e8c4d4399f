# Shared by run.sh and compare.sh: the suites' tools, pinned, installed
# under target/conformance, and the servers they drive.

target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
tools=$target_dir/conformance
httpwg_version=0.2.5
kosoku_version=0.1.0

# httpwg-cli: h2spec's cases in Rust (crates.io).
install_httpwg() {
    if ! cargo install --list --root "$tools" 2>/dev/null | grep -q "^httpwg-cli v$httpwg_version:"; then
        # A tool, not this crate: built without the warnings CI denies here.
        RUSTFLAGS= cargo install --locked --quiet --root "$tools" --version "$httpwg_version" httpwg-cli
    fi
}

# kosoku: the Autobahn TestSuite's cases, driven natively (PyPI).
install_kosoku() {
    if [ ! -x "$tools/venv/bin/kosoku" ]; then
        python3 -m venv "$tools/venv" ||
            { apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv "$tools/venv"; }
        "$tools/venv/bin/pip" install --quiet "kosoku==$kosoku_version"
    fi
}

# A free loopback port.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server ADDRESS COMMAND...: starts COMMAND in the background and
# waits until ADDRESS accepts connections; its pid in $server_pid.
start_server() {
    local address=$1
    shift
    "$@" > "$tools/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do
        if python3 -c "import socket, sys; socket.create_connection(('${address%:*}', ${address##*:}), 0.1)" 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    echo "the server did not listen on $address: $(cat "$tools/server.log")" >&2
    return 1
}

stop_server() {
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
}

# h2_run OUT COMMAND...: one run of httpwg against COMMAND, which httpwg
# starts with the address as its last argument. Writes the names of the
# failed cases to OUT and prints `PASSED TOTAL`.
h2_run() {
    local out=$1
    shift
    local port
    port=$(free_port)
    "$tools/bin/httpwg" -a "127.0.0.1:$port" -- "$@" "127.0.0.1:$port" 2>&1 |
        sed 's/\x1b\[[0-9;]*m//g' > "$out.log" || true
    sed -n 's/^❌ Test failed: //p' "$out.log" | sort > "$out"
    sed -n 's/.*Passed \([0-9]*\)\/\([0-9]*\) tests.*/\1 \2/p' "$out.log"
}

# autobahn_run OUT_DIR ADDRESS CASES...: kosoku against ws://ADDRESS/ws.
autobahn_run() {
    local out=$1 address=$2
    shift 2
    local include=()
    for cases in "$@"; do include+=(-i "$cases"); done
    rm -rf "$out"
    "$tools/venv/bin/kosoku" -m fuzzingclient "${include[@]}" -o "$out" "ws://$address/ws" > "$out.log" 2>&1 || true
}
