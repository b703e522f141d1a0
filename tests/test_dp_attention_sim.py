"""Attention-DP ranks of one aggregated engine in lockstep (`kvplan simulate --dp-attention`,
kvplan.analysis.simulate.dp_lockstep): the engines' balancing rules worked by hand from their
source, a two-rank run worked by hand, and invariants over random workloads."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.dp_lockstep import (
    dp_attention_layout,
    run_lockstep,
    trtllm_balance,
    vllm_balance,
)
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.scheduler import SchedulerConfig, Simulator
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmSchedule, TrtllmSimulator
from kvplan.analysis.simulate.workload import LengthDist, RequestSpec, synthetic
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.trtllm.dp_balance import AdpBalance, AdpContextGate, trtllm_adp_ranks
from kvplan.engines.vllm.dp_balance import vllm_dp_engine


class _TokenCost:
    """1 ms per token a step schedules (a decode 1, a prefill chunk its tokens)."""

    full_attention_only = True

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return 1e-3 * (len(decode_contexts) + sum(n for _, n in chunks))

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return 1e-3 * (decodes + sum(n for _, n in chunks))


class _CheckedPool(KVPool):
    """Holds every allocation to the pool's size."""

    def allocate(self, req, new_tokens, **kw):  # type: ignore[no-untyped-def]
        ok = super().allocate(req, new_tokens, **kw)
        assert 0 <= self.num_free <= self.usable
        return ok


def _vllm_rank(blocks: int = 100, *, seqs: int = 8, budget: int = 512, max_len: int = 128,
               async_: bool = False) -> Simulator:
    pool = _CheckedPool(blocks, (GroupRule(kind="full", block_size=16),), caching=False)
    return Simulator(pool, SchedulerConfig(max_num_seqs=seqs, max_num_batched_tokens=budget,
                                           max_model_len=max_len, async_scheduling=async_),
                     _TokenCost(), bulk_decode=False)


def test_vllm_picks_the_lowest_four_waiting_plus_running() -> None:
    # vllm/v1/engine/core_client.py:1337-1363 (0.19.0): score = waiting * 4 + running, the
    # first of equal scores from the start index kept.
    assert vllm_dp_engine([1, 0], [0, 3]) == 1  # 4 against 3
    assert vllm_dp_engine([1, 0], [0, 4]) == 0  # 4 against 4: the first scanned
    assert vllm_dp_engine([1, 0], [0, 4], start=1) == 1  # scanning from engine 1
    assert vllm_dp_engine([0, 0, 0], [2, 1, 1]) == 1


def test_trtllm_balances_by_active_tokens_below_the_expected_count() -> None:
    # executor_request_queue.py `_balance_requests_across_ranks`: active requests [2, 1],
    # active prompt tokens [100, 300], new prompts of 50, 200 and 10 tokens. expected =
    # max(ceil((3 + 3) / 2), 2) = 3. Heap (tokens, requests, rank): (100, 2, 0), (300, 1, 1).
    # Longest first: 200 -> rank 0 (fewest tokens; it reaches 3 = expected, off the heap);
    # 50 -> rank 1 (350, 2); 10 -> rank 1 (3 requests).
    assert trtllm_adp_ranks([2, 1], [100, 300], [50, 200, 10]) == [1, 0, 1]
    # Empty ranks: equal tokens and requests, the lower rank first, then the one with fewer
    # tokens: 30 -> 0, 20 -> 1, 10 -> 1 (20 < 30 tokens), expected ceil(3 / 2) = 2.
    assert trtllm_adp_ranks([0, 0], [0, 0], [10, 30, 20]) == [1, 0, 1]


def test_two_vllm_ranks_worked_by_hand() -> None:
    """Three requests at t = 0 (prompts 16, 48, 16; 2 output tokens), two vLLM DP ranks,
    synchronous scheduling, 1 ms per token scheduled. The balancer (waiting x 4 + running,
    each pick counted waiting at once): A -> rank 0 (0 vs 0, the first), B -> rank 1 (4 vs
    0), C -> rank 0 (4 vs 4, the first). Step 1: rank 0 prefills A + C (32 tokens, 32 ms),
    rank 1 B (48 tokens, 48 ms): both ranks' step lasts 48 ms, every first token at 48 ms
    (rank 0 alone would give 32 ms). Step 2: rank 0 decodes 2 (2 ms), rank 1 1 (1 ms): 2 ms,
    all finish at 50 ms."""
    ranks = [_vllm_rank(), _vllm_rank()]
    specs = [RequestSpec(arrival_s=0.0, prompt_len=n, output_len=2) for n in (16, 48, 16)]
    states = run_lockstep(ranks, vllm_balance, specs)
    assert [sorted(r.rid for r in s.finished) for s in states] == [[0, 2], [1]]
    done = {r.rid: r for s in states for r in s.finished}
    for rid in (0, 1, 2):
        assert done[rid].first_token_s == pytest.approx(0.048)
        assert done[rid].finish_s == pytest.approx(0.050)
    assert [s.steps for s in states] == [2, 2]
    assert [s.clock_s for s in states] == [pytest.approx(0.050)] * 2
    # Independent replicas (no lockstep) would give rank 0's requests their first token at
    # 32 ms: the lockstep is what moves them.
    alone = _vllm_rank()
    out = alone.run([specs[0], specs[2]])
    assert min(r.first_token_s for r in out.finished) == pytest.approx(0.032)


def test_an_idle_rank_waits_for_nothing() -> None:
    # One request on two ranks: rank 1 never works; the step is rank 0's alone.
    ranks = [_vllm_rank(), _vllm_rank()]
    states = run_lockstep(ranks, vllm_balance,
                          [RequestSpec(arrival_s=0.0, prompt_len=20, output_len=3)])
    (req,) = states[0].finished
    assert req.first_token_s == pytest.approx(0.020)
    assert req.finish_s == pytest.approx(0.022)
    assert states[1].finished == [] and states[1].steps == 0


def test_closed_loop_concurrency_is_global() -> None:
    # Concurrency 3 over 2 ranks: at most 3 requests in flight over both.
    ranks = [_vllm_rank(), _vllm_rank()]
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=4) for _ in range(9)]
    states = run_lockstep(ranks, vllm_balance, specs, concurrency=3)
    done = sorted((r for s in states for r in s.finished), key=lambda r: r.rid)
    assert len(done) == 9
    for r in done:
        in_flight = sum(q.sent_s <= r.sent_s < q.finish_s for q in done)
        assert in_flight <= 3


dp_workloads = st.fixed_dictionaries({
    "ranks": st.integers(2, 4),
    "n": st.integers(1, 30),
    "prompt": st.tuples(st.integers(1, 200), st.integers(0, 200)),
    "output": st.tuples(st.integers(1, 60), st.integers(0, 60)),
    "rate": st.one_of(st.none(), st.floats(1.0, 500)),
    "concurrency": st.one_of(st.none(), st.integers(1, 16)),
    "blocks": st.integers(30, 200),
    "budget": st.integers(16, 512),
    "seqs": st.integers(1, 8),
    "seed": st.integers(0, 1000),
    "async": st.booleans(),
    "trtllm": st.booleans(),
})


@settings(max_examples=40, deadline=None)
@given(dp_workloads)
def test_every_request_finishes_once_and_no_rank_passes_its_pool(w: dict) -> None:  # type: ignore[type-arg]
    lo, extra = w["prompt"]
    olo, oextra = w["output"]
    rate = w["rate"]
    concurrency = w["concurrency"] if rate is None else None
    if rate is None and concurrency is None:
        concurrency = 4
    specs = list(synthetic(num_requests=w["n"],
                           input_len=LengthDist(kind="uniform", a=lo, b=lo + extra),
                           output_len=LengthDist(kind="uniform", a=olo, b=olo + oextra),
                           rate=rate, seed=w["seed"]))
    longest = max(s.prompt_len + s.output_len for s in specs)
    blocks = max(w["blocks"], -(-longest // 16) + 2)
    budget = max(w["budget"], longest) if w["trtllm"] else w["budget"]
    config = SchedulerConfig(max_num_seqs=w["seqs"], max_num_batched_tokens=budget,
                             max_model_len=longest, async_scheduling=w["async"])
    pools = [_CheckedPool(blocks, (GroupRule(kind="full", block_size=16),), caching=False)
             for _ in range(w["ranks"])]
    if w["trtllm"]:
        ranks: list[Simulator] = [TrtllmSimulator(p, config, _TokenCost(), TrtllmSchedule(
            max_batch_size=w["seqs"], max_num_tokens=budget)) for p in pools]
        balance = trtllm_balance
    else:
        ranks = [Simulator(p, config, _TokenCost(), bulk_decode=False) for p in pools]
        balance = vllm_balance
    states = run_lockstep(ranks, balance, specs, concurrency=concurrency)
    done = [r for s in states for r in s.finished]
    # Every request finished exactly once, on one rank, with all its tokens.
    assert sorted(r.rid for r in done) == list(range(len(specs)))
    for r in done:
        spec = specs[r.rid]
        assert r.sent_s >= spec.arrival_s
        assert r.sent_s <= r.first_token_s <= r.finish_s
        assert r.num_output == spec.output_len
    # Each rank's KV stayed within its own pool (the checked pools) and all came back; every
    # rank with work ended its steps at the same instants (lockstep): the same clock.
    for pool in pools:
        assert pool.num_free == pool.usable
    busy = [s for s in states if s.steps]
    assert len({s.clock_s for s in busy}) == 1
    if concurrency is not None:
        for r in done:
            assert sum(q.sent_s <= r.sent_s < q.finish_s for q in done) <= concurrency


def test_layouts_by_engine() -> None:
    vllm, trt = Engine("vllm").rules, Engine("trtllm").rules
    # vLLM: TP 4 a rank, 4 ranks, EP 16 = TP x DP (Launch.ep_over_dp): one rank is a TP-4
    # engine whose experts are spread over 16 GPUs.
    lay = dp_attention_layout(vllm, tp=4, dp=4, ep=16)
    assert (lay.tp, lay.dp_attention, lay.ep, lay.gpus) == (4, False, 16, 16)
    with pytest.raises(InputError, match="--ep 8"):
        dp_attention_layout(vllm, tp=2, dp=4, ep=4)
    # TensorRT-LLM: tp_size 8 with enable_attention_dp, 8 ranks of attention TP 1.
    lay = dp_attention_layout(trt, tp=1, dp=8, ep=8)
    assert (lay.tp, lay.dp_attention, lay.ep, lay.gpus) == (8, True, 8, 8)
    with pytest.raises(InputError, match="--tp 1"):
        dp_attention_layout(trt, tp=2, dp=8, ep=8)
    # SGLang: `--tp 8 --dp 8 --enable-dp-attention`, 8 GPUs, 8 ranks of attention TP 1
    # (kvplan.engines.sglang.dp_balance; tests/test_sglang_dp_sim.py).
    sgl = Engine("sglang").rules
    lay = dp_attention_layout(sgl, tp=8, dp=8, ep=8)
    assert (lay.tp, lay.dp_attention, lay.ep, lay.gpus, lay.attention_dp_size) == (
        8, True, 8, 8, 8)
    # `--tp 8 --dp 4`: 4 ranks of attention TP 2 (compute_dp_attention_world_info); a --dp
    # that does not divide --tp is SGLang's assert (server_args.py _handle_data_parallelism).
    lay = dp_attention_layout(sgl, tp=8, dp=4, ep=8)
    assert (lay.tp, lay.dp_attention, lay.ep, lay.gpus, lay.attention_dp_size) == (
        8, True, 8, 8, 4)
    with pytest.raises(InputError, match="--dp 3: SGLang asserts that --dp divides --tp 8"):
        dp_attention_layout(sgl, tp=8, dp=3, ep=8)
    with pytest.raises(InputError, match="--dp 8: SGLang asserts that --dp divides --tp 1"):
        dp_attention_layout(sgl, tp=1, dp=8, ep=8)
    with pytest.raises(InputError, match="--ep 1 or --ep 8"):
        dp_attention_layout(sgl, tp=8, dp=8, ep=4)


def test_cli_refuses_an_unsimulated_layout_in_one_line() -> None:
    res = CliRunner().invoke(app, ["simulate", "tests/data/configs/deepseek-v3.json", "--gpu",
                                   "H200", "--tp", "2", "--dp", "4", "--ep", "4",
                                   "--dp-attention", "--concurrency", "2", "--num-requests",
                                   "4", "--input-len", "64", "--output-len", "8"])
    assert res.exit_code == 2
    assert "--dp-attention" in res.stderr and "--ep 8" in res.stderr
    assert "Traceback" not in res.stderr


def test_cli_runs_vllm_dp_ranks() -> None:
    # DeepSeek-V3 (block FP8) as vLLM DEP8 on H200: 8 ranks of TP 1, experts over 8 GPUs.
    res = CliRunner().invoke(app, ["simulate", "tests/data/configs/deepseek-v3.json", "--gpu",
                                   "H200", "--tp", "1", "--dp", "8", "--ep", "8",
                                   "--dp-attention", "--concurrency", "8", "--num-requests",
                                   "16", "--input-len", "64", "--output-len", "8", "--format",
                                   "json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["num_requests"] == 16 and data["dp"] == 8
    text = CliRunner().invoke(app, ["simulate", "tests/data/configs/deepseek-v3.json", "--gpu",
                                    "H200", "--tp", "1", "--dp", "8", "--ep", "8",
                                    "--dp-attention", "--concurrency", "8", "--num-requests",
                                    "16", "--input-len", "64", "--output-len", "8"]).stdout
    assert "attention DP: 8 ranks in lockstep" in text


def test_vllm_ep_over_dp_ranks_prices_every_ranks_tokens_and_its_all_to_all() -> None:
    """vLLM's EP = TP x DP (`--data-parallel-size 4 --enable-expert-parallel`, TP 1 a rank):
    the cost model's Layout(tp=1, ep=4) has 4 DP ranks (world 4 / TP 1), so a MoE layer takes
    4 x the rank's tokens and runs the EP all-to-all (vLLM 0.19.0 fused_moe/config.py:945-946
    use_all2all_kernels = dp_size > 1 and use_ep), exactly as the attention-DP spelling of the
    same deployment, Layout(tp=4, dp_attention=True, ep=4), that the disaggregated roles use.
    With EP = TP (no DP ranks) vLLM reduces the experts in the TP all-reduce: no all-to-all."""
    from kvplan.hardware.gpus import get_gpu
    from kvplan.perf.efficiency import device_efficiency
    from kvplan.perf.engine_traits import engine_efficiency
    from kvplan.perf.layout import Layout
    from kvplan.perf.roofline import step_time
    from kvplan.sources.resolve import load_model

    spec, _ = load_model("tests/data/configs/deepseek-v3.json")
    gpu = get_gpu("H200")
    eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.19.0")
    kw = {"tokens": 32, "context": 2048, "requests": 32, "eff": eff, "quantization": "fp8"}
    ep_over_dp = step_time(spec, gpu, layout=Layout(tp=1, ep=4), **kw).by_op
    dep = step_time(spec, gpu, layout=Layout(tp=4, dp_attention=True, ep=4), **kw).by_op
    assert Layout(tp=1, ep=4).dp_ranks == 4
    assert ep_over_dp["ep_all_to_all"] == pytest.approx(dep["ep_all_to_all"])
    assert ep_over_dp["experts"] == pytest.approx(dep["experts"])
    tep = step_time(spec, gpu, layout=Layout(tp=4, ep=4), **kw).by_op
    assert "ep_all_to_all" not in tep
    # 32 tokens a rank x 4 ranks = 128 tokens through the experts: more expert FLOPs than one
    # TP-4 group's 32 at the same expert split.
    assert ep_over_dp["experts"] > tep["experts"]


def test_trtllm_adp_balance_gate_worked_by_hand() -> None:
    # py_executor.py `_balance_adp_requests` (attention_dp_enable_balance), timeout_iters 3,
    # batching_wait_iters 2, max_batch_size 8; each call one iteration's (context, generation)
    # counts of two ranks.
    gate = AdpContextGate(AdpBalance(timeout_iters=3, batching_wait_iters=2), max_batch_size=8)
    # Rank 1 has no context request, both ranks generate: held while the wait counter (1, 2)
    # is below 3; at 3 they run and it goes back to 0.
    assert [gate.release([1, 0], [1, 1]) for _ in range(3)] == [False, False, True]
    # A rank without a generation request: they run at once.
    assert gate.release([1, 0], [0, 1]) is True
    # Every rank has a context request and a generation request: held batching_wait_iters
    # (2) iterations, then run (the batching counter back to 0).
    assert [gate.release([1, 1], [1, 1]) for _ in range(3)] == [False, False, True]
    # Every rank has a context request, one has no generation request: run.
    assert gate.release([1, 1], [0, 1]) is True
    # A rank whose generation requests fill max_batch_size: no free slot, the wait counter
    # counts (1) and they are held.
    assert gate.release([1, 1], [8, 1]) is False
    # The defaults (llm_args.py AttentionDpConfig): timeout 50, batching wait 10.
    assert AdpBalance() == AdpBalance(timeout_iters=50, batching_wait_iters=10)


def _trt_rank() -> TrtllmSimulator:
    pool = _CheckedPool(100, (GroupRule(kind="full", block_size=16),), caching=False)
    config = SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512, max_model_len=128,
                             async_scheduling=False)
    return TrtllmSimulator(pool, config, _TokenCost(),
                           TrtllmSchedule(max_batch_size=8, max_num_tokens=512))


def test_trtllm_adp_balance_holds_a_prompt_worked_by_hand() -> None:
    """Two TensorRT-LLM ranks, synchronous, 1 ms per token scheduled; A and B (16-token
    prompts, 10 outputs) at t = 0, C (16, 2) at 16.5 ms; attention_dp_config enable_balance
    with timeout_iters 3, batching_wait_iters 0. Step 1 (0 - 16 ms): A on rank 0, B on rank 1
    (the balancer's heap), both ranks have a context request and neither a generation
    request: they run. Step 2 (16 - 17 ms): decodes only, and the wait counter counts it
    (1): not every rank has a context request (none has), every rank generates. At 17 ms C
    goes to rank 0 (active [1, 1], tokens [16, 16], the lower rank): rank 0 picks (1 context,
    1 generation), rank 1 (0, 1): held (counter 2), decodes only, 1 ms; at 18 ms the counter
    reaches 3 and C runs: rank 0's step 16 + 1 = 17 ms, C's first token at 35 ms. Without
    the balance (the default) C runs at 17 ms: first token at 34 ms. (The counter runs
    through decode-only iterations too, so a new prompt waits timeout_iters less the
    iterations since the counter last went back to 0.)"""
    specs = [RequestSpec(arrival_s=0.0, prompt_len=16, output_len=10),
             RequestSpec(arrival_s=0.0, prompt_len=16, output_len=10),
             RequestSpec(arrival_s=0.0165, prompt_len=16, output_len=2)]
    gate = AdpContextGate(AdpBalance(timeout_iters=3, batching_wait_iters=0), max_batch_size=8)
    held = run_lockstep([_trt_rank(), _trt_rank()], trtllm_balance, specs, gate=gate)
    free = run_lockstep([_trt_rank(), _trt_rank()], trtllm_balance, specs)
    for states, first in ((held, 0.035), (free, 0.034)):
        done = {r.rid: r for s in states for r in s.finished}
        assert [r.rid for r in states[0].finished if r.rid == 2] == [2]  # C on rank 0
        assert done[0].first_token_s == pytest.approx(0.016)
        assert done[2].first_token_s == pytest.approx(first)
    with pytest.raises(InputError, match="TensorRT-LLM's ranks only"):
        run_lockstep([_vllm_rank(), _vllm_rank()], vllm_balance, specs, gate=gate)
