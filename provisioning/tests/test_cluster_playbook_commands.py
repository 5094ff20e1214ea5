"""cluster.yml runs a console act's Pacemaker commands in one task (library/ostara_commands.py):
in order, each argv exactly as given (no shell: a name holding `$(id)` or `;` is one word), and
nothing after the first that fails, whose message names it.

The real playbook through the real runner on a local host; Pacemaker's tools cannot run here
without a cluster, so `crm_resource`, `crm_attribute` and `crm_mon` are scripts first on PATH
(through `ostara_env`, as on the virtual rack) that record their arguments."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from provisioning import runner

TOOL = """#!{python}
import json, sys
with open({log!r}, "a") as log:
    log.write(json.dumps(sys.argv) + "\\n")
if sys.argv[0].endswith("crm_mon"):
    print("<crm_mon/>")
sys.exit(3 if "refuse-me" in sys.argv else 0)
"""


@pytest.fixture
def tools(tmp_path) -> tuple[Path, Path]:
    """A bin directory with recording Pacemaker tools, and the log they append to."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.jsonl"
    bin_dir.mkdir()
    for name in ("crm_resource", "crm_attribute", "crm_mon"):
        path = bin_dir / name
        path.write_text(TOOL.format(python=sys.executable, log=str(log)))
        path.chmod(0o755)
    return bin_dir, log


def act(bin_dir: Path, tmp_path: Path, commands: list, after: list) -> tuple:
    """The playbook's result and its output."""
    inventory = {
        "all": {
            "hosts": {
                "oss01": {
                    "ansible_connection": "local",
                    "ansible_python_interpreter": sys.executable,
                    "ostara_env": {"PATH": f"{bin_dir}:{os.environ['PATH']}"},
                }
            }
        }
    }
    cluster = {"host": "oss01", "commands": commands, "expect": {}, "after": after}
    output: list[str] = []
    result = runner.run_playbook(
        "cluster.yml",
        inventory,
        {"ostara_cluster": cluster},
        work_dir=tmp_path / "work",
        on_output=output.append,
    )
    return result, "\n".join(output)


def calls(log: Path) -> list[list[str]]:
    """Each recorded command, its program by name."""
    recorded = [json.loads(line) for line in log.read_text().splitlines()]
    return [[Path(argv[0]).name, *argv[1:]] for argv in recorded]


def test_the_commands_run_in_order_each_word_as_given(tools, tmp_path):
    bin_dir, log = tools
    odd = "scratch-OST0000;$(touch pwned) `id` a b"
    commands = [
        ["crm_attribute", "--node", "oss02", "--name", "standby", "--update", "off"],
        ["crm_resource", "--cleanup", "--resource", odd],
        ["crm_resource", "--move", "--resource", odd, "--node", "oss02"],
    ]
    after = [["crm_resource", "--clear", "--resource", odd]]
    result, output = act(bin_dir, tmp_path, commands, after)
    assert result.succeeded, result.summary()
    assert calls(log) == [*commands, *after, ["crm_mon", "-1", "--output-as=xml"]]
    assert not (Path.cwd() / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_the_first_command_that_fails_stops_the_act_and_is_named(tools, tmp_path):
    bin_dir, log = tools
    commands = [
        ["crm_resource", "--cleanup", "--resource", "scratch-OST0000"],
        ["crm_resource", "--move", "--resource", "refuse-me", "--node", "oss02"],
        ["crm_resource", "--move", "--resource", "scratch-OST0002", "--node", "oss02"],
    ]
    result, output = act(
        bin_dir, tmp_path, commands, [["crm_resource", "--clear", "--resource", "x"]]
    )
    assert not result.succeeded
    assert calls(log) == commands[:2]
    assert "crm_resource --move --resource refuse-me --node oss02 exited with 3" in output


def test_a_name_that_reads_as_an_option_runs_nothing(tools, tmp_path):
    bin_dir, log = tools
    commands = [
        ["crm_resource", "--cleanup", "--resource", "scratch-OST0000"],
        ["crm_resource", "--move", "--resource", "--force", "--node", "oss02"],
    ]
    result, output = act(bin_dir, tmp_path, commands, [])
    assert not result.succeeded
    assert not log.exists()
    assert "a name starts with '-'" in output
