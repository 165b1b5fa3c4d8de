"""The loss rows after a language model's head run in fp32 under mixed precision; the held logits stay 16-bit.

Measured with validation/measure on torch 2.13.0 CPU autocast (bf16): a bf16 head's cross-entropy keeps
its log-softmax output in fp32 (4 bytes a logit), upcast with `.float()` (torchtitan) or not.
"""

from __future__ import annotations

import pytest

from workers.sizing.layers.loss import Loss, with_loss
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Optimizer, Precision, Training
from workers.sizing.step_walk import Phase, kept_per_row, walk_step


def _model():
    return with_loss(preset_stats("gpt2"), Loss.CROSS_ENTROPY)


@pytest.mark.parametrize("precision", [Precision.BF16_MIXED, Precision.FP16_MIXED, Precision.FP32])
def test_log_softmax_keeps_fp32_values_and_the_head_its_own_width(precision: Precision) -> None:
    model = _model()
    training = Training(batch_size=2, precision=precision, optimizer=Optimizer.ADAMW)
    kept = kept_per_row(model, training, precision=precision)
    names = [row.name for row in model.layers]
    head, log_softmax, loss = (names.index(n) for n in ("lm_head", "loss", "loss.cross_entropy"))
    logits = model.layers[log_softmax].saved_values  # log-softmax keeps its output: one value a logit
    assert kept[log_softmax] == logits * 4 * 2
    width = 4 if precision is Precision.FP32 else 2
    assert kept[head] == model.layers[head].saved_values * width * 2
    assert kept[loss] == model.layers[loss].saved_mask_bytes * 2  # the targets only: the logits are held


def test_the_loss_backward_makes_fp32_gradients_beside_the_16_bit_logits() -> None:
    model = _model()
    bf16 = Training(batch_size=1, precision=Precision.BF16_MIXED, optimizer=Optimizer.SGD)
    moments = walk_step(model, bf16, precision=Precision.BF16_MIXED)
    backward = [m for m in moments if m.phase is Phase.BACKWARD]
    logits = model.layers[-2].neurons
    end_of_forward = [m for m in moments if m.phase is Phase.FORWARD][-1]
    # at the cross-entropy row's backward: its fp32 gradient (4 B a logit) and log-softmax's (4 B)
    # beside the fp32 log-softmax output, the bf16 held logits and the rest
    first = backward[0]
    assert first.activations - (end_of_forward.activations - logits * 4) >= logits * (4 + 4)
