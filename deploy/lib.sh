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

# proc_start PID: when the running process PID started, in clock ticks since boot (the 22nd
# field of /proc/PID/stat, after the command name, which may hold spaces and parentheses); an
# exec keeps it. Nothing for a process that has ended, even if its parent has not reaped it.
proc_start() {
    local stat
    local -a fields
    { stat=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
    read -ra fields <<<"${stat##*) }"
    [ "${fields[0]}" != Z ] && [ -n "${fields[19]:-}" ] && echo "${fields[19]}"
}

# write_pid FILE PID: the pid file, and beside it FILE.start, when that process started. A pid
# is given again to later processes (32,768 of them here; a test run starts some 80,000), so a
# pid file that outlived its process may name another program's: the start tells them apart.
# Counted from boot, it does not move when the clock is stepped.
write_pid() {
    local file=$1 pid=$2
    proc_start "$pid" >"$file.start" || rm -f "$file.start"
    echo "$pid" >"$file"
}

# pid_alive FILE: the process a pid file was written for (write_pid) still runs. Only a number
# is a pid ("-1" would be every process); a process that has it since is not ours, nor is one
# named by a file without its start (another program wrote it).
pid_alive() {
    local file=$1 pid started
    [ -f "$file" ] || return 1
    pid=$(cat "$file" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    started=$(cat "$file.start" 2>/dev/null) || return 1
    [ -n "$started" ] && [ "$(proc_start "$pid")" = "$started" ]
}

# sensor_alive FILE CONF: the pid file names the sensor program running with the configuration
# CONF. Playbooks write these pid files too (no start beside them): a pid file outlives its
# process, and its pid may be another program's by now, another rack's sensor even.
sensor_alive() {
    local pid args i
    pid=$(cat "$1" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    { mapfile -d '' -t args <"/proc/$pid/cmdline"; } 2>/dev/null || return 1
    for ((i = 1; i + 4 < ${#args[@]}; i++)); do
        if [ "${args[*]:i:4}" = "-m sensors run --config" ]; then
            [ "${args[i + 4]}" -ef "$2" ]
            return
        fi
    done
    return 1
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

# terminate NAME PID OURS...: TERM the process (and CONT: a stopped process takes its TERM only
# then, and a virtual host's sensor is held while its host is down), wait up to 10 s while the
# command OURS says the pid is still the process's, then KILL it.
terminate() {
    local name=$1 pid=$2
    shift 2
    kill "$pid" 2>/dev/null || true
    kill -CONT "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        "$@" || break
        sleep 0.1
    done
    if "$@"; then
        say "$name did not stop in 10 s; killing it"
        kill -9 "$pid" 2>/dev/null || true
    fi
    say "stopped $name"
}

# stop_pid FILE NAME: stop the process a pid file was written for, if it still runs; remove the
# file.
stop_pid() {
    local file=$1
    pid_alive "$file" && terminate "$2" "$(cat "$file")" pid_alive "$file"
    rm -f "$file" "$file.start"
}

# stop_sensor FILE CONF NAME: stop the sensor of a pid file, if it runs with CONF; remove the
# file.
stop_sensor() {
    sensor_alive "$1" "$2" && terminate "$3" "$(cat "$1")" sensor_alive "$1" "$2"
    rm -f "$1"
}
