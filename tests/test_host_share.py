"""A slice of a host (a one-GPU cloud machine) updates offloaded optimizer state at its share of a whole host's
CPU-Adam rate: eight AWS p5.4xlarge offloading a 70B model's optimizer were each given a whole host and ranked first."""

from __future__ import annotations

import pytest

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.schemas.specs import load_job
from workers.sizing.strategies.collectives import CPU_ADAM_PARAMETERS_PER_S, FULL_HOST_VCPUS, host_share, node_links
from workers.sizing.strategies.search import best_layout

LLAMA_70B_FULL = {"model": {"preset": "llama3-70b"},
                  "training": {"batch_size": 4, "sequence_length": 4096, "precision": "bf16-mixed", "epochs": 1},
                  "dataset": {"samples": 100_000},
                  "constraints": {"providers": ["aws"], "pricing": ["on_demand"], "max_gpus": 8}, "limit": 12}


@pytest.mark.parametrize(("vcpus", "share"), [(0, 1.0), (FULL_HOST_VCPUS, 1.0), (192, 1.0), (48, 0.5), (16, 0.125),
                                              (26, 0.25), (4, 1 / 32)])
def test_a_machine_has_its_vcpus_share_of_a_whole_host_to_a_power_of_two(vcpus: int, share: float) -> None:
    assert host_share(vcpus) == share
    links = node_links(nvlink_gb_per_s=0.0, pcie_gen=5, network_gbit_per_s=100.0, nvlink_efficiency=0.8,
                       host_share=host_share(vcpus))
    assert links.host_update_per_s == pytest.approx(CPU_ADAM_PARAMETERS_PER_S * share)


def test_a_slice_offloading_the_optimizer_steps_slower_than_a_whole_host(shipped: Catalog) -> None:
    _, job = load_job(LLAMA_70B_FULL)
    h100 = shipped.gpu("h100-sxm")
    whole, slice_ = (best_layout(job, h100, gpus_per_node=1, nodes=8, network_gbit_per_s=100.0,
                                 host_memory_bytes=256 * 2**30, host_need_bytes=0, host_share=share)
                     for share in (1.0, 0.125))
    assert whole is not None and slice_ is not None and whole.layout.offload.optimizer
    per_sample = [c.time.iteration_ms / (c.batch_size * c.update_interval) for c in (whole, slice_)]
    assert per_sample[1] > per_sample[0] * 1.2


def test_a_70b_full_fine_tune_is_not_ranked_first_on_eight_one_gpu_machines(shipped: Catalog) -> None:
    rec = recommend_spec(LLAMA_70B_FULL, shipped)
    top = rec.options[0]
    print(f"top: {top.nodes} x {top.instance_type}, {top.training_hours:.1f} h, ${top.training_cost_usd:,.0f}")
    assert top.nodes == 1 and top.gpu_count == 8
    slices = [o for o in rec.options if o.instance_type == "p5.4xlarge"]
    whole = [o for o in rec.options if o.instance_type == "p5.48xlarge"]
    assert slices and whole  # the same eight H100s and price: eight slices, each a share of a host, are slower
    assert slices[0].training_hours > whole[0].training_hours
