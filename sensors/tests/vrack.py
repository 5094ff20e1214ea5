"""A virtual rack for the sensor's tests, driven through the simulator's own command line
(`python -m simulator add/tick/scenario/inject/serve`): an MDS pair and one reference SSU
(2 OSS, 2 arrays, 24 OSTs), formatted and mounted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def simulator(rack: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "simulator", *args, "--rack", str(rack)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(f"simulator {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def build_rack(rack: Path) -> Path:
    from benchmarks.specs import mds_spec, ssu_spec

    rack.parent.mkdir(parents=True, exist_ok=True)
    specs = {"mds.json": mds_spec(), "ssu.json": ssu_spec(1)}
    for name, spec in specs.items():
        path = rack.parent / name
        path.write_text(json.dumps(spec))
        subprocess.run(
            [sys.executable, "-m", "simulator", "add", "--rack", str(rack), str(path), "--build"],
            cwd=REPO,
            check=True,
            capture_output=True,
            timeout=120,
        )
    return rack


def status(rack: Path) -> dict:
    return json.loads(simulator(rack, "status", "--json"))


def host_config(
    rack: Path,
    host: str,
    path: Path,
    *,
    interval: float = 10,
    url: str = "http://127.0.0.1:9",
    database: str = "ostara",
    spool: Path | None = None,
    arrays: list[str] | None = None,
    ssu: str = "ssu001",
) -> Path:
    """The sensor.conf provisioning would write for one virtual host."""
    root = rack / "hosts" / host
    text = (
        "[sensor]\n"
        f"server = {host}\nroot = {root}\ninterval = {interval:g}\n"
        f"[tags]\nssu = {ssu}\npair = {ssu}\n"
        f"[influxdb]\nurl = {url}\ndatabase = {database}\ntimeout = 2\nbatch_size = 200\n"
        f"[spool]\ndir = {spool or path.parent / (host + '-spool')}\n"
        f"[bmc]\ncommand = {root / 'bin' / 'ipmitool'} sdr\n"
    )
    if arrays:
        text += f"[array]\nsmcli = {rack / 'bin' / 'SMcli'}\nnames = {' '.join(arrays)}\n"
    path.write_text(text)
    return path
