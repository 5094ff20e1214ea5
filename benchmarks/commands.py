"""Benchmark of the virtual rack's commands: `python -m benchmarks.commands` (`make bench`).

On a demo-sized rack (the MDS pair and one SSU: 4 servers, 3 arrays, as `make demo` builds), in
the same run, with each command a new Python process ("before": the wrappers as they were) and
through the rack's resident dispatcher ("after", simulator/dispatch.py):

1. CPU per call of the commands the sensors run (`lctl get_param`, `SMcli ... show allDrives`,
   `ipmitool sensor`, `multipath -ll`, `corosync-cfgtool -s`);
2. CPU of one demo rack round: every server's sensor collecting once (its Lustre files plus its
   commands: SMcli per array, ipmitool in band and the partner's BMC, the partner's PDU,
   multipath, corosync-cfgtool, lnetctl), with its wall time;
3. the same round with the real hardware's latency (`serve --latency real`): the wall time
   grows, the CPU does not.

CPU = user + system seconds of the whole process tree: this process (the sensor's own work),
its waited-for children (wrappers, clients, new Pythons) and the dispatcher with the command
children it forked. Benchmarks measure; they never fail on a number.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.common import record, run_as_main
from benchmarks.rack import build
from benchmarks.specs import mds_spec, ssu_spec
from provisioning.planner import make_plan
from sensors.collect import Collector
from sensors.config import SensorConfig
from simulator import dispatch, latency
from simulator.rack import Rack

TICK = os.sysconf("SC_CLK_TCK")


def _tree_cpu(dispatcher: subprocess.Popen | None) -> float:
    """CPU seconds so far of this process, its waited-for children and the dispatcher's tree."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    if dispatcher is not None and dispatcher.poll() is None:
        fields = Path(f"/proc/{dispatcher.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(value) for value in fields[11:15]) / TICK  # utime stime cutime cstime
    return total


def sensor_configs(root: Path, plans: list[dict]) -> list[SensorConfig]:
    """Each server's sensor as the rack tests configure it (portal/health/tests), reading its
    pair's arrays through SMcli as a server's sensor did before the REST collector."""
    from portal.health.tests.virtual_rack import server_sensor_configs

    configs = server_sensor_configs(root, plans, timeout=30.0, bmc_timeout=30.0)
    for config, (plan, _server) in zip(
        configs, [(p, s) for p in plans for s in p["servers"]], strict=True
    ):
        config.array_smcli = str(Path(config.root) / "bin" / "SMcli")
        config.array_names = tuple(array["name"] for array in plan["arrays"])
    return configs


def command_cpu(root: Path, dispatcher: subprocess.Popen | None, calls: int) -> dict[str, float]:
    host = root / "hosts" / "oss001" / "bin"
    commands = {
        "lctl get_param": [host / "lctl", "get_param", "-n", "version"],
        "SMcli show allDrives": [host / "SMcli", "-n", "ssu001-a", "-S", "-c", "show allDrives;"],
        "ipmitool sensor": [host / "ipmitool", "sensor"],
        "multipath -ll": [host / "multipath", "-ll"],
        "corosync-cfgtool -s": [host / "corosync-cfgtool", "-s"],
    }
    result = {}
    for label, argv in commands.items():
        before = _tree_cpu(dispatcher)
        for _ in range(calls):
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        result[label] = (_tree_cpu(dispatcher) - before) / calls
    return result


def round_cost(
    configs: list[SensorConfig], dispatcher: subprocess.Popen | None, rounds: int
) -> tuple[float, float, int]:
    """Median CPU and wall seconds of one round of every server's sensor, and its points."""
    samples = []
    points = 0
    for number in range(rounds):
        # A new collector each round: every collector is due, as in a sensor's first round.
        collectors = [Collector(config) for config in configs]
        cpu, wall = _tree_cpu(dispatcher), time.monotonic()
        points = sum(len(c.collect((number + 1) * 10_000).lines) for c in collectors)
        samples.append((_tree_cpu(dispatcher) - cpu, time.monotonic() - wall))
    cpus, walls = sorted(s[0] for s in samples), sorted(s[1] for s in samples)
    return cpus[len(cpus) // 2], walls[len(walls) // 2], points


def measure(root: Path, configs: list[SensorConfig], *, direct: bool, args) -> dict:
    with Rack.open(root) as rack:
        rack.install_commands(direct=direct)
    dispatcher = None if direct else dispatch.start(root)
    try:
        per_call = command_cpu(root, dispatcher, args.calls)
        cpu, wall, points = round_cost(configs, dispatcher, args.rounds)
        latency.save(root, latency.REAL)
        try:
            real_cpu, real_wall, _ = round_cost(configs, dispatcher, 1)
        finally:
            latency.save(root, {})
    finally:
        dispatch.stop(dispatcher)
    return {
        "per_call": per_call,
        "round": (cpu, wall, points),
        "real_latency_round": (real_cpu, real_wall),
    }


def report(before: dict, after: dict, servers: int, arrays: int) -> None:
    print(f"  demo rack: {servers} servers, {arrays} arrays; CPU = user + system, process tree")
    print(f"  {'':34s} {'new Python per call':>20s} {'dispatcher':>12s} {'ratio':>7s}")
    for label, old in before["per_call"].items():
        new = after["per_call"][label]
        print(
            f"  CPU per call: {label:20s} {old * 1000:17.1f} ms {new * 1000:9.1f} ms"
            f" {old / max(new, 1e-9):6.1f}x"
        )
    (old_cpu, old_wall, points), (new_cpu, new_wall, _) = before["round"], after["round"]
    print(
        f"  CPU of one demo rack round ({points} points)"
        f" {old_cpu:10.3f} s {new_cpu:10.3f} s {old_cpu / max(new_cpu, 1e-9):6.1f}x"
    )
    print(f"  wall of that round                  {old_wall:10.3f} s {new_wall:10.3f} s")
    (old_cpu, old_wall), (new_cpu, new_wall) = (
        before["real_latency_round"],
        after["real_latency_round"],
    )
    print("  the same round with real hardware's latency (serve --latency real):")
    print(f"    CPU                               {old_cpu:10.3f} s {new_cpu:10.3f} s")
    print(f"    wall                              {old_wall:10.3f} s {new_wall:10.3f} s")
    record("demo rack round through the dispatcher: CPU", after["round"][0], "s")
    record("demo rack round through the dispatcher: wall", after["round"][1], "s")
    record("demo rack round, real hardware's latency: wall", new_wall, "s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.commands", description=__doc__)
    parser.add_argument("--calls", type=int, default=20, help="calls per command measured")
    parser.add_argument("--rounds", type=int, default=3, help="rounds measured (median)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="ostara-bench-commands-"))
    root = work / "rack"
    try:
        build(root, 1)
        plans = [make_plan(mds_spec()), make_plan(ssu_spec(1))]
        configs = sensor_configs(root, plans)
        before = measure(root, configs, direct=True, args=args)
        after = measure(root, configs, direct=False, args=args)
        arrays = sum(len(plan["arrays"]) for plan in plans)
        report(before, after, len(configs), arrays)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    run_as_main(main)
