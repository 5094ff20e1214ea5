"""Silences and inhibition on hand-made objects: who gets which mail."""

from __future__ import annotations

from portal.alerts.routing import Window, fold, silencing

OST3 = ["target:scratch-OST0003", "ssu:ssu01", "filesystem:scratch"]
OSS3 = ["server:oss03", "pair:ssu02", "ssu:ssu02", "filesystem:scratch"]


def test_a_silence_on_an_ssu_covers_its_targets_within_its_time_range_only():
    window = Window("ssu:ssu01", starts=100, ends=200, reason="drive swap")
    assert silencing([window], OST3, 150) is window
    assert silencing([window], OST3, 99) is None
    assert silencing([window], OST3, 200) is None  # the end is not included
    assert silencing([window], OSS3, 150) is None  # another SSU


def test_a_filesystem_silence_covers_every_object_in_it():
    window = Window("filesystem:scratch", 0, 10)
    assert silencing([Window("server:oss01", 0, 10), window], OSS3, 5) is window


def test_targets_and_sensor_of_a_down_server_fold_into_its_one_mail():
    pending = [
        ("target:scratch-OST0004", "ost4 on partner"),
        ("server:oss03", "oss03 down"),
        ("sensor:oss03", "sensor silent"),
        ("target:scratch-OST0000", "ost0 full"),
        ("target:scratch-OST0006", "ost6 on partner"),
    ]
    carried = {
        "target:scratch-OST0004": "server:oss03",
        "target:scratch-OST0006": "server:oss03",
        "sensor:oss03": "server:oss03",
        "target:scratch-OST0000": "server:oss01",
    }
    mails, inhibited = fold(pending, carried, {"server:oss03"})
    assert [(m.key, m.transition, m.folded) for m in mails] == [
        ("server:oss03", "oss03 down", ["ost4 on partner", "sensor silent", "ost6 on partner"]),
        ("target:scratch-OST0000", "ost0 full", []),
    ]
    assert inhibited == []


def test_carried_objects_of_a_server_already_announced_are_inhibited_not_mailed():
    pending = [("target:scratch-OST0004", "ost4 on partner")]
    mails, inhibited = fold(pending, {"target:scratch-OST0004": "server:oss03"}, {"server:oss03"})
    assert mails == []
    assert inhibited == [("target:scratch-OST0004", "ost4 on partner", "server:oss03")]


def test_nothing_folds_while_every_server_is_up():
    pending = [("target:a", 1), ("target:b", 2)]
    mails, inhibited = fold(pending, {"target:a": "server:x"}, set())
    assert [m.key for m in mails] == ["target:a", "target:b"] and inhibited == []
