"""The result of the rules: a tree of coloured nodes with reasons, and how a parent takes its
children's colours and repeats their reasons."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

GREY = "grey"
GREEN = "green"
ORANGE = "orange"
RED = "red"
SEVERITY = {GREY: 0, GREEN: 1, ORANGE: 2, RED: 3}


# How many reasons of its children a parent repeats; the rest are counted.
PARENT_REASONS = 8


@dataclass
class Node:
    kind: str  # filesystem, ssu, pair, server, array, target
    name: str
    status: str = GREEN
    reasons: list[str] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    # Numbers a page shows next to the colour (fill, current server); not part of the colour.
    summary: dict = field(default_factory=dict)
    # The inventory object's stable key (``facts.object_key``): what the cache is keyed by.
    key: str = ""

    def raise_to(self, status: str, reason: str | None = None) -> None:
        if SEVERITY[status] > SEVERITY[self.status]:
            self.status = status
        if reason:
            self.reasons.append(reason)

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "reasons": list(self.reasons),
            "summary": dict(self.summary),
            "children": [child.as_dict() for child in self.children],
        }

    def walk(self, parent: Node | None = None):
        """Every node of the tree with its parent, parents first."""
        yield self, parent
        for child in self.children:
            yield from child.walk(self)


def apply_mark(node: Node, mark) -> None:
    """A job acts on the object (``facts.Mark``): being built is grey, whatever it reports
    yet; moving is at most orange with the job first among its reasons. Either is no alarm:
    the structured flags tell the alerts so."""
    flag = {"job": mark.job, "title": mark.title}
    if mark.builds:
        node.status = GREY
        node.reasons.insert(0, f"being built (job {mark.job}): {mark.title}")
        node.summary["building"] = flag
        return
    if node.status == RED:
        node.status = ORANGE
    node.reasons.insert(0, f"moving (job {mark.job}): {mark.title}")
    node.summary["moving"] = flag


def worst(statuses) -> str:
    return max(statuses, key=SEVERITY.__getitem__, default=GREEN)


# Whose reasons a parent repeats first: the same sentence from an array and from its target
# is said once, by the target.
REASON_ORDER = {"pair": 0, "server": 1, "ssu": 2, "target": 3, "array": 4}


def take_children(node: Node, skip: set | None = None) -> None:
    """Worst of the children, with their reasons named, after the node's own."""
    skip = skip or set()
    own = list(node.reasons)
    # Its colour before its children's: an alert on "red" mails the object that is the cause,
    # not every parent that repeats it.
    node.summary["own_status"] = node.status
    inherited: list[str] = []
    said: set[str] = set()
    statuses = [child.status for child in node.children]
    for child in sorted(node.children, key=lambda c: REASON_ORDER.get(c.kind, 9)):
        if id(child) in skip or child.status in (GREEN, GREY):
            continue
        node.raise_to(child.status)
        for reason in child.reasons:
            sentence = reason.split(": ", 1)[1] if reason.startswith(f"{child.name}: ") else reason
            if reason in said or sentence in said:
                continue
            said.update((reason, sentence))
            # An SSU and its pair share a name: "ssu01: ssu01: ..." says nothing more.
            inherited.append(reason if child.name == node.name else f"{child.name}: {reason}")
    if statuses and all(status == GREY for status in statuses) and not own:
        node.status = GREY
    node.reasons = own + limit_reasons(
        inherited, PARENT_REASONS - min(len(own), PARENT_REASONS - 1)
    )


def limit_reasons(reasons: list[str], keep: int = PARENT_REASONS) -> list[str]:
    if len(reasons) <= keep:
        return reasons
    return reasons[:keep] + [f"and {len(reasons) - keep} more"]


def threshold_high(node: Node, value: float, warning: float, critical: float, say) -> None:
    if value >= critical:
        node.raise_to(RED, say("critical", critical))
    elif value >= warning:
        node.raise_to(ORANGE, say("warning", warning))


def threshold_low(node: Node, value: float, warning: float, critical: float, say) -> None:
    if value < critical:
        node.raise_to(RED, say("critical", critical))
    elif value < warning:
        node.raise_to(ORANGE, say("warning", warning))


def name_list(labels: list[str]) -> str:
    return ", ".join(labels[:4]) + (f" and {len(labels) - 4} more" if len(labels) > 4 else "")


def it_them(labels: list[str]) -> str:
    return "it" if len(labels) == 1 else "them"


def duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def natural_key(text: str) -> tuple:
    """Sort key that orders the numbers in a name as numbers: "slot 9" before "slot 10"."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def clock(timestamp: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(timestamp))
