"""Pages of the alerts app: the mail settings with a test mail and, in the demo, the mail the
appliance sent. Views look things up, call a service and render."""

from __future__ import annotations

from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render

from portal.accounts.choices import Role
from portal.accounts.services import has_role
from portal.alerts import mail as mail_transport
from portal.alerts.services.mail_settings import caught_mail, send_test_mail


class TestMailForm(forms.Form):
    address = forms.EmailField(label="Send a test mail to")


def _caught_dir() -> Path | None:
    return Path(settings.OSTARA_CAUGHT_MAIL_DIR) if settings.OSTARA_CAUGHT_MAIL_DIR else None


def mail_settings(request):
    """Every role sees how mail leaves the appliance; administrators send the test mail."""
    can_send = has_role(request.user, Role.ADMIN)
    form = TestMailForm(initial={"address": request.user.email})
    if request.method == "POST":
        if not can_send:
            raise PermissionDenied("only administrators send test mail")
        form = TestMailForm(request.POST)
        if form.is_valid():
            address = form.cleaned_data["address"]
            try:
                send_test_mail(address)
            except (ValueError, mail_transport.MailError) as error:
                form.add_error("address", str(error))
            else:
                messages.success(request, f"Test mail sent to {address}.")
                return redirect("alerts:mail")
    caught = _caught_dir()
    return render(
        request,
        "alerts/mail.html",
        {
            "form": form,
            "can_send": can_send,
            "caught": caught_mail(caught) if caught else None,
            "settings": settings,
        },
    )


def caught_message(request, key: str):
    caught = _caught_dir()
    message = next((m for m in caught_mail(caught) if m.key == key), None) if caught else None
    if message is None:
        raise Http404("no such message")
    return render(request, "alerts/caught_message.html", {"message": message})
