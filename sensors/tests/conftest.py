"""The real InfluxDB of the test profile (started by `make test`), one database per test.

Tests that need it are marked `services`; the pure tests run without Django or services:
`.venv/bin/pytest sensors -p no:django -m "not services"`.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

TEST_INFLUXDB_URL = "http://127.0.0.1:28086"


def influxdb_url() -> str:
    return os.environ.get("INFLUXDB_URL", TEST_INFLUXDB_URL).rstrip("/")


def influx_query(url: str, statement: str, database: str = "") -> list[dict]:
    """Run one InfluxQL statement over plain HTTP; return the series of its first result."""
    params = {"q": statement, "epoch": "ms"}
    if database:
        params["db"] = database
    request = urllib.request.Request(
        f"{url}/query", data=urllib.parse.urlencode(params).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.load(response)
    result = body["results"][0]
    if "error" in result:
        raise RuntimeError(result["error"])
    return result.get("series", [])


def influx_ping(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ping", timeout=2):
            return True
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def influx_url() -> str:
    url = influxdb_url()
    if not influx_ping(url):
        pytest.fail(f"no InfluxDB at {url}: run the suite with `make test`")
    return url


@pytest.fixture
def influx_db(influx_url, request):
    """A fresh database named after the test; dropped afterwards."""
    name = "sensors_" + re.sub(r"\W+", "_", request.node.name)[:40] + f"_{os.getpid()}"
    influx_query(influx_url, f'DROP DATABASE "{name}"')
    influx_query(influx_url, f'CREATE DATABASE "{name}"')
    yield name
    if influx_ping(influx_url):
        influx_query(influx_url, f'DROP DATABASE "{name}"')
