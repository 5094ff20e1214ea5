"""``{% guided_tour %}``: the dashboard's first-visit tour, until the user closes it."""

from __future__ import annotations

from django import template
from django.urls import NoReverseMatch, reverse

from portal.accounts.services import tour_pending

register = template.Library()


@register.inclusion_tag("accounts/_tour.html", takes_context=True)
def guided_tour(context) -> dict:
    request = context["request"]
    show = request.user.is_authenticated and tour_pending(request.user)
    return {
        "show": show,
        "csrf_token": context.get("csrf_token"),
        "mail_url": _url("alerts:mail"),
        "alerts_url": _url("alerts:active"),
        "rules_url": _url("alerts:rules"),
        "analytics_url": _url("analytics:index"),
        "striping_url": _url("analytics:view", "striping"),
    }


def _url(name: str, *args: str) -> str | None:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None
