"""Alert events, their history and the mail they send (DESIGN.md §8).

An ``Event`` belongs to one rule and one object (its fingerprint) and keeps the timing state of
``portal.alerts.engine`` between evaluations; each step of its life is a ``Transition``. Events
that fire belong to an ``IncidentGroup`` (keyed by their cause's place: the SSU or server pair,
the array, the filesystem, per the rule's ``group_by``), which keeps the timing state of
``portal.alerts.grouping``: the group, not the event, is mailed. Each ``GroupMail`` (firing,
more alerts, reminder, resolved) keeps a snapshot of the members it told of and gets one
``Delivery`` row per recipient, written in the same transaction: the outbox. (Deliveries written
before grouping point to the transition they told of instead.) A worker claims deliveries by a
conditional update and sends them through ``portal.alerts.mail``; a delivery is never dropped
(one that cannot be sent is kept, failed for good with its reason) and, once sent, never sent
again.
``MailRelaySettings`` is the mail server that mail goes through, as an administrator set it.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, validate_email
from django.db import models
from django.utils import timezone

from portal.accounts import crypto
from portal.alerts.choices import (
    Comparison,
    ConditionKind,
    DeliveryStatus,
    EventStatus,
    GroupBy,
    GroupMailKind,
    GroupStatus,
    HealthCondition,
    ScopeKind,
    Severity,
    TransitionKind,
)
from portal.single_row.models import SingleRow
from provisioning import names

# Between the addresses of a rule's "other addresses".
ADDRESS_SEPARATORS = re.compile(r"[\s,;]+")


def validate_no_control_characters(value: str) -> None:
    """Refuse text that reaches a mail header (a rule's name in the subject, an address, the
    mail relay's sender and user name) if it holds a control character. The model fields carry
    it, so the console's forms, the API and Django's admin all refuse the same way."""
    found = names.first_control_character(value)
    if found is not None:
        position, character = found
        raise ValidationError(
            "may not hold control characters such as line breaks "
            f"(U+{ord(character):04X} at character {position})",
            code="control_character",
        )


def split_addresses(text: str) -> list[str]:
    return [address for address in ADDRESS_SEPARATORS.split(text) if address]


def validate_addresses(value: str) -> None:
    """Every one of the addresses is a mail address (a quoted one may hold control characters
    the address syntax allows but a mail header should not carry)."""
    for address in split_addresses(value):
        try:
            validate_email(address)
        except ValidationError:
            raise ValidationError(f"{address!r} is not an e-mail address") from None
        try:
            validate_no_control_characters(address)
        except ValidationError as error:
            raise ValidationError(f"{address!r}: {error.message}") from None


class Rule(models.Model):
    """ "Tell these people when X holds for Y": a condition, its timing, its objects, recipients."""

    name = models.CharField(
        max_length=100, unique=True, validators=[validate_no_control_characters]
    )
    severity = models.CharField(max_length=8, choices=Severity.choices, default=Severity.WARNING)
    enabled = models.BooleanField(default=True)
    condition = models.CharField(max_length=10, choices=ConditionKind.choices)
    # health: which state of the object fires the rule
    health_state = models.CharField(max_length=12, choices=HealthCondition.choices, blank=True)
    # threshold and no_data: a field of the metric schema (sensors.schema)
    measurement = models.CharField(max_length=32, blank=True)
    field = models.CharField(max_length=64, blank=True)
    rate = models.BooleanField(
        default=False, help_text="compare the per-second rate of a counter, not its value"
    )
    percent_of = models.CharField(
        max_length=64, blank=True, help_text="compare the field as a percentage of this field"
    )
    comparison = models.CharField(max_length=2, choices=Comparison.choices, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    for_seconds = models.PositiveIntegerField(
        default=0, help_text="how long the condition must hold before the rule fires"
    )
    clear_seconds = models.PositiveIntegerField(
        default=0, help_text="how long it must be false before the event resolves"
    )
    repeat_seconds = models.PositiveIntegerField(
        default=0, help_text="a reminder this often while firing; 0: none"
    )
    scope = models.CharField(max_length=10, choices=ScopeKind.choices, default=ScopeKind.ALL)
    scope_value = models.CharField(
        max_length=64, blank=True, help_text="the filesystem, SSU or kind of object"
    )
    recipients = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="alert_rules", blank=True
    )
    extra_addresses = models.TextField(
        blank=True,
        validators=[validate_addresses],
        help_text="more addresses, one per line or separated by commas",
    )
    group_by = models.CharField(
        max_length=10,
        choices=GroupBy.choices,
        default=GroupBy.AUTO,
        help_text="which of its alerts share one incident, and so one mail",
    )
    builtin = models.SlugField(
        max_length=40, blank=True, help_text="set on the default rules installed at first start"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class IncidentGroup(models.Model):
    """The alerts that share a cause's place (an SSU, a pair, an array, a filesystem, or one
    object), from the first that fires to the last that resolves: one mail, not one per alert.
    Its severity is its worst member's."""

    key = models.CharField(
        max_length=250, help_text="the place its members share, e.g. 'ssu:1' or 'object:target:3'"
    )
    label = models.CharField(max_length=100, help_text="the place as people name it")
    severity = models.CharField(max_length=8, choices=Severity.choices)
    status = models.CharField(
        max_length=8, choices=GroupStatus.choices, default=GroupStatus.PENDING
    )
    state = models.JSONField(default=dict, blank=True, help_text="portal.alerts.grouping's state")
    opened = models.DateTimeField(default=timezone.now)
    resolved = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="acknowledged_incidents",
        null=True,
        blank=True,
    )
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledge_comment = models.TextField(blank=True)

    class Meta:
        ordering = ["-opened", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["key"],
                condition=models.Q(status__in=[GroupStatus.PENDING, GroupStatus.FIRING]),
                name="%(app_label)s_%(class)s_one_open_group_per_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.label} ({self.status})"


class Event(models.Model):
    """One rule firing for one object, from its first mail to its resolution."""

    rule = models.ForeignKey(Rule, on_delete=models.PROTECT, related_name="events")
    severity = models.CharField(max_length=8, choices=Severity.choices)
    fingerprint = models.CharField(
        max_length=200, help_text="the object's stable key, e.g. 'target:scratch-OST0001'"
    )
    object_label = models.CharField(max_length=100, help_text="the object as people name it")
    object_key = models.CharField(
        max_length=40, blank=True, db_index=True, help_text="its health object, e.g. 'server:3'"
    )
    object_url = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=8, choices=EventStatus.choices, default=EventStatus.FIRING)
    summary = models.TextField(help_text="what holds, in one sentence")
    timing_state = models.JSONField(default=dict, blank=True)
    opened = models.DateTimeField(default=timezone.now)
    resolved = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="acknowledged_events",
        null=True,
        blank=True,
    )
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledge_comment = models.TextField(blank=True)
    # Set when it fires; None while pending, and for events that fired before grouping.
    group = models.ForeignKey(
        IncidentGroup, on_delete=models.PROTECT, related_name="events", null=True, blank=True
    )

    class Meta:
        ordering = ["-opened", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "fingerprint"],
                condition=models.Q(status__in=[EventStatus.PENDING, EventStatus.FIRING]),
                name="%(app_label)s_%(class)s_one_open_event_per_fingerprint",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.rule}: {self.object_label} ({self.status})"


class Transition(models.Model):
    """A step in an event's life; the mailed kinds have deliveries."""

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="transitions")
    kind = models.CharField(max_length=12, choices=TransitionKind.choices)
    at = models.DateTimeField(default=timezone.now)
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.event}: {self.kind} at {self.at:%Y-%m-%d %H:%M:%S}"


class GroupMail(models.Model):
    """One mail of an incident group, with the members as it told of them (a snapshot: each
    ``grouping.MemberRow`` as a dict: object, object_url, rule, severity, since, summary, muted,
    state, new, resolved, duration)."""

    group = models.ForeignKey(IncidentGroup, on_delete=models.CASCADE, related_name="mails")
    kind = models.CharField(max_length=8, choices=GroupMailKind.choices)
    at = models.DateTimeField(default=timezone.now)
    members = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.group.label}: {self.kind} at {self.at:%Y-%m-%d %H:%M:%S}"


class Delivery(models.Model):
    """One mail to one address: written before the send, kept after it. A group's mail since
    grouping; one transition's before it."""

    group_mail = models.ForeignKey(
        GroupMail, on_delete=models.CASCADE, related_name="deliveries", null=True, blank=True
    )
    transition = models.ForeignKey(
        Transition, on_delete=models.CASCADE, related_name="deliveries", null=True, blank=True
    )
    address = models.EmailField()
    status = models.CharField(
        max_length=8, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt = models.DateTimeField(default=timezone.now, db_index=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["pk"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["transition", "address"],
                name="%(app_label)s_%(class)s_unique_address_per_transition",
            ),
            models.UniqueConstraint(
                fields=["group_mail", "address"],
                name="%(app_label)s_%(class)s_unique_address_per_group_mail",
            ),
            models.CheckConstraint(
                condition=models.Q(group_mail__isnull=False) | models.Q(transition__isnull=False),
                name="%(app_label)s_%(class)s_tells_of_a_mail_or_transition",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group_mail or self.transition} to {self.address}: {self.status}"

    @property
    def message_id(self) -> str:
        """The same for every attempt, so a mail system can tell a repeated attempt apart."""
        return f"<ostara-alert-{self.pk}@{settings.OSTARA_MAIL_DOMAIN}>"


class Silence(models.Model):
    """A maintenance window: events of the object and everything below it are recorded, their
    mail is not sent."""

    object_key = models.CharField(
        max_length=100, help_text="a filesystem, SSU or server, e.g. 'server:oss03'"
    )
    object_label = models.CharField(max_length=100)
    starts = models.DateTimeField(default=timezone.now)
    ends = models.DateTimeField()
    reason = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="silences"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-starts", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends__gt=models.F("starts")),
                name="%(app_label)s_%(class)s_ends_after_start",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.object_label} silenced until {self.ends:%Y-%m-%d %H:%M}"

    def clean(self) -> None:
        if self.starts and self.ends and self.ends <= self.starts:
            raise ValidationError({"ends": "the end must come after the start"})


def validate_mail_host(value: str) -> None:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        problem = names.hostname_problem(value)
        if problem:
            raise ValidationError(problem) from None


@dataclass(frozen=True)
class MailRelay:
    """Where and how mail leaves the appliance, as ``portal.alerts.mail`` uses it."""

    host: str
    port: int
    username: str
    password: str
    use_tls: bool
    from_address: str


class MailRelaySettings(SingleRow):
    """The mail server all mail goes through; one row (pk=1). Until an administrator saves it,
    the ``EMAIL_*`` environment variables apply. The password is encrypted with the appliance's
    credentials key (``portal.accounts.crypto``), which is kept outside the database."""

    host = models.CharField(
        "mail server", max_length=253, validators=[validate_mail_host], default="127.0.0.1"
    )
    port = models.PositiveIntegerField(
        default=25,
        validators=[
            MinValueValidator(1, "a port is 1 to 65535"),
            MaxValueValidator(65535, "a port is 1 to 65535"),
        ],
    )
    use_tls = models.BooleanField(
        "STARTTLS", default=False, help_text="ask the server to encrypt the connection"
    )
    username = models.CharField(
        "user name",
        max_length=254,
        blank=True,
        validators=[validate_no_control_characters],
        help_text="empty: the server wants no login",
    )
    # Fernet token; read and write through password / set_password().
    password_encrypted = models.TextField(blank=True, editable=False)
    from_address = models.EmailField(
        "sender address", default="ostara@localhost", validators=[validate_no_control_characters]
    )
    saved = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta(SingleRow.Meta):
        verbose_name = "mail relay settings"
        verbose_name_plural = "mail relay settings"

    def __str__(self) -> str:
        return f"mail relay {self.host}:{self.port}"

    def set_password(self, password: str) -> None:
        self.password_encrypted = crypto.encrypt(password) if password else ""

    @property
    def password(self) -> str:
        return crypto.decrypt(self.password_encrypted) if self.password_encrypted else ""

    @classmethod
    def current(cls) -> MailRelaySettings:
        """The row, holding the environment's values until an administrator saved it."""
        row = cls.load()
        if row.saved is None:
            row.host, row.port = settings.EMAIL_HOST, settings.EMAIL_PORT
            row.use_tls, row.username = settings.EMAIL_USE_TLS, settings.EMAIL_HOST_USER
            row.from_address = settings.DEFAULT_FROM_EMAIL
            row.set_password(settings.EMAIL_HOST_PASSWORD)
        return row

    def relay(self) -> MailRelay:
        return MailRelay(
            self.host, self.port, self.username, self.password, self.use_tls, self.from_address
        )
