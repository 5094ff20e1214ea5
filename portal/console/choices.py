"""The management console's enumerations: what an operator can do, and to what."""

from __future__ import annotations

import re

from django.db import models


class Act(models.TextChoices):
    FAILOVER = "failover", "Failover"
    FAILBACK = "failback", "Failback"
    MAINTENANCE_START = "maintenance_start", "Maintenance started"
    MAINTENANCE_END = "maintenance_end", "Maintenance ended"
    DRIVE_LOCATE = "drive_locate", "Drive located"
    DRIVE_REPLACE = "drive_replace", "Drive replaced"
    SET_PARAM = "set_param", "Parameter set"
    REVERT_PARAM = "revert_param", "Parameter reverted"
    SIGN_IN_REFUSED = "sign_in_refused", "Sign-in refused"
    SURVEY = "survey", "Survey started"


class ObjectKind(models.TextChoices):
    SERVER = "server", "Server"
    TARGET = "target", "Target"
    PAIR = "pair", "Server pair"
    ARRAY = "array", "Array"
    DRIVE = "drive", "Drive"
    PARAMETER = "parameter", "Parameter"
    USER = "user", "User"


class Via(models.TextChoices):
    WEB = "web", "Web page"
    API = "api", "API"
    COMMAND = "command", "manage.py"


class ReplacementState(models.TextChoices):
    IDENTIFYING = "identifying", "Switching the locate LED on"
    LOCATING = "locating", "Locate LED on"
    RECONSTRUCTING = "reconstructing", "Reconstructing"
    COPYBACK = "copyback", "Copying back from the hot spare"
    DONE = "done", "Optimal again"
    FAILED = "failed", "Stopped"


# The job kinds of the console (portal.console.jobs).
KIND_FAILOVER = "failover"
KIND_FAILBACK = "failback"
KIND_MAINTENANCE = "maintenance"
KIND_DRIVE_LOCATE = "drive_locate"
KIND_DRIVE_REPLACE = "drive_replace"
KIND_SET_PARAM = "set_param"
KIND_READ_PARAM = "read_param"

# How long a failover's ban lasts unless the operator says otherwise (pcs resource ban
# --lifetime); after it the target stays where it runs (stickiness) until failed back.
DEFAULT_LIFETIME = "PT1H"
MAINTENANCE_HOURS = 4
MAX_MAINTENANCE_HOURS = 72

# A Lustre parameter as lctl names it: dot-separated components of letters, digits, "_", "-",
# with the glob characters lctl takes ("*", "?", "[...]"); NIDs keep their "@". Never a leading
# "-": lctl would read the name as one of its options (get_param -R, --help).
PARAM_NAME_RE = re.compile(
    r"^[A-Za-z0-9_*?\[\]][A-Za-z0-9_*?\[\]-]*"  # the first component: no leading "-"
    r"(?:\.[A-Za-z0-9_*?\[\]@-]+)+$"
)
# A value: what lctl writes to a parameter file; nothing a shell would read as syntax.
PARAM_VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:@/+=%-]{1,256}$")
SHELL_CHARACTERS = set(";&|$`<>(){}\\\"'!#~ \t\n*?[]")
