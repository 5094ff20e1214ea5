"""The console's forms: the options of an act, a parameter change, the audit log's filters."""

from __future__ import annotations

from django import forms

from portal.console.choices import DEFAULT_LIFETIME, MAINTENANCE_HOURS, MAX_MAINTENANCE_HOURS, Act


class ActForm(forms.Form):
    lifetime = forms.CharField(
        required=False,
        initial=DEFAULT_LIFETIME,
        max_length=20,
        help_text="how long the targets are kept off the server (ISO 8601, e.g. PT1H); "
        "afterwards they stay where they run until failed back",
    )
    hours = forms.FloatField(
        required=False,
        initial=MAINTENANCE_HOURS,
        min_value=0.25,
        max_value=MAX_MAINTENANCE_HOURS,
        help_text="the server's alerts are silenced this long",
    )
    reason = forms.CharField(required=False, max_length=200)

    def __init__(self, *args, act: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if act != Act.FAILOVER:
            del self.fields["lifetime"]
        if act != Act.MAINTENANCE_START:
            del self.fields["hours"]
            del self.fields["reason"]
        else:
            self.fields["reason"].required = True


class ParameterForm(forms.Form):
    filesystem = forms.ChoiceField()
    name = forms.CharField(
        max_length=200, help_text="as lctl names it, e.g. osc.*.max_rpcs_in_flight"
    )
    value = forms.CharField(max_length=256, required=False)
    servers = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    permanent = forms.BooleanField(
        required=False, help_text="lctl set_param -P on the MGS: every server and client, kept"
    )

    def __init__(self, *args, filesystems: list[str], servers: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["filesystem"].choices = [(name, name) for name in filesystems]
        self.fields["servers"].choices = [(name, name) for name in servers]


class AuditFilterForm(forms.Form):
    user = forms.CharField(required=False, max_length=150)
    act = forms.ChoiceField(required=False, choices=[("", "any act"), *Act.choices])
    object = forms.CharField(required=False, max_length=200, label="Object contains")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
