"""`python -m simulator.commands <command> ARGS...`: run one virtual command."""

from __future__ import annotations

import sys

from simulator.commands import main

sys.exit(main())
