"""Each pair's Corosync authkey: made once by the appliance among its secrets, never made again
while it exists, and handed to corosync.yml as a secret file, never as a variable; the
corosync.conf the job hands over is the one built from the pair's rows."""

from __future__ import annotations

import stat

import pytest

from portal.inventory.provisioning import KIND, ProvisioningContext
from portal.inventory.services import pair_authkey, save_plans
from portal.jobs.services import create_job
from provisioning.ha.corosync import AUTHKEY_BYTES, build_corosync_conf

pytestmark = pytest.mark.django_db

BMC = {host: ("root", f"secret-{host}") for host in ("mds01", "mds02")}
LINKS = {"mds01": ("169.254.1.1", "169.254.2.1"), "mds02": ("169.254.1.2", "169.254.2.2")}


@pytest.fixture
def run_dir(tmp_path, settings):
    settings.RUN_DIR = tmp_path / "run"
    return settings.RUN_DIR


def test_the_key_is_made_once_and_kept(run_dir):
    key = pair_authkey("ssu01")
    path = run_dir / "corosync" / "corosync-authkey-ssu01"
    assert len(key) == AUTHKEY_BYTES and path.read_bytes() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    written = path.stat().st_mtime_ns
    assert pair_authkey("ssu01") == key and path.stat().st_mtime_ns == written
    assert pair_authkey("ssu02") != key


def test_a_job_hands_the_key_as_a_secret_file_and_the_conf_from_the_rows(run_dir, world, mds_spec):
    for server in mds_spec["servers"]:
        mgmt, heartbeat = LINKS[server["hostname"]]
        server.update(mgmt_address=mgmt, heartbeat_address=heartbeat)
    pairs = save_plans([mds_spec], BMC)
    job = create_job(KIND, "Provision mds01", pairs=pairs)

    first = ProvisioningContext.for_job(job)
    again = ProvisioningContext.for_job(job)
    key = first.secrets["corosync-authkey-mds01"]
    assert len(key) == AUTHKEY_BYTES and again.secrets["corosync-authkey-mds01"] == key
    assert key not in repr(first.variables).encode()
    corosync = first.variables["ostara_corosync"]["mds01"]
    assert corosync["conf"] == build_corosync_conf(first.variables["ostara_plans"]["mds01"])
    assert "ring1_addr: 169.254.2.2\n        name: mds02\n        nodeid: 2\n" in corosync["conf"]
    assert corosync["cluster_name"] == "scratch-mds01-mds"
    assert corosync["nodes"] == ["mds01", "mds02"]
    host = first.inventory["all"]["hosts"]["mds02"]
    assert (host["ostara_mgmt_address"], host["ostara_heartbeat_address"]) == LINKS["mds02"]
