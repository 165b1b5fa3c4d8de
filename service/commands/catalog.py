"""`gpugauge catalog info|gpus|instances|refresh|import`: browse the catalog as tables or JSON, refresh it."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from catalog.fetchers.result import CredentialsError, FetchError
from catalog.gpu_names import gpu_name_matches
from catalog.importer import ImportReport, import_catalog
from catalog.loader import load_catalog
from catalog.payload import CatalogDataError
from catalog.providers import FETCHED_PROVIDERS
from catalog.refresh import RefreshError, RefreshReport, refresh_catalog
from catalog.skypilot import SkyPilotFormatError
from catalog.store import CatalogStoreError
from catalog.types import Catalog, Provider
from catalog.units import parse_bytes, parse_usd
from catalog.validate import CatalogValidationError
from service.catalog_listing import (
    MAX_PAGE_SIZE,
    PAGE_SIZE,
    PRICING_KINDS,
    catalog_info,
    list_gpus,
    list_instances,
)
from service.commands.catalog_tables import print_gpu_table, print_instance_table, print_onprem_table
from service.commands.common import fail, print_json
from service.commands.stores import open_store

_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def register(subparsers: Any) -> None:
    """Add the `catalog` subcommand and its own subcommands."""
    p = subparsers.add_parser("catalog", help="browse GPUs, instances and prices; refresh them from AWS/GCP")
    sub = p.add_subparsers(dest="catalog_command", required=True, metavar="info|gpus|instances|refresh|import")
    info = sub.add_parser("info", help="catalog version, prices_as_of and sources")
    gpus = sub.add_parser("gpus", help="the GPU table")
    gpus.add_argument("--min-memory", help="at least this much GPU memory, e.g. 16GB or 24GiB")
    gpus.add_argument("--wide", action="store_true", help="every column, whatever the terminal's width")
    inst = sub.add_parser("instances", help="cloud instance types with prices by region (or on-prem cards)")
    inst.add_argument("--provider", help="aws, gcp or onprem")
    inst.add_argument("--region", help="only prices in this region, e.g. us-east-1")
    inst.add_argument("--gpu", help="only this GPU: a slug (v100-16gb) or a name (\"A100\" is every A100)")
    inst.add_argument("--min-gpu-memory", help="at least this much memory per GPU, e.g. 16GB")
    inst.add_argument("--max-price", help="at most this many dollars per hour, e.g. 3.5 or $3.50")
    inst.add_argument("--pricing", help="on_demand or spot (the default lists both); committed_1y, committed_3y, "
                      "savings_plan_1y or savings_plan_3y list only that kind")
    inst.add_argument("--limit", type=int, default=PAGE_SIZE, help=f"instance types per page (default {PAGE_SIZE})")
    inst.add_argument("--offset", type=int, default=0, help="instance types to skip (a page's next_offset)")
    inst.add_argument("--wide", action="store_true", help="every column, whatever the terminal's width")
    ref = sub.add_parser("refresh", help="read current instance types and prices from a provider")
    ref.add_argument("--provider", required=True, help="aws or gcp")
    ref.add_argument(
        "--region", action="append", help="a region to read (repeatable; default: three per provider)"
    )
    ref.add_argument(
        "--data-dir", help="keep catalog versions here (default: $GPUGAUGE_CATALOG_DIR, else ./var)"
    )
    ref.add_argument("--project", help="Google Cloud project for the Compute API (gcp only)")
    imp = sub.add_parser("import", help="make a SkyPilot catalog directory (v7 or v8) the current version")
    imp.add_argument("--skypilot", required=True, metavar="DIR", help="e.g. ~/.sky/catalogs/v8")
    imp.add_argument("--as-of", help="the date the prices were true (default: the files' modification date)")
    imp.add_argument(
        "--data-dir", help="keep catalog versions here (default: $GPUGAUGE_CATALOG_DIR, else ./var)"
    )
    for command in (info, gpus, inst, ref, imp):
        command.add_argument("--json", action="store_true", help="print the API's JSON payload")
    p.set_defaults(func=run)


class _BadInput(Exception):
    """A flag value the user can fix; printed in one line, exit code 2."""


def run(args: argparse.Namespace) -> int:
    """Run one catalog subcommand; bad input is one line on stderr and exit code 2."""
    command = getattr(args, "catalog_command", None)
    try:
        if command == "refresh":
            return _refresh(args)
        if command == "import":
            return _import(args)
        catalog = load_catalog(store=open_store(data_dir=getattr(args, "data_dir", None)))
        if command == "info":
            return _info(catalog, as_json=args.json)
        if command == "gpus":
            return _gpus(catalog, args)
        if command == "instances":
            return _instances(catalog, args)
        raise _BadInput(f"unknown catalog command {command!r} (valid: info, gpus, instances, refresh, import)")
    except _BadInput as exc:
        return fail(str(exc))
    except (CatalogDataError, CatalogValidationError, CatalogStoreError) as exc:
        return fail(f"catalog: {exc}")


def _bytes_flag(flag: str, value: str | None) -> int:
    if value is None:
        return 0
    try:
        return parse_bytes(value)
    except ValueError as exc:
        raise _BadInput(f"{flag}: {exc}") from None


def _one_of(flag: str, value: str | None, valid: list[str]) -> None:
    if value is not None and value not in valid:
        close = sorted(v for v in valid if v.startswith(value)) or difflib.get_close_matches(
            value, valid, n=3
        )
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise _BadInput(f"{flag}: unknown {flag.lstrip('-')} {value!r} ({hint}valid: {', '.join(valid)})")


def _info(catalog: Catalog, *, as_json: bool) -> int:
    payload = catalog_info(catalog)
    if as_json:
        print_json(payload)
        return 0
    console = Console()
    console.print(f"catalog version [bold]{catalog.version}[/], prices as of [bold]{catalog.prices_as_of}[/]")
    console.print(
        f"{len(catalog.instances)} instance types, {len(catalog.offers)} prices, "
        f"{len(catalog.onprem_cards)} on-prem cards, {len(catalog.gpus)} GPUs"
    )
    table = Table(title="sources")
    table.add_column("source")
    for source in catalog.sources:
        table.add_row(source)
    console.print(table)
    return 0


def _gpus(catalog: Catalog, args: argparse.Namespace) -> int:
    payload = list_gpus(catalog, min_memory_bytes=_bytes_flag("--min-memory", args.min_memory))
    if args.json:
        print_json(payload)
        return 0
    print_gpu_table(payload, version=catalog.version, wide=args.wide)
    return 0


def _instances(catalog: Catalog, args: argparse.Namespace) -> int:
    _one_of("--provider", args.provider, [p.value for p in Provider])
    _one_of("--pricing", args.pricing, [k for k in PRICING_KINDS if k != "owned"])  # owned: --provider onprem
    slugs = [g.slug for g in catalog.gpus]
    if args.gpu is not None and not gpu_name_matches(args.gpu, slugs):  # "A100", "RTX 4090" name slugs
        _one_of("--gpu", args.gpu, sorted(slugs))
    regions = sorted(
        {o.region for o in catalog.offers if args.provider is None or o.provider.value == args.provider}
    )
    _one_of("--region", args.region, regions)
    try:
        max_price = None if args.max_price is None else parse_usd(args.max_price)
    except ValueError as exc:
        raise _BadInput(f"--max-price: {exc}") from None
    min_memory = _bytes_flag("--min-gpu-memory", args.min_gpu_memory)
    if not 1 <= args.limit <= MAX_PAGE_SIZE:
        raise _BadInput(f"--limit: {args.limit} is not between 1 and {MAX_PAGE_SIZE}")
    if args.offset < 0:
        raise _BadInput(f"--offset: {args.offset} is negative")
    if args.provider == "onprem":
        return _onprem(catalog, args, min_memory=min_memory, max_price=max_price)
    payload = list_instances(
        catalog,
        provider=args.provider,
        region=args.region,
        gpu=args.gpu,
        pricing=args.pricing,
        min_gpu_memory_bytes=min_memory,
        max_price_per_hour_usd=max_price,
        limit=args.limit,
        offset=args.offset,
    )
    if args.json:
        print_json(payload)
        return 0
    print_instance_table(payload, wide=args.wide)
    return 0


def _onprem(catalog: Catalog, args: argparse.Namespace, *, min_memory: int, max_price: float | None) -> int:
    cards = [
        c
        for c in catalog.onprem_cards
        if (args.gpu is None or c.gpu == args.gpu) and catalog.gpu(c.gpu).memory_bytes >= min_memory
    ]
    payload = {
        **catalog_info(catalog),
        "instances": [],
        "onprem_cards": [
            {
                "gpu": c.gpu,
                "gpu_memory_bytes": catalog.gpu(c.gpu).memory_bytes,
                "price_usd": c.price_usd,
                "power_watts": c.power_watts,
                "source": c.source,
                "as_of": c.as_of,
            }
            for c in cards
        ],
    }
    if args.json:
        print_json(payload)
        return 0
    print_onprem_table(catalog, cards)
    return 0


def _refresh(args: argparse.Namespace) -> int:
    _one_of("--provider", args.provider, sorted(FETCHED_PROVIDERS))
    store = open_store(data_dir=args.data_dir, for_writing=True)
    assert store is not None
    kwargs = {"project": args.project} if args.provider == "gcp" and args.project else {}
    console = Console(stderr=True)
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=args.json or not console.is_terminal,
    )
    task = bar.add_task(f"{args.provider}: starting", total=1)

    def progress(message: str, done: int, total: int) -> None:
        bar.update(task, description=message, completed=done, total=max(total, 1))

    try:
        with bar:
            report = refresh_catalog(
                args.provider, store=store, regions=args.region, progress=progress, fetch_kwargs=kwargs
            )
    except CredentialsError as exc:
        return fail(f"{args.provider}: {exc}")
    except (FetchError, RefreshError, CatalogValidationError, CatalogStoreError, CatalogDataError) as exc:
        print(f"gpugauge: catalog refresh failed, the current catalog is unchanged: {exc}", file=sys.stderr)
        return 1
    _print_report(report, as_json=args.json)
    return 0


def _import(args: argparse.Namespace) -> int:
    directory = Path(args.skypilot).expanduser()
    if not directory.is_dir():
        raise _BadInput(f"--skypilot: {args.skypilot} is not a directory")
    if args.as_of is not None and not _ISO_DAY.match(args.as_of):
        raise _BadInput(f"--as-of: {args.as_of!r} is not an ISO date (YYYY-MM-DD)")
    store = open_store(data_dir=args.data_dir, for_writing=True)
    assert store is not None
    try:
        report = import_catalog(directory, store=store, as_of=args.as_of)
    except SkyPilotFormatError as exc:
        raise _BadInput(f"--skypilot: {exc}") from None
    except (CatalogValidationError, CatalogStoreError, CatalogDataError) as exc:
        print(f"gpugauge: catalog import failed, the current catalog is unchanged: {exc}", file=sys.stderr)
        return 1
    _print_import(report, as_json=args.json)
    return 0


def _print_import(report: ImportReport, *, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "version": report.version,
                "prices_as_of": report.prices_as_of,
                "providers": list(report.providers),
                "instances": report.instances,
                "offers": report.offers,
                "excluded": list(report.excluded),
                "skipped": list(report.skipped),
                "files": list(report.files),
            }
        )
        return
    console = Console()
    console.print(
        f"catalog version [bold]{report.version}[/] is current: {report.instances} "
        f"{'/'.join(report.providers)} instance types, {report.offers} prices as of {report.prices_as_of}"
    )
    console.print(f"[dim]{len(report.excluded)} implausible prices left out, {len(report.skipped)} shapes skipped "
                  "(--json lists them)[/]")


def _print_report(report: RefreshReport, *, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "provider": report.provider,
                "version": report.version,
                "prices_as_of": report.prices_as_of,
                "instances": report.instances,
                "offers": report.offers,
                "fetched_regions": list(report.fetched_regions),
                "failed_regions": [{"region": r, "reason": why} for r, why in report.failed_regions],
                "problems": list(report.problems),
            }
        )
        return
    console = Console()
    console.print(
        f"catalog version [bold]{report.version}[/] is current: {report.instances} {report.provider} "
        f"instance types, {report.offers} prices as of {report.prices_as_of}"
    )
    for region, why in report.failed_regions:
        console.print(f"[yellow]{report.provider} {region}: not refreshed ({escape(why)}); its last prices are kept[/]")
    for problem in report.problems[:20]:
        console.print(f"[dim]note: {problem}[/]")
    if len(report.problems) > 20:
        console.print(f"[dim]... and {len(report.problems) - 20} more notes (use --json to see all)[/]")
