"""The virtual commands take the real tools' arguments, print their output and fail the way
they do (messages and exit codes)."""

from __future__ import annotations

from sensors import parsers
from sensors.tests import fixture_text


def test_mkfs_lustre_argument_errors(built_rack, host_cmd):
    none = host_cmd("oss01", "mkfs.lustre", "--fsname=scratch", "/dev/mapper/scratch-OST0000")
    assert none.returncode == 22
    assert "mkfs.lustre FATAL: must set target type: MDT,OST,MGS" in none.stderr
    assert "mkfs.lustre: exiting with 22 (Invalid argument)" in none.stderr
    no_mgs = host_cmd(
        "oss01",
        "mkfs.lustre",
        "--ost",
        "--fsname=scratch",
        "--index=0",
        "/dev/mapper/scratch-OST0000",
    )
    assert no_mgs.returncode == 22 and "Must specify --mgsnode" in no_mgs.stderr
    bad = host_cmd("oss01", "mkfs.lustre", "--ost", "--bogus", "/dev/mapper/scratch-OST0000")
    assert bad.returncode == 22 and "unrecognized option '--bogus'" in bad.stderr
    args = ["mkfs.lustre", "--ost", "--fsname=scratch", "--index=0", "--mgsnode=10.10.0.1@o2ib"]
    missing = host_cmd("oss01", *args, "/dev/mapper/nosuch")
    assert missing.returncode == 2
    mounted = host_cmd("oss01", *args, "--reformat", "/dev/mapper/scratch-OST0000")
    assert mounted.returncode == 17 and "is currently mounted" in mounted.stderr
    formatted = host_cmd("oss02", *args, "/dev/mapper/scratch-OST0001")
    assert formatted.returncode == 17  # mounted on oss02 too
    dry = host_cmd("oss01", *args, "--dryrun", "/dev/mapper/scratch-OST0000")
    assert dry.returncode == 0 and dry.stdout.endswith("exiting before disk write.\n")
    assert "Target:     scratch:OST0000" in dry.stdout
    name = host_cmd(
        "oss01",
        "mkfs.lustre",
        "--ost",
        "--fsname=way_too_long",
        "--index=0",
        "--mgsnode=10.10.0.1@o2ib",
        "/dev/mapper/scratch-OST0000",
    )
    assert name.returncode == 1 and "filesystem name must be 1-8 chars" in name.stderr
    host = host_cmd("oss01", *args[:-1], "--mgsnode=mgs.example", "/dev/mapper/scratch-OST0000")
    assert "Cannot resolve hostname 'mgs.example'" in host.stderr


def test_mount_and_umount_errors(built_rack, host_cmd):
    already = host_cmd(
        "oss01",
        "mount",
        "-t",
        "lustre",
        "/dev/mapper/scratch-OST0000",
        "/mnt/lustre/scratch-OST0000",
    )
    assert already.returncode == 17 and "already mounted" in already.stderr
    busy = host_cmd(
        "oss02",
        "mount",
        "-t",
        "lustre",
        "/dev/mapper/scratch-OST0000",
        "/mnt/lustre/scratch-OST0000",
    )
    assert busy.returncode == 16 and "Device or resource busy" in busy.stderr
    gone = host_cmd("oss01", "mount", "-t", "lustre", "/dev/mapper/nosuch", "/mnt/x")
    assert gone.returncode == 2
    other = host_cmd("oss01", "mount", "-t", "ext4", "/dev/sdb", "/mnt/x")
    assert other.returncode == 32
    created = host_cmd(
        None, "SMcli", "-n", "ssu01-a", "-S", "-c", 'delete volume ["scratch-OST0000"];'
    )
    assert created.returncode == 16  # in use
    assert host_cmd("oss01", "umount", "/mnt/lustre/scratch-OST0000").returncode == 0
    again = host_cmd("oss01", "umount", "/mnt/lustre/scratch-OST0000")
    assert again.returncode == 32
    assert again.stderr == "umount: /mnt/lustre/scratch-OST0000: not mounted.\n"
    assert not (built_rack / "hosts/oss01/proc/fs/lustre/obdfilter/scratch-OST0000").exists()
    # a volume that was never formatted
    host_cmd(None, "SMcli", "-n", "ssu01-a", "-S", "-c", 'delete volume ["scratch-OST0000"];')
    host_cmd(
        None,
        "SMcli",
        "-n",
        "ssu01-a",
        "-S",
        "-c",
        'create volume volumeGroup="ssu01-a-vg00" userLabel="blank";',
    )
    blank = host_cmd("oss01", "mount", "-t", "lustre", "/dev/mapper/blank", "/mnt/blank")
    assert blank.returncode == 19
    assert "has not been formatted with mkfs.lustre" in blank.stderr


def test_lctl(built_rack, host_cmd):
    assert host_cmd("oss01", "lctl", "list_nids").stdout == "10.10.0.11@o2ib\n"
    assert host_cmd("oss01", "lctl", "--version").stdout == "lctl 2.15.4\n"
    ping = host_cmd("oss01", "lctl", "ping", "10.10.0.1@o2ib")
    assert ping.returncode == 0 and ping.stdout == "12345-0@lo\n12345-10.10.0.1@o2ib\n"
    lost = host_cmd("oss01", "lctl", "ping", "10.99.0.1@o2ib")
    assert lost.returncode == 1
    assert lost.stderr == "failed to ping 10.99.0.1@o2ib: Input/output error\n"
    missing = host_cmd("oss01", "lctl", "get_param", "obdfilter.*.nosuch")
    assert missing.returncode == 2
    assert missing.stderr == (
        "error: get_param: param_path 'obdfilter/*/nosuch': No such file or directory\n"
    )
    values = host_cmd(
        "oss01", "lctl", "get_param", "-n", "obdfilter.scratch-OST0000.kbytestotal", "health_check"
    )
    assert values.stdout.splitlines()[1] == "healthy"
    both = host_cmd(
        "oss01",
        "lctl",
        "get_param",
        "obdfilter.scratch-OST0000.kbytestotal",
        "osd-ldiskfs.scratch-OST0000.kbytestotal",
        "health_check",
    )
    params = dict(parsers.parse_lctl_get_param(both.stdout))
    assert (
        params["obdfilter.scratch-OST0000.kbytestotal"]
        == params["osd-ldiskfs.scratch-OST0000.kbytestotal"]
    )
    brw = host_cmd("oss01", "lctl", "get_param", "osd-ldiskfs.*.brw_stats")
    assert len(parsers.parse_lctl_get_param(brw.stdout)) == 12


def test_lctl_set_param_like_the_real_one(built_rack, host_cmd):
    denied_text = fixture_text(
        "whamcloud-lustrefs-exporter/lctl-set_param.md_stats.permission-denied.stderr.txt"
    )
    denied = host_cmd("mds01", "lctl", "set_param", "mdt.*.kbytestotal=0")
    assert denied.returncode != 0
    # same message shape as the real tool's
    assert denied.stderr.split(":")[0:2] == denied_text.split(":")[0:2]
    assert denied.stderr.rstrip().endswith("Permission denied")
    ok_text = fixture_text("whamcloud-lustrefs-exporter/lctl-set_param.md_stats.ok.stdout.txt")
    cleared = host_cmd("mds01", "lctl", "set_param", "mdt.*.md_stats=0")
    assert cleared.returncode == 0
    assert cleared.stdout == ok_text.splitlines(keepends=True)[0].replace("fs-", "scratch-")
    tuned = host_cmd(
        "oss01", "lctl", "set_param", "obdfilter.scratch-OST0000.job_cleanup_interval=900"
    )
    assert tuned.stdout == "obdfilter.scratch-OST0000.job_cleanup_interval=900\n"
    read = host_cmd(
        "oss01", "lctl", "get_param", "-n", "obdfilter.scratch-OST0000.job_cleanup_interval"
    )
    assert read.stdout == "900\n"


def test_lnetctl_output_matches_the_real_yaml(built_rack, host_cmd):
    real = parsers.parse_yaml_block(
        fixture_text("whamcloud-lustrefs-exporter/lnetctl.net-show-v4.txt")
    )
    ours = parsers.parse_yaml_block(host_cmd("oss01", "lnetctl", "net", "show", "-v").stdout)
    assert [n["net type"] for n in ours["net"]] == ["lo", "o2ib"]
    ni = ours["net"][1]["local NI(s)"][0]
    assert ni["nid"] == "10.10.0.11@o2ib" and ni["status"] == "up"
    real_ni = real["net"][1]["local NI(s)"][0]
    assert set(ni["statistics"]) == set(real_ni["statistics"])
    assert set(ni["tunables"]) == set(real_ni["tunables"])
    stats = parsers.parse_yaml_block(host_cmd("oss01", "lnetctl", "stats", "show").stdout)
    real_stats = parsers.parse_yaml_block(
        fixture_text("whamcloud-lustrefs-exporter/lnetctl.stats-show.txt")
    )
    assert list(stats["statistics"]) == list(real_stats["statistics"])
    exists = host_cmd("oss01", "lnetctl", "net", "add", "--net", "o2ib", "--if", "ib0")
    assert exists.returncode != 0
    assert parsers.parse_yaml_block(exists.stderr) == {
        "add": [{"net": {"errno": -17, "descr": "cannot add network: File exists"}}]
    }


def test_ipmitool_power_and_sensors(built_rack, host_cmd):
    bmc = ["ipmitool", "-I", "lanplus", "-H", "10.20.0.11", "-U", "admin", "-P", "secret"]
    assert host_cmd(None, *bmc, "chassis", "power", "status").stdout == "Chassis Power is on\n"
    sdr = host_cmd(None, *bmc, "sdr").stdout.splitlines()
    assert all(len(line.split("|")) == 3 and line.split("|")[2].strip() == "ok" for line in sdr)
    assert any(line.startswith("CPU1 Temp") for line in sdr)
    sensor = host_cmd(None, *bmc, "sensor").stdout.splitlines()
    assert all(len(line.split("|")) == 10 for line in sensor)
    off = host_cmd(None, *bmc, "chassis", "power", "off")
    assert off.stdout == "Chassis Power Control: Down/Off\n"
    down = host_cmd("oss01", "lctl", "dl")
    assert down.returncode == 255 and "No route to host" in down.stderr
    assert not (built_rack / "hosts/oss01/proc/fs/lustre").exists()
    assert host_cmd(None, *bmc, "chassis", "power", "on").stdout == (
        "Chassis Power Control: Up/On\n"
    )
    assert host_cmd("oss01", "lctl", "dl").stdout == ""  # rebooted: nothing mounted
    unknown = host_cmd(
        None,
        "ipmitool",
        "-I",
        "lanplus",
        "-H",
        "10.99.9.9",
        "-U",
        "a",
        "-P",
        "b",
        "chassis",
        "power",
        "status",
    )
    assert unknown.returncode == 1
    assert unknown.stderr == "Error: Unable to establish IPMI v2 / RMCP+ session\n"


def test_smcli_errors(built_rack, host_cmd, tmp_path):
    syntax = host_cmd(None, "SMcli", "-n", "ssu01-a", "-c", "show everything;")
    assert syntax.returncode == 13 and "SMcli failed." in syntax.stderr
    semicolon = host_cmd(None, "SMcli", "-n", "ssu01-a", "-c", "show allVolumes")
    assert semicolon.returncode == 13
    unknown = host_cmd(None, "SMcli", "-n", "nosuch", "-c", "show allVolumes;")
    assert unknown.returncode == 9
    address = host_cmd(None, "SMcli", "192.0.2.1", "-c", "show allVolumes;")
    assert address.returncode == 4
    assert (
        host_cmd(None, "SMcli", "ssu01-a-a", "ssu01-a-b", "-S", "-c", "show allVolumes;").returncode
        == 0
    )
    assert host_cmd(None, "SMcli", "-n", "ssu01-a").returncode == 1
    assert (
        host_cmd(None, "SMcli", "-n", "ssu01-a", "-f", str(tmp_path / "none.scr")).returncode == 2
    )
    used = host_cmd(
        None,
        "SMcli",
        "-n",
        "ssu01-a",
        "-c",
        'create volumeGroup drives=(0,1,1 0,2,1 0,3,1 0,4,1 0,5,1) raidLevel=6 userLabel="again";',
    )
    assert used.returncode == 16 and "not unassigned" in used.stderr
    script = tmp_path / "show.scr"
    script.write_text('show volumeGroup ["ssu01-a-vg03"];\n')
    shown = host_cmd(None, "SMcli", "-n", "ssu01-a", "-S", "-f", str(script))
    assert shown.returncode == 0 and "VOLUME GROUP ssu01-a-vg03" in shown.stdout
    assert "Status:              Optimal" in shown.stdout
