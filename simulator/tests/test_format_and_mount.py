"""A whole SSU (and its MDS pair) provisioned through the virtual commands only, as the
playbooks do: SMcli volume groups and volumes, mkfs.lustre with --servicenode for both
servers, mount -t lustre; the targets then show in lctl dl and in the stats tree."""

from __future__ import annotations

import json

from sensors import parsers
from simulator.tests.conftest import MDS_SPEC, simulator_cli, ssu_spec


def smcli_script(plan: dict, array: dict) -> str:
    trays = {e["id"]: number for number, e in enumerate(array["enclosures"])}
    level = {"8+2": 6, "10": 1}[plan["raid"]]
    commands = []
    for group in plan["volume_groups"]:
        if group["array"] != array["name"]:
            continue
        drives = " ".join(
            f"{trays[d['enclosure']]},{d['drawer']},{d['slot']}" for d in group["drives"]
        )
        commands.append(
            f'create volumeGroup drives=({drives}) raidLevel={level} userLabel="{group["name"]}"'
        )
        for target in sorted(
            (t for t in plan["targets"] if t["volume_group"] == group["name"]),
            key=lambda t: t["kind"] != "MGT",
        ):
            volume = target["device"].rsplit("/", 1)[1]
            capacity = " capacity=16 GB" if target["kind"] == "MGT" else ""
            commands.append(
                f'create volume volumeGroup="{group["name"]}" '
                f'userLabel="{volume}"{capacity} segmentSize={plan["segment_kib"]} '
                f"owner={target['controller'].lower()}"
            )
    return "; ".join(commands) + ";"


def nid_of(plan: dict, host: str) -> str:
    return next(s["nids"][0] for s in plan["servers"] if s["hostname"] == host)


def format_and_mount(host_cmd, plan: dict, mgsnodes: list[str]) -> None:
    for array in plan["arrays"]:
        result = host_cmd(None, "SMcli", "-n", array["name"], "-c", smcli_script(plan, array))
        assert result.returncode == 0, result.stderr
        assert "SMcli completed successfully." in result.stdout
    order = {"MGT": 0, "MDT": 1, "OST": 2}
    for target in sorted(plan["targets"], key=lambda t: order[t["kind"]]):
        primary, failover = target["primary"], target["failover"]
        args = [
            "mkfs.lustre",
            f"--servicenode={nid_of(plan, primary)}",
            f"--servicenode={nid_of(plan, failover)}",
        ]
        if target["kind"] == "MGT":
            args.append("--mgs")
        else:
            args += [
                f"--{target['kind'].lower()}",
                f"--fsname={plan['filesystem']}",
                f"--index={target['index']}",
            ]
            args += [f"--mgsnode={nid}" for nid in mgsnodes]
        result = host_cmd(primary, *args, target["device"])
        assert result.returncode == 0, result.stdout + result.stderr
        svname = "MGS" if target["kind"] == "MGT" else target["label"].replace("-", ":", 1)
        assert f"Target:     {svname}" in result.stdout
        assert f"failover.node={nid_of(plan, primary)}:{nid_of(plan, failover)}" in result.stdout
        result = host_cmd(primary, "mount", "-t", "lustre", target["device"], target["mountpoint"])
        assert result.returncode == 0, result.stderr


def test_format_and_mount_a_whole_ssu_through_the_commands(
    rack_dir, host_cmd, tmp_path, mds_plan, ssu_plan
):
    for spec in (MDS_SPEC, ssu_spec(1)):
        path = tmp_path / f"{spec['ssu']}.json"
        path.write_text(json.dumps(spec))
        result = simulator_cli("add", "--rack", str(rack_dir), str(path))
        assert result.returncode == 0, result.stderr
    mgsnodes = [nid_of(mds_plan, "mds01"), nid_of(mds_plan, "mds02")]
    format_and_mount(host_cmd, mds_plan, mgsnodes)
    format_and_mount(host_cmd, ssu_plan, mgsnodes)

    for host in ("oss01", "oss02"):
        mine = sorted(t["label"] for t in ssu_plan["targets"] if t["primary"] == host)
        assert len(mine) == 12
        devices = host_cmd(host, "lctl", "dl").stdout.splitlines()
        obdfilters = sorted(
            line.split()[3] for line in devices if line.split()[1:3] == ["UP", "obdfilter"]
        )
        assert obdfilters == mine
        stats = host_cmd(host, "lctl", "get_param", "obdfilter.*.stats")
        assert stats.returncode == 0
        names = [name for name, _ in parsers.parse_lctl_get_param(stats.stdout)]
        assert names == [f"obdfilter.{label}.stats" for label in mine]
        tree = rack_dir / "hosts" / host / "proc/fs/lustre/obdfilter"
        assert sorted(p.name for p in tree.iterdir()) == mine
        for label in mine:
            parsed = parsers.parse_stats((tree / label / "stats").read_text())
            assert parsed["start_time"] is not None
            total = rack_dir / "hosts" / host / "sys/fs/lustre/obdfilter" / label / "kbytestotal"
            assert int(total.read_text()) == int(8 * 4e12 * 0.927 / 1024)
        mounts = host_cmd(host, "mount", "-t", "lustre").stdout
        assert mounts.count(" type lustre ") == 12

    tunefs = host_cmd("oss02", "tunefs.lustre", "--dryrun", "/dev/mapper/scratch-OST0000")
    assert tunefs.returncode == 0
    assert "failover.node=10.10.0.11@o2ib:10.10.0.12@o2ib" in tunefs.stdout
    assert "mgsnode=10.10.0.1@o2ib:10.10.0.2@o2ib" in tunefs.stdout
    mdt = host_cmd("mds01", "lctl", "get_param", "-n", "mdt.scratch-MDT0000.recovery_status")
    assert mdt.stdout == "status: INACTIVE\n"
    status = json.loads(simulator_cli("status", "--rack", str(rack_dir), "--json").stdout)
    assert sum(1 for t in status["targets"].values() if t["mounted_on"]) == 26
