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
    echo $! >"$pids/$name.pid"
    say "started $name (log: $logs/$name.log)"
}

portal_answers() { curl -fsS -o /dev/null "http://127.0.0.1:$OSTARA_PORTAL_PORT/accounts/login/"; }

case "$action" in
start)
    "$OSTARA_HOME/deploy/services.sh" demo start
    "$venv/python" manage.py migrate --noinput >"$logs/migrate.log"
    "$venv/python" manage.py collectstatic --noinput >"$logs/collectstatic.log"
    "$venv/python" manage.py ostara_setup
    start_daemon worker "$venv/celery" -A workers.celery_app worker --loglevel INFO \
        --concurrency 2 --hostname "ostara-demo@%h"
    start_daemon beat "$venv/celery" -A workers.celery_app beat --loglevel INFO \
        --schedule "$OSTARA_RUN_DIR/celerybeat-schedule"
    start_daemon portal "$venv/gunicorn" portal.wsgi:application \
        --bind "127.0.0.1:$OSTARA_PORTAL_PORT" --workers 3 --timeout 120 \
        --access-logfile "$logs/portal-access.log"
    wait_until 60 "the portal" portal_answers
    echo
    echo "Ostara is running: http://127.0.0.1:$OSTARA_PORTAL_PORT/"
    echo "Stop it with: make stop   (data is kept in $OSTARA_RUN_DIR)"
    ;;
stop)
    for name in portal beat worker; do stop_pid "$pids/$name.pid" "$name"; done
    "$OSTARA_HOME/deploy/services.sh" demo stop
    ;;
status)
    rc=0
    for name in portal beat worker; do
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
