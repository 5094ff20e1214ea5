"""`make bench`'s harness (benchmarks/harness.py): the figures a benchmark keeps come back as
they were kept, the table says 'meets' or 'misses' from the median of the rounds, and BASE=<commit>
runs the benchmarks of that commit from a clean clone next to this checkout's, round for round.

The BASE test builds a tiny repository of two commits whose only benchmarks are small modules
that record a figure, so it takes seconds; the background load is not started (it is the demo,
minutes to build)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import harness
from benchmarks.common import REPO, Figure, read_figures, record
from benchmarks.harness import CHANGE, REFERENCE, Checkout


def test_figures_come_back_as_recorded_and_a_new_run_starts_a_new_file(tmp_path):
    path = tmp_path / "benchmarks.health.json"
    program = (
        "import sys; from pathlib import Path; from benchmarks.common import record; "
        "path = Path(sys.argv[1]); "
        "record('steady, median', float(sys.argv[2]), 'ms', goal=100, path=path); "
        "record('ingest', 5e5, 'points/s', goal=4e5, lower_is_better=False, path=path)"
    )
    for value in ("120", "80"):
        subprocess.run([sys.executable, "-c", program, str(path), value], cwd=REPO, check=True)
    assert read_figures(path) == [
        Figure("steady, median", 80.0, "ms", 100, True),
        Figure("ingest", 5e5, "points/s", 4e5, False),
    ]
    # Recorded again within a run: the newer value replaces the older, nothing is repeated.
    record("ingest", 3e5, "points/s", goal=4e5, lower_is_better=False, path=path)
    record("ingest", 6e5, "points/s", goal=4e5, lower_is_better=False, path=path)
    assert [figure.value for figure in read_figures(path)] == [6e5]
    assert read_figures(tmp_path / "none.json") == []


def checkout(side: str, module: str, figures: dict[str, tuple]) -> Checkout:
    """A checkout whose ``module`` kept, per name: (the rounds' values, goal, lower is better,
    unit)."""
    made = Checkout(side, REPO)
    made.figures[module] = {
        name: [Figure(name, value, unit, goal, lower) for value in values]
        for name, (values, goal, lower, unit) in figures.items()
    }
    return made


def test_the_table_holds_the_median_of_the_rounds_to_the_goal():
    change = checkout(
        CHANGE,
        "benchmarks.health",
        {
            # One slow round in three does not make the steady figure miss; the median decides.
            "steady": ([90, 400, 80], 100, True, "ms"),
            "changing": ([310, 320, 305], 300, True, "ms"),
            "rate": ([95, 80, 92], 90, False, "%"),
            "pages": ([7], None, True, "ms"),
        },
    )
    rows = harness.table_rows(change, None, ["benchmarks.health", "benchmarks.analytics"])
    by_name = {row[0]: row[1:] for row in rows if isinstance(row, tuple)}
    assert by_name["steady"] == ("90 ± 160 ms", "<= 100 ms", "meets")
    assert by_name["changing"] == ("310 ± 7.50 ms", "<= 300 ms", "misses")
    assert by_name["rate"] == ("92 ± 7.50 %", ">= 90 %", "meets")
    assert by_name["pages"] == ("7.00 ms", "", "")
    notes = [row for row in rows if isinstance(row, str)]
    # A goal whose benchmark ran and recorded no figure for it stays in the table.
    assert any(note.startswith("analytics report") and "no figure" in note for note in notes)
    assert not any(note.startswith("health evaluation") for note in notes)
    assert any(note.startswith("make test <= 25 min") for note in notes)
    text = harness.format_table(rows, with_reference=False)
    lines = text.splitlines()
    assert lines[0].split() == ["figure", "this", "checkout", "goal"]
    assert lines[2].startswith("steady ") and lines[2].endswith("meets")


def test_the_table_sets_the_reference_beside_the_change():
    reference = checkout(
        REFERENCE, "benchmarks.health", {"steady": ([200, 210, 190], 100, True, "ms")}
    )
    change = checkout(
        CHANGE,
        "benchmarks.health",
        {"steady": ([100, 98, 102], 100, True, "ms"), "new": ([5], None, True, "ms")},
    )
    reference.notes["benchmarks.rack"] = "not in the reference"
    rows = harness.table_rows(change, reference, ["benchmarks.rack", "benchmarks.health"])
    by_name = {row[0]: row[1:] for row in rows if isinstance(row, tuple)}
    assert by_name["steady"] == ("200 ± 10 ms", "100 ± 2.00 ms", "-50%", "<= 100 ms", "meets")
    assert by_name["new"] == ("-", "5.00 ms", "", "", "")
    assert "benchmarks.rack: not in the reference" in rows
    header = harness.format_table(rows, with_reference=True).splitlines()[0].split()
    assert header == ["figure", "reference", "change", "change/ref", "goal"]


def test_a_bad_base_is_refused_with_its_name_and_reason():
    with pytest.raises(SystemExit, match="BASE='--upload-pack=x': not a commit name"):
        harness.resolve_commit("--upload-pack=x")
    with pytest.raises(SystemExit, match="BASE='no-such-branch-xyz': no such commit"):
        harness.resolve_commit("no-such-branch-xyz")
    with pytest.raises(SystemExit, match="--args 'benchmarks.nothing=1'"):
        harness.parse_extra(["benchmarks.nothing=1"])


def git(repo, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.org"]
        + list(args),
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


FAKE_BENCHMARK = """
import sys
from pathlib import Path
from benchmarks.common import record
value = float((Path(__file__).parent / "value.txt").read_text())
record(f"fake refresh of {Path(__file__).stem}", value, "s", goal=1.5)
record("arguments", len(sys.argv) - 1, "")
"""


def test_base_runs_the_reference_commit_from_a_clone_round_for_round(tmp_path):
    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    shutil.copy(REPO / "benchmarks" / "common.py", repo / "benchmarks" / "common.py")
    (repo / "benchmarks" / "__init__.py").write_text("")
    (repo / "benchmarks" / "rack.py").write_text(FAKE_BENCHMARK)
    (repo / "benchmarks" / "value.txt").write_text("2.0")
    (repo / "requirements.txt").write_text("django\n")
    (repo / ".gitignore").write_text(".venv\n.run\n")
    git(repo, "init", "--quiet")
    git(repo, "add", ".")
    git(repo, "commit", "--quiet", "-m", "reference: slow")
    (repo / "benchmarks" / "value.txt").write_text("1.0")
    (repo / "benchmarks" / "commands.py").write_text(FAKE_BENCHMARK)
    git(repo, "add", ".")
    git(repo, "commit", "--quiet", "-m", "change: faster, and a new benchmark")
    (repo / ".venv").symlink_to((REPO / ".venv").resolve())

    clone = harness.clone_reference("HEAD~1", tmp_path / "work", repo=repo)
    assert git(clone, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD~1")
    assert (clone / ".venv").resolve() == (REPO / ".venv").resolve()  # the same lock files

    reference, change = Checkout(REFERENCE, clone), Checkout(CHANGE, repo)
    modules = ["benchmarks.rack", "benchmarks.commands"]
    harness.run_all([reference, change], modules, 2, 5, {}, tmp_path / "logs")
    assert [f.value for f in reference.figures["benchmarks.rack"]["fake refresh of rack"]] == [
        2.0,
        2.0,
    ]
    assert [f.value for f in change.figures["benchmarks.rack"]["fake refresh of rack"]] == [
        1.0,
        1.0,
    ]
    # --ssus reaches the benchmarks that take it (rack), not the others (commands).
    assert change.figures["benchmarks.rack"]["arguments"][0].value == 2
    assert change.figures["benchmarks.commands"]["arguments"][0].value == 0
    assert reference.notes == {"benchmarks.commands": "not in the reference"}
    assert {log.name for log in (tmp_path / "logs").iterdir()} == {
        f"{side}-{module}-{number}.txt"
        for side, module in [
            ("reference", "benchmarks.rack"),
            ("change", "benchmarks.rack"),
            ("change", "benchmarks.commands"),
        ]
        for number in (1, 2)
    }

    rows = harness.table_rows(change, reference, modules)
    by_name = {row[0]: row[1:] for row in rows if isinstance(row, tuple)}
    assert by_name["fake refresh of rack"] == (
        "2.00 ± 0 s",
        "1.00 ± 0 s",
        "-50%",
        "<= 1.50 s",
        "meets",
    )
    assert by_name["fake refresh of commands"] == ("-", "1.00 ± 0 s", "", "<= 1.50 s", "meets")
    assert "benchmarks.commands: not in the reference" in rows


def test_the_reference_installs_its_own_when_its_lock_files_differ(tmp_path):
    one, other = tmp_path / "one", tmp_path / "other"
    for root in (one, other):
        root.mkdir()
        (root / "requirements.txt").write_text("django==5.0\n")
    assert harness.same_lock_files(one, other)
    (other / "package-lock.json").write_text("{}\n")
    assert not harness.same_lock_files(one, other)
    (one / "package-lock.json").write_text("{}\n")
    (other / "requirements.txt").write_text("django==5.1\n")
    assert not harness.same_lock_files(one, other)


def processes_naming(text: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_a_benchmark_stopped_as_the_harness_stops_it_leaves_nothing_running(tmp_path):
    """SIGTERM (the harness's, when `make bench` is interrupted) ends a benchmark as Ctrl-C does:
    the InfluxDB and Redis it started are stopped and its temporary directory removed."""
    bench = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.analytics", "--ssus", "20", "--windows", "24h"],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        said = [bench.stdout.readline()]
        while said[-1] and not said[-1].startswith("Analytics benchmark:"):
            said.append(bench.stdout.readline())
        assert processes_naming(str(tmp_path)), said  # its InfluxDB runs, it writes points
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=60) != 0
    finally:
        bench.kill()
        bench.wait()
    assert processes_naming(str(tmp_path)) == []
    assert list(tmp_path.iterdir()) == []
