"""``{% console_actions object %}``: the acts that apply to a server, target or array in its
state, as buttons for operators (nothing for viewers)."""

from __future__ import annotations

from django import template

from portal.accounts.choices import Role
from portal.accounts.services import has_role
from portal.console.services.cluster import available
from portal.inventory.models import Server

register = template.Library()


@register.inclusion_tag("console/_actions.html", takes_context=True)
def console_actions(context, subject=None, server: str = ""):
    """``{% console_actions object %}``, or ``{% console_actions server="oss01" %}`` where a
    page has only the server's name (the SSU's health page)."""
    if subject is None and server:
        subject = Server.objects.filter(hostname=server).first()
    request = context.get("request")
    user = getattr(request, "user", None)
    allowed = user is not None and has_role(user, Role.OPERATOR)
    return {"actions": available(subject) if allowed and subject is not None else []}
