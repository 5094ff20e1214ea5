"""The main navigation: one entry per section, shown disabled until its app is installed."""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse

SECTIONS = (
    ("Dashboard", "health:dashboard"),
    ("SSUs", "inventory:ssu-list"),
    ("Jobs", "jobs:job-list"),
    ("Alerts", "alerts:rule-list"),
    ("Analytics", "analytics:overview"),
    ("Surveys", "surveys:survey-list"),
)


def navigation(request) -> dict:
    entries = []
    for label, url_name in SECTIONS:
        try:
            url = reverse(url_name)
        except NoReverseMatch:
            url = None
        entries.append(
            {"label": label, "url": url, "active": bool(url) and _is_active(request.path, url)}
        )
    return {"navigation": entries}


def _is_active(path: str, url: str) -> bool:
    return path == url if url == "/" else path.startswith(url)
