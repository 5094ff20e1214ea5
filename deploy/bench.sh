#!/usr/bin/env bash
# Run the benchmarks of the project with the background load beside them, and end with a table
# of their figures against the goals (benchmarks/harness.py). Benchmarks measure; they never fail
# on a number. Figures, logs and the table go to .run/bench/.
#   BASE=<commit>     also run the benchmarks of that commit, from a clean clone, round for round
#   BENCH_ROUNDS=N    runs of each benchmark on each side (default 3 with BASE, else 1)
#   BENCH_LOAD=0      without the background load (the demo's rack, sensors and worker)
#   BENCH_SSUS=N      size of the racks (default: each benchmark's own, mostly 100 SSUs)
#   BENCH_ONLY=a,b    only these modules (benchmarks.rack,benchmarks.health,...)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$OSTARA_HOME"
compile_project
mkdir -p .run/bench

args=()
[ -n "${BASE:-}" ] && args+=(--base "$BASE")
[ -n "${BENCH_ROUNDS:-}" ] && args+=(--rounds "$BENCH_ROUNDS")
[ "${BENCH_LOAD:-1}" = 0 ] && args+=(--no-load)
[ -n "${BENCH_SSUS:-}" ] && args+=(--ssus "$BENCH_SSUS")
[ -n "${BENCH_ONLY:-}" ] && args+=(--only "$BENCH_ONLY")
exec .venv/bin/python -m benchmarks.harness "${args[@]}" "$@"
