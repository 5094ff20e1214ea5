#!/usr/bin/env bash
# The local demo: Redis, InfluxDB, a Celery worker and beat, and the portal, all on 127.0.0.1.
#   deploy/demo.sh start|stop|status
# Data lives in .run/demo (or $OSTARA_RUN_DIR) and survives a stop; start resumes with it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
load_profile demo

action=${1:?usage: demo.sh start|stop|status}
venv="$OSTARA_HOME/.venv/bin"
pids="$OSTARA_RUN_DIR/pid"
logs="$OSTARA_RUN_DIR/log"
cd "$OSTARA_HOME"

# start_daemon NAME COMMAND...: run in the background with a pid file and a log.
start_daemon() {
    local name=$1
    shift
    if pid_alive "$pids/$name.pid"; then
        say "$name already running (pid $(cat "$pids/$name.pid"))"
        return 0
    fi
    nohup "$@" >>"$logs/$name.log" 2>&1 &
    write_pid "$pids/$name.pid" $!
    say "started $name (log: $logs/$name.log)"
}

portal_answers() { curl -fsS -o /dev/null "http://127.0.0.1:$OSTARA_PORTAL_PORT/accounts/login/"; }

export OSTARA_VIRTUAL_RACK=${OSTARA_VIRTUAL_RACK:-$OSTARA_RUN_DIR/rack}
# Alert mail goes to the demo's own mail server on loopback; Settings -> Mail shows it.
export EMAIL_HOST=127.0.0.1 EMAIL_PORT=$OSTARA_SMTP_PORT
export OSTARA_CAUGHT_MAIL_DIR=$OSTARA_RUN_DIR/mail
export OSTARA_PORTAL_URL=${OSTARA_PORTAL_URL:-http://127.0.0.1:$OSTARA_PORTAL_PORT}
rack=$OSTARA_VIRTUAL_RACK

# The sensors provisioning started on the virtual hosts (each host's "unit"), by pid file.
virtual_sensors() {
    local action=$1 conf host pidfile
    for conf in "$rack"/hosts/*/etc/ostara/sensor.conf; do
        [ -f "$conf" ] || continue
        host=$(basename "$(dirname "$(dirname "$(dirname "$conf")")")")
        pidfile="$rack/hosts/$host/run/ostara-sensor.pid"
        if [ "$action" = stop ]; then
            stop_sensor "$pidfile" "$conf" "sensor of $host"
        elif ! sensor_alive "$pidfile" "$conf"; then
            mkdir -p "$rack/hosts/$host/run" "$rack/hosts/$host/var/lib/ostara-sensor"
            nohup "$venv/python" -m sensors run --config "$conf" \
                >>"$rack/hosts/$host/var/lib/ostara-sensor/sensor.log" 2>&1 &
            echo $! >"$pidfile"
            say "started the sensor of virtual host $host"
        fi
    done
    # The arrays' REST collector provisioning started for the management server (issue 33); it
    # stops by itself when provisioning removes its configuration.
    conf="$rack/arrays-collector/collector.conf"
    pidfile="$rack/arrays-collector/collector.pid"
    if [ "$action" = stop ]; then
        stop_sensor "$pidfile" "$conf" "array collector"
    elif [ -f "$conf" ] && ! sensor_alive "$pidfile" "$conf"; then
        nohup "$venv/python" -m sensors run --config "$conf" \
            >>"$rack/arrays-collector/collector.log" 2>&1 &
        echo $! >"$pidfile"
        say "started the array collector"
    fi
}

# The first start builds the MDS pair and the first SSU through the same provisioning job the
# wizard starts (DEMO_BUILD=none leaves every SSU blank). The job's id is kept, so a restart
# never starts a second build.
build_marker="$OSTARA_RUN_DIR/demo-build-job"

# The demo's BMC password, one for every server: the imitated BMCs take any, the ipmi_sim BMCs
# of real clusters are set to it (16 hex digits: IPMI takes at most 20 characters).
demo_bmc_password() {
    local password="$OSTARA_RUN_DIR/demo-bmc-password"
    [ -f "$password" ] && return 0
    (umask 077 && od -An -N8 -tx1 /dev/urandom | tr -d ' \n' >"$password")
}

# "yes" when real clusters can run here (DEMO_REAL_CLUSTERS=no: never), else why not.
real_clusters_here() {
    if [ "${DEMO_REAL_CLUSTERS:-yes}" = no ]; then echo "DEMO_REAL_CLUSTERS=no"; return 1; fi
    if [ "$(id -u)" != 0 ]; then echo "real clusters need root (network namespaces)"; return 1; fi
    local missing
    missing=$("$venv/python" -c 'from simulator import realcluster; print(" ".join(realcluster.missing_tools()))')
    if [ -n "$missing" ]; then echo "missing $missing"; return 1; fi
    echo yes
}

# The real clusters' servers and BMCs are powered off and their wires taken away; the next
# start (the rack's `serve`) cables and powers them on again, their disks as they were.
stop_real_clusters() {
    [ -f "$rack/rack.json" ] || return 0
    "$venv/python" -m simulator remove-real --rack "$rack" >&2 || true
}

build_first_ssu() {
    [ "${DEMO_BUILD:-first-ssu}" = none ] && return 0
    [ -f "$build_marker" ] && return 0
    local password="$OSTARA_RUN_DIR/demo-bmc-password" job
    # The user the real clusters' BMCs know (simulator.realcluster.bmc); the imitated take any.
    if job=$("$venv/python" manage.py provision --bmc-user ostara-fence --bmc-password-file "$password" \
        "$OSTARA_HOME/deploy/demo-rack/1-mds01.json" "$OSTARA_HOME/deploy/demo-rack/2-ssu01.json" \
        2>>"$logs/demo-build.log"); then
        echo "$job" >"$build_marker"
    else
        say "the demo build did not start (see $logs/demo-build.log); build with the wizard instead"
    fi
}

case "$action" in
start)
    compile_project
    "$OSTARA_HOME/deploy/services.sh" demo start
    "$venv/python" manage.py migrate --noinput >"$logs/migrate.log"
    "$venv/python" manage.py collectstatic --noinput >"$logs/collectstatic.log"
    "$venv/python" manage.py ostara_setup
    "$venv/python" manage.py influxdb_setup >"$logs/influxdb-setup.log"
    demo_bmc_password
    if [ ! -f "$rack/rack.json" ]; then
        real=$(real_clusters_here) || true
        for spec in "$OSTARA_HOME"/deploy/demo-rack/*.json; do
            case "$real:$(basename "$spec")" in
            yes:1-mds01.json | yes:2-ssu01.json)
                "$venv/python" -m simulator add --rack "$rack" --real-cluster \
                    --bmc-password-file "$OSTARA_RUN_DIR/demo-bmc-password" "$spec" ;;
            *) "$venv/python" -m simulator add --rack "$rack" "$spec" ;;
            esac
        done
        if [ "$real" = yes ]; then
            say "mds01 and ssu01 have real clusters: Corosync, Pacemaker and ipmi_sim BMCs in namespaces (about 0.9 GiB of memory, a fifth of a core when busy); ssu02's is the imitation"
        else
            say "the demo's clusters are the imitation: $real"
        fi
    fi
    # A workload with something for the analytics to find (simulator/scenarios.py, "demo").
    start_daemon mail "$venv/python" -m portal.alerts.mailcatcher \
        --listen "127.0.0.1:$OSTARA_SMTP_PORT" --maildir "$OSTARA_CAUGHT_MAIL_DIR"
    # A drive's reconstruction in two minutes, not the hours of a real 4 TB drive. The arrays
    # answer their SANtricity REST API (a port per controller) for the appliance's collector.
    # The servers' commands take a real server's time (SMcli 2.5 s, ipmitool 1 s; no CPU), so
    # rounds and timeouts run as on real hardware (DEMO_LATENCY=none: at once).
    start_daemon rack "$venv/python" -m simulator serve --rack "$rack" --scenario demo \
        --rebuild-seconds 120 --arrays-api --latency "${DEMO_LATENCY:-real}"
    virtual_sensors start
    start_daemon worker "$venv/celery" -A workers.celery_app worker --loglevel INFO \
        --concurrency 2 --hostname "ostara-demo@%h"
    start_daemon beat "$venv/celery" -A workers.celery_app beat --loglevel INFO \
        --schedule "$OSTARA_RUN_DIR/celerybeat-schedule"
    start_daemon portal "$venv/gunicorn" portal.wsgi:application \
        --config "$OSTARA_HOME/deploy/gunicorn.conf.py" --bind "127.0.0.1:$OSTARA_PORTAL_PORT" --workers 3 --timeout 120 \
        --access-logfile "$logs/portal-access.log"
    wait_until 60 "the portal" portal_answers
    build_first_ssu
    echo
    echo "Ostara is running: http://127.0.0.1:$OSTARA_PORTAL_PORT/"
    if [ -f "$build_marker" ]; then
        echo "The MDS pair mds01 and the first SSU ssu01 are being built by job $(cat "$build_marker")"
        echo "(about 2 minutes): http://127.0.0.1:$OSTARA_PORTAL_PORT/jobs/$(cat "$build_marker")/"
        echo "The second SSU, ssu02, is racked and blank: add it with SSUs -> Add an SSU."
    else
        echo "The virtual rack ($rack) has an MDS pair and two SSUs racked and blank:"
        echo "add them with SSUs -> Add an SSU (deploy/demo-rack/README.md)."
    fi
    echo "Stop it with: make stop   (data is kept in $OSTARA_RUN_DIR)"
    ;;
stop)
    for name in portal beat worker mail; do stop_pid "$pids/$name.pid" "$name"; done
    # A playbook of a job the worker was running: ansible-runner starts it in a session of its
    # own, so it outlives the worker unless it is stopped by its run directory.
    if pkill -TERM -f -- "$OSTARA_RUN_DIR/ansible/"; then say "stopped a running playbook"; fi
    virtual_sensors stop
    stop_pid "$pids/rack.pid" "virtual rack"
    stop_real_clusters
    "$OSTARA_HOME/deploy/services.sh" demo stop
    ;;
status)
    rc=0
    for name in portal beat worker rack mail; do
        if pid_alive "$pids/$name.pid"; then echo "$name: running"; else echo "$name: stopped"; rc=1; fi
    done
    "$OSTARA_HOME/deploy/services.sh" demo status || rc=1
    exit $rc
    ;;
*)
    say "unknown action '$action': use start, stop or status"
    exit 2
    ;;
esac
