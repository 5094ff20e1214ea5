"""Nothing the portal hands to ansible is ever a template (issue 28, finding 1).

Extra variables, host variables and secrets reach ansible through ``run_playbook``; these tests
run a small playbook through it, for real (ansible-runner, ansible-playbook, a local host), with
values an attacker or an unlucky password could hold, and check on the host that every value
arrived byte for byte and that no lookup ran on the appliance.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from provisioning import runner

# A playbook that writes back, as JSON, every variable it was given, and copies one secret.
PLAYBOOK = """
- name: Write back what the caller gave
  hosts: all
  gather_facts: false
  tasks:
    - name: Every extra variable and host variable, as ansible sees them
      ansible.builtin.copy:
        content: "{{ {'extra': caller_extra, 'host': caller_host, 'rendered': joined} | to_json }}"
        dest: "{{ out_dir }}/{{ inventory_hostname }}.json"
        mode: "0600"
      vars:
        joined: "{{ caller_extra.text ~ '|' ~ caller_host.text }}"

    - name: The secret, copied verbatim from the file the runner wrote
      ansible.builtin.copy:
        src: "{{ ostara_secret_dir }}/bmc-{{ inventory_hostname }}"
        dest: "{{ out_dir }}/bmc-{{ inventory_hostname }}"
        mode: "0600"
      no_log: true
"""


def hostile(marker: Path) -> list[str]:
    """Texts ansible would render if it were given them as templates."""
    return [
        f"{{{{ lookup('pipe', 'touch {marker}') }}}}",
        "{{ lookup('pipe','id') }}{% raw %}",
        "{% raw %}",
        f"{{% set x = lookup('pipe', 'touch {marker}') %}}{{{{ x }}}}",
        "{# not a comment #} {{ 1 + 1 }}",
        "quotes ' \" backslash \\ dollar $HOME $(id) `id` spaces  and é ☃",
        "{{",
        "}}{%",
        # Texts YAML would otherwise read as numbers, booleans or nothing.
        "123",
        "on",
        "~",
    ]


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    (directory / "writeback.yml").write_text(PLAYBOOK)
    monkeypatch.setattr(runner, "PROJECT_DIR", directory)
    return directory


def test_extra_and_host_variables_and_secrets_arrive_verbatim_and_nothing_runs(project, tmp_path):
    marker = tmp_path / "the-lookup-ran"
    texts = hostile(marker)
    out = tmp_path / "host"
    out.mkdir()
    extra = {
        "text": texts[0],
        "all": texts,
        "nested": {"plans": [{"name": t, "n": 3, "on": True, "none": None} for t in texts]},
        # Keys are data too.
        "by_key": {t: i for i, t in enumerate(texts)},
    }
    host = {"text": texts[1], "all": list(reversed(texts)), "by_key": {t: t for t in texts}}
    inventory = {
        "all": {
            "hosts": {
                "h1": {
                    "ansible_connection": "local",
                    "ansible_python_interpreter": sys.executable,
                    "caller_host": host,
                }
            }
        }
    }
    secret = "{{ lookup('pipe','id') }}{% raw %} ' \" \\ $x `id` ☃"
    seen_in_private: list[str] = []

    def look_in_the_runner_directory(_line: str) -> None:
        # While the playbook runs: the secret is in no file of ansible-runner's directory.
        for path in (tmp_path / "work").glob("ansible-*/**/*"):
            if path.is_file() and secret in path.read_text(errors="replace"):
                seen_in_private.append(str(path))

    result = runner.run_playbook(
        "writeback.yml",
        inventory,
        {"caller_extra": extra, "out_dir": str(out)},
        secrets={"bmc-h1": secret + "\n"},
        work_dir=tmp_path / "work",
        on_output=look_in_the_runner_directory,
    )

    assert result.succeeded, result.summary()
    assert not marker.exists(), "a lookup ran on the appliance"
    written = json.loads((out / "h1.json").read_text())
    assert written == {
        "extra": extra,
        "host": host,
        "rendered": f"{texts[0]}|{texts[1]}",
    }
    assert (out / "bmc-h1").read_bytes() == (secret + "\n").encode()
    assert seen_in_private == []
    # Nothing of the run is left behind: neither ansible-runner's directory nor the secrets.
    assert list((tmp_path / "work").iterdir()) == []


def test_a_secret_name_that_could_leave_its_directory_is_refused(project, tmp_path):
    for name in ("../x", ".hidden", "a/b", ""):
        with pytest.raises(ValueError, match="secret name"):
            runner.run_playbook(
                "writeback.yml",
                {"all": {"hosts": {}}},
                secrets={name: "x"},
                work_dir=tmp_path / "work",
            )


def test_what_a_killed_run_left_is_removed_by_the_next_run_but_a_live_runs_is_kept(
    project, tmp_path
):
    """A worker killed mid-run (SIGKILL) cannot remove its secret files: the next run does, once
    the process that wrote them is gone, and leaves another live run's alone."""
    work = tmp_path / "work"
    work.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = work / f"secrets-{dead.pid}-abc123"
    left.mkdir(mode=0o700)
    (left / "bmc-oss01").write_text("password of a killed run\n")
    (work / f"ansible-{dead.pid}-def456").mkdir()
    live = work / f"secrets-{os.getpid()}-ghi789"  # this process: a run still going
    live.mkdir()

    result = runner.run_playbook(
        "writeback.yml", {"all": {"hosts": {}}}, {"out_dir": str(tmp_path)}, work_dir=work
    )

    assert result.rc == 0, result.summary()
    assert sorted(path.name for path in work.iterdir()) == [live.name]
