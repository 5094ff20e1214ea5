#!/usr/bin/env bash
# Install Ostara on a Debian 12 management server, from this checkout, as systemd services
# behind nginx with PostgreSQL (deploy/README.md, "Production install"). Run as root; running
# it again upgrades: it keeps the environment file, the certificate and the data.
#   deploy/production/install.sh [install]     the whole install
#   deploy/production/install.sh render DIR    only write the units, the nginx site, the
#                                              environment file and ostara-manage into DIR
#   deploy/production/install.sh certificate CERT KEY NAME
#                                              a self-signed certificate for NAME (a stand-in
#                                              until the real one is installed)
# Settings (environment variables, defaults in brackets):
#   OSTARA_SERVER_NAME   the name users type in the browser [hostname -f]
#   OSTARA_USER          the services' user [ostara]
#   OSTARA_RUN_DIR       data, secrets, static files; the user's home [/var/lib/ostara]
#   OSTARA_ETC_DIR       environment file and certificate [/etc/ostara]
#   OSTARA_PORTAL_BIND   gunicorn's loopback address [127.0.0.1:8480]
#   OSTARA_HTTP_LISTEN / OSTARA_HTTPS_LISTEN   nginx's listen addresses [80 / 443]
#   OSTARA_TLS_CERT / OSTARA_TLS_KEY   [$OSTARA_ETC_DIR/tls/ostara.crt and .key]
#   OSTARA_NGINX_LOG_DIR [/var/log/nginx]
#   DATABASE_URL, REDIS_URL, INFLUXDB_URL   written into a new environment file
#                        [PostgreSQL role ostara with a generated password; Debian's Redis and
#                        InfluxDB on their usual loopback ports]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"

user=${OSTARA_USER:-ostara}
run_dir=${OSTARA_RUN_DIR:-/var/lib/ostara}
etc_dir=${OSTARA_ETC_DIR:-/etc/ostara}
env_file=$etc_dir/ostara.env
server_name=${OSTARA_SERVER_NAME:-$(hostname -f 2>/dev/null || hostname)}
portal_bind=${OSTARA_PORTAL_BIND:-127.0.0.1:8480}
http_listen=${OSTARA_HTTP_LISTEN:-80}
https_listen=${OSTARA_HTTPS_LISTEN:-443}
tls_cert=${OSTARA_TLS_CERT:-$etc_dir/tls/ostara.crt}
tls_key=${OSTARA_TLS_KEY:-$etc_dir/tls/ostara.key}
nginx_log_dir=${OSTARA_NGINX_LOG_DIR:-/var/log/nginx}
redis_url=${REDIS_URL:-redis://127.0.0.1:6379/0}
influxdb_url=${INFLUXDB_URL:-http://127.0.0.1:8086}
units=(ostara-portal ostara-worker ostara-beat)
# The arrays' collector: started by its path unit once provisioning has written its
# configuration, so not (re)started with the others.
arrays_units=(ostara-arrays.service ostara-arrays.path)

# check NAME VALUE PATTERN WHAT: refuse a value that would not survive the templates or a shell.
check() {
    if [[ ! $2 =~ $3 ]]; then
        say "$1: '$2' is not $4"
        exit 2
    fi
}
check OSTARA_USER "$user" '^[a-z_][a-z0-9_-]{0,31}$' "a user name (lower case, digits, _ and -)"
for setting in OSTARA_HOME:"$OSTARA_HOME" OSTARA_RUN_DIR:"$run_dir" OSTARA_ETC_DIR:"$etc_dir" \
    OSTARA_TLS_CERT:"$tls_cert" OSTARA_TLS_KEY:"$tls_key" OSTARA_NGINX_LOG_DIR:"$nginx_log_dir"; do
    check "${setting%%:*}" "${setting#*:}" '^/[A-Za-z0-9._/-]+$' \
        "an absolute path of letters, digits and . _ - /"
done
check OSTARA_SERVER_NAME "$server_name" '^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$' \
    "a host name or an IPv4 address"
check OSTARA_PORTAL_BIND "$portal_bind" '^127\.0\.0\.1:[0-9]{1,5}$' \
    "127.0.0.1:PORT (gunicorn listens on loopback only)"
for setting in OSTARA_HTTP_LISTEN:"$http_listen" OSTARA_HTTPS_LISTEN:"$https_listen"; do
    check "${setting%%:*}" "${setting#*:}" '^(([0-9.]+|\[[0-9a-fA-F:]+\]):)?[0-9]{1,5}$' \
        "PORT or ADDRESS:PORT"
done
for setting in REDIS_URL:"$redis_url" INFLUXDB_URL:"$influxdb_url" \
    DATABASE_URL:"${DATABASE_URL:-postgres://x}"; do
    check "${setting%%:*}" "${setting#*:}" '^[a-z0-9+]+://[A-Za-z0-9._~%:@/?=+-]+$' \
        "a URL without spaces, quotes, # or &"
done

# The browser is sent to https://NAME, with the port unless it is 443.
https_port=${https_listen##*:}
https_port_suffix=""
[ "$https_port" = 443 ] || https_port_suffix=":$https_port"

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# render TEMPLATE OUTPUT [EXTRA SED ARGS...]: fill in the @NAMES@ of a template.
render() {
    local template=$1 output=$2
    shift 2
    sed -e "s#@OSTARA_HOME@#$OSTARA_HOME#g" -e "s#@OSTARA_USER@#$user#g" \
        -e "s#@RUN_DIR@#$run_dir#g" -e "s#@ENV_FILE@#$env_file#g" \
        -e "s#@SERVER_NAME@#$server_name#g" -e "s#@PORTAL_BIND@#$portal_bind#g" \
        -e "s#@HTTP_LISTEN@#$http_listen#g" -e "s#@HTTPS_LISTEN@#$https_listen#g" \
        -e "s#@HTTPS_PORT_SUFFIX@#$https_port_suffix#g" -e "s#@TLS_CERT@#$tls_cert#g" \
        -e "s#@TLS_KEY@#$tls_key#g" -e "s#@NGINX_LOG_DIR@#$nginx_log_dir#g" \
        "$@" "$here/$template" >"$output"
}

# render_env_file OUTPUT DATABASE_URL: a new environment file with a generated secret key.
render_env_file() {
    (umask 077 && render ostara.env.in "$1" -e "s#@SECRET_KEY@#$(random_hex 32)#g" \
        -e "s#@DATABASE_URL@#$2#g" -e "s#@REDIS_URL@#$redis_url#g" \
        -e "s#@INFLUXDB_URL@#$influxdb_url#g")
}

# render_all DIR: the units, the nginx site and ostara-manage, under DIR.
render_all() {
    local dir=$1 unit
    mkdir -p "$dir"
    for unit in "${units[@]}"; do render "$unit.service.in" "$dir/$unit.service"; done
    for unit in "${arrays_units[@]}"; do render "$unit.in" "$dir/$unit"; done
    render nginx-ostara.conf.in "$dir/nginx-ostara.conf"
    render ostara-manage.in "$dir/ostara-manage"
    chmod 755 "$dir/ostara-manage"
}

# certificate CERT KEY NAME: a self-signed certificate, valid for NAME, for a year.
certificate() {
    local cert=$1 key=$2 name=$3 san="DNS:$3"
    [[ $name =~ ^[0-9.]+$ ]] && san="IP:$name"
    mkdir -p "$(dirname "$cert")" "$(dirname "$key")"
    (umask 077 && openssl req -x509 -newkey rsa:2048 -sha256 -nodes -days 365 \
        -subj "/CN=$name" -addext "subjectAltName=$san" -keyout "$key" -out "$cert" 2>/dev/null)
    chmod 644 "$cert"
}

database_password() { sed -n 's#^DATABASE_URL=postgres[a-z]*://[^:/@]*:\([^@]*\)@.*#\1#p' "$env_file"; }

install_all() {
    if [ "$(id -u)" -ne 0 ]; then
        say "run the install as root"
        exit 1
    fi
    say "packages, the virtualenv and the front-end libraries (deploy/install.sh)"
    "$OSTARA_HOME/deploy/install.sh"

    if ! id "$user" >/dev/null 2>&1; then
        useradd --system --user-group --home-dir "$run_dir" --shell /usr/sbin/nologin "$user"
        say "created the system user $user"
    fi
    install -d -o "$user" -g "$user" -m 750 "$run_dir"
    # The arrays' collector: its configuration, password files and spool (provisioning writes
    # them as the user; ostara-arrays.service may write nothing else).
    install -d -o "$user" -g "$user" -m 700 "$run_dir/arrays"
    install -d -o root -g "$user" -m 750 "$etc_dir"
    if [ ! -f "$env_file" ]; then
        render_env_file "$env_file" \
            "${DATABASE_URL:-postgres://$user:$(random_hex 24)@127.0.0.1:5432/$user}"
        say "wrote $env_file (edit it for the mail relay; it is kept on upgrades)"
    fi
    chown root:"$user" "$env_file"
    chmod 640 "$env_file"
    if [ ! -f "$tls_cert" ] || [ ! -f "$tls_key" ]; then
        certificate "$tls_cert" "$tls_key" "$server_name"
        say "made a self-signed certificate for $server_name in $tls_cert: replace it (deploy/README.md)"
    fi

    systemctl enable --now postgresql redis-server influxdb
    local password
    password=$(database_password)
    if [ -n "$password" ]; then
        runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 -v role="$user" \
            -v password="$password" -f "$here/create-database.sql" </dev/null
        say "PostgreSQL: role and database $user ready"
    else
        say "DATABASE_URL in $env_file is not a password URL of ours: database left as it is"
    fi

    local staged
    staged=$(mktemp -d)
    # shellcheck disable=SC2064 # the directory's name now: the local is gone at exit
    trap "rm -rf '$staged'" EXIT
    render_all "$staged"
    install -m 755 "$staged/ostara-manage" /usr/local/bin/ostara-manage
    for unit in "${units[@]}"; do
        install -m 644 "$staged/$unit.service" "/etc/systemd/system/$unit.service"
    done
    for unit in "${arrays_units[@]}"; do
        install -m 644 "$staged/$unit" "/etc/systemd/system/$unit"
    done
    install -m 644 "$staged/nginx-ostara.conf" /etc/nginx/sites-available/ostara
    ln -sfn /etc/nginx/sites-available/ostara /etc/nginx/sites-enabled/ostara
    # Debian's welcome page would answer plain HTTP for every other name.
    rm -f /etc/nginx/sites-enabled/default

    local manage=/usr/local/bin/ostara-manage
    "$manage" migrate --noinput
    "$manage" collectstatic --noinput >/dev/null
    "$manage" ostara_setup
    local influxdb
    influxdb=$(sed -n 's#^INFLUXDB_URL=##p' "$env_file")
    wait_until 60 "InfluxDB at ${influxdb:-$influxdb_url}" curl -fsS -o /dev/null "${influxdb:-$influxdb_url}/ping"
    "$manage" influxdb_setup

    systemctl daemon-reload
    systemctl enable "${units[@]}" "${arrays_units[@]}"
    systemctl restart "${units[@]}"
    # The collector runs the checkout's code: a running one starts again with the new code; a
    # stopped one waits for its configuration (the path unit).
    systemctl try-restart ostara-arrays.service
    systemctl start ostara-arrays.path
    nginx -t
    systemctl enable nginx
    systemctl reload-or-restart nginx
    say "Ostara is installed: https://$server_name/ (services: ${units[*]} ostara-arrays, logs: journalctl -u ostara-portal)"
}

case "${1:-install}" in
install) install_all ;;
render)
    render_all "${2:?usage: install.sh render DIR}"
    render_env_file "$2/ostara.env" "${DATABASE_URL:?DATABASE_URL: required to render the environment file}"
    ;;
certificate) certificate "${2:?usage: install.sh certificate CERT KEY NAME}" "${3:?KEY}" "${4:?NAME}" ;;
*)
    say "unknown action '$1': use install, render DIR or certificate CERT KEY NAME"
    exit 2
    ;;
esac
