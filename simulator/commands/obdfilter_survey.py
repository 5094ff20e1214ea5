"""obdfilter-survey (lustre-iokit), `case=disk`, driven by its real environment variables.

size, rszlo, rszhi, rszmax, nobjlo, nobjhi, thrlo, thrhi, tests_str, targets, case, rslt_loc,
rslt (see sensors/tests/fixtures/lustre/obdfilter-survey/README.md). With no `targets` it
tests every local obdfilter device that is UP, as the script does from `lctl dl`. It prints
the script's summary lines (header, then one line per rsz/nobj/thr combination, fixed-width
fields, a space before each newline) to stdout and to `${rslt}.summary`, then `done!`.

The numbers come from the performance model (simulator.perf): each OST's volume group speed
(health, segment size, data drives), record size and threads per OST, then the RAID
controller and server ceilings; `[min, max]` are per-OST per-second rates with start-up
dips. A target on a failed volume group reports ERROR; a test shorter than 2 s reports SHORT.
The survey returns at once instead of running for minutes.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from simulator import perf
from simulator.commands import Context
from simulator.topology import target_health


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def _powers(low: int, high: int):
    value = max(1, low)
    while value <= high:
        yield value
        value *= 2


def run(ctx: Context, argv: list[str]) -> int:
    case = os.environ.get("case", "disk")
    size = _env_int("size", 16384)
    rszlo, rszhi = _env_int("rszlo", 1024), _env_int("rszhi", 1024)
    rszmax = _env_int("rszmax", 4096)
    nobjlo, nobjhi = _env_int("nobjlo", 1), _env_int("nobjhi", 16)
    thrlo, thrhi = _env_int("thrlo", 1), _env_int("thrhi", 16)
    tests = (os.environ.get("tests_str") or "write rewrite read").split()
    rslt_loc = os.environ.get("rslt_loc", "/tmp")
    hostname = ctx.host or "localhost"
    rslt = os.environ.get("rslt") or (
        f"{rslt_loc}/obdfilter_survey_{time.strftime('%Y-%m-%d@%H:%M')}_{hostname}"
    )
    if case != "disk":
        ctx.print(
            f"case={case} needs echo servers and clients; the virtual rack runs case=disk only"
        )
        ctx.print("program exited with error ")
        return 1
    if tests[0] != "write":
        ctx.print(f"tests: {' '.join(tests)}")
        ctx.error("First test must be 'write'")
        return 1
    if rszhi > rszmax:
        ctx.print(
            f"Test disk case support maximum {rszmax}KB IO data (rszhi={rszhi} is too "
            "big), please use a smaller value."
        )
        ctx.print("program exited with error ")
        return 1
    # Only reads the rack (a shared lock, nothing saved): a survey of every OST one by one must
    # not hold up the rack's clock or the sensors' commands.
    with ctx.rack(read_only=True) as rack:
        state = rack.state
        server = state["servers"][ctx.host]
        wanted = os.environ.get("targets", "").split()
        if wanted:
            names = [name.split(":", 1)[-1] for name in wanted]
            missing = [n for n in names if n not in server["mounts"]]
            if missing:
                ctx.print(f"OST {missing[0]} not setup")
                ctx.print("program exited with error ")
                return 1
        else:
            names = sorted(
                label for label in server["mounts"] if state["targets"][label]["kind"] == "OST"
            )
        if not names:
            ctx.print("Can't find any OSTs to test.  Please set targets=...")
            ctx.print("done!")
            return 0
        targets = [state["targets"][name] for name in names]
        rng = random.Random(f"{state['seed']}:survey:{time.time_ns()}:{os.getpid()}")
        lines = [
            f"{time.strftime('%a %b %e %H:%M:%S %Z %Y')} Obdfilter-survey for case=disk "
            f"from {hostname}"
        ]
        ctx.print(lines[0])
        ndevs = len(targets)
        for rsz in _powers(rszlo, rszhi):
            for nobj in _powers(nobjlo, nobjhi):
                for thr in _powers(thrlo, thrhi):
                    if thr % nobj:
                        continue
                    pages = (rsz + 3) // 4
                    actual_rsz = pages * 4
                    count = size * 1024 // (actual_rsz * thr)
                    total_size = actual_rsz * count * thr * ndevs
                    line = (
                        f"ost {ndevs:2d} sz {total_size:8d}K rsz {actual_rsz:4d}K "
                        f"obj {ndevs * nobj:4d} thr {ndevs * thr:4d} "
                    )
                    for test in tests:
                        line += f"{test} " + _one_test(
                            state, server, targets, test, actual_rsz, thr, total_size, rng
                        )
                    lines.append(line)
                    ctx.print(line)
    try:
        Path(f"{rslt}.summary").write_text("\n".join(lines) + "\n")
    except OSError as problem:
        ctx.error(f"cannot write {rslt}.summary: {problem.strerror}")
    ctx.print("done!")
    return 0


def _one_test(
    state: dict,
    server: dict,
    targets: list[dict],
    test: str,
    rsz_kib: int,
    threads: int,
    total_kib: int,
    rng: random.Random,
) -> str:
    kind = "read" if "write" not in test else ("rewrite" if test != "write" else "write")
    factor = perf.io_size_factor(rsz_kib) * perf.threads_factor(threads)
    rates = []
    error = False
    for target in targets:
        if target_health(state, target) == "failed":
            error = True
            rates.append(0.0)
            continue
        jitter = rng.uniform(0.97, 1.03)
        rates.append(perf.ost_bandwidth(state, target, kind) * factor * jitter)
    # RAID controllers and the server cap the sum.
    by_controller: dict = {}
    for target, rate in zip(targets, rates, strict=True):
        by_controller.setdefault(perf.target_controller(state, target), []).append(rate)
    ceilings = perf.controller_ceilings(state)
    capped = []
    for controller, group in by_controller.items():
        limit = ceilings.get(controller, 0.0) if controller else 0.0
        total = sum(group)
        scale = min(1.0, limit / total) if total else 0.0
        capped += [rate * scale for rate in group]
    total = sum(capped)
    ceiling = perf.host_ceiling(state, server["hostname"])
    if total > ceiling:
        capped = [rate * ceiling / total for rate in capped]
        total = ceiling
    mib_s = total * 1e6 / (1 << 20)
    seconds = (total_kib / 1024) / mib_s if mib_s else 0.0
    text = f"{mib_s:7.2f} "
    if error:
        return text + f"{'ERROR':>17} "
    if seconds < 2.0:
        return text + f"{'SHORT':>17} "
    per_ost = [rate * 1e6 / (1 << 20) for rate in capped]
    low = min(per_ost) * rng.uniform(0.2, 0.6)  # ramp-up and tail seconds
    high = max(per_ost) * rng.uniform(1.15, 1.45)
    return text + f"[{low:7.2f}, {high:7.2f}] "
