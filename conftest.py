"""How `make test` shares its pytest-xdist processes (deploy/test.sh).

A module marked `rack(seconds=N)` starts a virtual rack, a real cluster, playbooks or a demo:
minutes of mostly waiting, and a CPU that must stay free enough for the rack's clock and
sensors to keep time. Such modules go into OSTARA_TEST_RACKS groups (default 2), balanced by
their `seconds` (about what the module took in make test's four processes); each group runs in one
process, one module after the other, while the other processes take the remaining tests one
by one, at a lower CPU priority. The groups come first in the run, so the longest work starts
at once. Without pytest-xdist the marks change nothing but the order.

The workers collect, the controller schedules (it collects nothing): each worker writes the
groups it computed from the marks to OSTARA_TEST_WORKERS_DIR/racks.json, which the scheduler
reads once every worker has collected. (pytest-xdist's own `--dist loadgroup` does the same
with `xdist_group` marks, but its renaming of the tests does not take on pytest 9.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

RACK_SECONDS = 60  # a `rack` mark without its seconds
LIGHT_NICENESS = 10
GROUPS_FILE = "racks.json"


def _module(nodeid: str) -> str:
    """The module part of a test's node id: what a group is made of."""
    return nodeid.split("::")[0]


def _rack_groups(items: list[pytest.Item]) -> dict[str, int]:
    """Module node id -> group, the heaviest module first into the lightest group."""
    groups = max(1, int(os.environ.get("OSTARA_TEST_RACKS", "2")))
    weights: dict[str, float] = {}
    for item in items:
        marker = item.get_closest_marker("rack")
        if marker is not None:
            module = _module(item.nodeid)
            seconds = marker.kwargs.get("seconds", RACK_SECONDS)
            weights[module] = max(weights.get(module, 0), seconds)
    loads = [0.0] * groups
    placed = {}
    for module, seconds in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0])):
        group = loads.index(min(loads))
        loads[group] += seconds
        placed[module] = group
    return placed


class _RacksFirst:
    """The groups first, each module's tests together and in their order; the rest after, in
    the order pytest-django left them. The last of the ordering hooks."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        placed = _rack_groups(items)
        first: dict[str, int] = {}
        for index, item in enumerate(items):
            first.setdefault(_module(item.nodeid), index)

        def order(item):
            module = _module(item.nodeid)
            return (0, placed[module], first[module]) if module in placed else (1, 0, 0)

        items.sort(key=order)
        folder = os.environ.get("OSTARA_TEST_WORKERS_DIR")
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        if folder and worker:
            path = Path(folder) / GROUPS_FILE
            written = path.with_name(f".{worker}.{GROUPS_FILE}")
            written.write_text(json.dumps(placed))
            written.replace(path)  # every worker writes the same; none reads half of one


def pytest_configure(config):
    config.pluginmanager.register(_RacksFirst(), "ostara-racks-first")


def pytest_xdist_make_scheduler(config, log):
    """Under deploy/test.sh: a rack group is one unit of work, any other test one of its own."""
    folder = os.environ.get("OSTARA_TEST_WORKERS_DIR")
    if not folder:
        return None
    from xdist.scheduler import LoadScopeScheduling

    class RackGroups(LoadScopeScheduling):
        groups: dict[str, int] | None = None

        def schedule(self):
            if self.groups is None and self.collection_is_completed:
                path = Path(folder) / GROUPS_FILE
                self.groups = json.loads(path.read_text()) if path.exists() else {}
            super().schedule()

        def _split_scope(self, nodeid):
            group = (self.groups or {}).get(_module(nodeid))
            return nodeid if group is None else f"racks-{group}"

    return RackGroups(config, log)


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
