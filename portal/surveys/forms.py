"""The form that starts a survey. The checks that name a field are the service's
(``services.parameters_of`` and ``targets_to_survey``), shared with the API and the command."""

from __future__ import annotations

from django import forms

from portal.surveys import choices
from portal.surveys.choices import Scope
from portal.surveys.services import osts_of


def _range(label: str, values, name: str) -> forms.TypedChoiceField:
    """One end of a range the script doubles through, starting at the acceptance value."""
    return forms.TypedChoiceField(
        label=label,
        coerce=int,
        choices=[(value, str(value)) for value in values],
        initial=choices.ACCEPTANCE[name],
    )


class SurveyForm(forms.Form):
    scope = forms.ChoiceField(choices=Scope.choices, initial=Scope.SSU, widget=forms.RadioSelect)
    server = forms.ChoiceField(required=False, help_text="for one OSS: the OSTs mounted on it now")
    targets = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 8}), help_text="for chosen OSTs"
    )
    size_mb = forms.IntegerField(
        label="Size per OST (MB)",
        initial=choices.ACCEPTANCE["size_mb"],
        help_text="written and read per OST and test; too small a size gives SHORT",
    )
    rsz_lo_kib = _range("Record size from (KiB)", choices.RECORD_SIZES_KIB, "rsz_lo_kib")
    rsz_hi_kib = _range("to (KiB)", choices.RECORD_SIZES_KIB, "rsz_hi_kib")
    thr_lo = _range("Threads per OST from", choices.POWERS, "thr_lo")
    thr_hi = _range("to", choices.POWERS, "thr_hi")
    obj_lo = _range("Objects per OST from", choices.POWERS, "obj_lo")
    obj_hi = _range("to", choices.POWERS, "obj_hi")
    tests = forms.MultipleChoiceField(
        choices=[(test, test) for test in choices.TESTS],
        initial=list(choices.TESTS),
        widget=forms.CheckboxSelectMultiple,
    )
    per_target = forms.BooleanField(
        label="Also survey each OST alone",
        required=False,
        initial=True,
        help_text="finds the one slow OST an aggregate hides; one short run per OST",
    )
    tolerance = forms.IntegerField(
        label="Pass at (% of the plan)",
        initial=90,
        min_value=50,
        max_value=100,
        help_text="write and read at the highest thread count",
    )
    confirm = forms.BooleanField(
        required=False, label="I understand; run the survey now", widget=forms.CheckboxInput
    )

    def __init__(self, *args, pair, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["server"].choices = [("", "—")] + [
            (host, host)
            for host in pair.servers.order_by("hostname").values_list("hostname", flat=True)
        ]
        self.fields["targets"].choices = [(t.label, t.label) for t in osts_of(pair)]
