"""The read API of the inventory, and its published OpenAPI schema."""

from __future__ import annotations

import pytest

from portal.inventory.services import save_plan

pytestmark = pytest.mark.django_db


def test_a_viewer_reads_the_targets_of_a_filesystem(client, world, filesystem_with_mds, ssu_spec):
    save_plan(ssu_spec)
    client.login(username="viewer", password="pw-viewer-123!")
    response = client.get("/api/v1/targets/?filesystem=scratch&kind=OST&limit=100")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 24
    first = body["results"][0]
    assert first["label"] == "scratch-OST0000"
    assert first["primary_server"] in {"oss01", "oss02"}
    assert first["state"] == "planned"


def test_the_api_never_shows_bmc_passwords(client, world, mds_spec):
    save_plan(mds_spec, {"mds01": ("root", "bmc-secret")})
    client.login(username="viewer", password="pw-viewer-123!")
    response = client.get("/api/v1/servers/mds01/")
    assert response.status_code == 200
    assert response.json()["bmc_username"] == "root"
    assert b"bmc-secret" not in response.content
    assert b"bmc_password" not in response.content


def test_the_api_is_read_only(client, world, mds_spec):
    save_plan(mds_spec)
    client.login(username="admin", password="pw-admin-123!")
    response = client.delete("/api/v1/filesystems/scratch/")
    assert response.status_code == 405


def test_the_openapi_schema_is_published(client, world):
    client.login(username="viewer", password="pw-viewer-123!")
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/v1/targets/" in paths
    assert "/api/v1/ssus/{name}/" in paths


def test_the_ssu_page_lists_its_targets(client, world, filesystem_with_mds, ssu_spec):
    save_plan(ssu_spec)
    client.login(username="viewer", password="pw-viewer-123!")
    listing = client.get("/ssus/")
    assert b"ssu01" in listing.content
    detail = client.get("/ssus/ssu01/")
    assert detail.status_code == 200
    assert detail.content.count(b"scratch-OST00") == 24
    # 2 x 120 x 4 TB drives: capacities in binary units, as every size the portal shows.
    assert "usable 647.6 TiB" in detail.content.decode() or "usable 647.5 TiB" in (
        detail.content.decode()
    )
    assert "647." in listing.content.decode() and "TiB" in listing.content.decode()
