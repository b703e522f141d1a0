"""SGLang's admission of ignore_eos requests with the radix cache disabled
(kvplan.analysis.simulate.sglang_scheduler rule 4: PrefillAdder.add_one_req_ignore_eos,
schedule_policy.py 0.5.9:632-717, 0.5.10.post1:641-726), against rule 1's add_one_req. Page size
1 (a block is a token), 10 ms a step (tests.test_simulate._FixedCost)."""

from __future__ import annotations

import pytest

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig
from kvplan.analysis.simulate.sglang_scheduler import (
    SglangOptionsSim,
    SglangSchedule,
    SglangSimulator,
)
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step


def _engine(free: int, chunk: int | None, ignore_eos: bool) -> SglangSimulator:
    # KVPool keeps one null block: `free` tokens free.
    pool = KVPool(free + 1, (GroupRule(kind="full", block_size=1),), caching=False)
    return SglangSimulator(pool, SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=16384,
                                                 max_model_len=16384),
                           _FixedCost(), SglangSchedule(chunked_prefill_size=chunk,
                                                        max_running_requests=64,
                                                        ignore_eos_path=ignore_eos),
                           timeline=True)


@pytest.mark.parametrize(("ignore_eos", "firsts"), [(True, [0.01, 0.01]),
                                                     (False, [0.01, 0.02])])
def test_two_8k_prompts_share_a_16k_step_only_on_the_ignore_eos_path(
        ignore_eos: bool, firsts: list[float]) -> None:
    """Chunk and input budget 16,384 (SGLang's defaults on a card of 160 GiB or more), two
    8,192-token prompts at 0. add_one_req_ignore_eos admits A (budget 16,384 -> 8,192, still
    > 0: CONTINUE) and B (8,192 <= the chunk left: whole; budget 0: OTHER), one step 0-10 ms;
    add_one_req refuses B (8,192 >= the 8,192 left), which waits for the next step (10-20)."""
    state = _engine(40_000, 16384, ignore_eos).run(
        [RequestSpec(arrival_s=0.0, prompt_len=8192, output_len=2) for _ in range(2)])
    assert sorted(round(r.first_token_s, 9) for r in state.finished) == firsts


@pytest.mark.parametrize(("ignore_eos", "steps"), [(True, [16384, 4616]),
                                                   (False, [14000, 7000])])
def test_the_ignore_eos_path_fills_the_chunk_cutting_the_last_prompt(
        ignore_eos: bool, steps: list[int]) -> None:
    """Three 7,000-token prompts at 0, chunk and input budget 16,384. Ignore-EOS path: A
    (16,384 -> 9,384 left), B (-> 2,384), C cut to the 2,384 left (the chunked request; budget
    0): a first step of 16,384 tokens, then C's other 4,616 (prefill first). add_one_req: A,
    B, then C refused (7,000 >= 2,384 left): 14,000, then C's 7,000."""
    sim = _engine(100_000, 16384, ignore_eos)
    sim.run([RequestSpec(arrival_s=0.0, prompt_len=7000, output_len=2) for _ in range(3)])
    assert sim.state.timeline is not None
    assert [rec.tokens for rec in sim.state.timeline][:2] == steps


@pytest.mark.parametrize(("ignore_eos", "first_b"), [(True, 0.01), (False, 0.02)])
def test_the_ignore_eos_memory_check_lets_in_what_the_total_budget_refuses(
        ignore_eos: bool, first_b: float) -> None:
    """2,000 tokens free, no chunking; A (500 in, 1,000 out) and B (500 in, 200 out) at 0.
    Ignore-EOS path: A fits (500 <= 2,000; as shortest-first, 2,000 - 500 - 1,000 x 1 = 500 >
    1); the total budget left 2,000 - 500 - min(1,000, 4,096) = 500. B: 500 <= min(free 1,500,
    total 500); states ascending (200, 500) B, (1,000, 500) A, free after B 1,000: i 0, bs 2:
    1,000 - 200 x 2 = 600 > 2; i 1, bs 1: 1,000 + 500 - 1,000 = 500 > 1: admitted with A, first
    token at 10 ms. add_one_req: B's 500 + 200 >= 500 left: refused; at 10 ms A runs (its
    1,000 - 1 left x 0.7 = 699.3 expected): 1,500 - 699.3 = 800.7 > 700, B prefilled 10-20."""
    state = _engine(2000, None, ignore_eos).run(
        [RequestSpec(arrival_s=0.0, prompt_len=500, output_len=1000),
         RequestSpec(arrival_s=0.0, prompt_len=500, output_len=200)])
    done = {r.rid: r for r in state.finished}
    assert done[0].first_token_s == pytest.approx(0.01)
    assert done[1].first_token_s == pytest.approx(first_b)


def test_the_ignore_eos_path_needs_the_radix_cache_disabled() -> None:
    """setup: rule 4 only where the requests ignore EOS AND the radix cache is off
    (--disable-radix-cache: SGLang's ChunkCache, `disable` True); off by default."""
    spec = load_model("llama-3.1-8b")[0]
    for caching, ignore, path in ((False, True, True), (None, True, False),
                                  (False, False, False)):
        inputs = estimate_inputs(spec, context=4096, gpu="H100-80GB", engine=Engine("sglang"),
                                 **({"disable_radix_cache": True} if caching is False else {}))
        sim, _ = setup(spec, inputs, sglang=SglangOptionsSim(ignore_eos=ignore))
        assert sim.sglang is not None and sim.sglang.ignore_eos_path is path
    default, _ = setup(spec, estimate_inputs(spec, context=4096, gpu="H100-80GB",
                                             engine=Engine("sglang")))
    assert default.sglang is not None and default.sglang.ignore_eos_path is False
