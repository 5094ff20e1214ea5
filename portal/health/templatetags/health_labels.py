"""Template filters on the metric schema's labels, so a template applies the schema's rule
rather than its own string test."""

from __future__ import annotations

from django import template

from sensors import schema

register = template.Library()


@register.filter
def is_mgs_label(name: str) -> bool:
    """The MGT's `<fs>-MGS`: it has no drill-down page of its own."""
    return schema.is_mgs_label(str(name))
