"""The sensor's main loop: collect at every tick of the interval, send, spool what cannot go.

Ticks are aligned to multiples of the interval on the wall clock (10:00:00, 10:00:10, ...), and
every point of a round carries the tick's time in milliseconds, so sensors across the rack
stamp the same instants and a replayed batch lands exactly on its original points. A round
that overruns skips the ticks it missed rather than bunching rounds together. The ticks are
the base interval's (`[sensor] interval`); the slower collectors run at the ticks they are due
(sensors.collect).
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from collections.abc import Callable

from sensors import schema
from sensors.collect import Collector, sensor_fields
from sensors.config import SensorConfig
from sensors.sender import InfluxWriter, Sender
from sensors.spool import Spool

log = logging.getLogger("sensors")

# Share of the interval a round may spend replaying the spool.
REPLAY_SHARE = 0.5
# On a clean stop, how long to try to empty the spool before leaving it on disk.
DRAIN_SECONDS = 5.0


def first_tick(now: float, interval: float) -> float:
    return math.ceil(now / interval) * interval


class Agent:
    def __init__(self, config: SensorConfig, collector: Collector | None = None) -> None:
        self.config = config
        self.collector = collector or Collector(config, state_dir=config.spool_dir)
        self.spool = Spool(config.spool_dir, config.spool_max_bytes, config.spool_max_batches)
        writer = InfluxWriter(
            config.influxdb_url,
            config.database,
            config.retention_policy,
            config.username,
            config.password,
            config.timeout,
            precision="ms",
        )
        self.sender = Sender(writer, self.spool, config.batch_size)
        self.stop_event = threading.Event()
        self.rounds = 0

    def round(self, tick: float) -> None:
        rnd = self.collector.collect(int(round(tick * 1000)))
        fields = sensor_fields(
            rnd, self.spool.points, self.spool.dropped_points, self.spool.rejected_points
        )
        rnd.add(schema.SENSOR_MEASUREMENT.name, {}, fields)
        self.sender.send(rnd.lines, replay_seconds=self.config.interval * REPLAY_SHARE)
        self.collector.commit()  # sent or spooled: the kernel lines are not read again
        self.rounds += 1
        log.debug(
            "round %d: %d points, %d errors, %.3f s; spool %d batches",
            self.rounds,
            len(rnd.lines),
            rnd.errors,
            rnd.seconds,
            len(self.spool),
        )

    def run(self, max_rounds: int | None = None, until: Callable[[], bool] | None = None) -> None:
        """Rounds until stopped (a signal), ``max_rounds`` are done, or ``until()``, asked
        after each round, says so."""
        interval = self.config.interval
        tick = first_tick(time.time(), interval)
        try:
            while not self.stop_event.is_set():
                if self.stop_event.wait(max(0.0, tick - time.time())):
                    break
                try:
                    self.round(tick)
                except Exception:  # a bug must cost one round, not the service
                    log.exception("round at %s failed", tick)
                if max_rounds is not None and self.rounds >= max_rounds:
                    break
                if until is not None and not self.stop_event.is_set() and until():
                    break
                tick += interval
                now = time.time()
                if now >= tick:
                    missed = math.floor((now - tick) / interval) + 1
                    log.warning("round took too long: skipping %d tick(s)", missed)
                    tick += missed * interval
            if len(self.spool):
                self.sender.replay(time.monotonic() + DRAIN_SECONDS)
        finally:
            self.collector.close()
            self.sender.writer.close()
            self.spool.close()
        if len(self.spool):
            log.info("leaving %d points in the spool for the next start", self.spool.points)

    def stop(self, *_args) -> None:
        self.stop_event.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
