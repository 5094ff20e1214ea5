"""Locust's browsers on the health dashboard, for ``benchmarks.health``'s load run.

Each simulated user is one browser left open on the dashboard, as on a wall display: it loads
the page, then every refresh (``OSTARA_HEALTH_REFRESH_SECONDS``, 5 s) asks for what the page asks
for: the overview panel, the alerts panel and the throughput chart, and every 30 s the capacity
and OSS-share charts; a script beside it reads ``/api/v1/health/``. The overview and the API
are asked as a browser asks (``If-None-Match`` with the ETag it was given), so an unchanged
answer is a 304. The service panel (every 15 s) is left out: it waits for the Celery workers,
which the benchmark does not start.

Run by ``benchmarks.health`` (``locust -f benchmarks/dashboard_load.py --headless ...``) with
``OSTARA_BENCH_SESSION`` (a logged-in session id) and ``OSTARA_BENCH_FILESYSTEM`` set.
"""

from __future__ import annotations

import os

from locust import HttpUser, constant, task

REFRESH_SECONDS = int(os.environ.get("OSTARA_HEALTH_REFRESH_SECONDS", "5"))
SLOW_CHART_SECONDS = 30


class DashboardBrowser(HttpUser):
    wait_time = constant(REFRESH_SECONDS)

    def on_start(self) -> None:
        self.client.cookies.set("sessionid", os.environ["OSTARA_BENCH_SESSION"])
        self.filesystem = os.environ.get("OSTARA_BENCH_FILESYSTEM", "scratch")
        self.etags: dict[str, str] = {}
        self.refreshes = 0
        self.fetch("/", "dashboard page /")

    def fetch(self, url: str, name: str, conditional: bool = False) -> None:
        headers = {"If-None-Match": self.etags[url]} if conditional and url in self.etags else {}
        with self.client.get(
            url, name=name, headers=headers, catch_response=True, allow_redirects=False
        ) as response:
            if response.status_code not in (200, 304):
                response.failure(f"HTTP {response.status_code}")
                return
            if conditional and response.headers.get("ETag"):
                self.etags[url] = response.headers["ETag"]
            response.success()

    @task
    def refresh(self) -> None:
        fs = self.filesystem
        self.fetch(f"/health/overview/?fs={fs}", "dashboard refresh /health/overview/", True)
        self.fetch("/alerts/panel/", "dashboard refresh /alerts/panel/")
        self.fetch(
            f"/health/charts/throughput/?kind=filesystem&name={fs}", "chart: throughput, 1 h"
        )
        if self.refreshes % (SLOW_CHART_SECONDS // REFRESH_SECONDS) == 0:
            self.fetch(
                f"/health/charts/capacity/?kind=filesystem&name={fs}", "chart: capacity per OST"
            )
            self.fetch(f"/health/charts/oss-share/?kind=filesystem&name={fs}", "chart: OSS share")
        self.fetch("/api/v1/health/", "GET /api/v1/health/", True)
        self.refreshes += 1
