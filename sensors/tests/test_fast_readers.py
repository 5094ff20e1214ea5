"""The collectors' fast readings of job_stats and brw_stats give exactly what the reference
parsers (sensors.parsers) give, on every real sample; on text they do not recognise they hand
over to the reference instead of guessing."""

from __future__ import annotations

import pytest

from sensors.brw import fast_brw_rows, read_brw_rows, reference_brw_rows
from sensors.jobstats import (
    JobStatsReader,
    NotRecognised,
    encode_job_fields,
    fast_counters,
    fast_job_blocks,
    reference_jobs,
)
from sensors.lineproto import decode
from sensors.parsers import job_bytes, parse_job_stats, parse_lctl_get_param
from sensors.schema import BRW_SECTIONS
from sensors.tests import FIXTURES, fixture_text


def _samples(suffix: str) -> list[tuple[str, str]]:
    """(label, text) of every sample holding `suffix` data: files and lctl outputs."""
    found = []
    for path in sorted(FIXTURES.rglob("*.txt")):
        relative = str(path.relative_to(FIXTURES))
        text = path.read_text(encoding="utf-8")
        if path.name.startswith("lctl-get_param."):
            for param, value in parse_lctl_get_param(text):
                if param.endswith(suffix):
                    found.append((f"{relative}:{param}", value))
        elif suffix in path.name:
            found.append((relative, text))
    return found


def _is_ost(label: str) -> bool:
    """OST job_stats: the lctl parameter, or else the file name, starts with `obdfilter`."""
    name = label.rsplit(":", 1)[-1].rsplit("/", 1)[-1]
    return name.startswith("obdfilter")


def _fields(encoded: str) -> dict:
    return decode(f"m {encoded} 0").fields


JOB_SAMPLES = _samples("job_stats")
OST_JOB_SAMPLES = [sample for sample in JOB_SAMPLES if _is_ost(sample[0])]
BRW_SAMPLES = _samples("brw_stats")


def test_there_are_samples_of_every_era():
    assert len(JOB_SAMPLES) >= 15 and len(OST_JOB_SAMPLES) >= 8
    assert len(BRW_SAMPLES) >= 15


@pytest.mark.parametrize(("label", "text"), JOB_SAMPLES, ids=[s[0] for s in JOB_SAMPLES])
def test_fast_job_stats_equal_the_reference_parser(label, text):
    blocks = fast_job_blocks(text)
    reference = reference_jobs(text)
    assert [job_id for job_id, _ in blocks] == [job_id for job_id, _ in reference]
    for (_, block), (_, counters) in zip(blocks, reference, strict=True):
        nonzero = [c for c in counters if c[1] != "0"]
        assert fast_counters(block) == nonzero
    reader = JobStatsReader()
    ost = _is_ost(label)
    fast = reader.read("target", text, ost=ost)
    assert reader.fallbacks == 0, "a real sample needed the slow path"
    expected = [
        (job_id, _fields(encode_job_fields([c for c in counters if c[1] != "0"], ost)))
        for job_id, counters in reference
        if job_id
    ]
    assert [(job_id, _fields(fields)) for job_id, fields in fast] == expected


@pytest.mark.parametrize(("label", "text"), OST_JOB_SAMPLES, ids=[s[0] for s in OST_JOB_SAMPLES])
def test_job_bytes_are_those_of_parsers_job_bytes(label, text):
    """read_bytes/write_bytes of every OST job are `parsers.job_bytes` (2.14+ latencies in
    `read:`/`write:` are not bytes; 2.3-2.5 `read:`/`write:` in bytes are)."""
    reader = JobStatsReader()
    encoded = dict(reader.read("target", text, ost=True))
    for job in parse_job_stats(text):
        if not job["job_id"]:
            continue
        fields = _fields(encoded[job["job_id"]])
        assert (fields["read_bytes"], fields["write_bytes"]) == job_bytes(job)


def test_manual_2015_read_write_in_bytes_are_bytes():
    text = fixture_text(
        "lustre-manual/lctl-get_param.obdfilter-job_stats.2015.read-write-bytes.empty-targets.txt"
    )
    value = dict(parse_lctl_get_param(text))["obdfilter.myth-OST0000.job_stats"]
    # - job_id: mythcommflag.0 / read: { samples: 974, unit: bytes, ..., sum: 91530035 }
    ((job_id, fields),) = JobStatsReader().read("t", value, ost=True)
    assert job_id == "mythcommflag.0"
    assert _fields(fields) == {
        "read_calls": 974,
        "read_bytes": 91530035,
        "write_calls": 0,
        "write_bytes": 0,
    }


def test_unknown_counter_shape_falls_back_to_the_reference_parser():
    text = (
        "job_stats:\n"
        "- job_id:          dd.0\n"
        "  snapshot_time:   1510782606\n"
        "  write_bytes:     {samples: 5, unit: bytes, min: 1, max: 1, sum: 4096}\n"
        "  punch:           { samples:           2, unit:  reqs }\n"
    )
    with pytest.raises(NotRecognised):
        fast_counters(fast_job_blocks(text)[0][1])
    reader = JobStatsReader()
    ((job_id, fields),) = reader.read("t", text, ost=True)
    assert reader.fallbacks == 1
    assert job_id == "dd.0"
    assert _fields(fields) == {
        "write_calls": 5,
        "write_bytes": 4096,
        "punch": 2,
        "read_calls": 0,
        "read_bytes": 0,
    }


def test_unchanged_job_blocks_are_remembered_and_changed_ones_read_again():
    text = fixture_text("hpe-lustre_exporter/obdfilter.lustrefs-OST0000.job_stats.txt")
    reader = JobStatsReader()
    first = reader.read("t", text, ost=True)
    reader.new_round()
    changed = text.replace("sum:    215147593728 }", "sum:    215147597824 }", 1)
    assert changed != text
    second = dict(reader.read("t", changed, ost=True))
    assert _fields(second["24"])["write_bytes"] == 215147597824
    assert second["26"] == dict(first)["26"]


@pytest.mark.parametrize(("label", "text"), BRW_SAMPLES, ids=[s[0] for s in BRW_SAMPLES])
def test_fast_brw_stats_equal_the_reference_parser(label, text):
    assert fast_brw_rows(text, BRW_SECTIONS) == reference_brw_rows(text, BRW_SECTIONS)


def test_brw_garbage_goes_to_the_reference_parser_and_its_error():
    with pytest.raises(ValueError):
        read_brw_rows("snapshot_time: 1 secs.nsecs\nthis is not a table | at all\n", BRW_SECTIONS)
