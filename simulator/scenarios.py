"""Named scenarios and the jobs they start: who does I/O, on which OSTs, how much and how fast.

A job has an id, a client, a stripe count and size, a total size, a read/write mix and an I/O
size; it is striped over `stripe_count` OSTs of its filesystem (Lustre's round-robin allocator,
or an OST pool for the hot-OSS scenario). A scenario decides which jobs run (one slot per job,
refilled as jobs end) and how full the filesystem is when it starts; `simulator/workload.py`
moves the jobs' bytes each step of the clock.

Named scenarios (DESIGN §9 signatures):
- idle: no jobs, only background statfs/ping traffic.
- balanced: jobs striped as the analytics advise (a stripe per 4 GiB moved, at most every OST),
  spread evenly; files are deleted when a job ends.
- hot-oss: an OST pool on one OSS takes most jobs, so that OSS carries far more than its share.
- bad-striping: large files with stripe count 1: each job's bytes sit on one OST.
- filling: jobs write and keep their files; capacity heads for 95 % and stays there.
- demo: a mix with something for the analytics to find: two jobs on an OST pool of the first
  OSS (about twice its partner's load), one large file with stripe count 1, two jobs of small
  (16 KiB) I/O, a few wide jobs, and some OSTs fuller than the rest.

Jobs can also be started by hand (`add_job`, `python -m simulator workload job`) and OSTs made
fuller than the rest (`skew_fill`, `python -m simulator workload fill-skew`).
"""

from __future__ import annotations

import math
import random

from simulator.quota import check_owner, default_owner
from simulator.state import RackError

SCENARIOS = ("idle", "balanced", "hot-oss", "bad-striping", "filling", "demo")
GiB = 1 << 30
MiB = 1 << 20
# Writes stop when an OST is this full (the filling scenario's ceiling; Lustre's allocator
# skips OSTs about this full).
FILL_LIMIT = 0.95
# "Wide" striping: every OST of a small filesystem (-1), 16 on a big one, where striping a
# file over thousands of OSTs is neither usual nor useful.
WIDE = -2
# "Fitted" striping: a stripe per 4 GiB the job moves (the analytics' default advice), at most
# every OST: what a site whose users follow the advice looks like.
FITTED = -3
BYTES_PER_STRIPE = 4 * GiB


def set_scenario(state: dict, name: str, hot_server: str | None = None) -> None:
    if name not in SCENARIOS:
        raise RackError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)}")
    if hot_server is not None and hot_server not in state["servers"]:
        raise RackError(f"unknown server {hot_server}")
    state["scenario"] = name
    state["hot_server"] = hot_server
    state["jobs"] = {}
    state["fill_seeded"] = False


def ost_targets(state: dict) -> list[dict]:
    return sorted(
        (t for t in state["targets"].values() if t["kind"] == "OST"),
        key=lambda t: (t["fsname"], t["index"]),
    )


def _mdt_for(state: dict, fsname: str) -> dict | None:
    mdts = [t for t in state["targets"].values() if t["kind"] == "MDT" and t["fsname"] == fsname]
    return min(mdts, key=lambda t: t["index"]) if mdts else None


def _hot_server(state: dict) -> str | None:
    if state.get("hot_server"):
        return state["hot_server"]
    oss = sorted(h for h, s in state["servers"].items() if s["role"] == "oss")
    return oss[0] if oss else None


def seed_fill(state: dict, rng: random.Random) -> None:
    """Data already on the filesystem when a scenario starts (never removes any)."""
    scenario = state["scenario"]
    base = {
        "balanced": 0.35,
        "hot-oss": 0.35,
        "bad-striping": 0.30,
        "filling": 0.80,
        "demo": 0.35,
    }.get(scenario)
    if base is None:
        return
    for target in state["targets"].values():
        if target["kind"] == "MDT":
            level = 0.2
        elif target["kind"] == "OST":
            level = base + rng.uniform(-0.03, 0.03)
            if scenario in ("bad-striping", "demo") and rng.random() < 0.25:
                level += 0.3  # big single-stripe files already made some OSTs much fuller
        else:
            continue
        used = int(target["total_kib"] * level)
        if used > target["used_kib"]:
            files = int(target["files_total"] * level * 0.5)
            target["files_used"] = max(target["files_used"], files)
            target["used_kib"] = used


def _single_stripe_file(rng: random.Random) -> dict:
    """One large file written with the default stripe count of 1."""
    return {
        "stripe_count": 1,
        "size": rng.randint(1024, 4096) * GiB,
        "files": 1,
        "read_fraction": 0.1,
        "io_size": 1 * MiB,
        "rate": rng.uniform(300, 450) * 1e6,
    }


def _job_template(
    state: dict, rng: random.Random, pool: list[str] | None, kind: str | None = None
) -> dict:
    scenario = state["scenario"]
    if kind == "narrow":
        return _single_stripe_file(rng)
    if kind == "small":
        # many small files written in 16 KiB pieces, some read back (not exactly half: equal
        # read and write counts look like one counted twice in the analytics)
        return {
            "stripe_count": 4,
            "size": rng.randint(5, 20) * GiB,
            "files": rng.randint(10000, 50000),
            "read_fraction": 0.3,
            "io_size": 16 * 1024,
            "rate": rng.uniform(20, 60) * 1e6,
        }
    if scenario == "bad-striping":
        if state["next_job"] % 5:
            return _single_stripe_file(rng)
        return {
            "stripe_count": 4,
            "size": rng.randint(10, 50) * GiB,
            "files": rng.randint(100, 1000),
            "read_fraction": 0.3,
            "io_size": 1 * MiB,
            "rate": rng.uniform(150, 250) * 1e6,
        }
    if scenario == "filling":
        return {
            "stripe_count": rng.choice((4, 8, WIDE)),
            "size": rng.randint(2048, 20480) * GiB,
            "files": rng.randint(50, 500),
            "read_fraction": 0.05,
            "io_size": 4 * MiB,
            "rate": rng.uniform(1500, 3000) * 1e6,
        }
    if pool is not None:
        return {
            "stripe_count": min(4, len(pool)),
            "size": rng.randint(200, 800) * GiB,
            "files": rng.randint(10, 100),
            "read_fraction": 0.3,
            "io_size": 1 * MiB,
            "rate": rng.uniform(700, 900) * 1e6,
        }
    if scenario == "hot-oss":
        return {
            "stripe_count": rng.choice((4, 8)),
            "size": rng.randint(50, 200) * GiB,
            "files": rng.randint(10, 100),
            "read_fraction": 0.3,
            "io_size": 1 * MiB,
            "rate": rng.uniform(250, 350) * 1e6,
        }
    return {
        "stripe_count": FITTED if scenario == "balanced" else rng.choice((4, 4, 8, WIDE)),
        "size": rng.randint(50, 500) * GiB,
        "files": rng.randint(10, 1000),
        "read_fraction": rng.choice((0.2, 0.3, 0.5)),
        "io_size": rng.choice((1 * MiB, 1 * MiB, 4 * MiB)),
        "rate": rng.uniform(600, 1400) * 1e6,
    }


def _wanted_jobs(state: dict, n_osts: int) -> list[str | None]:
    """One entry per job slot: None for a normal job, 'pool' for a job on the hot OSS."""
    scenario = state["scenario"]
    if scenario == "idle" or n_osts == 0:
        return []
    if scenario == "hot-oss":
        return ["pool"] * 6 + [None] * max(1, n_osts // 12)
    if scenario == "bad-striping":
        return [None] * max(2, n_osts // 3)
    if scenario == "filling":
        return [None] * max(2, n_osts // 3)
    if scenario == "demo":
        return ["pool"] * 2 + ["narrow"] + ["small"] * 2 + [None] * max(2, n_osts // 8)
    return [None] * max(2, n_osts // 3)


def spawn_jobs(state: dict, rng: random.Random, now: float, osts: list[dict]) -> None:
    by_fs: dict[str, list[str]] = {}
    for target in osts:
        # Like Lustre's allocator, skip OSTs that have (almost) no space left.
        if target["used_kib"] < FILL_LIMIT * target["total_kib"] * 0.999:
            by_fs.setdefault(target["fsname"], []).append(target["label"])
    if not by_fs:
        return
    hot = _hot_server(state)
    pool = [t["label"] for t in osts if t.get("mounted_on") == hot] if hot else []
    slots = _wanted_jobs(state, len(osts))
    have: dict[str | None, int] = {}
    for job in state["jobs"].values():
        kind = job.get("kind", "pool" if job.get("pool") else None)
        have[kind] = have.get(kind, 0) + 1
    for kind in slots:
        if have.get(kind, 0) > 0:
            have[kind] -= 1
            continue
        fsname = sorted(by_fs)[rng.randrange(len(by_fs))]
        labels = by_fs[fsname]
        use_pool = kind == "pool" and bool(pool)
        template = _job_template(state, rng, pool if use_pool else None, kind)
        candidates = pool if use_pool else labels
        start_job(state, rng, now, fsname, template, candidates, kind, pooled=use_pool)


def start_job(
    state: dict,
    rng: random.Random,
    now: float,
    fsname: str,
    template: dict,
    candidates: list[str],
    kind: str | None,
    pooled: bool = False,
) -> str:
    """Start a job striped over ``template["stripe_count"]`` of ``candidates`` (round robin
    from where the filesystem's last file ended, as Lustre's allocator does)."""
    if template["stripe_count"] == WIDE:
        template["stripe_count"] = -1 if len(candidates) <= 48 else 16
    elif template["stripe_count"] == FITTED:
        template["stripe_count"] = min(
            len(candidates), math.ceil(job_total_traffic(template) / BYTES_PER_STRIPE)
        )
    count = (
        len(candidates)
        if template["stripe_count"] == -1
        else min(template["stripe_count"], len(candidates))
    )
    rr = state.setdefault("rr", {})
    start = rr.get(fsname, 0) % len(candidates)
    rr[fsname] = start + count
    chosen = [candidates[(start + i) % len(candidates)] for i in range(count)]
    job_id = str(state["next_job"])
    state["next_job"] += 1
    mdt = _mdt_for(state, fsname)
    state["jobs"][job_id] = {
        **template,
        "owner": template.get("owner") or default_owner(int(job_id)),
        "id": job_id,
        "fs": fsname,
        "client": state["clients"][rng.randrange(len(state["clients"]))]
        if state["clients"]
        else "0@lo",
        "stripe_size": 1 * MiB,
        "osts": chosen,
        "mdt": mdt["label"] if mdt else None,
        "pool": pooled,
        "kind": kind,
        "start": now,
        "moved": 0,
        "written": 0,
        "on_ost": {},
        "opened": False,
    }
    return job_id


def add_job(
    state: dict,
    *,
    stripe_count: int,
    size: int,
    rate: float,
    io_size: int = MiB,
    read_fraction: float = 0.1,
    fsname: str | None = None,
    server: str | None = None,
    uid: int | None = None,
    gid: int | None = None,
    projid: int | None = None,
) -> str:
    """Start one job by hand (``python -m simulator workload job``): on the OSTs of ``fsname``
    (the first filesystem), or only on those ``server`` serves (an OST pool on it). It runs
    until it has moved its size, beside the scenario's own jobs, writing as user ``uid``, group
    ``gid`` and project ``projid`` (a site user's by default, simulator.quota)."""
    osts = ost_targets(state)
    names = sorted({t["fsname"] for t in osts})
    if not names:
        raise RackError("the rack has no OST to run a job on")
    fsname = fsname or names[0]
    if fsname not in names:
        raise RackError(f"unknown filesystem {fsname!r}; the rack has {', '.join(names)}")
    candidates = [t["label"] for t in osts if t["fsname"] == fsname]
    if server is not None:
        if server not in state["servers"]:
            raise RackError(f"unknown server {server}")
        candidates = [
            t["label"] for t in osts if t["fsname"] == fsname and t.get("mounted_on") == server
        ]
        if not candidates:
            raise RackError(f"{server} serves no OST of {fsname}")
    if stripe_count < -1 or stripe_count == 0:
        raise RackError("--stripe-count: give a count of 1 or more, or -1 for every OST")
    if size <= 0 or rate <= 0 or io_size <= 0:
        raise RackError("--size, --rate and --io-size must be positive")
    template = {
        "stripe_count": stripe_count,
        "size": size,
        "files": 1 if stripe_count == 1 else max(1, size // GiB),
        "read_fraction": read_fraction,
        "io_size": io_size,
        "rate": rate,
        "owner": check_owner(uid, gid, projid),
    }
    rng = random.Random(state["next_job"])
    return start_job(
        state, rng, state["clock"], fsname, template, candidates, "manual", pooled=bool(server)
    )


def skew_fill(state: dict, count: int, points: float) -> list[str]:
    """Make ``count`` OSTs (spread over the filesystem) ``points`` percentage points fuller
    than they are: the fill skew big single-stripe files leave behind."""
    osts = ost_targets(state)
    if not osts:
        raise RackError("the rack has no OST to fill")
    if not 0 < points <= 100 or count <= 0:
        raise RackError("--count must be positive and --points between 0 and 100")
    chosen = osts[:: max(1, len(osts) // count)][:count]
    for target in chosen:
        extra = int(target["total_kib"] * points / 100)
        target["used_kib"] = min(int(target["total_kib"] * FILL_LIMIT), target["used_kib"] + extra)
    return [t["label"] for t in chosen]


def job_total_traffic(job: dict) -> float:
    r = job["read_fraction"]
    return job["size"] / (1.0 - r) if r < 1.0 else float(job["size"])
