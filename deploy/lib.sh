# Shared shell functions of the deploy scripts. Source it; it sets no options of its own.

OSTARA_HOME=${OSTARA_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
export OSTARA_HOME

# The project's Python packages (what compile_project compiles).
PYTHON_PACKAGES=(benchmarks dashboards deploy metrics portal provisioning sensors simulator workers)

# compile_project: keep the project's bytecode, and write it now. The suite, the demo and the
# benchmarks start thousands of Pythons (the virtual rack's commands, Pacemaker's agents, the
# sensors, the playbooks' helpers), each importing the project's modules; a machine that sets
# PYTHONDONTWRITEBYTECODE (for its own reasons) makes each of them compile those modules again:
# a virtual `lctl` then costs 0.17 s of CPU instead of 0.09. Compiled once here, in parallel,
# so the first processes do not all compile the same modules at once.
compile_project() {
    unset PYTHONDONTWRITEBYTECODE
    (cd "$OSTARA_HOME" && .venv/bin/python -m compileall -q -j 0 "${PYTHON_PACKAGES[@]}" >/dev/null)
    return 0
}

# load_profile demo|test: the ports and run directory of that set of services.
load_profile() {
    local profile=$1
    # shellcheck disable=SC1090
    source "$OSTARA_HOME/deploy/profiles/$profile.env"
    export OSTARA_RUN_DIR OSTARA_REDIS_PORT OSTARA_INFLUXDB_PORT OSTARA_INFLUXDB_RPC_PORT \
        OSTARA_PORTAL_PORT OSTARA_SMTP_PORT
    export REDIS_URL="redis://127.0.0.1:$OSTARA_REDIS_PORT/0"
    export INFLUXDB_URL="http://127.0.0.1:$OSTARA_INFLUXDB_PORT"
    export INFLUXDB_DATABASE=${INFLUXDB_DATABASE:-ostara}
    mkdir -p "$OSTARA_RUN_DIR/log" "$OSTARA_RUN_DIR/pid" "$OSTARA_RUN_DIR/static"
    # The database inside holds password hashes and the encrypted BMC passwords, beside the key
    # that decrypts them: only the owner enters the run directory, whatever the files' modes.
    chmod 700 "$OSTARA_RUN_DIR"
}

say() { printf '%s\n' "$*" >&2; }

# pid_alive FILE: the process named in a pid file is running. Only a number is a pid: "-1"
# would be every process.
pid_alive() {
    local file=$1 pid
    [ -f "$file" ] || return 1
    pid=$(cat "$file" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# wait_until SECONDS DESCRIPTION COMMAND...: poll COMMAND until it succeeds.
wait_until() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            say "$what did not answer within ${seconds}s"
            return 1
        fi
        sleep 0.2
    done
}

# stop_pid FILE NAME: TERM the process, wait, then KILL; remove the pid file.
stop_pid() {
    local file=$1 name=$2 pid
    if ! pid_alive "$file"; then
        rm -f "$file"
        return 0
    fi
    pid=$(cat "$file")
    kill "$pid" 2>/dev/null || true
    # A virtual host's sensor is held (SIGSTOP) while its host is down: let it take the TERM.
    kill -CONT "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "$name did not stop in 10 s; killing it"
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
    say "stopped $name"
}
