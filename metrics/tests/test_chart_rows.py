"""A per-OST or per-OSS bar chart draws every row of a small rack and the top rows of a large
one (metrics.chart_rows)."""

from __future__ import annotations

from metrics.chart_rows import ALL_UP_TO, SHOWN, spread, top_and_rest, top_bars


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


def test_the_analytics_bars_of_200_osss_are_the_busiest_and_the_others_mean():
    servers = [
        {"server": f"oss{n:03d}", "share": 0.5 if n != 77 else 2.0, "url": f"/s/{n}/"}
        for n in range(200)
    ]
    bars = top_bars(servers, "server", "share")
    assert bars["labels"][0] == "oss077" and bars["links"][0] == "/s/77/"
    assert len(bars["labels"]) == SHOWN + 1 and bars["others"] == 200 - SHOWN
    assert (bars["labels"][-1], bars["values"][-1], bars["links"][-1]) == (
        "184 others (mean)",
        0.5,
        "",
    )
    few = top_bars(servers[:2], "server", "share")
    assert few == {
        "labels": ["oss000", "oss001"],
        "values": [0.5, 0.5],
        "links": ["/s/0/", "/s/1/"],
        "others": 0,
    }
