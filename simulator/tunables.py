"""The Lustre tunables of a virtual server: the writable parameters of a 2.15 server, their
defaults and how the kernel takes a value written to them (lustre-release v2_15_4:
osd_lproc.c, lproc_ofd.c, lproc_osp.c, lproc_ptlrpc.c, ldlm_resource.c, lprocfs_jobstats.c),
how `lctl` finds them from a parameter pattern, and the MGS's params log (`lctl set_param
-P`), set again on a server each time one of its targets mounts. `procfs` writes them into
each server's tree; `commands/lctl.py` reads and writes them."""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass

from simulator.topology import NCPU

# Where lctl looks for a parameter (cfs_get_param_paths), in this order.
PARAM_DIRS = (
    "sys/fs/lnet",
    "sys/fs/lustre",
    "sys/kernel/debug/lnet",
    "sys/kernel/debug/lustre",
    "proc/fs/lnet",
    "proc/fs/lustre",
    "proc/sys/lnet",
    "proc/sys/lustre",
)
PARAMS_LOG = "params"  # the MGS's log of `lctl set_param -P` settings
OSP_DIR = "sys/fs/lustre/osp"
OSC_DIR = "sys/fs/lustre/osc"
NAMESPACES_DIR = "sys/fs/lustre/ldlm/namespaces"
MIB = 1 << 20
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
OSD_MAX_CACHE_SIZE = U64_MAX  # OBD_OBJECT_EOF: the read cache takes files of any size
DT_DEF_BRW_SIZE = 4 * MIB  # the OST's preferred RPC size, brw_size (shown in MiB)
DT_MAX_BRW_SIZE = 64 * MIB  # 1 << PTLRPC_MAX_BRW_BITS
# ptlrpc runs 4 CPU partitions on NCPU (32) cores (cfs_cpt_num_estimate) and counts threads per
# partition, so thread counts read back are multiples of 4: ost_io starts 3 per partition
# (OSS_NTHRS_INIT) and may run 64 + 8 * 8 per partition (lustre_net.h's 32-core example).
CPU_PARTITIONS = 4
OST_IO_THREADS_MIN = 3 * CPU_PARTITIONS
OST_IO_THREADS_MAX = 112 * CPU_PARTITIONS
LDLM_DEFAULT_LRU_SIZE = 100 * NCPU
OSP_MAX_RPCS_IN_FLIGHT = 8


class ParamError(Exception):
    """A value the kernel refuses: write(2) fails with this errno."""

    def __init__(self, code: int):
        super().__init__(os.strerror(code))
        self.errno = code


@dataclass(frozen=True)
class Tunable:
    default: str
    kind: str  # how a written value is taken: see tunable_value()


def param_regex(pattern: str) -> re.Pattern:
    """An lctl parameter pattern as a regex over paths below a PARAM_DIRS entry: `.` stands for
    `/` (or itself: NIDs keep their dots), `*`, `?` and `[...]` as in glob."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == ".":
            out.append("[./]")
        elif c == "[":
            end = pattern.find("]", i)
            if end < 0:
                out.append(re.escape(c))
            else:
                out.append(pattern[i : end + 1])
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + "$")


def osp_devices(state: dict, mdt: dict) -> list[str]:
    """The MDT's OSP devices (`<fsname>-OST<index>-osc-MDT<index>`), one per OST of its
    filesystem, in OST index order."""
    osts = sorted(
        (
            t
            for t in state["targets"].values()
            if t["kind"] == "OST" and t["fsname"] == mdt["fsname"]
        ),
        key=lambda t: t["index"],
    )
    return [f"{mdt['fsname']}-OST{ost['index']:04x}-osc-MDT{mdt['index']:04x}" for ost in osts]


def _target_tunables(state: dict, target: dict) -> dict[str, Tunable]:
    """The tunables a mounted target brings (paths relative to the host root)."""
    label = target["label"]
    kind = target["kind"]
    osd = f"sys/fs/lustre/osd-ldiskfs/{label}"
    found = {
        f"{osd}/read_cache_enable": Tunable("1", "bool"),
        f"{osd}/writethrough_cache_enable": Tunable("1", "bool"),
        # debugfs in 2.15, not sysfs
        f"sys/kernel/debug/lustre/osd-ldiskfs/{label}/readcache_max_filesize": Tunable(
            str(OSD_MAX_CACHE_SIZE), "bytes"
        ),
    }
    lru = Tunable(str(LDLM_DEFAULT_LRU_SIZE), "lru_size")
    if kind == "MGT":
        found[f"{NAMESPACES_DIR}/MGS/lru_size"] = lru
    elif kind == "OST":
        found[f"proc/fs/lustre/obdfilter/{label}/brw_size"] = Tunable(
            str(DT_DEF_BRW_SIZE // MIB), "brw_size"
        )
        found[f"sys/fs/lustre/obdfilter/{label}/job_cleanup_interval"] = Tunable(
            "600", "job_interval"
        )
        found[f"{NAMESPACES_DIR}/filter-{label}_UUID/lru_size"] = lru
    else:
        found[f"sys/fs/lustre/mdt/{label}/job_cleanup_interval"] = Tunable("600", "job_interval")
        found[f"{NAMESPACES_DIR}/mdt-{label}_UUID/lru_size"] = lru
        for name in osp_devices(state, target):
            found[f"{OSP_DIR}/{name}/max_rpcs_in_flight"] = Tunable(
                str(OSP_MAX_RPCS_IN_FLIGHT), "count"
            )
    return found


def tunables(state: dict, host: str) -> dict[str, Tunable]:
    """Every tunable of a server as it runs now, by its file (relative to the host root)."""
    server = state["servers"][host]
    if server["state"] != "up":
        return {}
    found: dict[str, Tunable] = {}
    if server["role"] != "mds":
        service = "sys/fs/lustre/ost/OSS/ost_io"
        found[f"{service}/threads_min"] = Tunable(str(OST_IO_THREADS_MIN), "threads_min")
        found[f"{service}/threads_max"] = Tunable(str(OST_IO_THREADS_MAX), "threads_max")
    for label in sorted(server["mounts"]):
        found.update(_target_tunables(state, state["targets"][label]))
    return found


def tunable_files(table: dict[str, Tunable]) -> dict[str, str]:
    """Each file a tunable is read or written through -> the tunable's own file. `osc/<dev>`
    links to `osp/<dev>` on an MDS (osp_tunables_init), so `osc.*` names the OSPs too."""
    files = {rel: rel for rel in table}
    for rel in table:
        if rel.startswith(OSP_DIR + "/"):
            files[OSC_DIR + rel[len(OSP_DIR) :]] = rel
    return files


def matching_tunables(table: dict[str, Tunable], pattern: str) -> list[str]:
    """The tunables an lctl pattern names, found as lctl finds them."""
    regex = param_regex(pattern)
    files = tunable_files(table)
    found: dict[str, str] = {}
    for top in PARAM_DIRS:
        for rel, own in files.items():
            if rel.startswith(top + "/"):
                below = rel[len(top) + 1 :]
                if regex.match(below):
                    found.setdefault(below.replace("/", "."), own)
    return sorted(set(found.values()))


def _integer(text: str, base: int, limit: int) -> int:
    """kstrtoul / kstrtouint: digits only (base 0: 0x.. hex, 0.. octal), one trailing newline."""
    text = text[:-1] if text.endswith("\n") else text
    text = text[1:] if text.startswith("+") else text
    if base == 0:
        if text[:2].lower() == "0x":
            base, text = 16, text[2:]
        elif text.startswith("0") and len(text) > 1:
            base, text = 8, text[1:]
        else:
            base = 10
    if not text or not all(c in "0123456789abcdef"[:base] for c in text.lower()):
        raise ParamError(errno.EINVAL)
    value = int(text, base)
    if value > limit:
        raise ParamError(errno.ERANGE)
    return value


_SIZE = re.compile(r"(\d+)(?:\.(\d*))?([KMGTPE]?)(i?B)?")


def memparse(text: str, default_unit: str) -> int:
    """sysfs_memparse: a number with an optional K/M/G/T/P/E suffix (binary; `kB`/`MB` style
    decimal), `default_unit` when there is none; up to 3 decimals."""
    text = text.rstrip()
    if not text:
        raise ParamError(errno.EINVAL)
    if not text[-1].isalpha():
        text += default_unit
    match = _SIZE.fullmatch(text.replace("kB", "KB"))
    if not match:
        raise ParamError(errno.EINVAL)
    whole, fraction, unit, suffix = match.groups()
    base = 1000 if suffix == "B" and unit else 1024
    scale = base ** ("KMGTPE".index(unit) + 1) if unit else 1
    value = int(whole) * scale + int((fraction or "")[:3].ljust(3, "0")) * scale // 1000
    if value > U64_MAX:
        raise ParamError(errno.EOVERFLOW)
    return value


def tunable_value(kind: str, written: str, sibling) -> str:
    """What the tunable reads back after `written` is written to it, as the 2.15 kernel stores
    it; ParamError when refused. `sibling(leaf)` is the current value of a file beside it."""
    if kind == "bool":  # kstrtobool
        first = written[:2].lower()
        if first[:1] in ("y", "1") or first == "on":
            return "1"
        if first[:1] in ("n", "0") or first == "of":
            return "0"
        raise ParamError(errno.EINVAL)
    if kind == "count":
        value = _integer(written, 0, U32_MAX)
        if value == 0:
            raise ParamError(errno.ERANGE)
        return str(value)
    if kind == "job_interval":  # kept in half-intervals
        return str(_integer(written, 0, U32_MAX) // 2 * 2)
    if kind == "bytes":
        return str(min(memparse(written, "B"), OSD_MAX_CACHE_SIZE))
    if kind == "brw_size":
        value = memparse(written, "MiB")
        if value == 0:
            raise ParamError(errno.EINVAL)
        if value > DT_MAX_BRW_SIZE or value < 4096:
            raise ParamError(errno.ERANGE)
        return str(value // MIB)
    if kind in ("threads_min", "threads_max"):
        value = _integer(written, 10, U64_MAX)
        if value // CPU_PARTITIONS < 2:
            raise ParamError(errno.ERANGE)
        if kind == "threads_min" and value > int(sibling("threads_max")):
            raise ParamError(errno.ERANGE)
        if kind == "threads_max" and value < int(sibling("threads_min")):
            raise ParamError(errno.ERANGE)
        return str(value // CPU_PARTITIONS * CPU_PARTITIONS)
    if kind == "lru_size":
        if written.startswith("clear"):  # drops the unused locks, keeps the size
            return sibling("lru_size")
        return str(_integer(written, 10, U64_MAX) & U32_MAX)
    raise ValueError(f"unknown tunable kind {kind!r}")


def set_tunable(server: dict, table: dict[str, Tunable], rel: str, written: str) -> str:
    """Write a value to one of the server's tunables; returns what it reads back now."""
    values = server.setdefault("params", {})
    directory = rel.rsplit("/", 1)[0]

    def sibling(leaf: str) -> str:
        path = f"{directory}/{leaf}"
        return values.get(path, table[path].default)

    value = tunable_value(table[rel].kind, written, sibling)
    values[rel] = value
    return value


def apply_setting(state: dict, host: str, pattern: str, written: str) -> dict[str, str]:
    """`lctl set_param pattern=written` as the MGS's params log runs it on a server: every
    matching tunable takes the value; one that refuses it keeps its own (the kernel only logs
    the failure). Returns the tunables changed -> their new value."""
    server = state["servers"][host]
    table = tunables(state, host)
    changed = {}
    for rel in matching_tunables(table, pattern):
        try:
            changed[rel] = set_tunable(server, table, rel, written)
        except ParamError:
            continue
    return changed


def config_log(state: dict) -> list[dict]:
    """The MGS's `params` log (`lctl set_param -P`), kept on the MGT: its live records
    ({index, device, param, value}) in order."""
    mgt = state["targets"].get("MGS")
    return mgt.get("params_log", []) if mgt else []


def apply_config_log(state: dict, host: str) -> None:
    """A target starting on `host` reads the params log: each record is set again there (on
    every matching tunable of the server, as the upcall `lctl set_param` does)."""
    for record in config_log(state):
        apply_setting(state, host, record["param"], record["value"])


def forget_target_params(state: dict, target: dict) -> None:
    """The target stops: values set on its tunables go with it (the next mount starts from
    the defaults, then the params log)."""
    host = target.get("mounted_on")
    if not host:
        return
    values = state["servers"][host].get("params", {})
    for rel in _target_tunables(state, target):
        values.pop(rel, None)
