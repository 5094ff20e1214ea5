"""The rack's resident command dispatcher: the virtual commands without a new interpreter each.

    python -m simulator.dispatch --rack DIR [--parent PID]

One process per rack directory imports the simulator and the command modules once and listens
on `DIR/dispatch.sock`. A host's command wrapper (`hosts/<host>/bin/lctl`, ...) execs a tiny
client (dispatch_client.c, compiled once per source version into `.run/dispatch/`, copied into
`DIR/bin/`; dispatch_client.py under `python3 -S -I` where no compiler is) that hands it the
command's name, arguments, working directory, environment and its stdin/stdout/stderr (the file
descriptors themselves). The dispatcher forks: the child, warm and isolated (its own exit,
globals and signals), takes the caller's descriptors, directory and environment and runs the
command as `python -m simulator.commands` would; its exit status goes back to the client,
which exits with it. A caller that goes away (a sensor's timeout) has its command stopped.

`serve` starts the dispatcher and stops it when it stops; the dispatcher also stops by itself
when its parent is gone, when the rack directory is removed, or when another dispatcher took
over the socket. When none runs, the client runs the command the direct way: never a broken
command. Real-cluster servers keep the direct wrappers (parts of them run inside the server's
namespaces, where the caller's directory and files are not this process's).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import hashlib
import importlib
import io
import os
import random
import selectors
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import traceback
from pathlib import Path

from simulator.command_table import MODULES

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
SOCKET = "dispatch.sock"
CLIENT_SOURCE = HERE / "dispatch_client.c"
PYTHON_CLIENT = HERE / "dispatch_client.py"
CLIENT_NAME = ".dispatch-client"  # in the rack's bin/
MAGIC = b"OSTARA2\0"  # the request format's version (dispatch_client.c)
WATCH_SECONDS = 1.0  # how often the dispatcher checks that its rack and parent are still here


def socket_path(root: Path | str) -> Path:
    return Path(root).resolve() / SOCKET


# -- the client the wrappers exec -----------------------------------------------------------


@functools.cache  # once per process: a rack install writes hundreds of wrappers
def _compiled_client() -> Path | None:
    """dispatch_client.c built once per source version (None: no C compiler here)."""
    source = CLIENT_SOURCE.read_bytes()
    target = REPO_ROOT / ".run" / "dispatch" / f"client-{hashlib.sha256(source).hexdigest()[:16]}"
    if target.exists():
        return target
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    building = target.with_name(f"{target.name}.{os.getpid()}")
    result = subprocess.run(
        [compiler, "-O2", "-o", str(building), str(CLIENT_SOURCE)],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        building.unlink(missing_ok=True)
        return None
    os.replace(building, target)  # atomic: racks installing side by side share it
    return target


def client_command(root: Path) -> list[str]:
    """The words a wrapper execs before `SOCKET PYTHON NAME ARGS...`: the compiled client,
    copied into the rack (so the wrappers never depend on files outside it), or the minimal
    Python one."""
    try:
        built = _compiled_client()
    except OSError:
        built = None
    if built is None:
        return [sys.executable, "-S", "-I", str(PYTHON_CLIENT)]
    copy = Path(root) / "bin" / f"{CLIENT_NAME}-{built.name.removeprefix('client-')}"
    if not copy.exists():
        copy.parent.mkdir(parents=True, exist_ok=True)
        for old in copy.parent.glob(f"{CLIENT_NAME}-*"):
            old.unlink(missing_ok=True)  # an older version's
        staging = copy.with_name(f".staging-{os.getpid()}")
        shutil.copy2(built, staging)
        os.replace(staging, copy)
    return [str(copy)]


def wrapper_text(root: Path, host: str | None, name: str, module: str) -> str:
    """A host's (or the rack's) `bin/<name>`: the dispatcher's client, or the direct way when
    the client is missing."""
    env = [f"OSTARA_RACK={shlex.quote(str(root))}"]
    if host:
        env.append(f"OSTARA_HOST={shlex.quote(host)}")
    python = shlex.quote(sys.executable)
    client = client_command(root)
    lines = [
        "#!/bin/sh",
        f"# Virtual rack command `{name}` (simulator.commands.{module}), answered by the",
        "# rack's dispatcher (simulator/dispatch.py) or, when none runs, by a new Python.",
        f"export {' '.join(env)}",
        f'export PYTHONPATH={shlex.quote(str(REPO_ROOT))}"${{PYTHONPATH:+:$PYTHONPATH}}"',
    ]
    command = f'{python} {shlex.quote(name)} "$@"'
    sock = shlex.quote(str(socket_path(root)))
    if len(client) == 1:
        quoted = shlex.quote(client[0])
        lines.append(f"[ -x {quoted} ] && exec {quoted} {sock} {command}")
    else:
        lines.append(f"exec {shlex.join(client)} {sock} {command}")
    lines.append(f'exec {python} -m simulator.commands {shlex.quote(name)} "$@"')
    return "\n".join(lines) + "\n"


# -- starting and stopping ------------------------------------------------------------------


def answers(root: Path | str) -> bool:
    """A dispatcher listens on the rack's socket."""
    path = socket_path(root)
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            _connect(probe, path)
        except OSError:
            return False
    return True


def start(root: Path | str, *, wait: float = 10.0) -> subprocess.Popen | None:
    """Start the rack's dispatcher as a child of this process (None: one already answers).
    Returns once it listens."""
    root = Path(root).resolve()
    if answers(root):
        return None
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simulator.dispatch",
            "--rack",
            str(root),
            "--parent",
            str(os.getpid()),
        ],
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and process.poll() is None:
        if answers(root):
            return process
        time.sleep(0.02)
    return process


def stop(process: subprocess.Popen | None, *, wait: float = 10.0) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(wait)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# -- the dispatcher -------------------------------------------------------------------------


def _same_user(conn: socket.socket) -> bool:
    """The caller runs as this process's user (the socket's mode says so too; this holds
    should the rack's directory be shared)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def _connect(sock: socket.socket, path: Path) -> None:
    if len(os.fsencode(str(path))) < 108:
        sock.connect(str(path))
        return
    saved = os.open(".", os.O_RDONLY)
    try:
        os.chdir(path.parent)  # a deep rack directory: sun_path holds 107 bytes
        sock.connect(path.name)
    finally:
        os.fchdir(saved)
        os.close(saved)


def _read_request(
    conn: socket.socket,
) -> tuple[list[int], str, int, list[str], dict[str, str]]:
    head, fds, _flags, _addr = socket.recv_fds(conn, 12, 3)
    while len(head) < 12:
        more = conn.recv(12 - len(head))
        if not more:
            raise ConnectionError("short request")
        head += more
    if head[:8] != MAGIC:
        raise ConnectionError("not a command request")
    (size,) = struct.unpack("=I", head[8:])
    body = bytearray()
    while len(body) < size:
        chunk = conn.recv(min(65536, size - len(body)))
        if not chunk:
            raise ConnectionError("short request")
        body += chunk
    fields = [os.fsdecode(field) for field in bytes(body).split(b"\0")[:-1]]
    cwd, mask, count = fields[0], int(fields[1], 8), int(fields[2])
    argv = fields[3 : 3 + count]
    env = dict(entry.partition("=")[::2] for entry in fields[3 + count :])
    return fds, cwd, mask, argv, env


def _streams(template: io.TextIOWrapper, fd: int, mode: str, line: bool) -> io.TextIOWrapper:
    raw = io.FileIO(fd, mode, closefd=False)
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffered, encoding=template.encoding, errors=template.errors, line_buffering=line
    )


def _exit_code(stop: SystemExit) -> int:
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code & 0xFF
    print(stop.code, file=sys.stderr)
    return 1


def _child(fds: list[int], cwd: str, mask: int, argv: list[str], env: dict[str, str]) -> None:
    """In the forked child: become the command `python -m simulator.commands ARGV` and exit."""
    from simulator import commands

    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    templates = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
    sys.stdin = _streams(templates[0], 0, "r", False)
    sys.stdout = _streams(templates[1], 1, "w", os.isatty(1))
    sys.stderr = _streams(templates[2], 2, "w", True)
    try:
        os.chdir(cwd)
    except OSError:
        pass  # a caller's removed directory: Python starts there all the same
    os.umask(mask)  # the files it writes get the caller's permissions
    os.environ.clear()
    os.environ.update(env)
    sys.argv = [str(HERE / "commands" / "__main__.py"), *argv]
    random.seed()  # each command its own random numbers, as a new interpreter has
    code = 1
    try:
        try:
            code = commands.main(argv)
        except SystemExit as stop:
            code = _exit_code(stop)
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:
            traceback.print_exc()
            code = 1
        for stream in (sys.stdout, sys.stderr):
            if stream is None:
                continue
            try:
                stream.flush()
            except (BrokenPipeError, ValueError):
                code = 120 if code == 0 else code
    finally:
        os._exit(code & 0xFF if isinstance(code, int) else 1)


class Dispatcher:
    def __init__(self, root: Path, parent: int | None):
        self.root = root
        self.parent = parent
        self.running: dict[int, socket.socket] = {}  # child pid -> its caller's connection
        self.stopping = False
        self.selector = selectors.DefaultSelector()

    def warm(self) -> None:
        importlib.import_module("simulator.commands")
        for module in sorted(set(MODULES.values())):
            importlib.import_module(f"simulator.commands.{module}")
        # The imported objects never change: out of the collector's sight, a forked child
        # does not copy their pages when it collects (less CPU per command).
        gc.collect()
        gc.freeze()

    def listen(self) -> socket.socket:
        os.chdir(self.root)  # bind by name: a deep rack directory's path exceeds sun_path
        staging = f".{SOCKET}.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Whoever can connect runs commands as this rack's owner: only its owner may.
        mask = os.umask(0o077)
        try:
            listener.bind(staging)
        finally:
            os.umask(mask)
        listener.listen(128)
        os.rename(staging, SOCKET)  # take over atomically: one dispatcher per rack
        self.inode = os.stat(SOCKET).st_ino
        return listener

    def still_wanted(self) -> bool:
        if self.parent and os.getppid() != self.parent:
            return False
        try:
            return (
                os.stat(self.root / SOCKET).st_ino == self.inode
                and (self.root / "rack.json").exists()
            )
        except OSError:
            return False

    def run(self) -> int:
        self.warm()
        listener = self.listen()
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)

        def _stop(*_):
            self.stopping = True

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGHUP, _stop)
        self.selector.register(listener, selectors.EVENT_READ, "listen")
        self.selector.register(wake_r, selectors.EVENT_READ, "wake")
        self.listener, self.wake = listener, (wake_r, wake_w)
        last_watch = time.monotonic()
        try:
            while not self.stopping:
                for key, _events in self.selector.select(WATCH_SECONDS):
                    if key.data == "listen":
                        self.accept(listener)
                    elif key.data == "wake":
                        with contextlib.suppress(BlockingIOError):
                            os.read(wake_r, 512)
                    else:
                        self.caller_gone(key.fileobj, key.data)
                self.reap()
                if time.monotonic() - last_watch >= WATCH_SECONDS:
                    last_watch = time.monotonic()
                    if not self.still_wanted():
                        self.stopping = True
        finally:
            self.shut_down(listener)
        return 0

    def accept(self, listener: socket.socket) -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        fds: list[int] = []
        try:
            if not _same_user(conn):
                raise ConnectionError("a caller of another user")
            conn.settimeout(5.0)
            fds, cwd, mask, argv, env = _read_request(conn)
            if len(fds) != 3 or not argv:
                raise ConnectionError("incomplete request")
        except (OSError, ValueError, IndexError):
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        pid = os.fork()
        if pid == 0:
            try:
                listener.close()
                for fd in self.wake:
                    os.close(fd)
                for other in self.running.values():
                    other.close()
                conn.close()
            finally:
                _child(fds, cwd, mask, argv, env)
        for fd in fds:
            os.close(fd)
        conn.setblocking(False)
        self.running[pid] = conn
        self.selector.register(conn, selectors.EVENT_READ, pid)

    def caller_gone(self, conn: socket.socket, pid: int) -> None:
        """The client sends nothing after its request: readable means it went away (killed by
        its caller's timeout): stop its command as the real one would be."""
        try:
            data = conn.recv(1)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.selector.unregister(conn)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def reap(self) -> None:
        while self.running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.running.pop(pid, None)
            if conn is None:
                continue
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(conn)
            with contextlib.suppress(OSError):
                conn.setblocking(True)
                conn.sendall(struct.pack("=i", os.waitstatus_to_exitcode(status)))
            conn.close()

    def shut_down(self, listener: socket.socket) -> None:
        with contextlib.suppress(OSError):
            if os.stat(self.root / SOCKET).st_ino == self.inode:
                os.unlink(self.root / SOCKET)
        listener.close()
        # Commands under way finish (a few seconds at most), then the rest are stopped.
        deadline = time.monotonic() + 10.0
        while self.running and time.monotonic() < deadline:
            self.reap()
            time.sleep(0.01)
        for pid in list(self.running):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        while self.running:
            self.reap()
            time.sleep(0.01)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulator.dispatch", description=__doc__)
    parser.add_argument("--rack", type=Path, required=True)
    parser.add_argument(
        "--parent", type=int, help="stop when this process (the one that started it) is gone"
    )
    args = parser.parse_args(argv)
    root = args.rack.resolve()
    if not (root / "rack.json").exists():
        print(f"no virtual rack in {root}", file=sys.stderr)
        return 1
    if answers(root):
        return 0  # one dispatcher per rack
    return Dispatcher(root, args.parent).run()


if __name__ == "__main__":
    sys.exit(main())
