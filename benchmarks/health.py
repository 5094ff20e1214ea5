"""Benchmark of the health engine and the dashboard on a large virtual rack:
`python -m benchmarks.health [--ssus 100]` (`make bench`).

Builds an MDS pair and N reference SSUs (default 100: 202 servers, 200 arrays, 2,400 OSTs,
24,000 drives) on the virtual rack and in the inventory, runs the product's sensor collectors
over every server's tree for two rounds (the balanced workload) into an InfluxDB of its own,
then measures:

- one health evaluation (read the newest points, gather the facts, run the rules, store the
  colours), first (creating every status row) and steady (nothing changed);
- one round of alert evaluation with the default rules and 50 threshold rules
  (``benchmarks.alerts``);
- the dashboard's response times as a logged-in user sees them: the page, its 5-second refresh,
  /api/v1/health/, and the chart endpoints.

It starts its own InfluxDB (a free port, a temporary directory) and an SQLite database, and
removes both afterwards. It measures; it never fails on a number.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.alerts import bench_alerts
from benchmarks.common import BenchInfluxDB, django_world, say
from benchmarks.rack import build
from benchmarks.specs import mds_spec, ssu_spec
from portal import metric_queries
from sensors.collect import Collector, sensor_fields
from sensors.config import SensorConfig
from simulator.procfs import TreeWriter
from simulator.rack import Rack


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def build_world(work: Path, ssus: int) -> Path:
    from portal.health.tests.conftest import provisioned
    from portal.inventory.services import save_plan

    rack_dir = work / "rack"
    seconds = build(rack_dir, ssus)
    say(f"  virtual rack built (simulator fast path): {seconds:.1f} s")
    started = time.perf_counter()
    pairs = [save_plan(mds_spec())]
    for number in range(1, ssus + 1):
        pairs.append(save_plan(ssu_spec(number)))
    provisioned(pairs)
    say(f"  inventory saved from the same plans: {time.perf_counter() - started:.1f} s")
    return rack_dir


class SensorRounds:
    """Rounds of the sensors' own collectors over every server's tree, written to InfluxDB.

    Without the BMC collector: each virtual `ipmitool` reads the whole rack's state, which
    takes seconds on a 100-SSU rack; the BMC adds ten series per server, few beside the arrays.
    """

    def __init__(self, rack_dir: Path) -> None:
        self.rack_dir = rack_dir
        self.writer = TreeWriter()
        self.rounds = 0
        with Rack.open(rack_dir, writer=self.writer) as rack:
            rack.set_scenario("balanced")

    def __call__(self, quiet: bool = False) -> None:
        from portal import influx
        from portal.health.tests.virtual_rack import RackArraySource

        rack_dir = self.rack_dir
        with Rack.open(rack_dir, writer=self.writer) as rack:
            rack.advance(by=10)
            rack.render()
            state = rack.state
        tick = int(time.time() * 1000)

        def collect(host: str) -> list[str]:
            server = state["servers"][host]
            pair = state["pairs"][server["pair"]]
            config = SensorConfig(
                server=host,
                root=str(rack_dir / "hosts" / host),
                role=pair["role"],
                tags={"ssu": pair["name"], "pair": pair["name"]},
            )
            source = RackArraySource(rack_dir, pair["arrays"], state=state)
            rnd = Collector(config, array_source=source).collect(tick)
            rnd.add("sensor", {}, sensor_fields(rnd, 0, 0, 0))
            return rnd.lines

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=4) as pool:
            batches = list(pool.map(collect, sorted(state["servers"])))
        lines = [line for batch in batches for line in batch]
        for start in range(0, len(lines), 5000):
            influx.write_lines(lines[start : start + 5000], precision="ms")
        self.rounds += 1
        if not quiet:
            say(
                f"  sensor round {self.rounds}: {len(lines):,} points from {len(batches)} "
                f"servers in {time.perf_counter() - started:.1f} s"
            )


def bench_evaluation(repeat: int, sensor_round: SensorRounds) -> None:
    from portal import influx
    from portal.health import rules
    from portal.health.models import HealthSettings
    from portal.health.services import evaluation

    thresholds = HealthSettings.load().thresholds()
    say("InfluxDB statements behind the facts (each alone):")
    silence = thresholds.sensor_silence_seconds
    statements = {
        **metric_queries.metric_statements(silence),
        **metric_queries.signal_statements(silence),
    }
    for name, statement in statements.items():
        (points,), seconds = timed(influx.query_tagged, [statement])
        say(f"  {name:14} {seconds:6.2f} s  {len(points):7,} points")
    say("Health evaluation (read InfluxDB, gather facts, rules, store):")
    for label in ["first (creates every status row)"] + ["steady"] * repeat:
        sensor_round(quiet=True)  # fresh points, as the sensors keep sending
        metrics, read_s = timed(evaluation.read_metrics, thresholds.sensor_silence_seconds)
        facts, gather_s = timed(evaluation.gather_facts, None, thresholds, metrics)
        trees, rules_s = timed(rules.evaluate, facts)
        changes, store_s = timed(evaluation.store, trees)
        objects = sum(1 for tree in trees for _ in tree.walk())
        total = read_s + gather_s + rules_s + store_s
        say(
            f"  {label:34} {total:6.2f} s = InfluxDB {read_s:.2f} + facts {gather_s:.2f} + "
            f"rules {rules_s:.3f} + store {store_s:.2f}; {objects:,} objects, "
            f"{len(changes)} changes"
        )
    for tree in evaluation.cached_trees():
        say(f"  filesystem {tree['name']}: {tree['status']} {'; '.join(tree['reasons'][:3])}")


def evaluate_after(sensor_round: SensorRounds) -> None:
    from portal.health.services.evaluation import evaluate_and_store

    sensor_round(quiet=True)
    evaluate_and_store()


def bench_pages(repeat: int) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_superuser("bench", password="bench-pw-123!")
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    pages = [
        ("dashboard page /", "/"),
        ("dashboard refresh /health/overview/", "/health/overview/"),
        ("GET /api/v1/health/", "/api/v1/health/"),
        ("chart: throughput, 1 h", "/health/charts/throughput/?kind=filesystem&name=scratch"),
        ("chart: capacity per OST", "/health/charts/capacity/?kind=filesystem&name=scratch"),
        ("chart: OSS share, 1 h", "/health/charts/oss-share/?kind=filesystem&name=scratch"),
        ("SSU page", "/health/ssus/ssu001/"),
        ("server page", "/health/servers/oss001/"),
        ("target page", "/health/targets/scratch-OST0000/"),
    ]
    say(f"Dashboard response times, {repeat} requests each (median / max):")
    for label, url in pages:
        samples = []
        size = 0
        for _ in range(repeat):
            response, seconds = timed(client.get, url)
            if response.status_code != 200:
                say(f"  {label:38} HTTP {response.status_code}")
                break
            size = len(response.content)
            samples.append(seconds)
        if samples:
            say(
                f"  {label:38} {statistics.median(samples) * 1000:7.0f} ms / "
                f"{max(samples) * 1000:7.0f} ms  ({size / 1024:.0f} KiB)"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.health", description=__doc__)
    parser.add_argument("--ssus", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="ostara-health-bench-"))
    influxdb = BenchInfluxDB(work).__enter__()
    influxdb_url = influxdb.url
    try:
        django_world(work, influxdb_url)
        from portal import influx

        say(
            f"Health benchmark: {args.ssus} SSUs ({2 * args.ssus + 2} servers, "
            f"{24 * args.ssus:,} OSTs), InfluxDB {influx.ping()} at {influxdb_url}"
        )
        rack_dir = build_world(work, args.ssus)
        sensor_round = SensorRounds(rack_dir)
        sensor_round()
        sensor_round()
        bench_evaluation(args.repeat, sensor_round)
        bench_alerts(args.repeat, lambda: evaluate_after(sensor_round))
        bench_pages(args.repeat)
    finally:
        influxdb.__exit__()
        if args.keep:
            say(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
