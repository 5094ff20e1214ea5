from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from portal.health.services import check_all


@require_GET
@never_cache
@login_not_required
def healthz(request):
    """For load balancers and monitoring: 200 when every service answers, 503 naming the rest."""
    states = check_all()
    down = [state.name for state in states if not state.ok]
    body = {
        "status": "ok" if not down else "unavailable",
        "down": down,
        "services": {state.name: state.as_dict() for state in states},
    }
    return JsonResponse(body, status=200 if not down else 503)


def dashboard(request):
    return render(request, "health/dashboard.html", {"services": check_all()})


def service_panel(request):
    """The service tiles alone, for the dashboard's periodic refresh."""
    return render(request, "health/_services.html", {"services": check_all()})
