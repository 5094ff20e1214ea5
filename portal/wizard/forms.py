"""The wizard's forms. Each checks its own fields with the planner's own rules, so a typo is
shown next to the field at the step where it was made, not at the end."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from portal.inventory.models import Filesystem, ServerPair, StorageArray
from portal.wizard.choices import FilesystemMode
from provisioning import names
from provisioning.planner import MODELS, SEGMENT_SIZES_KIB


def _problem(check, value: str) -> None:
    if problem := check(value):
        raise ValidationError(problem)


class FilesystemForm(forms.Form):
    mode = forms.ChoiceField(choices=FilesystemMode.choices, widget=forms.RadioSelect)
    existing = forms.ModelChoiceField(
        queryset=Filesystem.objects.all(),
        to_field_name="name",
        required=False,
        label="Filesystem",
        empty_label="— choose —",
    )
    new_name = forms.CharField(
        max_length=8,
        required=False,
        label="New filesystem name",
        help_text="1 to 8 characters of a-z, 0-9 and _ (Lustre's fsname)",
    )

    def clean(self):
        data = super().clean()
        if data.get("mode") == FilesystemMode.EXISTING:
            if not data.get("existing"):
                self.add_error("existing", "choose the filesystem the SSU joins")
        elif data.get("mode") == FilesystemMode.NEW:
            name = data.get("new_name", "")
            if not name:
                self.add_error("new_name", "give the new filesystem a name")
            elif problem := names.filesystem_problem(name):
                self.add_error("new_name", problem)
            elif Filesystem.objects.filter(name=name).exists():
                self.add_error("new_name", f"filesystem {name!r} exists already; choose it above")
        return data

    @property
    def filesystem_name(self) -> str:
        data = self.cleaned_data
        return (
            data["existing"].name if data["mode"] == FilesystemMode.EXISTING else data["new_name"]
        )


class PairNameForm(forms.Form):
    name = forms.CharField(
        max_length=32, label="Name", help_text="e.g. ssu02 or mds01; becomes part of Pacemaker ids"
    )

    def clean_name(self):
        name = self.cleaned_data["name"]
        _problem(names.unit_name_problem, name)
        if ServerPair.objects.filter(name=name).exists():
            raise ValidationError(f"a pair named {name!r} exists already")
        return name


class ServerForm(forms.Form):
    hostname = forms.CharField(max_length=253)
    nids = forms.CharField(label="LNet NIDs", help_text="comma-separated, e.g. 10.10.0.11@o2ib")
    bmc = forms.CharField(label="BMC address", max_length=253)
    bmc_user = forms.CharField(label="BMC user", max_length=64)
    bmc_password = forms.CharField(
        label="BMC password",
        required=False,
        # Kept exactly as typed: a password is checked, never trimmed.
        strip=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="kept encrypted; leave empty to keep the one entered before",
    )
    pdu_outlet = forms.CharField(label="PDU outlet", help_text="pdu-name:outlet, e.g. pdu1:3")
    # Corosync's two knet links; left empty, Corosync runs one link on the host name.
    mgmt_address = forms.CharField(
        label="Management address",
        required=False,
        max_length=45,
        help_text="Corosync link 0 (management network), an IP address",
    )
    heartbeat_address = forms.CharField(
        label="Heartbeat address",
        required=False,
        max_length=45,
        help_text="Corosync link 1 (private heartbeat network), an IP address",
    )

    def __init__(self, *args, has_password: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.has_password = has_password

    def clean_hostname(self):
        hostname = self.cleaned_data["hostname"].strip()
        _problem(names.hostname_problem, hostname)
        return hostname

    def clean_nids(self):
        nids = [nid.strip() for nid in self.cleaned_data["nids"].split(",") if nid.strip()]
        if not nids:
            raise ValidationError("give at least one NID")
        for nid in nids:
            _problem(names.nid_problem, nid)
        if len(set(nids)) != len(nids):
            raise ValidationError("the same NID is listed twice")
        return nids

    def clean_bmc(self):
        bmc = self.cleaned_data["bmc"].strip()
        _problem(names.bmc_problem, bmc)
        return bmc

    def clean_bmc_user(self):
        user = self.cleaned_data["bmc_user"].strip()
        _problem(names.fence_user_problem, user)
        return user

    def clean_pdu_outlet(self):
        outlet = self.cleaned_data["pdu_outlet"].strip()
        _problem(names.pdu_outlet_problem, outlet)
        return outlet

    def clean_mgmt_address(self):
        return self._link_address("mgmt_address")

    def clean_heartbeat_address(self):
        return self._link_address("heartbeat_address")

    def _link_address(self, field: str) -> str:
        address = self.cleaned_data[field].strip()
        if address:
            _problem(names.link_address_problem, address)
        return address

    def clean(self):
        cleaned = super().clean()
        mgmt, heartbeat = cleaned.get("mgmt_address"), cleaned.get("heartbeat_address")
        if mgmt and mgmt == heartbeat:
            self.add_error(
                "heartbeat_address",
                "is also the management address: the two links must be on different networks",
            )
        elif bool(mgmt) != bool(heartbeat):
            missing = "heartbeat_address" if mgmt else "mgmt_address"
            self.add_error(missing, "give both link addresses, or neither")
        return cleaned

    def clean_bmc_password(self):
        password = self.cleaned_data["bmc_password"]
        if not password and not self.has_password:
            raise ValidationError("Pacemaker fences through the BMC: its password is needed")
        if password:
            _problem(names.fence_password_problem, password)
        return password


def _model_choices(controller: bool, mdt: bool = False) -> list[tuple[str, str]]:
    choices = []
    for model in MODELS.values():
        if model.is_controller != controller:
            continue
        is_mdt_shape = model.drawers == 1
        if controller and is_mdt_shape != mdt:
            continue
        choices.append((model.name, f"{model.name}: {model.description}"))
    return choices


class ManagementFields(forms.Form):
    """The array's two controllers' management addresses, for the array collector on this
    management server (empty: the servers read the array through SMcli, as before), and the
    monitor account's password (one typed for the step's arrays; each array keeps its own, which
    the admin can change)."""

    management_a = forms.CharField(
        label="Controller A management address",
        required=False,
        max_length=261,
        help_text="host or host:port (8443 if none); empty: read through SMcli",
    )
    management_b = forms.CharField(
        label="Controller B management address", required=False, max_length=261
    )

    def clean_management_a(self):
        return self._address("management_a")

    def clean_management_b(self):
        return self._address("management_b")

    def _address(self, field: str) -> str:
        address = self.cleaned_data[field].strip()
        if address:
            _problem(names.controller_address_problem, address)
        return address

    def clean(self):
        data = super().clean()
        a, b = data.get("management_a"), data.get("management_b")
        if a is not None and b is not None:
            if bool(a) != bool(b):
                missing = "management_b" if a else "management_a"
                self.add_error(missing, "give both controllers' addresses, or neither")
            elif a and a.lower() == b.lower():
                self.add_error("management_b", "controller B's address must differ from A's")
        return data

    def management_spec(self) -> dict:
        data = self.cleaned_data
        if not data.get("management_a"):
            return {}
        return {"management": [data["management_a"], data["management_b"]]}


def management_initial(entry: dict) -> dict:
    """The form fields of a spec's ``management`` list."""
    a, b = (entry.get("management") or ["", ""])[:2]
    return {"management_a": a, "management_b": b}


class MonitorPasswordField(forms.CharField):
    def __init__(self) -> None:
        super().__init__(
            label="Arrays' monitor password",
            required=False,
            strip=False,  # kept exactly as typed, as the BMC passwords
            widget=forms.PasswordInput(render_value=False),
            help_text="the read-only 'monitor' account of this step's arrays, kept encrypted "
            "per array; leave empty to keep the one entered before",
        )


def check_monitor_password(password: str) -> str:
    if password:
        _problem(names.monitor_password_problem, password)
    return password


class MdtArrayForm(ManagementFields):
    name = forms.CharField(max_length=32, label="Array name")
    controller = forms.ChoiceField(label="Model", choices=lambda: _model_choices(True, mdt=True))
    drive_tb = forms.DecimalField(
        label="Drive size (TB)", min_value=0.1, max_value=100, decimal_places=2
    )
    monitor_password = MonitorPasswordField()

    def clean_name(self):
        return _array_name(self.cleaned_data["name"])

    def clean_monitor_password(self):
        return check_monitor_password(self.cleaned_data["monitor_password"])


def _array_name(name: str) -> str:
    _problem(names.unit_name_problem, name)
    if StorageArray.objects.filter(name=name).exists():
        raise ValidationError(f"an array named {name!r} exists already")
    return name


class LayoutForm(forms.Form):
    segment_kib = forms.TypedChoiceField(
        label="Segment size",
        coerce=int,
        choices=[(size, f"{size} KiB") for size in SEGMENT_SIZES_KIB],
        help_text="128 KiB by default; 512 KiB favours large sequential I/O",
    )
    first_ost_index = forms.IntegerField(label="First OST index", min_value=0, max_value=65535)
    monitor_password = MonitorPasswordField()

    def clean_monitor_password(self):
        return check_monitor_password(self.cleaned_data["monitor_password"])


class ArrayForm(ManagementFields):
    name = forms.CharField(max_length=32, label="Array name")
    controller = forms.ChoiceField(
        label="Controller enclosure", choices=lambda: _model_choices(True)
    )
    expansion_model = forms.ChoiceField(
        label="Expansion enclosures",
        required=False,
        choices=lambda: [("", "none")] + _model_choices(False),
    )
    expansion_count = forms.IntegerField(label="How many", min_value=0, max_value=7, initial=1)
    drive_tb = forms.DecimalField(
        label="Drive size (TB)", min_value=0.1, max_value=100, decimal_places=2
    )
    global_spares = forms.IntegerField(
        label="Global hot spares",
        min_value=0,
        required=False,
        help_text="empty: the model's default (4 for an 84-drive enclosure, else 0)",
    )

    def clean_name(self):
        return _array_name(self.cleaned_data["name"])

    def clean(self):
        data = super().clean()
        if data.get("expansion_count") and not data.get("expansion_model"):
            self.add_error("expansion_model", "choose the expansion model, or set how many to 0")
        return data

    def to_spec(self) -> dict:
        data = self.cleaned_data
        count = data["expansion_count"] if data.get("expansion_model") else 0
        entry = {
            "name": data["name"],
            "controller": data["controller"],
            "expansions": [data["expansion_model"]] * count,
            "drive_tb": float(data["drive_tb"]),
        }
        if data.get("global_spares") is not None:
            entry["global_spares"] = data["global_spares"]
        entry.update(self.management_spec())
        return entry


ArrayFormSet = forms.formset_factory(
    ArrayForm, extra=0, min_num=1, max_num=8, validate_min=True, validate_max=True
)
