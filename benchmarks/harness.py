"""`make bench`: run the benchmarks, with a background load beside them, and end with a table of
their figures against the goals; with a reference commit, next to the reference's figures.

    python -m benchmarks.harness [--base COMMIT] [--rounds N] [--no-load] [--ssus N]
                                 [--only MODULE,...] [--args MODULE=ARGUMENTS]

Each benchmark module keeps its figures with ``benchmarks.common.record`` in
.run/bench/<module>.json; the harness reads them after every run. With ``--base`` it clones this
repository into a temporary directory, checks the commit out there, gives the clone this
checkout's .venv and node_modules when its lock files are the same (else the clone installs its
own with `make install`), and runs each benchmark in turn in the reference and in this checkout
(the change), ``--rounds`` times each, the order swapped every round so neither side always runs
first. Rows show the median of the rounds and half their range (the spread), the goal, and
whether the change's median meets it. The background load (benchmarks.load: the demo's virtual
rack, its sensors and a Celery worker, as `make demo` starts them) runs for the whole session,
for both sides alike. Benchmarks measure; the harness never fails on a number.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.common import REPO, Figure, read_figures, say

MODULES = (
    "benchmarks.rack",
    "benchmarks.commands",
    "benchmarks.sensor",
    "benchmarks.health",
    "benchmarks.analytics",
)
SIZED = {"benchmarks.rack", "benchmarks.sensor", "benchmarks.health", "benchmarks.analytics"}
# What the reference shares with this checkout's installation when these are the same.
LOCK_FILES = ("requirements.txt", "requirements-test.txt", "package-lock.json")
# The goals of issue 34 ("Rack-scale speed"), by the benchmark that measures them. A benchmark
# that recorded no figure held to a goal leaves its goal in the table as "no figure".
ISSUE_GOALS = (
    (
        "benchmarks.analytics",
        "analytics report: 24 h at 20 SSUs <= 1 s; at 100 SSUs day <= 2 s, week <= 3 s, "
        "30 d <= 5 s",
    ),
    (
        "benchmarks.health",
        "health evaluation at 100 SSUs: steady median <= 100 ms, 1 % changing median <= 300 ms; "
        "20 browsers p95 <= 300 ms",
    ),
)
NOT_HERE = "make test <= 25 min: not measured by make bench (make test prints its own time)"
REFERENCE, CHANGE = "reference", "change"
_COMMIT = re.compile(r"^[A-Za-z0-9_./~^@{}-]+$")


@dataclass
class Checkout:
    """A tree the benchmarks run in: this checkout (the change) or the reference's clone."""

    side: str
    root: Path
    figures: dict[str, dict[str, list[Figure]]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)

    def has(self, module: str) -> bool:
        return (self.root / (module.replace(".", "/") + ".py")).is_file()


# ------------------------------------------------------------------------------------------------
# the reference


def resolve_commit(base: str, repo: Path = REPO) -> str:
    """The full id of ``base`` in this repository, or SystemExit naming BASE and the reason."""
    if not _COMMIT.match(base) or base.startswith("-"):
        raise SystemExit(f"BASE={base!r}: not a commit name (letters, digits and ./~^@{{}}-)")
    found = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise SystemExit(f"BASE={base!r}: no such commit in {repo}")
    return found.stdout.strip()


def clone_reference(base: str, work: Path, repo: Path = REPO) -> Path:
    """A clean clone of ``repo`` at ``base`` in ``work``/reference, ready to run: this
    checkout's .venv and node_modules when the lock files match, else its own `make install`."""
    commit = resolve_commit(base, repo)
    root = work / "reference"
    subprocess.run(["git", "clone", "--quiet", str(repo), str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "checkout", "--quiet", "--detach", commit], check=True)
    if same_lock_files(repo, root):
        for name in (".venv", "node_modules"):
            if (repo / name).exists():
                (root / name).symlink_to((repo / name).resolve())
        say(f"reference {commit[:12]} in {root}, with this checkout's .venv and node_modules")
    else:
        say(f"reference {commit[:12]} in {root}: its lock files differ, installing its own")
        subprocess.run(["make", "-C", str(root), "install"], check=True)
    return root


def same_lock_files(one: Path, other: Path) -> bool:
    def content(root: Path, name: str) -> bytes | None:
        path = root / name
        return path.read_bytes() if path.is_file() else None

    return all(content(one, name) == content(other, name) for name in LOCK_FILES)


# ------------------------------------------------------------------------------------------------
# running


_running: subprocess.Popen | None = None


def run_module(checkout: Checkout, module: str, arguments: list[str], log: Path) -> None:
    """One run of a benchmark module in a checkout, its output shown and kept in ``log``, its
    figures added to the checkout's."""
    global _running
    if not checkout.has(module):
        checkout.notes[module] = f"not in the {checkout.side}"
        return
    results = checkout.root / ".run" / "bench" / f"{module}.json"
    results.unlink(missing_ok=True)
    python = checkout.root / ".venv" / "bin" / "python"
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="portal.settings", PYTHONUNBUFFERED="1")
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as kept:
        _running = subprocess.Popen(
            [str(python), "-m", module, *arguments],
            cwd=checkout.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for line in _running.stdout:
            print(f"  {line}", end="", flush=True)
            kept.write(line)
        code = _running.wait()
        _running = None
    figures = read_figures(results)
    if code != 0:
        checkout.notes[module] = f"{checkout.side} failed (exit {code}; {log})"
    elif not figures:
        checkout.notes[module] = f"{checkout.side} recorded no figures"
    by_name = checkout.figures.setdefault(module, {})
    for figure in figures:
        by_name.setdefault(figure.name, []).append(figure)


def module_arguments(module: str, ssus: int | None, extra: dict[str, str]) -> list[str]:
    arguments = ["--ssus", str(ssus)] if ssus is not None and module in SIZED else []
    return arguments + shlex.split(extra.get(module, ""))


def run_all(
    checkouts: list[Checkout],
    modules: Iterable[str],
    rounds: int,
    ssus: int | None,
    extra: dict[str, str],
    logs: Path,
) -> None:
    """Each module, round after round, in every checkout; the checkouts' order reversed every
    other round."""
    for module in modules:
        arguments = module_arguments(module, ssus, extra)
        for number in range(rounds):
            order = checkouts if number % 2 == 0 else list(reversed(checkouts))
            for checkout in order:
                run = f"{checkout.side}, round {number + 1}/{rounds}"
                say(f"== {' '.join([module, *arguments])}: {run}")
                log = logs / f"{checkout.side}-{module}-{number + 1}.txt"
                run_module(checkout, module, arguments, log)


# ------------------------------------------------------------------------------------------------
# the table


def number(value: float) -> str:
    size = abs(value)
    if value == 0:
        return "0"
    if size >= 100 or (size >= 10 and value == int(value)):
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def summary(figures: list[Figure] | None) -> str:
    """The median of the rounds and half their range: '12.5 ± 0.40 ms'; '-' for no figure."""
    if not figures:
        return "-"
    values = [figure.value for figure in figures]
    median = statistics.median(values)
    text = number(median)
    if len(values) > 1:
        text += f" ± {number((max(values) - min(values)) / 2)}"
    return f"{text} {figures[0].unit}"


def goal_text(figure: Figure) -> str:
    if figure.goal is None:
        return ""
    return f"{'<=' if figure.lower_is_better else '>='} {number(figure.goal)} {figure.unit}"


def verdict(figures: list[Figure] | None) -> str:
    """'meets' or 'misses' for the median of the rounds; '' without a goal or a figure."""
    if not figures:
        return ""
    met = figures[-1].meets(statistics.median(figure.value for figure in figures))
    return "" if met is None else ("meets" if met else "misses")


def change_against_reference(change: list[Figure] | None, reference: list[Figure] | None) -> str:
    if not change or not reference:
        return ""
    before = statistics.median(figure.value for figure in reference)
    after = statistics.median(figure.value for figure in change)
    return f"{after / before - 1:+.0%}" if before else ""


def table_rows(change: Checkout, reference: Checkout | None, modules: list[str]) -> list:
    """The table's rows: a tuple of cells per figure, a string per note spanning the table."""
    rows: list = []
    for module in modules:
        mine = change.figures.get(module, {})
        theirs = reference.figures.get(module, {}) if reference else {}
        names = list(mine) + [name for name in theirs if name not in mine]
        for name in names:
            figures = mine.get(name) or theirs[name]
            cells = [name]
            if reference:
                cells += [summary(theirs.get(name)), summary(mine.get(name))]
                cells.append(change_against_reference(mine.get(name), theirs.get(name)))
            else:
                cells.append(summary(mine.get(name)))
            cells += [goal_text(figures[-1]), verdict(mine.get(name))]
            rows.append(tuple(cells))
        for checkout in (reference, change):
            if checkout and module in checkout.notes:
                rows.append(f"{module}: {checkout.notes[module]}")
    for module, goals in ISSUE_GOALS:
        held = [f for fs in change.figures.get(module, {}).values() for f in fs if f.goal]
        if module not in modules:
            rows.append(f"{goals}: not run this time ({module})")
        elif not held:
            rows.append(f"{goals}: no figure ({module} recorded none held to a goal)")
    rows.append(NOT_HERE)
    return rows


def format_table(rows: list, with_reference: bool) -> str:
    if with_reference:
        header = ("figure", "reference", "change", "change/ref", "goal", "")
    else:
        header = ("figure", "this checkout", "goal", "")
    cells = [header] + [row for row in rows if isinstance(row, tuple)]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header))]
    lines = []
    for row in [header, None] + rows:
        if row is None:
            lines.append("  ".join("-" * width for width in widths))
        elif isinstance(row, str):
            lines.append(f"  ({row})")
        else:
            first = row[0].ljust(widths[0])
            rest = [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
            lines.append("  ".join([first, *rest]).rstrip())
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------


def parse_extra(items: list[str]) -> dict[str, str]:
    extra = {}
    for item in items:
        module, sep, arguments = item.partition("=")
        if not sep or module not in MODULES:
            raise SystemExit(f"--args {item!r}: give MODULE=ARGUMENTS, MODULE one of {MODULES}")
        extra[module] = arguments
    return extra


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness", description=__doc__)
    parser.add_argument("--base", help="the reference commit (BASE=)")
    parser.add_argument("--rounds", type=int, help="runs of each benchmark on each side")
    parser.add_argument("--ssus", type=int, help="size of the racks (default: each benchmark's)")
    parser.add_argument("--no-load", action="store_true", help="without the background load")
    parser.add_argument(
        "--only",
        type=lambda text: text.split(","),
        default=list(MODULES),
        help="comma-separated benchmark modules",
    )
    parser.add_argument("--args", action="append", default=[], help="MODULE=ARGUMENTS, repeated")
    parser.add_argument("--keep", action="store_true", help="keep the reference's clone")
    args = parser.parse_args(argv)
    unknown = [module for module in args.only if module not in MODULES]
    if unknown:
        parser.error(f"--only: {', '.join(unknown)} not among {', '.join(MODULES)}")
    if args.rounds is not None and args.rounds < 1:
        parser.error("--rounds: at least 1")
    rounds = args.rounds or (3 if args.base else 1)
    extra = parse_extra(args.args)
    modules = [module for module in MODULES if module in args.only]
    logs = REPO / ".run" / "bench" / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    # A TERM ends the session as a Ctrl-C does: the benchmark running and the load stopped.
    signal.signal(signal.SIGTERM, _interrupt)
    work = Path(tempfile.mkdtemp(prefix="ostara-bench-"))
    change = Checkout(CHANGE, REPO)
    reference = None
    load = None
    try:
        if args.base:
            reference = Checkout(REFERENCE, clone_reference(args.base, work))
        if not args.no_load:
            from benchmarks.load import BackgroundLoad

            load = BackgroundLoad()
            load.start()
        checkouts = [reference, change] if reference else [change]
        run_all(checkouts, modules, rounds, args.ssus, extra, logs)
    finally:
        if _running is not None and _running.poll() is None:
            _running.terminate()
            _running.wait()
        if load is not None:
            load.stop()
        if args.keep:
            say(f"reference kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    keep_results(change, reference)
    rows = table_rows(change, reference, modules)
    text = format_table(rows, reference is not None)
    (REPO / ".run" / "bench" / "table.txt").write_text(text + "\n")
    say()
    say(f"Figures: median of {rounds} round(s) ± half their range; goals from issue 34")
    say(f"background load: {'off (--no-load)' if load is None else load.summary}")
    if args.ssus is not None:
        say(f"racks of {args.ssus} SSUs (--ssus): the issue's goals are for 20 and 100 SSUs")
    say(text)
    return 0


def _interrupt(*_signal) -> None:
    raise KeyboardInterrupt


def keep_results(change: Checkout, reference: Checkout | None) -> None:
    kept = {
        checkout.side: {
            "figures": {
                module: {name: [asdict(f) for f in figures] for name, figures in by_name.items()}
                for module, by_name in checkout.figures.items()
            },
            "notes": checkout.notes,
        }
        for checkout in (reference, change)
        if checkout
    }
    (REPO / ".run" / "bench" / "results.json").write_text(json.dumps(kept, indent=1) + "\n")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        say("interrupted: the benchmark running and the background load are stopped")
        sys.exit(130)
