"""The windows the analytics pages offer; any other range is given as since/until."""

from __future__ import annotations

WINDOWS = {"1h": 3600, "24h": 86400, "7d": 7 * 86400}
DEFAULT_WINDOW = "1h"
# Columns of a heat map: the window is cut in about this many steps.
HEATMAP_COLUMNS = 60
# Rows of the OST heat map: the hottest OSTs (a rack has thousands).
HEATMAP_OST_ROWS = 48
VIEWS = (
    ("load", "Load balance"),
    ("fill", "OST fill"),
    ("striping", "Striping"),
    ("access", "Access patterns"),
    ("capacity", "Capacity forecast"),
)
