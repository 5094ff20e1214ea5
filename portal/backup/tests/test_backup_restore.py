"""`manage.py backup` and `restore`: a round trip into a fresh run directory gives back the same
inventory, jobs, rules, users, keys and metrics; a bad archive, a database in use and an InfluxDB
that is down are refused before anything changes."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection

from deploy.tests.conftest import running_postgresql
from portal import influxdb as influx
from portal.accounts import crypto
from portal.conftest import REPO, run_services_script
from portal.inventory.services import pair_authkey

pytestmark = [pytest.mark.django_db, pytest.mark.services]

SPECS = REPO / "provisioning" / "tests" / "specs"
BMC_PASSWORD = "bmc-Secret-4711"
# The tables a user would miss after a restore, compared row by row.
COMPARED_APPS = ("inventory", "jobs", "alerts", "auth", "accounts")
POINTS = [
    "ost_stats,server=oss01,target=scratch-OST0000 read_bytes=1024i,write_bytes=2048i 1700000000",
    "ost_stats,server=oss01,target=scratch-OST0000 read_bytes=4096i,write_bytes=8192i 1700000010",
    "node,server=mds01 load1=0.5 1700000000",
]


@pytest.fixture
def run_dir(tmp_path, settings):
    """The appliance's run directory for the test, with its own keys; crypto reads them anew."""
    settings.RUN_DIR = tmp_path / "run"
    settings.RUN_DIR.mkdir()
    (settings.RUN_DIR / "secret_key").write_text("k" * 50)
    crypto.forget_key()
    yield settings.RUN_DIR
    crypto.forget_key()


@pytest.fixture
def metrics(services, settings):
    settings.INFLUXDB_DATABASE = f"backup_{uuid.uuid4().hex[:10]}"
    influx.ensure_database()
    influx.write_lines(POINTS)
    yield settings.INFLUXDB_DATABASE
    influx.client().drop_database(settings.INFLUXDB_DATABASE)


@pytest.fixture
def appliance(world, run_dir, tmp_path):
    """Real state: an MDS pair and an SSU with stored BMC passwords, a finished job with its
    steps, a default alert rule edited and one added, users in roles and a first admin."""
    from portal.accounts.services import ensure_admin
    from portal.alerts.models import Rule
    from portal.inventory.services import save_plan
    from portal.jobs.tests.actions import THREE_STEPS
    from portal.jobs.worker import run_job

    specs = [
        json.loads((SPECS / f"{name}.json").read_text()) for name in ("mds_pair", "reference_ssu")
    ]
    pairs = []
    for spec in specs:
        credentials = {server["hostname"]: ("root", BMC_PASSWORD) for server in spec["servers"]}
        pairs.append(save_plan(copy.deepcopy(spec), credentials))
    job = _create_job(THREE_STEPS.kind, pairs, world["operator"], tmp_path)
    run_job(job.pk)
    rule = Rule.objects.order_by("pk").first()
    rule.enabled = False
    rule.repeat_seconds = 1234
    rule.save()
    Rule.objects.create(
        name="OST00 nearly full", condition="health", health_state="full", for_seconds=30
    )
    admin = ensure_admin(run_dir, username="first-admin")
    # The worker's SSH key: the run directory is the services' home.
    (run_dir / ".ssh").mkdir(mode=0o700)
    (run_dir / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n...\n")
    (run_dir / ".ssh" / "known_hosts").write_text("oss01 ssh-ed25519 AAAA...\n")
    # The pair's Corosync authkey: a new one would keep its servers out of their cluster.
    pair_authkey("ssu01")
    return {"job": job, "admin": admin}


def _create_job(kind, pairs, user, tmp_path):
    from portal.jobs.services import create_job

    params = {"record": str(tmp_path / "ran.txt"), "broken": str(tmp_path / "broken")}
    return create_job(kind, "Provision ssu01", params=params, pairs=pairs, user=user)


def _restore_env(run_dir: Path, influxdb_database: str) -> dict[str, str]:
    """A fresh appliance's environment: its own run directory (and SQLite database in it) and
    its own InfluxDB database on the same server."""
    env = dict(os.environ)
    for name in ("DATABASE_URL", "OSTARA_SECRET_KEY", "OSTARA_CREDENTIALS_KEY"):
        env.pop(name, None)
    env["OSTARA_RUN_DIR"] = str(run_dir)
    env["INFLUXDB_DATABASE"] = influxdb_database
    return env


def _manage(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _tables() -> list[str]:
    from django.apps import apps

    return sorted(
        model._meta.db_table
        for app in COMPARED_APPS
        for model in apps.get_app_config(app).get_models(include_auto_created=True)
        # Permission ids may differ between databases: compared by codename below.
        if model._meta.db_table
        not in ("auth_permission", "auth_group_permissions", "auth_user_user_permissions")
    )


def _rows(cursor, table: str) -> list[tuple]:
    cursor.execute(f'SELECT * FROM "{table}" ORDER BY 1')
    return [tuple(row) for row in cursor.fetchall()]


def _group_permissions(cursor) -> list[tuple]:
    """Permission ids may differ between databases; their codenames may not."""
    cursor.execute(
        "SELECT g.name, p.codename FROM auth_group_permissions gp "
        "JOIN auth_group g ON g.id = gp.group_id JOIN auth_permission p ON p.id = gp.permission_id "
        "ORDER BY 1, 2"
    )
    return cursor.fetchall()


def _archive(tmp_path: Path, *options: str) -> Path:
    path = tmp_path / "backup.tar.gz"
    call_command("backup", "--output", str(path), *options, stdout=io.StringIO())
    return path


def test_a_restore_into_a_fresh_run_directory_gives_back_the_same_appliance(
    appliance, metrics, run_dir, tmp_path
):
    if connection.vendor != "sqlite":
        pytest.skip("the rows are compared with the fresh appliance's SQLite file")
    archive = tmp_path / "backup.tar.gz"
    progress = io.StringIO()
    call_command("backup", "--output", str(archive), stdout=progress)
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    said = progress.getvalue()
    assert f"metrics: snapshot of InfluxDB database '{metrics}'" in said
    assert (
        "secrets: secret_key, credentials.key, admin-password, .ssh/id_ed25519, .ssh/known_hosts, "
        "corosync/corosync-authkey-ssu01" in said
    )
    # Its size as every size the portal writes: binary units by their names ("wrote … (1.2 MiB)").
    assert re.search(rf"wrote {re.escape(str(archive))} \([\d,.]+ (KiB|MiB|GiB)\)", said), said

    fresh = tmp_path / "fresh"
    restored_metrics = f"{metrics}_restored"
    env = _restore_env(fresh, restored_metrics)
    try:
        # A fresh appliance whose InfluxDB already has the database (sensors wrote to it):
        # refused, nothing restored; --force replaces it.
        influx.client().create_database(restored_metrics)
        influx.client().write_points(
            ["ost_stats,server=stray read_bytes=1i 1700000005"],
            database=restored_metrics,
            protocol="line",
            time_precision="s",
        )
        refused = _manage(env, "restore", str(archive))
        assert refused.returncode == 1
        assert (
            f"metrics: InfluxDB database '{restored_metrics}' exists; restore --force replaces it"
            in refused.stderr
        )
        assert not (fresh / "credentials.key").exists()

        restored = _manage(env, "restore", "--force", str(archive))
        assert restored.returncode == 0, restored.stderr
        users = get_user_model().objects.count()
        assert f" {users} users" in restored.stdout and " 1 jobs" in restored.stdout
        assert f"metrics: restored InfluxDB database '{restored_metrics}'" in restored.stdout

        # The same rows, table by table (primary keys kept).
        fresh_db = sqlite3.connect(
            fresh / "ostara.sqlite3", detect_types=sqlite3.PARSE_DECLTYPES | sqlite3.PARSE_COLNAMES
        )
        with connection.cursor() as original:
            for table in _tables():
                assert _rows(fresh_db.cursor(), table) == _rows(original, table), table
            assert _group_permissions(fresh_db.cursor()) == _group_permissions(original)
        fresh_db.close()

        # The keys came with it, mode 0600: passwords log in and the BMC password decrypts.
        for name in (
            "secret_key",
            "credentials.key",
            "admin-password",
            ".ssh/id_ed25519",
            ".ssh/known_hosts",
            "corosync/corosync-authkey-ssu01",
        ):
            assert (fresh / name).read_bytes() == (run_dir / name).read_bytes()
            assert stat.S_IMODE((fresh / name).stat().st_mode) == 0o600
        assert stat.S_IMODE((fresh / ".ssh").stat().st_mode) == 0o700
        check = (
            "import json; from django.contrib.auth import authenticate; "
            "from portal.inventory.models import Server; "
            "logins = {name: authenticate(username=name, password=password) is not None "
            "for name, password in json.loads(input())}; "
            "bmc = sorted({server.bmc_password for server in Server.objects.all()}); "
            "print(json.dumps({'logins': logins, 'bmc': bmc}))"
        )
        passwords = [[name, f"pw-{name}-123!"] for name in ("admin", "operator", "viewer")]
        passwords.append(["first-admin", (fresh / "admin-password").read_text().strip()])
        seen = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", check],
            input=json.dumps(passwords),
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert seen.returncode == 0, seen.stderr
        answer = json.loads(seen.stdout.strip().splitlines()[-1])
        assert answer == {
            "logins": {"admin": True, "operator": True, "viewer": True, "first-admin": True},
            "bmc": [BMC_PASSWORD],
        }

        # The metric points are in the restored InfluxDB database.
        query = "SELECT * FROM ost_stats"
        original_points = list(influx.client().query(query, database=metrics).get_points())
        restored_points = list(influx.client().query(query, database=restored_metrics).get_points())
        assert len(original_points) == 2
        assert restored_points == original_points
        node = list(
            influx.client().query("SELECT load1 FROM node", database=restored_metrics).get_points()
        )
        assert [point["load1"] for point in node] == [0.5]
    finally:
        influx.client().drop_database(restored_metrics)


def _rewritten(archive: Path, member: str, change, *, checksum: bool) -> Path:
    """A copy of the archive with one member changed, its checksum in the manifest updated or
    left as it was."""
    with tarfile.open(archive, "r:gz") as tar:
        contents = {info.name: tar.extractfile(info).read() for info in tar if info.isfile()}
    contents[member] = change(contents[member])
    if checksum:
        manifest = json.loads(contents["manifest.json"])
        manifest["files"][member] = hashlib.sha256(contents[member]).hexdigest()
        contents["manifest.json"] = json.dumps(manifest).encode()
    copy_path = archive.with_name(f"changed-{uuid.uuid4().hex[:6]}.tar.gz")
    with tarfile.open(copy_path, "w:gz") as tar:
        for name, data in contents.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return copy_path


def _state(run_dir: Path) -> tuple:
    """What a restore that went wrong must not have changed: users, the run directory's files
    and the key in it."""
    users = sorted(get_user_model().objects.values_list("username", "password"))
    files = sorted(path.name for path in run_dir.iterdir())
    return users, files, (run_dir / "secret_key").read_bytes()


def test_a_truncated_or_altered_archive_is_refused_before_anything_changes(
    world, run_dir, tmp_path
):
    archive = _archive(tmp_path, "--no-metrics")
    get_user_model().objects.create_user("late", password="pw-late-123!")
    (run_dir / "secret_key").write_text("n" * 50)
    before = _state(run_dir)

    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    altered = _rewritten(
        archive, "database.jsonl", lambda data: data.replace(b"viewer", b"admin2"), checksum=False
    )
    missing = _rewritten(archive, "manifest.json", lambda data: b"{", checksum=False)

    def outside(data: bytes) -> bytes:
        manifest = json.loads(data)
        manifest["secrets"].append("../outside")
        return json.dumps(manifest).encode()

    escaping = _rewritten(archive, "manifest.json", outside, checksum=False)

    def outside_ssh(data: bytes) -> bytes:
        manifest = json.loads(data)
        manifest["secrets"].append(".ssh/../../outside")
        return json.dumps(manifest).encode()

    escaping_ssh = _rewritten(archive, "manifest.json", outside_ssh, checksum=False)
    for bad, reason in (
        (truncated, "truncated.tar.gz: not a complete backup archive"),
        (altered, "database.jsonl does not match its checksum"),
        (missing, "no readable manifest.json"),
        (escaping, r"secrets this Ostara does not keep: \.\./outside"),
        (escaping_ssh, r"secrets this Ostara does not keep: \.ssh/\.\./\.\./outside"),
    ):
        with pytest.raises(CommandError, match=reason):
            call_command("restore", str(bad), "--force", stdout=io.StringIO())
        assert _state(run_dir) == before


def test_a_database_in_use_is_replaced_only_with_force_and_only_whole(world, run_dir, tmp_path):
    archive = _archive(tmp_path, "--no-metrics")
    get_user_model().objects.create_user("late", password="pw-late-123!")
    (run_dir / "secret_key").write_text("n" * 50)
    before = _state(run_dir)

    with pytest.raises(
        CommandError, match=r"database: already holds data \(4 auth.user\).*--force"
    ):
        call_command("restore", str(archive), stdout=io.StringIO())
    assert _state(run_dir) == before

    def unknown_role(data: bytes) -> bytes:
        rows = [json.loads(line) for line in data.splitlines()]
        viewer = next(row for row in rows if row["fields"].get("username") == "viewer")
        viewer["fields"]["groups"] = [["no-such-role"]]
        return "\n".join(json.dumps(row) for row in rows).encode()

    # Checksums right, but a row that cannot load: nothing of it is kept.
    broken = _rewritten(archive, "database.jsonl", unknown_role, checksum=True)
    with pytest.raises(CommandError, match="database: not restored, nothing changed"):
        call_command("restore", str(broken), "--force", stdout=io.StringIO())
    assert _state(run_dir) == before

    said = io.StringIO()
    call_command("restore", str(archive), "--force", stdout=said)
    assert "database: restored" in said.getvalue()
    users = get_user_model().objects.order_by("username")
    assert [user.username for user in users] == ["admin", "operator", "viewer"]
    assert list(users.get(username="viewer").groups.values_list("name", flat=True)) == ["viewer"]
    assert (run_dir / "secret_key").read_text() == "k" * 50


def test_influxdb_down_stops_a_backup_and_a_restore_unless_no_metrics(
    world, run_dir, metrics, tmp_path, settings
):
    archive = _archive(tmp_path)
    users = _state(run_dir)[0]
    wanted = tmp_path / "while-down.tar.gz"

    # Only the backup service's port closed: `influxd backup` would retry it for ever.
    kept, settings.INFLUXDB_BACKUP_ADDRESS = settings.INFLUXDB_BACKUP_ADDRESS, "127.0.0.1:1"
    with pytest.raises(CommandError, match=r"127.0.0.1:1 \(INFLUXDB_BACKUP_ADDRESS\)"):
        call_command("backup", "--output", str(wanted), stdout=io.StringIO())
    settings.INFLUXDB_BACKUP_ADDRESS = kept

    run_services_script("stop", "influxdb")
    try:
        with pytest.raises(
            CommandError, match=r"metrics: InfluxDB at .* does not answer.*--no-metrics"
        ):
            call_command("backup", "--output", str(wanted), stdout=io.StringIO())
        assert not list(tmp_path.glob("while-down*")) and not list(tmp_path.glob(".backup-*"))
        with pytest.raises(
            CommandError, match=r"metrics: InfluxDB at .* does not answer.*--no-metrics"
        ):
            call_command("restore", str(archive), "--force", stdout=io.StringIO())
        assert _state(run_dir)[0] == users

        said = io.StringIO()
        call_command("backup", "--output", str(wanted), "--no-metrics", stdout=said)
        assert "metrics: left out (--no-metrics)" in said.getvalue()
        with tarfile.open(wanted) as tar:
            assert not [name for name in tar.getnames() if name.startswith("influxdb/")]
    finally:
        run_services_script("start", "influxdb")


@pytest.fixture
def postgresql():
    """A production install's PostgreSQL (role and database by the installer's SQL)."""
    with running_postgresql() as url:
        yield url


def test_a_backup_of_a_sqlite_appliance_restores_into_postgresql(
    appliance, run_dir, tmp_path, postgresql
):
    from django.db.models import Max

    from portal.alerts.models import Rule

    archive = _archive(tmp_path, "--no-metrics")
    env = _restore_env(tmp_path / "production", "unused")
    env["DATABASE_URL"] = postgresql
    restored = _manage(env, "restore", "--no-metrics", str(archive))
    assert restored.returncode == 0, restored.stderr

    # The same objects as Django reads them from either database.
    labels = ("inventory", "jobs", "alerts", "auth.user", "auth.group", "accounts")
    original = io.StringIO()
    call_command("dumpdata", "--natural-foreign", *labels, stdout=original)
    dumped = _manage(env, "dumpdata", "--natural-foreign", *labels)
    assert dumped.returncode == 0, dumped.stderr
    assert json.loads(dumped.stdout) == json.loads(original.getvalue())

    # PostgreSQL's sequences moved past the restored rows: a new rule gets a new number.
    added = _manage(
        env,
        "shell",
        "-c",
        "from portal.alerts.models import Rule; "
        "print(Rule.objects.create(name='After the restore', condition='health', "
        "health_state='red').pk)",
    )
    assert added.returncode == 0, added.stderr
    assert int(added.stdout.split()[-1]) == Rule.objects.aggregate(Max("pk"))["pk__max"] + 1


def test_a_key_set_in_the_environment_is_named_not_archived(world, run_dir, tmp_path, monkeypatch):
    from cryptography.fernet import Fernet

    (run_dir / "credentials.key").write_bytes(Fernet.generate_key())  # an old, unused one
    monkeypatch.setenv("OSTARA_CREDENTIALS_KEY", Fernet.generate_key().decode())
    said = io.StringIO()
    call_command("backup", "--no-metrics", stdout=said)
    # The default archive: RUN_DIR/backups/ostara-<UTC time>.tar.gz
    [archive] = (run_dir / "backups").glob("ostara-2*Z.tar.gz")
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert "secrets: secret_key from" in said.getvalue()
    assert "OSTARA_CREDENTIALS_KEY set in the environment: keep them yourself" in said.getvalue()
    with tarfile.open(archive) as tar:
        assert sorted(name for name in tar.getnames() if name.startswith("secrets/")) == [
            "secrets/secret_key"
        ]


def test_an_archive_from_before_the_rows_held_the_plan_restores_to_the_same_plans(
    appliance, run_dir, tmp_path
):
    """An archive made before inventory 0002: its array and server rows lack what the pair's
    plan is now derived from; the restore fills them from the confirmed plans, so every job
    builds what it built before."""
    from portal.inventory.models import ServerPair
    from portal.inventory.services import pair_plan

    before = {pair.name: pair_plan(pair) for pair in ServerPair.objects.all()}
    archive = _archive(tmp_path, "--no-metrics")
    added = {
        "inventory.storagearray": ("drive_tb_as_given", "installed_drives", "global_spares"),
        "inventory.server": ("lnet_interface",),
    }

    def older_rows(data: bytes) -> bytes:
        rows = [json.loads(line) for line in data.splitlines() if line.strip()]
        for row in rows:
            for field in added.get(row["model"], ()):
                row["fields"].pop(field, None)
        return b"".join(json.dumps(row).encode() + b"\n" for row in rows)

    def older_manifest(data: bytes) -> bytes:
        manifest = json.loads(data)
        manifest["migrations"].remove("inventory.0002_rows_hold_the_plan")
        return json.dumps(manifest).encode()

    older = _rewritten(archive, "database.jsonl", older_rows, checksum=True)
    older = _rewritten(older, "manifest.json", older_manifest, checksum=False)
    call_command("restore", str(older), "--force", "--no-metrics", stdout=io.StringIO())

    assert {pair.name: pair_plan(pair) for pair in ServerPair.objects.all()} == before


def test_an_archive_from_before_each_controller_had_its_pin_restores_the_pins_to_both(
    appliance, run_dir, tmp_path
):
    """An archive made before inventory 0005: an array's one pin (or two, in order) becomes
    controller A's and B's, as the migration moved them; nothing is pinned again."""
    from portal.inventory.models import StorageArray

    first, second = StorageArray.objects.order_by("name")[:2]
    archive = _archive(tmp_path, "--no-metrics")
    older_pins = {first.name: "ab" * 32, second.name: f"{'cd' * 32} {'ef' * 32}"}

    def older_rows(data: bytes) -> bytes:
        rows = [json.loads(line) for line in data.splitlines() if line.strip()]
        for row in rows:
            if row["model"] == "inventory.storagearray":
                fields = row["fields"]
                del fields["certificate_a_sha256"], fields["certificate_b_sha256"]
                fields["certificate_sha256"] = older_pins.get(fields["name"], "")
        return b"".join(json.dumps(row).encode() + b"\n" for row in rows)

    def older_manifest(data: bytes) -> bytes:
        manifest = json.loads(data)
        manifest["migrations"].remove("inventory.0005_pin_per_controller")
        return json.dumps(manifest).encode()

    older = _rewritten(archive, "database.jsonl", older_rows, checksum=True)
    older = _rewritten(older, "manifest.json", older_manifest, checksum=False)
    call_command("restore", str(older), "--force", "--no-metrics", stdout=io.StringIO())

    assert StorageArray.objects.get(name=first.name).pins == {"A": "ab" * 32, "B": "ab" * 32}
    assert StorageArray.objects.get(name=second.name).pins == {"A": "cd" * 32, "B": "ef" * 32}
