"""Lustre tunables on the virtual rack, read and set with the real lctl commands: their 2.15
defaults, `set_param` on one server (until it reboots or the target remounts), and
`set_param -P` through the MGS's params log (every running server now, and each target that
starts later, after a failover or a reboot)."""

from __future__ import annotations

from sensors import parsers
from simulator import failures
from simulator.rack import Rack

OSS01_TARGETS = [f"scratch-OST{i:04x}" for i in range(0, 24, 2)]
OSS02_TARGETS = [f"scratch-OST{i:04x}" for i in range(1, 24, 2)]
OSPS = [f"scratch-OST{i:04x}-osc-MDT0000" for i in range(24)]
BMC = ["ipmitool", "-I", "lanplus", "-U", "admin", "-P", "secret"]
NOT_THE_MGS = (
    "No device found for name MGS: Invalid argument\n"
    "This command must be run on the MGS.\n"
    "error: executing set_param: No such device\n"
)


def values(host_cmd, host: str, *patterns: str) -> dict[str, str]:
    result = host_cmd(host, "lctl", "get_param", *patterns)
    assert result.returncode == 0, result.stderr
    return {name: value.strip() for name, value in parsers.parse_lctl_get_param(result.stdout)}


def osd_read_cache(host_cmd, host: str) -> dict[str, str]:
    """{target: read_cache_enable} of every OSD on the server."""
    found = values(host_cmd, host, "osd-ldiskfs.*.read_cache_enable")
    return {name.split(".")[1]: value for name, value in found.items()}


def test_tunables_show_the_2_15_defaults(built_rack, host_cmd):
    oss = values(
        host_cmd,
        "oss01",
        "osd-ldiskfs.*.read_cache_enable",
        "osd-ldiskfs.*.writethrough_cache_enable",
        "osd-ldiskfs.*.readcache_max_filesize",
        "obdfilter.*.brw_size",
        "ost.OSS.ost_io.threads_*",
        "ldlm.namespaces.filter-*.lru_size",
    )
    for label in OSS01_TARGETS:
        assert oss[f"osd-ldiskfs.{label}.read_cache_enable"] == "1"
        assert oss[f"osd-ldiskfs.{label}.writethrough_cache_enable"] == "1"
        assert oss[f"osd-ldiskfs.{label}.readcache_max_filesize"] == str(2**64 - 1)
        assert oss[f"obdfilter.{label}.brw_size"] == "4"  # MiB
        assert oss[f"ldlm.namespaces.filter-{label}_UUID.lru_size"] == "3200"
    assert oss["ost.OSS.ost_io.threads_min"] == "12"
    assert oss["ost.OSS.ost_io.threads_max"] == "448"
    assert len(oss) == 5 * 12 + 2  # nothing of oss02's

    # The MDS's OSP devices, one per OST, are found as osc.* as well as osp.*.
    osc = host_cmd("mds01", "lctl", "get_param", "osc.*.max_rpcs_in_flight")
    assert osc.stdout == "".join(f"osc.{name}.max_rpcs_in_flight=8\n" for name in OSPS)
    only_names = host_cmd("mds01", "lctl", "get_param", "-N", "osp.*.max_rpcs_in_flight")
    assert only_names.stdout.splitlines() == [f"osp.{name}.max_rpcs_in_flight" for name in OSPS]
    one = host_cmd("mds01", "lctl", "get_param", "-n", f"osc.{OSPS[23]}.max_rpcs_in_flight")
    assert one.stdout == "8\n"
    assert osd_read_cache(host_cmd, "mds01") == {"MGS": "1", "scratch-MDT0000": "1"}
    # A 2.15 OSP has no max_pages_per_rpc (a client's OSC has)
    pages = host_cmd("mds01", "lctl", "get_param", "osc.*.max_pages_per_rpc")
    assert pages.returncode == 2
    assert "param_path 'osc/*/max_pages_per_rpc': No such file or directory" in pages.stderr
    # The OSTs' devices are not on the MDS, nor the MDS's on an OSS.
    assert host_cmd("oss01", "lctl", "get_param", "osc.*.max_rpcs_in_flight").returncode == 2


def test_set_param_changes_one_server_until_it_reboots(built_rack, host_cmd):
    set_ = host_cmd(
        "oss01",
        "lctl",
        "set_param",
        "osd-ldiskfs.scratch-OST0000.read_cache_enable=0",
        "ost.OSS.ost_io.threads_max=450",
        "obdfilter.scratch-OST0002.brw_size=16",
    )
    assert set_.returncode == 0, set_.stderr
    assert set_.stdout == (
        "osd-ldiskfs.scratch-OST0000.read_cache_enable=0\n"
        "ost.OSS.ost_io.threads_max=450\n"
        "obdfilter.scratch-OST0002.brw_size=16\n"
    )
    cache = osd_read_cache(host_cmd, "oss01")
    assert cache.pop("scratch-OST0000") == "0" and set(cache.values()) == {"1"}
    assert set(osd_read_cache(host_cmd, "oss02").values()) == {"1"}
    # threads are counted per CPU partition (4): 450 reads back as 448
    got = values(host_cmd, "oss01", "ost.OSS.ost_io.threads_max", "obdfilter.*.brw_size")
    assert got["ost.OSS.ost_io.threads_max"] == "448"
    assert got["obdfilter.scratch-OST0002.brw_size"] == "16"
    assert got["obdfilter.scratch-OST0004.brw_size"] == "4"

    # The kernel refuses what it cannot take, as write(2) does.
    refused = host_cmd(
        "oss01", "lctl", "set_param", "osd-ldiskfs.scratch-OST0000.read_cache_enable=maybe"
    )
    assert refused.returncode == 22
    assert refused.stderr == (
        "error: set_param: setting osd-ldiskfs.scratch-OST0000.read_cache_enable=maybe: "
        "Invalid argument\n"
    )
    too_big = host_cmd("oss01", "lctl", "set_param", "obdfilter.scratch-OST0000.brw_size=128")
    assert too_big.returncode == 34 and too_big.stderr.endswith(": Numerical result out of range\n")
    no_value = host_cmd("oss01", "lctl", "set_param", "obdfilter.scratch-OST0000.brw_size=")
    assert no_value.returncode == 22
    assert no_value.stderr == (
        "error: set_param: setting obdfilter.scratch-OST0000.brw_size: no value\n"
    )
    spaced = host_cmd("oss01", "lctl", "set_param", "-n", "ost.OSS.ost_io.threads_min", "16")
    assert spaced.returncode == 0 and spaced.stdout == ""

    # A refresh of the trees (the clock moving) keeps the values set.
    with Rack.open(built_rack) as rack:
        rack.advance(by=30)
        rack.render()
    assert osd_read_cache(host_cmd, "oss01")["scratch-OST0000"] == "0"

    # A remount starts its target again from the defaults; the node's own values stay.
    assert host_cmd("oss01", "umount", "/mnt/lustre/scratch-OST0002").returncode == 0
    mount = ["mount", "-t", "lustre"]
    remount = host_cmd(
        "oss01", *mount, "/dev/mapper/scratch-OST0002", "/mnt/lustre/scratch-OST0002"
    )
    assert remount.returncode == 0, remount.stderr
    got = values(host_cmd, "oss01", "obdfilter.scratch-OST0002.brw_size", "ost.OSS.*.threads_*")
    assert got == {
        "obdfilter.scratch-OST0002.brw_size": "4",
        "ost.OSS.ost_io.threads_min": "16",
        "ost.OSS.ost_io.threads_max": "448",
    }

    # A power cycle loses them all.
    cycle = host_cmd(None, *BMC, "-H", "10.20.0.11", "chassis", "power", "cycle")
    assert cycle.returncode == 0, cycle.stderr
    back = host_cmd("oss01", *mount, "/dev/mapper/scratch-OST0000", "/mnt/lustre/scratch-OST0000")
    assert back.returncode == 0, back.stderr
    got = values(host_cmd, "oss01", "osd-ldiskfs.*.read_cache_enable", "ost.OSS.*.threads_*")
    assert got == {
        "osd-ldiskfs.scratch-OST0000.read_cache_enable": "1",
        "ost.OSS.ost_io.threads_min": "12",
        "ost.OSS.ost_io.threads_max": "448",
    }


def test_set_param_P_goes_through_the_mgs_to_every_server(built_rack, host_cmd):
    # Only where the MGS runs (mds01 here): elsewhere the real lctl finds no MGS device.
    for host in ("oss01", "mds02"):
        refused = host_cmd(host, "lctl", "set_param", "-P", "osc.*.max_rpcs_in_flight=16")
        assert refused.returncode == 1
        assert refused.stderr == NOT_THE_MGS
    not_here = host_cmd("oss01", "lctl", "--device", "MGS", "llog_print", "params")
    assert not_here.returncode == 1
    assert not_here.stderr == "No device found for name MGS: Invalid argument\n"
    empty = host_cmd("mds01", "lctl", "--device", "MGS", "llog_print", "params")
    assert empty.returncode == 0 and empty.stdout == ""

    rpcs = host_cmd("mds01", "lctl", "set_param", "-P", "osc.*.max_rpcs_in_flight=16")
    assert rpcs.returncode == 0, rpcs.stderr
    assert rpcs.stdout == ""  # the MGS only records it
    osc = values(host_cmd, "mds01", "osc.*.max_rpcs_in_flight")
    assert osc == {f"osc.{name}.max_rpcs_in_flight": "16" for name in OSPS}

    cache = host_cmd("mds01", "lctl", "set_param", "-P", "osd-ldiskfs.*.read_cache_enable=0")
    assert cache.returncode == 0, cache.stderr
    assert osd_read_cache(host_cmd, "oss01") == dict.fromkeys(OSS01_TARGETS, "0")
    assert osd_read_cache(host_cmd, "oss02") == dict.fromkeys(OSS02_TARGETS, "0")
    assert osd_read_cache(host_cmd, "mds01") == {"MGS": "0", "scratch-MDT0000": "0"}

    # Not looked up: a name no server has is recorded all the same.
    client_only = host_cmd("mds01", "lctl", "set_param", "-P", "osc.*.max_pages_per_rpc=1024")
    assert client_only.returncode == 0, client_only.stderr
    # Setting a name again replaces its record.
    again = host_cmd("mds01", "lctl", "set_param", "-P", "osc.*.max_rpcs_in_flight=32")
    assert again.returncode == 0
    log = host_cmd("mds01", "lctl", "--device", "MGS", "llog_print", "params")
    assert log.stdout == (
        "- { index: 5, event: set_param, device: general, "
        "param: osd-ldiskfs.*.read_cache_enable, value: 0 }\n"
        "- { index: 8, event: set_param, device: general, "
        "param: osc.*.max_pages_per_rpc, value: 1024 }\n"
        "- { index: 11, event: set_param, device: general, "
        "param: osc.*.max_rpcs_in_flight, value: 32 }\n"
    )
    assert values(host_cmd, "mds01", f"osp.{OSPS[0]}.max_rpcs_in_flight") == {
        f"osp.{OSPS[0]}.max_rpcs_in_flight": "32"
    }
    # `lctl llog_print params` finds the MGS by itself; one naming a filesystem target
    # is recorded for that filesystem's device.
    host_cmd("mds01", "lctl", "set_param", "-P", "obdfilter.scratch-OST0001.brw_size=8")
    last = host_cmd("mds01", "lctl", "llog_print", "params", "--start", "12").stdout
    assert last == (
        "- { index: 14, event: set_param, device: scratch, "
        "param: obdfilter.scratch-OST0001.brw_size, value: 8 }\n"
    )
    assert values(host_cmd, "oss02", "obdfilter.scratch-OST000[13].brw_size") == {
        "obdfilter.scratch-OST0001.brw_size": "8",
        "obdfilter.scratch-OST0003.brw_size": "4",
    }

    # A value set by hand on one server still wins there, until it reboots.
    by_hand = host_cmd(
        "oss01", "lctl", "set_param", "osd-ldiskfs.scratch-OST0000.read_cache_enable=1"
    )
    assert by_hand.returncode == 0
    assert osd_read_cache(host_cmd, "oss01")["scratch-OST0000"] == "1"
    assert set(osd_read_cache(host_cmd, "oss02").values()) == {"0"}

    # -P without a value is refused here (the real lctl would record it as is).
    bare = host_cmd("mds01", "lctl", "set_param", "-P", "osc.*.max_dirty_mb")
    assert bare.returncode == 22
    assert bare.stderr == "error: set_param: setting osc.*.max_dirty_mb: no value\n"


def test_set_param_P_d_forgets_the_setting_not_the_values(built_rack, host_cmd):
    assert (
        host_cmd("mds01", "lctl", "set_param", "-P", "osd-ldiskfs.*.read_cache_enable=0").returncode
        == 0
    )
    # A target started later takes the whole log again, over a value set by hand.
    host_cmd("oss01", "lctl", "set_param", "osd-ldiskfs.scratch-OST0002.read_cache_enable=1")
    host_cmd("oss01", "umount", "/mnt/lustre/scratch-OST0000")
    mount = ["mount", "-t", "lustre", "/dev/mapper/scratch-OST0000", "/mnt/lustre/scratch-OST0000"]
    assert host_cmd("oss01", *mount).returncode == 0
    assert osd_read_cache(host_cmd, "oss01") == dict.fromkeys(OSS01_TARGETS, "0")

    forget = host_cmd("mds01", "lctl", "set_param", "-P", "-d", "osd-ldiskfs.*.read_cache_enable")
    assert forget.returncode == 0 and forget.stdout == ""
    assert host_cmd("mds01", "lctl", "llog_print", "params").stdout == ""
    # The servers keep the value until their target remounts or they reboot.
    assert osd_read_cache(host_cmd, "oss02") == dict.fromkeys(OSS02_TARGETS, "0")
    host_cmd("oss01", "umount", "/mnt/lustre/scratch-OST0000")
    assert host_cmd("oss01", *mount).returncode == 0
    cache = osd_read_cache(host_cmd, "oss01")
    assert cache.pop("scratch-OST0000") == "1" and set(cache.values()) == {"0"}
    # Forgetting what was never set is no error.
    assert host_cmd("mds01", "lctl", "set_param", "-P", "-d", "nosuch.param").returncode == 0


def test_permanent_settings_follow_failover_and_reboot(clustered_rack, host_cmd):
    assert (
        host_cmd("mds01", "lctl", "set_param", "-P", "osd-ldiskfs.*.read_cache_enable=0").returncode
        == 0
    )
    host_cmd("oss01", "lctl", "set_param", "ost.OSS.ost_io.threads_max=256")

    with Rack.open(clustered_rack) as rack:
        crash = failures.inject(rack, "server-crash", server="oss01")
        rack.render()
    # oss02 fenced oss01 and started its OSTs: they read the params log as they mounted
    assert osd_read_cache(host_cmd, "oss02") == dict.fromkeys(OSS01_TARGETS + OSS02_TARGETS, "0")

    with Rack.open(clustered_rack) as rack:
        failures.clear(rack, crash["id"])
        rack.render()
    moved = host_cmd("oss02", "crm_resource", "--move", "-r", "scratch-OST0000", "-N", "oss01")
    assert moved.returncode == 0, moved.stderr
    # The rebooted oss01: its own value is gone, the permanent one is back on its target.
    got = values(host_cmd, "oss01", "osd-ldiskfs.*.read_cache_enable", "ost.OSS.*.threads_max")
    assert got == {
        "osd-ldiskfs.scratch-OST0000.read_cache_enable": "0",
        "ost.OSS.ost_io.threads_max": "448",
    }
