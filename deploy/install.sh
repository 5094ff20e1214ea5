#!/usr/bin/env bash
# Install what is missing: Debian packages, the Python virtualenv with the pinned requirements,
# and the front-end libraries from the npm registry. Quick when everything is already there.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$OSTARA_HOME"

missing=()
while read -r package; do
    case "$package" in ''|'#'*) continue ;; esac
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done <deploy/apt-packages.txt
if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

stamp=.venv/.requirements.sha
want=$(cat requirements.txt requirements-test.txt | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing the Python virtualenv (.venv)"
    python3 -m venv .venv
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -r requirements.txt -r requirements-test.txt
    echo "$want" >"$stamp"
fi

npm_stamp=node_modules/.package-lock.sha
want_npm=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$npm_stamp" 2>/dev/null)" != "$want_npm" ]; then
    say "installing front-end libraries (node_modules)"
    npm ci --no-audit --no-fund --silent
    echo "$want_npm" >"$npm_stamp"
fi
