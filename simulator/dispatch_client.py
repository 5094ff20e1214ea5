"""The virtual rack's command client where no C compiler built dispatch_client.c: the same
request, run as `python3 -S -I dispatch_client.py SOCKET PYTHON NAME ARGS...` (no site, no
simulator import: only os, socket, struct, signal). See dispatch_client.c for the protocol."""

import os
import signal
import socket
import struct
import sys


def direct(python: str, command: list[str]) -> None:
    os.execv(python, [python, "-m", "simulator.commands", *command])


def connect(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if len(os.fsencode(path)) < 108:
            sock.connect(path)
        else:  # a deep rack directory: connect from inside it
            saved = os.open(".", os.O_RDONLY)
            try:
                os.chdir(os.path.dirname(path))
                sock.connect(os.path.basename(path))
            finally:
                os.fchdir(saved)
                os.close(saved)
    except OSError:
        sock.close()
        return None
    return sock


def main() -> int:
    socket_path, python, *command = sys.argv[1:]
    sock = connect(socket_path)
    if sock is None:
        direct(python, command)
    argv = [os.fsencode(arg) for arg in command]
    mask = os.umask(0o22)
    os.umask(mask)
    fields = [os.getcwdb(), b"%o" % mask, str(len(argv)).encode(), *argv]
    fields += [key + b"=" + value for key, value in os.environb.items()]
    body = b"".join(field + b"\0" for field in fields)
    try:
        socket.send_fds(sock, [b"OSTARA2\0" + struct.pack("=I", len(body))], [0, 1, 2])
    except OSError:
        direct(python, command)
    try:
        sock.sendall(body)
        answer = b""
        while len(answer) < 4:
            chunk = sock.recv(4 - len(answer))
            if not chunk:
                raise OSError
            answer += chunk
    except OSError:
        sys.stderr.write(f"{command[0]}: the virtual rack's dispatcher stopped\n")
        return 255
    (status,) = struct.unpack("=i", answer)
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        return 128 - status
    return status


sys.exit(main())
