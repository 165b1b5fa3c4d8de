"""The caching allocator's simulation (PyTorch's rules) over the step walk's allocations."""

from __future__ import annotations

from catalog.units import MIB
from workers.sizing.allocator import CachingAllocator, replay, round_request, segment_bytes
from workers.sizing.memory import step_peak
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Optimizer, Precision, Training
from workers.sizing.step_trace import Trace
from workers.sizing.step_walk import peak_moment, walk_step


def test_requests_round_to_512_bytes_and_segments_follow_the_pool_rules() -> None:
    assert round_request(1) == 512 and round_request(513) == 1024
    assert segment_bytes(100) == 2 * MIB  # small pool
    assert segment_bytes(3 * MIB) == 20 * MIB  # 1-10 MiB share a 20 MiB segment
    assert segment_bytes(30 * MIB + 1) == 32 * MIB  # larger: rounded up to 2 MiB


def test_a_split_segment_serves_later_requests_and_freed_neighbours_merge() -> None:
    cache = CachingAllocator()
    cache.malloc("a", 3 * MIB)
    cache.malloc("b", 4 * MIB)  # the rest of a's 20 MiB segment holds it
    assert cache.reserved == 20 * MIB
    cache.release("a")
    cache.release("b")
    cache.malloc("c", 19 * MIB)  # the two freed blocks and the tail merged back into 20 MiB
    assert cache.reserved == 20 * MIB
    cache.malloc("d", 19 * MIB)
    assert cache.reserved == 40 * MIB and cache.peak_requested == 38 * MIB


def test_the_trace_holds_exactly_what_the_walk_counts_at_its_peak() -> None:
    model = preset_stats("resnet18", input_shape=(3, 64, 64))
    training = Training(batch_size=8, optimizer=Optimizer.ADAM)
    trace = Trace()
    peak = peak_moment(walk_step(model, training, precision=Precision.FP32, trace=trace))
    cache = replay(trace.events, persistent=trace.persistent, state=trace.state)
    assert cache.peak_requested == peak.total_bytes
    assert cache.peak_reserved >= cache.peak_requested


def test_a_repeating_step_reuses_its_cache_so_more_steps_reserve_no_more() -> None:
    model = preset_stats("bert-base", sequence_length=128)
    trace = Trace()
    walk_step(model, Training(batch_size=4, sequence_length=128, optimizer=Optimizer.ADAMW),
              precision=Precision.FP32, trace=trace)
    two = replay(trace.events, persistent=trace.persistent, state=trace.state, steps=2).peak_reserved
    assert replay(trace.events, persistent=trace.persistent, state=trace.state, steps=5).peak_reserved == two


def test_the_simulated_slack_is_in_framework_reserve_and_not_in_the_tensors() -> None:
    model = preset_stats("resnet50")
    training = Training(batch_size=32, optimizer=Optimizer.MOMENTUM)
    peak = step_peak(model, training).breakdown
    trace = Trace()
    walk_step(model, training, precision=Precision.FP32, trace=trace)
    cache = replay(trace.events, persistent=trace.persistent, state=trace.state)
    tensors = peak.total_bytes - peak.framework_reserve_bytes
    assert tensors == cache.peak_requested
    assert peak.framework_reserve_bytes >= cache.peak_reserved - cache.peak_requested > 0


def test_the_optimizer_state_is_made_by_the_first_step_into_what_that_step_left_cached() -> None:
    model = preset_stats("resnet18", input_shape=(3, 64, 64))
    trace = Trace()
    walk_step(model, Training(batch_size=8, optimizer=Optimizer.ADAM), precision=Precision.FP32, trace=trace)
    assert sum(trace.state) == 2 * 4 * model.parameters  # exp_avg and exp_avg_sq, fp32
    late = replay(trace.events, persistent=trace.persistent, state=trace.state)
    early = replay(trace.events, persistent=[*trace.persistent, *trace.state])
    assert late.peak_requested == early.peak_requested  # the same tensors at the peak, either way
    assert late.peak_reserved >= late.peak_requested
