"""The "metrics unavailable since …" banner of the pages that show metrics, from the record
``portal.influxdb`` keeps of InfluxDB's outage (no request to InfluxDB for it)."""

from __future__ import annotations

from django import template

from portal import influxdb as influx

register = template.Library()


@register.inclusion_tag("health/_metrics_unavailable.html")
def metrics_unavailable() -> dict:
    return {"message": influx.unavailable_message()}
