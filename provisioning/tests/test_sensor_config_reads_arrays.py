"""The sensor's configuration that provisioning writes (sensor.yml): both servers of a pair
read its arrays through SMcli, so with one server down the other still reports them (issue 31),
unless the management server's REST collector reads them (issue 33): then they read none, and
each array's points are written once."""

from __future__ import annotations

from pathlib import Path

import jinja2
import yaml

from sensors.config import COLLECTORS, load_config

PLAYBOOK = Path(__file__).resolve().parents[1] / "ansible" / "project" / "sensor.yml"


def sensor_conf(
    host: str, partner: str, smcli_arrays: tuple[str, ...] = ("ssu01-a", "ssu01-b")
) -> str:
    """The configuration task's content as ansible renders it for ``host``."""
    (play,) = yaml.safe_load(PLAYBOOK.read_text())
    name = "The sensor's configuration for this server"
    (task,) = [t for t in play["tasks"] if t["name"] == name]
    values = {
        "inventory_hostname": host,
        "ostara_root": "",
        "virtual": False,
        "ostara_sensor_interval": 10,
        "ostara_bmc_interval": 60,
        "ostara_partner_interval": 45,
        "ostara_array_interval": 90,
        "ostara_multipath_interval": 30,
        "ostara_cluster_interval": 10,
        "ostara_lnet_interval": 15,
        "ostara_role": "oss",
        "ostara_pair": "ssu01",
        "ostara_influxdb_url": "http://appliance:8086",
        "ostara_influxdb_database": "ostara",
        "ostara_partner": partner,
        "ostara_partner_nids": ["10.0.0.2@tcp"],
        "ostara_partner_bmc": f"{partner}-bmc",
        "ostara_partner_bmc_user": "ostara-fence",
        "ostara_pdu_status": {partner: "fence_apc_snmp --ip=pdu2 --plug=3 -o status"},
        "ostara_smcli": "/opt/dell/mdstoragemanager/client/SMcli",
        "smcli_arrays": list(smcli_arrays),
        "ostara_server_collectors": [c for c in COLLECTORS if c not in ("array", "santricity")],
    }
    content = task["ansible.builtin.copy"]["content"]
    return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(content).render(values)


def test_both_servers_of_a_pair_read_its_arrays(tmp_path):
    for host, partner in (("oss01", "oss02"), ("oss02", "oss01")):
        path = tmp_path / f"{host}.conf"
        path.write_text(sensor_conf(host, partner))
        config = load_config(path)
        assert config.server == host
        assert config.array_names == ("ssu01-a", "ssu01-b"), f"{host} does not read the arrays"
        assert config.array_smcli.endswith("SMcli")


def test_servers_read_no_array_the_rest_collector_reads(tmp_path):
    path = tmp_path / "oss01.conf"
    path.write_text(sensor_conf("oss01", "oss02", smcli_arrays=()))
    config = load_config(path)
    assert "array" not in config.collectors
    assert config.array_names == () and not config.array_smcli
    # Everything else the server collected, it still collects.
    assert set(config.collectors) == set(COLLECTORS) - {"array", "santricity"}


def test_an_array_without_management_addresses_stays_with_smcli(tmp_path):
    path = tmp_path / "oss01.conf"
    path.write_text(sensor_conf("oss01", "oss02", smcli_arrays=("ssu01-b",)))
    config = load_config(path)
    assert "array" in config.collectors
    assert config.array_names == ("ssu01-b",)


def test_each_collector_runs_at_the_interval_provisioning_writes(tmp_path):
    """Each setting (OSTARA_BMC_INTERVAL, ...) reaches its own collector's section."""
    path = tmp_path / "oss01.conf"
    path.write_text(sensor_conf("oss01", "oss02"))
    config = load_config(path)
    intervals = {
        name: config.interval_of(name)
        for name in ("bmc", "partner_bmc", "partner_pdu", "array", "multipath", "cluster", "lnet")
    }
    assert intervals == {
        "bmc": 60,
        "partner_bmc": 45,
        "partner_pdu": 45,
        "array": 90,
        "multipath": 30,
        "cluster": 10,
        "lnet": 15,
    }
    assert config.interval == 10
