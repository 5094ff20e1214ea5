#!/usr/bin/env bash
# Start, stop or show the local Redis and InfluxDB of a profile (demo or test).
#   deploy/services.sh PROFILE start|stop|status [redis|influxdb]
# Both listen on 127.0.0.1 only, keep their data under the profile's run directory, and are
# waited for until they answer. Running start twice is harmless.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

profile=${1:?usage: services.sh demo|test start|stop|status [redis|influxdb]}
action=${2:?usage: services.sh demo|test start|stop|status [redis|influxdb]}
only=${3:-all}
load_profile "$profile"

redis_pid="$OSTARA_RUN_DIR/pid/redis.pid"
influx_pid="$OSTARA_RUN_DIR/pid/influxdb.pid"

redis_answers() { redis-cli -h 127.0.0.1 -p "$OSTARA_REDIS_PORT" ping 2>/dev/null | grep -q PONG; }
influx_answers() { curl -fsS -o /dev/null "http://127.0.0.1:$OSTARA_INFLUXDB_PORT/ping" 2>/dev/null; }

start_redis() {
    if pid_alive "$redis_pid" && redis_answers; then
        say "redis already answers on 127.0.0.1:$OSTARA_REDIS_PORT"
        return 0
    fi
    if redis_answers; then
        say "port $OSTARA_REDIS_PORT answers but not with our redis: another program uses it;" \
            "choose another with OSTARA_REDIS_PORT (or OSTARA_TEST_REDIS_PORT for the tests)"
        return 1
    fi
    mkdir -p "$OSTARA_RUN_DIR/redis"
    rm -f "$redis_pid" "$redis_pid.start"  # redis writes its own: wait for the new one
    redis-server --bind 127.0.0.1 --port "$OSTARA_REDIS_PORT" --daemonize yes \
        --pidfile "$redis_pid" --dir "$OSTARA_RUN_DIR/redis" \
        --logfile "$OSTARA_RUN_DIR/log/redis.log" --save 60 1 --appendonly yes \
        --protected-mode yes
    wait_until 20 "redis" redis_answers
    wait_until 5 "redis's pid file" test -s "$redis_pid"
    write_pid "$redis_pid" "$(cat "$redis_pid")"
    say "redis answers on 127.0.0.1:$OSTARA_REDIS_PORT"
}

start_influxdb() {
    if pid_alive "$influx_pid" && influx_answers; then
        say "influxdb already answers on 127.0.0.1:$OSTARA_INFLUXDB_PORT"
        return 0
    fi
    if influx_answers; then
        say "port $OSTARA_INFLUXDB_PORT answers but not with our influxdb: another program uses" \
            "it; choose another with OSTARA_INFLUXDB_PORT (OSTARA_TEST_INFLUXDB_PORT for tests)"
        return 1
    fi
    local data="$OSTARA_RUN_DIR/influxdb" conf="$OSTARA_RUN_DIR/influxdb.conf"
    mkdir -p "$data"
    sed -e "s#@DATA_DIR@#$data#g" -e "s#@HTTP_PORT@#$OSTARA_INFLUXDB_PORT#g" \
        -e "s#@RPC_PORT@#$OSTARA_INFLUXDB_RPC_PORT#g" \
        "$OSTARA_HOME/deploy/config/influxdb.conf.in" >"$conf"
    # A session of its own: a Ctrl-C meant for the tests reaches them first, and their teardown
    # still has its database; the caller stops it (deploy/test.sh does, on any end).
    setsid influxd -config "$conf" >>"$OSTARA_RUN_DIR/log/influxdb.log" 2>&1 </dev/null &
    write_pid "$influx_pid" $!
    if ! wait_until 30 "influxdb" influx_answers || ! pid_alive "$influx_pid"; then
        tail -n 20 "$OSTARA_RUN_DIR/log/influxdb.log" >&2
        return 1
    fi
    say "influxdb answers on 127.0.0.1:$OSTARA_INFLUXDB_PORT"
}

status_line() {
    local name=$1 pidfile=$2 check=$3 where=$4
    if pid_alive "$pidfile" && $check; then
        echo "$name: up on $where"
    else
        echo "$name: down"
        return 1
    fi
}

rc=0
case "$action" in
start)
    [ "$only" = influxdb ] || start_redis
    [ "$only" = redis ] || start_influxdb
    ;;
stop)
    [ "$only" = influxdb ] || stop_pid "$redis_pid" redis
    [ "$only" = redis ] || stop_pid "$influx_pid" influxdb
    ;;
status)
    [ "$only" = influxdb ] || status_line redis "$redis_pid" redis_answers "127.0.0.1:$OSTARA_REDIS_PORT" || rc=1
    [ "$only" = redis ] || status_line influxdb "$influx_pid" influx_answers "127.0.0.1:$OSTARA_INFLUXDB_PORT" || rc=1
    ;;
*)
    say "unknown action '$action': use start, stop or status"
    exit 2
    ;;
esac
exit $rc
