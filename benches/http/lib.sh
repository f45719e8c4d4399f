# Sourced by the load scripts of this directory (run.sh, ab.sh, profile.sh,
# server-instructions.sh): the tools they need, and one server at a time
# started, waited for and stopped the same way.

# need COMMAND [PACKAGE]: installs PACKAGE (default: COMMAND) from Debian
# when COMMAND is missing.
need() {
    command -v "$1" > /dev/null || { apt-get update -qq && apt-get install -y -qq "${2:-$1}"; }
}

# start PORT COMMAND...: runs COMMAND (a server listening on PORT) in the
# background, output discarded, and returns once PORT accepts connections.
# Sets `pid`.
start() {
    local port=$1
    shift
    "$@" > /dev/null 2>&1 &
    pid=$!
    until (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; do
        kill -0 "$pid" 2> /dev/null || { echo "the server exited: $*" >&2; return 1; }
        sleep 0.05
    done
}

# stop [SIGNAL]: stops the server `start` started and waits for it.
stop() {
    kill "-${1:-TERM}" "$pid"
    wait "$pid" 2> /dev/null || true
}

# pipelined SECONDS URL [WRK OPTION...]: wrk on core 1, one thread, ten
# connections, each with ten requests in flight (pipeline.lua).
pipelined() {
    local seconds=$1 url=$2
    shift 2
    taskset -c 1 wrk -t1 -c10 -d"${seconds}s" "$@" -s pipeline.lua "$url" -- 10
}

# requests_in: the number of requests a wrk report (on stdin) counts.
requests_in() {
    sed -n 's/^ *\([0-9]*\) requests in.*/\1/p'
}

# cpu_ticks PID: the CPU time PID has used (user and system, all its
# threads), in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# to_ms LATENCY: a wrk latency (850.00us, 1.20ms, 2.00s) in milliseconds.
to_ms() {
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /s$/ && v !~ /ms$/) n *= 1000; printf "%.3f", n }'
}

# wrk_figures OUTPUT TICKS: from a `wrk --latency` report and the server's
# CPU ticks over it, sets `rps`, `requests`, `p99` (ms) and `cpu` (µs of
# server CPU a request).
wrk_figures() {
    rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' <<< "$1")
    requests=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' <<< "$1")
    p99=$(to_ms "$(awk '$1 == "99%" {print $2}' <<< "$1")")
    cpu=$(awk -v t="$2" -v hz="$(getconf CLK_TCK)" -v n="$requests" 'BEGIN { printf "%.3f", t / hz * 1e6 / n }')
}

# per_request BINARY STACK: instructions per in-process request through
# STACK of the `instructions` BINARY, counted by callgrind: runs of 11,000
# and 1,000 requests, differenced, so that start-up cancels out.
per_request() {
    local small large
    small=$(instructions_of "$1" "$2" 1000)
    large=$(instructions_of "$1" "$2" 11000)
    echo $(( (large - small) / 10000 ))
}

# instructions_of BINARY STACK N: what N in-process requests cost, start-up
# included.
instructions_of() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$3" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
