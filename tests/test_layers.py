"""Layer-list statistics: shapes, parameters, multiply-adds, kept activations and the errors users see."""

from __future__ import annotations

import pytest

from workers.sizing.errors import ShapeError, SpecError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.stats import LayerKind, ModelStats


def stats(layers: list[dict[str, object]], shape: list[int] | None = None, seq: int | None = None) -> ModelStats:
    return compute_model_stats(layers, input_shape=shape, sequence_length=seq)


def test_conv2d_counts_he_multiply_adds_without_bias() -> None:
    m = stats([{"type": "conv2d", "out_channels": 64, "kernel": 7, "stride": 2, "padding": 3}], [3, 224, 224])
    (row,) = m.layers
    assert row.output_shape == (64, 112, 112)
    assert row.parameters == 64 * 3 * 49 + 64
    assert row.multiply_adds == 112 * 112 * 64 * (49 * 3)
    assert row.kind is LayerKind.CONV


def test_same_padding_keeps_size_at_stride_one_and_divides_by_stride() -> None:
    one = stats([{"type": "conv2d", "out_channels": 8, "kernel": 5, "padding": "same"}], [3, 31, 31])
    two = stats([{"type": "conv2d", "out_channels": 8, "kernel": 5, "stride": 2, "padding": "same"}], [3, 31, 31])
    assert one.layers[0].output_shape == (8, 31, 31)
    assert two.layers[0].output_shape == (8, 16, 16)


def test_dilation_widens_the_kernel_reach() -> None:
    m = stats([{"type": "conv2d", "out_channels": 4, "kernel": 3, "dilation": 2}], [1, 10, 10])
    assert m.layers[0].output_shape == (4, 6, 6)


def test_depthwise_conv_divides_multiply_adds_by_groups() -> None:
    full = stats([{"type": "conv2d", "out_channels": 32, "kernel": 3, "padding": 1}], [32, 8, 8])
    depthwise = stats([{"type": "conv2d", "out_channels": 32, "kernel": 3, "padding": 1, "groups": 32}], [32, 8, 8])
    assert depthwise.multiply_adds * 32 == full.multiply_adds
    assert depthwise.parameters == 32 * 9 + 32


def test_groups_that_do_not_divide_channels_are_rejected() -> None:
    with pytest.raises(ShapeError, match="groups 3"):
        stats([{"type": "conv2d", "out_channels": 8, "kernel": 3, "groups": 3}], [4, 8, 8])


def test_conv1d_reads_channels_and_length() -> None:
    m = stats([{"type": "conv1d", "out_channels": 16, "kernel": 3, "stride": 2}], [8, 101])
    assert m.layers[0].output_shape == (16, 50)
    assert m.multiply_adds == 16 * 50 * 8 * 3


def test_transposed_conv_doubles_the_image_and_scatters_each_input() -> None:
    m = stats(
        [{"type": "deconv2d", "out_channels": 256, "kernel": 4, "stride": 2, "padding": 1, "bias": False}],
        [512, 4, 4],
    )
    (row,) = m.layers
    assert row.output_shape == (256, 8, 8)
    assert row.type == "conv_transpose2d"
    assert row.multiply_adds == 512 * 4 * 4 * 256 * 16
    assert row.parameters == 512 * 256 * 16


def test_dense_applies_to_the_last_axis_of_a_sequence() -> None:
    m = stats([{"type": "linear", "out_features": 32}], [10, 16])
    assert m.layers[0].output_shape == (10, 32)
    assert m.multiply_adds == 10 * 16 * 32
    assert m.layers[0].type == "dense"


def test_dense_on_a_feature_map_asks_for_a_flatten_layer() -> None:
    with pytest.raises(ShapeError) as caught:
        stats(
            [
                {"type": "conv2d", "out_channels": 64, "kernel": 3, "padding": 1, "name": "c"},
                {"type": "dense", "out_features": 10, "name": "head"},
            ],
            [3, 7, 7],
        )
    error = caught.value
    assert error.field == "model.layers[1]"
    assert "layer 1 (head, dense)" in error.reason
    assert "[64, 7, 7]" in error.reason and "flatten" in error.reason


def test_flatten_then_dense_counts_every_input_value() -> None:
    m = stats([{"type": "flatten"}, {"type": "affine", "out_features": 10}], [64, 7, 7])
    assert m.parameters == 64 * 49 * 10 + 10


def test_residual_add_from_an_earlier_layer() -> None:
    m = stats(
        [
            {"type": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1, "name": "a"},
            {"type": "relu", "name": "r"},
            {"type": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1},
            {"type": "add", "from": "r"},
        ],
        [8, 16, 16],
    )
    assert m.layers[-1].output_shape == (8, 16, 16)
    assert m.layers[-1].saved_values == 0


def test_add_of_different_shapes_names_both_shapes() -> None:
    with pytest.raises(ShapeError, match=r"\[8, 16, 16\] and \[4, 16, 16\]"):
        stats(
            [
                {"type": "conv2d", "out_channels": 4, "kernel": 1, "name": "narrow"},
                {"type": "add", "inputs": ["input", "narrow"]},
            ],
            [8, 16, 16],
        )


def test_branch_from_an_earlier_layer_builds_a_projection_shortcut() -> None:
    m = stats(
        [
            {"type": "relu", "name": "x"},
            {"type": "conv2d", "out_channels": 16, "kernel": 3, "stride": 2, "padding": 1, "name": "main"},
            {
                "type": "conv2d",
                "out_channels": 16,
                "kernel": 1,
                "stride": 2,
                "inputs": ["x"],
                "name": "short",
            },
            {"type": "add", "inputs": ["main", "short"]},
        ],
        [8, 32, 32],
    )
    assert m.layers[-1].output_shape == (16, 16, 16)


def test_unet_skip_concat_sums_channels_and_upsample_doubles() -> None:
    m = stats(
        [
            {"type": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1, "name": "enc"},
            {"type": "maxpool2d", "kernel": 2},
            {"type": "conv2d", "out_channels": 32, "kernel": 3, "padding": 1},
            {"type": "upsample", "scale": 2, "mode": "bilinear"},
            {"type": "concat", "from": "enc"},
        ],
        [3, 64, 64],
    )
    assert m.layers[3].output_shape == (32, 64, 64)
    assert m.layers[-1].output_shape == (48, 64, 64)


def test_concat_of_different_sizes_is_a_shape_error() -> None:
    with pytest.raises(ShapeError, match="concat along axis 0"):
        stats(
            [
                {"type": "maxpool2d", "kernel": 2, "name": "half"},
                {"type": "concat", "inputs": ["input", "half"]},
            ],
            [3, 8, 8],
        )


def test_a_tensor_kept_by_two_layers_counts_once() -> None:
    m = stats([{"type": "relu"}, {"type": "conv2d", "out_channels": 4, "kernel": 1}], [4, 8, 8])
    relu, conv = m.layers
    assert relu.saved_values == 4 * 8 * 8  # ReLU keeps its output ...
    assert conv.saved_values == 0  # ... which is the conv's input: not kept twice


def test_batchnorm_keeps_its_input_and_has_two_parameters_per_channel() -> None:
    m = stats([{"type": "conv2d", "out_channels": 4, "kernel": 1}, {"type": "batchnorm"}], [4, 8, 8])
    assert m.layers[1].parameters == 8
    assert m.layers[1].saved_values == 4 * 8 * 8


def test_maxpool_keeps_int64_indices_and_dropout_a_byte_mask() -> None:
    m = stats(
        [{"type": "maxpool2d", "kernel": 2}, {"type": "dropout", "p": 0.5}, {"type": "dropout", "p": 0.0}],
        [4, 8, 8],
    )
    pool, drop, identity = m.layers
    assert pool.saved_mask_bytes == 8 * 4 * 4 * 4
    assert drop.saved_mask_bytes == 4 * 4 * 4 and drop.saved_values == 0
    assert identity.saved_mask_bytes == 0


def test_maxpool_ceil_mode_keeps_the_partial_window() -> None:
    floor = stats([{"type": "maxpool2d", "kernel": 3, "stride": 2}], [1, 56, 56])
    ceil = stats([{"type": "maxpool2d", "kernel": 3, "stride": 2, "ceil_mode": True}], [1, 56, 56])
    assert floor.layers[0].output_shape == (1, 27, 27)
    assert ceil.layers[0].output_shape == (1, 28, 28)


def test_reshape_infers_the_minus_one_axis() -> None:
    m = stats([{"type": "reshape", "shape": [16, -1]}], [4, 8, 8])
    assert m.layers[0].output_shape == (16, 16)
    with pytest.raises(ShapeError, match="cannot reshape"):
        stats([{"type": "reshape", "shape": [3, -1]}], [4, 8, 8])


@pytest.mark.parametrize(("seq", "hidden", "heads"), [(512, 768, 12), (2048, 1024, 16), (128, 64, 4)])
def test_transformer_block_keeps_korthikanti_activation_bytes(seq: int, hidden: int, heads: int) -> None:
    # Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models": per
    # layer and sample, s*h*(34 + 5*a*s/h) bytes with 16-bit activations and 1-byte dropout masks.
    m = stats([{"type": "transformer_block", "heads": heads}], [hidden], seq)
    kept_bytes = 2 * sum(r.saved_values for r in m.layers) + sum(r.saved_mask_bytes for r in m.layers)
    assert kept_bytes == seq * hidden * 34 + 5 * heads * seq * seq
    assert m.layers[0].name.endswith(".ln1")


def test_transformer_block_counts_projections_as_dense_and_the_core_as_attention() -> None:
    s, h = 256, 512
    m = stats([{"type": "transformer_block", "heads": 8}], [h], s)
    by_kind: dict[LayerKind, int] = {}
    for row in m.layers:
        by_kind[row.kind] = by_kind.get(row.kind, 0) + row.multiply_adds
    assert by_kind[LayerKind.ATTENTION] == 2 * s * s * h  # Q K^T and probabilities x V
    assert by_kind[LayerKind.DENSE] == s * (4 * h * h + 2 * h * 4 * h)
    assert m.parameters == 12 * h * h + 13 * h  # weights, biases and two layernorms


def test_doubling_the_sequence_quadruples_the_attention_core() -> None:
    short = stats([{"type": "multihead_attention", "heads": 4}], [64], 128)
    long = stats([{"type": "multihead_attention", "heads": 4}], [64], 256)
    core = next(r for r in short.layers if r.kind is LayerKind.ATTENTION)
    core_long = next(r for r in long.layers if r.kind is LayerKind.ATTENTION)
    assert core_long.multiply_adds == 4 * core.multiply_adds


def test_transformer_without_dropout_keeps_no_masks() -> None:
    m = stats([{"type": "transformer_block", "heads": 4, "dropout": 0}], [64], 32)
    assert sum(r.saved_mask_bytes for r in m.layers) == 0


def test_swiglu_block_has_three_ffn_matrices() -> None:
    h, f = 64, 172
    m = stats(
        [
            {
                "type": "transformer_block",
                "heads": 4,
                "ffn": f,
                "activation": "swiglu",
                "norm_type": "rmsnorm",
                "bias": False,
                "dropout": 0,
            }
        ],
        [h],
        16,
    )
    assert m.parameters == 4 * h * h + 3 * h * f + 2 * h


def test_post_norm_block_has_the_same_counts_as_pre_norm() -> None:
    pre = stats([{"type": "transformer_block", "heads": 4}], [64], 32)
    post = stats([{"type": "transformer_block", "heads": 4, "norm": "post"}], [64], 32)
    assert (pre.parameters, pre.multiply_adds) == (post.parameters, post.multiply_adds)
    assert post.layers[-1].type == "layernorm"


def test_lstm_parameters_match_pytorch_with_two_biases() -> None:
    # torch.nn.LSTM(10, 20) has 2,560 parameters; bidirectional with 2 layers 15,040; nn.GRU(10, 20) 1,920.
    assert stats([{"type": "lstm", "hidden": 20}], [10], 5).parameters == 2560
    deep = stats([{"type": "lstm", "hidden": 20, "num_layers": 2, "bidirectional": True}], [10], 5)
    assert deep.parameters == 15040
    assert stats([{"type": "gru", "hidden": 20}], [10], 5).parameters == 1920


def test_lstm_sequence_output_and_last_state() -> None:
    seqs = stats([{"type": "lstm", "hidden": 20, "bidirectional": True}], [10], 7)
    last = stats([{"type": "lstm", "hidden": 20, "return_sequences": False}], [10], 7)
    assert seqs.layers[0].output_shape == (7, 40)
    assert last.layers[0].output_shape == (20,)
    assert seqs.layers[0].multiply_adds == 7 * 2 * 4 * 20 * (10 + 20)
    assert seqs.sequence_length == 7


def test_embedding_reads_token_ids_of_the_sequence_length() -> None:
    m = stats([{"type": "embedding", "vocab": 1000, "dim": 32}, {"type": "lstm", "hidden": 8}], None, 50)
    assert m.layers[0].output_shape == (50, 32)
    assert m.layers[0].saved_mask_bytes == 8 * 50  # int64 token ids
    assert m.sequence_length == 50


def test_sequence_model_without_a_sequence_length_names_the_training_field() -> None:
    with pytest.raises(SpecError) as caught:
        stats([{"type": "embedding", "vocab": 1000, "dim": 32}])
    assert caught.value.field == "training.sequence_length"


def test_image_model_without_an_input_shape_names_the_model_field() -> None:
    with pytest.raises(SpecError) as caught:
        stats([{"type": "conv2d", "out_channels": 8, "kernel": 3}])
    assert caught.value.field == "model.input_shape"


def test_position_embedding_refuses_a_sequence_beyond_its_table() -> None:
    with pytest.raises(ShapeError) as caught:
        stats(
            [
                {"type": "embedding", "vocab": 10, "dim": 8},
                {"type": "position_embedding", "max_positions": 16},
            ],
            None,
            17,
        )
    assert caught.value.field == "training.sequence_length"
