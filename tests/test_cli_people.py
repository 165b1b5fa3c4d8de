"""The CLI for people: one-liners without a spec file, presets, readable tables, and one-line bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from rich.console import Console

from catalog.loader import load_catalog
from service.cli import main
from service.commands.recommend import options_table, print_purchase
from tests.service_helpers import example_spec
from workers.ranking.recommend import recommend
from workers.schemas.specs import load_job

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_recommend_takes_a_preset_and_flags_without_a_spec_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "recommend", "bert-base", "--batch", "32", "--seq", "128", "--samples",
                             "392702", "--epochs", "3", "--budget", "50", "--deadline", "12h", "--provider", "aws",
                             "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["options"] and {o["provider"] for o in result["options"]} == {"aws"}
    assert all(o["training_cost_usd"] <= 50 and o["training_hours"] <= 12 for o in result["options"])


def test_flags_are_merged_over_a_spec_file(capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(EXAMPLES / "bert-finetune.json")
    code, out, err = run_cli(capsys, "recommend", spec, "--provider", "gcp", "--limit", "3", "--json")
    assert code == 0, err
    options = json.loads(out)["options"]
    assert len(options) == 3 and {o["provider"] for o in options} == {"gcp"}
    code, out, _ = run_cli(capsys, "recommend", spec, "--json")
    assert {o["provider"] for o in json.loads(out)["options"]} != {"gcp"}  # the file's own scope


def test_estimate_with_gpu_all_fits_the_job_on_every_catalog_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "estimate", "resnet50", "--batch", "64", "--gpu", "all", "--json")
    assert code == 0, err
    rows = json.loads(out)["per_gpu"]
    assert {r["gpu"] for r in rows} == {g.slug for g in load_catalog().gpus}


def test_estimate_takes_gpus_separated_by_commas_as_a_user_types_them(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "estimate", "resnet50", "--batch", "64", "--gpu", "gtx-1080-ti, rtx-3060",
                             "--gpu", "t4", "--json")
    assert code == 0, err
    assert [r["gpu"] for r in json.loads(out)["per_gpu"]] == ["gtx-1080-ti", "rtx-3060", "t4"]
    code, _, err = run_cli(capsys, "estimate", "resnet50", "--batch", "64", "--gpu", "gtx-1080-ti,rtx-9090")
    assert code == 2 and "--gpu[1]: unknown GPU 'rtx-9090'" in err


def test_presets_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "presets", "--json")
    names = {p["name"] for p in json.loads(out)}
    assert code == 0 and {"resnet50", "bert-base", "gpt2", "dcgan", "vae-mnist", "dqn-atari"} <= names


def test_model_takes_a_preset_and_suggests_the_nearest_when_misspelled(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "model", "bert-base")
    assert code == 0 and "bert-base" in out
    code, out, err = run_cli(capsys, "model", "resnt50")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "did you mean resnet50" in err


def _rec_for(name: str) -> Any:
    _, job = load_job(json.loads((EXAMPLES / f"{name}.json").read_text()))
    return recommend(job, load_catalog())


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", ["bert-finetune", "team-owns-4x3090", "spot-pretrain-2d"])
def test_option_tables_fit_the_width_and_never_cut_an_identifier(name: str, width: int) -> None:
    rec = _rec_for(name)
    console = Console(width=width, record=True, color_system=None)
    console.print(options_table(rec, width=width, wide=False))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    for o in rec.options:
        for identifier in (o.instance_type, o.region, o.gpu):
            assert identifier in text, identifier
    assert "…" not in text


@pytest.mark.parametrize("width", [80, 120])
def test_the_purchase_table_fits_the_width_and_never_cuts_a_machine_name(width: int) -> None:
    rec = _rec_for("buy-or-rent")
    console = Console(width=width, record=True, color_system=None)
    print_purchase(rec.purchase, console=console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    assert all(p.instance_type in text for p in rec.purchase) and "…" not in text
    header = next(line for line in text.splitlines() if "machine" in line)
    shown = [h for h in ("purchase", "job", "power", "break-even h", "pays off") if h in header]
    assert {"purchase", "break-even h", "pays off"} <= set(shown)  # whole headers: no column cropped
    if len(shown) < 5:
        assert "not shown at this width" in text


def test_purchases_with_no_rental_in_scope_show_no_break_even_rather_than_never() -> None:
    spec = json.loads((EXAMPLES / "buy-or-rent.json").read_text())
    spec["constraints"]["providers"] = ["onprem"]  # what to buy, no cloud to rent from
    _, job = load_job(spec)
    rec = recommend(job, load_catalog())
    assert rec.purchase and all(p.rental_cost_usd is None for p in rec.purchase)
    console = Console(width=160, record=True, color_system=None)
    print_purchase(rec.purchase, console=console)
    text = " ".join(console.export_text().split())
    assert "never" not in text.replace("never ranked", "") and "no rental in scope meets the constraints" in text
    rented = _rec_for("buy-or-rent")  # beside the clouds a break-even is given
    console = Console(width=160, record=True, color_system=None)
    print_purchase(rented.purchase, console=console)
    assert "the best rental for this job" in console.export_text()


def test_wide_shows_every_options_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    rec = _rec_for("bert-finetune")
    console = Console(width=240, record=True, color_system=None)
    console.print(options_table(rec, width=240, wide=True))
    text = " ".join(console.export_text().split())
    assert "headroom" in text and "kg CO2e" in text


@pytest.mark.parametrize(("change", "field"), [
    ({"constraints": {"owned_gpus": [{"gpu": "rtx-3099", "count": 4}]}}, "constraints.owned_gpus[0].gpu"),
    ({"dataset": {"samples": 392702, "loader_workers": 0}}, "dataset.loader_workers"),
    ({"training": {"batch_size": 32, "sequence_length": 128, "checkpoint_every_hours": 500}},
     "training.checkpoint_every_hours"),
    ({"constraints": {"onprem": {"electricity_usd_per_kwh": -0.1}}}, "constraints.onprem.electricity_usd_per_kwh"),
])
def test_bad_input_is_a_one_line_exit_2_naming_the_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], field: str) -> None:
    spec = json.loads((EXAMPLES / "bert-finetune.json").read_text())
    for section, values in change.items():
        spec[section] = {**spec.get(section, {}), **values}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    code, out, err = run_cli(capsys, "recommend", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and field in err, err


@pytest.mark.parametrize(("change", "field"), [
    ({"constraints": {"owned_gpus": [{"gpu": "rtx-3099", "count": 4}]}}, "constraints.owned_gpus[0].gpu"),
    ({"dataset": {"samples": 392702, "loader_workers": 0}}, "dataset.loader_workers"),
    ({"training": {"batch_size": 32, "sequence_length": 128, "checkpoint_every_hours": 500}},
     "training.checkpoint_every_hours"),
    ({"constraints": {"onprem": {"electricity_usd_per_kwh": -0.1}}}, "constraints.onprem.electricity_usd_per_kwh"),
])
def test_bad_input_is_a_422_naming_the_field(embedded_client: FlaskClient, change: dict[str, Any],
                                            field: str) -> None:
    spec = example_spec("bert-finetune")
    for section, values in change.items():
        spec[section] = {**spec.get(section, {}), **values}
    answer = embedded_client.post("/v1/recommendations", json=spec)
    body = answer.get_json()
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert field in body["errors"], body


@pytest.mark.parametrize("width", [80, 120])
def test_options_on_several_machines_show_n_x_instance_and_the_price_of_all_n(width: int) -> None:
    spec = {"model": {"preset": "gpt2"}, "training": {"batch_size": 8, "sequence_length": 1024,
                                                      "precision": "bf16-mixed", "optimizer": "adamw"},
            "dataset": {"samples": 400_000}, "objective": "time", "limit": 12,
            "constraints": {"providers": ["aws"], "pricing": ["on_demand"], "max_gpus": 32}}
    _, job = load_job(spec)
    rec = recommend(job, load_catalog())
    several = [o for o in rec.options if o.nodes > 1]
    assert several, "the fastest options of a 32-GPU budget span machines"
    console = Console(width=width, record=True, color_system=None)
    console.print(options_table(rec, width=width, wide=False))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width and "…" not in text
    for o in several:
        assert f"{o.nodes} x {o.instance_type}" in text
        assert f"{o.price_per_hour_usd * o.nodes:,.2f}" in text
        assert f"{o.gpu_count * o.nodes}x {o.gpu}" in text
    one = next((o for o in rec.options if o.nodes == 1), None)
    if one is not None:
        assert f"1 x {one.instance_type}" not in text


def test_a_job_whose_options_fit_points_to_the_reference_cards_plan_in_one_line(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # GPT-2 pre-training fits 8 x B200, but not the reference card the plan is worked out on: the plan
    # must not read as if the recommended job ran out of memory.
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run_cli(capsys, "recommend", str(EXAMPLES / "gpt2-pretrain.json"))
    assert code == 0, err
    # the options fit: the reference card's table is one line pointing to it, not a plan for a T4
    assert "Out of memory on t4" not in out
    pointer = next(line for line in out.splitlines() if "reference card" in line)
    assert "on t4, the reference card, the job as given runs out of memory" in pointer
    assert "gpugauge estimate SPEC --gpu t4" in pointer
    code, out, err = run_cli(capsys, "estimate", str(EXAMPLES / "gpt2-pretrain.json"), "--gpu", "t4",
                             "--gpu", "v100-16gb")
    assert code == 0, err
    title = next(line for line in out.splitlines() if "what to change" in line)
    assert "Out of memory on t4, v100-16gb: what to change" in title and "fit as they are" not in title


def test_an_image_preset_takes_an_input_shape_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "estimate", "resnet18", "--input-shape", "3x32x32", "--batch", "128", "--json")
    assert code == 0, err
    cifar = json.loads(out)
    code, out, err = run_cli(capsys, "estimate", "resnet18", "--batch", "128", "--json")
    imagenet = json.loads(out)
    assert cifar["gpu_memory_breakdown"]["activations"] * 40 < imagenet["gpu_memory_breakdown"]["activations"]
    code, out, err = run_cli(capsys, "estimate", "resnet18", "--input-shape", "3xbig", "--batch", "8")
    assert code == 2 and "model.input_shape[1]" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli(capsys, "estimate", "gpt2", "--input-shape", "3,32,32", "--batch", "8")
    assert code == 2 and err.startswith("gpugauge: model.input_shape: gpt2 reads token ids")


def test_a_recommendation_with_its_own_plan_does_not_also_plan_on_the_reference_card(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A full fine-tune of a 7B model fits no card as given: the recommendation's plan, worked out on the
    # card closest to fitting with the options each step opens, is the advice; a T4 table beside it read
    # as if the user had asked about T4s.
    monkeypatch.setenv("COLUMNS", "200")
    spec = tmp_path / "ft.json"
    spec.write_text(json.dumps({"model": {"preset": "llama-7b"},
                                "training": {"batch_size": 4, "sequence_length": 512, "precision": "bf16-mixed",
                                             "optimizer": "adamw", "from_pretrained": True},
                                "dataset": {"samples": 52_000}}))
    code, out, err = run_cli(capsys, "recommend", str(spec))
    assert code == 0, err
    assert "plan: [sharding]" in out
    assert "what to change" not in out
    code, out, err = run_cli(capsys, "estimate", str(spec))
    assert code == 0, err
    assert "Out of memory on t4: what to change" in out  # an estimate has no options: its table stays


def test_adapter_flags_size_the_same_job_as_a_spec_file_with_that_adapter(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    adapter = {"kind": "lora", "rank": 4, "targets": ["q", "k", "v", "o"]}
    spec = tmp_path / "lora.json"
    spec.write_text(json.dumps({"model": {"preset": "bert-base"}, "training": {
        "batch_size": 8, "sequence_length": 128, "parallelism": {"adapter": adapter}}}))
    code, by_file, err = run_cli(capsys, "estimate", str(spec), "--json")
    assert code == 0, err
    code, by_flags, err = run_cli(capsys, "estimate", "bert-base", "--batch", "8", "--seq", "128", "--adapter", "lora",
                                  "--rank", "4", "--targets", "q,k,v,o", "--json")
    assert code == 0, err
    assert json.loads(by_flags) == json.loads(by_file)
    code, full, _ = run_cli(capsys, "estimate", "bert-base", "--batch", "8", "--seq", "128", "--json")
    # Adapters leave the optimizer state of the frozen base out.
    assert json.loads(by_flags)["gpu_memory_bytes"] < json.loads(full)["gpu_memory_bytes"]
    # A flag writes over the file's adapter and keeps the rest of it.
    code, ranked, err = run_cli(capsys, "estimate", str(spec), "--rank", "64", "--json")
    assert code == 0, err
    assert json.loads(ranked)["gpu_memory_bytes"] > json.loads(by_file)["gpu_memory_bytes"]


@pytest.mark.parametrize("argv, field", [
    (("--rank", "16"), "training.parallelism.adapter"),
    (("--adapter", "lora", "--targets", "q,x"), "training.parallelism.adapter.targets"),
    (("--adapter", "qlora", "--rank", "0"), "training.parallelism.adapter.rank"),
])
def test_a_bad_adapter_flag_is_a_one_line_exit_2_naming_the_field(
        capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], field: str) -> None:
    code, out, err = run_cli(capsys, "estimate", "bert-base", "--batch", "8", "--seq", "128", *argv)
    assert code == 2 and not out
    assert err.startswith(f"gpugauge: {field}") and err.count("\n") == 1, err


def test_the_answer_is_headed_by_the_precision_it_is_sized_in(capsys: pytest.CaptureFixture[str]) -> None:
    # fp32 is the spec's default: a job that does not say its precision is told it was sized so
    code, out, err = run_cli(capsys, "estimate", "bert-base", "--batch", "8", "--seq", "128")
    assert code == 0, err
    assert "bert-base, batch 8 per GPU, fp32" in out.splitlines()[0]
    code, out, err = run_cli(capsys, "estimate", "bert-base", "--batch", "8", "--seq", "128", "--precision",
                             "bf16-mixed")
    assert code == 0, err
    assert "bert-base, batch 8 per GPU, bf16-mixed" in out.splitlines()[0]


def test_the_scaling_notes_names_the_sharded_optimizer_step_and_a_changed_strategy_as_causes() -> None:
    from service.commands.recommend import superlinear_note
    same = ["ZeRO-1 over 8 GPUs, batch 4 per GPU", "ZeRO-1 over 16 GPUs on 2 machines, batch 4 per GPU"]
    note = superlinear_note(same)
    assert "optimizer step shrinks" in note and "slower strategy" not in note
    changed = ["plain data parallel over 8 GPUs, full checkpointing", "plain data parallel over 16 GPUs on 2 machines"]
    note = superlinear_note(changed)
    assert "slower strategy" in note and "optimizer step" not in note


def test_recommend_gpu_keeps_the_ranking_to_the_named_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "recommend", "bert-base", "--batch", "32", "--seq", "128", "--samples",
                             "392702", "--gpu", "a100", "--gpu", "L4,t4", "--json")
    assert code == 0, err
    gpus = {o["gpu"] for o in json.loads(out)["options"]}
    assert gpus and gpus <= {"a100-40gb", "a100-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "l4", "t4"}
    code, _, err = run_cli(capsys, "recommend", "bert-base", "--batch", "32", "--gpu", "a1000")
    assert code == 2 and "constraints.gpus[0]: unknown GPU 'a1000'" in err
