"""`python -m simulator inject --help` is enough to inject any row of the failure matrix, and
the commands find the demo's rack without `--rack`."""

from __future__ import annotations

import re
from pathlib import Path

from simulator import failures
from simulator.cli import INJECT_ROWS, build_parser
from simulator.tests.conftest import simulator_cli

REPO = Path(__file__).resolve().parents[2]


def test_inject_help_lists_every_row_with_the_options_it_needs():
    shown = simulator_cli("inject", "--help")
    assert shown.returncode == 0, shown.stderr
    help_text = shown.stdout
    assert set(INJECT_ROWS) == failures.KINDS
    for kind, (needs, _what) in INJECT_ROWS.items():
        assert re.search(rf"^  {re.escape(kind)} +{re.escape(needs)}$", help_text, re.M), kind
    assert re.search(r"^  drawer-failed +--array A --enclosure T --drawer D$", help_text, re.M)
    assert re.search(r"^  controller-failed +--array A --controller A\|B$", help_text, re.M)


def test_commands_default_to_the_demo_rack(monkeypatch):
    monkeypatch.delenv("OSTARA_VIRTUAL_RACK", raising=False)
    monkeypatch.delenv("OSTARA_RUN_DIR", raising=False)
    for command in (
        ["inject", "server-crash", "--server", "oss01"],
        ["status"],
        ["clear", "--all"],
        ["workload", "hot-oss"],
        ["replace-drive", "--array", "ssu01-a", "--drive", "1,1,1"],
    ):
        parsed = build_parser().parse_args(command)
        assert parsed.rack == REPO / ".run" / "demo" / "rack", command


def test_the_demo_rack_follows_the_demo_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("OSTARA_VIRTUAL_RACK", raising=False)
    monkeypatch.setenv("OSTARA_RUN_DIR", str(tmp_path))
    assert build_parser().parse_args(["status"]).rack == tmp_path / "rack"
    monkeypatch.setenv("OSTARA_VIRTUAL_RACK", str(tmp_path / "elsewhere"))
    assert build_parser().parse_args(["status"]).rack == tmp_path / "elsewhere"
