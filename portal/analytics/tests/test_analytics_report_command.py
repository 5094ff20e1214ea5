"""`python -m portal.analytics.report FILE`: line protocol as the sensors write it and as
`influx_inspect export -lponly` exports it, the report's JSON keys, options and refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sensors.lineproto import line, series

ROOT = Path(__file__).resolve().parents[3]
GIB = 2**30


def ost_line(server, target, t_ns, write, fs="scratch", free=500):
    fields = {
        "read_bytes": 0,
        "write_bytes": write,
        "kbytes_total": 1000,
        "kbytes_free": free,
        "kbytes_avail": free,
    }
    tags = {"fs": fs, "target": target, "server": server, "ssu": "ssu01", "pair": "ssu01"}
    return line(series("ost", tags), fields, t_ns)


def job_line(jobid, target, t_ns, write):
    tags = {"fs": "scratch", "target": target, "server": "oss01", "jobid": jobid}
    fields = {"read_bytes": 0, "write_bytes": write, "read_calls": 0, "write_calls": 1}
    return line(series("ost_job", tags), fields, t_ns)


def export(tmp_path, lines):
    path = tmp_path / "dump.lp"
    header = [
        "# DDL",
        "CREATE DATABASE ostara WITH NAME autogen",
        "# DML",
        "# CONTEXT-DATABASE:ostara",
        "# CONTEXT-RETENTION-POLICY:autogen",
        "# writing tsm data",
    ]
    path.write_text("\n".join(header + lines) + "\n")
    return path


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "portal.analytics.report", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


@pytest.fixture
def dump(tmp_path):
    t0, t1 = 1_700_000_000 * 10**9, 1_700_000_600 * 10**9
    lines = [
        ost_line("oss01", "OST0000", t0, 0),
        ost_line("oss01", "OST0000", t1, 40 * GIB, free=100),
        ost_line("oss02", "OST0001", t0, 0),
        ost_line("oss02", "OST0001", t1, 20 * GIB),
        job_line("dd.7", "OST0000", t0, 0),
        job_line("dd.7", "OST0000", t1, 40 * GIB),
        ost_line("oss09", "OST0000", t0, 0, fs="other"),
        ost_line("oss09", "OST0000", t1, 9 * GIB, fs="other"),
        "node,server=oss01 load1=1.5 1700000000000000000",  # other measurements are passed over
    ]
    return export(tmp_path, lines)


def test_the_report_of_an_export(dump):
    result = run(str(dump), "--fs", "scratch")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    # 40 GiB through oss01, 20 GiB through oss02: shares 2/3 and 1/3, mean 30 GiB
    assert report["oss"] == [
        {"server": "oss01", "bytes": 40 * GIB, "share": pytest.approx(2 / 3)},
        {"server": "oss02", "bytes": 20 * GIB, "share": pytest.approx(1 / 3)},
    ]
    assert report["imbalance"]["max_over_mean"] == pytest.approx(4 / 3)
    assert report["imbalance"]["cov"] == pytest.approx(1 / 3)
    assert report["overloaded"] == ["oss01"]  # 0.667 > 0.5 × 1.25
    # fills 90 % and 50 %: 40 points apart
    assert report["ost_fill"]["spread_points"] == 40.0 and report["ost_fill"]["flagged"]
    (job,) = report["striping"]
    assert (job["jobid"], job["osts"], job["bytes"], job["stripe_count"]) == (
        "dd.7",
        1,
        40 * GIB,
        2,  # 2 OSTs in the filesystem bound the advice
    )
    assert set(report["io_size"]) >= {"small_share"}


def test_margin_and_filesystem_options(dump):
    wide = json.loads(run(str(dump), "--fs", "scratch", "--margin", "40").stdout)
    assert wide["overloaded"] == []  # 0.667 < 0.5 × 1.4
    everything = json.loads(run(str(dump)).stdout)
    assert [row["server"] for row in everything["oss"]] == ["oss01", "oss02", "oss09"]


def test_standard_input_and_a_bad_line_named(dump):
    good = run("-", "--fs", "scratch", stdin=dump.read_text())
    assert good.returncode == 0
    bad = run("-", stdin=dump.read_text() + "ost,fs=x read_bytes= 12\n")
    assert bad.returncode == 2 and bad.stdout == ""
    assert "line 16: not a field: 'read_bytes='" in bad.stderr
    missing = run("-", stdin="ost,fs=x read_bytes=1i\n")
    assert "line 1: a point without a timestamp" in missing.stderr


def test_a_bad_option_is_refused():
    result = run("-", "--small-io", "lots", stdin="")
    assert result.returncode == 2 and "--small-io" in result.stderr
