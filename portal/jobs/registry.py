"""The job kinds the portal knows: kind -> ordered steps -> the functions that do them.

The jobs app owns the registry and knows no kind itself; each app that defines a long action
registers it from a module its ``AppConfig.ready`` imports, e.g. in ``portal/inventory``::

    register(
        "provision",
        "Provision server pairs",
        [StepSpec("preflight", "Preflight", run_playbook_step), ...],
        context=ProvisioningContext.for_job,  # optional: computed once per run of a job
    )

A step's action is ``action(run: StepRun)``; it writes to ``run.console`` and raises
``StepFailed`` with a sentence when the hosts say no. Anything else it raises is a bug or an
unexpected condition: the step and the job are then "errored", not "failed".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


class StepFailed(Exception):
    """A step could not do its work; the message says why, for the job page."""


class UnknownJobKind(KeyError):
    """No app registered this kind (or the step is not one of its steps)."""


@dataclass(frozen=True)
class StepSpec:
    name: str
    title: str
    action: Callable[[Any], None]  # action(run: portal.jobs.worker.StepRun)
    # False: running it twice may do harm (a second mkfs); a retry after it failed needs
    # someone to confirm the hosts were checked.
    idempotent: bool = True
    # False: the step only watches (a drive's reconstruction, for hours); the job's marks
    # (``Job.marks``) do not hold meanwhile, so a fault then is coloured and alerts as any.
    acts: bool = True


@dataclass(frozen=True)
class JobKindSpec:
    kind: str
    label: str
    steps: tuple[StepSpec, ...]
    # context(job) -> whatever the steps share, computed once per run (plans, CIBs, inventory).
    context: Callable[[Any], Any] | None = None

    def step(self, name: str) -> StepSpec:
        for spec in self.steps:
            if spec.name == name:
                return spec
        raise UnknownJobKind(f"job kind {self.kind!r} has no step {name!r}")


_KINDS: dict[str, JobKindSpec] = {}


def register(
    kind: str,
    label: str,
    steps: Iterable[StepSpec],
    *,
    context: Callable[[Any], Any] | None = None,
) -> JobKindSpec:
    """Declare a job kind. Registering the same kind again replaces it (a module reloaded)."""
    spec = JobKindSpec(kind, label, tuple(steps), context)
    names = [step.name for step in spec.steps]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"job kind {kind!r} needs steps with distinct names, got {names}")
    _KINDS[kind] = spec
    return spec


def job_kind(kind: str) -> JobKindSpec:
    try:
        return _KINDS[kind]
    except KeyError:
        raise UnknownJobKind(f"no app registered the job kind {kind!r}") from None


def job_kinds() -> list[JobKindSpec]:
    return sorted(_KINDS.values(), key=lambda spec: spec.kind)
