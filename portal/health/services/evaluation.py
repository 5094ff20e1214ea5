"""The health engine's shell: facts in (``facts``), rules run, colours out to the cache.

``evaluate_and_store`` runs the rules on the facts of the moment and keeps one ``HealthStatus``
row per object and a ``StatusChange`` row per change of colour. Colour changes are claimed with a
conditional update, so two evaluations at once write each change once.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from django.db import IntegrityError, transaction
from django.utils import timezone

from portal.health import rules
from portal.health.choices import NodeKind, Status
from portal.health.models import (
    Evaluation,
    HealthSettings,
    HealthStatus,
    StatusChange,
    new_version,
)
from portal.health.services.facts import FOLLOWED, follow_inventory, gather_facts
from portal.health.services.metrics import read_metrics
from portal.web.shared_cache import once_per_key

log = logging.getLogger(__name__)


@dataclass
class EvaluationResult:
    trees: list[rules.Node]
    changes: list[StatusChange]
    seconds: float
    objects: int
    # Seconds of each part: "influxdb" (the newest points), "facts" (with the inventory),
    # "rules", "store" (the cached colours and changes) and "inventory" (following the rack).
    phases: dict[str, float] = field(default_factory=dict)


def evaluate(now: float | None = None) -> list[rules.Node]:
    """The trees as the rules see the rack now (nothing stored)."""
    return rules.evaluate(gather_facts(now))


def evaluate_and_store(now: float | None = None) -> EvaluationResult:
    started = time.perf_counter()
    phases: dict[str, float] = {}

    def timed(phase: str, work, *args):
        begun = time.perf_counter()
        result = work(*args)
        phases[phase] = time.perf_counter() - begun
        return result

    thresholds = HealthSettings.load().thresholds()
    metrics = timed("influxdb", read_metrics, thresholds.sensor_silence_seconds)
    facts = timed("facts", gather_facts, now, thresholds, metrics)
    trees = timed("rules", rules.evaluate, facts)
    changes = timed("store", store, trees)
    timed("inventory", follow_inventory, facts)
    objects = sum(1 for tree in trees for _ in tree.walk())
    seconds = time.perf_counter() - started
    finished = timezone.now()
    Evaluation.objects.update_or_create(
        pk=1,
        defaults={
            "finished": finished,
            "seconds": seconds,
            "objects_evaluated": objects,
            "changes": len(changes),
        },
    )
    FOLLOWED.finished = finished
    return EvaluationResult(trees, changes, seconds, objects, phases)


class CachedRow(NamedTuple):
    """A cached colour as ``store`` compares it: plain values, no model (3,000 rows a round)."""

    pk: int
    key: str
    name: str
    status: str
    reasons: list
    summary: dict
    parent_kind: str
    parent_name: str
    parent_key: str
    position: int


def cached_rows() -> dict[str, CachedRow]:
    return {
        row[1]: CachedRow(*row)
        for row in HealthStatus.objects.values_list(*CachedRow._fields).iterator(chunk_size=5000)
    }


class Remembered:
    """The cached colours as this process last read them, with the version and row count they
    had: a steady rack's next round compares with them instead of reading 3,000 rows again.
    Any write of ``store`` (this process's or another's) changes the version."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.state: tuple | None = None
        self.rows: dict[str, CachedRow] | None = None

    def rows_now(self) -> dict[str, CachedRow]:
        # The version first: rows read after it are at least as new as it says.
        version = Evaluation.objects.filter(pk=1).values_list("version", flat=True).first()
        state = (version, HealthStatus.objects.count())
        if version is not None and self.rows is not None and state == self.state:
            return self.rows
        self.rows, self.state = cached_rows(), state
        return self.rows

    def written(
        self,
        read: dict[str, CachedRow],
        updated: dict[str, dict],
        created: list[HealthStatus],
        gone: list[int],
        version: str,
    ) -> None:
        """What the rows are after ``store`` wrote all it meant to on the rows it ``read``."""
        if any(row.pk is None for row in created):
            return  # a database that does not return new keys: read them next round
        gone_pks = set(gone)
        rows = {key: row for key, row in read.items() if row.pk not in gone_pks}
        for key, fields in updated.items():
            rows[key] = rows[key]._replace(**fields)
        for row in created:
            rows[row.key] = CachedRow(*(getattr(row, name) for name in CachedRow._fields))
        self.rows, self.state = rows, (version, len(rows))


REMEMBERED = Remembered()


def node_key(node: rules.Node) -> str:
    """The node's inventory key; a node built without one (a test's) is known by its name."""
    return node.key or f"{node.kind}/{node.name}"


def store(
    trees: list[rules.Node], cached: dict[str, CachedRow] | None = None
) -> list[StatusChange]:
    """Keep each node's colour; write a StatusChange for every colour that changed.

    A change is claimed by updating the row only if it still has the colour this evaluation
    read (``cached``), so a second evaluation that read the same rows at the same moment finds
    nothing left to claim and writes no duplicate. Only rows that differ are written, all in
    one transaction (one commit, not one per row).
    """
    moment = timezone.now()
    remember = cached is None
    cached = REMEMBERED.rows_now() if cached is None else cached
    read_version = REMEMBERED.state[0] if remember and REMEMBERED.state else None
    seen: dict[str, int] = {}  # key -> its place in the walk of the trees
    claims: list[tuple[CachedRow, rules.Node, dict]] = []
    refreshed: dict[tuple[str, ...], list[HealthStatus]] = defaultdict(list)
    updated: dict[str, dict] = {}  # key -> the fields written, for the remembered rows
    created: list[HealthStatus] = []
    changes: list[StatusChange] = []
    for tree in trees:
        positions: dict[int, int] = defaultdict(int)
        for node, parent in tree.walk():
            key = node_key(node)
            if key in seen:
                continue  # the same object twice in the tree: keep the first
            seen[key] = len(seen)
            position = positions[id(parent)]
            positions[id(parent)] += 1
            place = {
                "parent_kind": parent.kind if parent else "",
                "parent_name": parent.name if parent else "",
                "parent_key": node_key(parent) if parent else "",
                "position": position,
            }
            row = cached.get(key)
            if row is None:
                created.append(
                    HealthStatus(
                        key=key,
                        kind=node.kind,
                        name=node.name,
                        status=node.status,
                        reasons=node.reasons,
                        summary=node.summary,
                        since=moment,
                        **place,
                    )
                )
                if node.status not in (Status.GREEN, Status.GREY):
                    changes.append(_change(node, "", moment))
                continue
            if row.status != node.status:
                claims.append((row, node, place))
                continue
            # Only what differs is written, and only those fields: most rows stay as they
            # were, and of the others mostly a number of the summary moved. (A renamed object
            # keeps its row, under its new name.)
            wanted = {"name": node.name, "reasons": node.reasons, "summary": node.summary, **place}
            differ = tuple(name for name, value in wanted.items() if getattr(row, name) != value)
            if differ:
                fields = {name: wanted[name] for name in differ}
                refreshed[differ].append(HealthStatus(pk=row.pk, **fields))
                updated[key] = fields
    gone = [row.pk for key, row in cached.items() if key not in seen]
    if not (created or claims or refreshed or gone):
        return []
    REMEMBERED.clear()
    version = new_version()
    everything_claimed = True
    with transaction.atomic():
        # First, and only over the version this round read: a store of another process since
        # then makes this one read every row again next round instead of trusting what it holds.
        if not Evaluation.objects.filter(pk=1, version=read_version).update(version=version):
            everything_claimed = False
        for row, node, place in claims:
            claimed = HealthStatus.objects.filter(pk=row.pk, status=row.status).update(
                name=node.name,
                status=node.status,
                reasons=node.reasons,
                summary=node.summary,
                since=moment,
                **place,
            )
            if claimed == 1:
                changes.append(_change(node, row.status, moment))
                updated[row.key] = {"name": node.name, "status": node.status, **place}
                updated[row.key].update(reasons=node.reasons, summary=node.summary)
            else:
                everything_claimed = False
        if created:
            try:
                with transaction.atomic():
                    HealthStatus.objects.bulk_create(created)
            except IntegrityError:
                # Another evaluation created some first: add ours one by one, keep theirs.
                everything_claimed = False
                for row in created:
                    HealthStatus.objects.get_or_create(key=row.key, defaults=_fields(row))
        for differ, rows in refreshed.items():
            HealthStatus.objects.bulk_update(rows, list(differ), batch_size=500)
        if gone:
            HealthStatus.objects.filter(pk__in=gone).delete()
        if changes:
            changes.sort(key=lambda change: seen[change.key])  # in the trees' order
            StatusChange.objects.bulk_create(changes)
        if not everything_claimed:
            Evaluation.objects.filter(pk=1).update(version=version)
    if everything_claimed and remember:
        REMEMBERED.written(cached, updated, created, gone, version)
    for change in changes:
        log.info("%s %s: %s -> %s", change.kind, change.name, change.old or "new", change.new)
    return changes


def _change(node: rules.Node, old: str, moment) -> StatusChange:
    return StatusChange(
        key=node_key(node),
        kind=node.kind,
        name=node.name,
        old=old,
        new=node.status,
        reasons=node.reasons,
        summary=node.summary,
        at=moment,
        # Leaving "not in service" (or appearing) is a first colour, not a change back.
        initial=old in ("", Status.GREY),
    )


def _fields(row: HealthStatus) -> dict:
    return {
        name: getattr(row, name)
        for name in (
            "kind",
            "name",
            "status",
            "reasons",
            "summary",
            "parent_kind",
            "parent_name",
            "parent_key",
            "position",
            "since",
        )
    }


# --- reading the cache ------------------------------------------------------------------------


# The trees of the newest version this process built, for every page and API call until the
# next evaluation writes something (a 100-SSU rack's tree is 3,000 rows).
_built: tuple[str, list[dict]] | None = None


def cached_version() -> tuple[str | None, datetime | None]:
    """The version of the cached colours and when they were last checked (None, None before
    the first evaluation): one small query, what the pages' caches and ETags use."""
    row = Evaluation.objects.filter(pk=1).values_list("version", "finished").first()
    return (row[0], row[1]) if row else (None, None)


def cache_tag(version: str | None, checked: datetime | None) -> str | None:
    """What names the cached colours as a page shows them (``cached_version``: their version
    and when they were checked), for an ETag; None before the first evaluation."""
    if version is None or checked is None:
        return None
    return f"{version}-{checked.timestamp():.3f}"


def cached_trees(version: str | None = None) -> list[dict]:
    """The trees as last evaluated, from the cache: no InfluxDB, and no query at all while the
    version (``cached_version``) is the one this process built last. A version is built from
    the rows once for all the portal's processes (``once_per_key``: the others read it from
    Redis). Callers only read them."""
    global _built
    if version is None:
        version, _ = cached_version()
    if version is None:
        return _trees_from_rows()
    if _built is not None and _built[0] == version:
        return _built[1]
    trees = once_per_key(f"health:trees:{version}", _trees_from_rows)
    _built = (version, trees)
    return trees


_TREE_FIELDS = ("key", "kind", "name", "status", "reasons", "summary")


def _trees_from_rows() -> list[dict]:
    rows = HealthStatus.objects.order_by("position", "pk").values_list(
        "parent_key", "since", *_TREE_FIELDS
    )
    children: dict[str, list[dict]] = defaultdict(list)
    for parent, since, *values in rows:
        node = dict(zip(_TREE_FIELDS, values, strict=True))
        node["since"] = since.isoformat()
        node["children"] = children[node["key"]]
        children[parent].append(node)
    return [node for node in children.get("", []) if node["kind"] == NodeKind.FILESYSTEM]


def last_checked():
    row = Evaluation.objects.filter(pk=1).first()
    return row.finished if row else None
