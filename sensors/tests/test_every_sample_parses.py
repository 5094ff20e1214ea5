"""Every real sample of a kind the sensor collects goes through the collectors without a parse
error and yields points; every other sample is listed with the reason it is not collected, so a
sample added later cannot be forgotten."""

from __future__ import annotations

import pytest

from sensors.parsers import parse_lctl_get_param
from sensors.sample_trees import place, place_lctl_output
from sensors.tests import FIXTURES, fixture_text
from sensors.tests.lp import collect_root, points_of

# sample file -> (parameter it holds, release layout to place it in, measurement it feeds)
SINGLE_FILES = {
    "hpe-lustre_exporter/health_check.txt": ("health_check", "2.10", "node"),
    "hpe-lustre_exporter/lnet.stats.txt": ("lnet.stats", "2.10", "lnet"),
    "hpe-lustre_exporter/mdt.lustrefs-MDT0000.job_stats.txt": (
        "mdt.lustrefs-MDT0000.job_stats",
        "2.10",
        "mdt_job",
    ),
    "hpe-lustre_exporter/mdt.lustrefs-MDT0000.md_stats.txt": (
        "mdt.lustrefs-MDT0000.md_stats",
        "2.10",
        "mdt",
    ),
    "hpe-lustre_exporter/mdt.lustrefs-MDT0000.recovery_status.txt": (
        "mdt.lustrefs-MDT0000.recovery_status",
        "2.10",
        "mdt",
    ),
    "hpe-lustre_exporter/obdfilter.lustrefs-OST0000.job_stats.txt": (
        "obdfilter.lustrefs-OST0000.job_stats",
        "2.10",
        "ost_job",
    ),
    "hpe-lustre_exporter/obdfilter.lustrefs-OST0000.recovery_status.txt": (
        "obdfilter.lustrefs-OST0000.recovery_status",
        "2.10",
        "ost",
    ),
    "hpe-lustre_exporter/obdfilter.lustrefs-OST0000.stats.txt": (
        "obdfilter.lustrefs-OST0000.stats",
        "2.10",
        "ost",
    ),
    "hpe-lustre_exporter/osd-zfs.lustrefs-MDT0000.brw_stats.txt": (
        "osd-zfs.lustrefs-MDT0000.brw_stats",
        "2.10",
        None,  # an MDT's brw_stats is read only when the MDT itself is there: see below
    ),
    "hpe-lustre_exporter/osd-zfs.lustrefs-OST0000.brw_stats.txt": (
        "osd-zfs.lustrefs-OST0000.brw_stats",
        "2.10",
        None,
    ),
    "hpe-lustre_exporter/ost.OSS.ost.stats.txt": ("ost.OSS.ost.stats", "2.10", "oss_service"),
    "hpe-lustre_exporter/ost.OSS.ost_create.stats.txt": (
        "ost.OSS.ost_create.stats",
        "2.10",
        "oss_service",
    ),
    "hpe-lustre_exporter/ost.OSS.ost_io.stats.txt": (
        "ost.OSS.ost_io.stats",
        "2.10",
        "oss_service",
    ),
    "llnl-lmt/2.10.8/lnet.stats.txt": ("lnet.stats", "2.10", "lnet"),
    "llnl-lmt/2.10.8/mdt.lquake-MDT0000.md_stats.txt": (
        "mdt.lquake-MDT0000.md_stats",
        "2.10",
        "mdt",
    ),
    "llnl-lmt/2.10.8/obdfilter.lquake-OST0000.brw_stats.ldiskfs.txt": (
        "obdfilter.lquake-OST0000.brw_stats",
        "2.10",
        None,
    ),
    "llnl-lmt/2.10.8/obdfilter.lquake-OST0000.stats.txt": (
        "obdfilter.lquake-OST0000.stats",
        "2.10",
        "ost",
    ),
    "llnl-lmt/2.12.9_12.llnl/lnet.stats.txt": ("lnet.stats", "2.12", "lnet"),
    "llnl-lmt/2.12.9_12.llnl/mdt.lquake-MDT0000.md_stats.txt": (
        "mdt.lquake-MDT0000.md_stats",
        "2.12",
        "mdt",
    ),
    "llnl-lmt/2.12.9_12.llnl/obdfilter.lquake-OST0000.stats.txt": (
        "obdfilter.lquake-OST0000.stats",
        "2.12",
        "ost",
    ),
    "llnl-lmt/2.12.9_12.llnl/osd-zfs.lquake-OST0000.brw_stats.txt": (
        "osd-zfs.lquake-OST0000.brw_stats",
        "2.12",
        None,
    ),
    "llnl-lmt/2.15.4_1.llnl/lnet.stats.txt": ("lnet.stats", "2.15", "lnet"),
    "llnl-lmt/2.15.4_1.llnl/mdt.lflood-MDT0000.md_stats.txt": (
        "mdt.lflood-MDT0000.md_stats",
        "2.15",
        "mdt",
    ),
    "llnl-lmt/2.15.4_1.llnl/obdfilter.lflood-OST0000.stats.txt": (
        "obdfilter.lflood-OST0000.stats",
        "2.15",
        "ost",
    ),
    "llnl-lmt/2.15.4_1.llnl/obdfilter.lflood-OST0001.stats.txt": (
        "obdfilter.lflood-OST0001.stats",
        "2.15",
        "ost",
    ),
    "llnl-lmt/2.15.4_1.llnl/osd-zfs.lflood-OST0000.brw_stats.txt": (
        "osd-zfs.lflood-OST0000.brw_stats",
        "2.15",
        None,
    ),
    "lustre-manual/mdt.job_stats.2012.reqs.txt": ("mdt.fs-MDT0000.job_stats", "2.10", "mdt_job"),
    "lustre-manual/osd.brw_stats.2013.secs-usecs.txt": (
        "osd-ldiskfs.fs-OST0000.brw_stats",
        "2.10",
        None,
    ),
    "telegraf-lustre2/health_check.txt": ("health_check", "2.12", "node"),
    "telegraf-lustre2/mdt.OST0001.job_stats.txt": ("mdt.OST0001.job_stats", "2.12", "mdt_job"),
    "telegraf-lustre2/mdt.OST0001.md_stats.txt": ("mdt.OST0001.md_stats", "2.12", "mdt"),
    "telegraf-lustre2/mdt.fs-MDT0000.eviction_count.txt": (
        "mdt.fs-MDT0000.eviction_count",
        "2.12",
        "mdt",
    ),
    "telegraf-lustre2/obdfilter.OST0001.job_stats.txt": (
        "obdfilter.OST0001.job_stats",
        "2.12",
        "ost_job",
    ),
    "telegraf-lustre2/obdfilter.OST0001.stats.txt": ("obdfilter.OST0001.stats", "2.12", "ost"),
    "telegraf-lustre2/obdfilter.fs-OST0001.eviction_count.txt": (
        "obdfilter.fs-OST0001.eviction_count",
        "2.12",
        "ost",
    ),
    "telegraf-lustre2/osd-ldiskfs.OST0001.brw_stats.space-separated.txt": (
        "osd-ldiskfs.OST0001.brw_stats",
        "2.12",
        None,
    ),
    "whamcloud-lustre-collector/brw_stats.start_and_elapsed_time.empty.txt": (
        "osd-ldiskfs.fs-OST0000.brw_stats",
        "2.15",
        None,
    ),
    "whamcloud-lustre-collector/brw_stats.with_data.txt": (
        "osd-ldiskfs.fs-OST0000.brw_stats",
        "2.14",
        None,
    ),
    "whamcloud-lustre-collector/mdt.job_stats.touch.0.2021-03.usecs-sumsq.txt": (
        "mdt.fs-MDT0000.job_stats",
        "2.14",
        "mdt_job",
    ),
    "whamcloud-lustre-collector/obdfilter.job_stats.cp.0.2018-09.pre-2.14.txt": (
        "obdfilter.fs-OST0000.job_stats",
        "2.12",
        "ost_job",
    ),
    "whamcloud-lustre-collector/obdfilter.job_stats.lfs.0.2023-06.time-triple-hist.txt": (
        "obdfilter.fs-OST0000.job_stats",
        "2.15",
        "ost_job",
    ),
    "hpe-lustre_exporter/mdt.lustrefs-MDT0000.exports.172.20.20.4-o2ib.stats.txt": (
        "mdt.lustrefs-MDT0000.exports.172.20.20.4@o2ib.stats",
        "2.10",
        "mdt_client",
    ),
    "hpe-lustre_exporter/obdfilter.lustrefs-OST0000.exports.172.20.20.2-o2ib.stats.txt": (
        "obdfilter.lustrefs-OST0000.exports.172.20.20.2@o2ib.stats",
        "2.10",
        "ost_client",
    ),
    "telegraf-lustre2/mdt.OST0001.exports.10.2.4.27-o2ib1.stats.txt": (
        "mdt.OST0001.exports.10.2.4.27@o2ib1.stats",
        "2.12",
        "mdt_client",
    ),
    "telegraf-lustre2/obdfilter.OST0001.exports.10.2.4.27-o2ib1.stats.txt": (
        "obdfilter.OST0001.exports.10.2.4.27@o2ib1.stats",
        "2.12",
        "ost_client",
    ),
}
SINGLE_VALUES = ("kbytesavail", "kbytesfree", "kbytestotal", "filesfree", "filestotal")

# recorded `lctl get_param` outputs -> (release layout to spread them in, measurements they feed)
SERVER = {"ost", "mdt", "oss_service", "node"}
LCTL_OUTPUTS = {
    "lustre-manual/lctl-get_param.obdfilter-job_stats.2015.read-write-bytes.empty-targets.txt": (
        "2.10",
        {"ost_job"},
    ),
    "whamcloud-lustre-collector/lctl-get_param.2.14.0.client.llite.txt": ("2.14", {"node"}),
    "whamcloud-lustre-collector/lctl-get_param.2.14.0_ddn144.oss-mds-mgs-client.txt": (
        "2.14",
        SERVER | {"ost_client", "mdt_client"},
    ),
    "whamcloud-lustre-collector/lctl-get_param.ai400.oss-mds.start_time.txt": (
        "2.14",
        SERVER | {"brw"},
    ),
    "whamcloud-lustre-collector/lctl-get_param.ai400x2.mds-oss.txt": ("2.14", SERVER),
    "whamcloud-lustre-collector/lctl-get_param.ex8761.not-healthy.mdt-job_stats.txt": (
        "2.14",
        SERVER | {"mdt_job"},
    ),
    "whamcloud-lustre-collector/lctl-get_param.exascaler-6.2.0-r9.not-healthy.mdt-job_stats.txt": (
        "2.14",
        SERVER | {"mdt_job"},
    ),
    # osd-ldiskfs values only: read for the targets that obdfilter/ and mdt/ show (added below)
    "whamcloud-lustre-collector/lctl-get_param.osd-ldiskfs.mixed-versions.txt": (
        "2.15",
        {"ost", "mdt"},  # its brw_stats tables are all empty
    ),
    "whamcloud-lustre-collector/lctl-get_param.recovery_status.complete.txt": (
        "2.14",
        {"ost", "mdt"},
    ),
    "whamcloud-lustre-collector/lctl-get_param.recovery_status.recovering.txt": (
        "2.14",
        {"ost", "mdt"},
    ),
    "whamcloud-lustre-collector/lctl-get_param.recovery_status.waiting_for_clients.txt": (
        "2.14",
        {"ost", "mdt"},
    ),
    "whamcloud-lustrefs-exporter/lctl-get_param.full-scrape.ai400x2.io_latency-quota.txt": (
        "2.15",
        SERVER | {"brw", "owner_usage", "owner_quota"},
    ),
    "whamcloud-lustrefs-exporter/lctl-get_param.mdt-job_stats.exascaler.quoted-jobid.txt": (
        "2.15",
        {"mdt_job"},
    ),
    "whamcloud-lustrefs-exporter/"
    "lctl-get_param.obdfilter-job_stats.exascaler-2.14.0_ddn.quoted-jobid-hist.txt": (
        "2.15",
        {"ost_job"},
    ),
}

NOT_COLLECTED = {
    "NAMING.md": "documentation",
    "SOURCES.md": "documentation",
    "obdfilter-survey/README.md": "documentation",
    "obdfilter-survey/lustre-manual.disk-10ost.2015.summary.txt": "survey output (surveys app)",
    "obdfilter-survey/readme-example.one-test.summary-line.txt": "survey output (surveys app)",
    "telegraf-lustre2/expected-output.line-protocol.txt": "Telegraf's output, not an input",
    "hpe-lustre_exporter/version.txt": "version string",
    "llnl-lmt/2.10.8/version.txt": "version string",
    "llnl-lmt/2.12.9_12.llnl/version.txt": "version string",
    "llnl-lmt/2.15.4_1.llnl/version.txt": "version string",
    "hpe-lustre_exporter/llite.lustrefs-ffff88105db50000.stats.client.txt": "client side",
    "lustre-manual/llite.stats.client.2011.secs-usecs.txt": "client side",
    "hpe-lustre_exporter/mds.MDS.mdt.stats.txt": "MDS service stats (not in DESIGN §6)",
    "hpe-lustre_exporter/obdfilter.lustrefs-OST0000.tot_granted.txt": "grant accounting",
    "hpe-lustre_exporter/osd-zfs.lustrefs-OST0000.stats.txt": "OSD page counters",
    "telegraf-lustre2/osd-ldiskfs.OST0001.stats.txt": "OSD cache counters",
    "telegraf-lustre2/mgs.MGS.eviction_count.txt": "MGS",
    "lustre-manual/lnet.nis.old-format.txt": "LNet tables",
    "lustre-manual/lnet.peers.old-format.txt": "LNet tables",
    "whamcloud-lustrefs-exporter/lctl-set_param.md_stats.ok.stdout.txt": "set_param output",
    "whamcloud-lustrefs-exporter/lctl-set_param.md_stats.permission-denied.stderr.txt": (
        "set_param output"
    ),
    "whamcloud-lustrefs-exporter/lnetctl.global-show.txt": "lnetctl YAML",
    "whamcloud-lustrefs-exporter/lnetctl.net-show-v4.health.txt": "lnetctl YAML",
    "whamcloud-lustrefs-exporter/lnetctl.net-show-v4.txt": "lnetctl YAML",
    "whamcloud-lustrefs-exporter/lnetctl.stats-show.txt": "lnetctl YAML (same as lnet stats)",
}


def test_every_sample_is_either_collected_or_listed_with_a_reason():
    on_disk = {str(path.relative_to(FIXTURES)) for path in FIXTURES.rglob("*") if path.is_file()}
    single_values = {
        f"hpe-lustre_exporter/obdfilter.lustrefs-OST0000.{name}.txt" for name in SINGLE_VALUES
    } | {"hpe-lustre_exporter/obdfilter.lustrefs-OST0000.num_exports.txt"}
    known = set(SINGLE_FILES) | set(LCTL_OUTPUTS) | set(NOT_COLLECTED) | single_values
    assert on_disk - known == set(), "new samples: say whether the sensor collects them"
    assert known - on_disk == set()


@pytest.mark.parametrize("sample", sorted(SINGLE_FILES))
def test_sample_file_collects_without_error(tmp_path, sample):
    param, release, measurement = SINGLE_FILES[sample]
    assert place(tmp_path, param, fixture_text(sample), release) is not None
    if param.endswith("brw_stats"):
        # brw_stats is read for the targets found under obdfilter/ and mdt/
        obd_type = "mdt" if "MDT" in param else "obdfilter"
        device = param.split(".")[1]
        place(tmp_path, f"{obd_type}.{device}.num_exports", "1\n", release)
        measurement = "brw"
    rnd, points = collect_root(tmp_path)
    assert rnd.errors == 0
    if sample.endswith("start_and_elapsed_time.empty.txt"):
        assert points_of(points, "brw") == []  # all eight sections are empty
    else:
        assert points_of(points, measurement), f"no {measurement} point from {sample}"


@pytest.mark.parametrize("release", ["2.10", "2.15"])
def test_single_values_collect_in_procfs_and_sysfs(tmp_path, release):
    for name in (*SINGLE_VALUES, "num_exports"):
        text = fixture_text(f"hpe-lustre_exporter/obdfilter.lustrefs-OST0000.{name}.txt")
        place(tmp_path, f"obdfilter.lustrefs-OST0000.{name}", text, release)
    rnd, points = collect_root(tmp_path)
    assert rnd.errors == 0
    (ost,) = points_of(points, "ost", target="OST0000")
    assert ost.fields["num_exports"] == 3  # obdfilter.lustrefs-OST0000.num_exports.txt


@pytest.mark.parametrize("sample", sorted(LCTL_OUTPUTS))
def test_recorded_lctl_output_collects_without_error(tmp_path, sample):
    release, measurements = LCTL_OUTPUTS[sample]
    placed = place_lctl_output(tmp_path, fixture_text(sample), release)
    assert placed, f"nothing collectable in {sample}"
    for param in placed:
        kind, _, rest = param.partition(".")
        device = rest.split(".")[0]
        if kind.startswith("osd-") and ("-OST" in device or "-MDT" in device):
            owner = "obdfilter" if "-OST" in device else "mdt"
            place(tmp_path, f"{owner}.{device}.num_exports", "1\n", release)
    rnd, points = collect_root(tmp_path)
    assert rnd.errors == 0
    assert {p.measurement for p in points} == measurements


def test_ddn144_capture_values(tmp_path):
    """Chosen values of a 2.14 EXAScaler all-in-one node, read by hand from
    lctl-get_param.2.14.0_ddn144.oss-mds-mgs-client.txt."""
    text = fixture_text(
        "whamcloud-lustre-collector/lctl-get_param.2.14.0_ddn144.oss-mds-mgs-client.txt"
    )
    params = dict(parse_lctl_get_param(text))
    place_lctl_output(tmp_path, text, "2.14")
    rnd, points = collect_root(tmp_path)
    assert rnd.errors == 0
    # capacity of the OSTs lives only under osd-ldiskfs here
    kbytes = int(params["osd-ldiskfs.fs-OST0000.kbytestotal"])
    (ost,) = points_of(points, "ost", fs="fs", target="OST0000")
    assert ost.fields["kbytes_total"] == kbytes
    assert ost.fields["num_exports"] == int(params["obdfilter.fs-OST0000.num_exports"])
    (node,) = points_of(points, "node")
    assert node.fields["lustre_healthy"] == 1


def test_recovering_mdt_reports_its_state(tmp_path):
    sample = "whamcloud-lustre-collector/lctl-get_param.recovery_status.recovering.txt"
    place_lctl_output(tmp_path, fixture_text(sample), "2.14")
    _, points = collect_root(tmp_path)
    # mdt.fs-MDT0002.recovery_status: status: RECOVERING, time_remaining: 119,
    # connected_clients: 3/7, completed_clients: 3
    (mdt,) = points_of(points, "mdt", target="MDT0002")
    assert mdt.fields["recovery_status"] == "RECOVERING"
    assert mdt.fields["recovery_time_remaining"] == 119
    assert mdt.fields["recovery_connected_clients"] == 3
    assert mdt.fields["recovery_completed_clients"] == 3
    # obdfilter.fs-OST0000.recovery_status: COMPLETE, recovery_duration: 150, completed 4/8
    (ost,) = points_of(points, "ost", target="OST0000")
    assert ost.fields["recovery_status"] == "COMPLETE"
    assert ost.fields["recovery_duration"] == 150
    assert ost.fields["recovery_completed_clients"] == 4
