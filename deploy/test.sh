#!/usr/bin/env bash
# Run the whole suite against the test profile's own Redis and InfluxDB (apart from the demo's),
# then stop them. Exit status is pytest's. Extra arguments go to pytest.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
load_profile test
cd "$OSTARA_HOME"

if ! "$OSTARA_HOME/deploy/services.sh" test start; then
    "$OSTARA_HOME/deploy/services.sh" test stop
    exit 1
fi
export DJANGO_ALLOW_ASYNC_UNSAFE=true  # Playwright's sync API runs an event loop in the test thread
.venv/bin/pytest "$@"
rc=$?
"$OSTARA_HOME/deploy/services.sh" test stop
exit $rc
