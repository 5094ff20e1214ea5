"""Forms of the alert console: each refusal names its field and the reason."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone

from portal.alerts import conditions
from portal.alerts.choices import ConditionKind, GroupBy, ScopeKind
from portal.alerts.models import MailRelaySettings, Rule, Silence, split_addresses
from portal.alerts.services.evaluation import users_with_mail
from portal.health.choices import NodeKind
from portal.health.models import HealthStatus
from sensors import schema

SCOPE_KINDS = tuple(NodeKind.values)  # filesystem, ssu, pair, server, array, target
MEASUREMENT_CHOICES = [("", "—")] + [(name, name) for name in sorted(schema.MEASUREMENTS)]
BACKTEST_DAYS = (1, 7, 30)


class RuleForm(forms.ModelForm):
    class Meta:
        model = Rule
        fields = [
            "name",
            "severity",
            "enabled",
            "condition",
            "health_state",
            "measurement",
            "field",
            "rate",
            "percent_of",
            "comparison",
            "threshold",
            "for_seconds",
            "clear_seconds",
            "repeat_seconds",
            "scope",
            "scope_value",
            "group_by",
            "recipients",
            "extra_addresses",
        ]
        labels = {
            "for_seconds": "For (s)",
            "clear_seconds": "Clear after (s)",
            "repeat_seconds": "Remind every (s)",
            "health_state": "Health state",
            "percent_of": "As a percentage of",
            "scope_value": "Which one",
            "extra_addresses": "Other addresses",
            "group_by": "One incident (one mail) per",
        }
        widgets = {
            "recipients": forms.CheckboxSelectMultiple,
            "extra_addresses": forms.Textarea(attrs={"rows": 2}),
        }

    # Integer fields that a browser might send negative: the model's Positive* fields refuse
    # them with a generic message; say it in the user's words.
    DURATIONS = ("for_seconds", "clear_seconds", "repeat_seconds")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["measurement"] = forms.ChoiceField(
            choices=MEASUREMENT_CHOICES, required=False, label="Measurement"
        )
        self.fields["recipients"].queryset = users_with_mail()
        self.fields["recipients"].label_from_instance = lambda user: f"{user} <{user.email}>"
        self.fields["recipients"].error_messages["invalid_choice"] = (
            "user %(value)s cannot receive alert mail: no e-mail address, or not active"
        )
        # Rules written before grouping, by a script or a saved form, leave it out: the default.
        self.fields["group_by"].required = False
        for name in self.DURATIONS:
            self.fields[name] = forms.IntegerField(
                label=self.fields[name].label,
                help_text=self.fields[name].help_text,
                initial=0,
            )

    def clean(self):
        data = super().clean()
        condition = data.get("condition")
        for name in self.DURATIONS:
            value = data.get(name)
            if value is not None and value < 0:
                self.add_error(name, "a duration cannot be negative")
        if condition == ConditionKind.HEALTH:
            if not data.get("health_state"):
                self.add_error("health_state", "choose which health state fires the rule")
            for name in ("measurement", "field", "percent_of", "comparison"):
                data[name] = ""
            data["threshold"], data["rate"] = None, False
        elif condition in (ConditionKind.THRESHOLD, ConditionKind.NO_DATA):
            data["health_state"] = ""
            self._clean_metric(data, condition)
        elif condition in (ConditionKind.QUOTA, ConditionKind.QUOTA_DAYS):
            self._clean_owner(data, condition)
        self._clean_scope(data)
        self._clean_addresses(data)
        data["group_by"] = data.get("group_by") or GroupBy.AUTO
        return data

    def _clean_metric(self, data: dict, condition: str) -> None:
        measurement, field = data.get("measurement"), data.get("field", "").strip()
        data["field"] = field
        if not measurement:
            self.add_error("measurement", "choose the measurement of the metric schema")
            return
        if not field:
            self.add_error("field", f"name a field of {measurement}")
            return
        try:
            conditions.check_field(measurement, field)
        except ValueError as error:
            self.add_error("field", str(error))
        percent_of = data.get("percent_of", "").strip()
        data["percent_of"] = percent_of
        if percent_of:
            try:
                conditions.check_field(measurement, percent_of)
            except ValueError as error:
                self.add_error("percent_of", str(error))
            if data.get("rate"):
                self.add_error("percent_of", "a rate is not a percentage of another field")
        if condition == ConditionKind.THRESHOLD:
            if not data.get("comparison"):
                self.add_error("comparison", "choose how the value compares with the threshold")
            if data.get("threshold") is None:
                self.add_error("threshold", "give the threshold the value is compared with")
        else:
            data["comparison"], data["rate"], data["percent_of"] = "", False, ""
            threshold = data.get("threshold")
            if threshold is not None and threshold <= 0:
                self.add_error("threshold", "give the seconds without data, more than 0")

    def _clean_owner(self, data: dict, condition: str) -> None:
        for name in ("health_state", "measurement", "field", "percent_of", "comparison"):
            data[name] = ""
        data["rate"] = False
        threshold = data.get("threshold")
        if condition == ConditionKind.QUOTA:
            if threshold is None or not 0 < threshold <= 1000:
                self.add_error("threshold", "give the percent of the limit, more than 0")
        elif threshold is None or not 0 < threshold <= 366:
            self.add_error(
                "threshold", "give the days before the limit, more than 0 and at most 366"
            )
        if data.get("scope") == ScopeKind.SSU:
            self.add_error("scope", "an owner's usage is per filesystem, not per SSU")

    def _clean_scope(self, data: dict) -> None:
        scope, value = data.get("scope"), (data.get("scope_value") or "").strip()
        data["scope_value"] = value
        if scope == ScopeKind.ALL:
            data["scope_value"] = ""
        elif scope == ScopeKind.KIND:
            if value not in SCOPE_KINDS:
                self.add_error("scope_value", f"name a kind of object: {', '.join(SCOPE_KINDS)}")
        elif scope in (ScopeKind.FILESYSTEM, ScopeKind.SSU):
            kinds = (
                (NodeKind.FILESYSTEM,)
                if scope == ScopeKind.FILESYSTEM
                else (NodeKind.SSU, NodeKind.PAIR)
            )
            if not HealthStatus.objects.filter(kind__in=kinds, name=value).exists():
                self.add_error("scope_value", f"there is no {scope} named {value!r}")

    def _clean_addresses(self, data: dict) -> None:
        # One per line; the model's validator refuses what is not an address.
        data["extra_addresses"] = "\n".join(split_addresses(data.get("extra_addresses", "")))


class BacktestForm(forms.Form):
    days = forms.TypedChoiceField(
        choices=[(d, f"{d} day{'s' if d > 1 else ''}") for d in BACKTEST_DAYS],
        coerce=int,
        initial=1,
        label="Backtest over the last",
    )


class AcknowledgeForm(forms.Form):
    comment = forms.CharField(max_length=500, required=False, label="Comment")


def silence_objects() -> list[tuple[str, str]]:
    """The objects a silence can cover: filesystems, SSUs and pairs, servers, arrays."""
    rows = HealthStatus.objects.filter(
        kind__in=[k for k in NodeKind if k != NodeKind.TARGET]
    ).order_by("kind", "name")
    return [(row.key, f"{row.get_kind_display()} {row.name}") for row in rows]


class SilenceForm(forms.ModelForm):
    object_key = forms.ChoiceField(label="Object", choices=())
    hours = forms.FloatField(
        label="For (hours)", min_value=0.05, max_value=24 * 30, initial=2, required=False
    )

    class Meta:
        model = Silence
        fields = ["object_key", "starts", "ends", "reason"]
        widgets = {
            "starts": forms.DateTimeInput(attrs={"type": "datetime-local"}),
            "ends": forms.DateTimeInput(attrs={"type": "datetime-local"}),
        }
        labels = {"starts": "From", "ends": "Until"}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["object_key"].choices = silence_objects()
        self.fields["starts"].required = False
        self.fields["ends"].required = False
        self.fields["starts"].input_formats = ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S"]
        self.fields["ends"].input_formats = ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S"]

    def clean(self):
        data = super().clean()
        starts = data.get("starts") or timezone.now()
        data["starts"] = starts
        ends, hours = data.get("ends"), data.get("hours")
        if ends is None and hours:
            ends = starts + timedelta(hours=hours)
        if ends is None:
            self.add_error("ends", "give an end, or a number of hours")
        elif ends <= starts:
            self.add_error("ends", "the end must come after the start")
        data["ends"] = ends
        return data

    def save(self, commit: bool = True):
        silence = super().save(commit=False)
        silence.starts, silence.ends = self.cleaned_data["starts"], self.cleaned_data["ends"]
        silence.object_label = dict(silence_objects()).get(silence.object_key, silence.object_key)
        if commit:
            silence.save()
        return silence


class HistoryFilter(forms.Form):
    object = forms.CharField(required=False, label="Object")
    rule = forms.ModelChoiceField(Rule.objects.all(), required=False, label="Rule")
    severity = forms.ChoiceField(
        choices=[("", "any")] + [("warning", "Warning"), ("critical", "Critical")],
        required=False,
    )
    since = forms.DateTimeField(
        required=False,
        label="Opened after",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"],
    )


class MailRelayForm(forms.ModelForm):
    """Settings → Mail: the mail server. The stored password is never shown back; an empty
    password field keeps it."""

    password = forms.CharField(
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        required=False,
        strip=False,
        max_length=256,
    )
    forget_password = forms.BooleanField(
        required=False, label="Forget the stored password (the server wants none)"
    )

    field_order = ["host", "port", "use_tls", "username", "password", "forget_password"]

    class Meta:
        model = MailRelaySettings
        fields = ["host", "port", "use_tls", "username", "from_address"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["password"].help_text = (
            "a password is stored: leave empty to keep it"
            if self.instance.password_encrypted
            else "none stored"
        )

    def clean_host(self) -> str:
        return self.cleaned_data["host"].strip().lower()

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("forget_password") and cleaned.get("password"):
            self.add_error("password", "give a new password or forget the stored one, not both")
        return cleaned

    def save(self, commit: bool = True) -> MailRelaySettings:
        row = super().save(commit=False)
        if self.cleaned_data["password"]:
            row.set_password(self.cleaned_data["password"])
        elif self.cleaned_data["forget_password"]:
            row.set_password("")
        row.saved = timezone.now()
        if commit:
            row.save()
        return row
