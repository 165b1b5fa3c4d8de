"""Derive aws_spot_bands.json, the Spot Instance Advisor's interruption bands of the catalog's AWS spot offers.

Source: AWS's Spot Instance Advisor feed (https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json),
read from the copy committed to alexei-led/spotinfo at internal/spot/data/spot-advisor-data.json
(commit 5bdc33cee2e185c2f62df29dd9c4ad0ad7102a74, 2025-06-28T11:37:33+03:00; the feed has no date of
its own, so the bands were true on or before that commit's date, on an earlier day not recorded).

Kept: every (region, instance type) of the catalog snapshot's AWS spot offers that the advisor lists
for Linux, with its band index `r` (0-4) exactly as in the source; the band labels come from the
feed's own `ranges`. Run:
    python workers/ranking/data/derive_spot_bands.py RAW.json            # writes the table
    python workers/ranking/data/derive_spot_bands.py RAW.json --check    # exit 1 if it would change
where RAW.json is the advisor file (for example `git show 5bdc33ce:internal/spot/data/spot-advisor-data.json`
in a clone of alexei-led/spotinfo).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from workers.ranking.data.derived import write_or_check

HERE = Path(__file__).resolve().parent
OUT = HERE / "aws_spot_bands.json"
SNAPSHOT_DIR = HERE.parents[2] / "catalog" / "data" / "instances"
SOURCE = {
    "feed": "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json (AWS Spot Instance Advisor)",
    "copy": "alexei-led/spotinfo internal/spot/data/spot-advisor-data.json",
    "commit": "5bdc33cee2e185c2f62df29dd9c4ad0ad7102a74",
    "committed": "2025-06-28",
    "as_of": "on or before 2025-06-28 (the feed carries no date; the copy was committed that day)",
    "meaning": "frequency of interruption: the rate at which Spot reclaimed capacity over the trailing month, "
               "per region and instance type, Linux",
}


def derive(raw: dict[str, Any], snapshot: dict[str, Any], raw_sha256: str) -> dict[str, Any]:
    """Return the table: the feed's labels and, per region, the band index of each catalog spot offer."""
    wanted: dict[str, set[str]] = {}
    for o in snapshot["offers"]:
        if o["provider"] == "aws" and o["pricing"] == "spot":
            wanted.setdefault(o["region"], set()).add(o["instance_type"])
    bands: dict[str, dict[str, int]] = {}
    for region in sorted(wanted):
        linux = raw["spot_advisor"].get(region, {}).get("Linux", {})
        found = {t: int(linux[t]["r"]) for t in sorted(wanted[region]) if t in linux}
        if found:
            bands[region] = found
    missing = sorted(f"{r}/{t}" for r, types in wanted.items() for t in types if t not in bands.get(r, {}))
    return {
        "source": {**SOURCE, "sha256": raw_sha256},
        "labels": [r["label"] for r in sorted(raw["ranges"], key=lambda r: r["index"])],
        "bands": bands,
        "not_listed": missing,
    }


def main(argv: list[str] | None = None) -> int:
    """Write the table (or check it is current) from the advisor file given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", type=Path)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    data = args.raw.read_bytes()
    snapshot_path = sorted(SNAPSHOT_DIR.glob("snapshot-*.json"))[-1]
    table = derive(json.loads(data), json.loads(snapshot_path.read_text(encoding="utf-8")),
                   hashlib.sha256(data).hexdigest())
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    return write_or_check(OUT, text, source=args.raw, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
