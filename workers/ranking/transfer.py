"""Moving a job's data set to the machine's region: what it costs per GB and how fast it comes; pure.

Where the data set lives is `dataset.location` (spec): a cloud and region, `internet` (outside both
clouds: the team's servers or another provider) or `anywhere` (it can be put in any region at no
cost: a public data set, or one uploaded anew). Absent, it is unknown: nothing is priced, and every
cloud option warns what moving it there would cost (reasons.py).

Prices, USD per GB (10**9 bytes taken as a GB, as the clouds bill), charged by the sending side:
- AWS out of a region, to another AWS region or to the internet (so to Google Cloud):
  data/aws_transfer_prices.json, derived by derive_transfer_prices.py from Skyplane's table of AWS's
  price list (skyplane-project/skyplane@0513671c skyplane/data/aws_transfer_costs.csv, true on or
  before 2023-04-27). A pair the table lacks takes the dearest price out of that source region.
- Google Cloud out of a region (premium tier): Skyplane's transcription of Google's network pricing
  (skyplane-project/skyplane skyplane/compute/gcp/gcp_pricing.py, figures unchanged since commit
  2d128e2a of 2022-11-03; Google's own date not recorded there): within a continent 0.01 (North
  America), 0.02 (Europe), 0.05 (Asia), 0.08 (South America, Australia); between continents 0.08,
  0.15 to or from Indonesia or Oceania; to another cloud 0.12, 0.14 from Singapore/Tokyo/Osaka,
  0.147 from Seoul, 0.19 from Jakarta or Australia or to Australia. Regions whose continent the
  source does not cover (me-, africa-) take its dearest figure, 0.15 within Google and 0.19 out.
- Into a cloud from the internet: free on both (AWS and Google price transfer in at $0.00).
  What the team's side charges to send it is not known here and not counted.
- Within a region: free (S3 to EC2 and Cloud Storage to Compute Engine in one region).

Rate: a copy between regions or clouds is also capped by the throughput Skyplane measured between
regions (skyplane-project/skyplane@3efc9769 skyplane/data/throughput.csv, iperf3 with 64
connections between m5.8xlarge / n2-standard-32 VMs, 2022-01-29, premium tier): the median of its
successful runs, 3.59 Gbit/s AWS to AWS, 3.67 AWS to Google, 4.64 Google to AWS, 4.97 Google to
Google. A single `aws s3 cp` or `gsutil cp` stream gets less, so this is the optimistic end; it binds
only where the machine writes faster (local NVMe). From the internet the team's uplink is unknown
and no cap is applied (said in the option).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from catalog.types import Provider

AWS_PRICES_PATH = Path(__file__).resolve().parent / "data" / "aws_transfer_prices.json"
BYTES_PER_GB = 1e9
INTERNET = "internet"  # outside both clouds
ANYWHERE = "anywhere"  # can be placed in any region at no cost
LOCATIONS = ("aws", "gcp", INTERNET, ANYWHERE)

# Median measured throughput between regions, MB/s (10**6 bytes), Skyplane's grid (see above).
CROSS_REGION_MB_PER_S = {
    (Provider.AWS, Provider.AWS): 3.59e3 / 8, (Provider.AWS, Provider.GCP): 3.67e3 / 8,
    (Provider.GCP, Provider.AWS): 4.64e3 / 8, (Provider.GCP, Provider.GCP): 4.97e3 / 8,
}
GCP_SOURCE = ("Google Cloud network pricing as transcribed by Skyplane (skyplane-project/skyplane "
              "skyplane/compute/gcp/gcp_pricing.py, unchanged since 2d128e2a, 2022-11-03)")
_GCP_WITHIN = {"us": 0.01, "northamerica": 0.01, "europe": 0.02, "asia": 0.05, "southamerica": 0.08,
               "australia": 0.08}


@dataclass(frozen=True)
class Transfer:
    """Moving the data set from where it lives into one region: USD per GB, the rate cap, and why."""

    usd_per_gb: float
    cap_mb_per_s: float  # 0: no cap beyond the machine's own network and storage
    kind: str  # same-region, inter-region, other-cloud, from-internet, anywhere
    source: str


@functools.cache
def _aws_table() -> tuple[dict[str, dict[str, float]], str]:
    data = json.loads(AWS_PRICES_PATH.read_text(encoding="utf-8"))
    src = data["source"]
    return data["usd_per_gb"], f"AWS price list via {src['copy']}@{src['commit'][:12]}, as of {src['as_of']}"


@functools.cache
def _aws_out(region: str, to: str) -> float:
    """Return AWS's USD per GB out of `region` to AWS region `to` or to "internet"; the dearest where not listed."""
    table, _ = _aws_table()
    row = table.get(region)
    if row is not None and to in row:
        return row[to]
    rows = [row] if row is not None else list(table.values())  # an unknown region: the dearest of any
    return max(v for r in rows for k, v in r.items() if (k == INTERNET) == (to == INTERNET))


def _continent(gcp_region: str) -> tuple[str, str]:
    """Return (continent, region part) of a GCP region name: ("asia", "southeast2") for asia-southeast2."""
    continent, _, rest = gcp_region.partition("-")
    return continent, rest


def _gcp_out(region: str, to_provider: Provider, to_region: str) -> float:
    """Return Google's premium-tier USD per GB out of `region` to another GCP region or to another cloud."""
    continent, part = _continent(region)
    if to_provider is Provider.GCP:
        dst_continent, _ = _continent(to_region)
        if continent == dst_continent:
            return _GCP_WITHIN.get(continent, 0.15)
        oceania = {region.startswith("asia-southeast2") or continent == "australia",
                   to_region.startswith("asia-southeast2") or dst_continent == "australia"}
        if True in oceania or continent not in _GCP_WITHIN or dst_continent not in _GCP_WITHIN:
            return 0.15
        return 0.08
    to_australia = to_region == "ap-southeast-2"
    if continent == "asia" and part in ("southeast2", "northeast1", "northeast2"):
        return 0.19 if to_australia else 0.14
    if (continent == "asia" and part == "southeast1") or continent == "australia" or continent not in _GCP_WITHIN:
        return 0.19
    if continent == "asia" and part == "northeast3":
        return 0.19 if to_australia else 0.147
    return 0.19 if to_australia else 0.12


def transfer_into(location: tuple[str, str], provider: Provider, region: str) -> Transfer:
    """Return moving the data set from `location` (provider or internet/anywhere, region) into a cloud region."""
    where, from_region = location
    if where == ANYWHERE:
        return Transfer(0.0, 0.0, "anywhere", "dataset.location is anywhere: placed in the region at no cost")
    if where == INTERNET:
        return Transfer(0.0, 0.0, "from-internet", "transfer in from the internet is free on AWS and Google Cloud; "
                        "the sender's charge and uplink are not known here")
    src = Provider(where)
    if src is provider and from_region == region:
        return Transfer(0.0, 0.0, "same-region", "within one region: free")
    cap = CROSS_REGION_MB_PER_S.get((src, provider), 0.0)
    kind = "inter-region" if src is provider else "other-cloud"
    if src is Provider.AWS:
        price = _aws_out(from_region, region if provider is Provider.AWS else INTERNET)
        return Transfer(price, cap, kind, _aws_table()[1])
    return Transfer(_gcp_out(from_region, provider, region), cap, kind, GCP_SOURCE)


@functools.cache
def inbound_range(provider: Provider, region: str, regions: tuple[str, ...]) -> tuple[float, float]:
    """Return the cheapest and dearest USD per GB of moving data into `region` from another region of `provider`."""
    prices = [transfer_into((provider.value, r), provider, region).usd_per_gb for r in regions if r != region]
    return (min(prices), max(prices)) if prices else (0.0, 0.0)
