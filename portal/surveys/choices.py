"""What a survey can be asked to do, and the figures an acceptance survey uses."""

from __future__ import annotations

from django.db import models


class Scope(models.TextChoices):
    SSU = "ssu", "The whole SSU"
    SERVER = "server", "One OSS"
    TARGETS = "targets", "Chosen OSTs"


class Verdict(models.TextChoices):
    PENDING = "pending", "Running"
    PASS = "pass", "Pass"
    FAIL = "fail", "Fail"
    ERROR = "error", "Did not finish"


# obdfilter-survey's test names, in the order the script runs them (write must come first).
TESTS = ("write", "rewrite", "read")
# Powers of two the form offers for the ranges (the script doubles from lo to hi).
POWERS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
RECORD_SIZES_KIB = (64, 128, 256, 512, 1024, 2048, 4096)  # rszmax of case=disk is 4096

# The acceptance survey that ends a provisioning job: 1 to 16 threads per OST, one object per
# thread at the top, 1 MiB records, 16 GiB per OST in production. The virtual rack's survey
# returns at once, so the size matters only for the SHORT check there.
ACCEPTANCE = {
    "size_mb": 16384,
    "rsz_lo_kib": 1024,
    "rsz_hi_kib": 1024,
    "obj_lo": 1,
    "obj_hi": 1,
    "thr_lo": 1,
    "thr_hi": 16,
    "tests": list(TESTS),
    "per_target": True,
    "tolerance": 0.9,
}
# Live traffic above this (bytes/s over the last minutes) makes a survey ask for confirmation.
TRAFFIC_WARNING_BYTES_S = 10_000_000
TRAFFIC_WINDOW_SECONDS = 300
