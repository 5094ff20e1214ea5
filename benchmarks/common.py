"""What the benchmarks share: where the repository is, printing as they go, keeping their figures
for `make bench`'s table (``record``), and an InfluxDB of their own on a free loopback port
(started as deploy/services.sh starts one, in a temporary directory, and stopped after)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NoReturn

REPO = Path(__file__).resolve().parent.parent


def say(text: str = "") -> None:
    print(text, flush=True)


def run_as_main(main: Callable[[], int]) -> NoReturn:
    """A benchmark module's entry point. SIGTERM (how `make bench`'s harness stops a module it
    runs, when it is itself interrupted) ends it as Ctrl-C does: its ``finally`` blocks stop
    the InfluxDB, Redis and racks it started and remove its temporary directory, which the
    default SIGTERM left running."""
    signal.signal(signal.SIGTERM, _interrupted)
    sys.exit(main())


def _interrupted(*_signal) -> None:
    # Once: Ctrl-C reaches the module and, through the harness's own stop, a TERM right after;
    # the second must not break off the cleanup the first started.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


@dataclass(frozen=True)
class Figure:
    """One figure of a benchmark run: what was measured, its value and unit, the goal it is held
    to (None: none), and whether lower is better (times) or higher (rates)."""

    name: str
    value: float
    unit: str
    goal: float | None = None
    lower_is_better: bool = True

    def meets(self, value: float | None = None) -> bool | None:
        """Whether ``value`` (default: this figure's) meets the goal; None without a goal."""
        value = self.value if value is None else value
        if self.goal is None:
            return None
        return value <= self.goal if self.lower_is_better else value >= self.goal


def results_file(module: str | None = None) -> Path:
    """Where a benchmark module's figures go: .run/bench/<module>.json, the module being the one
    run with `python -m` unless named."""
    if module is None:
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module = spec.name if spec is not None else Path(sys.argv[0]).stem
    return REPO / ".run" / "bench" / f"{module}.json"


_files_started: set[Path] = set()


def record(
    name: str,
    value: float,
    unit: str,
    goal: float | None = None,
    lower_is_better: bool = True,
    *,
    path: Path | None = None,
) -> Figure:
    """Keep one figure for `make bench`'s table (benchmarks.harness), besides what the benchmark
    prints. The first figure of a run replaces the file of the previous run."""
    figure = Figure(name, float(value), unit, goal, lower_is_better)
    path = path or results_file()
    figures = read_figures(path) if path in _files_started else []
    _files_started.add(path)
    figures = [kept for kept in figures if kept.name != name] + [figure]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(kept) for kept in figures], indent=1) + "\n")
    return figure


def read_figures(path: Path) -> list[Figure]:
    """The figures a run kept with ``record``; none when it kept none."""
    if not path.exists():
        return []
    return [Figure(**fields) for fields in json.loads(path.read_text())]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class BenchInfluxDB:
    """An InfluxDB of our own, as deploy/services.sh starts one, in a temporary directory."""

    def __init__(self, work: Path) -> None:
        self.dir = work / "influxdb"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> BenchInfluxDB:
        self.dir.mkdir(parents=True)
        template = (REPO / "deploy" / "config" / "influxdb.conf.in").read_text()
        config = (
            template.replace("@DATA_DIR@", str(self.dir))
            .replace("@HTTP_PORT@", str(self.port))
            .replace("@RPC_PORT@", str(free_port()))
        )
        (self.dir / "influxdb.conf").write_text(config)
        log = open(self.dir / "influxdb.log", "wb")  # noqa: SIM115 - closed with the process
        self.process = subprocess.Popen(
            ["influxd", "-config", str(self.dir / "influxdb.conf")], stdout=log, stderr=log
        )
        try:  # stopped (or failed) while it starts: it does not outlive us
            deadline = time.time() + 30
            while time.time() < deadline:
                try:
                    with urllib.request.urlopen(f"{self.url}/ping", timeout=1):
                        return self
                except OSError:
                    time.sleep(0.2)
            raise RuntimeError("the benchmark's InfluxDB did not answer within 30 s")
        except BaseException:
            self.__exit__()
            raise

    def cpu_seconds(self) -> float:
        """User + system CPU seconds influxd has used so far (from /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def settle(self, quiet_share: float = 0.05, limit: float = 30.0) -> None:
        """Wait until influxd is nearly idle (its background snapshots and compactions of the
        last write done), so the next measurement does not pay for the previous one."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            before = self.cpu_seconds()
            time.sleep(0.5)
            if self.cpu_seconds() - before < 0.5 * quiet_share:
                return

    def query(self, statement: str) -> None:
        data = urllib.parse.urlencode({"q": statement}).encode()
        urllib.request.urlopen(f"{self.url}/query", data=data, timeout=30).read()

    def __exit__(self, *_exc) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class BenchRedis:
    """A Redis of our own on a free loopback port (the portal's shared cache), nothing kept."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> BenchRedis:
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", ""]
            + ["--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.__exit__()
        raise RuntimeError("the benchmark's Redis did not answer within 30 s")

    def __exit__(self, *_exc) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)


def django_world(work: Path, influxdb_url: str, timeout: int = 300) -> None:
    """Django on an SQLite database in ``work`` and the benchmark's InfluxDB, migrated."""
    os.environ.update(
        OSTARA_RUN_DIR=str(work / "run"),
        DATABASE_URL=f"sqlite:///{work / 'run' / 'bench.sqlite3'}",
        INFLUXDB_URL=influxdb_url,
        INFLUXDB_DATABASE="ostara",
        INFLUXDB_TIMEOUT_SECONDS=str(timeout),
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    os.environ.setdefault("OSTARA_LOG_LEVEL", "WARNING")
    (work / "run" / "static").mkdir(parents=True, exist_ok=True)
    import django

    django.setup()
    from django.core.management import call_command

    from portal import influxdb as influx

    call_command("migrate", verbosity=0)
    influx.ensure_database()
