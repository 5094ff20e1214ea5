"""Work of the management console across objects:

- this module: the errors every act raises, the audit record, and running the console's
  playbooks on a pair;
- ``cluster``: failover, failback and maintenance (Pacemaker, with its what-if first);
- ``drives``: a failed drive's replacement (locate, reconstruct, copy-back);
- ``params``: Lustre parameters across servers (lctl get_param / set_param [-P]) and revert.

Every act is started the same way: checked, summarised for the operator, confirmed, then a job
of ``portal.jobs`` with an audit entry written in the same transaction.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings

from portal.accounts.services import client_address
from portal.console.choices import Act, ObjectKind, Via
from portal.console.models import AuditEntry
from portal.inventory.models import Server, ServerPair
from portal.inventory.services import ansible_inventory
from portal.jobs.models import Job
from portal.jobs.registry import StepFailed
from provisioning.runner import PlaybookResult, run_playbook


class ConsoleError(ValueError):
    """A request the console refuses; ``field`` names what is wrong (for forms and the API)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def not_an_option(field: str, word: str) -> str:
    """A name the console puts in a command's argv: refused when it starts with "-", which the
    command would read as one of its options (``lctl get_param -R``, ``--help``). Refusing is
    the sure way: not every command the console runs takes "--" as the end of its options."""
    if word.startswith("-"):
        raise ConsoleError(
            field, f"{word!r} starts with '-': the command would read it as an option"
        )
    return word


class Refused(ConsoleError):
    """The act cannot be done now: the reasons say why (a server not healthy, ...)."""

    def __init__(self, field: str, reasons: list[str]) -> None:
        super().__init__(field, "; ".join(reasons))
        self.reasons = reasons


@dataclass
class Proposal:
    """What an act will do, shown before the operator confirms it."""

    title: str
    lines: list[str]
    warnings: list[str] = field(default_factory=list)
    # The commands the act runs, as an administrator would type them.
    commands: list[str] = field(default_factory=list)


class ConfirmationNeeded(Exception):
    def __init__(self, proposal: Proposal) -> None:
        super().__init__(proposal.title)
        self.proposal = proposal


@dataclass(frozen=True)
class Author:
    """Who asks, and from where: the audit entry's first columns. ``name`` is the author when
    no portal user is (a manage.py command run without --user: the account that ran it)."""

    user: object
    via: str = Via.WEB
    remote_addr: str | None = None
    name: str = ""

    @classmethod
    def of_request(cls, request, via: str = Via.WEB) -> Author:
        # The address nginx saw, as the sign-in limit counts it: the first X-Forwarded-For
        # entry is whatever the client claimed.
        return cls(request.user, via, client_address(request))

    @classmethod
    def of_command(cls, user=None) -> Author:
        """A manage.py command: the portal user it names, else the system account running it
        (the audit log's "who" for scripts and cron jobs)."""
        return cls(user, Via.COMMAND, name=f"{_system_account()} (system account)")

    @property
    def username(self) -> str:
        if getattr(self.user, "is_authenticated", False):
            return self.user.get_username()
        return self.name or "system"


def _system_account() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        return "unknown"


def audit(
    author: Author,
    act: str,
    object_kind: str,
    object_name: str,
    proposal: Proposal,
    *,
    job: Job | None = None,
    details: dict | None = None,
    reverts: AuditEntry | None = None,
) -> AuditEntry:
    user = author.user if getattr(author.user, "is_authenticated", False) else None
    return AuditEntry.objects.create(
        user=user,
        username=author.username[:150],
        via=author.via,
        remote_addr=author.remote_addr,
        act=act,
        object_kind=object_kind,
        object_name=object_name,
        summary="\n".join([proposal.title, *proposal.lines, *proposal.warnings]),
        details=details or {},
        job=job,
        reverts=reverts,
    )


def audit_refusal(
    author: Author, act: str, object_kind: str, object_name: str, reasons: list[str]
) -> AuditEntry:
    """An act the console refused, with its reasons: the log shows what was asked and why it
    was not done (a failback while the server is down), not only what was done."""
    title = f"{Act(act).label} of {object_name} refused"
    return audit(
        author,
        act,
        object_kind,
        object_name,
        Proposal(title, [f"refused: {reason}" for reason in reasons]),
        details={"refused": reasons},
    )


def audit_refused_sign_in(
    sender, *, username: str, address: str | None, through_api: bool, reason: str, **kwargs
) -> None:
    """A refused sign-in (``portal.accounts.services.sign_in_refused``): nobody is signed in, so
    the entry names the user name tried as its object and the address it came from."""
    AuditEntry.objects.create(
        username="anonymous",
        via=Via.API if through_api else Via.WEB,
        remote_addr=address,
        act=Act.SIGN_IN_REFUSED,
        object_kind=ObjectKind.USER,
        object_name=username[:200],
        summary=reason,
    )


Say = Callable[[str], None]


def run_on_pair(
    pair: ServerPair,
    playbook: str,
    variables: dict,
    *,
    key: str,
    hosts: list[Server] | None = None,
    say: Say | None = None,
    write: Say | None = None,
) -> tuple[PlaybookResult, str]:
    """Run ``playbook`` on one server of the pair (``variables[key]["host"]``), in the order of
    ``hosts``, until one succeeds: a crashed server does not stop an act its partner can do
    (the console's commands can run twice). Returns the last result and its host."""
    candidates = hosts or list(pair.servers.order_by("hostname"))
    inventory = ansible_inventory([pair], settings.VIRTUAL_RACK)
    result = None
    for server in candidates:
        variables[key]["host"] = server.hostname
        if say:
            say(f"{playbook} on {server.hostname}")
        result = run_playbook(
            playbook,
            inventory,
            variables,
            work_dir=settings.ANSIBLE_WORK_DIR,
            on_output=write or (lambda _text: None),
        )
        if result.succeeded:
            return result, server.hostname
    assert result is not None
    return result, candidates[-1].hostname


def require(result: PlaybookResult, what: str) -> None:
    if not result.succeeded:
        raise StepFailed(f"{what}: {result.summary()} (see the output)")
