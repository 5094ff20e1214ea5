"""SANtricity's object references for the rack's objects: 40 hex digits (controllers: 24), stable
for an object's life, derived from the array's name and the object's place or name so that the
API needs no table of them. The leading byte follows the object type as real refs do (drives
01, volumes 02, volume groups 04, trays 0E, drawers 2D); the rest is ours."""

from __future__ import annotations

import hashlib

NO_REF = "0" * 40
CONTROLLER_REFS = {"A": "070000000000000000000001", "B": "070000000000000000000002"}
CONTROLLER_SLOTS = {"A": 1, "B": 2}


def _ref(prefix: str, *parts: object) -> str:
    digest = hashlib.sha1(":".join(str(p) for p in parts).encode()).hexdigest().upper()
    return prefix + digest[:38]


def drive_ref(array: str, tray: int, drawer: int, slot: int) -> str:
    return _ref("01", array, "drive", tray, drawer, slot)


def volume_ref(array: str, name: str) -> str:
    return _ref("02", array, "volume", name)


def group_ref(array: str, name: str) -> str:
    return _ref("04", array, "vg", name)


def tray_ref(array: str, tray: int) -> str:
    return _ref("0E", array, "tray", tray)


def drawer_ref(array: str, tray: int, drawer: int) -> str:
    return _ref("2D", array, "drawer", tray, drawer)


def interface_ref(array: str, controller: str, channel: int) -> str:
    return _ref("22", array, "hostside", controller, channel)


def wwn(array: str) -> str:
    return "600A0980" + hashlib.sha1(array.encode()).hexdigest().upper()[:24]
