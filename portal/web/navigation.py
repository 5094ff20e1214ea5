"""The main navigation: one entry per section of the portal, and the tools beside it."""

from __future__ import annotations

from django.urls import reverse

from portal.accounts.choices import Role
from portal.accounts.services import has_role

SECTIONS = (
    ("Dashboard", "health:dashboard"),
    ("SSUs", "inventory:ssu-list"),
    ("Analytics", "analytics:index"),
    ("Usage", "usage:index"),
    ("Surveys", "surveys:list"),
    ("Alerts", "alerts:active"),
    ("Kernel log", "health:kernel-log"),
    ("Jobs", "jobs:job-list"),
    ("Parameters", "console:parameters"),
    ("Audit", "console:audit"),
    ("Settings", "health:thresholds"),
)
TOOLS = (("API", "api-docs"),)
# The pages of the Settings section, as tabs on each of them.
SETTINGS = (
    ("Thresholds", "health:thresholds"),
    ("Mail", "alerts:mail"),
    ("Analytics", "analytics:settings"),
    ("Retention", "health:retention"),
)


def navigation(request) -> dict:
    settings_pages = [_entry(request, label, name) for label, name in SETTINGS]
    sections = [_entry(request, label, name) for label, name in SECTIONS]
    for entry in sections:
        if entry["label"] == "Settings":
            entry["active"] = any(page["active"] for page in settings_pages)
    return {
        "navigation": sections,
        "tools": [_entry(request, label, name) for label, name in TOOLS],
        "settings_pages": settings_pages,
        # The Django admin, where users and their roles are managed, is for the Admin role.
        "administers": request.user.is_authenticated and has_role(request.user, Role.ADMIN),
    }


def _entry(request, label: str, url_name: str) -> dict:
    url = reverse(url_name)
    return {"label": label, "url": url, "active": _is_active(request.path, url)}


def _is_active(path: str, url: str) -> bool:
    return path == url if url == "/" else path.startswith(url)
