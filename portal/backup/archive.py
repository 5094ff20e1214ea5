"""Backup and restore of the appliance: its database, its run directory's secrets and a snapshot
of its metrics, in one archive.

The archive is a tar.gz of mode 0600 (it holds the key that decrypts the BMC passwords):

    manifest.json      versions, migration state, object counts, sha256 of every other member
    database.jsonl     every app's rows as ``dumpdata --natural-foreign --format jsonl`` writes them
    secrets/<name>     secret_key, credentials.key, admin-password, .ssh/..., corosync/... of
                       the run directory
    influxdb/<files>   ``influxd backup -portable`` of the metrics database

The database is dumped as Django's JSON Lines (one row a line, read back as a stream) rather
than with sqlite3 or pg_dump: the same archive
restores into the demo's SQLite and into a production PostgreSQL, through the models of the
running code after ``migrate``. Content types and permissions are left out (``migrate`` creates
them; the rows that point at them name them by natural key), and so are sessions (a restore logs
everyone out). Primary keys are kept, so job numbers and links stay the same, and times keep
their microseconds (``dumpdata`` would cut them to milliseconds).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import platform
import shutil
import socket
import tarfile
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, time
from pathlib import Path

import django
from django.apps import apps
from django.conf import settings
from django.core import serializers
from django.core.management import call_command
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from portal import influxdb as influx
from portal.accounts import crypto
from portal.web.numbers import format_bytes

ARCHIVE_FORMAT = 1
MANIFEST = "manifest.json"
MANIFEST_KEYS = (
    "format",
    "created",
    "host",
    "versions",
    "migrations",
    "counts",
    "summary",
    "secrets",
    "secrets_kept_elsewhere",
    "metrics",
    "files",
)
DATABASE = "database.jsonl"
SECRETS = "secrets"
METRICS = "influxdb"
# Files of the run directory that only this appliance has; each is taken when it exists.
SECRET_FILES = ("secret_key", "credentials.key", "admin-password", "demo-bmc-password")
# Directories of the run directory whose files are all secret: the worker's SSH key (the run
# directory is the services' home), which every Lustre server trusts, and each pair's Corosync
# authkey (portal.inventory.services.cluster_keys), which its cluster needs to stay one.
SECRET_DIRS = (".ssh", "corosync")
# The files above that a setting replaces when it is set: the archive cannot hold those keys.
SECRET_SETTINGS = {"secret_key": "OSTARA_SECRET_KEY", "credentials.key": "OSTARA_CREDENTIALS_KEY"}
# Made by `migrate` in every database; other rows name them by natural key.
MADE_BY_MIGRATE = ("contenttypes.contenttype", "auth.permission")
NOT_DUMPED = ("sessions",)
# What a user checks after a restore, by model label.
SUMMARY = {
    "users": ("auth.user",),
    "inventory objects": tuple(
        model._meta.label_lower for model in apps.get_app_config("inventory").get_models()
    ),
    "jobs": ("jobs.job",),
    "job steps": ("jobs.step",),
    "alert rules": ("alerts.rule",),
}
# Rows that make a database "in use": restoring over them needs --force. (Alert rules are not
# among them: the migrations install the default ones.)
IN_USE = ("auth.user", "jobs.job", "inventory.filesystem", "inventory.server")

Say = Callable[[str], None]


class BackupError(RuntimeError):
    """A backup or restore cannot go on; the message names what is wrong."""


def default_archive_path() -> Path:
    return settings.RUN_DIR / "backups" / f"ostara-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.tar.gz"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _ostara_version() -> str:
    try:
        pyproject = (Path(settings.BASE_DIR) / "pyproject.toml").read_text()
    except OSError:
        return "unknown"
    return tomllib.loads(pyproject)["project"]["version"]


def summarise(counts: dict[str, int]) -> dict[str, int]:
    return {what: sum(counts.get(label, 0) for label in labels) for what, labels in SUMMARY.items()}


def _applied_migrations() -> list[str]:
    return sorted(
        f"{app}.{name}" for app, name in MigrationRecorder(connection).applied_migrations()
    )


class _PreciseEncoder(DjangoJSONEncoder):
    """Django's encoder cuts times to milliseconds; a restore must give back the same rows."""

    def default(self, o):
        if isinstance(o, datetime | time):
            return o.isoformat()
        return super().default(o)


def _dumped_models() -> list:
    """Every model's rows but those ``migrate`` makes and sessions, in an order that loads
    (rows named by natural key come before the rows that name them), as ``dumpdata`` orders."""
    app_configs = [config for config in apps.get_app_configs() if config.models_module]
    return [
        model
        for model in serializers.sort_dependencies(
            [(config, None) for config in app_configs], allow_cycles=True
        )
        if not model._meta.proxy
        and model._meta.label_lower not in MADE_BY_MIGRATE
        and model._meta.app_label not in NOT_DUMPED
    ]


def _dump_database(path: Path) -> dict[str, int]:
    """Dump every model in one read transaction, so the rows agree with each other."""
    counts: Counter[str] = Counter()

    def rows():
        for model in _dumped_models():
            for row in model._base_manager.order_by(model._meta.pk.name).iterator():
                counts[model._meta.label_lower] += 1
                yield row

    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        with path.open("w") as handle:
            serializers.serialize(
                "jsonl", rows(), stream=handle, use_natural_foreign_keys=True, cls=_PreciseEncoder
            )
    return dict(counts)


def backup(output: Path | None, *, metrics: bool, say: Say) -> dict:
    """Write the archive; return its manifest."""
    output = (output or default_archive_path()).resolve()
    if output.exists():
        raise BackupError(f"{output} exists: choose another --output")
    output.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".backup-", dir=output.parent))
    try:
        manifest = _stage(staging, metrics, say)
        partial = output.with_name(output.name + ".partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle, tarfile.open(fileobj=handle, mode="w:gz") as tar:
            tar.add(staging / MANIFEST, arcname=MANIFEST)
            for member in manifest["files"]:
                tar.add(staging / member, arcname=member)
        os.replace(partial, output)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        output.with_name(output.name + ".partial").unlink(missing_ok=True)
    say(f"wrote {output} ({format_bytes(output.stat().st_size)})")
    return manifest


def _stage(staging: Path, metrics: bool, say: Say) -> dict:
    # The metrics first: an InfluxDB that does not answer stops the backup before the slow part.
    influxdb_version = None
    if metrics:
        say(f"metrics: snapshot of InfluxDB database {settings.INFLUXDB_DATABASE!r} ...")
        try:
            influx.snapshot(staging / METRICS)
            influxdb_version = influx.ping()
        except influx.SnapshotError as error:
            raise BackupError(
                f"metrics: {error}; start InfluxDB, or pass --no-metrics to back up without them"
            ) from None
        say(f"metrics: {sum(1 for _ in (staging / METRICS).iterdir())} snapshot files")
    else:
        say("metrics: left out (--no-metrics)")

    say(f"database: dumping ({connection.vendor}) ...")
    counts = _dump_database(staging / DATABASE)
    summary = summarise(counts)
    say(
        f"database: {sum(counts.values())} rows of {len(counts)} models ("
        + ", ".join(f"{number} {what}" for what, number in summary.items())
        + ")"
    )

    (staging / SECRETS).mkdir(mode=0o700)
    secrets, kept_elsewhere = [], []
    for name in SECRET_FILES:
        setting = SECRET_SETTINGS.get(name)
        if setting and (os.environ.get(setting) or os.environ.get(f"{setting}_FILE")):
            kept_elsewhere.append(setting)
        elif (settings.RUN_DIR / name).is_file():
            shutil.copy2(settings.RUN_DIR / name, staging / SECRETS / name)
            secrets.append(name)
    for directory in SECRET_DIRS:
        for path in sorted((settings.RUN_DIR / directory).glob("*")):
            if path.is_file() and not path.is_symlink():
                (staging / SECRETS / directory).mkdir(mode=0o700, exist_ok=True)
                shutil.copy2(path, staging / SECRETS / directory / path.name)
                secrets.append(f"{directory}/{path.name}")
    say(f"secrets: {', '.join(secrets) or 'none'} from {settings.RUN_DIR}")
    if kept_elsewhere:
        say(f"secrets: {', '.join(kept_elsewhere)} set in the environment: keep them yourself")

    files = sorted(
        path.relative_to(staging).as_posix()
        for path in staging.rglob("*")
        if path.is_file() and path.name != MANIFEST
    )
    manifest = {
        "format": ARCHIVE_FORMAT,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "run_dir": str(settings.RUN_DIR),
        "versions": {
            "ostara": _ostara_version(),
            "django": django.get_version(),
            "python": platform.python_version(),
            "database": connection.vendor,
            "influxdb": influxdb_version,
        },
        "migrations": _applied_migrations(),
        "counts": counts,
        "summary": summary,
        "secrets": secrets,
        "secrets_kept_elsewhere": kept_elsewhere,
        "metrics": {"database": settings.INFLUXDB_DATABASE} if metrics else None,
        "files": {member: _sha256(staging / member) for member in files},
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return manifest


def _kept_secret(name: str) -> bool:
    """A name of SECRET_FILES, or of a file right inside one of SECRET_DIRS."""
    directory, _, file_name = name.partition("/")
    if not file_name:
        return name in SECRET_FILES
    return directory in SECRET_DIRS and "/" not in file_name and file_name not in (".", "..")


def read_archive(archive: Path, into: Path) -> dict:
    """Unpack the archive into ``into`` and check it whole: the manifest, every checksum, and
    that this code knows every migration it was made with. Nothing else is touched."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(into, filter="data")
    except FileNotFoundError:
        raise BackupError(f"{archive}: no such file") from None
    except (tarfile.TarError, EOFError, OSError) as error:
        raise BackupError(f"{archive}: not a complete backup archive ({error})") from None
    try:
        manifest = json.loads((into / MANIFEST).read_text())
        absent = [key for key in MANIFEST_KEYS if key not in manifest]
    except (OSError, ValueError, TypeError) as error:
        raise BackupError(f"{archive}: no readable {MANIFEST} ({error})") from None
    if absent:
        raise BackupError(f"{archive}: {MANIFEST} lacks {', '.join(absent)}")
    files, migrations, fmt = manifest["files"], manifest["migrations"], manifest["format"]
    if fmt != ARCHIVE_FORMAT:
        raise BackupError(f"{archive}: archive format {fmt}, this Ostara reads {ARCHIVE_FORMAT}")
    present = {
        path.relative_to(into).as_posix()
        for path in into.rglob("*")
        if path.is_file() and path.name != MANIFEST
    }
    if missing := sorted(set(files) - present):
        raise BackupError(f"{archive}: missing {', '.join(missing)}")
    if extra := sorted(present - set(files)):
        raise BackupError(f"{archive}: files not in the manifest: {', '.join(extra)}")
    if stray := sorted(name for name in manifest["secrets"] if not _kept_secret(name)):
        raise BackupError(f"{archive}: secrets this Ostara does not keep: {', '.join(stray)}")
    if lost := sorted(name for name in manifest["secrets"] if f"{SECRETS}/{name}" not in files):
        raise BackupError(f"{archive}: missing {', '.join(f'{SECRETS}/{name}' for name in lost)}")
    for member, checksum in files.items():
        if _sha256(into / member) != checksum:
            raise BackupError(f"{archive}: {member} does not match its checksum")
    known = {f"{app}.{name}" for app, name in MigrationLoader(None).disk_migrations}
    if unknown := sorted(set(migrations) - known):
        raise BackupError(
            f"{archive}: made by a newer Ostara (migrations unknown here: {', '.join(unknown)})"
        )
    return manifest


def rows_in_use() -> dict[str, int]:
    """The rows that make this database one in use (empty when it is new or not created)."""
    tables = set(connection.introspection.table_names())
    counts = {}
    for label in IN_USE:
        model = apps.get_model(label)
        if model._meta.db_table in tables and (number := model._base_manager.count()):
            counts[label] = number
    return counts


# Rows inserted at once: ``loaddata`` saves one at a time (two queries a row: more than a minute
# for 100,000 rows of health history here, against seconds in batches).
LOAD_BATCH = 2000


def _insert_rows(path: Path, archived: list[str]) -> set:
    """Insert the archive's rows in their order, a model's rows in batches; return the models.

    A row that names a user or a group by natural key looks it up as it is read, so rows of
    models with natural keys are saved at once rather than batched."""
    batch: list = []
    forward: list = []  # rows that named rows further on (none in dumps sorted as ours are)
    loaded: set = set()

    def insert_batch() -> None:
        if batch:
            model = type(batch[0].object)
            fields = model._meta.local_concrete_fields
            rows = [row.object for row in batch]
            size = max(1, connection.ops.bulk_batch_size(fields, rows))
            for start in range(0, len(rows), size):
                # What save_base(raw=True) does for one row; bulk_create would set auto_now
                # fields to the time of the restore.
                model._base_manager._insert(
                    rows[start : start + size], fields=fields, using=connection.alias, raw=True
                )
            for row in batch:
                for accessor, related in (row.m2m_data or {}).items():
                    getattr(row.object, accessor).set(related)
            batch.clear()

    with path.open() as handle:
        lines = _brought_up(handle, archived)
        for row in serializers.deserialize("jsonl", lines, handle_forward_references=True):
            model = type(row.object)
            loaded.add(model)
            if batch and type(batch[0].object) is not model:
                insert_batch()
            if row.deferred_fields or hasattr(model, "natural_key") or model._meta.parents:
                insert_batch()
                row.save()
                if row.deferred_fields:
                    forward.append(row)
                continue
            batch.append(row)
            if len(batch) >= LOAD_BATCH:
                insert_batch()
    insert_batch()
    for row in forward:
        row.save_deferred_fields()
    return loaded


# Data steps of migrations that fill new fields from what older rows already held: rows of an
# archive made before such a migration arrive without those fields (their defaults), so the step
# runs again on them after loading. ("app.migration" -> the step's function in that module.)
DATA_STEPS = {"inventory.0002_rows_hold_the_plan": "from_the_confirmed_plans"}


# Migrations that replaced fields: a row of an archive made before one has the old field, which
# the model no longer knows, so the migration's function turns its fields into the new ones
# before it is loaded. ("app.migration" -> (the model, the function in that module).)
ROW_STEPS = {"inventory.0005_pin_per_controller": ("inventory.storagearray", "older_row")}


def _brought_up(lines, archived: list[str]):
    """The archive's lines, each row of a model a later migration changed brought up to it."""
    steps: dict[str, list] = {}
    for migration, (model, step) in ROW_STEPS.items():
        if migration not in archived:
            app, name = migration.split(".")
            module = importlib.import_module(f"{apps.get_app_config(app).name}.migrations.{name}")
            steps.setdefault(model, []).append(getattr(module, step))
    for line in lines:
        if steps and line.strip():
            row = json.loads(line)
            if row.get("model") in steps:
                for step in steps[row["model"]]:
                    step(row["fields"])
                line = json.dumps(row)
        yield line


def _catch_up(archived: list[str]) -> None:
    """Run the data steps of the migrations the archive's appliance had not applied yet."""
    for migration, step in DATA_STEPS.items():
        if migration not in archived:
            app, name = migration.split(".")
            module = importlib.import_module(f"{apps.get_app_config(app).name}.migrations.{name}")
            getattr(module, step)(apps, None)


def _load_database(path: Path, expected: dict[str, int], archived: list[str]) -> None:
    """Replace every row (but those ``migrate`` makes) with the archive's, or change nothing."""
    kept = {apps.get_model(label)._meta.db_table for label in MADE_BY_MIGRATE}
    tables = [
        table
        for table in connection.introspection.django_table_names(only_existing=True)
        if table not in kept
    ]
    with transaction.atomic():
        with connection.cursor() as cursor:
            for statement in connection.ops.sql_flush(no_style(), tables, reset_sequences=True):
                cursor.execute(statement)
        try:
            loaded = _insert_rows(path, archived)
            _catch_up(archived)
            # Checked here, not at the commit, so that a bad reference is reported like the rest.
            connection.check_constraints(table_names=tables)
            with connection.cursor() as cursor:
                # PostgreSQL's sequences continue after the inserted keys.
                for statement in connection.ops.sequence_reset_sql(no_style(), list(loaded)):
                    cursor.execute(statement)
        except Exception as error:  # whatever failed, the transaction leaves nothing changed
            raise BackupError(f"database: not restored, nothing changed: {error}") from None
        counts = {label: apps.get_model(label)._base_manager.count() for label in expected}
        if counts != expected:
            differ = sorted(label for label in expected if counts[label] != expected[label])
            raise BackupError(f"database: loaded rows differ from the manifest in {differ}")


def restore(archive: Path, *, force: bool, metrics: bool, say: Say) -> dict:
    """Restore the archive into this run directory, database and InfluxDB; return its manifest.

    Everything is checked before anything changes; the database is replaced in one transaction
    and the secrets only once it committed."""
    settings.RUN_DIR.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".restore-", dir=settings.RUN_DIR))
    try:
        manifest = read_archive(Path(archive), staging)
        say(
            f"archive: made {manifest['created']} on {manifest['host']} by Ostara "
            f"{manifest['versions']['ostara']}; checksums match"
        )
        snapshot = manifest["metrics"]
        restore_metrics = metrics and snapshot is not None
        _preflight(force, restore_metrics)

        say("database: migrating ...")
        call_command("migrate", interactive=False, verbosity=0)
        say("database: loading ...")
        _load_database(staging / DATABASE, manifest["counts"], manifest["migrations"])
        say(
            "database: restored "
            + ", ".join(f"{number} {what}" for what, number in manifest["summary"].items())
        )

        for name in manifest["secrets"]:
            if "/" in name:
                (settings.RUN_DIR / name).parent.mkdir(mode=0o700, exist_ok=True)
            os.chmod(staging / SECRETS / name, 0o600)
            os.replace(staging / SECRETS / name, settings.RUN_DIR / name)
        crypto.forget_key()
        say(f"secrets: {', '.join(manifest['secrets']) or 'none'} into {settings.RUN_DIR}")
        if manifest["secrets_kept_elsewhere"]:
            say(f"secrets: set {', '.join(manifest['secrets_kept_elsewhere'])} as before")

        if restore_metrics:
            _restore_metrics(staging / METRICS, snapshot["database"], say)
        elif snapshot is None:
            say("metrics: the archive has none")
        else:
            say("metrics: left out (--no-metrics)")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say("restored: restart the portal, the worker and beat so that they read the restored keys")
    return manifest


def _preflight(force: bool, restore_metrics: bool) -> None:
    """Refuse before any change: a database in use, or metrics that cannot be restored."""
    if not force and (in_use := rows_in_use()):
        held = ", ".join(f"{number} {label}" for label, number in in_use.items())
        raise BackupError(
            f"database: already holds data ({held}); restore --force replaces all of it"
        )
    if not restore_metrics:
        return
    database = settings.INFLUXDB_DATABASE
    try:
        exists = influx.database_exists(database)
    except influx.InfluxError as error:
        raise BackupError(
            f"metrics: InfluxDB at {settings.INFLUXDB_URL} does not answer ({error}); "
            "start it, or pass --no-metrics to restore without them"
        ) from None
    if exists and not force:
        raise BackupError(
            f"metrics: InfluxDB database {database!r} exists; restore --force replaces it"
        )


def _restore_metrics(snapshot_dir: Path, snapshot_database: str, say: Say) -> None:
    database = settings.INFLUXDB_DATABASE
    # `influxd restore` will not write into a database that exists: --force (checked before)
    # replaces it; points written since the backup are lost with it.
    if influx.database_exists(database):
        say(f"metrics: dropping InfluxDB database {database!r} (--force)")
        influx.client().drop_database(database)
    say(f"metrics: restoring InfluxDB database {database!r} ...")
    try:
        influx.restore_snapshot(snapshot_dir, snapshot_database)
    except influx.SnapshotError as error:
        raise BackupError(
            f"metrics: {error} (the database and secrets are restored; restore again with "
            "--force to retry the metrics)"
        ) from None
    say(f"metrics: restored InfluxDB database {database!r}")
