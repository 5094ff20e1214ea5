"""`python -m simulator ...`: see simulator/cli.py."""

from __future__ import annotations

import sys

from simulator.cli import main

sys.exit(main())
