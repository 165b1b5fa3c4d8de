"""Derive aws_transfer_prices.json: AWS's USD per GB out of each region, to another region or the internet.

Source: skyplane-project/skyplane skyplane/data/aws_transfer_costs.csv (columns src, dst, cost: USD per
GB out of `src` to region `dst`, or to "internet"), last changed in commit
0513671c90b7edf24430ff0aa872f2b619d699c8 (2023-04-27T13:15:01-07:00); Skyplane collected the rows
from AWS's price list; the file carries no date of its own, so the prices were true on or before
that commit's date. Kept: every row whose source is a commercial region (us-gov-* left out), the
cost exactly as in the source. Run:
    python workers/ranking/data/derive_transfer_prices.py RAW.csv            # writes the table
    python workers/ranking/data/derive_transfer_prices.py RAW.csv --check    # exit 1 if it would change
RAW.csv: `git show 0513671c:skyplane/data/aws_transfer_costs.csv` in a clone of skyplane-project/skyplane.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from workers.ranking.data.derived import write_or_check

OUT = Path(__file__).resolve().parent / "aws_transfer_prices.json"
SOURCE = {
    "copy": "skyplane-project/skyplane skyplane/data/aws_transfer_costs.csv",
    "commit": "0513671c90b7edf24430ff0aa872f2b619d699c8",
    "as_of": "on or before 2023-04-27 (the file carries no date; the copy was last changed that day)",
    "meaning": "USD per GB transferred out of the source region, to another AWS region or to the internet "
               "(first pricing tier); transfer in is free",
}


def derive(text: str, raw_sha256: str) -> dict[str, Any]:
    """Return the table: per source region, the USD per GB to each destination region and to "internet"."""
    out: dict[str, dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row["src"].startswith("us-gov-") or row["dst"].startswith("us-gov-"):
            continue
        out.setdefault(row["src"], {})[row["dst"]] = float(row["cost"])
    return {"source": {**SOURCE, "sha256": raw_sha256},
            "usd_per_gb": {src: dict(sorted(d.items())) for src, d in sorted(out.items())}}


def main(argv: list[str] | None = None) -> int:
    """Write the table (or check it is current) from the CSV given."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("raw", type=Path)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    data = args.raw.read_bytes()
    text = json.dumps(derive(data.decode("utf-8"), hashlib.sha256(data).hexdigest()), indent=1) + "\n"
    return write_or_check(OUT, text, source=args.raw, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
