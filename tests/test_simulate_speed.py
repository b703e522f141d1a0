"""The simulator's speed-ups (simspeed62) give what the slower code gave: each one checked here
against the rule as it was written before it (a scan of every segment for a block's content;
GUARANTEED_NO_EVICT's prompts all checked before the micro-batch scheduler; a step's time
computed each time it is asked), by hand and on drawn cases."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from kvplan.analysis.simulate.scheduler import SimRequest
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf import mixed_step
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.sources.resolve import load_model
from tests.test_simulate_trtllm import _engine


def _scan_hash(rid: int, segments: tuple[tuple[Hashable, int], ...], index: int,
               block_size: int) -> int:
    """SimRequest.block_hash as written before simspeed62: every block's content found by a
    scan of the segments from the first."""
    if index * block_size >= sum(n for _, n in segments):
        return -1 - ((rid << 24) | index)
    hashes: list[int] = []
    for j in range(index + 1):
        start, end = j * block_size, (j + 1) * block_size
        content: list[Hashable] = []
        offset = 0
        for key, length in segments:
            lo, hi = max(start, offset), min(end, offset + length)
            if lo < hi:
                content.append((key, lo - offset, hi - offset))
            offset += length
            if offset >= end:
                break
        if end > offset:
            content.append(("own", rid, max(start, offset)))
        hashes.append(hash((hashes[-1] if hashes else 0, tuple(content))))
    return hashes[index]


def _request(rid: int, segments: tuple[tuple[Hashable, int], ...], extra: int) -> SimRequest:
    prompt = sum(n for _, n in segments) + extra
    return SimRequest(rid, RequestSpec(arrival_s=0.0, prompt_len=prompt, output_len=2,
                                       segments=segments), 0.0, 1)


def test_block_hash_by_hand() -> None:
    # Segments a (3 tokens) then b (5), blocks of 4, request 7: block 0 holds a[0:3] and
    # b[0:1], block 1 b[1:5]; block 2 starts at token 8, past the 8 shared tokens: its key is
    # the request's own, -1 - (7 << 24 | 2).
    req = _request(7, (("a", 3), ("b", 5)), 4)
    first = hash((0, (("a", 0, 3), ("b", 0, 1))))
    assert req.block_hash(1, 4) == hash((first, (("b", 1, 5),)))
    assert req.block_hash(0, 4) == first
    assert req.block_hash(2, 4) == -1 - ((7 << 24) | 2)
    # A block the segments end inside: a (6 tokens), blocks of 4: block 1 holds a[4:6] and
    # the request's own tokens from 6.
    short = _request(3, (("a", 6),), 10)
    assert short.block_hash(1, 4) == hash((hash((0, (("a", 0, 4),))),
                                           (("a", 4, 6), ("own", 3, 6))))


@settings(max_examples=200, deadline=None)
@given(segments=st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0, 1, 3, 16, 17, 512])),
                         max_size=6),
       block_size=st.sampled_from([1, 2, 16, 32]), extra=st.integers(1, 40),
       asks=st.lists(st.integers(0, 80), min_size=1, max_size=6))
def test_block_hash_is_the_scan_from_the_first_segment(segments: list[tuple[int, int]],
                                                       block_size: int, extra: int,
                                                       asks: list[int]) -> None:
    # Asked in any order (the hashes are kept as they are computed, from any block on).
    segs = tuple(segments)
    req = _request(5, segs, extra)
    for index in asks:
        assert req.block_hash(index, block_size) == _scan_hash(5, segs, index, block_size)


def _spy(picks: Iterable[SimRequest], seen: list[int]) -> Iterator[SimRequest]:
    for req in picks:
        seen.append(req.rid)
        yield req


def test_no_evict_checks_the_prompts_only_as_far_as_the_micro_batch_asks() -> None:
    # One request in generation (prompt 64, its first token out) and five prompts of 100
    # tokens, a budget of 150 tokens, 1,000 free blocks of 32: each prompt's remaining blocks
    # to completion (cdiv(104, 32) = 4) fit, so GUARANTEED_NO_EVICT takes all six. The
    # micro-batch scheduler takes the generation request (1 token) and the first prompt (101),
    # then stops at the second (201 > 150): the prompts behind it are never looked at, and
    # the step is what taking all six first gave.
    sim = _engine(1000, tokens=150)
    gen = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=64, output_len=4), 0.0, 1)
    gen.num_output, gen.num_computed = 1, 64
    prompts = [SimRequest(i, RequestSpec(arrival_s=0.0, prompt_len=100, output_len=4), 0.0, 1)
               for i in range(1, 6)]
    active = [gen, *prompts]
    assert [r.rid for r in sim._no_evict(active)] == [0, 1, 2, 3, 4, 5]
    seen: list[int] = []
    picks = sim._micro_batch(_spy(sim._no_evict(active), seen))
    assert [(r.rid, n) for r, n in picks] == [(0, 1), (1, 100)]
    assert picks == sim._micro_batch(list(sim._no_evict(active)))
    assert seen == [0, 1, 2]


def test_a_small_step_is_memoised_as_the_number_computing_it_gives(monkeypatch) -> None:
    # MixedStepCost.seconds keeps steps of at most SMALL_STEP requests: each number is the one
    # `_seconds` computes (the same float, asked twice or after the memo was cleared), a step
    # of more requests is not kept, and the memo never holds more than STEP_MEMO steps.
    monkeypatch.setattr(mixed_step, "STEP_MEMO", 3)
    cost = MixedStepCost(load_model("llama-3.1-8b")[0], get_gpu("H100-80GB"))
    steps = [([9000], []), ([], [(0, 8192)]), ([100, 2000], [(512, 256)]), ([9001], []),
             ([9000], []), (list(range(1, 20)), [])]
    for decodes, chunks in steps * 2:
        fresh = MixedStepCost(load_model("llama-3.1-8b")[0], get_gpu("H100-80GB"))
        want = fresh._seconds(decodes, chunks)
        assert cost.seconds(decode_contexts=decodes, chunks=chunks) == want
        assert len(cost._steps) <= 3
    assert (tuple(range(1, 20)), ()) not in cost._steps  # 19 requests: past SMALL_STEP
    assert cost.seconds(decode_contexts=[9000], chunks=[]) > cost.seconds(
        decode_contexts=[100], chunks=[])  # the memo is keyed by the contexts, not the count
