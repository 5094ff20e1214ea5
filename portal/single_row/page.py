"""A page of settings kept in one row (the health thresholds, the analytics settings, the
retention of history): every role reads it, administrators change it."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render

from portal.accounts.choices import Role
from portal.accounts.services import has_role


def single_row_settings(
    request, form_class, row, *, template: str, saved: str, name: str, context: dict | None = None
):
    """Show ``row`` in ``form_class``; on a valid POST by an administrator save it, say
    ``saved`` and go back to the URL ``name``. ``context(form)`` adds to the page."""
    can_change = has_role(request.user, Role.ADMIN)
    form = form_class(instance=row)
    if request.method == "POST":
        if not can_change:
            raise PermissionDenied("only administrators change these settings")
        form = form_class(request.POST, instance=row)
        if form.is_valid():
            form.save()
            messages.success(request, saved)
            return redirect(name)
    if not can_change:
        for field in form.fields.values():
            field.disabled = True
    extra = context(form) if context else {}
    return render(request, template, {"form": form, "can_change": can_change, **extra})
