"""`kvplan simulate --engine trtllm` at TensorRT-LLM 1.0 and 1.1 (issue 30, trt10): the release
lines read (kvplan.analysis.simulate.trtllm_lines) and the one scheduling rule that differs from
1.2, the overlap scheduler's early exit (PR #8587, in 1.2's release notes: "Enabled early exit
with overlap scheduler"), worked by hand on small cases."""

from __future__ import annotations

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig
from kvplan.analysis.simulate.trtllm_lines import trtllm_line
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmSchedule, TrtllmSimulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step


def _engine(blocks: int, *, early_exit: bool, overlap: bool = True) -> TrtllmSimulator:
    # TensorRT-LLM's pool has no null block: KVPool keeps one, so it is given one more.
    pool = KVPool(blocks + 1, (GroupRule(kind="full", block_size=32),), caching=False)
    return TrtllmSimulator(
        pool, SchedulerConfig(max_num_seqs=2048, max_num_batched_tokens=8192,
                              max_model_len=1 << 20, async_scheduling=overlap),
        _FixedCost(), TrtllmSchedule(max_batch_size=2048, max_num_tokens=8192,
                                     early_exit=early_exit))


def _same(n: int, prompt: int, output: int) -> list[RequestSpec]:
    return [RequestSpec(arrival_s=0.0, prompt_len=prompt, output_len=output) for _ in range(n)]


def test_lines_read() -> None:
    # A pre- or post-release belongs to its release's line: the aggregated rows' 1.0.0rc3 and
    # 1.1.0rc2.post2 to the 1.0 - 1.1 line (no early exit), 1.2.0rc6.post3 and 1.3.0rc10 to
    # 1.2's (PR #8587's early exit); no version: the newest line read.
    for version, early in (("1.0.0rc3", False), ("1.0", False), ("1.1.0rc2.post2", False),
                           ("1.1.0", False), ("1.2.0rc6.post3", True), ("1.3.0rc10", True),
                           (None, True)):
        assert trtllm_line(version).early_exit is early, version
    # 0.21 (the overlap scheduler's default from 0.20, but no line of it read) and 1.4 (not
    # read) are refused, naming the lines read.
    for version in ("0.21.0", "1.4.0rc1"):
        with pytest.raises(InputError, match=r"1\.0 - 1\.3"):
            trtllm_line(version)


def test_without_early_exit_a_finished_request_takes_one_more_step() -> None:
    # One user (closed loop, concurrency 1), two requests of 100 prompt + 3 output tokens,
    # 10 ms a step, the overlap scheduler on. r0: prompt in step 1 (first token 10 ms), its
    # 2nd and 3rd tokens end steps 2 and 3 (30 ms, its finish: the client has every token).
    # r1 is sent at 30 ms, while the scheduler forms step 4 from what arrived before step 3
    # began (the overlap loop), so step 4 cannot take it.
    # 1.2 (early exit, PR #8587: r0 is GENERATION_TO_COMPLETE, not scheduled): the engine has
    # nothing to run, so it idles and the next step sees r1: its prompt runs 30-40 ms, first
    # token 40 ms, last 60 ms; 6 steps.
    # 1.0 / 1.1 (no early exit): step 4 (30-40 ms) carries r0 once more (one token, scheduled
    # before step 3's tokens are read); r1's prompt runs in step 5, first token 50 ms, last
    # 70 ms, and r1 is carried in step 8: 8 steps.
    for early, first, last, steps in ((True, 0.040, 0.060, 6), (False, 0.050, 0.070, 8)):
        state = _engine(1000, early_exit=early).run(_same(2, 100, 3), concurrency=1)
        done = {r.rid: r for r in state.finished}
        assert done[0].first_token_s == pytest.approx(0.010)
        assert done[0].finish_s == pytest.approx(0.030)  # the client's finish: unchanged
        assert done[1].sent_s == pytest.approx(0.030)
        assert (done[1].first_token_s, done[1].finish_s) == pytest.approx((first, last))
        assert state.steps == steps
    # Without the overlap scheduler there is no step formed ahead: 1.0 runs as 1.2.
    for early in (True, False):
        state = _engine(1000, early_exit=early, overlap=False).run(_same(2, 100, 3),
                                                                   concurrency=1)
        assert [r.first_token_s for r in state.finished] == pytest.approx([0.010, 0.040])
        assert state.steps == 6


def test_the_carried_request_keeps_its_blocks_for_its_extra_step() -> None:
    # Two requests of 94 prompt + 3 output tokens sent together, 32-token blocks, a pool of 4
    # blocks: each needs cdiv(94 + 3, 32) = 4 blocks to completion (getRemainingBlocks-
    # ToCompletion), so GUARANTEED_NO_EVICT starts r0 alone. r0 holds cdiv(96, 32) = 3 blocks
    # when its 3rd (last) token ends step 3 (30 ms): tokens 1-94 prompt, 95 and 96 fed in
    # steps 2 and 3.
    # 1.2: r0's blocks go back at 30 ms; step 4 starts r1 (first token 40 ms).
    # 1.0 / 1.1: step 4 carries r0: its 97th token's slot opens a 4th block (the pool is then
    # full), and r1 stays held (4 free - 3 held - 1 reserved = 0 < 4); r0's 4 blocks go back
    # after step 4, and step 5 starts r1 (first token 50 ms). Every block comes back.
    for early, first in ((True, 0.040), (False, 0.050)):
        sim = _engine(4, early_exit=early)
        state = sim.run(_same(2, 94, 3), concurrency=2)
        done = {r.rid: r for r in state.finished}
        assert done[0].finish_s == pytest.approx(0.030)
        assert done[1].first_token_s == pytest.approx(first)
        assert sim.pool.num_free == 4


def test_a_run_at_1_0_is_set_up_with_the_line_it_reads() -> None:
    spec, _ = load_model("llama-3.1-8b")
    for version, early in (("1.0.0rc3", False), ("1.1.0rc2.post2", False),
                           ("1.2.0rc6.post2", True)):
        inputs = estimate_inputs(spec, context=8192, engine=Engine.trtllm, gpu="H100-80GB",
                                 engine_version=version)
        sim, notes = setup(spec, inputs)
        assert sim.trtllm is not None and sim.trtllm.early_exit is early
        assert any("early exit" in n for n in notes) is not early, notes
