"""The production install's files as its installer renders them, for the tests to check and run.

``deploy/production/install.sh render DIR`` writes the systemd units, the nginx site, the
environment file and ``ostara-manage`` exactly as a real install does, with this checkout's paths;
the tests point them at temporary directories and loopback ports.
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALLER = REPO / "deploy" / "production" / "install.sh"
# The portal's services, each ``<name>.service``; the arrays' collector comes with a path unit.
UNITS = ("ostara-portal", "ostara-worker", "ostara-beat")
ARRAYS_UNITS = ("ostara-arrays.service", "ostara-arrays.path")
CREATE_DATABASE = REPO / "deploy" / "production" / "create-database.sql"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def pid_file_alive(pid_file: Path) -> int | None:
    """The pid of a deploy/lib.sh pid file, while the process it was written for runs (its start
    since boot, written beside it, matches: a pid is soon another program's), else None."""
    try:
        pid = int(pid_file.read_text().strip())
        written = (pid_file.parent / f"{pid_file.name}.start").read_text().strip()
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2].split()
    except (OSError, ValueError):
        return None
    return pid if fields[0] != "Z" and fields[19] == written else None


def clean_environment() -> dict[str, str]:
    """This process's environment without Ostara's settings: the rendered files supply them."""
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OSTARA_", "DATABASE_URL", "REDIS_URL", "INFLUXDB_", "DJANGO_"))
    }


def run_installer(*args: str, **settings: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(INSTALLER), *args],
        env=clean_environment() | settings,
        capture_output=True,
        text=True,
        timeout=60,
    )


def render(target: Path, **settings: str) -> Path:
    """The installer's files for these settings (OSTARA_* names as install.sh reads them)."""
    defaults = {
        # The services' user: whoever runs the tests, so ostara-manage needs no runuser.
        "OSTARA_USER": pwd.getpwuid(os.geteuid()).pw_name,
        "OSTARA_RUN_DIR": str(target / "run"),
        "OSTARA_ETC_DIR": str(target),
        "OSTARA_SERVER_NAME": "127.0.0.1",
        "OSTARA_TLS_CERT": str(target / "tls" / "ostara.crt"),
        "OSTARA_TLS_KEY": str(target / "tls" / "ostara.key"),
        "OSTARA_NGINX_LOG_DIR": str(target / "log"),
        "DATABASE_URL": "postgres://ostara:unused@127.0.0.1:5432/ostara",
    }
    settings = defaults | settings
    rendered = run_installer("render", str(target), **settings)
    assert rendered.returncode == 0, rendered.stderr
    certificate = run_installer(
        "certificate",
        settings["OSTARA_TLS_CERT"],
        settings["OSTARA_TLS_KEY"],
        settings["OSTARA_SERVER_NAME"],
    )
    assert certificate.returncode == 0, certificate.stderr
    for directory in ("run", "log"):
        (target / directory).mkdir(exist_ok=True)
    return target


def nginx_conf(site_dir: Path) -> Path:
    """A whole nginx.conf around the rendered site, as Debian's includes sites-enabled/, with
    its pid file, logs and temporary files in ``site_dir``."""
    temp = {
        name: site_dir / "nginx" / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")
    }
    for path in temp.values():
        path.mkdir(parents=True, exist_ok=True)
    conf = site_dir / "nginx.conf"
    # As root, nginx's workers would become www-data, which cannot enter pytest's directories.
    user = "user root root;\n" if os.geteuid() == 0 else ""
    conf.write_text(
        f"{user}worker_processes 1;\n"
        f"pid {site_dir / 'nginx.pid'};\n"
        f"error_log {site_dir / 'log' / 'nginx-error.log'};\n"
        "events { worker_connections 64; }\n"
        "http {\n"
        "    include /etc/nginx/mime.types;\n"
        "    default_type application/octet-stream;\n"
        f"    access_log {site_dir / 'log' / 'nginx-access.log'};\n"
        f"    client_body_temp_path {temp['body']};\n"
        f"    proxy_temp_path {temp['proxy']};\n"
        f"    fastcgi_temp_path {temp['fastcgi']};\n"
        f"    uwsgi_temp_path {temp['uwsgi']};\n"
        f"    scgi_temp_path {temp['scgi']};\n"
        f"    include {site_dir / 'nginx-ostara.conf'};\n"
        "}\n"
    )
    return conf


def nginx_command(conf: Path, *args: str) -> list[str]:
    return [
        "nginx",
        "-c",
        str(conf),
        "-p",
        str(conf.parent),
        "-e",
        str(conf.parent / "log" / "nginx-stderr.log"),
        *args,
    ]


def read_env_file(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            values[name.strip()] = value
    return values


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def unit_command(
    unit: Path, env_file: Path | None = None
) -> tuple[list[str], dict[str, str], Path]:
    """What systemd would run for ``unit``: ExecStart's words with ``${NAME}`` taken from the
    unit's Environment= defaults overridden by the environment file (a unit with none: no
    file), ``%%`` as ``%``; the environment; the working directory."""
    defaults: dict[str, str] = {}
    command = directory = None
    for line in unit.read_text().splitlines():
        key, _, value = line.partition("=")
        if key == "Environment":
            defaults |= dict(word.split("=", 1) for word in shlex.split(value))
        elif key == "ExecStart":
            command = value
        elif key == "WorkingDirectory":
            directory = Path(value)
    assert command and directory, f"{unit.name} has no ExecStart or WorkingDirectory"
    environment = defaults | (read_env_file(env_file) if env_file else {})

    def word(text: str) -> str:
        assert "%" not in text.replace("%%", ""), f"{unit.name}: a specifier the test cannot fill"
        return _VARIABLE.sub(lambda match: environment[match[1]], text).replace("%%", "%")

    return (
        [word(text) for text in shlex.split(command)],
        clean_environment() | environment,
        directory,
    )


# Every mount read-only but the paths before "--", in a mount namespace of the command's own.
_READ_ONLY_BUT = (
    'mount --make-rprivate / && while [ "$1" != -- ]; do mount --bind "$1" "$1" || exit 1; '
    'shift; done && shift && mount -o remount,bind,ro / && exec "$@"'
)


def read_only_but(*writable: Path) -> list[str]:
    """What to put before a command so that it sees the file system as a unit with
    ``ProtectSystem=strict`` and ``ReadWritePaths=`` these paths does. Tests running as root
    get a mount namespace where the rest is read-only (``unshare``); an ordinary user writes
    outside its own files no more than the unit's user does, so it runs the command as it is."""
    if os.geteuid() != 0:
        return []
    return ["unshare", "--mount", "sh", "-c", _READ_ONLY_BUT, "sh", *map(str, writable), "--"]


def postgresql_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        pytest.fail("PostgreSQL's initdb is missing: `make install` installs Debian's postgresql")
    return found[-1].parent


@contextmanager
def running_postgresql() -> Iterator[str]:
    """A PostgreSQL cluster of its own on a loopback port, with the role and database made by the
    installer's SQL (run twice: the installer runs it at every upgrade). Yields DATABASE_URL."""
    pg_bin = postgresql_bin()
    base = Path(tempfile.mkdtemp(prefix="ostara-pg-"))
    # initdb refuses to run as root: the cluster belongs to nobody, as Debian's to postgres.
    as_owner = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(base, nobody.pw_uid, nobody.pw_gid)
        as_owner = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    port = free_port()
    data = base / "data"
    server = (
        f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off -c full_page_writes=off"
    )

    def pg(*args: str, owner: bool = True) -> None:
        done = subprocess.run(
            [str(pg_bin / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            **(as_owner if owner else {}),
        )
        assert done.returncode == 0, f"{args[0]}: {done.stdout}{done.stderr}"

    # Debian's defaults: scram-sha-256 over TCP; the superuser reaches the socket without one.
    initdb = ["-D", str(data), "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]
    pg("initdb", *initdb, "--auth-local=trust", "--auth-host=scram-sha-256")
    try:
        log = str(base / "log")
        pg("pg_ctl", "-D", str(data), "-w", "-t", "60", "-l", log, "-o", server, "start")
        password = "Pg-" + os.urandom(12).hex()
        psql = ["-X", "-q", "-h", str(base), "-p", str(port), "-U", "postgres", "-v", "role=ostara"]
        psql += ["-v", "ON_ERROR_STOP=1", "-v", f"password={password}", "-f", str(CREATE_DATABASE)]
        for _ in range(2):
            pg("psql", *psql, owner=False)
        yield f"postgres://ostara:{password}@127.0.0.1:{port}/ostara"
    finally:
        subprocess.run(
            [str(pg_bin / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
            **as_owner,
        )
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def rendered(tmp_path) -> Path:
    return render(tmp_path)
