"""Every size and count the portal prints goes through one helper (portal/web/numbers.py): sizes
in binary units with their right names, counts with thousands separators, the same in a table,
a reason or an advice."""

from __future__ import annotations

import pytest
from django.template import engines

from portal.web import numbers


@pytest.mark.parametrize(
    "value, shown",
    [
        (259_634_266_931, "241.8 GiB"),  # the analytics table and advice: one spelling
        (64 * 1024, "64 KiB"),  # not "64.0 KB"
        (5_181_805_000_000, "4.7 TiB"),  # not "5181.805 GB moved"
        (512, "512 B"),
        (0, "0 B"),
        (1024**2 - 1, "1.0 MiB"),  # not "1,024.0 KiB"
        (3 * 2**50, "3 PiB"),
        (None, "—"),
        ("not a number", "—"),
        (float("nan"), "—"),
    ],
)
def test_sizes_are_in_binary_units_named_as_such(value, shown):
    assert numbers.format_bytes(value) == shown


def test_counts_and_figures_have_thousands_separators():
    assert numbers.format_count(11_079_439) == "11,079,439"
    assert numbers.format_count(4_739_361.0) == "4,739,361"
    assert numbers.format_number(1234.56, 1) == "1,234.6"
    assert numbers.format_rate(1.5 * 2**30) == "1.5 GiB/s"
    # Any reading or limit, as few digits as it needs, never "5.3e+06".
    assert [numbers.format_figure(v) for v in (5_300_000.0, 4.25, 10, 0.5, 1234.5)] == [
        "5,300,000",
        "4.25",
        "10",
        "0.5",
        "1,234",
    ]
    # A capacity from decimal drive nameplates, in the same binary units as everything else.
    assert numbers.format_terabytes(480) == "436.6 TiB"


def test_an_alert_reason_writes_a_large_reading_for_a_person():
    from portal.alerts.conditions import describe_threshold

    said = describe_threshold(
        "kbytes_avail", 5_300_000.0, "<", 10_000_000, rate=False, percent_of=""
    )
    assert said == "kbytes_avail at 5,300,000 (< 10,000,000)"
    kept = describe_threshold("kbytes_avail", 4.0, "<", 10, rate=False, percent_of="kbytes_total")
    assert kept == "kbytes_avail at 4.0 % of kbytes_total (< 10)"


def test_every_template_has_the_filters_without_loading_them():
    template = engines["django"].from_string(
        "{{ moved|bytes }} · {{ ios|count }} I/Os · {{ rate|bytes_rate }} · "
        "{{ usable|terabytes }} · {{ share|number:2 }}"
    )
    shown = template.render(
        {"moved": 259_634_266_931, "ios": 11_079_439, "rate": 2**20, "usable": 480, "share": 1.5}
    )
    assert shown == "241.8 GiB · 11,079,439 I/Os · 1 MiB/s · 436.6 TiB · 1.50"
