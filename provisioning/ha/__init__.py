"""Pacemaker configuration of a Lustre server pair (MDS or OSS), and what-if checks on it.

Plain Python, no Django. `build_cib()` and `build_pcs_script()` write the same cluster as CIB
XML and as a pcs script; `simulate()` asks Pacemaker's own scheduler (crm_simulate) where the
targets end up after failures. See provisioning/ha/README.md.
"""

from __future__ import annotations

from provisioning.ha.cib import build_cib, first_push
from provisioning.ha.cluster import FenceCredentials
from provisioning.ha.pcs import build_pcs_script
from provisioning.ha.plan import HAConfigError
from provisioning.ha.simulate import (
    AttributeChange,
    LnetHealthy,
    LnetUnhealthy,
    LustreHealthy,
    LustreUnhealthy,
    MonitorFails,
    NodeLost,
    NodeReturns,
    SimulationError,
    SimulationResult,
    VerifyResult,
    WhatIfError,
    simulate,
    simulate_from,
    simulate_sequence,
    verify,
)
from provisioning.ha.what_if_text import parse_what_if

__all__ = [
    "first_push",
    "AttributeChange",
    "FenceCredentials",
    "HAConfigError",
    "LnetHealthy",
    "LnetUnhealthy",
    "LustreHealthy",
    "LustreUnhealthy",
    "MonitorFails",
    "NodeLost",
    "NodeReturns",
    "SimulationError",
    "SimulationResult",
    "VerifyResult",
    "WhatIfError",
    "build_cib",
    "build_pcs_script",
    "parse_what_if",
    "simulate",
    "simulate_from",
    "simulate_sequence",
    "verify",
]
