"""POST /v1/estimate, `gpugauge estimate` and the recommendation's requirements size the strategy the spec names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.cli import main
from tests.service_helpers import contract_check

GIB = 2**30


def llama7b(parallelism: dict[str, Any] | None = None, **training: Any) -> dict[str, Any]:
    """A full fine-tune of Llama-7B in bf16 with AdamW at sequence 2,048, with the strategy given."""
    spec: dict[str, Any] = {
        "model": {"preset": "llama-7b"},
        "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed", "optimizer": "adamw",
                     **training},
        "dataset": {"samples": 10000},
    }
    if parallelism is not None:
        spec["training"]["parallelism"] = parallelism
    return spec


def _estimate(client: FlaskClient, spec: dict[str, Any], *, gpus: list[str] | None = None,
              gpu_count: int = 1) -> dict[str, Any]:
    answer = client.post("/v1/estimate", json={**spec, "gpus": gpus or [], "gpu_count": gpu_count})
    assert answer.status_code == 200, answer.get_json()
    body: dict[str, Any] = answer.get_json()
    assert contract_check().contract_requirements(body) == []
    return body


def test_zero3_over_eight_gpus_keeps_an_eighth_of_the_model_states(embedded_client: FlaskClient) -> None:
    plain = _estimate(embedded_client, llama7b(), gpus=["a100-80gb"], gpu_count=8)
    zero3 = _estimate(embedded_client, llama7b({"data_parallel": "zero3"}), gpus=["a100-80gb"], gpu_count=8)
    states = ("parameters", "gradients", "optimizer_state")
    plain_states = sum(plain["gpu_memory_breakdown"][t] for t in states)
    zero3_states = sum(zero3["gpu_memory_breakdown"][t] for t in states)
    # 6.7e9 parameters x 16 bytes in plain DDP (plus its bucket); ZeRO-3 keeps 1/8 plus two gathered blocks.
    assert plain_states > 100 * GIB
    assert zero3_states < plain_states / 6
    assert not plain["per_gpu"][0]["fits"] and zero3["per_gpu"][0]["fits"]
    assert zero3["gpu_memory_bytes"] == sum(zero3["gpu_memory_breakdown"].values())
    assert zero3["per_gpu"][0]["gpu_memory_bytes"] < 80 * 10**9


def test_lora_trains_only_the_adapters_and_qlora_keeps_the_base_in_4_bits(embedded_client: FlaskClient) -> None:
    full = _estimate(embedded_client, llama7b(), gpus=["l40s"])
    lora = _estimate(embedded_client, llama7b({"adapter": {"kind": "lora"}}), gpus=["l40s"])
    qlora = _estimate(embedded_client, llama7b({"adapter": {"kind": "qlora"}}), gpus=["l40s"])
    assert lora["gpu_memory_breakdown"]["optimizer_state"] < GIB < full["gpu_memory_breakdown"]["optimizer_state"]
    # frozen bf16 base: about 2 bytes per parameter; NF4: about half a byte for the block weights
    assert 12 * GIB < lora["gpu_memory_breakdown"]["parameters"] < 16 * GIB
    assert qlora["gpu_memory_breakdown"]["parameters"] < lora["gpu_memory_breakdown"]["parameters"] / 2.5
    assert lora["per_gpu"][0]["fits"] and qlora["per_gpu"][0]["fits"] and not full["per_gpu"][0]["fits"]


def test_checkpointing_named_alone_lowers_the_activations(embedded_client: FlaskClient) -> None:
    spec = llama7b(batch_size=8)
    none = _estimate(embedded_client, spec)
    full = _estimate(embedded_client, llama7b({"checkpointing": "full"}, batch_size=8))
    assert full["gpu_memory_breakdown"]["activations"] < none["gpu_memory_breakdown"]["activations"] / 3


def test_offload_puts_the_optimizer_state_in_host_memory(embedded_client: FlaskClient) -> None:
    spec = llama7b({"data_parallel": "zero3", "offload": {"optimizer": True}})
    kept = _estimate(embedded_client, llama7b({"data_parallel": "zero3"}), gpu_count=4)
    offloaded = _estimate(embedded_client, spec, gpu_count=4)
    assert offloaded["gpu_memory_breakdown"]["optimizer_state"] == 0 < kept["gpu_memory_breakdown"]["optimizer_state"]
    # 16 bytes per parameter over 4 GPUs of one machine land on its host
    assert offloaded["host_memory_bytes"] - kept["host_memory_bytes"] > 6.7e9 * 16 * 0.9


def test_tensor_parallel_that_does_not_divide_the_gpus_is_422_naming_gpu_count(embedded_client: FlaskClient) -> None:
    answer = embedded_client.post("/v1/estimate", json={**llama7b({"tensor_parallel": 4}), "gpu_count": 2})
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert "gpu_count" in answer.get_json()["errors"]


def test_without_gpu_count_a_named_split_runs_on_its_fewest_gpus(embedded_client: FlaskClient, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # it was a 422 naming gpu_count, whose default (1) no tensor-parallel split runs on
    spec = {**llama7b({"tensor_parallel": 4}), "gpus": ["h100-sxm"]}
    answer = embedded_client.post("/v1/estimate", json=spec)
    assert answer.status_code == 200
    assert [row["gpu_count"] for row in answer.get_json()["per_gpu"]] == [4]
    assert answer.get_json() == embedded_client.post("/v1/estimate", json={**spec, "gpu_count": 4}).get_json()
    path = tmp_path / "tp4.json"
    path.write_text(json.dumps(llama7b({"tensor_parallel": 4})), encoding="utf-8")
    assert main(["estimate", str(path), "--gpu", "h100-sxm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["per_gpu"][0]["gpu_count"] == 4


def test_the_cli_estimate_prints_what_the_api_sizes(embedded_client: FlaskClient, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    spec = llama7b({"data_parallel": "fsdp", "checkpointing": "selective"})
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    code = main(["estimate", str(path), "--gpu", "h100-sxm", "--gpu-count", "8", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    api = _estimate(embedded_client, spec, gpus=["h100-sxm"], gpu_count=8)
    cli = json.loads(out)
    assert cli["gpu_memory_bytes"] == api["gpu_memory_bytes"] < 40 * GIB
    assert cli["per_gpu"][0]["fits"] is True
    code = main(["estimate", str(path), "--gpu", "h100-sxm", "--gpu-count", "8"])
    out, _ = capsys.readouterr()
    assert code == 0 and "yes" in out


def test_the_recommendation_requirements_size_the_named_strategy(queue_client: FlaskClient) -> None:
    from tests.service_helpers import wait_for_job

    spec = {**llama7b({"data_parallel": "zero3", "checkpointing": "full"}),
            "constraints": {"max_gpus": 8, "providers": ["aws"]}}
    location = queue_client.post("/v1/recommendations", json=spec).headers["Location"]
    result = wait_for_job(queue_client, location)["result"]
    requirements = result["requirements"]
    top = result["options"][0]
    assert top["parallelism"]["data_parallel"] == "zero3"
    # the requirements are the named strategy on the top option's GPUs, not plain data parallel (~110 GiB)
    assert requirements["gpu_memory_bytes"] == top["parallelism"]["gpu_memory_per_gpu_bytes"]
    assert requirements["gpu_memory_bytes"] < 60 * GIB
