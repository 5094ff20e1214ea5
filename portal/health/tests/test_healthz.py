"""/healthz tells a load balancer, without a login, which of the appliance's services is down."""

from __future__ import annotations

import pytest
from django.conf import settings

from portal.conftest import run_services_script

pytestmark = pytest.mark.django_db(transaction=True)


def test_healthz_is_200_when_every_service_answers(client, celery_worker, smtp):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["down"] == [] and body["degraded"] == []
    assert set(body["services"]) == {"database", "redis", "influxdb", "workers", "mail"}
    assert celery_worker in body["services"]["workers"]["extra"]["workers"]


def test_healthz_names_influxdb_while_it_is_stopped_and_recovers_after_start(client, celery_worker):
    run_services_script("stop", "influxdb")
    try:
        response = client.get("/healthz")
        assert response.status_code == 503
        body = response.json()
        assert body["down"] == ["influxdb"]
        assert body["status"] == "unavailable"
        assert body["services"]["influxdb"]["detail"].startswith(
            f"no answer at {settings.INFLUXDB_URL}"
        )
        assert body["services"]["redis"]["ok"] is True
    finally:
        run_services_script("start", "influxdb")
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()


def test_healthz_needs_no_login(client, celery_worker):
    response = client.get("/healthz")
    assert response.status_code in (200, 503)
    assert response["Content-Type"] == "application/json"
