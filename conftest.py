"""How `make test` shares its pytest-xdist processes (deploy/test.sh, --dist loadgroup).

A module marked `rack(seconds=N)` starts a virtual rack, a real cluster, playbooks or a demo:
minutes of mostly waiting, and a CPU that must stay free enough for the rack's clock and
sensors to keep time. Such modules go into OSTARA_TEST_RACKS groups (default 2), balanced by
their `seconds` (about what the module takes on a quiet machine), and each group runs in one
process, one module after the other, while the other processes take the remaining tests one
by one. The groups come first in the run, so the longest work starts at once. Without
pytest-xdist the marks change nothing but the order.
"""

from __future__ import annotations

import os

import pytest

RACK_SECONDS = 60  # a `rack` mark without its seconds
LIGHT_NICENESS = 10


def _rack_groups(items: list[pytest.Item]) -> dict[object, int]:
    """Module path -> group, the heaviest module first into the lightest group."""
    groups = max(1, int(os.environ.get("OSTARA_TEST_RACKS", "2")))
    weights: dict[object, float] = {}
    for item in items:
        marker = item.get_closest_marker("rack")
        if marker is not None:
            seconds = marker.kwargs.get("seconds", RACK_SECONDS)
            weights[item.path] = max(weights.get(item.path, 0), seconds)
    loads = [0.0] * groups
    placed = {}
    for path, seconds in sorted(weights.items(), key=lambda kv: (-kv[1], str(kv[0]))):
        group = loads.index(min(loads))
        loads[group] += seconds
        placed[path] = group
    return placed


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """The groups' marks, before pytest-xdist reads them (its own hook names the groups)."""
    placed = _rack_groups(items)
    for item in items:
        if item.path in placed:
            item.add_marker(pytest.mark.xdist_group(f"racks-{placed[item.path]}"))


class _RacksFirst:
    """The groups first, each module's tests together and in their order; the rest after, in
    the order pytest-django left them. Last of the ordering hooks."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        placed = _rack_groups(items)
        first: dict[object, int] = {}
        for index, item in enumerate(items):
            first.setdefault(item.path, index)
        items.sort(
            key=lambda item: (
                (0, placed[item.path], first[item.path]) if item.path in placed else (1, 0, 0)
            )
        )


def pytest_configure(config):
    config.pluginmanager.register(_RacksFirst(), "ostara-racks-first")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """In a process of several, the tests outside the rack groups (and what they start) at a
    lower CPU priority than the racks: a rack's clock and sensors keep time while fuzz tests,
    pages and browsers take what CPU is left. Raising it back needs root; elsewhere the
    process stays where it is."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    wanted = 0 if item.get_closest_marker("rack") else LIGHT_NICENESS
    try:
        os.setpriority(os.PRIO_PROCESS, 0, wanted)
    except OSError:
        pass
