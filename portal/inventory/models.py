"""The inventory of a Lustre rack: filesystems, server pairs, SSUs, arrays and their drives,
volume groups and targets.

Enclosure models are a catalogue (what the vendor sells); enclosures are instances (what is in
the rack). Names that later reach a shell, an ansible variable or a Pacemaker id are validated
here, with the same rules the planner uses.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.db import models

from portal.accounts import crypto
from portal.inventory.choices import (
    DriveState,
    EnclosureKind,
    PairKind,
    ServerRole,
    TargetKind,
    TargetState,
    VolumeGroupState,
)
from provisioning import names

FINGERPRINT = re.compile(r"^[0-9a-f]{64}$")
# The built-in read-only account of SANtricity's role-based access (11.40 and later).
MONITOR_USER = "monitor"


def _check(problem: str | None) -> None:
    if problem:
        raise ValidationError(problem)


def validate_filesystem_name(value: str) -> None:
    _check(names.filesystem_problem(value))


def validate_unit_name(value: str) -> None:
    _check(names.unit_name_problem(value))


def validate_hostname(value: str) -> None:
    _check(names.hostname_problem(value))


def validate_interface(value: str) -> None:
    _check(names.interface_problem(value))


def validate_link_address(value: str) -> None:
    _check(names.link_address_problem(value))


def validate_controller_address(value: str) -> None:
    _check(names.controller_address_problem(value))


def validate_fingerprint(value: str) -> None:
    """One controller's certificate: a SHA-256 fingerprint, 64 lowercase hex digits."""
    if not FINGERPRINT.fullmatch(value):
        raise ValidationError(
            "give the SHA-256 of the controller's certificate: 64 lowercase hex digits"
        )


def validate_fingerprints(value: str) -> None:
    """The single pin of an array before each controller had its own (migration 0004 names
    it)."""
    words = value.split()
    if len(words) > 2 or not all(FINGERPRINT.fullmatch(word) for word in words):
        raise ValidationError(
            "give the SHA-256 of the array's certificate: 64 lowercase hex digits, or two "
            "separated by a space when each controller has its own"
        )


def validate_nid_list(value: list) -> None:
    if not isinstance(value, list) or not value:
        raise ValidationError("give at least one LNet NID")
    for nid in value:
        _check(names.nid_problem(nid) if isinstance(nid, str) else "a NID must be text")
    if len(set(value)) != len(value):
        raise ValidationError("the same NID is listed twice")


class Filesystem(models.Model):
    name = models.CharField(max_length=8, unique=True, validators=[validate_filesystem_name])
    mgs_nids = models.JSONField(
        default=list,
        validators=[validate_nid_list],
        help_text="NIDs of the MGS, one per server of the MDS pair",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def next_ost_index(self) -> int:
        last = self.targets.filter(kind=TargetKind.OST).aggregate(models.Max("index"))
        return 0 if last["index__max"] is None else last["index__max"] + 1


class ServerPair(models.Model):
    """Two servers with shared storage, one Pacemaker cluster."""

    name = models.CharField(max_length=32, unique=True, validators=[validate_unit_name])
    kind = models.CharField(max_length=3, choices=PairKind.choices)
    filesystem = models.ForeignKey(
        Filesystem, on_delete=models.PROTECT, related_name="server_pairs"
    )
    plan = models.JSONField(help_text="the planner's output this pair was built from")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["filesystem__name", "kind", "name"]

    def __str__(self) -> str:
        return self.name


class Server(models.Model):
    hostname = models.CharField(max_length=253, unique=True, validators=[validate_hostname])
    role = models.CharField(max_length=3, choices=ServerRole.choices)
    pair = models.ForeignKey(
        ServerPair, on_delete=models.PROTECT, related_name="servers", null=True, blank=True
    )
    lnet_nids = models.JSONField(default=list, validators=[validate_nid_list])
    bmc_address = models.CharField(max_length=253)
    bmc_username = models.CharField(max_length=64, blank=True)
    # Fernet token; read and write through bmc_password / set_bmc_password().
    bmc_password_encrypted = models.TextField(blank=True, editable=False)
    pdu_outlet = models.CharField(max_length=64)
    lnet_interface = models.CharField(
        max_length=15,
        blank=True,
        validators=[validate_interface],
        help_text="the network interface carrying LNet, watched by the healthLNET check",
    )
    # Corosync's two knet links; blank: one link on the host name (the review warns).
    mgmt_address = models.CharField(
        max_length=45,
        blank=True,
        validators=[validate_link_address],
        help_text="Corosync link 0: the server's address on the management network",
    )
    heartbeat_address = models.CharField(
        max_length=45,
        blank=True,
        validators=[validate_link_address],
        help_text="Corosync link 1: the server's address on the private heartbeat network",
    )

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return self.hostname

    def clean(self) -> None:
        """Every way to change a server (the admin, ``save_plan``, a future edit page or API)
        calls this: the shape of each value, then what other servers of the inventory hold."""
        errors = {}
        if problem := names.bmc_problem(self.bmc_address):
            errors["bmc_address"] = problem
        if problem := names.pdu_outlet_problem(self.pdu_outlet):
            errors["pdu_outlet"] = problem
        # It reaches ipmitool's argv (the sensor) and the CIB: never an option such as -x.
        if self.bmc_username and (problem := names.fence_user_problem(self.bmc_username)):
            errors["bmc_username"] = problem
        if not errors and self.hostname:
            nids = (
                [n for n in self.lnet_nids if isinstance(n, str)]
                if isinstance(self.lnet_nids, list)
                else []
            )
            claims = server_claims(
                [{"hostname": self.hostname, "bmc": self.bmc_address,
                  "pdu_outlet": self.pdu_outlet, "nids": nids}],
                new=self.pk is None,
            )[0]  # fmt: skip
            errors.update({SPEC_TO_FIELD.get(key, key): message for key, message in claims.items()})
        if errors:
            raise ValidationError(errors)

    def set_bmc_password(self, password: str) -> None:
        self.bmc_password_encrypted = crypto.encrypt(password) if password else ""

    @property
    def bmc_password(self) -> str:
        if not self.bmc_password_encrypted:
            return ""
        return crypto.decrypt(self.bmc_password_encrypted)

    @property
    def partner(self) -> Server | None:
        if self.pair_id is None:
            return None
        return self.pair.servers.exclude(pk=self.pk).first()


# The spec's names of a server's fields (the planner's and the wizard's) -> the row's.
SPEC_TO_FIELD = {"bmc": "bmc_address", "nids": "lnet_nids"}


def server_claims(servers: list[dict], new: bool = True) -> list[dict[str, str]]:
    """The one check that no two servers share a host name, NID, BMC address or PDU outlet:
    fencing one through a BMC or outlet that is another's would power off the other.

    ``servers`` have the spec's keys (hostname, nids, bmc, pdu_outlet, and optionally label:
    who gave the host name, for the message). Each is checked against the servers before it in
    the list and against every other server of the inventory; ``new`` says the servers are
    not in the inventory yet, so a row with the same host name is a clash too. Returns, per
    server, field -> message.
    """
    found: list[dict[str, str]] = []
    given: dict[tuple[str, str], str] = {}  # (field, value) -> who gave it first
    for server in servers:
        errors: dict[str, str] = {}
        host = server.get("hostname") or ""
        values = [("hostname", host)] + [("nids", nid) for nid in server.get("nids") or []]
        values += [("bmc", server.get("bmc") or ""), ("pdu_outlet", server.get("pdu_outlet") or "")]
        for field, value in values:
            key = (field, value.lower())
            if value and key in given and field not in errors:
                errors[field] = _given_message(field, value, given[key])
            owner = server.get("label", host) if field == "hostname" else host
            given.setdefault(key, owner)
        for field, message in _inventory_claims(server, new).items():
            errors.setdefault(field, message)
        found.append(errors)
    return found


def _given_message(field: str, value: str, owner: str) -> str:
    what = {"bmc": "as the BMC of ", "pdu_outlet": "as the PDU outlet of "}.get(field, "for ")
    return f"{'NID ' if field == 'nids' else ''}{value} is already given {what}{owner}"


def _inventory_claims(server: dict, new: bool) -> dict[str, str]:
    errors: dict[str, str] = {}
    host = server.get("hostname")
    if new and (existing := Server.objects.filter(hostname=host).select_related("pair").first()):
        where = f"pair {existing.pair.name!r}" if existing.pair else "the inventory"
        errors["hostname"] = f"{host} already belongs to {where}; a server can be in one pair only"
    others = Server.objects.exclude(hostname=host).select_related("pair")
    if bmc := server.get("bmc"):
        if owner := others.filter(bmc_address__iexact=bmc).first():
            errors["bmc"] = f"{bmc} is already the BMC of {_owner(owner)}"
    if outlet := server.get("pdu_outlet"):
        if owner := others.filter(pdu_outlet__iexact=outlet).first():
            errors["pdu_outlet"] = f"{outlet} is already the PDU outlet of {_owner(owner)}"
    for nid in server.get("nids") or []:
        # JSON containment is not portable to SQLite; the NID list is short, so match as text.
        owner = next(
            (s for s in others.filter(lnet_nids__icontains=nid) if nid in s.lnet_nids), None
        )
        if owner is not None:
            errors["nids"] = f"NID {nid} is already used by {owner.hostname}"
            break
    return errors


def _owner(server: Server) -> str:
    return f"{server.hostname} in {server.pair.name}" if server.pair else server.hostname


class SSU(models.Model):
    """A scalable storage unit: an OSS pair and its arrays, as planned."""

    name = models.CharField(max_length=32, unique=True, validators=[validate_unit_name])
    filesystem = models.ForeignKey(Filesystem, on_delete=models.PROTECT, related_name="ssus")
    pair = models.OneToOneField(ServerPair, on_delete=models.PROTECT, related_name="ssu")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["filesystem__name", "name"]
        verbose_name = "SSU"

    def __str__(self) -> str:
        return self.name

    @property
    def plan(self) -> dict:
        return self.pair.plan


class EnclosureModel(models.Model):
    """A catalogue entry (E5560, DE6600, ...), copied from the planner's catalogue."""

    name = models.CharField(max_length=32, unique=True)
    kind = models.CharField(max_length=10, choices=EnclosureKind.choices)
    drawers = models.PositiveSmallIntegerField()
    slots_per_drawer = models.PositiveSmallIntegerField()
    controllers = models.CharField(max_length=8, blank=True, help_text="e.g. AB for duplex")
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def drives(self) -> int:
        return self.drawers * self.slots_per_drawer


class StorageArray(models.Model):
    name = models.CharField(max_length=32, unique=True, validators=[validate_unit_name])
    pair = models.ForeignKey(ServerPair, on_delete=models.PROTECT, related_name="arrays")
    drive_tb = models.DecimalField(max_digits=6, decimal_places=2)
    # The size as the confirmed spec wrote it (JSON text: "4" or "4.0"): the planner keeps the
    # number as given, so the plan derived from these rows reads exactly as the one confirmed.
    # Defaults only for rows written before these fields (a restored older archive), which the
    # migration's data step then fills from the confirmed plan; save_plan always sets them.
    drive_tb_as_given = models.CharField(max_length=24, editable=False, default="")
    installed_drives = models.PositiveSmallIntegerField(
        default=0,
        help_text="drives installed, filling the enclosures' slots in the planner's order",
    )
    global_spares = models.PositiveSmallIntegerField(
        default=0, help_text="hot spares the plan reserved"
    )
    # The controllers' SANtricity REST API, read by the array collector on the management
    # server (blank: the array is read through SMcli by its pair's servers, as before).
    management_a = models.CharField(
        max_length=261,
        blank=True,
        validators=[validate_controller_address],
        help_text="controller A's management address: host or host:port (8443 if none)",
    )
    management_b = models.CharField(
        max_length=261,
        blank=True,
        validators=[validate_controller_address],
        help_text="controller B's management address: host or host:port (8443 if none)",
    )
    monitor_user = models.CharField(
        max_length=32, default=MONITOR_USER, help_text="the array's read-only monitor account"
    )
    # Fernet token; read and write through monitor_password / set_monitor_password().
    monitor_password_encrypted = models.TextField(blank=True, editable=False)
    # Each controller has its own self-signed certificate: one pin per controller.
    certificate_a_sha256 = models.CharField(
        "controller A's certificate (SHA-256)",
        max_length=64,
        blank=True,
        validators=[validate_fingerprint],
        help_text="pinned by the sensor step from what controller A serves; clear it to pin "
        "a replaced one",
    )
    certificate_b_sha256 = models.CharField(
        "controller B's certificate (SHA-256)",
        max_length=64,
        blank=True,
        validators=[validate_fingerprint],
        help_text="pinned by the sensor step from what controller B serves; clear it to pin "
        "a replaced one",
    )

    class Meta:
        ordering = ["name"]
        verbose_name = "storage array"

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors = {}
        if bool(self.management_a) != bool(self.management_b):
            missing = "management_b" if self.management_a else "management_a"
            errors[missing] = "give both controllers' management addresses, or neither"
        elif self.management_a and self.management_a.lower() == self.management_b.lower():
            errors["management_b"] = "controller B's address must differ from controller A's"
        # It reaches the collector's configuration: never an option or a second line.
        if problem := names.monitor_user_problem(self.monitor_user):
            errors["monitor_user"] = problem
        if errors:
            raise ValidationError(errors)

    @property
    def controller_addresses(self) -> tuple[str, ...]:
        """(A, B) when the array is read through its REST API, else ()."""
        return (self.management_a, self.management_b) if self.management_a else ()

    @property
    def pins(self) -> dict[str, str]:
        """Controller ("A", "B") -> its pinned certificate's SHA-256 ("": none yet)."""
        return {"A": self.certificate_a_sha256, "B": self.certificate_b_sha256}

    def pin(self, controller: str, fingerprint: str) -> None:
        setattr(self, f"certificate_{controller.lower()}_sha256", fingerprint)

    def set_monitor_password(self, password: str) -> None:
        self.monitor_password_encrypted = crypto.encrypt(password) if password else ""

    @property
    def monitor_password(self) -> str:
        if not self.monitor_password_encrypted:
            return ""
        return crypto.decrypt(self.monitor_password_encrypted)


class Enclosure(models.Model):
    array = models.ForeignKey(StorageArray, on_delete=models.PROTECT, related_name="enclosures")
    model = models.ForeignKey(EnclosureModel, on_delete=models.PROTECT, related_name="enclosures")
    name = models.CharField(max_length=40, unique=True)
    position = models.PositiveSmallIntegerField(help_text="0 = the controller enclosure")

    class Meta:
        ordering = ["array__name", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["array", "position"], name="%(app_label)s_%(class)s_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class VolumeGroup(models.Model):
    array = models.ForeignKey(StorageArray, on_delete=models.PROTECT, related_name="volume_groups")
    name = models.CharField(max_length=48, unique=True)
    raid = models.CharField(max_length=8, help_text="8+2 (RAID-6) or 12+12 (RAID-10)")
    segment_kib = models.PositiveIntegerField()
    controller = models.CharField(max_length=1, help_text="preferred RAID controller")
    state = models.CharField(
        max_length=10, choices=VolumeGroupState.choices, default=VolumeGroupState.PLANNED
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Drive(models.Model):
    enclosure = models.ForeignKey(Enclosure, on_delete=models.PROTECT, related_name="drives")
    drawer = models.PositiveSmallIntegerField()
    slot = models.PositiveSmallIntegerField()
    size_tb = models.DecimalField(max_digits=6, decimal_places=2)
    state = models.CharField(max_length=10, choices=DriveState.choices, default=DriveState.BLANK)
    volume_group = models.ForeignKey(
        VolumeGroup, on_delete=models.PROTECT, related_name="drives", null=True, blank=True
    )

    class Meta:
        ordering = ["enclosure__name", "drawer", "slot"]
        constraints = [
            models.UniqueConstraint(
                fields=["enclosure", "drawer", "slot"], name="%(app_label)s_%(class)s_unique_slot"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.enclosure.name} drawer {self.drawer} slot {self.slot}"


class Target(models.Model):
    filesystem = models.ForeignKey(Filesystem, on_delete=models.PROTECT, related_name="targets")
    kind = models.CharField(max_length=3, choices=TargetKind.choices)
    index = models.PositiveIntegerField()
    label = models.CharField(max_length=32)
    volume_group = models.ForeignKey(VolumeGroup, on_delete=models.PROTECT, related_name="targets")
    primary_server = models.ForeignKey(
        Server, on_delete=models.PROTECT, related_name="primary_targets"
    )
    failover_server = models.ForeignKey(
        Server, on_delete=models.PROTECT, related_name="failover_targets"
    )
    current_server = models.ForeignKey(
        Server,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="current_targets",
        help_text="where it is mounted now, if anywhere",
    )
    device = models.CharField(max_length=128)
    mount_point = models.CharField(max_length=128)
    state = models.CharField(
        max_length=12, choices=TargetState.choices, default=TargetState.PLANNED
    )

    class Meta:
        ordering = ["filesystem__name", "kind", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["filesystem", "kind", "index"], name="%(app_label)s_%(class)s_unique_index"
            ),
            models.UniqueConstraint(
                fields=["filesystem", "label"], name="%(app_label)s_%(class)s_unique_label"
            ),
        ]

    def __str__(self) -> str:
        return self.label

    def clean(self) -> None:
        if self.primary_server_id and self.primary_server_id == self.failover_server_id:
            raise ValidationError({"failover_server": "must differ from the primary server"})
