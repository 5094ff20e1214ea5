"""Command line of the sensor.

python -m sensors collect --root DIR --once --format line   # one round to stdout
python -m sensors run --config /etc/ostara/sensor.conf      # the service

`run` follows its configuration file (sensors.watch): when it or a password file it names
changes, it finishes the round and executes itself again with the same arguments (same pid,
the new configuration); when the file is gone, it stops with status 0.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

from sensors.agent import Agent, first_tick
from sensors.collect import Collector, sensor_fields
from sensors.config import ConfigError, SensorConfig, load_config, validate
from sensors.spool import SpoolError
from sensors.watch import CHANGED, ConfigWatch


def _parse_tag(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sensors", description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log every round")
    commands = parser.add_subparsers(dest="command", required=True)

    collect = commands.add_parser("collect", help="collect and print line protocol")
    collect.add_argument("--config", help="read defaults from this sensor.conf")
    collect.add_argument("--root", help="the server's root directory (default /)")
    collect.add_argument("--server", help="server tag (default: this host's name)")
    collect.add_argument("--tag", action="append", type=_parse_tag, default=[], metavar="K=V")
    collect.add_argument("--once", action="store_true", help="one round, then exit")
    collect.add_argument("--interval", type=float, help="seconds between rounds without --once")
    collect.add_argument("--format", choices=["line"], default="line")

    run = commands.add_parser("run", help="collect at every interval and write to InfluxDB")
    run.add_argument("--config", required=True, help="sensor.conf (INI)")
    run.add_argument("--rounds", type=int, help="stop after this many rounds (tests)")
    return parser


def _collect_config(args) -> SensorConfig:
    config = load_config(args.config) if args.config else SensorConfig()
    if args.root:
        config.root = args.root
    if args.server:
        config.server = args.server
    if args.interval:
        config.interval = args.interval
    config.tags.update(dict(args.tag))
    validate(config)
    return config


def collect(args) -> int:
    config = _collect_config(args)
    collector = Collector(config)
    tick = time.time()
    while True:
        rnd = collector.collect(int(tick * 1000))
        rnd.add("sensor", {}, sensor_fields(rnd, 0, 0, 0))
        sys.stdout.write("\n".join(rnd.lines) + "\n")
        sys.stdout.flush()
        if args.once:
            return 0
        tick = first_tick(time.time(), config.interval)
        time.sleep(max(0.0, tick - time.time()))


def run(args, argv: list[str]) -> int:
    watch = ConfigWatch(args.config)
    config = load_config(args.config)
    agent = Agent(config)
    agent.install_signal_handlers()
    logging.getLogger("sensors").info(
        "sensor %s: root %s, every %g s, to %s/%s, spool %s",
        config.server,
        config.root,
        config.interval,
        config.influxdb_url,
        config.database,
        config.spool_dir,
    )
    agent.run(max_rounds=args.rounds, until=watch.changed)
    if watch.state == CHANGED and not agent.stop_event.is_set():
        # The collectors, the spool and the connection are closed (Agent.run): a new process
        # image reads the new configuration from the start, under the same pid.
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, "-m", "sensors", *argv])
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        return collect(args) if args.command == "collect" else run(args, argv)
    except (ConfigError, SpoolError) as error:
        print(f"sensor: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
