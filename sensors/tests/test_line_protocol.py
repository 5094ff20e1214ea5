"""The line-protocol encoder and decoder: escaping of names, tag values and strings, integer
suffixes, values InfluxDB cannot hold; and the real InfluxDB reading back what was written."""

from __future__ import annotations

import urllib.request

import pytest

from sensors.lineproto import decode, escape_key, escape_string, line, series
from sensors.tests.conftest import influx_query


def test_integers_carry_the_i_suffix_floats_and_strings_do_not():
    text = line("m", {"count": 12, "load": 1.5, "state": "optimal", "big": 2**63 - 1}, 1000)
    assert text == 'm count=12i,load=1.5,state="optimal",big=9223372036854775807i 1000'


def test_tags_are_sorted_and_empty_tag_values_left_out():
    assert series("ost", {"target": "OST0000", "fs": "lustrefs", "ssu": ""}) == (
        "ost,fs=lustrefs,target=OST0000"
    )


def test_tag_values_escape_commas_equals_and_spaces_and_keep_colons():
    prefix = series("ost_job", {"jobid": "SLURM_JOB10:0:es18kxe co,x=y"})
    assert prefix == "ost_job,jobid=SLURM_JOB10:0:es18kxe\\ co\\,x\\=y"
    point = decode(f"{prefix} v=1i 1")
    assert point.tags == {"jobid": "SLURM_JOB10:0:es18kxe co,x=y"}


def test_measurement_escapes_commas_and_spaces():
    assert series("my m,x", {}) == "my\\ m\\,x"


def test_string_fields_escape_quotes_and_backslashes():
    assert escape_string('say "hi" \\o/') == '"say \\"hi\\" \\\\o/"'


def test_control_characters_and_a_trailing_backslash_cannot_break_a_line():
    assert escape_key("bad\njob\tid") == "bad?job?id"
    assert escape_key("ends\\") == "ends?"
    assert "\n" not in line("m", {"s": "two\nlines"}, 1)


def test_values_influxdb_cannot_store_are_left_out():
    assert line("m", {"a": float("nan"), "b": float("inf"), "c": None, "d": 1}, 5) == "m d=1i 5"
    assert line("m", {"a": float("nan")}, 5) is None


def test_odd_field_keys_are_escaped():
    assert line("m", {"two words": 1, "a=b": 2}, 1) == "m two\\ words=1i,a\\=b=2i 1"


def test_the_decoder_reads_back_exactly_what_was_encoded():
    # Backslashes before other characters are kept, as InfluxDB 1.x keeps them; a quote in a
    # tag value is a plain character.
    awkward = 'job "1, x=y:0:host\\path'
    text = line(
        series("my m,x", {"jobid": awkward, "a b": "c"}),
        {"state": 'degraded "rebuild" C:\\', "two words": 2, "load": 1.5},
        1000,
    )
    point = decode(text)
    assert point.measurement == "my m,x"
    assert point.tags == {"jobid": awkward, "a b": "c"}
    assert point.fields == {"state": 'degraded "rebuild" C:\\', "two words": 2, "load": 1.5}
    assert point.timestamp == 1000


@pytest.mark.services
def test_influxdb_reads_back_exactly_what_was_encoded(influx_url, influx_db):
    awkward = 'job "1", x=y:0:host\\path'
    lines = [
        line(series("ost_job", {"jobid": awkward, "fs": "fs1"}), {"write_bytes": 2**62}, 1000),
        line(series("array", {"id": "99.1.3"}), {"state": 'degraded "rebuild"', "ok": 0}, 1000),
        line(series("bmc", {"sensor": "CPU1 Temp"}), {"value": 45.5, "ok": 1}, 1000),
    ]
    body = ("\n".join(lines) + "\n").encode()
    request = urllib.request.Request(
        f"{influx_url}/write?db={influx_db}&precision=ms", data=body, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 204
    (job,) = influx_query(influx_url, 'SELECT * FROM "ost_job"', influx_db)
    row = dict(zip(job["columns"], job["values"][0], strict=True))
    assert row["jobid"] == awkward
    assert row["write_bytes"] == 2**62
    assert row["time"] == 1000
    (array,) = influx_query(influx_url, 'SELECT "state" FROM "array"', influx_db)
    assert array["values"][0][1] == 'degraded "rebuild"'
    (bmc,) = influx_query(
        influx_url, 'SELECT "value" FROM "bmc" WHERE "sensor" = \'CPU1 Temp\'', influx_db
    )
    assert bmc["values"][0][1] == 45.5
