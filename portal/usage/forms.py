"""The form of the id -> name maps: each refusal names its field and the reason."""

from __future__ import annotations

from django import forms

from portal.usage import maths
from portal.usage.choices import GETENT_DATABASES, NamedKind

MAX_UPLOAD_BYTES = 16 * 2**20


class NamesForm(forms.Form):
    """Upload a ``getent passwd``/``getent group`` output (pasted or as a file), or read the
    management server's own NSS."""

    kind = forms.ChoiceField(choices=NamedKind.choices, label="Names of")
    source = forms.ChoiceField(
        choices=[("upload", "the getent output below"), ("nss", "this server's NSS")],
        label="From",
        initial="upload",
    )
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        required=False,
        label="getent output",
        help_text="the output of `getent passwd` for users, `getent group` for groups",
    )
    upload = forms.FileField(required=False, label="or a file of it")

    def clean(self):
        data = super().clean()
        if data.get("source") != "upload" or not data.get("kind"):
            return data
        upload = data.get("upload")
        text = data.get("text") or ""
        if upload is not None:
            if upload.size > MAX_UPLOAD_BYTES:
                self.add_error("upload", f"at most {MAX_UPLOAD_BYTES // 2**20} MiB")
                return data
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                self.add_error("upload", "not UTF-8 text: the output of getent")
                return data
        elif len(text) > MAX_UPLOAD_BYTES:
            self.add_error("text", f"at most {MAX_UPLOAD_BYTES // 2**20} MiB: upload it as a file")
            return data
        field = "upload" if upload is not None else "text"
        data["repeats"] = []
        try:
            data["names"] = maths.parse_getent(
                text, GETENT_DATABASES[data["kind"]], data["repeats"]
            )
        except maths.GetentError as error:
            self.add_error(field, str(error))
        return data
