"""The catalog's tables at 80 and 120 columns: identifiers whole, left-out columns named, --wide shows all."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from catalog.loader import load_catalog
from service.catalog_listing import list_gpus, list_instances
from service.commands.catalog_tables import GPU_COLUMNS, INSTANCE_COLUMNS, instance_rows
from service.commands.estimate import _cpu_need
from service.commands.tables import fitted_table
from workers.render import fmt_bytes


def _render(table: object, width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False)
    console.print(table)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 120])
def test_instance_tables_keep_every_identifier_whole_and_fit(width: int) -> None:
    payload = list_instances(load_catalog(), provider=None, region=None, gpu=None, pricing=None,
                             min_gpu_memory_bytes=0, max_price_per_hour_usd=None, limit=40, offset=0)
    rows = [[i["provider"], i["instance_type"], f"{i['gpu_count']} x {i['gpu']}", fmt_bytes(i["gpu_memory_bytes"]),
             "1", "1", "1", "1", p["region"], "1.00", "-", "2026-07-30"] for i in payload["instances"]
            for p in i["prices"][:1]]
    table, left_out = fitted_table("t", INSTANCE_COLUMNS, rows, width=width)
    text = _render(table, width)
    assert max(len(line) for line in text.splitlines()) <= width
    for row in rows:
        assert row[1] in text and row[8] in text
    assert left_out or width >= 120
    wide, none_left = fitted_table("t", INSTANCE_COLUMNS, rows, width=width, wide=True)
    assert none_left == [] and len(wide.columns) == len(INSTANCE_COLUMNS)


@pytest.mark.parametrize("width", [80, 120])
def test_the_gpu_table_keeps_every_slug_whole(width: int) -> None:
    gpus = list_gpus(load_catalog(), min_memory_bytes=0)["gpus"]
    rows = [[g["slug"], g["name"], g["architecture"], fmt_bytes(g["memory_bytes"]), "1", "1", "1", "1", "1",
             g["segment"]] for g in gpus]
    table, _ = fitted_table("t", GPU_COLUMNS, rows, width=width)
    text = _render(table, width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert all(f" {g['slug']} " in f" {text} ".replace("\n", " ") for g in gpus)


def test_a_job_without_preprocessing_does_not_ask_for_a_cpu_score_of_zero() -> None:
    from dataclasses import dataclass

    @dataclass
    class _Req:
        loader_workers: int
        cpu_single_thread_score: float
        warnings: tuple[object, ...] = ()

    assert "score 0" not in _cpu_need(_Req(23, 0.0))  # type: ignore[arg-type]
    assert "any CPU" in _cpu_need(_Req(23, 0.0))  # type: ignore[arg-type]
    assert "4 loader workers x single-thread score 1,930" in _cpu_need(_Req(4, 1930.0))  # type: ignore[arg-type]
    # GPT-2's 0.01 ms a sample over a B200 machine's 27 workers per GPU: 0.26 each, never "score 0"
    light = _cpu_need(_Req(27, 0.2634))  # type: ignore[arg-type]
    assert "score 0 " not in light and "light pre-processing: under 1% of one reference core" in light
    assert "light pre-processing: 5%" in _cpu_need(_Req(2, 50.0))  # type: ignore[arg-type]
    # a U-Net's 4 ms a tile over an H100 machine's 25 workers: 19% of a core, one worker does it
    spread = _cpu_need(_Req(25, 15.0))  # type: ignore[arg-type]
    assert spread.startswith("pre-processing takes 19% of one reference core") and "one loader worker" in spread
    assert "over 25 loader workers, score 15 each" in spread


@pytest.mark.parametrize("width", [80, 120])
def test_estimate_prints_every_gpu_slug_whole_at_80_and_120_columns(width: int, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import service.commands.estimate as estimate
    from service.cli import main

    consoles: list[Console] = []

    def narrow() -> Console:
        consoles.append(Console(width=width, record=True, force_terminal=False))
        return consoles[-1]

    monkeypatch.setattr(estimate, "make_console", narrow)
    assert main(["estimate", "bert-base", "--batch", "32", "--seq", "128", "--samples", "392702",
                 "--gpu", "all"]) == 0
    text = consoles[-1].export_text()
    table_lines = [line for line in text.splitlines() if line.strip()]
    assert max(len(line) for line in table_lines) <= width
    slugs = [g.slug for g in load_catalog().gpus]
    for slug in slugs:
        assert any(line.split() and line.split()[0] == slug for line in table_lines), slug
    assert ("not shown at this width" in text) == (width < 100)
    assert "score 0" not in text


def test_people_read_prefixed_units_and_no_zero_dollar_costs() -> None:
    from workers.render import fmt_quantity, fmt_usd

    assert fmt_quantity(2.15e12, "FLOP") == "2.15 TFLOP" and fmt_quantity(950, "FLOP") == "950 FLOP"
    assert fmt_usd(0.0) == "$0.00" and fmt_usd(0.0012) == "<$0.01" and fmt_usd(0.006) == "$0.01"
    assert fmt_usd(1234.5) == "$1,234"


def test_slow_jobs_read_their_samples_per_second_never_zero(capsys: pytest.CaptureFixture[str]) -> None:
    from service.cli import main
    from workers.render import fmt_rate

    # QLoRA on Llama-7B runs 0.37 samples/s on an RTX 3080: the table printed "0"
    assert fmt_rate(0.3721) == "0.372" and fmt_rate(0.868) == "0.868" and fmt_rate(12.54) == "12.5"
    assert fmt_rate(99.94) == "99.9" and fmt_rate(1234.4) == "1,234" and fmt_rate(0.0) == "0"
    code = main(["estimate", "llama-7b", "--batch", "1", "--seq", "2048", "--samples", "1000", "--gpu", "t4",
                 "--json"])
    rate = json.loads(capsys.readouterr().out)["per_gpu"][0]["throughput_samples_per_s"]
    assert code == 0 and 0 < rate < 1
    assert main(["estimate", "llama-7b", "--batch", "1", "--seq", "2048", "--samples", "1000", "--gpu", "t4"]) == 0
    assert f" {fmt_rate(rate)} " in capsys.readouterr().out


def test_estimate_shows_no_training_time_of_zero_when_the_data_set_size_is_unknown(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import service.commands.estimate as estimate
    from service.cli import main

    consoles: list[Console] = []

    def recorded() -> Console:
        consoles.append(Console(width=120, record=True, force_terminal=False))
        return consoles[-1]

    monkeypatch.setattr(estimate, "make_console", recorded)
    assert main(["estimate", "resnet50", "--batch", "64", "--gpu", "all"]) == 0
    text = consoles[-1].export_text()
    rows = [line.split() for line in text.splitlines() if line.split()[:1] in (["t4"], ["a100-80gb"])]
    assert rows and all(r[-2] == "-" or "-" in r for r in rows)
    assert " 0 s " not in text and "give dataset.samples" in text


@pytest.mark.parametrize("width", [80, 120])
def test_piped_tables_take_the_width_columns_names(width: int, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    from service.cli import main
    assert main(["catalog", "instances", "--gpu", "h100-sxm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "p5.48xlarge" in "\n".join(lines)
    assert max(len(line) for line in lines) <= width


@pytest.mark.parametrize("width", [80, 120])
def test_the_model_table_keeps_every_layer_name_whole_and_fits(width: int, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from service.cli import main
    from workers.modelimport.models import resolve_model

    monkeypatch.setenv("COLUMNS", str(width))
    assert main(["model", "bert-base"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= width
    words = set(out.split())
    for layer in resolve_model({"preset": "bert-base"}, sequence_length=None, batch_size=None).layers:
        assert layer.name in words and "x".join(map(str, layer.output_shape)) in words
    assert main(["model", "bert-base", "--wide"]) == 0
    assert "multiply-adds" in capsys.readouterr().out


def test_each_rows_prices_carry_their_date_and_a_committed_page_shows_its_own_prices() -> None:
    catalog = load_catalog()
    listed = list_instances(catalog, provider="gcp", region=None, gpu="h100-sxm", pricing="committed_1y",
                            min_gpu_memory_bytes=0, max_price_per_hour_usd=None, limit=5, offset=0)
    columns, rows = instance_rows(listed)
    names = [c[0] for c in columns]
    # "--pricing committed_1y" showed on-demand and spot columns of dashes: its own prices, with their dates
    assert "1y committed $/h" in names and "on-demand $/h" not in names and names[-1] == "prices as of"
    price = names.index("1y committed $/h")
    assert rows and all(r[price].startswith("$") for r in rows)
    every = list_instances(catalog, provider="aws", region="us-east-1", gpu="h100-sxm", pricing=None,
                           min_gpu_memory_bytes=0, max_price_per_hour_usd=None, limit=5, offset=0)
    columns, rows = instance_rows(every)
    assert [c[0] for c in columns][-3:] == ["on-demand $/h", "spot $/h", "prices as of"]
    dates = {p["as_of"] or "undated" for i in every["instances"] for p in i["prices"]}
    assert {r[-1] for r in rows} <= {", ".join(sorted(dates)), *dates}  # the SkyPilot AWS rows name no day
