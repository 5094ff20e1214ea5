"""job_stats of every era: integer or secs.nsecs snapshot times, `min:` with and without a
space, quoted ids, sumsq and hist, OST and MDT counter sets."""

from __future__ import annotations

import pytest

from sensors.parsers import job_bytes, parse_job_stats, parse_lctl_get_param
from sensors.tests import fixture_text


def test_reads_2_10_ost_job_stats():
    text = fixture_text("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.job_stats.txt")
    jobs = parse_job_stats(text)
    assert len(jobs) == text.count("- job_id:")
    first = jobs[0]
    assert first["job_id"] == "24"
    assert first["snapshot_time"] == 1510782606
    assert first["counters"]["write_bytes"] == {
        "samples": 64575,
        "unit": "bytes",
        "min": 4096,
        "max": 4194304,
        "sum": 215147593728,
        "sumsq": None,
    }
    assert first["counters"]["punch"]["samples"] == 1
    assert job_bytes(first) == (0, 215147593728)


def test_reads_min_max_touching_the_colon():
    # `max:16777216` (no space) in the Telegraf sample.
    jobs = parse_job_stats(fixture_text("telegraf-lustre2/obdfilter.OST0001.job_stats.txt"))
    assert jobs[0]["job_id"] == "cluster-testjob1"
    assert jobs[0]["counters"]["write_bytes"]["max"] == 16777216
    assert jobs[0]["counters"]["write_bytes"]["min"] == 1048576
    assert job_bytes(jobs[1]) == (1024, 51200)


def test_quoted_job_id_keeps_its_colons_and_hist_is_read():
    text = fixture_text(
        "whamcloud-lustrefs-exporter/"
        "lctl-get_param.obdfilter-job_stats.exascaler-2.14.0_ddn.quoted-jobid-hist.txt"
    )
    (name, value), *_ = parse_lctl_get_param(text)
    assert name == "obdfilter.es01a-OST0001.job_stats"
    job = parse_job_stats(value)[0]
    assert job["job_id"] == "SLURM_JOB10:0:es18kxe-co-client"
    assert job["snapshot_time"] == pytest.approx(1723114647.887515895)
    assert job["elapsed_time"] == pytest.approx(12622.830229669)
    write_bytes = job["counters"]["write_bytes"]
    assert write_bytes["sum"] == 11025514496
    assert write_bytes["sumsq"] == 166242808078794752
    assert write_bytes["hist"]["16M"] == 666
    assert write_bytes["hist"]["32K"] == 1
    # the latency line `write:` must not be taken for bytes
    assert job["counters"]["write"]["unit"] == "usecs"
    assert job["counters"]["write"]["sum"] == 7304967
    assert job_bytes(job) == (0, 11025514496)
    assert job["counters"]["read_bytes"]["hist"] == {}


def test_hex_escapes_in_quoted_ids_are_decoded():
    jobs = parse_job_stats('job_stats:\n- job_id:          "a\\x3Ab c"\n  snapshot_time:   1\n')
    assert jobs[0]["job_id"] == "a:b c"


def test_reads_mdt_job_stats_with_usecs_and_sumsq():
    jobs = parse_job_stats(
        fixture_text("whamcloud-lustre-collector/mdt.job_stats.touch.0.2021-03.usecs-sumsq.txt")
    )
    assert jobs[0]["job_id"] == "touch.0"
    assert jobs[0]["counters"]["open"]["sumsq"] == 99225
    assert jobs[0]["counters"]["mknod"]["sum"] == 296
    assert "punch" in jobs[0]["counters"]


def test_reads_2012_mdt_job_stats_and_2015_ost_read_write_bytes():
    jobs = parse_job_stats(fixture_text("lustre-manual/mdt.job_stats.2012.reqs.txt"))
    assert [j["job_id"] for j in jobs] == ["bash.0", "mythbackend.0"]
    assert jobs[1]["counters"]["sync"]["samples"] == 33190
    text = fixture_text(
        "lustre-manual/lctl-get_param.obdfilter-job_stats.2015.read-write-bytes.empty-targets.txt"
    )
    params = dict(parse_lctl_get_param(text))
    assert parse_job_stats(params["obdfilter.myth-OST0002.job_stats"]) == []
    myth0 = parse_job_stats(params["obdfilter.myth-OST0000.job_stats"])
    # 2.5-era `read:` is bytes
    assert job_bytes(myth0[0]) == (91530035, 0)
    assert len(parse_job_stats(params["obdfilter.myth-OST0004.job_stats"])) == 2


def test_2_16_time_triple_and_truncated_ids():
    jobs = parse_job_stats(
        fixture_text(
            "whamcloud-lustre-collector/obdfilter.job_stats.lfs.0.2023-06.time-triple-hist.txt"
        )
    )
    assert jobs[0]["job_id"] == "lfs.0."
    assert jobs[0]["start_time"] == pytest.approx(1686153914.643119181)
    assert jobs[0]["counters"]["statfs"]["samples"] == 1
    assert "prealloc" in jobs[0]["counters"]
    params = dict(
        parse_lctl_get_param(
            fixture_text(
                "whamcloud-lustre-collector/lctl-get_param.ex8761.not-healthy.mdt-job_stats.txt"
            )
        )
    )
    mdt_jobs = parse_job_stats(params["mdt.fs-MDT0000.job_stats"])
    assert mdt_jobs[0]["job_id"] == "mount.lustre@0@co-es-pm-149.co-"
    assert mdt_jobs[0]["counters"]["getattr"]["sumsq"] == 400


def test_empty_job_id_is_tolerated():
    jobs = parse_job_stats("job_stats:\n- job_id:\n  snapshot_time:   1510782606\n")
    assert jobs[0]["job_id"] == ""


def test_agrees_with_telegraf_expected_output_on_correct_fields():
    # Telegraf's own expected line protocol for the same sample: bytes and calls must match.
    expected = fixture_text("telegraf-lustre2/expected-output.line-protocol.txt")
    line = next(x for x in expected.splitlines() if "jobid=cluster-testjob1" in x)
    fields = dict(f.split("=") for f in line.split(" ")[1].split(","))
    job = parse_job_stats(fixture_text("telegraf-lustre2/obdfilter.OST0001.job_stats.txt"))[0]
    assert fields["jobstats_write_bytes"] == f"{job['counters']['write_bytes']['sum']}u"
    assert fields["jobstats_write_calls"] == f"{job['counters']['write_bytes']['samples']}u"
    assert fields["jobstats_write_max_size"] == f"{job['counters']['write_bytes']['max']}u"
