"""Pages of the accounts app beyond Django's login: closing the guided tour."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from portal.accounts import services


@require_POST
def dismiss_tour(request):
    services.dismiss_tour(request.user)
    if request.headers.get("HX-Request"):
        return HttpResponse("")  # htmx swaps the tour out
    return redirect("health:dashboard")
