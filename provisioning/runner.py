"""The one place that runs ansible: ansible-runner with the project's playbooks.

Each run gets its own private data directory in the standard layout (``project/`` pointing at
``provisioning/ansible/project``, ``inventory/``, ``env/``), streams ansible's output line by
line to a callback while the playbook runs, and is removed afterwards.

Nothing the portal hands to ansible is ever a template (issue 28): ansible-core renders extra
variables and inventory variables as Jinja, so a BMC password of ``{{ lookup('pipe','id') }}``
would run on the appliance. The extra variables and the inventory are therefore written as YAML
documents tagged ``!unsafe``: ansible then holds every string in them (keys too) as plain data
however a playbook combines it; callers cannot forget it because it happens here, for every value.

Secrets (BMC passwords) do not travel as variables at all: ``secrets`` are written, one 0600 file
each, into a 0700 directory of their own beside the run (``ostara_secret_dir``), which playbooks
copy to the hosts with ``copy src=`` (verbatim, never rendered), and which is removed when the
playbook ends, however it ends.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import ansible_runner
import yaml

PROJECT_DIR = Path(__file__).resolve().parent / "ansible" / "project"
# The variable naming the directory of the run's secret files; the runner's alone.
SECRET_DIR_VARIABLE = "ostara_secret_dir"
# A secret's file name, as the fence-secret helper on the servers accepts it.
SECRET_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")


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
    secrets: dict[str, str | bytes] | None = None,
) -> PlaybookResult:
    """Run ``playbook`` (a file name in the project) against ``inventory`` (ansible's JSON form).

    Every string of ``inventory`` and ``extravars`` reaches the playbook as data, never as a
    template. ``secrets`` maps a file name to its exact content (text, or bytes such as the
    Corosync authkey); the playbook finds the files in
    the directory ``ostara_secret_dir`` for as long as it runs. ``on_output`` receives ansible's
    own output as it comes. ``cancel`` is polled by ansible-runner; returning True stops the run.
    """
    if not (PROJECT_DIR / playbook).is_file():
        raise FileNotFoundError(f"no playbook {playbook} in {PROJECT_DIR}")
    for name in secrets or {}:
        if not SECRET_NAME.fullmatch(name):
            raise ValueError(f"bad secret name {name!r}: letters, digits, '.', '_' and '-' only")
    if SECRET_DIR_VARIABLE in (extravars or {}):
        raise ValueError(f"{SECRET_DIR_VARIABLE} is set by the runner, not by its callers")
    work_dir.mkdir(parents=True, exist_ok=True)
    remove_left_by_dead_runs(work_dir)
    # The running process's pid in the names: what a killed worker left is known as such.
    private = Path(tempfile.mkdtemp(prefix=f"ansible-{os.getpid()}-", dir=work_dir))
    secret_dir = Path(tempfile.mkdtemp(prefix=f"secrets-{os.getpid()}-", dir=work_dir))  # 0700
    try:
        os.chmod(private, 0o700)
        for name, text in (secrets or {}).items():
            _write_private(secret_dir / name, text)
        (private / "project").symlink_to(PROJECT_DIR)
        (private / "inventory").mkdir()
        (private / "inventory" / "hosts.yml").write_text(as_data_only(inventory))
        (private / "env").mkdir()
        # ansible-runner passes this file as `-e @env/extravars`, read by ansible's YAML loader.
        _write_private(
            private / "env" / "extravars",
            as_data_only({**(extravars or {}), SECRET_DIR_VARIABLE: str(secret_dir)}),
        )

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
        with signals_cancel_the_run() as signalled:
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
                cancel_callback=lambda: signalled() or bool(cancel and cancel()),
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
        shutil.rmtree(secret_dir, ignore_errors=True)


@contextlib.contextmanager
def signals_cancel_the_run() -> Iterator[Callable[[], bool]]:
    """While a playbook runs in the main thread, SIGINT and SIGTERM cancel it (ansible-runner
    stops its process, which runs in a session of its own and would outlive us), then take
    their usual course once the run has returned: a Ctrl-C still interrupts the caller.

    Without a cancel callback ansible-runner installs handlers of its own that only cancel the
    run and are never taken back: a process that ran one playbook ignored Ctrl-C and SIGTERM
    for the rest of its life (``make test`` could not be stopped)."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    def note(signum: int, _frame: object) -> None:
        caught.append(signum)

    for signum in previous:
        signal.signal(signum, note)
    try:
        yield lambda: bool(caught)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if caught:
        signal.raise_signal(caught[0])


def remove_left_by_dead_runs(work_dir: Path) -> list[Path]:
    """Remove the run and secret directories that a process killed mid-run (a worker's SIGKILL)
    could not remove: those whose process is gone. Another live run's are left alone."""
    removed = []
    for directory in work_dir.glob("*-*-*"):
        kind, _, rest = directory.name.partition("-")
        pid = rest.partition("-")[0]
        if kind not in ("ansible", "secrets") or not pid.isdigit() or _alive(int(pid)):
            continue
        shutil.rmtree(directory, ignore_errors=True)
        removed.append(directory)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def as_data_only(value: object) -> str:
    """``value`` (JSON-shaped: dicts, lists, strings, numbers, booleans, None) as YAML that
    ansible reads as data only: the document is tagged ``!unsafe`` (ansible-core's mark for
    what it must never render), which its loader carries to every string inside, keys included.

    The tag is on the document, not on each string: ansible resolves a tagged scalar as if it
    were plain, so a password "123" or "on" tagged alone would arrive as a number or a boolean.
    """
    return "--- !unsafe\n" + yaml.safe_dump(
        value, allow_unicode=True, sort_keys=False, width=1 << 30
    )


def _write_private(path: Path, content: str | bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
