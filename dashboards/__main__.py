"""Generate the dashboards' JSON from the code in ``dashboards.views``.

python -m dashboards            # write dashboards/generated/<uid>.json
python -m dashboards --check    # exit 1 when the committed JSON differs from the code
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grafana_foundation_sdk.cog.encoder import JSONEncoder

from dashboards.views import DASHBOARDS

GENERATED = Path(__file__).resolve().parent / "generated"


def render(uid: str) -> str:
    built = DASHBOARDS[uid]().build()
    return json.dumps(built, cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dashboards", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    stale = []
    for uid in DASHBOARDS:
        path = GENERATED / f"{uid}.json"
        text = render(uid)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            GENERATED.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(
                f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}"
            )
    if stale:
        print(f"out of date: {', '.join(stale)}; run python -m dashboards", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
