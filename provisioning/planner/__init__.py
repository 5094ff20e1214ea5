"""The SSU layout planner: a hardware spec in, the exact layout that will be built out.

Plain Python with no Django import, so the portal, the workers, the CLI
(`python -m provisioning.plan`) and the simulator all plan the same way.

    from provisioning.planner import make_plan, SpecError, MODELS
"""

from __future__ import annotations

from .catalogue import MODELS, RAID_SCHEMES, SEGMENT_SIZES_KIB, EnclosureModel, RaidScheme
from .errors import SpecError
from .planning import make_plan

__all__ = [
    "MODELS",
    "RAID_SCHEMES",
    "SEGMENT_SIZES_KIB",
    "EnclosureModel",
    "RaidScheme",
    "SpecError",
    "make_plan",
]
