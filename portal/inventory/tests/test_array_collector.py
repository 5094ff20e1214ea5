"""The arrays' REST collector on the management server (issue 33): each array's controllers'
management addresses (checked on the way in, the field named), its own monitor password kept
encrypted and handed to the collector only as a 0600 secret file, each controller's certificate
pinned by the sensor step (a changed one refused, naming the controller and both), and the
collector's configuration."""

from __future__ import annotations

import copy
import hashlib
import html
import http.server
import json
import ssl
import subprocess
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.exceptions import ValidationError

from portal.inventory import provisioning
from portal.inventory.models import StorageArray
from portal.inventory.provisioning import (
    ARRAYS_KIND,
    KIND,
    ProvisioningContext,
    run_sensor_step,
)
from portal.inventory.services import (
    pin_certificates,
    rest_arrays,
    save_plans,
    take_from_virtual_rack,
)
from portal.inventory.services.arrays import collector_files
from portal.jobs.choices import JobState
from portal.jobs.models import Job, Step
from portal.jobs.registry import StepFailed
from portal.jobs.services import create_job
from portal.jobs.worker import Console
from provisioning.planner import SpecError
from provisioning.runner import PlaybookResult
from sensors.config import load_config

pytestmark = pytest.mark.django_db

MONITOR_PASSWORD = "{{ lookup('pipe','id') }} monitor-Secret"


class Controller:
    """A controller's HTTPS port on 127.0.0.1 serving a throwaway certificate (openssl CLI)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = 0
        self._server: http.server.HTTPServer | None = None

    def certificate(self, name: str) -> tuple[Path, Path, str]:
        cert, key = self.directory / f"{name}.crt", self.directory / f"{name}.key"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-days", "1", "-subj", f"/CN={name}", "-keyout", key, "-out", cert],
            check=True, capture_output=True,
        )  # fmt: skip
        der = ssl.PEM_cert_to_DER_cert(cert.read_text())
        return cert, key, hashlib.sha256(der).hexdigest()

    def serve(self, name: str) -> str:
        """Serve a new certificate (on the same port as before); its fingerprint."""
        cert, key, fingerprint = self.certificate(name)
        self.serve_files(cert, key)
        return fingerprint

    def serve_files(self, cert: Path, key: Path) -> None:
        """Serve this certificate and key (on the same port as before)."""
        self.stop()
        server = http.server.HTTPServer(
            ("127.0.0.1", self.port), http.server.BaseHTTPRequestHandler
        )
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


@pytest.fixture
def controller(tmp_path):
    served = Controller(tmp_path)
    yield served
    served.stop()


@pytest.fixture
def appliance(tmp_path, settings):
    settings.RUN_DIR = tmp_path / "run"
    settings.ANSIBLE_WORK_DIR = tmp_path / "run" / "ansible"
    settings.OSTARA_ARRAYS_DIR = str(tmp_path / "run" / "arrays")
    settings.OSTARA_ARRAYS_SERVER = "mgmt01"
    settings.OSTARA_ARRAY_CA_FILE = ""
    settings.VIRTUAL_RACK = None
    return settings


@pytest.fixture
def playbooks(monkeypatch) -> list[dict]:
    """The playbook runs a step asks for, with what it hands them (ansible itself is proved by
    the rack tests; here: what reaches it)."""
    runs: list[dict] = []

    def run(playbook, inventory, extravars=None, **kwargs):
        runs.append(
            {"playbook": playbook, "inventory": inventory, "extravars": extravars, **kwargs}
        )
        return PlaybookResult(playbook, "successful", 0, ok={"localhost": 1})

    monkeypatch.setattr(provisioning, "run_playbook", run)
    return runs


def with_management(spec: dict, *addresses: list[str]) -> dict:
    spec = copy.deepcopy(spec)
    for array, pair in zip(spec["arrays"], addresses, strict=True):
        array["management"] = pair
    return spec


def monitor(spec: dict, password: str = MONITOR_PASSWORD) -> dict:
    return {array["name"]: ("monitor", password) for array in spec["arrays"]}


def pinned() -> set[tuple[str, str]]:
    """(A's pin, B's pin) of the SSU's arrays."""
    return {
        (a.certificate_a_sha256, a.certificate_b_sha256)
        for a in StorageArray.objects.filter(pair__name="ssu01")
    }


def sensor_step(pairs) -> SimpleNamespace:
    job = create_job(KIND, "Provision", pairs=pairs)
    step = Step.objects.get(job=job, name="sensor")
    return SimpleNamespace(
        job=job, step=step, console=Console(step), context=ProvisioningContext.for_job(job)
    )


def test_the_monitor_password_is_kept_encrypted_and_read_back_exactly(
    filesystem_with_mds, ssu_spec
):
    spec = with_management(ssu_spec, ["10.20.1.21", "10.20.1.22:8443"], ["ctl-b1", "ctl-b2"])
    (pair,) = save_plans([spec], monitor_credentials=monitor(spec))
    array = pair.arrays.get(name="ssu01-a")
    assert (array.management_a, array.management_b) == ("10.20.1.21", "10.20.1.22:8443")
    assert array.monitor_user == "monitor"
    assert MONITOR_PASSWORD not in array.monitor_password_encrypted
    assert "monitor-Secret" not in array.monitor_password_encrypted
    assert StorageArray.objects.get(pk=array.pk).monitor_password == MONITOR_PASSWORD


@pytest.mark.parametrize(
    ("addresses", "field", "words"),
    [
        (["10.20.1.21", "10.20.1.300"], "arrays[0].management[1]", "octet 300 is above 255"),
        (["10.20.1.21", "ctl a"], "arrays[0].management[1]", "not an IPv4 address, an IPv6"),
        (["-oProxyCommand=x", "ctl-b"], "arrays[0].management[0]", "not an IPv4 address"),
        (["ctl-a:99999", "ctl-b"], "arrays[0].management[0]", "port must be a number"),
        (["[fd00::21]:8443", "fd00::zz"], "arrays[0].management[1]", "is not an IPv6 address"),
        (["ctl-a", "CTL-A"], "arrays[0].management[1]", "must differ from controller A's"),
        (["ctl-a"], "arrays[0].management", "A's and B's management address"),
        (["ctl-a", "ctl-b\n[sensor]"], "arrays[0].management[1]", "not an IPv4 address"),
    ],
)
def test_a_bad_controller_address_is_refused_at_its_field_and_nothing_is_saved(
    filesystem_with_mds, ssu_spec, addresses, field, words
):
    spec = with_management(ssu_spec, addresses, ["10.20.1.31", "10.20.1.32"])
    with pytest.raises(SpecError) as refused:
        save_plans([spec], monitor_credentials=monitor(spec))
    assert words in refused.value.errors[field], refused.value.errors
    assert not StorageArray.objects.filter(pair__name="ssu01").exists()


def test_ipv4_ipv6_and_host_names_with_or_without_a_port_are_accepted(
    filesystem_with_mds, ssu_spec
):
    spec = with_management(ssu_spec, ["[fd00::21]:8443", "fd00::22"], ["ctl-b1.site", "ctl-b2:443"])
    (pair,) = save_plans([spec])
    assert [a.controller_addresses for a in pair.arrays.order_by("name")] == [
        ("[fd00::21]:8443", "fd00::22"),
        ("ctl-b1.site", "ctl-b2:443"),
    ]


def test_an_array_edited_with_one_address_or_a_bad_account_is_refused_naming_the_field(
    filesystem_with_mds, ssu_spec
):
    (pair,) = save_plans([ssu_spec])
    array = pair.arrays.first()
    array.management_a, array.monitor_user = "10.20.1.21", "-x"
    with pytest.raises(ValidationError) as refused:
        array.full_clean()
    assert "or neither" in refused.value.message_dict["management_b"][0]
    assert "not an array account name" in refused.value.message_dict["monitor_user"][0]
    array.certificate_b_sha256 = "AB" * 32
    with pytest.raises(ValidationError) as refused:
        array.full_clean()
    assert "64 lowercase hex digits" in refused.value.message_dict["certificate_b_sha256"][0]


def test_a_bad_monitor_password_is_refused_at_its_field(filesystem_with_mds, ssu_spec):
    spec = with_management(ssu_spec, ["10.20.1.21", "10.20.1.22"], ["10.20.1.31", "10.20.1.32"])
    with pytest.raises(SpecError) as refused:
        save_plans([spec], monitor_credentials=monitor(spec, "two\nlines"))
    assert "control or invisible character" in refused.value.errors["arrays[0].monitor_password"]
    assert not StorageArray.objects.filter(pair__name="ssu01").exists()


@pytest.fixture
def controller_b(tmp_path):
    served = Controller(tmp_path)
    yield served
    served.stop()


def test_the_sensor_step_pins_each_controller_once_and_refuses_a_changed_certificate(
    appliance, playbooks, controller, controller_b, filesystem_with_mds, ssu_spec
):
    first_a, first_b = controller.serve("first-a"), controller_b.serve("first-b")
    address_a, address_b = f"127.0.0.1:{controller.port}", f"127.0.0.1:{controller_b.port}"
    spec = with_management(ssu_spec, [address_a, address_b], [address_a, address_b])
    pairs = save_plans([spec], monitor_credentials=monitor(spec))

    run = sensor_step(pairs)
    run_sensor_step(run)
    assert pinned() == {(first_a, first_b)}  # each controller its own
    run.console.flush()
    assert (
        f"array ssu01-a: controller B ({address_b}): pinned certificate {first_b}" in run.step.log
    )

    run_sensor_step(sensor_step(pairs))  # the same certificates: passes, nothing re-pinned
    assert pinned() == {(first_a, first_b)}

    # Controller B now serves another certificate: refused, naming B, its address and both.
    second_b = controller_b.serve("second-b")
    with pytest.raises(StepFailed) as refused:
        run_sensor_step(sensor_step(pairs))
    message = str(refused.value)
    assert f"array ssu01-a: controller B ({address_b}) serves the certificate {second_b}" in message
    assert f"not its pinned {first_b}" in message
    assert "clear controller B's certificate of ssu01-a" in message
    assert pinned() == {(first_a, first_b)}

    # Cleared in the admin (the replacement was on purpose): pinned again, B's only.
    StorageArray.objects.update(certificate_b_sha256="")
    run_sensor_step(sensor_step(pairs))
    assert pinned() == {(first_a, second_b)}


def test_a_controller_presenting_its_partners_certificate_is_refused(
    appliance, playbooks, controller, controller_b, filesystem_with_mds, ssu_spec
):
    """Controller A serving the certificate pinned for B: refused as A's, naming both."""
    fingerprint_a, fingerprint_b = controller.serve("a"), controller_b.serve("b")
    address_a, address_b = f"127.0.0.1:{controller.port}", f"127.0.0.1:{controller_b.port}"
    spec = with_management(ssu_spec, [address_a, address_b], [address_a, address_b])
    pairs = save_plans([spec], monitor_credentials=monitor(spec))
    run_sensor_step(sensor_step(pairs))
    assert pinned() == {(fingerprint_a, fingerprint_b)}

    controller.serve_files(controller_b.directory / "b.crt", controller_b.directory / "b.key")
    with pytest.raises(StepFailed) as refused:
        run_sensor_step(sensor_step(pairs))
    message = str(refused.value)
    assert (
        f"array ssu01-a: controller A ({address_a}) serves the certificate {fingerprint_b}, "
        f"not its pinned {fingerprint_a}"
    ) in message
    assert pinned() == {(fingerprint_a, fingerprint_b)}


def test_an_array_never_pinned_that_does_not_answer_fails_the_step(
    appliance, playbooks, filesystem_with_mds, ssu_spec
):
    spec = with_management(ssu_spec, ["127.0.0.1:1", "127.0.0.1:2"], ["127.0.0.1:3", "127.0.0.1:4"])
    pairs = save_plans([spec], monitor_credentials=monitor(spec))
    with pytest.raises(StepFailed, match="ssu01-a: neither controller answered"):
        run_sensor_step(sensor_step(pairs))
    assert playbooks == []


def test_the_collector_is_configured_from_the_inventory_and_the_password_only_as_a_file(
    appliance, playbooks, controller, filesystem_with_mds, ssu_spec
):
    fingerprint = controller.serve("array")
    address = f"127.0.0.1:{controller.port}"
    spec = with_management(ssu_spec, [address, "localhost:1"], [address, "[::1]:2"])
    # Each array its own monitor account.
    accounts = {"ssu01-a": ("monitor", MONITOR_PASSWORD), "ssu01-b": ("watch", "other-Secret")}
    pairs = save_plans([spec], monitor_credentials=accounts)
    run = sensor_step(pairs)
    run_sensor_step(run)

    collector, servers = playbooks
    assert collector["playbook"] == "collector.yml" and servers["playbook"] == "sensor.yml"
    config = collector["extravars"]["ostara_collector_config"]
    arrays_dir = Path(appliance.OSTARA_ARRAYS_DIR)
    assert "[sensor]\nserver = mgmt01\n" in config and "\ncollect = santricity\n" in config
    # It asks the arrays at every round of its own: its rounds are the arrays' interval.
    assert f"\ninterval = {appliance.OSTARA_ARRAY_INTERVAL}\ncollect" in config
    assert "arrays = ssu01-a ssu01-b\n" in config
    # Controller B of each never answered: not pinned yet (`-`), the collector will not ask it.
    assert (
        f"[santricity.ssu01-a]\ncontrollers = {address} localhost:1\n"
        f"fingerprints = {fingerprint} -\nuser = monitor\n"
        f"password_file = {arrays_dir / 'ssu01-a.password'}\n"
    ) in config
    assert (
        f"[santricity.ssu01-b]\ncontrollers = {address} [::1]:2\n"
        f"fingerprints = {fingerprint} -\nuser = watch\n"
        f"password_file = {arrays_dir / 'ssu01-b.password'}\n"
    ) in config
    assert collector["secrets"] == {
        "santricity-monitor-password-ssu01-a": MONITOR_PASSWORD + "\n",
        "santricity-monitor-password-ssu01-b": "other-Secret\n",
    }
    assert collector["extravars"]["ostara_collector_arrays"] == ["ssu01-a", "ssu01-b"]
    # The password: in the secret file only, never a variable, the inventory or the job's log.
    run.console.flush()
    for run_ in playbooks:
        handed = json.dumps([run_["inventory"], run_["extravars"]])
        assert "monitor-Secret" not in handed and "other-Secret" not in handed
    assert "-Secret" not in run.step.log + run.step.output
    assert "-Secret" not in json.dumps(servers.get("secrets") or {}, default=str)
    # The servers read no array through SMcli any more: the collector reads them all.
    assert servers["extravars"]["ostara_smcli_arrays"] == {"ssu01": []}
    assert "array" not in servers["extravars"]["ostara_server_collectors"]


def test_arrays_without_addresses_stay_with_smcli_and_no_collector_runs(
    appliance, playbooks, filesystem_with_mds, ssu_spec
):
    pairs = save_plans([ssu_spec])
    run_sensor_step(sensor_step(pairs))
    (servers,) = playbooks  # no collector was ever configured: none to start or stop
    assert servers["playbook"] == "sensor.yml"
    assert servers["extravars"]["ostara_smcli_arrays"] == {"ssu01": ["ssu01-a", "ssu01-b"]}


def test_with_a_site_ca_nothing_is_pinned_and_the_collector_verifies_against_it(
    appliance, playbooks, tmp_path, filesystem_with_mds, ssu_spec
):
    appliance.OSTARA_ARRAY_CA_FILE = str(tmp_path / "site-ca.pem")
    spec = with_management(ssu_spec, ["127.0.0.1:1", "127.0.0.1:2"], ["127.0.0.1:3", "127.0.0.1:4"])
    pairs = save_plans([spec], monitor_credentials=monitor(spec))
    run_sensor_step(sensor_step(pairs))
    config = playbooks[0]["extravars"]["ostara_collector_config"]
    assert config.count(f"ca_file = {tmp_path / 'site-ca.pem'}\n") == 2
    assert "fingerprint" not in config
    assert set(
        StorageArray.objects.values_list("certificate_a_sha256", "certificate_b_sha256")
    ) == {("", "")}


def test_on_the_virtual_rack_the_addresses_and_account_come_from_rack_json(
    tmp_path, filesystem_with_mds, ssu_spec
):
    rack = tmp_path / "rack"
    (rack / "santricity").mkdir(parents=True)
    (rack / "santricity" / "ssu01-a.password").write_text("rack-secret\n")
    (rack / "santricity" / "monitor.password").write_text("older-rack-secret\n")
    record = {
        "system_id": "1", "user": "monitor", "password_file": "santricity/ssu01-a.password",
        "controllers": {"A": {"address": "127.0.0.1", "port": 40123, "sha256": "AB" * 32},
                        "B": {"address": "127.0.0.1", "port": 40124, "sha256": "cd" * 32}},
    }  # fmt: skip
    # An older rack's record: one certificate and one password file for the array.
    older = {
        "system_id": "1", "user": "monitor", "password_file": "santricity/monitor.password",
        "sha256": "ef" * 32,
        "controllers": {"A": {"address": "127.0.0.1", "port": 40125},
                        "B": {"address": "127.0.0.1", "port": 40126}},
    }  # fmt: skip
    arrays = {"ssu01-a": {"management": record}, "ssu01-b": {"management": older}}
    (rack / "rack.json").write_text(json.dumps({"arrays": arrays}))
    save_plans([ssu_spec])
    assert take_from_virtual_rack(rack) == ["ssu01-a", "ssu01-b"]
    array = StorageArray.objects.get(name="ssu01-a")
    assert array.controller_addresses == ("127.0.0.1:40123", "127.0.0.1:40124")
    assert array.monitor_password == "rack-secret"
    assert array.pins == {"A": "ab" * 32, "B": "cd" * 32}
    older_array = StorageArray.objects.get(name="ssu01-b")
    assert older_array.pins == {"A": "ef" * 32, "B": "ef" * 32}
    assert older_array.monitor_password == "older-rack-secret"
    assert take_from_virtual_rack(rack) == []  # unchanged: nothing written again
    # A pin cleared (a replaced controller): taken again from the rack's record.
    StorageArray.objects.filter(name="ssu01-a").update(certificate_b_sha256="")
    assert take_from_virtual_rack(rack) == ["ssu01-a"]
    assert StorageArray.objects.get(name="ssu01-a").pins["B"] == "cd" * 32


def test_an_admin_moves_an_existing_array_to_the_collector_password_kept_encrypted(
    client, world, monkeypatch, filesystem_with_mds, ssu_spec
):
    (pair,) = save_plans([ssu_spec])  # an appliance provisioned before the collector
    provisioned = create_job(KIND, "Provision ssu01", pairs=[pair])
    Job.objects.filter(pk=provisioned.pk).update(state=JobState.SUCCEEDED)
    queued: list = []
    monkeypatch.setattr(provisioning, "enqueue", queued.append)
    array = pair.arrays.get(name="ssu01-a")
    client.login(username="admin", password="pw-admin-123!")
    url = f"/admin/inventory/storagearray/{array.pk}/change/"
    form = {"monitor_user": "monitor", "_save": "Save"}
    form |= {"certificate_a_sha256": "", "certificate_b_sha256": ""}
    inline = {"enclosures-TOTAL_FORMS": "0", "enclosures-INITIAL_FORMS": "0"}
    refused = client.post(url, {**form, **inline, "management_a": "10.20.1.21"})
    refusal = html.unescape(refused.content.decode())
    assert "give both controllers' management addresses, or neither" in refusal
    posted = {"management_a": "10.20.1.21", "management_b": "10.20.1.22:8443"}
    response = client.post(url, {**form, **inline, **posted, "monitor_password": "m0n secret"})
    assert response.status_code == 302, response.content.decode()[-3000:]
    array.refresh_from_db()
    assert array.controller_addresses == ("10.20.1.21", "10.20.1.22:8443")
    assert array.monitor_password == "m0n secret"
    assert "m0n" not in array.monitor_password_encrypted
    # The pair is built: the sensor step runs again, and only it, to move the array.
    (job,) = queued
    assert job.kind == ARRAYS_KIND and [s.name for s in job.steps.all()] == ["sensor"]
    client.post(url, {**form, **inline, **posted, "monitor_password": ""})
    array.refresh_from_db()
    assert array.monitor_password == "m0n secret"  # empty: the one set before is kept

    # Each controller's pin is shown and cleared on its own (a replaced controller B).
    pins = {"certificate_a_sha256": "ab" * 32, "certificate_b_sha256": "cd" * 32}
    StorageArray.objects.filter(pk=array.pk).update(**pins)
    page = client.get(url).content.decode()
    assert "Controller A&#x27;s certificate (SHA-256)" in page and "cd" * 32 in page
    queued.clear()
    client.post(url, {**form, **inline, **posted, **pins, "certificate_b_sha256": ""})
    array.refresh_from_db()
    assert array.pins == {"A": "ab" * 32, "B": ""}
    assert [job.kind for job in queued] == [ARRAYS_KIND]  # the sensor step pins B again


def test_on_the_virtual_rack_its_arrays_api_is_taken_and_its_certificates_pinned(
    appliance, tmp_path, mds_spec, ssu_spec
):
    """Against the rack's own SANtricity REST server (simulator arrays-api): the addresses and
    account its rack.json records, and the certificate each controller serves, agree; the
    collector configured from them reads every array, each with its own password."""
    from provisioning.planner import make_plan
    from sensors.rounds import Round
    from sensors.santricity import SantricityCollector
    from sensors.tests.lp import parse_lines, points_of
    from simulator import provision
    from simulator.rack import Rack
    from simulator.santricity.server import ArraysApi

    root = tmp_path / "rack"
    with Rack.open(root, create=True) as rack:
        provision.build(rack, make_plan(copy.deepcopy(mds_spec)))
        provision.build(rack, make_plan(copy.deepcopy(ssu_spec)))
    api = ArraysApi(root)
    api.start()
    try:
        save_plans([mds_spec, ssu_spec])
        assert take_from_virtual_rack(root) == ["mds01-a", "ssu01-a", "ssu01-b"]
        said: list[str] = []
        pin_certificates(rest_arrays(), said.append)
        records = json.loads((root / "rack.json").read_text())["arrays"]
        record = records["ssu01-b"]["management"]
        served = {c: record["controllers"][c]["sha256"] for c in "AB"}
        assert served["A"] != served["B"]
        array = StorageArray.objects.get(name="ssu01-b")
        assert array.pins == served
        port_a, port_b = (record["controllers"][c]["port"] for c in "AB")
        assert f"array ssu01-b: controller B (127.0.0.1:{port_b}): certificate as pinned" in (
            "\n".join(said)
        )
        # The rack gives each array its own monitor password.
        passwords = {
            name: (root / r["management"]["password_file"]).read_text()
            for name, r in records.items()
        }
        assert len(set(passwords.values())) == len(passwords) == 3
        collector = tmp_path / "arrays-collector"
        files = collector_files(rest_arrays(), collector)
        assert (
            f"controllers = 127.0.0.1:{port_a} 127.0.0.1:{port_b}\n"
            f"fingerprints = {served['A']} {served['B']}\n"
        ) in files.config
        assert files.passwords == passwords
        # The sensor program reads it as the collector it is: santricity only, every array.
        collector.mkdir()
        (collector / "collector.conf").write_text(files.config)
        for name, text in files.passwords.items():
            (collector / f"{name}.password").write_text(text)
        config = load_config(collector / "collector.conf")
        assert config.collectors == ("santricity",) and config.server == "mgmt01"
        read = {a.name: (a.controllers, a.fingerprints) for a in config.santricity_arrays}
        assert read["ssu01-b"] == (
            (("127.0.0.1", port_a), ("127.0.0.1", port_b)),
            (served["A"], served["B"]),
        )
        assert sorted(read) == ["mds01-a", "ssu01-a", "ssu01-b"]
        # ...and reads every array, each logged in to with its own password.
        santricity = SantricityCollector(config)
        try:
            rnd = Round(1_795_732_860_000, {"server": "mgmt01"})
            santricity.collect(rnd)
        finally:
            santricity.close()
        assert rnd.errors == 0
        asked = points_of(parse_lines(rnd.lines), "array_management")
        assert {(p.tags["array"], p.tags["controller"], p.fields["answered"]) for p in asked} == {
            ("mds01-a", "A", 1),
            ("ssu01-a", "A", 1),
            ("ssu01-b", "A", 1),
        }
    finally:
        api.stop()
