"""`python -m provisioning.plan` as an operator runs it, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SPECS = Path(__file__).parent / "specs"


def run_plan(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "provisioning.plan", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_prints_the_plan_as_indented_json():
    result = run_plan(str(SPECS / "reference_ssu.json"))
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert len(plan["targets"]) == 24
    assert result.stdout.startswith('{\n  "filesystem": "scratch",')


def test_reads_the_spec_from_stdin_with_a_dash():
    result = run_plan("-", stdin=(SPECS / "mds_pair.json").read_text())
    assert result.returncode == 0, result.stderr
    labels = [target["label"] for target in json.loads(result.stdout)["targets"]]
    assert labels == ["MGS", "scratch-MDT0000"]


def test_table_shows_capacity_groups_targets_failover_and_drawers():
    result = run_plan(str(SPECS / "reference_ssu.json"), "--table")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "raw 960.0 TB, usable 711.9 TB" in out
    assert "expected back-end bandwidth 9840 MB/s: oss01 4920, oss02 4920" in out
    assert "ssu01-a-vg00  ssu01-a-e0  8+2   128  A" in out
    assert "1:1 1:2 2:1 2:2 3:1 3:2 4:1 4:2 5:1 5:2" in out
    assert any(
        line.split() == ["scratch-OST000a", "10", "OST", "ssu01-a-vg10", "oss01", "oss02", "A"]
        for line in out.splitlines()
    )
    assert "if oss02 fails (24): scratch-OST0000 scratch-OST0001" in out
    assert "drawer 1  00 00 01 01 02 02 03 03 04 04 05 05" in out
    assert "drawer 5  06 06 07 07 08 08 09 09 10 10 11 11" in out


def test_table_marks_spares_and_empty_slots():
    spec = json.loads((SPECS / "reference_ssu.json").read_text())
    spec["arrays"] = [
        {"name": "ssu01-a", "controller": "E5560", "drive_tb": 4, "drives": 55, "global_spares": 5}
    ]
    result = run_plan("-", "--table", stdin=json.dumps(spec))
    assert result.returncode == 0, result.stderr
    # 55 drives: 11 in each drawer, the highest of them a spare, slot 12 empty.
    assert "drawer 1  00 00 01 01 02 02 03 03 04 04  S  ." in result.stdout


def test_me4084_table_shows_spares_at_the_end_of_both_drawers():
    result = run_plan(str(SPECS / "me4084_ssu.json"), "--table")
    assert result.returncode == 0, result.stderr
    drawer_lines = [line for line in result.stdout.splitlines() if "drawer 2 " in line]
    assert len(drawer_lines) == 2
    assert all(line.endswith("07  S  S") for line in drawer_lines)


def test_bad_spec_exits_2_with_one_field_per_line_on_stderr():
    spec = json.loads((SPECS / "reference_ssu.json").read_text())
    spec["filesystem"] = "Scratch"
    spec["servers"][1]["hostname"] = "oss01"
    result = run_plan("-", stdin=json.dumps(spec))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("filesystem: 'Scratch' is not a filesystem name")
    assert lines[1] == "servers[1].hostname: 'oss01' duplicates servers[0].hostname"


def test_invalid_json_and_missing_file_exit_2():
    result = run_plan("-", stdin="{not json")
    assert result.returncode == 2
    assert result.stderr.startswith("spec: not valid JSON")
    result = run_plan(str(SPECS / "no-such-spec.json"))
    assert result.returncode == 2
    assert result.stderr.startswith("spec: cannot read")
