"""The one place that runs ansible: ansible-runner with the project's playbooks.

Each run gets its own private data directory in the standard layout (``project/`` pointing at
``provisioning/ansible/project``, ``inventory/``, ``env/``), streams ansible's output line by
line to a callback while the playbook runs, and is removed afterwards: ansible-runner keeps
the extra variables (BMC passwords among them) and the whole environment in there.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import ansible_runner

PROJECT_DIR = Path(__file__).resolve().parent / "ansible" / "project"


@dataclass
class PlaybookResult:
    playbook: str
    status: str  # successful, failed, timeout, canceled
    rc: int
    changed: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    unreachable: dict[str, int] = field(default_factory=dict)
    ok: dict[str, int] = field(default_factory=dict)
    # Facts the playbook set with set_fact, per host (the last value of each).
    facts: dict[str, dict] = field(default_factory=dict)

    @property
    def succeeded(self) -> bool:
        return self.status == "successful" and self.rc == 0

    @property
    def changed_total(self) -> int:
        return sum(self.changed.values())

    def summary(self) -> str:
        if self.succeeded:
            return f"{self.playbook}: ok on {len(self.ok)} host(s), {self.changed_total} change(s)"
        problems = [f"{host} unreachable" for host in self.unreachable] + [
            f"{host} failed" for host in self.failed
        ]
        detail = ", ".join(problems) or f"rc {self.rc}"
        return f"{self.playbook}: {self.status} ({detail})"


def run_playbook(
    playbook: str,
    inventory: dict,
    extravars: dict | None = None,
    *,
    work_dir: Path,
    on_output: Callable[[str], None] = lambda line: None,
    timeout_seconds: int | None = None,
    cancel: Callable[[], bool] | None = None,
) -> PlaybookResult:
    """Run ``playbook`` (a file name in the project) against ``inventory`` (ansible's JSON form).

    ``on_output`` receives ansible's own output as it comes. ``cancel`` is polled by
    ansible-runner; returning True stops the run.
    """
    if not (PROJECT_DIR / playbook).is_file():
        raise FileNotFoundError(f"no playbook {playbook} in {PROJECT_DIR}")
    work_dir.mkdir(parents=True, exist_ok=True)
    private = Path(tempfile.mkdtemp(prefix="ansible-", dir=work_dir))
    os.chmod(private, 0o700)
    try:
        (private / "project").symlink_to(PROJECT_DIR)
        (private / "inventory").mkdir()
        (private / "inventory" / "hosts.json").write_text(json.dumps(inventory))
        (private / "env").mkdir()
        _write_private(private / "env" / "extravars", json.dumps(extravars or {}))

        facts: dict[str, dict] = {}

        def event_handler(event: dict) -> bool:
            if event.get("stdout"):
                on_output(event["stdout"])
            data = event.get("event_data", {})
            if event.get("event") == "runner_on_ok" and data.get("task_action", "").endswith(
                "set_fact"
            ):
                facts.setdefault(data.get("host", ""), {}).update(
                    data.get("res", {}).get("ansible_facts", {})
                )
            return True

        # ansible-playbook and friends live next to this interpreter, in the virtualenv.
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        runner = ansible_runner.run(
            private_data_dir=str(private),
            playbook=playbook,
            envvars={
                "PATH": path,
                "ANSIBLE_NOCOLOR": "1",
                "ANSIBLE_FORCE_COLOR": "0",
                "ANSIBLE_HOST_KEY_CHECKING": "False",
                "ANSIBLE_RETRY_FILES_ENABLED": "0",
            },
            settings={
                "suppress_ansible_output": True,
                **({"job_timeout": timeout_seconds} if timeout_seconds else {}),
            },
            event_handler=event_handler,
            cancel_callback=cancel,
            quiet=True,
        )
        stats = runner.stats or {}
        return PlaybookResult(
            playbook=playbook,
            status=runner.status,
            rc=runner.rc,
            changed=dict(stats.get("changed", {})),
            failed=dict(stats.get("failures", {})),
            unreachable=dict(stats.get("dark", {})),
            ok=dict(stats.get("ok", {})),
            facts=facts,
        )
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
