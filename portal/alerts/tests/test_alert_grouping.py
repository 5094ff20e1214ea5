"""Incident groups on hand-made notifications (``portal.alerts.grouping``): when one fault's
alerts are mailed as one, and the replay command's grouping options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from portal.alerts import engine
from portal.alerts.grouping import (
    GroupState,
    GroupTiming,
    MemberNote,
    advance,
    replay_groups,
)
from portal.alerts.replay import main

ROOT = Path(__file__).resolve().parents[3]
TIMING = GroupTiming(group_wait=30, group_interval=300)


def fired(*members, repeat=0.0):
    return [MemberNote(m, engine.FIRING, repeat) for m in members]


def resolved(*members):
    return [MemberNote(m, engine.RESOLVED) for m in members]


def run(rounds, timing=TIMING, state=None):
    """``rounds``: {t: (notes, muted)}; every 10 s from the first to the last is a round, and
    the muting a round names holds until another round names its own (None: unchanged).
    Returns [(t, kind, new members)] and the state."""
    state = state or GroupState()
    mails, muted = [], {}
    for t in range(min(rounds), max(rounds) + 1, 10):
        notes, muting = rounds.get(t, ([], None))
        muted = muted if muting is None else muting
        note = advance(state, t, notes, muted, timing)
        if note:
            mails.append((t, note.kind, note.new))
    return mails, state


def test_a_server_down_with_its_twelve_targets_is_one_firing_and_one_resolution():
    targets = [f"OST{n:04x}" for n in range(12)]
    muted = {t: "muted: oss02 is down" for t in targets}
    rounds = {
        0: (fired("oss02"), {}),
        60: (fired(*targets), muted),  # "on partner" after its minute: muted by the server
        600: (resolved("oss02", *targets), {}),
    }
    mails, state = run(rounds)
    # the muted targets were never mailed alone; the resolution covers them (told of for the
    # first time there), each with how long it lasted
    assert mails == [(30, "firing", ("oss02",)), (600, "resolved", tuple(targets))]
    assert list(state.members) == ["oss02", *targets]
    assert state.members["OST0000"].duration() == 540
    assert state.members["oss02"].duration() == 600


def test_the_first_mail_waits_the_group_wait_and_lists_what_fired_meanwhile():
    mails, _ = run({0: (fired("oss02"), {}), 20: (fired("OST1", "OST2"), {}), 40: ([], {})})
    assert mails == [(30, "firing", ("oss02", "OST1", "OST2"))]


def test_members_joining_later_go_out_together_after_the_group_interval():
    rounds = {
        0: (fired("oss01"), {}),
        100: (fired("OST1"), {}),
        200: (fired("OST2"), {}),
        400: ([], {}),
    }
    mails, _ = run(rounds)
    # first mail at 30; the next no earlier than 30 + 300, with both late members
    assert mails == [(30, "firing", ("oss01",)), (330, "update", ("OST1", "OST2"))]


def test_a_muted_member_never_causes_a_mail_on_its_own():
    mails, state = run({0: (fired("OST1"), {"OST1": "silenced: drive swap"}), 900: ([], None)})
    assert mails == []
    mails, state = run({910: (resolved("OST1"), {})}, state=state)
    assert mails == [] and state.over  # and no resolution: nothing was mailed


def test_the_first_mail_waits_for_alerts_of_the_place_about_to_fire_up_to_the_interval():
    state = GroupState()
    muted = {"OST1": "muted: oss02 is down"}
    assert advance(state, 0, fired("oss02"), {}, TIMING, expecting=True) is None
    assert advance(state, 30, [], {}, TIMING, expecting=True) is None  # OST1 is pending
    note = advance(state, 60, fired("OST1"), muted, TIMING)  # its minute: it joins, muted
    assert (note.kind, note.new) == ("firing", ("oss02", "OST1"))
    # something that never fires holds the first mail no longer than the group interval
    state = GroupState()
    advance(state, 0, fired("oss02"), {}, TIMING, expecting=True)
    assert advance(state, 290, [], {}, TIMING, expecting=True) is None
    assert advance(state, 300, [], {}, TIMING, expecting=True).kind == "firing"


def test_a_muted_member_whose_cause_clears_first_is_no_news_of_its_own():
    rounds = {
        0: (fired("oss02", "OST1"), {"OST1": "muted: oss02 is down"}),
        400: (resolved("oss02"), {}),  # the server is back; OST1's clear time still runs
        460: (resolved("OST1"), {}),
    }
    mails, _ = run(rounds)
    assert mails == [(30, "firing", ("oss02", "OST1")), (460, "resolved", ())]


def test_no_resolution_without_a_firing_when_the_group_ends_within_its_wait():
    mails, state = run({0: (fired("OST1", "OST2"), {}), 20: (resolved("OST1", "OST2"), {})})
    assert mails == []
    assert state.over


def test_a_resolved_member_alone_does_not_resolve_the_group():
    rounds = {0: (fired("oss01", "OST1"), {}), 100: (resolved("OST1"), {}), 200: ([], {})}
    mails, state = run(rounds)
    assert mails == [(30, "firing", ("oss01", "OST1"))]
    assert not state.over
    mails, state = run({210: (resolved("oss01"), {})}, state=state)
    assert mails == [(210, "resolved", ())]


def test_repeats_per_group_at_the_shortest_repeat_of_its_firing_members():
    rounds = {
        0: (fired("oss01", repeat=3600) + fired("OST1", repeat=600), {}),
        1300: ([], {}),
    }
    mails, _ = run(rounds)
    assert [(t, kind) for t, kind, _ in mails] == [
        (30, "firing"),
        (630, "reminder"),
        (1230, "reminder"),
    ]


def test_a_group_whose_members_are_all_silenced_reminds_nobody():
    """Mailed, then a maintenance window silences every member: no "still firing" mail."""
    silenced = {"oss01": "silenced: BIOS update", "OST1": "silenced: BIOS update"}
    rounds = {
        0: (fired("oss01", "OST1", repeat=600), {}),
        100: ([], silenced),
        2000: ([], None),
    }
    mails, _ = run(rounds)
    assert [(t, kind) for t, kind, _ in mails] == [(30, "firing")]


def test_an_acknowledged_group_sends_no_reminders():
    mails, state = run({0: (fired("oss01", repeat=600), {}), 100: ([], {})})
    state.acknowledged = True
    mails, state = run({110: ([], {}), 2000: ([], {})}, state=state)
    assert mails == []


def test_a_member_firing_again_after_it_resolved_is_new_to_the_group():
    rounds = {
        0: (fired("oss01", "OST1"), {}),
        100: (resolved("OST1"), {}),
        200: (fired("OST1"), {}),
        340: ([], {}),
    }
    mails, _ = run(rounds)
    assert mails == [(30, "firing", ("oss01", "OST1")), (330, "update", ("OST1",))]


def test_group_timing_refuses_negative_seconds():
    with pytest.raises(ValueError, match="group_wait must not be negative"):
        GroupTiming(group_wait=-1)


def test_replay_groups_by_their_group_and_a_new_group_after_one_ended():
    observations = [
        (0, "oss02", True, "ssu01"),
        (0, "OST1", True, "ssu01"),
        (0, "OST9", True, "ssu02"),
        (10, "OST9", False, "ssu02"),
        (40, "oss02", True, "ssu01"),
        (40, "OST1", True, "ssu01"),
        (50, "oss02", False, "ssu01"),
        (50, "OST1", False, "ssu01"),
        (60, "oss02", True, "ssu01"),
        (100, "oss02", True, "ssu01"),
    ]
    notes = replay_groups(observations, engine.Timing(), TIMING)
    assert [(n.t, n.group, n.kind, n.objects) for n in notes] == [
        (40, "ssu01", "firing", ("oss02", "OST1")),
        (50, "ssu01", "resolved", ("oss02", "OST1")),
        (100, "ssu01", "firing", ("oss02",)),  # a new incident of the same place
    ]


def _lines(tmp_path, records):
    path = tmp_path / "obs.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_the_command_groups_by_a_field_and_prints_one_line_per_group_mail(tmp_path):
    records = [
        {"t": 1000, "object": "oss02", "true": True, "group": "ssu01"},
        {"t": 1000, "object": "scratch-OST0001", "true": True, "group": "ssu01"},
        {"t": 1000, "object": "mds01", "true": True},  # no group field: a group of its own
        {"t": 1030, "object": "oss02", "true": True, "group": "ssu01"},
        {"t": 1030, "object": "scratch-OST0001", "true": True, "group": "ssu01"},
        {"t": 1030, "object": "mds01", "true": True},
        {"t": 1060, "object": "scratch-OST0002", "true": True, "group": "ssu01"},
        {"t": 1100, "object": "scratch-OST0002", "true": True, "group": "ssu01"},
        {"t": 1200, "object": "oss02", "true": False, "group": "ssu01"},
        {"t": 1200, "object": "scratch-OST0001", "true": False, "group": "ssu01"},
        {"t": 1200, "object": "scratch-OST0002", "true": False, "group": "ssu01"},
        {"t": 1200, "object": "mds01", "true": False},
    ]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "portal.alerts.replay",
            "--group-by-field",
            "group",
            "--group-wait",
            "20",
            "--group-interval",
            "60",
            str(_lines(tmp_path, records)),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"t": 1030, "group": "ssu01", "kind": "firing", "objects": ["oss02", "scratch-OST0001"]},
        {"t": 1030, "group": "mds01", "kind": "firing", "objects": ["mds01"]},
        {"t": 1100, "group": "ssu01", "kind": "update", "objects": ["scratch-OST0002"]},
        {
            "t": 1200,
            "group": "ssu01",
            "kind": "resolved",
            "objects": ["oss02", "scratch-OST0001", "scratch-OST0002"],
        },
        {"t": 1200, "group": "mds01", "kind": "resolved", "objects": ["mds01"]},
    ]


def test_the_command_without_grouping_options_prints_per_object_lines_as_before(tmp_path, capsys):
    records = [
        {"t": 1, "object": "x", "true": True, "group": "g"},
        {"t": 2, "object": "x", "true": False, "group": "g"},
    ]
    assert main([str(_lines(tmp_path, records))]) == 0
    assert capsys.readouterr().out == (
        '{"t": 1, "object": "x", "kind": "firing"}\n{"t": 2, "object": "x", "kind": "resolved"}\n'
    )


def test_the_grouping_options_are_in_the_help_and_need_the_group_field(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    for option in ("--group-by-field NAME", "--group-wait S", "--group-interval S"):
        assert option in shown
    path = _lines(tmp_path, [{"t": 1, "object": "x", "true": True}])
    with pytest.raises(SystemExit):
        main(["--group-wait", "10", str(path)])
    assert "--group-wait and --group-interval need --group-by-field" in capsys.readouterr().err


def test_the_command_names_a_line_whose_group_is_not_a_name(tmp_path, capsys):
    path = _lines(tmp_path, [{"t": 1, "object": "x", "true": True, "group": 3}])
    assert main(["--group-by-field", "group", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "line 1: 'group' must be a non-empty string, not 3" in captured.err
