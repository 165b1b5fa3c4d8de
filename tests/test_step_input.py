"""The input batch in the step walk: alive all step, counted once beside what the rows keep of it."""

from __future__ import annotations

from typing import Any

import pytest

from validation.step_compare import compare_step_record, load_step_records
from workers.modelimport.onnx_import import onnx_model_stats
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.memory import step_peak
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Optimizer, Precision, Training
from workers.sizing.step_walk import batch_input_bytes


def _record(record_id: str) -> dict[str, Any]:
    return next(r for r in load_step_records() if r["id"] == record_id)


def test_a_first_convolution_keeps_the_fp32_batch_itself_so_it_is_not_counted_again() -> None:
    resnet = preset_stats("resnet18", input_shape=(3, 64, 64))
    assert resnet.batch_input is not None and resnet.batch_input.kept_float_values == 3 * 64 * 64
    assert batch_input_bytes(resnet, Precision.FP32) == 0
    # under autocast the convolution keeps a 16-bit cast; the fp32 batch is another tensor
    assert batch_input_bytes(resnet, Precision.BF16_MIXED) == 3 * 64 * 64 * 4


def test_a_view_of_the_input_kept_by_the_next_layer_is_the_batch_itself() -> None:
    vae = preset_stats("vae-mnist")  # flatten (a view), then fc1 keeps it: the batch's storage
    assert vae.batch_input is not None and vae.batch_input.kept_float_values == 784
    assert batch_input_bytes(vae, Precision.FP32) == 0
    fc = next(r for r in compute_model_stats(
        [{"type": "conv2d", "out_channels": 4, "kernel": 3}, {"type": "relu", "name": "r"},
         {"type": "flatten"}, {"type": "dense", "out_features": 10}],
        input_shape=(1, 8, 8), sequence_length=None).layers if r.type == "dense")
    assert fc.saved_values == 0  # the relu already keeps the storage the flatten views


def test_token_ids_are_int64_and_a_dqn_holds_both_states() -> None:
    gpt2 = preset_stats("gpt2", sequence_length=128)
    assert gpt2.batch_input is not None and gpt2.batch_input.bytes == 128 * 8
    dqn = preset_stats("dqn-atari")  # online network reads s (kept by conv1), the target reads s'
    assert batch_input_bytes(dqn, Precision.FP32) == 4 * 84 * 84 * 4


def test_onnx_inputs_carry_their_dtype_and_what_rows_keep_of_them() -> None:
    record = _record("here-unet-64-b4-bf16-mixed-adam")
    from validation.step_compare import ROOT
    stats = onnx_model_stats((ROOT / record["onnx"]["train"]).read_bytes(), name="unet", batch_size=4)
    assert stats.batch_input is not None and stats.batch_input.bytes == 3 * 64 * 64 * 4
    assert batch_input_bytes(stats, Precision.FP32) < batch_input_bytes(stats, Precision.BF16_MIXED)


def test_the_batch_is_alive_in_every_phase_and_grows_with_the_batch() -> None:
    dqn = preset_stats("dqn-atari")
    small = step_peak(dqn, Training(batch_size=32, optimizer=Optimizer.MOMENTUM)).breakdown
    large = step_peak(dqn, Training(batch_size=128, optimizer=Optimizer.MOMENTUM)).breakdown
    per_sample = batch_input_bytes(dqn, Precision.FP32)
    assert large.activations_bytes - small.activations_bytes >= 96 * per_sample


@pytest.mark.parametrize("record_id", ["here-dqn-atari-b128-fp32-momentum", "here-convnext-64-b8-fp32-adamw",
                                       "here-conv-ae-64-b32-fp32-adam", "here-squeezenet11-64-b16-fp32-momentum"])
def test_the_walk_meets_the_storage_trackers_peak_where_cpu_kernels_add_their_own_buffers(record_id: str) -> None:
    # The profiler's timeline also sees buffers a CPU kernel allocates inside itself (the DQN's 8x8
    # stride-4 convolution's backward: 35 MB "unknown" at batch 128; ConvNeXt's depthwise 7x7
    # backward unfolds its input, 18 MiB; oneDNN's reorders in the autoencoder's last convolution,
    # 24 MiB); on a GPU those are cuDNN's workspace, in framework_reserve. The tracker sees tensors
    # only, which is what the walk counts. (The LSTM LM is not here: oneDNN's LSTM keeps a workspace
    # the tracker sees as tensors; its -native-cell record, ATen's cell, is predicted +0.0%.)
    row = compare_step_record(_record(record_id))
    assert abs(row.tracker_error) < 0.03, row.tracker_error
