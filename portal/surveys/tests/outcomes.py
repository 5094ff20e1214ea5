"""The acceptance survey's sentence on a job page, as the tests of a build read it."""

from __future__ import annotations

import re


def accepted(ssu: str) -> re.Pattern:
    """ "SSU ssu01 accepted at 9.2 GiB/s (expected 9.6 GiB/s)", whatever the figures."""
    return re.compile(rf"SSU {ssu} accepted at [\d,]+\.\d GiB/s \(expected [\d,]+\.\d GiB/s\)")


ACCEPTED = accepted("ssu01")
ACCEPTED_SSU02 = accepted("ssu02")
