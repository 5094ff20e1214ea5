#!/usr/bin/env bash
# Run the whole suite against the test profile's own Redis and InfluxDB (apart from the demo's),
# then stop them. Exit status is pytest's. Extra arguments go to pytest.
#
# The suite runs in OSTARA_TEST_WORKERS pytest processes at once (pytest-xdist, default 4):
# the modules that start racks in OSTARA_TEST_RACKS groups of their own, one process each, the
# rest test by test in whichever process is free (conftest.py). Each process has a Redis, an
# InfluxDB, a portal port and a run directory of its own (gw<N> under the profile's run
# directory, the profile's ports plus 10 x N): a test that stops its Redis or empties its
# InfluxDB does it to no other test. OSTARA_TEST_WORKERS=1: one process on the profile's own
# services.
#
# Ctrl-C, SIGTERM or SIGHUP stop the run at once: pytest is interrupted (its fixtures stop
# their virtual racks and playbooks), then, whatever it left, every process the run started
# (found by the run's mark in their environment, so a demo beside it is not touched) is
# stopped, and the services with them. The same sweep ends a run that finished by itself, and
# names what a test left behind.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
load_profile test
cd "$OSTARA_HOME"
compile_project

# The run's mark: every process started under this script inherits it.
export OSTARA_TEST_RUN="$$-$(date +%s%N)"
# A run started by a test of another run (deploy/tests/test_interrupt.py) is a run of its own.
unset PYTEST_XDIST_WORKER OSTARA_TEST_WORKER_ENVIRONMENT OSTARA_TEST_WORKERS_DIR

# run_processes: the pids carrying this run's mark, but for this script. Builtins only: a
# program run here would carry the mark itself (this script's own forks do not: a process's
# environ is the one it was started with, and the mark was exported after).
run_processes() {
    local environ pid vars
    for environ in /proc/[0-9]*/environ; do
        pid=${environ#/proc/}
        pid=${pid%/environ}
        [ "$pid" = "$$" ] && continue
        { mapfile -d '' -t vars <"$environ"; } 2>/dev/null || continue
        [[ " ${vars[*]} " == *" OSTARA_TEST_RUN=$OSTARA_TEST_RUN "* ]] && echo "$pid"
    done
    return 0
}

# sweep: stop the services, then TERM and at last KILL whatever else of the run is left.
sweep() {
    local worker
    for worker in "${workers[@]}"; do
        (worker_profile "$worker" && "$OSTARA_HOME/deploy/services.sh" test stop)
    done
    local left
    left=$(run_processes)
    [ -z "$left" ] && return 0
    if [ "$interrupted" = no ]; then
        local listed
        # shellcheck disable=SC2086 # one pid per word
        listed=$(ps -o pid=,args= -p $left | cut -c1-160)
        [ -n "$listed" ] && say "left running by the tests, stopped now:" "$listed"
    fi
    # shellcheck disable=SC2086
    kill -TERM $left 2>/dev/null
    # shellcheck disable=SC2086
    kill -CONT $left 2>/dev/null  # a held (stopped) virtual host's sensor takes the TERM
    for _ in $(seq 1 50); do
        left=$(run_processes)
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null
    return 0
}

interrupted=no
pytest_pid=""
timer=""
# interrupt: pytest gets one SIGINT (KeyboardInterrupt: it tears its fixtures down), then has
# 20 s before it is killed (a stop is due at once; what its teardown had not stopped yet, the
# sweep stops); this script carries on to the sweep.
interrupt() {
    interrupted=yes
    trap '' INT TERM HUP
    if [ -n "$pytest_pid" ]; then
        kill -INT "$pytest_pid" 2>/dev/null
        # Started with the signals ignored here: env gives it TERM back, for the sweep.
        env --default-signal=TERM sh -c 'sleep 20 && kill -0 "$1" 2>/dev/null &&
            echo "pytest did not stop within 20 s of the interrupt: killed it" >&2 &&
            kill -KILL "$1"' timer "$pytest_pid" &
        timer=$!
    fi
}
trap interrupt INT TERM HUP

workers=("")
worker_count=${OSTARA_TEST_WORKERS:-4}
if ! [[ "$worker_count" =~ ^[1-9][0-9]?$ ]]; then
    say "OSTARA_TEST_WORKERS: '$worker_count' is not a number of processes from 1 to 99"
    exit 2
fi
if ! [[ "${OSTARA_TEST_RACKS:-2}" =~ ^[1-9][0-9]?$ ]]; then
    say "OSTARA_TEST_RACKS: '$OSTARA_TEST_RACKS' is not a number of groups from 1 to 99"
    exit 2
fi
if [ "$worker_count" -gt 1 ]; then
    workers=()
    for ((n = 0; n < worker_count; n++)); do workers+=("gw$n"); done
fi

# worker_profile NAME: the test profile's variables for pytest-xdist's worker NAME (gw<N>), in
# this shell (call it in a subshell); "" leaves the profile as it is. The variables go to the
# worker's file too (portal/tests/settings.py applies it in the worker).
worker_profile() {
    local name=$1
    [ -z "$name" ] && return 0
    local step=$((10 * ${name#gw}))
    export OSTARA_TEST_RUN_DIR="$base_run_dir/$name"
    export OSTARA_TEST_REDIS_PORT=$((base_redis_port + step))
    export OSTARA_TEST_INFLUXDB_PORT=$((base_influxdb_port + step))
    export OSTARA_TEST_INFLUXDB_RPC_PORT=$((base_influxdb_rpc_port + step))
    export OSTARA_TEST_PORTAL_PORT=$((base_portal_port + step))
    load_profile test
}
base_run_dir=$OSTARA_RUN_DIR
base_redis_port=$OSTARA_REDIS_PORT
base_influxdb_port=$OSTARA_INFLUXDB_PORT
base_influxdb_rpc_port=$OSTARA_INFLUXDB_RPC_PORT
base_portal_port=$OSTARA_PORTAL_PORT

mkdir -p "$base_run_dir/workers"
rm -f "$base_run_dir"/workers/*.env "$base_run_dir"/workers/racks.json
for worker in "${workers[@]}"; do
    if ! (worker_profile "$worker" && "$OSTARA_HOME/deploy/services.sh" test start); then
        sweep
        exit 1
    fi
    [ -z "$worker" ] && continue
    (
        worker_profile "$worker"
        for name in OSTARA_TEST_RUN_DIR OSTARA_TEST_REDIS_PORT OSTARA_TEST_INFLUXDB_PORT \
            OSTARA_TEST_INFLUXDB_RPC_PORT OSTARA_TEST_PORTAL_PORT OSTARA_RUN_DIR \
            OSTARA_REDIS_PORT OSTARA_INFLUXDB_PORT OSTARA_INFLUXDB_RPC_PORT OSTARA_PORTAL_PORT \
            REDIS_URL INFLUXDB_URL; do
            printf '%s=%s\n' "$name" "${!name}"
        done
    ) >"$base_run_dir/workers/$worker.env"
done
# The workers find their files here (portal/tests/settings.py).
export OSTARA_TEST_WORKERS_DIR="$base_run_dir/workers"
xdist=()
[ "$worker_count" -gt 1 ] && xdist=(-n "$worker_count" --dist loadscope --no-loadscope-reorder)
[ "$interrupted" = yes ] && { sweep; exit 130; }
export DJANGO_ALLOW_ASYNC_UNSAFE=true  # Playwright's sync API runs an event loop in the test thread
# In the background, so that a signal to this script is handled at once, not after pytest; in a
# session of its own, so that it gets one SIGINT (from interrupt), not the terminal's as well:
# a second one would cut its teardown short. Its stdin stays this script's. A background job
# of a script starts with SIGINT ignored, and Python then never turns it into
# KeyboardInterrupt: env gives it back its default.
setsid env --default-signal=INT .venv/bin/pytest "${xdist[@]}" "$@" <&0 &
pytest_pid=$!
rc=0
while :; do
    wait "$pytest_pid"
    rc=$?
    kill -0 "$pytest_pid" 2>/dev/null || break  # a trapped signal ended the wait, not pytest
done
[ -n "$timer" ] && kill "$timer" 2>/dev/null
sweep
[ "$interrupted" = yes ] && [ "$rc" -eq 0 ] && rc=130
exit "$rc"
