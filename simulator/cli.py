"""`python -m simulator`: run and drive the virtual rack.

    python -m simulator add     --rack DIR SPEC.json [--build]  rack and cable an SSU/MDS pair
    python -m simulator serve   --rack DIR [--interval 10] [--speed 1] [--scenario NAME]
                                      [--multipath-queue SECONDS] [--rebuild-seconds N]
                                      [--latency real|none|NAME=SECONDS,...] [--no-dispatcher]
    python -m simulator inject  --rack DIR KIND [--server H] [--array A] [--drive T,D,S] ...
    python -m simulator clear   --rack DIR (FAILURE_ID | --all)
    python -m simulator replace-drive --rack DIR --array A --drive T,D,S   a technician's swap
    python -m simulator clear-mel --rack DIR --array A   empty the array's event log (MEL)
    python -m simulator remove-real --rack DIR    power off real-cluster pairs, drop namespaces
    python -m simulator arrays-api --rack DIR     the arrays' SANtricity REST API, until SIGTERM
    python -m simulator status  --rack DIR [--json]
    python -m simulator scenario --rack DIR NAME [--hot-server H]
    python -m simulator workload --rack DIR (SCENARIO [--server H] | fill-skew [--count 4]
                                      [--points 30] | job [--stripe-count 1] [--size 2T]
                                      [--rate 400M] [--io-size 1M] [--server H] [--fs NAME])
    python -m simulator tick    --rack DIR [--seconds 10]   advance the clock once, no loop

DIR defaults to the demo's rack: `$OSTARA_VIRTUAL_RACK`, else `$OSTARA_RUN_DIR/rack`, else
`.run/demo/rack` (where `make demo` keeps it). `serve` keeps the servers' proc/,
sys/ and dev/ on /dev/shm when it can (linked from DIR/hosts/<host>/; `--trees-in-place` to
keep them in DIR); the other commands write wherever the rack's trees are. SPEC.json is the
spec format of `python -m provisioning.plan`. `add` leaves the drives blank, as if the hardware
had just been racked and cabled; `--build` also creates the volume groups and volumes, formats
the targets and mounts them on their primary servers, for a quick demo without the playbooks.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from provisioning.planner import SpecError, make_plan
from simulator import failures, provision, realcluster, scenarios
from simulator.rack import Rack
from simulator.santricity import mel
from simulator.scenarios import SCENARIOS
from simulator.serve import cmd_arrays_api, cmd_serve
from simulator.state import RackError, demo_rack_dir


def _plan(spec_path: Path) -> dict:
    try:
        spec = json.loads(spec_path.read_text())
    except (OSError, ValueError) as problem:
        raise RackError(f"cannot read {spec_path}: {problem}") from None
    try:
        return make_plan(spec)
    except SpecError as problem:
        raise RackError(f"invalid spec {spec_path}: {problem}") from None


def _read_secret(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError as problem:
        raise RackError(f"--bmc-password-file: cannot read {path}: {problem.strerror}") from None


def cmd_add(args) -> int:
    if args.bmc_password_file and not args.real_cluster:
        raise RackError("--bmc-password-file: only a real cluster's BMCs check a password")
    plan = _plan(args.spec)
    with Rack.open(args.rack, create=True) as rack:
        added = rack.add(plan)
        if args.real_cluster:
            realcluster.mark_real(rack.state, plan["ssu"])
            rack.install_commands()
            if args.bmc_password_file:
                secret = _read_secret(args.bmc_password_file)
                for host in rack.state["pairs"][plan["ssu"]]["servers"]:
                    realcluster.bmc.set_password(rack.root, host, secret)
        if args.build:
            provision.build(rack, plan)
        if args.real_cluster:
            realcluster.start(rack.root, rack.state)
    if added["servers"]:
        print(
            f"racked {added['pair']}: servers {', '.join(added['servers'])}; "
            f"arrays {', '.join(added['arrays'])}"
        )
    else:
        print(f"{plan['ssu']} is already racked")
    if args.build:
        print(f"built {len(plan['targets'])} targets of {plan['ssu']}")
    return 0


def cmd_tick(args) -> int:
    with Rack.open(args.rack) as rack:
        rack.advance(by=args.seconds)
        rack.render()
    return 0


def cmd_scenario(args) -> int:
    with Rack.open(args.rack) as rack:
        rack.set_scenario(args.name, args.hot_server)
    print(f"scenario {args.name}")
    return 0


def _size(text: str) -> int:
    """Bytes from 200G, 1T, 512M or a plain number."""
    scale = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(text[-1:].upper(), 1)
    number = text[:-1] if scale != 1 else text
    try:
        value = float(number) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (512M, 200G, 2T)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a size must be positive")
    return int(value)


def cmd_workload(args) -> int:
    """What the analytics must find, on demand: a scenario, one job, or a fill skew."""
    with Rack.open(args.rack) as rack:
        if args.what == "job":
            job = scenarios.add_job(
                rack.state,
                stripe_count=args.stripe_count,
                size=args.size,
                rate=args.rate,
                io_size=args.io_size,
                read_fraction=args.read_fraction,
                fsname=args.fs,
                server=args.server,
                uid=args.uid,
                gid=args.gid,
                projid=args.projid,
            )
            started = rack.state["jobs"][job]
            owner = started["owner"]
            print(
                f"job {job}: {args.size / 2**30:,.0f} GiB at {args.rate / 2**20:,.0f} MiB/s in "
                f"{args.io_size // 1024} KiB I/Os, striped over {', '.join(started['osts'])}, "
                f"as uid {owner['uid']} gid {owner['gid']} project {owner['projid']} from "
                f"{started['client']}"
            )
        elif args.what == "fill-skew":
            filled = scenarios.skew_fill(rack.state, args.count, args.points)
            print(f"{args.points:g} points fuller: {', '.join(filled)}")
        else:
            rack.set_scenario(args.what, args.server)
            print(f"scenario {args.what}")
    return 0


def cmd_status(args) -> int:
    with Rack.open(args.rack, save_counters=False) as rack:
        status = rack.status()
    if args.json:
        print(json.dumps(status, indent=2, sort_keys=True))
        return 0
    print(
        f"virtual rack {status['rack']}  clock {status['clock']:.0f}  "
        f"scenario {status['scenario']}  jobs {status['jobs']}"
    )
    for host, server in status["servers"].items():
        print(
            f"  {host:10} {server['role']:4} {server['state']:8} cluster={server['cluster']:8}"
            f" targets={len(server['targets'])}"
        )
    for failure_id, failure in sorted(status["failures"].items()):
        print(f"  failure {failure_id}: {failure['kind']} {failure.get('where', '')}")
    return 0


def cmd_inject(args) -> int:
    with Rack.open(args.rack) as rack:
        failure = failures.inject(
            rack,
            args.kind,
            server=args.server,
            array=args.array,
            drive=args.drive,
            volume_group=args.volume_group,
            count=args.count,
            enclosure=args.enclosure,
            drawer=args.drawer,
            controller=args.controller,
            links=args.links,
            pair=args.pair,
            celsius=args.celsius,
            latency_ms=args.latency_ms,
        )
        rack.render()
    print(
        json.dumps(failure, sort_keys=True)
        if args.json
        else f"injected {failure['id']}: {failure['kind']} {failure.get('where', '')}"
    )
    return 0


def cmd_clear(args) -> int:
    with Rack.open(args.rack) as rack:
        cleared = failures.clear(rack, None if args.all else args.failure_id)
        rack.render()
    for failure in cleared:
        print(f"cleared {failure['id']}: {failure['kind']} {failure.get('where', '')}")
    return 0


def cmd_remove_real(args) -> int:
    """Power off the real-cluster pairs and take their namespaces away (`make demo` stop)."""
    with Rack.open(args.rack, read_only=True) as rack:
        state = rack.state
    # Without the rack's lock: each server's boot writes it off in the rack as it ends.
    running = realcluster.remove(Path(args.rack), state)
    hosts = realcluster.real_hosts(state)
    if not hosts:
        print("no real-cluster pair in this rack")
    else:
        print(f"powered off {', '.join(running) or 'nothing (all were off)'}; "
              f"namespaces of {', '.join(hosts)} removed")  # fmt: skip
    return 0


def cmd_clear_mel(args) -> int:
    with Rack.open(args.rack) as rack:
        array = rack.state["arrays"].get(args.array)
        if array is None:
            known = ", ".join(sorted(rack.state["arrays"])) or "none"
            raise RackError(f"unknown array {args.array!r} (--array; the rack has {known})")
        dropped = mel.clear(array)
    print(f"cleared the event log of {args.array}: {dropped} events dropped, numbers from 1")
    return 0


def cmd_replace_drive(args) -> int:
    with Rack.open(args.rack) as rack:
        replaced = failures.replace_drive(rack, args.array, args.drive)
        rack.render()
    if args.json:
        print(json.dumps(replaced, sort_keys=True))
        return 0
    address = ",".join(map(str, replaced["drive"]))
    line = f"replaced drive {address} of {replaced['array']}"
    if replaced["copyback_from"]:
        spare = ",".join(map(str, replaced["copyback_from"]))
        when = "waits for the running one" if replaced["copyback_waits"] else "started"
        line += f": copyback from hot spare {spare} to it {when} ({replaced['volume_group']})"
    elif replaced["volume_group"]:
        line += (
            f": {replaced['volume_group']} stays degraded until "
            f'SMcli -c "start drive [{address}] reconstruct;"'
        )
    else:
        line += ": a blank, unassigned drive"
    if replaced["resolved"]:
        line += f"; resolved {', '.join(replaced['resolved'])}"
    print(line)
    return 0


# The failure matrix's rows as `inject --help` lists them: the options each row needs (the
# others are ignored), and what it does. Kept beside the parser so the help and the parser
# cannot drift apart unnoticed (simulator/tests/test_cli_help.py checks every kind is here).
INJECT_ROWS = {
    "server-crash": ("--server H", "the server panics; its partner fences it and takes over"),
    "heartbeat-down": (
        "--server H",
        "its heartbeat link; with two Corosync links the other carries on, else the partner "
        "fences it and takes over",
    ),
    "lnet-down": ("--server H", "its LNet (public) link; Pacemaker moves its targets"),
    "private-switch-down": (
        "--pair P | --server H",
        "the pair's private switch; nothing moves (two Corosync links: one cluster over the "
        "management link, fencing works; one link: its BMCs and PDUs too, no fencing)",
    ),
    "bmc-down": ("--server H", "its BMC stops answering; the PDU fences instead"),
    "pdu-down": ("--server H", "its PDU outlet stops answering; the BMC fences instead"),
    "sas-link-down": (
        "--server H [--links N]",
        "pull N SAS links (default 1; 0: all, its I/O hangs and it is fenced)",
    ),
    "drive-failed": (
        "--array A --drive T,D,S | --array A --volume-group VG [--count N]",
        "fail one drive, or N drives of a group (3 lose the OST)",
    ),
    "drawer-failed": (
        "--array A --enclosure T --drawer D",
        "a drawer goes offline; every group with drives there is degraded",
    ),
    "controller-failed": (
        "--array A --controller A|B",
        "the partner controller serves every volume, slower",
    ),
    "management-port-down": (
        "--array A --controller A|B",
        "the controller's management port (its REST API) does not answer; it serves its volumes",
    ),
    "array-slow": (
        "--array A --volume-group VG [--latency-ms N]",
        "the array takes N ms more per I/O on that group's volumes (default 40): its OSTs are "
        "slow at the array, their OSS idle",
    ),
    "hot-cpu": ("--server H [--celsius N]", "its CPUs read N °C (default 90)"),
    "hot-inlet": ("--server H [--celsius N]", "its inlet air reads N °C (default 43)"),
}


def _inject_epilog() -> str:
    width = max(map(len, INJECT_ROWS))
    lines = ["failure matrix rows (KIND, the options it needs, what happens):"]
    for kind, (needs, what) in sorted(INJECT_ROWS.items()):
        lines.append(f"  {kind:<{width}}  {needs}")
        lines.append(f"  {'':<{width}}    {what}")
    lines += [
        "",
        "example: python -m simulator inject drive-failed --array ssu01-a "
        "--volume-group ssu01-a-vg00",
        "clear with: python -m simulator clear --all   (or the id it printed)",
        "",
        "on a real-cluster pair (add --real-cluster) server-crash, heartbeat-down, bmc-down,",
        "pdu-down and private-switch-down are done for real (a panic, pulled cables, a silent",
        "PDU) and its own Corosync and Pacemaker decide what follows (simulator/README.md)",
    ]
    return "\n".join(lines)


# How long an array's embedded web server takes to answer a request (ms): real controllers
# answer small GETs in about a tenth of a second; the time is spent waiting, not computing.
RESPONSE_MS = 100.0


def _response_ms_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--response-ms",
        type=float,
        default=RESPONSE_MS,
        metavar="N",
        help="arrays' REST API: ms each answer takes, as real controllers' (default %(default)g)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m simulator",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def with_rack(name: str, **kwargs) -> argparse.ArgumentParser:
        command = sub.add_parser(name, **kwargs)
        command.add_argument(
            "--rack",
            type=Path,
            default=demo_rack_dir(),
            help="rack directory (default: %(default)s)",
        )
        return command

    add = with_rack("add", help="rack and cable the servers and arrays of a spec")
    add.add_argument("spec", type=Path)
    add.add_argument(
        "--build", action="store_true", help="also create volumes, format and mount the targets"
    )
    add.add_argument(
        "--real-cluster",
        action="store_true",
        help="the pair's cluster is real: Corosync, Pacemaker and ipmi_sim BMCs in namespaces "
        "(needs root and the servers' mgmt_address, heartbeat_address and bmc, link-local)",
    )
    add.add_argument(
        "--bmc-password-file",
        type=Path,
        metavar="FILE",
        help="with --real-cluster: the password of the pair's BMCs (default: one generated "
        "per server, in hosts/<host>/cluster/bmc-password)",
    )
    add.set_defaults(func=cmd_add)

    serve = with_rack("serve", help="run the clock, the workload and the failures")
    serve.add_argument("--interval", type=float, default=10.0)
    serve.add_argument("--speed", type=float, default=1.0, help="simulated seconds per real second")
    serve.add_argument("--scenario", choices=SCENARIOS)
    serve.add_argument("--hot-server")
    serve.add_argument(
        "--multipath-queue",
        type=float,
        metavar="SECONDS",
        help="how long a server that lost every SAS path queues its I/O before its partner "
        "fences it (multipath's no_path_retry; kept in the rack; default 0: at once)",
    )
    serve.add_argument(
        "--rebuild-seconds",
        type=float,
        metavar="N",
        help="simulated seconds a drive reconstruction or copyback takes (kept in the rack; "
        "default, or 0: a whole drive at about 150 MB/s, hours)",
    )
    serve.add_argument("--once", action="store_true", help="one refresh, then exit")
    serve.add_argument(
        "--latency",
        metavar="SETTING",
        help="how long the virtual commands take (wall time, no CPU; kept in the rack): "
        "'real' (SMcli 2.5 s, ipmitool 1 s, ipmitool chassis 0.3 s, fence_apc_snmp 0.3 s), "
        "'none', or NAME=SECONDS[,NAME:WORD=SECONDS...] e.g. SMcli=2.5,ipmitool=1 "
        "(default: as kept, none for a new rack)",
    )
    serve.add_argument(
        "--no-dispatcher",
        action="store_true",
        help="run every virtual command as a new Python process (no resident dispatcher)",
    )
    serve.add_argument(
        "--arrays-api",
        action="store_true",
        help="also serve the arrays' SANtricity REST API (as the arrays-api command does)",
    )
    _response_ms_argument(serve)
    trees = serve.add_mutually_exclusive_group()
    trees.add_argument(
        "--trees-in-memory",
        metavar="DIR",
        help="where the servers' proc/, sys/ and dev/ live (default: "
        "/dev/shm/ostara-rack-<hash> when /dev/shm exists; a memory filesystem, as the real "
        "ones are, costs several times less CPU than files in the rack directory)",
    )
    trees.add_argument(
        "--trees-in-place",
        action="store_true",
        help="keep the servers' trees inside the rack directory",
    )
    serve.set_defaults(func=cmd_serve)

    tick = with_rack("tick", help="advance the clock once and rewrite the trees")
    tick.add_argument("--seconds", type=float, default=10.0)
    tick.set_defaults(func=cmd_tick)

    scenario = with_rack("scenario", help="choose the workload scenario")
    scenario.add_argument("name", choices=SCENARIOS)
    scenario.add_argument("--hot-server")
    scenario.set_defaults(func=cmd_scenario)

    load = with_rack(
        "workload",
        help="make the workload show something: a scenario (hot-oss, bad-striping, ...), one "
        "job (job --stripe-count 1 --size 2T), or a fill skew",
    )
    load.add_argument("what", choices=(*SCENARIOS, "job", "fill-skew"))
    load.add_argument("--server", help="hot-oss: the hot OSS; job: only its OSTs (a pool)")
    load.add_argument("--fs", help="job: the filesystem (default: the first)")
    load.add_argument("--stripe-count", type=int, default=1, help="job: -1 for every OST")
    load.add_argument("--size", type=_size, default=2 * 2**40, help="job: bytes to move (2T)")
    load.add_argument("--rate", type=_size, default=400 * 2**20, help="job: bytes/s (400M)")
    load.add_argument("--io-size", type=_size, default=2**20, help="job: I/O size (1M; 16K)")
    load.add_argument("--read-fraction", type=float, default=0.1, help="job: share read")
    load.add_argument("--uid", type=int, help="job: the user writing (default: a site user)")
    load.add_argument("--gid", type=int, help="job: the group (default: the user's)")
    load.add_argument("--projid", type=int, help="job: the project id (default: 0, none)")
    load.add_argument("--count", type=int, default=4, help="fill-skew: OSTs to fill")
    load.add_argument("--points", type=float, default=30.0, help="fill-skew: points fuller")
    load.set_defaults(func=cmd_workload)

    status = with_rack("status", help="show servers, targets, arrays and failures")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status)

    inject = with_rack(
        "inject",
        help="inject a failure (a row of the failure matrix; `inject --help` lists them)",
        description="Inject a failure into the virtual rack; it stays until cleared.",
        epilog=_inject_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    inject.add_argument("kind", choices=sorted(failures.KINDS))
    inject.add_argument("--server", metavar="H", help="a server's hostname (oss01)")
    inject.add_argument("--pair", metavar="P", help="a server pair (private-switch-down)")
    inject.add_argument("--array", metavar="A", help="an array's name (ssu01-a)")
    inject.add_argument("--drive", metavar="T,D,S", help="tray,drawer,slot (drive-failed)")
    inject.add_argument(
        "--volume-group", metavar="VG", help="drive-failed (with --count), array-slow"
    )
    inject.add_argument("--count", type=int, default=1, help="drives of --volume-group to fail")
    inject.add_argument(
        "--enclosure", type=int, metavar="T", help="tray number (0 = controller shelf)"
    )
    inject.add_argument("--drawer", type=int, metavar="D", help="drawer of --enclosure")
    inject.add_argument("--controller", choices=("A", "B"))
    inject.add_argument("--links", type=int, default=1, help="SAS links to pull (all: 0)")
    inject.add_argument(
        "--celsius", type=float, help="hot-cpu (default 90), hot-inlet (default 43): the reading"
    )
    inject.add_argument(
        "--latency-ms",
        type=float,
        metavar="N",
        help=f"array-slow: ms the array adds to each I/O (default {failures.SLOW_MS:g})",
    )
    inject.add_argument("--json", action="store_true")
    inject.set_defaults(func=cmd_inject)

    clear = with_rack("clear", help="clear an injected failure")
    clear.add_argument("failure_id", nargs="?")
    clear.add_argument("--all", action="store_true")
    clear.set_defaults(func=cmd_clear)

    arrays_api = with_rack(
        "arrays-api",
        help="serve the arrays' SANtricity REST API (HTTPS, one loopback port per controller, "
        "recorded in the rack) in the foreground until SIGTERM",
    )
    _response_ms_argument(arrays_api)
    arrays_api.set_defaults(func=cmd_arrays_api)

    remove = with_rack(
        "remove-real",
        help="power off the servers and BMCs of the rack's real-cluster pairs and delete their "
        "namespaces (the rack stays; serve or add --real-cluster starts them again)",
    )
    remove.set_defaults(func=cmd_remove_real)

    replace = with_rack(
        "replace-drive",
        help="put a new drive into a failed drive's slot (a technician's act); the array "
        "copies back from a spare in use, else waits for SMcli's start drive reconstruct",
    )
    replace.add_argument("--array", required=True)
    replace.add_argument("--drive", required=True, help="tray,drawer,slot")
    replace.add_argument("--json", action="store_true")
    replace.set_defaults(func=cmd_replace_drive)

    clear_mel = with_rack(
        "clear-mel",
        help="empty an array's Major Event Log, as SMcli's clear storageArray eventLog or a "
        "replaced controller does: its sequence numbers start again at 1",
    )
    clear_mel.add_argument("--array", required=True)
    clear_mel.set_defaults(func=cmd_clear_mel)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except RackError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
