"""The health rules: facts about the rack in, a tree of coloured nodes with reasons out.

Plain Python with no Django import, so the rules can be read, tested and benchmarked on their
own. ``services.gather_facts`` builds the facts from the inventory and the latest metrics;
``evaluate`` turns them into one tree per filesystem:

    filesystem ─┬─ pair (the MDS pair) ─┬─ server ...
                │                       ├─ array ...
                │                       └─ target (MGT, MDT) ...
                └─ ssu ─┬─ pair ── server ...
                        ├─ array ...
                        └─ target (OST) ...

Colours follow DESIGN.md §7 and the failure matrix of §2. Green is as designed; orange is
working with less margin (on the failover partner, a degraded volume group, a warning
threshold, a lost redundant path); red is lost or about to be (not mounted anywhere, a failed
volume group, a server down or silent, a critical threshold). Grey is "not in service yet"
(planned, never reported) and never makes a parent worse. A parent takes the worst colour of its
children, with two exceptions that follow from high availability: a target served by its
partner is orange, not red, and so is a pair in which one server is down while the other serves.

The rules are split by object kind: ``facts`` (what they read), ``nodes`` (the coloured tree
they write), ``servers``, ``arrays``, ``targets`` and ``filesystem`` (the whole, ``evaluate``);
``slowness`` tells an OST slow at the array from a busy OSS (the target page, the analytics).
"""

from __future__ import annotations

from portal.health.rules.arrays import (
    LOST_DRIVE_STATES,
    VOLUME_GROUP_LEVELS,
)
from portal.health.rules.facts import (
    TEMPERATURE_KINDS,
    TEMPERATURE_LABELS,
    ArrayCollectorFacts,
    ArrayFacts,
    BmcReading,
    DriveFacts,
    FilesystemFacts,
    Mark,
    PairFacts,
    RackFacts,
    ServerFacts,
    TargetFacts,
    Thresholds,
    UnitFacts,
    VolumeGroupFacts,
    silent_after,
    temperature_kind,
    temperature_limits,
)
from portal.health.rules.filesystem import (
    evaluate,
)
from portal.health.rules.nodes import (
    GREEN,
    GREY,
    ORANGE,
    PARENT_REASONS,
    RED,
    SEVERITY,
    Node,
    worst,
)

__all__ = [
    "GREY",
    "GREEN",
    "ORANGE",
    "RED",
    "SEVERITY",
    "PARENT_REASONS",
    "LOST_DRIVE_STATES",
    "VOLUME_GROUP_LEVELS",
    "Thresholds",
    "DriveFacts",
    "VolumeGroupFacts",
    "TargetFacts",
    "BmcReading",
    "TEMPERATURE_KINDS",
    "TEMPERATURE_LABELS",
    "temperature_kind",
    "temperature_limits",
    "silent_after",
    "ServerFacts",
    "ArrayFacts",
    "ArrayCollectorFacts",
    "PairFacts",
    "UnitFacts",
    "FilesystemFacts",
    "Mark",
    "RackFacts",
    "Node",
    "worst",
    "evaluate",
]
