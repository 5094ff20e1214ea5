"""An inventory as a finished provisioning job leaves it, for worlds built without running one.

The health tests and `python -m benchmarks.health` save pairs from their plans and then need
what the job and the sensors' first round would have recorded: every target mounted on its
primary server. Plain code (not a test fixture) so that the benchmark and the tests share it.
"""

from __future__ import annotations

from collections.abc import Iterable

from portal.inventory.choices import TargetState
from portal.inventory.models import ServerPair, Target


def mark_provisioned(pairs: Iterable[ServerPair]) -> None:
    """Every target of ``pairs`` mounted on its primary server."""
    for pair in pairs:
        for target in Target.objects.filter(primary_server__pair=pair):
            target.state = TargetState.MOUNTED
            target.current_server = target.primary_server
            target.save(update_fields=["state", "current_server"])
