"""`python -m simulator serve`: keep the virtual rack's clock and trees going, with the commands'
resident dispatcher and, when asked, the arrays' SANtricity REST API beside it (simulator.cli
parses the arguments)."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import threading
import time
from pathlib import Path

from simulator import dispatch, latency, realcluster, topology
from simulator.procfs import TreeWriter
from simulator.rack import Rack

MEMORY_FS = Path("/dev/shm")
TREE_PREFIX = "ostara-rack-"


def _memory_tree_dir(rack: Path) -> Path | None:
    """Where serve keeps a rack's server trees by default: /dev/shm (a memory filesystem, as
    the real /proc and /sys are), when there is one."""
    if not (MEMORY_FS.is_dir() and os.access(MEMORY_FS, os.W_OK)):
        return None
    digest = hashlib.sha1(str(rack.resolve()).encode()).hexdigest()[:12]
    return MEMORY_FS / f"{TREE_PREFIX}{digest}"


def _collect_stale_trees() -> None:
    """Remove the memory trees of racks whose directory is gone (they would only use RAM)."""
    if not MEMORY_FS.is_dir():
        return
    for trees in MEMORY_FS.glob(f"{TREE_PREFIX}*"):
        try:
            rack = Path((trees / "RACK").read_text().strip())
        except OSError:
            continue
        if not (rack / "rack.json").exists():
            shutil.rmtree(trees, ignore_errors=True)


def _choose_trees(args) -> str | None:
    if args.trees_in_place:
        return None
    if args.trees_in_memory:
        return args.trees_in_memory
    chosen = _memory_tree_dir(Path(args.rack))
    return str(chosen) if chosen else None


def cmd_serve(args) -> int:
    writer = TreeWriter()
    stop = {"now": False}

    def _stop(_signum, _frame):
        stop["now"] = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    delays = None if args.latency is None else latency.parse(args.latency)  # before any change
    with Rack.open(args.rack, create=True, writer=writer) as rack:
        rack.install_commands()
        topology.rename_clients(rack.state)
        if delays is not None:
            latency.save(rack.root, delays)
        _collect_stale_trees()
        trees = _choose_trees(args)
        if trees != rack.state.get("trees"):
            rack.use_memory_trees(trees)
            writer = rack.writer
        if trees:
            Path(trees).mkdir(parents=True, exist_ok=True)
            (Path(trees) / "RACK").write_text(f"{rack.root}\n")
        if args.scenario:
            rack.set_scenario(args.scenario, args.hot_server)
        if args.multipath_queue is not None:
            rack.state["multipath_queue_seconds"] = args.multipath_queue
        if args.rebuild_seconds is not None:
            if args.rebuild_seconds > 0:
                rack.state["rebuild_seconds"] = args.rebuild_seconds
            else:
                rack.state.pop("rebuild_seconds", None)
        # Resume where the rack was: the clock jumps to the present, nothing is replayed.
        rack.state["clock"] = max(rack.state["clock"], time.time())
        rack.render()
        store = rack.store
        if realcluster.real_hosts(rack.state):
            # BMCs and cables do not survive a reboot of the machine: put them back.
            realcluster.start(rack.root, rack.state)
    # The commands' resident dispatcher lives as long as this process serves the rack (not
    # worth its start for a single refresh).
    dispatcher = None if args.no_dispatcher or args.once else dispatch.start(args.rack)
    arrays_api = _start_arrays_api(args.rack, args.response_ms) if args.arrays_api else None
    try:
        return _serve_loop(args, writer, store, stop)
    finally:
        if arrays_api:
            arrays_api.stop()
        dispatch.stop(dispatcher)


def _serve_loop(args, writer: TreeWriter, store: dict, stop: dict) -> int:
    print(
        f"serving virtual rack {Path(args.rack).resolve()} every {args.interval:g} s "
        f"(speed x{args.speed:g})",
        flush=True,
    )
    last = time.time()
    while not stop["now"]:
        deadline = last + args.interval
        while not stop["now"] and time.time() < deadline:
            time.sleep(min(0.5, max(0.0, deadline - time.time())))
        if stop["now"]:
            break
        now = time.time()
        with Rack.open(args.rack, writer=writer, store=store) as rack:
            rack.advance(by=(now - last) * args.speed)
            rack.render()
        last = now
        if args.once:
            break
    return 0


def _start_arrays_api(rack: Path, response_ms: float):
    """The arrays' REST API (simulator/santricity/), its ports printed as they are recorded."""
    from simulator.santricity.server import ArraysApi

    api = ArraysApi(rack, response_seconds=response_ms / 1000.0)
    api.start()
    for (array, controller), port in sorted(api.endpoints().items()):
        print(f"{array} controller {controller}: https://127.0.0.1:{port}", flush=True)
    return api


def cmd_arrays_api(args) -> int:
    """The arrays' SANtricity REST API, one HTTPS port per controller, until SIGTERM."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
    api = _start_arrays_api(args.rack, args.response_ms)
    try:
        print(f"serving the arrays' REST API of {api.root} (stop: SIGTERM)", flush=True)
        stop.wait()
    finally:
        api.stop()
    return 0
