"""obdfilter-survey on the virtual rack: driven by its environment variables, printing its
summary lines, with numbers that follow the hardware (DESIGN §5 performance model)."""

from __future__ import annotations

from sensors import parsers
from simulator import failures, provision
from simulator.rack import Rack

MIB = 1 << 20
OSS_CEILING_MIB_S = 5000e6 / MIB


def survey(host_cmd, host, tmp_path, **env):
    settings = {
        "rslt_loc": str(tmp_path),
        "size": "2048",
        "nobjlo": "1",
        "nobjhi": "1",
        "thrlo": "16",
        "thrhi": "16",
    }
    settings.update({k: str(v) for k, v in env.items()})
    result = host_cmd(host, "obdfilter-survey", env=settings)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("done!")
    return result.stdout, parsers.parse_obdfilter_survey(result.stdout)


def test_survey_of_a_healthy_oss(built_rack, host_cmd, tmp_path):
    text, parsed = survey(host_cmd, "oss01", tmp_path, nobjhi=2, thrlo=1, thrhi=2, size=1024)
    assert parsed["header"].endswith("Obdfilter-survey for case=disk from oss01")
    # rsz 1024, nobj 1..2, thr 1..2 with thr % nobj == 0: (1,1), (1,2), (2,2)
    assert [(r["obj"], r["thr"]) for r in parsed["rows"]] == [(12, 12), (12, 24), (24, 24)]
    row = parsed["rows"][0]
    assert row["ost"] == 12 and row["rsz_kib"] == 1024
    assert row["size_kib"] == 12 * 1024 * 1024
    assert list(row["tests"]) == ["write", "rewrite", "read"]
    for line in text.splitlines()[1:4]:
        assert line.startswith("ost 12 sz ") and line.endswith("] ")  # fixed-width fields
    summaries = list(tmp_path.glob("obdfilter_survey_*_oss01.summary"))
    assert (
        len(summaries) == 1 and summaries[0].read_text().splitlines()[1] == (text.splitlines()[1])
    )
    # more threads per OST, more bandwidth
    assert parsed["rows"][1]["tests"]["write"]["mb_s"] > row["tests"]["write"]["mb_s"]
    _, full = survey(host_cmd, "oss01", tmp_path)
    read = full["rows"][0]["tests"]["read"]["mb_s"]
    write = full["rows"][0]["tests"]["write"]["mb_s"]
    # about 410 "MB/s" (as printed) per healthy 8+2 OST at 128 KiB segments, 12 OSTs on this
    # OSS: enough for the planner's 4,920 to be met within 10 %
    assert 0.9 * 4920 < read <= OSS_CEILING_MIB_S
    assert 0.9 * 4920 < write < read


def test_an_oss_never_exceeds_its_ceiling(built_rack, host_cmd, tmp_path):
    with Rack.open(built_rack) as rack:
        failures.inject(rack, "server-crash", server="oss02")  # no cluster: move by hand
        for target in rack.state["targets"].values():
            if target["kind"] == "OST" and not target["mounted_on"]:
                from simulator import operations

                operations.mount_target(
                    rack.state,
                    "oss01",
                    target["device"],
                    f"/mnt/lustre/{target['label']}",
                    rack.now,
                )
        rack.render()
    _, parsed = survey(host_cmd, "oss01", tmp_path)
    row = parsed["rows"][0]
    assert row["ost"] == 24
    for test in row["tests"].values():
        assert test["mb_s"] <= OSS_CEILING_MIB_S + 0.01
    assert row["tests"]["read"]["mb_s"] > 0.95 * OSS_CEILING_MIB_S


def test_degraded_group_is_slower_and_failed_group_reports_error(built_rack, host_cmd, tmp_path):
    _, healthy = survey(host_cmd, "oss01", tmp_path, targets="scratch-OST0000")
    with Rack.open(built_rack) as rack:
        failures.inject(rack, "drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00")
    _, degraded = survey(host_cmd, "oss01", tmp_path, targets="oss01:scratch-OST0000")
    ratio = (
        degraded["rows"][0]["tests"]["write"]["mb_s"] / healthy["rows"][0]["tests"]["write"]["mb_s"]
    )
    assert 0.5 < ratio < 0.75
    with Rack.open(built_rack) as rack:
        failures.inject(rack, "drive-failed", array="ssu01-a", volume_group="ssu01-a-vg00", count=2)
    _, failed = survey(host_cmd, "oss01", tmp_path, targets="scratch-OST0000")
    assert failed["rows"][0]["tests"]["write"]["flag"] == "ERROR"
    _, short = survey(host_cmd, "oss01", tmp_path, targets="scratch-OST0002", size=16)
    assert short["rows"][0]["tests"]["write"]["flag"] == "SHORT"


def test_larger_segments_stream_faster(tmp_path, host_cmd, rack_dir, mds_plan):
    from provisioning.planner import make_plan
    from simulator.tests.conftest import ssu_spec

    with Rack.open(rack_dir, create=True) as rack:
        provision.build(rack, mds_plan)
        provision.build(rack, make_plan(ssu_spec(1, segment_kib=512)))
    _, big = survey(host_cmd, "oss01", tmp_path, targets="scratch-OST0000")
    # 128 KiB reference: 408 MB/s write per OST at 16 threads
    assert big["rows"][0]["tests"]["write"]["mb_s"] > 1.08 * 408e6 / MIB


def test_a_failed_controller_halves_the_writes_of_its_array(built_rack, host_cmd, tmp_path):
    _, healthy = survey(host_cmd, "oss01", tmp_path, targets="scratch-OST0000 scratch-OST000c")
    with Rack.open(built_rack) as rack:
        failures.inject(rack, "controller-failed", array="ssu01-a", controller="B")
    _, failed = survey(host_cmd, "oss01", tmp_path, targets="scratch-OST0000 scratch-OST000c")
    before, after = healthy["rows"][0]["tests"], failed["rows"][0]["tests"]
    # OST0000 (ssu01-a) writes through its cache-less controller, OST000c (ssu01-b) does not
    assert 0.7 < after["write"]["mb_s"] / before["write"]["mb_s"] < 0.85
    assert 0.95 < after["read"]["mb_s"] / before["read"]["mb_s"] < 1.05


def test_survey_arguments_fail_like_the_script(built_rack, host_cmd, tmp_path):
    first = host_cmd(
        "oss01", "obdfilter-survey", env={"tests_str": "read write", "rslt_loc": str(tmp_path)}
    )
    assert first.returncode != 0 and "First test must be 'write'" in first.stderr
    big = host_cmd("oss01", "obdfilter-survey", env={"rszhi": "8192", "rslt_loc": str(tmp_path)})
    assert "rszhi=8192 is too big" in big.stdout
    missing = host_cmd(
        "oss01", "obdfilter-survey", env={"targets": "scratch-OST0001", "rslt_loc": str(tmp_path)}
    )
    assert "OST scratch-OST0001 not setup" in missing.stdout
