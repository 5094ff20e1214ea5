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
    down = {"server:oss03"}
    carried = {"target:scratch-OST0004": "server:oss03"}
    mails, inhibited = fold(pending, carried, down, announced=down)
    assert mails == []
    assert inhibited == [("target:scratch-OST0004", "ost4 on partner", "server:oss03")]


def test_nothing_folds_while_every_server_is_up():
    pending = [("target:a", 1), ("target:b", 2)]
    mails, inhibited = fold(pending, {"target:a": "server:x"}, set())
    assert [m.key for m in mails] == ["target:a", "target:b"] and inhibited == []


def test_a_second_rule_about_an_object_folds_into_its_first_a_down_server_s_later_is_inhibited():
    pending = [("server:oss03", "oss03 red"), ("server:oss03", "oss03 sensor silent")]
    mails, inhibited = fold(pending, {}, {"server:oss03"})
    assert [(m.transition, m.folded) for m in mails] == [("oss03 red", ["oss03 sensor silent"])]
    later = [("server:oss03", "oss03 sensor silent")]
    mails, inhibited = fold(later, {}, {"server:oss03"}, announced={"server:oss03"})
    assert mails == [] and inhibited == [("server:oss03", "oss03 sensor silent", "server:oss03")]


def test_a_down_server_nobody_announced_does_not_swallow_its_targets_mail():
    pending = [("target:a", "a on partner")]
    mails, inhibited = fold(pending, {"target:a": "server:x"}, {"server:x"})
    assert [m.key for m in mails] == ["target:a"] and inhibited == []


def test_two_rules_about_one_target_in_one_round_are_one_mail():
    pending = [("target:a", "a red"), ("target:b", "b full"), ("target:a", "a degraded")]
    mails, _ = fold(pending, {}, set())
    assert [(m.key, m.transition, m.folded) for m in mails] == [
        ("target:a", "a red", ["a degraded"]),
        ("target:b", "b full", []),
    ]
