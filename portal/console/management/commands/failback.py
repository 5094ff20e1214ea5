"""manage.py failback SERVER | --target LABEL [--yes] [--wait] [--user NAME]

Brings the server's targets (or one target) back to their primary server, as ``pcs resource
move`` then ``clear``; refused with the reasons while the server is not healthy. Without --yes
it prints which targets would move where (Pacemaker's what-if) and exits 3.
"""

from __future__ import annotations

from portal.console.choices import Act
from portal.console.management.commands.failover import Command as FailoverCommand


class Command(FailoverCommand):
    help = "Fail a server's targets (or one target) back to their primary server."
    act = Act.FAILBACK
