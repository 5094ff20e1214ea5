"""A per-OST or per-OSS bar chart draws every row of a small rack and the top rows of a large
one (portal.chart_rows)."""

from __future__ import annotations

from portal.chart_rows import ALL_UP_TO, SHOWN, spread, top_and_rest


def test_a_rack_of_two_ssus_draws_every_ost_in_its_order():
    osts = [{"label": f"OST{index:04X}", "fill": index % 7} for index in range(ALL_UP_TO)]
    assert top_and_rest(osts, key=lambda ost: ost["fill"]) == (osts, [])


def test_a_large_rack_draws_its_fullest_osts_fullest_first_and_keeps_the_others():
    osts = [{"label": f"OST{index:04X}", "fill": (index * 37) % 101} for index in range(2400)]
    shown, rest = top_and_rest(osts, key=lambda ost: ost["fill"])
    assert len(shown) == SHOWN and len(rest) == 2400 - SHOWN
    assert [ost["fill"] for ost in shown] == sorted((o["fill"] for o in osts), reverse=True)[:SHOWN]
    assert sorted(shown + rest, key=lambda ost: ost["label"]) == osts
    assert rest == [ost for ost in osts if ost not in shown]


def test_the_spread_of_no_values_is_unknown():
    assert spread([]) == {"min": None, "median": None, "max": None}
    assert spread([3.0, 1.0, 2.0, 10.0]) == {"min": 1.0, "median": 2.5, "max": 10.0}
