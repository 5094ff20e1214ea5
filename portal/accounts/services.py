"""Roles, the first admin account, passwords and the rate limit of sign-ins.

The permissions of each role are listed here, by app label and codename pattern, so that each
app that adds models extends one table instead of writing its own group code.
"""

from __future__ import annotations

import ipaddress
import math
import os
import secrets
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.db.models import Count, Max
from django.dispatch import Signal
from django.utils import timezone

from portal.accounts.choices import Role
from portal.accounts.models import LoginFailure, Preferences

# app label -> actions each role may take on every model of that app. Apps are added here as
# they arrive; "view" is read-only, "add"/"change"/"delete" are Django's model permissions.
ROLE_ACTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    Role.VIEWER: {},
    Role.OPERATOR: {},
    Role.ADMIN: {"auth": ("view", "add", "change", "delete")},
}
# Apps whose models every role may view and operators may run (add/change).
OPERATIONAL_APPS: tuple[str, ...] = ("inventory", "jobs", "surveys")


def role_permissions(role: str) -> list[Permission]:
    actions_by_app = dict(ROLE_ACTIONS[role])
    for app_label in OPERATIONAL_APPS:
        if role == Role.VIEWER:
            actions_by_app[app_label] = ("view",)
        elif role == Role.OPERATOR:
            actions_by_app[app_label] = ("view", "add", "change")
        else:
            actions_by_app[app_label] = ("view", "add", "change", "delete")
    permissions: list[Permission] = []
    for app_label, actions in actions_by_app.items():
        for permission in Permission.objects.filter(content_type__app_label=app_label):
            if permission.codename.split("_", 1)[0] in actions:
                permissions.append(permission)
    return permissions


@transaction.atomic
def ensure_roles() -> dict[str, Group]:
    """Create the role groups and set their permissions; safe to run any number of times."""
    groups = {}
    for role in Role:
        group, _ = Group.objects.get_or_create(name=role.value)
        group.permissions.set(role_permissions(role))
        groups[role.value] = group
    return groups


@dataclass(frozen=True)
class AdminAccount:
    username: str
    password: str | None  # only when it was created just now
    password_file: Path


def ensure_admin(run_dir: Path, username: str = "admin") -> AdminAccount:
    """Create the first admin with a generated password kept in ``run_dir``; never a default.

    The password is returned only when the account is created; afterwards it lives in the
    password file (mode 0600) until the administrator changes it.
    """
    groups = ensure_roles()
    password_file = run_dir / "admin-password"
    user_model = get_user_model()
    if user_model.objects.filter(username=username).exists():
        return AdminAccount(username, None, password_file)
    password = new_password()
    with transaction.atomic():
        user = user_model.objects.create_superuser(username=username, email="", password=password)
        user.groups.add(groups[Role.ADMIN])
    keep_password(password_file, password)
    return AdminAccount(username, password, password_file)


def new_password() -> str:
    """A generated password: 16 characters, 96 random bits."""
    return secrets.token_urlsafe(12)


def keep_password(password_file: Path, password: str) -> None:
    """Write a generated password where only its owner (root or the ostara user) reads it."""
    password_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    # An older file keeps its mode through O_TRUNC: make it private too.
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(password + "\n")


def password_file_of(run_dir: Path, username: str) -> Path:
    """Where a new generated password of the user is kept (the user admin's where the first
    admin's is)."""
    return run_dir / f"{username}-password"


def reset_password(username: str, password_file: Path) -> str:
    """Give the user a new generated password, kept in ``password_file``; sessions signed in
    with the old one end (Django checks a session against the password's hash).

    Raises ``User.DoesNotExist`` for an unknown user name.
    """
    user = get_user_model().objects.get(username=username)
    password = new_password()
    # Kept first: a file that cannot be written leaves the old password working.
    keep_password(password_file, password)
    user.set_password(password)
    user.save(update_fields=["password"])
    lift_login_limit(username)
    return password


# --- The rate limit of sign-ins ---------------------------------------------------------------


@dataclass(frozen=True)
class LoginRefusal:
    message: str
    retry_after_seconds: int


def client_address(request) -> str | None:
    """The address a sign-in comes from. Behind nginx (production) every request comes from
    127.0.0.1: the client is the last address of X-Forwarded-For, the one nginx added (earlier
    ones are whatever the client claimed)."""
    if request is None:
        return None
    address = request.META.get("REMOTE_ADDR", "")
    if settings.PRODUCTION:
        address = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip() or address
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


# Sent for every refused sign-in (a wrong password, or any password while the limit holds), with
# username, address, through_api and reason. The audit log's app (portal.console) records it: a
# signal because that app already depends on this one.
sign_in_refused = Signal()


def login_refusal(username: str | None, address: str | None) -> LoginRefusal | None:
    """Why a sign-in from ``address`` must be refused now whatever its password: too many recent
    failures for the user name from that address, or from that address for any names. None while
    it may be tried. Other addresses are not concerned, so nobody locks a user out by guessing:
    the guesser slows down only their own address.

    After the limit-th failure the address waits ``LOGIN_BACKOFF_SECONDS`` from its last failure,
    twice that after the next one, and so on up to ``LOGIN_BACKOFF_MAX_SECONDS``. Failures are
    counted only while the address may try, so waiting out a refusal is the only way on."""
    now = timezone.now()
    address = counted_address(address)
    recent = LoginFailure.objects.filter(
        address=address,  # None (an address that cannot be read) is a bucket of its own
        created__gte=now - timedelta(seconds=settings.LOGIN_FAILURE_WINDOW_SECONDS),
    )
    shown = "an unknown address"
    if address:
        shown = f"{address}/64" if ":" in address else address
    counted = (
        (
            recent.filter(username=username or ""),
            settings.LOGIN_FAILURE_LIMIT,
            f"user name {username!r} from your address ({shown})",
        ),
        (recent, settings.LOGIN_ADDRESS_FAILURE_LIMIT, f"your address ({shown})"),
    )
    refusals = []
    for failures, limit, what in counted:
        seen = failures.aggregate(count=Count("pk"), last=Max("created"))
        if seen["count"] < limit:
            continue
        backoff = min(
            settings.LOGIN_BACKOFF_SECONDS * 2 ** min(seen["count"] - limit, 32),
            settings.LOGIN_BACKOFF_MAX_SECONDS,
        )
        wait = math.ceil((seen["last"] + timedelta(seconds=backoff) - now).total_seconds())
        if wait > 0:
            refusals.append(
                LoginRefusal(
                    f"Too many failed sign-ins for {what}: try again in {_duration(wait)}. "
                    "Sign-in from other addresses is not affected.",
                    wait,
                )
            )
    return max(refusals, key=lambda refusal: refusal.retry_after_seconds, default=None)


def counted_address(address: str | None) -> str | None:
    """Where failures are counted for an address: the address itself for IPv4, its /64 network
    for IPv6 (one client is handed a whole /64 and could take a new address for every guess)."""
    if address and ":" in address:
        return str(ipaddress.ip_network(f"{address}/64", strict=False).network_address)
    return address


def _duration(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def record_login_failure(
    username: str | None, address: str | None, *, through_api: bool = False
) -> None:
    """A wrong password (or unknown user name): counted for the limit and audited."""
    now = timezone.now()
    window = timedelta(seconds=settings.LOGIN_FAILURE_WINDOW_SECONDS)
    LoginFailure.objects.filter(created__lt=now - window).delete()
    LoginFailure.objects.create(
        username=(username or "")[:150], address=counted_address(address), created=now
    )
    refusal = login_refusal(username, address)
    reason = "Wrong password or unknown user name."
    if refusal:
        reason += f" {refusal.message}"
    refuse_sign_in(username, address, reason, through_api=through_api)


def refuse_sign_in(
    username: str | None, address: str | None, reason: str, *, through_api: bool = False
) -> None:
    """Tell the audit log that a sign-in was refused, and why."""
    sign_in_refused.send(
        sender=LoginFailure,
        username=username or "",
        address=address,
        through_api=through_api,
        reason=reason,
    )


def forget_login_failures(username: str, address: str | None) -> int:
    """The failures of the user name from the address are forgotten: after a successful sign-in
    from there (the address's failures for other names stay: it may be trying many names), or
    when an administrator lifts the limit. Returns how many."""
    deleted, _ = LoginFailure.objects.filter(
        username=username, address=counted_address(address)
    ).delete()
    return deleted


def lift_login_limit(username: str) -> int:
    """An administrator lifts the limit of a user name from every address (a new password from
    ``manage.py ostara_password`` does). Returns how many failures were forgotten."""
    deleted, _ = LoginFailure.objects.filter(username=username).delete()
    return deleted


def tour_pending(user) -> bool:
    """The dashboard's guided tour shows until the user closes it, once, on any device."""
    return not Preferences.objects.filter(user=user, tour_dismissed__isnull=False).exists()


def dismiss_tour(user) -> None:
    Preferences.objects.update_or_create(user=user, defaults={"tour_dismissed": timezone.now()})


def has_role(user, role: str) -> bool:
    """Whether the user holds ``role`` or a higher one (superusers hold every role)."""
    if user.is_superuser:
        return True
    order = list(Role)
    wanted = order.index(Role(role))
    held = {
        order.index(Role(name))
        for name in user.groups.values_list("name", flat=True)
        if name in Role.values
    }
    return any(level >= wanted for level in held)
