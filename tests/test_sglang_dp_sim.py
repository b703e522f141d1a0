"""SGLang's attention-DP ranks in one aggregated engine (`kvplan simulate --engine sglang --dp D
--dp-attention`, kvplan.analysis.simulate.dp_lockstep): the controller's round-robin dealing
(kvplan.engines.sglang.dp_balance), the MoE layers priced at the ranks' summed tokens in a step
with an extend (SUM_LEN) and at the busiest rank's x D in a decode-only step (MAX_LEN), worked
against the cost model's own functions, and the command line."""

from __future__ import annotations

import json
from functools import cache

import pytest
from typer.testing import CliRunner

from kvplan.analysis.simulate.dp_lockstep import balance_for, run_lockstep, sglang_balance
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest
from kvplan.analysis.simulate.sglang_scheduler import SglangSchedule, SglangSimulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.sglang.dp_balance import (
    DpGathered,
    sglang_gathered,
    sglang_round_robin_rank,
)
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import INTERCONNECTS
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step

V3 = "tests/data/configs/deepseek-v3.json"


class _Fixed(_FixedCost):
    """10 ms a step, whatever the tokens through the MoE layers."""

    def regathered_seconds(self, tokens: int, gathered: int, *, requests: int | None = None,
                           rows: int | None = None) -> float:
        return 0.0
runner = CliRunner()


@cache
def _cost(ranks: int = 2) -> MixedStepCost:
    """DeepSeek-V3 (block FP8) as SGLang's `--tp R --dp R --enable-dp-attention` on H200."""
    spec, _ = load_model(V3)
    gpu = get_gpu("H200")
    eff = engine_efficiency("sglang", device_efficiency(gpu), version="0.5.9")
    return MixedStepCost(spec, gpu, kv_dtype="bf16", quantization="fp8", eff=eff,
                         layout=Layout(tp=ranks, dp_attention=True), eager_prefill=True)


def _rank(step_cost: object, *, tokens: int = 4096, chunk: int = 8192) -> SglangSimulator:
    pool = KVPool(tokens + 1, (GroupRule(kind="full", block_size=1),), caching=False)
    return SglangSimulator(pool, SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=chunk,
                                                 max_model_len=2048),
                           step_cost,  # type: ignore[arg-type]
                           SglangSchedule(chunked_prefill_size=chunk, max_running_requests=64),
                           bulk_decode=False)


def test_a_rank_between_chunks_keeps_stepping() -> None:
    """One prompt of 20 tokens, chunked prefill 8, on 2 ranks, 10 ms a step: between its chunks
    the request is in neither queue (SGLang's chunked_req), and its rank still runs the next
    chunk: chunks of 8, 8 and 4 (first token at 30 ms), one decode (40 ms)."""
    ranks = [_rank(_Fixed(), chunk=8) for _ in range(2)]
    states = run_lockstep(ranks, sglang_balance,
                          [RequestSpec(arrival_s=0.0, prompt_len=20, output_len=2)])
    (req,) = states[0].finished
    assert req.first_token_s == pytest.approx(0.030)
    assert req.finish_s == pytest.approx(0.040)
    assert states[1].finished == [] and states[1].steps == 0


def test_round_robin_deals_two_requests_to_each_rank() -> None:
    """2 x 4 identical requests at t = 0 on 4 ranks: the controller's counter sends request i
    to rank i mod 4 (data_parallel_controller.py 0.5.9:513-527), so each rank gets 2, rank r
    the requests r and r + 4, whatever the ranks' queues."""
    assert [sglang_round_robin_rank(i, 4) for i in range(8)] == [0, 1, 2, 3, 0, 1, 2, 3]
    ranks = [_rank(_Fixed()) for _ in range(4)]
    specs = [RequestSpec(arrival_s=0.0, prompt_len=64, output_len=3) for _ in range(8)]
    states = run_lockstep(ranks, sglang_balance, specs)
    assert [sorted(r.rid for r in s.finished) for s in states] == [[0, 4], [1, 5], [2, 6],
                                                                   [3, 7]]
    assert balance_for(Engine("sglang").rules) is sglang_balance
    # Not by load: a rank with a long queue still gets its turn.
    ranks = [_rank(_Fixed()) for _ in range(2)]
    ranks[0].waiting.extend(SimRequest(100 + i, specs[0], 0.0, 1) for i in range(5))
    new = [SimRequest(i, specs[0], 0.0, 1) for i in range(4)]
    assert sglang_balance(ranks, new) == [0, 1, 0, 1]


def test_gathered_tokens_sum_in_an_extend_step_and_pad_in_decode() -> None:
    # SUM_LEN with an extend in the batch, MAX_LEN (None: the busiest rank's x D) otherwise
    # (layers/dp_attention.py 0.5.9:64-76, cuda_graph_runner.py:673).
    # The logits' rows (a request each) are summed alike (logits_processor.py 0.5.9 :202, :226).
    assert sglang_gathered([100, 1, 0, 3], [2, 1, 0, 3], extend=True) == DpGathered(104, 6)
    assert sglang_gathered([8, 8, 7, 0], [8, 8, 7, 0], extend=False) is None


def test_regathered_seconds_is_the_cost_models_own_moe_part() -> None:
    """The MoE part priced at G gathered tokens at SUM_LEN in place of t x D at MAX_LEN is what
    roofline.step_time gives with `gathered=G, sum_len=True` less what it gives by default (a
    decode-form step: MAX_LEN), at any rank tokens t (attention TP 1: the ops over the gathered
    tokens do not depend on t); the logit rows' sum R in place of r x D adds what its lm_head
    and logits gather give with `gathered_logits=R` less with r rows a rank."""
    cost = _cost(2)
    common = {"context": 1, "requests": 1, "logits": 1, **cost._common}
    spec, gpu = cost.spec, cost.gpu
    for t, g in ((40, 41), (100, 300), (7, 7)):
        direct = (step_time(spec, gpu, tokens=t, gathered=g, sum_len=True, **common).seconds
                  - step_time(spec, gpu, tokens=t, **common).seconds)
        assert cost.regathered_seconds(t, g) == pytest.approx(direct, rel=1e-9, abs=1e-12)
        rows = (step_time(spec, gpu, tokens=t, gathered=g, sum_len=True, gathered_logits=3,
                          **common).seconds
                - step_time(spec, gpu, tokens=t, **common).seconds)
        assert cost.regathered_seconds(t, g, requests=1, rows=3) == pytest.approx(
            rows, rel=1e-9, abs=1e-12)
    # G = t x D: only the mode moves (sgldp64), in each of V3's 61 layers (3 dense MLPs split
    # over the TP group, 58 MoE: all gather) SUM_LEN's two all-reduces against MAX_LEN's two
    # ring halves, of 128 x 7,168 x 2 B = 1,835,008 B on 2 H200s (NVLink 4, 360 GB/s):
    # - all-reduce, 2 ranks: the custom one-shot kernel, 5.718 us (measured fixed part) +
    #   1 x 1,835,008 / 360e9 s = 5.718 + 5.097 = 10.815 us;
    # - ring half: 10 us (NCCL) + 1/2 x 1,835,008 / 360e9 s = 10 + 2.549 = 12.549 us;
    # 61 x 2 x (10.815 - 12.549) us = -211.445 us: cheaper here, the custom kernel's fixed
    # part below NCCL's.
    ar = INTERCONNECTS["nvlink4"].custom_all_reduce_latency_s + 128 * 7168 * 2 / 360e9
    half = 10e-6 + 0.5 * 128 * 7168 * 2 / 360e9
    assert cost.regathered_seconds(64, 128) == pytest.approx(61 * 2 * (ar - half), rel=1e-9)
    assert cost.regathered_seconds(64, 128) == pytest.approx(-211.445e-6, abs=1e-9)
    assert cost.regathered_seconds(64, 128, requests=1, rows=2) == pytest.approx(
        cost.regathered_seconds(64, 128), abs=1e-15)
    # Fewer tokens through the experts: a cheaper step (64 + 1 against 64 x 2).
    assert cost.regathered_seconds(64, 65) < 0


def test_two_sglang_ranks_step_as_the_slowest_plus_the_summed_moe() -> None:
    """DeepSeek-V3 on 2 ranks (Layout(tp=2, dp_attention=True)), synchronous scheduling. A (64
    in, 3 out) -> rank 0, B (32 in, 2 out) -> rank 1, both at t = 0 (round-robin).
    Step 1, both extend: G = 64 + 32 = 96 tokens through the MoE layers; each rank's time is
    its own mix (MixedStepCost.seconds) with the MoE part moved from t x 2 to 96
    (regathered_seconds); the step lasts the longer: both first tokens at its end.
    Step 2, both decode (MAX_LEN: the cost model's own count, 1 x 2): the longer decode; B's
    last token. Step 3: rank 0 decodes alone, rank 1 an idle batch: rank 0's decode; A ends."""
    cost = _cost(2)
    ranks = [_rank(cost), _rank(cost)]
    specs = [RequestSpec(arrival_s=0.0, prompt_len=64, output_len=3),
             RequestSpec(arrival_s=0.0, prompt_len=32, output_len=2)]
    states = run_lockstep(ranks, sglang_balance, specs)
    s1 = max(cost.seconds(decode_contexts=[], chunks=[(0, 64)])
             + cost.regathered_seconds(64, 96, requests=1, rows=2),
             cost.seconds(decode_contexts=[], chunks=[(0, 32)])
             + cost.regathered_seconds(32, 96, requests=1, rows=2))
    s2 = max(cost.seconds(decode_contexts=[65], chunks=[]),
             cost.seconds(decode_contexts=[33], chunks=[]))
    s3 = cost.seconds(decode_contexts=[66], chunks=[])
    a, b = states[0].finished[0], states[1].finished[0]
    assert (a.rid, b.rid) == (0, 1)
    assert a.first_token_s == pytest.approx(s1) and b.first_token_s == pytest.approx(s1)
    assert b.finish_s == pytest.approx(s1 + s2)
    assert a.finish_s == pytest.approx(s1 + s2 + s3)
    # The extend step is cheaper than the busiest rank x 2 (vLLM's padding) would price it.
    padded = cost.seconds(decode_contexts=[], chunks=[(0, 64)])
    assert s1 < padded
    assert [s.steps for s in states] == [3, 2]


def test_an_idle_batch_keeps_the_new_token_ratio() -> None:
    """A rank that runs an idle batch while another works does not reset its new-token ratio
    (self_check_during_idle runs only with no batch: scheduler.py 0.5.9:1164-1176)."""
    rank = _rank(_Fixed())
    rank.new_token_ratio = 0.5
    rank.dummy_step(0.010)
    rank.state.clock_s = 0.010
    rank.waiting.append(SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=8, output_len=2),
                                   0.0, 1))
    rank.schedule()
    assert rank.new_token_ratio == 0.5


def _simulate(*extra: str) -> object:
    return runner.invoke(app, ["simulate", V3, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                               "--dp", "8", "--dp-attention", "--concurrency", "16",
                               "--num-requests", "32", "--input-len", "256", "--output-len",
                               "16", "--max-model-len", "4096", *extra])


def test_cli_runs_sglang_dp_attention_and_deepep() -> None:
    res = _simulate("--format", "json")
    assert res.exit_code == 0, res.stderr  # type: ignore[attr-defined]
    data = json.loads(res.stdout)  # type: ignore[attr-defined]
    assert (data["engine"], data["tp"], data["dp"], data["num_requests"]) == (
        "sglang", 8, 8, 32)
    text = " ".join(_simulate().stdout.split())  # type: ignore[attr-defined]
    assert "on 8 H200 (8 attention-DP ranks)" in text
    assert "attention DP: 8 ranks in lockstep" in text
    deepep = _simulate("--ep", "8", "--moe-a2a-backend", "deepep", "--moe-dense-tp-size", "1",
                       "--format", "json")
    assert deepep.exit_code == 0, deepep.stderr  # type: ignore[attr-defined]
    assert json.loads(deepep.stdout)["num_requests"] == 32  # type: ignore[attr-defined]


def test_cli_refuses_a_dp_size_that_does_not_divide_tp_in_one_line() -> None:
    # SGLang asserts tp_size % dp_size == 0 under --enable-dp-attention (server_args.py
    # _handle_data_parallelism: 0.5.3 :956, 0.5.6 :1498, 0.5.9 :2116).
    res = runner.invoke(app, ["simulate", V3, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                              "--dp", "3", "--dp-attention", "--num-requests", "4",
                              "--concurrency", "2"])
    assert res.exit_code == 2
    assert "--dp 3: SGLang asserts that --dp divides --tp 8" in res.stderr
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    # --scheduler-recv-interval above 1 stays refused under DP attention (SGLang asserts it).
    res = _simulate("--engine-arg", "--scheduler-recv-interval=4")
    assert res.exit_code == 2, res.stdout  # type: ignore[attr-defined]
    assert "DP attention" in res.stderr  # type: ignore[attr-defined]


def test_a_decode_step_gathers_the_logits_of_every_request_not_one_row() -> None:
    """sgldp64: the simulator's step carried the split lm_head's DP logits gather at the dense
    part's one row a rank (step_time at logits=1); it now goes with the step's rows
    (MixedStepCost.head_seconds: each of the rank's requests x the ranks). DeepSeek-V3 on 2
    H200 ranks, 64 decodes a rank: 2 x 64 = 128 rows.
    - hidden rows: 128 x 7,168 x 2 B = 1,835,008 B, all-reduced on 2 ranks by the custom
      one-shot kernel: 5.718 + 1,835,008 / 360e9 s = 5.718 + 5.097 = 10.815 us;
    - logits: 128 x 129,280 x 2 B = 33,095,680 B, a ring half: 10 + 1/2 x 33,095,680 / 360e9
      = 10 + 45.966 = 55.966 us;
    - the copy: 2 x 33,095,680 B at 4.8 TB/s x 0.9 = 15.322 us. 82.104 us."""
    cost = _cost(2)
    spec, gpu = cost.spec, cost.gpu
    head = step_time(spec, gpu, tokens=64, context=1, requests=64, logits=64, layers=range(0),
                     **cost._common)
    ar = INTERCONNECTS["nvlink4"].custom_all_reduce_latency_s + 128 * 7168 * 2 / 360e9
    gather = ar + 10e-6 + 0.5 * 128 * 129280 * 2 / 360e9 + 2 * 128 * 129280 * 2 / (4.8e12 * 0.9)
    assert head.by_op["logits_gather"] == pytest.approx(gather, rel=1e-9)
    assert head.by_op["logits_gather"] == pytest.approx(82.104e-6, abs=1e-9)
    assert cost.head_seconds(64) == pytest.approx(head.by_op["lm_head"] + gather, rel=1e-9)
    # The step: its dense part without any logits gather, the head at its 64 rows, attention.
    contexts = [1000] * 64
    one_row = step_time(spec, gpu, tokens=64, context=1, requests=1, logits=1, **cost._common)
    dense = one_row.seconds - sum(one_row.by_op.get(k, 0.0) for k in (
        "attention", "lm_head", "logits_gather"))
    assert one_row.by_op["logits_gather"] > 0  # what the step carried before
    assert cost.seconds(decode_contexts=contexts, chunks=[]) == pytest.approx(
        dense + cost.head_seconds(64) + cost.attention_seconds(contexts, []), rel=1e-9)
