#!/usr/bin/env bash
# Run every benchmark of the project and print its results side by side with its reference.
# Benchmarks measure; they never fail on a number. Results also go to .run/bench/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$OSTARA_HOME"
mkdir -p .run/bench

benchmarks=(benchmarks.rack benchmarks.commands benchmarks.sensor benchmarks.health benchmarks.analytics)
export DJANGO_SETTINGS_MODULE=portal.settings
ran=0
for module in "${benchmarks[@]}"; do
    if [ -f "${module//.//}.py" ]; then
        say "== $module"
        .venv/bin/python -m "$module" | tee ".run/bench/${module}.txt"
        ran=$((ran + 1))
    fi
done
say "$ran benchmark(s) run; results in .run/bench/"
