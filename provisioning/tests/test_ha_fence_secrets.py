"""Fence passwords never appear in the CIB, the pcs script or the agents' output.

The fence devices name a script (`password_script`, `snmp_priv_passwd_script`) that prints the
secret from a root-only file on the server. The last tests run the real fence agents
(fence_ipmilan, fence_apc_snmp) with the device parameters from the generated CIB, the real
secret script, and stand-ins for ipmitool and the net-snmp tools (no BMC or PDU here) that
record what they were given.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from provisioning.ha import FenceCredentials, HAConfigError, build_cib, build_pcs_script
from provisioning.ha.cluster import pdu_status_commands
from provisioning.ha.plan import read_plan
from sensors.redundancy import collect_partner_pdu
from sensors.rounds import Round
from sensors.tests.lp import parse_lines

PLANS = Path(__file__).parent / "plans"
SECRET_SCRIPT = Path(__file__).parents[1] / "ha" / "fence-secret"
BMC_PASSWORD = "Bmc-S3cret!oss01"
PDU_AUTH = "Pdu-auth-S3cret"
PDU_PRIV = "Pdu-priv-S3cret"


@pytest.fixture
def plan() -> dict:
    plan = json.loads((PLANS / "oss_pair_24_osts.json").read_text())
    # Fields a plan might carry one day; none of them may leak into the configuration.
    for server in plan["servers"]:
        server["bmc_password"] = BMC_PASSWORD
        server["pdu_password"] = PDU_AUTH
        server["snmp_community"] = PDU_PRIV
    return plan


@pytest.fixture
def secret_dir(tmp_path) -> Path:
    directory = tmp_path / "fence"
    directory.mkdir(mode=0o700)
    for name, secret in (
        ("bmc-oss01", BMC_PASSWORD),
        ("pdu-pdu1-auth", PDU_AUTH),
        ("pdu-pdu1-priv", PDU_PRIV),
    ):
        path = directory / name
        path.write_text(secret + "\n")
        path.chmod(0o600)
    return directory


def fence_device_params(cib_xml: str, device: str) -> dict[str, str]:
    root = ET.fromstring(cib_xml)
    primitive = next(p for p in root.iter("primitive") if p.get("id") == device)
    return {nv.get("name"): nv.get("value") for nv in primitive.iter("nvpair")}


def test_no_password_in_the_cib_or_the_pcs_script(plan):
    for text in (build_cib(plan), build_pcs_script(plan)):
        for secret in (BMC_PASSWORD, PDU_AUTH, PDU_PRIV):
            assert secret not in text


def test_fence_devices_name_the_secret_script_not_a_secret(plan):
    cib = build_cib(plan)
    for device in ("fence-oss01-ipmi", "fence-oss02-ipmi", "fence-oss01-pdu", "fence-oss02-pdu"):
        params = fence_device_params(cib, device)
        assert not {"password", "passwd", "community", "snmp_priv_passwd"} & set(params)
        assert params["password_script"].startswith("/usr/libexec/ostara/fence-secret ")
    assert fence_device_params(cib, "fence-oss01-pdu")["snmp_priv_passwd_script"] == (
        "/usr/libexec/ostara/fence-secret pdu-pdu1-priv"
    )


def test_pcs_script_stores_prompted_secrets_root_only_and_never_prints_them(plan, tmp_path):
    script = tmp_path / "configure.sh"
    script.write_text(build_pcs_script(plan))
    secret_dir = tmp_path / "secrets"
    answers = ["bmc1", "pdu1-auth", "pdu1-priv", "bmc2", "pdu2-auth", "pdu2-priv"]
    completed = subprocess.run(
        ["bash", str(script)],
        input="\n".join(answers) + "\n",
        env={
            **os.environ,
            "STORE_FENCE_SECRETS": "yes",
            "OSTARA_FENCE_SECRET_DIR": str(secret_dir),
        },
        capture_output=True,
        text=True,
        check=True,
    )
    for answer in answers:
        assert answer not in completed.stdout + completed.stderr
    stored = {path.name: path.read_text().strip() for path in secret_dir.iterdir()}
    assert stored == {
        "bmc-oss01": "bmc1",
        "pdu-pdu1-auth": "pdu1-auth",
        "pdu-pdu1-priv": "pdu1-priv",
        "bmc-oss02": "bmc2",
        "pdu-pdu2-auth": "pdu2-auth",
        "pdu-pdu2-priv": "pdu2-priv",
    }
    for path in [secret_dir, *secret_dir.iterdir()]:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
        assert path.stat().st_uid == 0


def run_secret_script(secret_dir: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SECRET_SCRIPT), name],
        env={**os.environ, "OSTARA_FENCE_SECRET_DIR": str(secret_dir)},
        capture_output=True,
        text=True,
    )


def test_secret_script_prints_a_root_only_secret(secret_dir):
    completed = run_secret_script(secret_dir, "bmc-oss01")
    assert completed.returncode == 0
    assert completed.stdout == BMC_PASSWORD + "\n"


def test_secret_script_refuses_a_file_others_can_read(secret_dir):
    (secret_dir / "bmc-oss01").chmod(0o644)
    completed = run_secret_script(secret_dir, "bmc-oss01")
    assert completed.returncode == 1
    assert completed.stdout == ""
    assert BMC_PASSWORD not in completed.stderr


@pytest.mark.parametrize("name", ["", "../fence/bmc-oss01", ".hidden", "bmc oss01", "a;b"])
def test_secret_script_refuses_names_that_could_leave_its_directory(secret_dir, name):
    completed = run_secret_script(secret_dir, name)
    assert completed.returncode == 2
    assert completed.stdout == ""


def fake_tool(directory: Path, name: str, answer: str) -> Path:
    """A stand-in for ipmitool/snmpget that logs its arguments and prints a canned answer."""
    tool = directory / name
    tool.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$*" >> "{directory}/{name}.args"\n'
        f"cat <<'ANSWER'\n{answer}\nANSWER\n"
    )
    tool.chmod(0o755)
    return tool


def run_fence_agent(agent: str, params: dict[str, str], secret_dir: Path) -> str:
    """Call a fence agent the way pacemaker-fenced does: key=value lines on stdin."""
    # pacemaker-fenced keeps pcmk_* options to itself.
    lines = [f"{name}={value}" for name, value in params.items() if not name.startswith("pcmk_")]
    completed = subprocess.run(
        [agent],
        input="\n".join(["action=status", "nodename=oss01", *lines]) + "\n",
        env={**os.environ, "OSTARA_FENCE_SECRET_DIR": str(secret_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Status: ON" in completed.stdout
    return completed.stdout + completed.stderr


def test_fence_ipmilan_gets_the_bmc_password_from_the_script(plan, secret_dir, tmp_path):
    cib = build_cib(plan, FenceCredentials(secret_script=str(SECRET_SCRIPT)))
    params = fence_device_params(cib, "fence-oss01-ipmi")
    # As Pacemaker does for an agent with a 'port' parameter and no pcmk_host_argument.
    params["port"] = "oss01"
    params["ipmitool_path"] = str(fake_tool(tmp_path, "ipmitool", "Chassis Power is on"))
    output = run_fence_agent("fence_ipmilan", params, secret_dir)
    arguments = (tmp_path / "ipmitool.args").read_text().split()
    assert arguments[arguments.index("-P") + 1] == BMC_PASSWORD
    assert arguments[arguments.index("-U") + 1] == "ostara-fence"
    assert arguments[arguments.index("-H") + 1] == "10.20.0.11"
    assert arguments[arguments.index("-I") + 1] == "lanplus"
    assert arguments[arguments.index("-C") + 1] == "3"
    assert BMC_PASSWORD not in output


def test_fence_apc_snmp_gets_the_pass_phrases_from_the_script_and_uses_the_outlet(
    plan, secret_dir, tmp_path
):
    cib = build_cib(plan, FenceCredentials(secret_script=str(SECRET_SCRIPT)))
    params = fence_device_params(cib, "fence-oss01-pdu")
    # An APC rack PDU (sysObjectID), whose outlet answers "on" (1).
    identity = ".1.3.6.1.2.1.1.2.0 .1.3.6.1.4.1.318.1.3.4.5"
    params["snmpwalk_path"] = str(fake_tool(tmp_path, "snmpwalk", identity))
    params["snmpget_path"] = str(fake_tool(tmp_path, "snmpget", ".1.3.6.1.4.1.318 1"))
    params["snmpset_path"] = str(fake_tool(tmp_path, "snmpset", ""))
    output = run_fence_agent("fence_apc_snmp", params, secret_dir)
    query = (tmp_path / "snmpget.args").read_text().split()
    assert query[query.index("-A") + 1] == PDU_AUTH
    assert query[query.index("-X") + 1] == PDU_PRIV
    assert query[query.index("-u") + 1] == "ostara-fence"
    assert query[query.index("-l") + 1] == "AUTHPRIV"
    assert query[query.index("-v") + 1] == "3"
    assert query[-2] == "pdu1:161"
    assert query[-1].endswith(".3")  # outlet 3 of pdu1, not the node name
    # Without verbose=1 (never set by build_cib) the agent prints neither pass phrase.
    assert PDU_AUTH not in output and PDU_PRIV not in output


@pytest.mark.parametrize(
    "password",
    [
        "{{ lookup('pipe','id') }}{% raw %}",
        'it\'s "quoted" \\ $HOME $(id) `id` ; | & * ~ # %',
        "inner spaces  twice",
        "-P looks-like-an-option",
        "é☃ unicode",
    ],
)
def test_fence_ipmilan_gets_any_printable_password_byte_for_byte(plan, tmp_path, password):
    """Whatever printable password the wizard accepts reaches ipmitool as one argument, exactly."""
    secret_dir = tmp_path / "fence"
    secret_dir.mkdir(mode=0o700)
    # What ha.yml copies to the server: the password and a newline.
    (secret_dir / "bmc-oss01").write_text(password + "\n")
    (secret_dir / "bmc-oss01").chmod(0o600)
    ipmitool = tmp_path / "ipmitool"
    ipmitool.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\0' \"$@\" > '{tmp_path}/ipmitool.argv'\n"
        "echo 'Chassis Power is on'\n"
    )
    ipmitool.chmod(0o755)
    cib = build_cib(plan, FenceCredentials(secret_script=str(SECRET_SCRIPT)))
    params = fence_device_params(cib, "fence-oss01-ipmi")
    params["port"] = "oss01"
    params["ipmitool_path"] = str(ipmitool)
    run_fence_agent("fence_ipmilan", params, secret_dir)
    argv = (tmp_path / "ipmitool.argv").read_text().split("\0")
    assert argv[argv.index("-P") + 1] == password


@pytest.mark.parametrize("field", ["ipmi_username", "pdu_username"])
def test_a_fence_user_that_ipmitool_would_read_as_an_option_is_refused(plan, field):
    with pytest.raises(HAConfigError) as refusal:
        build_cib(plan, {field: "-x"})
    assert f"fence_credentials.{field}" in str(refusal.value)


@pytest.mark.parametrize(
    ("outlet", "fields"),
    [("1", {"answered": 1, "power_on": 1}), ("2", {"answered": 1, "power_on": 0})],
)
def test_the_sensors_pdu_poll_runs_the_real_agent_with_the_devices_options(
    plan, secret_dir, tmp_path, monkeypatch, outlet, fields
):
    """The command a partner's sensor polls (``[partner] pdu_command``) is the real
    fence_apc_snmp's CLI: its status exit codes become the second fencing level's point."""
    commands = pdu_status_commands(
        read_plan(plan), FenceCredentials(secret_script=str(SECRET_SCRIPT))
    )
    identity = ".1.3.6.1.2.1.1.2.0 .1.3.6.1.4.1.318.1.3.4.5"
    tools = [
        f"--{name}-path={fake_tool(tmp_path, name, answer)}"
        for name, answer in (
            ("snmpwalk", identity),
            ("snmpget", f".1.3.6.1.4.1.318 {outlet}"),
            ("snmpset", ""),
        )
    ]
    monkeypatch.setenv("OSTARA_FENCE_SECRET_DIR", str(secret_dir))
    rnd = Round(1000, {"server": "oss02"})
    collect_partner_pdu(rnd, "oss01", f"{commands['oss01']} {' '.join(tools)}", 30)
    assert rnd.errors == 0, rnd.lines
    (point,) = parse_lines(rnd.lines)
    assert (point.measurement, point.tags, point.fields) == (
        "pdu_power",
        {"server": "oss01", "polled_by": "oss02"},
        fields,
    )
    query = (tmp_path / "snmpget.args").read_text().split()
    assert query[query.index("-A") + 1] == PDU_AUTH and query[-2] == "pdu1:161"
    # A PDU that does not answer: the level cannot fence.
    fake_tool(tmp_path, "snmpget", "").write_text("#!/bin/sh\necho Timeout >&2\nexit 1\n")
    rnd = Round(1000, {"server": "oss02"})
    collect_partner_pdu(rnd, "oss01", f"{commands['oss01']} {' '.join(tools)}", 30)
    assert parse_lines(rnd.lines)[0].fields == {"answered": 0}


@pytest.mark.parametrize("outlet", ["-x:1", "pdu1:--plug", "pdu1:0"])
def test_an_outlet_that_could_be_read_as_an_option_gets_no_poll_command(plan, outlet):
    plan["servers"][0]["pdu_outlet"] = outlet
    with pytest.raises(HAConfigError):
        pdu_status_commands(read_plan(plan))
