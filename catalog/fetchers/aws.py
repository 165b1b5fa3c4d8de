"""AWS fetcher: GPU instance shapes (EC2), on-demand and reserved prices (Price List API), current spot prices.

Reserved Instances (standard, 1 and 3 years, no upfront) come from the same GetProducts items as the
on-demand price (catalog/fetchers/aws_reserved.py) as committed_1y / committed_3y offers, dated by the
term's effectiveDate. EC2 Instance Savings Plans (1 and 3 years, no upfront) come from the Savings Plans
API (catalog/fetchers/aws_savings.py) as savings_plan_1y / savings_plan_3y offers, dated the fetch day;
where that API fails (it needs its own permission, savingsplans:DescribeSavingsPlansOfferingRates), the
region keeps its other prices and the failure is reported, and the regions after are not asked again.

Clients come from boto3's standard credential chain, created inside `fetch` (never at import), or are
passed in. A region that fails is reported and skipped; missing credentials stop the whole fetch.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
)
from botocore.exceptions import (
    ConnectionError as SdkConnectionError,
)
from botocore.parsers import ResponseParserError

from catalog.cpu_scores import score_for
from catalog.fetchers.aws_prices import parse_price_item, price_filters
from catalog.fetchers.aws_reserved import RESERVED_SOURCE, parse_reserved
from catalog.fetchers.aws_savings import SAVINGS_SOURCE, SavingsRates, savings_rates
from catalog.fetchers.result import (
    CredentialsError,
    FetchResult,
    Progress,
    median_price,
    no_progress,
    one_line,
)
from catalog.plausibility import PricePoint, region_spot
from catalog.types import InstanceType, Offer, Pricing, Provider

PRICING_REGION = "us-east-1"  # the Price List API endpoint (ecosystem notes §4); not the priced region
SAVINGS_REGION = "us-east-1"  # the Savings Plans API's one (global) endpoint; the priced region is a filter
SOURCE = "AWS API: EC2 DescribeInstanceTypes"
PRICE_SOURCE = "AWS Price List API GetProducts (Linux, shared tenancy, on-demand)"
SPOT_SOURCE = "AWS EC2 DescribeSpotPriceHistory (Linux/UNIX), median over availability zones"
CREDENTIALS_HELP = (
    "no AWS credentials found: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
    "or run `aws configure`"
)
_CHUNK = 100  # DescribeInstanceTypeOfferings / spot history filter values per call
# Everything the SDK raises for a call that failed. ResponseParserError (an HTML page where XML or JSON
# was due, e.g. a proxy's 5xx) is not a BotoCoreError.
SDK_ERRORS: tuple[type[Exception], ...] = (ClientError, BotoCoreError, ResponseParserError)
# A region whose answer we cannot use: the SDK's errors, and a malformed reply (a field missing or mistyped).
REGION_ERRORS: tuple[type[Exception], ...] = (*SDK_ERRORS, ValueError, KeyError, TypeError)
# Configuration the user must fix: no credentials, a profile that does not exist, no region.
CONFIG_ERRORS: tuple[type[Exception], ...] = (NoCredentialsError, PartialCredentialsError, ProfileNotFound,
                                              NoRegionError)
# Error codes of credentials AWS refused (docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html).
REFUSED_CREDENTIALS = frozenset({"AuthFailure", "UnrecognizedClientException", "InvalidClientTokenId",
                                 "SignatureDoesNotMatch", "ExpiredToken", "ExpiredTokenException"})


def client_config() -> Config:
    """Return the botocore config for our clients: standard retries (4 attempts) and timeouts.

    Standard mode retries throttling, 5xx and connection errors with jittered exponential backoff; four
    attempts wait about 3.5 s in all before a call fails. Ten adaptive attempts held a refresh 79 s
    against a Price List that kept failing (issue 16).
    """
    return Config(retries={"mode": "standard", "total_max_attempts": 4}, connect_timeout=5, read_timeout=30)


def _config_error(exc: Exception) -> CredentialsError:
    if isinstance(exc, ProfileNotFound):
        return CredentialsError(f"aws: {one_line(exc)}: set AWS_PROFILE to a profile of ~/.aws/config, or unset it")
    if isinstance(exc, NoRegionError):
        return CredentialsError("aws: no region configured: set AWS_DEFAULT_REGION or pass --region")
    return CredentialsError(CREDENTIALS_HELP)


def _refused(exc: Exception) -> bool:
    return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in REFUSED_CREDENTIALS


def _service_down(exc: Exception) -> bool:
    """Whether the endpoint itself failed (5xx, throttled past retries, unreachable, not AWS's answer)."""
    if isinstance(exc, ResponseParserError | SdkConnectionError):
        return True
    if isinstance(exc, ClientError):
        meta = exc.response.get("ResponseMetadata", {})
        code = str(exc.response.get("Error", {}).get("Code", ""))
        return int(meta.get("HTTPStatusCode") or 0) >= 500 or "Throttl" in code or code == "RequestLimitExceeded"
    return False


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {one_line(exc)}"


def _client(session: Any, service: str, region: str) -> Any:
    return session.client(service, region_name=region, config=client_config())


# AWS GpuInfo names -> our slugs; where a name came in two sizes, GPU memory (MiB) decides.
def gpu_slug(name: str, memory_mib: int) -> str | None:
    """Map an AWS GPU name and its memory to our GPU slug, or None when we do not know it."""
    key = name.upper().replace("NVIDIA", "").strip()
    if key == "V100":
        return "v100-32gb" if memory_mib >= 32000 else "v100-16gb"
    if key in ("A100", "A100-80GB"):
        return "a100-80gb" if memory_mib >= 80000 or key.endswith("80GB") else "a100-40gb"
    return {
        "H100": "h100-sxm",
        "H200": "h200",
        "B200": "b200",
        "A10G": "a10g",
        "A10": "a10",
        "T4": "t4",
        "L4": "l4",
        "L40S": "l40s",
        "K80": "k80",
        "M60": "m60",
    }.get(key)


def network_gbit(info: dict[str, Any]) -> float:
    """Return a type's network bandwidth in Gbit/s ('up to' figures as their burst value)."""
    cards = info.get("NetworkCards") or []
    peak = sum(float(c.get("PeakBandwidthInGbps") or 0) for c in cards)
    text = str(info.get("NetworkPerformance", ""))
    match = re.search(r"(?:(\d+)\s*x\s*)?(\d+(?:\.\d+)?)\s*Gigabit", text, flags=re.IGNORECASE)
    stated = float(match.group(2)) * (int(match.group(1)) if match.group(1) else 1) if match else 0.0
    words = {"very low": 0.05, "low": 0.3, "moderate": 0.7, "high": 1.0}  # pre-2017 labels, no figure given
    return max(peak, stated) or words.get(text.strip().lower(), 0.0)


def _paginate(client: Any, method: str, key: str, **kwargs: Any) -> Iterable[Any]:
    for page in client.get_paginator(method).paginate(**kwargs):
        yield from page.get(key, [])


def _chunks(items: Sequence[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), _CHUNK):
        yield list(items[i : i + _CHUNK])


def _shapes(ec2: Any, problems: list[str]) -> dict[str, dict[str, Any]]:
    """Return GPU instance types by name (raw API dicts with our slug added), reporting what we skip."""
    shapes: dict[str, dict[str, Any]] = {}
    for it in _paginate(ec2, "describe_instance_types", "InstanceTypes"):
        gpus = (it.get("GpuInfo") or {}).get("Gpus") or []
        if not gpus:
            continue
        name = it["InstanceType"]
        gpu = gpus[0]
        count = int(gpu.get("Count") or 0)
        if count < 1 or float(gpu.get("GpuPartitionSize", 1) or 1) < 1:
            problems.append(f"{name}: fractional GPU shape (Count {count}) skipped")
            continue
        memory_mib = int((gpu.get("MemoryInfo") or {}).get("SizeInMiB") or 0)
        slug = gpu_slug(str(gpu.get("Name", "")), memory_mib)
        if slug is None:
            problems.append(
                f"{name}: unknown GPU {gpu.get('Manufacturer', '')} {gpu.get('Name')!r} "
                f"({memory_mib} MiB) skipped; add it to the GPU table and gpu_slug()"
            )
            continue
        shapes[name] = {**it, "_slug": slug, "_count": sum(int(g.get("Count") or 0) for g in gpus)}
    return shapes


def _offered(ec2: Any, names: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for chunk in _chunks(names):
        for row in _paginate(
            ec2,
            "describe_instance_type_offerings",
            "InstanceTypeOfferings",
            LocationType="region",
            Filters=[{"Name": "instance-type", "Values": chunk}],
        ):
            found.add(row["InstanceType"])
    return found


Reserved = dict[str, dict[Pricing, tuple[Decimal, str | None]]]  # type -> committed kind -> (rate, date)


def _on_demand(pricing: Any, region: str, names: set[str],
               problems: list[str]) -> tuple[dict[str, Decimal], dict[str, str], Reserved]:
    """Return the region's on-demand prices, CPUs and reserved (no upfront) rates from one GetProducts read."""
    prices: dict[str, Decimal] = {}
    cpus: dict[str, str] = {}
    reserved: Reserved = {}
    for raw in _paginate(
        pricing,
        "get_products",
        "PriceList",
        ServiceCode="AmazonEC2",
        Filters=price_filters(region),
        FormatVersion="aws_v1",
    ):
        item = json.loads(raw) if isinstance(raw, str) else raw
        itype, price, cpu = parse_price_item(item)
        if itype in names and price is not None and price > 0:
            prices[itype] = price
            if cpu:
                cpus[itype] = cpu
            rates, skipped = parse_reserved(item)
            if rates:
                reserved[itype] = rates
            problems.extend(f"{s} in {region}" for s in skipped)
    return prices, cpus, reserved


def _spot(ec2: Any, names: Sequence[str], now: datetime) -> dict[str, dict[str, float]]:
    seen: dict[str, dict[str, float]] = defaultdict(dict)  # type -> zone -> latest price
    for chunk in _chunks(names):
        for row in _paginate(
            ec2,
            "describe_spot_price_history",
            "SpotPriceHistory",
            InstanceTypes=chunk,
            ProductDescriptions=["Linux/UNIX"],
            StartTime=now,
        ):
            seen[row["InstanceType"]].setdefault(row.get("AvailabilityZone", "?"), float(row["SpotPrice"]))
    return dict(seen)


def _region_spot(name: str, region: str, zones: dict[str, float], on_demand: float | None,
                 problems: list[str]) -> float | None:
    """Return the region's spot price: the zones' median, zones at AWS's spot floor left out (plausibility)."""
    if on_demand is None:
        return median_price(zones.values())
    reference = PricePoint(Provider.AWS, name, region, Pricing.ON_DEMAND, on_demand)
    reduced = region_spot(reference, PricePoint(Provider.AWS, name, region, Pricing.SPOT, 0.0), zones)
    if reduced.finding is not None:
        problems.append(reduced.finding.reason)
    return reduced.price_per_hour_usd


def _instance(name: str, it: dict[str, Any], cpu: str, today: str, problems: list[str]) -> InstanceType:
    score = score_for(cpu) if cpu else None
    if score is None:
        problems.append(f"{name}: no single-thread score for CPU {cpu or 'unknown'!r}; scored 0")
    storage = it.get("InstanceStorageInfo") or {}
    return InstanceType(
        provider=Provider.AWS,
        instance_type=name,
        gpu=it["_slug"],
        gpu_count=it["_count"],
        vcpus=int(it["VCpuInfo"]["DefaultVCpus"]),
        host_memory_bytes=int(it["MemoryInfo"]["SizeInMiB"]) * 2**20,
        local_storage_bytes=int(storage.get("TotalSizeInGB") or 0) * 10**9,
        cpu_model=cpu
        or f"unknown {(it.get('ProcessorInfo') or {}).get('Manufacturer', '')} CPU".replace("  ", " "),
        cpu_single_thread_score=score.single_thread_score if score else 0.0,
        network_gbit_per_s=network_gbit(it.get("NetworkInfo") or {}),
        source=SOURCE,
        source_date=today,
    )


def fetch(
    *,
    client: Any = None,
    regions: Sequence[str] = ("us-east-1",),  # the registry (catalog/providers.py) passes its default regions
    ec2_client_factory: Callable[[str], Any] | None = None,
    savings_client: Any = None,
    progress: Progress = no_progress,
    now: datetime | None = None,
) -> FetchResult:
    """Read AWS GPU instance types, on-demand, reserved, savings-plan and spot prices in `regions`.

    `client` is the Price List client, `savings_client` the Savings Plans one (both made here when None).

    A region that fails is reported and skipped; CredentialsError (bad configuration) stops the whole fetch.
    Once the Price List API itself fails (it has one endpoint for every region), the regions after are
    reported as not priced without asking it again.
    """
    now = now or datetime.now(UTC)
    today = now.date().isoformat()
    try:
        session = boto3.session.Session()  # fresh: credentials resolved now, not cached by an earlier client
        factory = ec2_client_factory or (lambda region: _client(session, "ec2", region))
        pricing = client if client is not None else _client(session, "pricing", PRICING_REGION)
        savings = savings_client if savings_client is not None else _client(session, "savingsplans", SAVINGS_REGION)
    except CONFIG_ERRORS as exc:
        raise _config_error(exc) from exc
    total = 1 + len(regions)
    problems: list[str] = []
    shapes: dict[str, dict[str, Any]] | None = None
    offers: list[Offer] = []
    failed: list[tuple[str, str]] = []
    cpus: dict[str, str] = {}
    pricing_down: str | None = None
    savings_down: str | None = None
    progress("aws: instance types", 0, total)
    for step, region in enumerate(regions, start=1):
        progress(f"aws: prices in {region}", step, total)
        stage = "DescribeInstanceTypes"
        try:
            ec2 = factory(region)
            if shapes is None:  # the GPU shapes, from the first region that answers
                shapes = _shapes(ec2, problems)
            if pricing_down:
                failed.append((region, f"not priced: {pricing_down}"))
                continue
            stage = "DescribeInstanceTypeOfferings"
            offered = sorted(_offered(ec2, sorted(shapes)))
            stage = "Price List GetProducts"
            try:
                on_demand, region_cpus, reserved = _on_demand(pricing, region, set(offered), problems)
            except SDK_ERRORS as exc:
                if _service_down(exc):
                    pricing_down = f"the Price List API failed in {region} ({_reason(exc)})"
                raise
            stage = "DescribeSpotPriceHistory"
            spot = _spot(ec2, offered, now)
            plans: SavingsRates = {}
            if savings_down is None:
                try:
                    plans = savings_rates(savings, region, sorted(on_demand), problems)
                except CONFIG_ERRORS:
                    raise
                except REGION_ERRORS as exc:
                    if _refused(exc):
                        raise
                    savings_down = (f"savings plans not read from {region} on: DescribeSavingsPlansOfferingRates "
                                    f"failed: {_reason(exc)}")
                    problems.append(savings_down)
        except CONFIG_ERRORS as exc:
            raise _config_error(exc) from exc
        except REGION_ERRORS as exc:
            if _refused(exc):
                raise CredentialsError(f"aws: {region}: the credentials were refused ({_reason(exc)}); check "
                                       "AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY") from exc
            failed.append((region, f"{stage} failed: {_reason(exc)}"))
            continue
        for k, v in region_cpus.items():
            cpus.setdefault(k, v)
        for name in offered:
            if name in on_demand:
                offers.append(Offer(Provider.AWS, name, region, Pricing.ON_DEMAND, float(on_demand[name]),
                                    PRICE_SOURCE, today))
                for kind, (rate, effective) in sorted(reserved.get(name, {}).items()):
                    offers.append(Offer(Provider.AWS, name, region, kind, float(rate), RESERVED_SOURCE, effective))
                for kind, rate in sorted(plans.get(name, {}).items()):
                    offers.append(Offer(Provider.AWS, name, region, kind, float(rate), SAVINGS_SOURCE, today))
            else:
                problems.append(f"{name}: no on-demand price in {region}")
            od = on_demand.get(name)
            price = _region_spot(name, region, spot.get(name, {}), None if od is None else float(od), problems)
            if price is not None:
                offers.append(Offer(Provider.AWS, name, region, Pricing.SPOT, price, SPOT_SOURCE, today))
    progress("aws: done", total, total)
    instances = tuple(_instance(n, it, cpus.get(n, ""), today, problems) for n, it in sorted((shapes or {}).items()))
    return FetchResult(
        Provider.AWS, instances, tuple(offers), tuple(regions), today, tuple(failed), tuple(problems)
    )
