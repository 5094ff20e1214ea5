"""The text form of a failure on the command line (``python -m provisioning.ha --what-if``):
node-lost:N, node-returns:N, lnet-down:N, lnet-up:N, lustre-down:N, lustre-up:N,
monitor-fails:TARGET[@NODE]. An operator's acts have theirs in provisioning.ha.operator."""

from __future__ import annotations

import re

from provisioning.ha.simulate import (
    Failure,
    LnetHealthy,
    LnetUnhealthy,
    LustreHealthy,
    LustreUnhealthy,
    MonitorFails,
    NodeLost,
    NodeReturns,
    WhatIfError,
)

_WHAT_IF_RE = re.compile(
    r"^(?P<kind>[a-z-]+):(?P<subject>[A-Za-z0-9_.-]+)(?:@(?P<node>[a-z0-9-]+))?$"
)


def parse_what_if(text: str) -> Failure:
    """Read one --what-if: node-lost:N, node-returns:N, lnet-down:N, lnet-up:N,
    lustre-down:N, lustre-up:N, monitor-fails:TARGET[@NODE]."""
    match = _WHAT_IF_RE.match(text.strip())
    if not match:
        raise WhatIfError(f"cannot read what-if {text!r}")
    kind, subject, node = match.group("kind"), match.group("subject"), match.group("node")
    if kind == "monitor-fails":
        return MonitorFails(subject, node)
    if node is None:
        constructors = {
            "node-lost": NodeLost,
            "node-returns": NodeReturns,
            "lnet-down": LnetUnhealthy,
            "lustre-down": LustreUnhealthy,
            "lnet-up": LnetHealthy,
            "lustre-up": LustreHealthy,
        }
        if kind in constructors:
            return constructors[kind](subject)
    raise WhatIfError(
        f"unknown what-if {text!r}: use node-lost:NODE, node-returns:NODE, lnet-down:NODE, "
        "lnet-up:NODE, lustre-down:NODE, lustre-up:NODE or monitor-fails:TARGET[@NODE]"
    )
