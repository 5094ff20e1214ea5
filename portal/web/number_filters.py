"""Template filters on ``portal.web.numbers``: loaded in every template (the settings' template
``builtins``), so a page writes ``{{ job.bytes|bytes }}`` and ``{{ row.ios|count }}`` and
never Django's ``filesizeformat`` (binary sizes labelled "KB", "GB") or a bare number."""

from __future__ import annotations

from django import template

from portal.web import numbers

register = template.Library()


@register.filter(name="bytes")
def bytes_filter(value, digits: int = 1) -> str:
    """``{{ 259634266931|bytes }}`` → "241.8 GiB"."""
    return numbers.format_bytes(value, int(digits))


@register.filter
def bytes_rate(value, digits: int = 1) -> str:
    """``{{ rate|bytes_rate }}`` → "1.2 GiB/s"."""
    return numbers.format_rate(value, int(digits))


@register.filter
def count(value) -> str:
    """``{{ 11079439|count }}`` → "11,079,439"."""
    return numbers.format_count(value)


@register.filter
def number(value, digits: int = 1) -> str:
    """``{{ 1234.56|number:1 }}`` → "1,234.6"."""
    return numbers.format_number(value, int(digits))


@register.filter
def terabytes(value, digits: int = 1) -> str:
    """``{{ capacity.usable_tb|terabytes }}`` (decimal TB) → "436.6 TiB"."""
    return numbers.format_terabytes(value, int(digits))
