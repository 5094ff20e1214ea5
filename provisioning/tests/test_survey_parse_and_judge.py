"""obdfilter-survey output as every release from 1.8 to 2.17 prints it, read line by line, and
judged against the plan: the values a person would read off the summary, stated here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from provisioning.planner import make_plan
from provisioning.survey.judge import combine, expected_mb_s, judge, judge_survey
from provisioning.survey.parse import SurveyParseError, parse_lines

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sensors" / "tests" / "fixtures" / "lustre" / "obdfilter-survey"
SPECS = Path(__file__).parent / "specs"

# Constructed from the script's printf formats (README of the samples), not captured output.
MODERN = (
    "ost 24 sz 402653184K rsz 1024K obj   24 thr   24 write 9712.40 [ 301.00,  498.12] "
    "rewrite 9650.11 [ 288.00,  501.00] read 9901.73 [  10.50,  612.59] \n"
)
WIDE = (
    "ost 48 sz 1610612736K rsz  512K obj  192 thr 1536 write 17002.32 [  79.00,  542.43] "
    "rewrite 17490.54 [ 251.42,  532.46] read 19822.10 [  10.50, 6432.59] \n"
)


def parse(text: str):
    return [r.as_json() for r in parse_lines(text.splitlines(keepends=True))]


def test_the_real_run_of_the_lustre_manual():
    (result,) = parse((SAMPLES / "lustre-manual.disk-10ost.2015.summary.txt").read_text())
    assert result == {
        "ost": 10,
        "sz_kib": 167772160,
        "rsz_kib": 1024,
        "obj": 10,
        "thr": 10,
        "tests": {
            "write": {"mb_s": 10982.73, "min": 601.97, "max": 2912.91},
            "rewrite": {"mb_s": 15696.54, "min": 1160.92, "max": 3450.85},
            "read": {"mb_s": 12358.6, "min": 938.96, "max": 2634.87},
        },
    }


def test_the_readme_example_with_loose_whitespace():
    (result,) = parse((SAMPLES / "readme-example.one-test.summary-line.txt").read_text())
    assert result["ost"] == 8 and result["thr"] == 8
    assert result["tests"] == {"write": {"mb_s": 613.54, "min": 64.0, "max": 82.0}}


def test_both_bracket_styles_and_padded_fields():
    old_style = "ost  2 sz  2097152K rsz 1024K obj    2 thr    4 write  805.10 [ 390.00,421.50] \n"
    new, old = parse(WIDE + old_style)
    assert new["rsz_kib"] == 512 and new["obj"] == 192 and new["thr"] == 1536
    assert new["tests"]["read"] == {"mb_s": 19822.1, "min": 10.5, "max": 6432.59}
    assert old["tests"]["write"] == {"mb_s": 805.1, "min": 390.0, "max": 421.5}


def test_record_size_without_k_as_in_1_8():
    (result,) = parse(
        "ost  1 sz  1048576K rsz 1024 obj    1 thr    1 write  410.00 [ 400.00, 420.00] \n"
    )
    assert result["rsz_kib"] == 1024


def test_error_and_short_in_place_of_the_brackets():
    line = (
        "ost  1 sz 16777216K rsz 1024K obj    1 thr    1 write  412.03             ERROR "
        "rewrite  398.77 [ 376.00,  433.00] read  505.12             SHORT \n"
    )
    (result,) = parse(line)
    assert result["tests"] == {
        "write": {"mb_s": 412.03, "flag": "ERROR"},
        "rewrite": {"mb_s": 398.77, "min": 376.0, "max": 433.0},
        "read": {"mb_s": 505.12, "flag": "SHORT"},
    }


def test_a_line_that_stopped_the_run_and_a_skipped_combination():
    text = (
        "ost  2 sz  4194304K rsz 1024K obj    2 thr    2 Too much buffer space\n"
        "ost  2 sz  4194304K rsz 1024K obj    4 thr    4 created object #s on "
        "oss01:scratch-OST0000 not contiguous\n"
    )
    skipped, stopped = parse(text)
    assert skipped["skipped"] == "Too much buffer space" and skipped["tests"] == {}
    assert stopped["aborted"] == "created object #s on oss01:scratch-OST0000 not contiguous"
    assert stopped["obj"] == 4


def test_stdout_with_its_header_and_chatter():
    text = (
        "using LCTL='lctl' lustre_root='' LUSTRE=''\n"
        "Mon Nov 23 07:00:00 UTC 2026 Obdfilter-survey for case=disk from oss01\n"
        + MODERN
        + "done!\n"
    )
    (result,) = parse(text)
    assert result["ost"] == 24


def test_the_script_giving_up_is_an_aborted_entry():
    text = (
        "Test disk case support maximum 4096KB IO data (rszhi=8192 is too big), please use a "
        "smaller value.\nprogram exited with error \n"
    )
    first, second = parse(text)
    assert first["aborted"].startswith("Test disk case support maximum 4096KB")
    assert second == {"aborted": "program exited with error"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MODERN + "ost 24 sz lots rsz 1024K\n", "line 2: not an obdfilter-survey summary line"),
        ("hello\n", "line 1: not an obdfilter-survey summary line: 'hello'"),
        ("ost  1 sz 1K rsz 4K obj 1 thr 1 write 1.00 [ 1.00\n", "line 1: cannot read"),
        ("ost  1 sz 1K rsz 4K obj 1 thr 1 \n", "line 1: a result line without any test"),
    ],
)
def test_unreadable_lines_are_refused_by_number(text, message):
    with pytest.raises(SurveyParseError, match=message):
        parse(text)


# --- judge ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plan():
    return make_plan(json.loads((SPECS / "reference_ssu.json").read_text()))


def test_expected_aggregate_for_the_ssu_one_server_and_a_few_osts(plan):
    assert expected_mb_s(plan, 24) == 9840.0  # the plan's total, 2 × 12 × 410
    assert expected_mb_s(plan, 12) == 4920.0  # one OSS's OSTs
    assert expected_mb_s(plan, 3) == 1230.0


def test_a_healthy_ssu_passes(plan):
    verdict = judge(plan, parse_lines(MODERN.splitlines()))
    assert verdict.as_json() == {
        "verdict": "pass",
        "reasons": [],
        "ost": 24,
        "threads": 24,
        "expected_mb_s": 9840.0,
        "measured_mb_s": {"write": 9712.4, "read": 9901.73},
        "tolerance": 0.9,
    }


def test_slow_write_at_the_highest_thread_count_fails_with_the_figures(plan):
    text = (
        "ost 24 sz 402653184K rsz 1024K obj   24 thr   24 write 7000.00 [ 100.00, 400.00] "
        "read 9800.00 [ 300.00, 500.00] \n"
        "ost 24 sz 402653184K rsz 1024K obj   24 thr   48 write 8100.00 [ 100.00, 400.00] "
        "read 9900.00 [ 300.00, 500.00] \n"
    )
    verdict = judge(plan, parse_lines(text.splitlines()))
    assert not verdict.passed and verdict.threads == 48
    assert verdict.reasons == [
        "write reached 8,100.0 MB/s on 24 OSTs at 48 threads, 82 % of the expected 9,840.0 MB/s "
        "(at least 90 %, 8,856.0 MB/s, is required)"
    ]
    assert judge(plan, parse_lines(text.splitlines()), tolerance=0.8).passed


def test_error_short_and_aborted_lines_fail_with_a_sentence_each(plan):
    text = (
        "ost 24 sz 402653184K rsz 1024K obj   24 thr   24 write 9712.40             ERROR "
        "read 9901.73             SHORT \n"
        "ost 24 sz 402653184K rsz 1024K obj   48 thr   48 created object #s on "
        "oss02:scratch-OST0001 not contiguous\n"
    )
    reasons = judge(plan, parse_lines(text.splitlines())).reasons
    assert reasons[0].startswith("write at 24 threads (24 objects, 1024 KiB records, line 1)")
    assert "reported ERROR: an OST's test_brw failed" in reasons[0]
    assert "reported SHORT: it ran too briefly to sample" in reasons[1]
    assert reasons[2] == (
        "the run stopped at line 2: created object #s on oss02:scratch-OST0001 not contiguous"
    )


def test_a_survey_without_read_cannot_pass(plan):
    only_write = "ost 24 sz 1K rsz 1024K obj 24 thr 24 write 9900.00 [ 1.00, 2.00] \n"
    verdict = judge(plan, parse_lines(only_write.splitlines()))
    assert verdict.reasons == ["read did not run at 24 threads, so it cannot be judged"]


def run_command(*args: str, stdin: str = ""):
    return subprocess.run(
        [sys.executable, "-m", "provisioning.survey", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def test_the_commands_print_json_lines_and_a_verdict(tmp_path, plan):
    summary = tmp_path / "oss.summary"
    summary.write_text(MODERN)
    parsed = run_command("parse", str(summary))
    assert parsed.returncode == 0
    assert json.loads(parsed.stdout)["tests"]["write"]["mb_s"] == 9712.4
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    judged = run_command("judge", str(plan_file), "-", "--tolerance", "99", stdin=MODERN)
    assert judged.returncode == 0
    verdict = json.loads(judged.stdout)
    assert verdict["verdict"] == "fail" and verdict["tolerance"] == 0.99


def test_the_commands_name_the_bad_line_or_file(tmp_path):
    bad = run_command("parse", "-", stdin=MODERN + "garbage here\n")
    assert bad.returncode == 2 and bad.stdout == ""
    assert "line 2: not an obdfilter-survey summary line: 'garbage here'" in bad.stderr
    not_a_plan = tmp_path / "x.json"
    not_a_plan.write_text("[1]")
    judged = run_command("judge", str(not_a_plan), "-", stdin=MODERN)
    assert judged.returncode == 2 and "is not a plan" in judged.stderr


def test_servers_add_up_only_where_every_server_printed_the_line(plan):
    oss = (
        "ost 12 sz 201326592K rsz 1024K obj   12 thr {thr:4d} write 4600.00 [ 1.00, 2.00] "
        "read 4700.00 [ 1.00, 2.00] \n"
    )
    both = oss.format(thr=96) + oss.format(thr=192)
    per_server = {
        "oss01": parse_lines(both.splitlines()),
        "oss02": parse_lines(oss.format(thr=96).splitlines()),  # stopped before 16 per OST
    }
    (total,) = combine(per_server)
    assert (total.ost, total.thr, total.tests["write"]["mb_s"]) == (24, 192, 9200.0)
    alone = {"scratch-OST0000": [], "scratch-OST0001": parse_lines(MODERN.splitlines())}
    verdict = judge_survey(plan, per_server, alone)
    assert not verdict.passed
    assert "scratch-OST0000 alone: the survey printed no result" in verdict.reasons
