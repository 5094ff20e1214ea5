"""Silences (maintenance windows) on hand-made objects: which alerts they cover, and when."""

from __future__ import annotations

from portal.alerts.routing import Window, silencing

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
