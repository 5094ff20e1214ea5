"""``{% target_owners target %}``: whose data fills a target (its top users, groups and
projects with their share of its data), for the target page of ``portal.health``, which loads
this library and knows nothing else of the usage app."""

from __future__ import annotations

import time

from django import template

from portal import influxdb as influx
from portal.usage import services
from sensors import schema

register = template.Library()


@register.inclusion_tag("usage/_target_owners.html")
def target_owners(target) -> dict:
    """``target``: an ``inventory.Target``; nothing for the MGT (it holds no owners' data)."""
    if schema.is_mgs_label(target.label):
        return {"shown": False}
    fs, name = schema.split_label(target.label)
    try:
        found = services.target_owners(fs, time.time(), target=name)
    except influx.InfluxError as error:
        return {"shown": True, "error": influx.unavailable_message(error)}
    entry = found[0] if found else None
    owners = {}
    if entry:
        owners = {
            kind: [
                {**owner, "label": services.label(owner), "space": owner["kbytes"] * 1024}
                for owner in rows
            ]
            for kind, rows in entry["owners"].items()
        }
    return {"shown": True, "entry": entry, "owners": owners, "fs": fs}
