"""The kernel log search's filter: each field checked on the way in, a bad one named with its
reason; the values reach InfluxQL only quoted (``metrics.influxql.kernel``)."""

from __future__ import annotations

import re

from django import forms

from metrics.influxql.kernel import LineFilter
from provisioning import names
from sensors import schema
from sensors.kmsg import SEVERITIES

# Lustre's console message numbers: two hexadecimal parts (`11-0`, `167-0`).
MESSAGE_NUMBER = re.compile(r"[0-9a-f]{1,4}-[0-9a-f]{1,4}")
# The windows the search offers, in seconds.
WINDOWS = (
    ("1h", "the last hour", 3600),
    ("6h", "the last 6 hours", 6 * 3600),
    ("24h", "the last 24 hours", 24 * 3600),
    ("7d", "the last 7 days", 7 * 24 * 3600),
)  # the kernel lines are kept as long as the raw points: 7 days (influxdb_setup)
# The years an `until` may name (InfluxDB keeps times up to 2262).
FIRST_YEAR, LAST_YEAR = 2000, 2200
WINDOW_SECONDS = {key: seconds for key, _label, seconds in WINDOWS}


class KernelLogFilter(forms.Form):
    server = forms.CharField(required=False, max_length=253, label="Server")
    target = forms.CharField(
        required=False, max_length=32, label="Target", help_text="an OST or MDT: scratch-OST0003"
    )
    message_number = forms.CharField(
        required=False, max_length=9, label="Message number", help_text="as Lustre prints it: 11-0"
    )
    severity = forms.ChoiceField(
        choices=[("", "any")] + [(s, f"{s} or worse") for s in SEVERITIES],
        required=False,
        label="Severity",
    )
    window = forms.ChoiceField(
        choices=[(key, label) for key, label, _s in WINDOWS], required=False, label="Window"
    )
    until = forms.DateTimeField(
        required=False,
        label="Until",
        help_text="the appliance's time; empty: now",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
        input_formats=["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S"],
    )

    def clean_server(self) -> str:
        value = self.cleaned_data["server"].strip().lower()
        if value and (problem := names.hostname_problem(value)):
            raise forms.ValidationError(problem)
        return value

    def clean_target(self) -> str:
        value = self.cleaned_data["target"].strip()
        if value and not names.TARGET_LABEL.fullmatch(value):
            raise forms.ValidationError(
                f"{value!r} is not an OST or MDT name: the filesystem, a hyphen, then OST or MDT "
                "and four lowercase hexadecimal digits (scratch-OST0003)"
            )
        return value

    def clean_message_number(self) -> str:
        value = self.cleaned_data["message_number"].strip().lower()
        if value and not MESSAGE_NUMBER.fullmatch(value):
            raise forms.ValidationError(
                f"{value!r} is not a Lustre message number: two hexadecimal parts joined by a "
                "hyphen (11-0, 167-0)"
            )
        return value

    def clean_until(self):
        value = self.cleaned_data["until"]
        if value is not None and not FIRST_YEAR <= value.year <= LAST_YEAR:
            raise forms.ValidationError(
                f"{value.year} is outside the years a kernel line can carry "
                f"({FIRST_YEAR} to {LAST_YEAR})"
            )
        return value

    def line_filter(self) -> LineFilter:
        data = self.cleaned_data
        fs, ident = schema.split_label(data["target"]) if data["target"] else ("", "")
        return LineFilter(
            servers=(data["server"],) if data["server"] else (),
            fs=fs,
            targets=(ident,) if ident else (),
            message_number=data["message_number"],
            severity=data["severity"],
        )

    def span(self, now: float) -> tuple[float, float]:
        """(since, until) in seconds: the window that ends at ``until`` (now by default)."""
        until = self.cleaned_data.get("until")
        end = until.timestamp() if until else now  # aware: the appliance's time zone
        return end - WINDOW_SECONDS[self.cleaned_data.get("window") or "24h"], end
