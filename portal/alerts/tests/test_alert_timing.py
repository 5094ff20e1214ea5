"""The alert timing (for, clear-for, repeat) on hand-made observations, and the replay command
that other tools read: its input checks and its exact output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from portal.alerts.engine import EventState, Timing, observe, replay
from portal.alerts.replay import InputError, main, parse_observations

ROOT = Path(__file__).resolve().parents[3]


def kinds(observations, **timing):
    return [(n.t, n.object, n.kind) for n in replay(observations, Timing(**timing))]


def test_fires_once_the_condition_has_held_for_its_duration():
    seen = [(t, "ost1", True) for t in range(0, 50, 10)]
    # true since 0: 30 s have passed at t=30, not at t=20
    assert kinds(seen, for_seconds=30) == [(30, "ost1", "firing")]


def test_a_false_observation_restarts_the_for_duration():
    seen = [
        (0, "x", True),
        (10, "x", True),
        (20, "x", False),
        (30, "x", True),
        (40, "x", True),
        (50, "x", True),
    ]
    assert kinds(seen, for_seconds=20) == [(50, "x", "firing")]


def test_for_zero_fires_at_the_first_true_observation_and_clear_zero_resolves_at_the_first_false():
    seen = [(0, "x", False), (5, "x", True), (6, "x", True), (7, "x", False), (8, "x", False)]
    assert kinds(seen) == [(5, "x", "firing"), (7, "x", "resolved")]


def test_reminders_every_repeat_while_firing_measured_from_the_last_mail():
    seen = [(t, "x", True) for t in range(0, 100, 10)]
    # fires at 0; reminders at 30, 60, 90
    assert kinds(seen, repeat_seconds=30) == [
        (0, "x", "firing"),
        (30, "x", "reminder"),
        (60, "x", "reminder"),
        (90, "x", "reminder"),
    ]


def test_sparse_observations_give_one_reminder_and_restart_the_interval_there():
    seen = [(0, "x", True), (100, "x", True), (120, "x", True), (130, "x", True)]
    assert kinds(seen, repeat_seconds=30) == [
        (0, "x", "firing"),
        (100, "x", "reminder"),
        (130, "x", "reminder"),
    ]


def test_flapping_is_one_event_when_the_clear_duration_outlasts_the_flaps():
    seen = [(t, "x", t % 20 == 0) for t in range(0, 200, 10)]  # true, false, true, false, ...
    assert kinds(seen, clear_seconds=30) == [(0, "x", "firing")]
    # and it resolves once it stays false long enough
    seen += [(200, "x", False), (210, "x", False), (220, "x", False), (230, "x", False)]
    assert kinds(seen, clear_seconds=30)[-1] == (220, "x", "resolved")


def test_clear_duration_is_measured_from_the_first_false_observation_of_the_run():
    seen = [
        (0, "x", True),
        (10, "x", False),
        (20, "x", False),
        (30, "x", True),
        (40, "x", False),
        (50, "x", False),
        (60, "x", False),
    ]
    assert kinds(seen, clear_seconds=20) == [(0, "x", "firing"), (60, "x", "resolved")]


def test_objects_are_independent_events():
    seen = [
        (0, "a", True),
        (0, "b", False),
        (10, "a", True),
        (10, "b", True),
        (20, "a", False),
        (20, "b", True),
    ]
    assert kinds(seen, for_seconds=10) == [
        (10, "a", "firing"),
        (20, "a", "resolved"),
        (20, "b", "firing"),
    ]


def test_acknowledged_event_sends_no_reminder_but_still_resolves():
    timing = Timing(repeat_seconds=10)
    state = EventState()
    assert observe(state, 0, True, timing) == "firing"
    state.acknowledged = True
    assert [observe(state, t, True, timing) for t in (10, 20, 30)] == [None, None, None]
    assert observe(state, 40, False, timing) == "resolved"
    # a new firing is a new problem: it must be acknowledged again
    assert observe(state, 50, True, timing) == "firing"
    assert observe(state, 60, True, timing) == "reminder"


def test_state_survives_a_round_trip_through_a_dict():
    timing = Timing(for_seconds=20)
    state = EventState()
    observe(state, 0, True, timing)
    restored = EventState.from_dict(json.loads(json.dumps(state.as_dict())))
    assert observe(restored, 20, True, timing) == "firing"


def test_negative_durations_are_refused():
    with pytest.raises(ValueError, match="repeat_seconds"):
        Timing(repeat_seconds=-1)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: not JSON"),
        ('{"t": 1, "object": "x"}', "line 2: missing 'true'"),
        ('{"t": "soon", "object": "x", "true": true}', "line 2: 't' must be a number"),
        ('{"t": 1, "object": "", "true": true}', "line 2: 'object' must be a non-empty string"),
        ('{"t": 1, "object": "x", "true": 1}', "line 2: 'true' must be true or false"),
        ('{"t": 0, "object": "x", "true": true}', "line 2: t 0 is earlier than the line before"),
        ("[1, 2]", "line 2: expected an object"),
    ],
)
def test_bad_lines_are_refused_by_number(line, message):
    good = '{"t": 5, "object": "x", "true": false}'
    with pytest.raises(InputError, match=message):
        parse_observations([good, line])


def test_blank_lines_are_skipped():
    assert parse_observations(["", '{"t": 1, "object": "x", "true": true}', "  "]) == [
        (1, "x", True)
    ]


def test_the_command_prints_one_json_line_per_notification(tmp_path):
    observations = tmp_path / "obs.jsonl"
    lines = [
        {"t": 1000, "object": "scratch-OST0001", "true": True},
        {"t": 1000, "object": "oss02", "true": True},
        {"t": 1060, "object": "scratch-OST0001", "true": True},
        {"t": 1060, "object": "oss02", "true": False},
        {"t": 1120, "object": "scratch-OST0001", "true": True},
        {"t": 1180, "object": "scratch-OST0001", "true": False},
        {"t": 1240, "object": "scratch-OST0001", "true": False},
    ]
    observations.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "portal.alerts.replay",
            "--for",
            "60",
            "--clear-for",
            "60",
            "--repeat",
            "60",
            str(observations),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert printed == [
        {"t": 1060, "object": "scratch-OST0001", "kind": "firing"},
        {"t": 1120, "object": "scratch-OST0001", "kind": "reminder"},
        {"t": 1180, "object": "scratch-OST0001", "kind": "reminder"},
        {"t": 1240, "object": "scratch-OST0001", "kind": "resolved"},
    ]


def test_the_command_names_the_bad_line_and_prints_nothing(tmp_path, capsys):
    observations = tmp_path / "obs.jsonl"
    observations.write_text('{"t": 1, "object": "x", "true": true}\n{"t": 2, "object": "x"}\n')
    assert main(["--for", "0", str(observations)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "line 2: missing 'true'" in captured.err


def test_the_command_refuses_negative_seconds(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--repeat", "-5", str(tmp_path / "none")])
    assert exit_info.value.code == 2
    assert "--repeat" in capsys.readouterr().err
