"""Where a Lustre parameter lives under a server's root, found the way `lctl get_param` finds it.

`lctl get_param obdfilter.*.kbytestotal` looks under `/proc/fs/lustre`, `/sys/fs/lustre` and
`/sys/kernel/debug/lustre` alike, because releases moved files between them (capacity to sysfs
around 2.12, `brw_stats` and the ptlrpc service stats to debugfs by 2.15, LNet's `stats` from
`/proc/sys/lnet` to `/sys/kernel/debug/lnet`). The sensor does the same: it merges the three
trees, so one code path reads every release's layout, and a root other than `/` (a virtual
host of the simulator, a test tree) works unchanged.
"""

from __future__ import annotations

import os

# Searched in this order; the first tree holding a file wins.
LUSTRE_BASES = ("proc/fs/lustre", "sys/fs/lustre", "sys/kernel/debug/lustre")
LNET_BASES = ("sys/kernel/debug/lnet", "proc/sys/lnet", "sys/fs/lnet")


def _listdir(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


class LustreTree:
    """The Lustre parameters under one root directory (`/` on a real server)."""

    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root)
        self.bases = [os.path.join(self.root, base) for base in LUSTRE_BASES]

    def path(self, *parts: str) -> str | None:
        """The first existing file for a parameter path such as ("health_check",)."""
        for base in self.bases:
            candidate = os.path.join(base, *parts)
            if os.path.isfile(candidate):
                return candidate
        return None

    def lnet_path(self, name: str) -> str | None:
        for base in LNET_BASES:
            candidate = os.path.join(self.root, base, name)
            if os.path.isfile(candidate):
                return candidate
        return None

    def osd_types(self) -> list[str]:
        """`osd-ldiskfs`, `osd-zfs`, ... as present in any of the trees."""
        found: list[str] = []
        for base in self.bases:
            for entry in _listdir(base):
                if entry.name.startswith("osd-") and entry.name not in found:
                    found.append(entry.name)
        return found

    def device_dirs(self, obd_types: list[str]) -> dict[str, list[str]]:
        """The directories of every device of the given types (`obdfilter`, `mdt`,
        `osd-zfs`, `ost/OSS`, ...), merged over the trees: ``{device: [dir, ...]}``, in the
        order of the types given, then of `LUSTRE_BASES`."""
        found: dict[str, list[str]] = {}
        for obd_type in obd_types:
            for base in self.bases:
                for entry in _listdir(os.path.join(base, obd_type)):
                    if entry.is_dir():
                        found.setdefault(entry.name, []).append(entry.path)
        return found

    @staticmethod
    def device_files(directories: list[str]) -> dict[str, str]:
        """Every parameter file of one device, by name: ``{"stats": path, ...}``, the first
        directory holding a name winning. This is how `kbytestotal` is found in
        `obdfilter/` on one release and only in `osd-*/` on another, and `brw_stats` in
        procfs or debugfs."""
        files: dict[str, str] = {}
        for directory in directories:
            for entry in _listdir(directory):
                if entry.name not in files and not entry.is_dir():
                    files[entry.name] = entry.path
        return files


def read_text(path: str) -> str:
    """The whole file. os.read is used because it costs a third of open().read() on the
    thousands of small files of a round; procfs/sysfs files are read in one call or a few."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")
