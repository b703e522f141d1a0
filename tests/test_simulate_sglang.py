"""`kvplan simulate --engine sglang` (issue 30): SGLang's scheduler worked by hand on small
cases (kvplan.analysis.simulate.sglang_scheduler, after SGLang 0.4.9 - 0.5.x
managers/scheduler.py, schedule_policy.py, schedule_batch.py and global_config.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.metrics import summary_ms
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest
from kvplan.analysis.simulate.sglang_scheduler import (
    SglangOptionsSim,
    SglangSchedule,
    SglangSimulator,
)
from kvplan.analysis.simulate.workload import LengthDist, RequestSpec, synthetic
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step

runner = CliRunner()


class _Recording(SglangSimulator):
    """Keeps new_token_ratio after each retraction."""

    ratios: list[float]

    def _decode_batch(self) -> list[tuple[SimRequest, int]]:
        before = self.state.preemptions
        out = super()._decode_batch()
        if self.state.preemptions > before:
            self.ratios.append(self.new_token_ratio)
        return out


def _engine(tokens: int, *, conservativeness: float = 1.0, chunk: int | None = None
            ) -> _Recording:
    # Page size 1 (SGLang's CUDA default): a block is a token; KVPool keeps one null block.
    pool = KVPool(tokens + 1, (GroupRule(kind="full", block_size=1),), caching=False)
    sim = _Recording(pool, SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=16384,
                                           max_model_len=4096),
                     _FixedCost(), SglangSchedule(chunked_prefill_size=chunk,
                                                  max_running_requests=64,
                                                  schedule_conservativeness=conservativeness))
    sim.ratios = []
    return sim


def test_new_token_ratio_admission_waits_for_room() -> None:
    """A pool of 1,000 tokens. A (100 in, 200 out) arrives at 0 and is prefilled alone
    (0-10 ms, total 300 < 1,000). B (100 in, 700 out) arrives at 15 ms. At 20 ms A has 101
    tokens and 198 to go: rem_total = 899 - 198 x new_token_ratio (0.7 less one decay step,
    (0.7 - 0.098) / 600: 0.698997) = 760.6 <= B's 100 + 700: B waits (vLLM would admit it).
    Each further step takes one free token and releases ratio x 1 of A's reserve, so rem_total
    only falls (700.3 at A's last step): B is admitted when A finishes, at 2,000 ms (its 200
    tokens: prefill at 0-10 ms, 199 decode steps), and prefilled at 2,000-2,010 ms: TTFT
    1,995 ms."""
    sim = _engine(1000)
    state = sim.run([RequestSpec(arrival_s=0.0, prompt_len=100, output_len=200),
                     RequestSpec(arrival_s=0.015, prompt_len=100, output_len=700)])
    done = {r.rid: r for r in state.finished}
    assert done[0].first_token_s == pytest.approx(0.010)
    assert done[0].finish_s == pytest.approx(2.000)
    assert done[1].first_token_s - done[1].sent_s == pytest.approx(1.995)
    assert state.preemptions == 0


def test_retraction_takes_the_least_output_then_longest_prompt() -> None:
    """A pool of 300 tokens, --schedule-conservativeness 0.1 (new_token_ratio 0.07, min
    0.0098). A (50 in, 200 out) is prefilled at 0-10 ms (50 + 200 < 300). At 10 ms rem_total =
    250 - 199 x 0.07 = 236.07 > B's 60 + 100: B (arrived at 0, refused at 0: 300 - 250 = 50)
    is prefilled at 10-20 ms (prefill first: A waits). Both then decode, 2 tokens a step, from
    190 free tokens: 95 steps; at the 96th the pool is short. Both have 96 output tokens; the
    longer prompt, B, is retracted (sorted by (output, -prompt) descending, popped from the
    end); A alone then has B's 155 tokens back, >= 20 x 1. new_token_ratio = min(1, (96 +
    20 x 1) / 200) = 0.58."""
    sim = _engine(300, conservativeness=0.1)
    state = sim.run([RequestSpec(arrival_s=0.0, prompt_len=50, output_len=200),
                     RequestSpec(arrival_s=0.0, prompt_len=60, output_len=100)])
    done = {r.rid: r for r in state.finished}
    assert (done[0].preemptions, done[1].preemptions) == (0, 1)
    assert state.preemptions == 1
    assert sim.ratios == [pytest.approx(0.58)]
    assert done[1].first_token_s == pytest.approx(0.020)
    assert len(state.finished) == 2


def test_chunked_prefill_runs_before_decodes() -> None:
    """--chunked-prefill-size 64: a 150-token prompt takes three prefill steps (64, 64, 22;
    the first two chunked), its first token at the end of the third (30 ms); a 10-token prompt
    arriving at 5 ms joins the third step (64 - 22 tokens of budget left): same first token."""
    sim = _engine(1000, chunk=64)
    state = sim.run([RequestSpec(arrival_s=0.0, prompt_len=150, output_len=3),
                     RequestSpec(arrival_s=0.005, prompt_len=10, output_len=3)])
    done = {r.rid: r for r in state.finished}
    assert done[0].first_token_s == pytest.approx(0.030)
    assert done[1].first_token_s == pytest.approx(0.030)
    assert done[0].finish_s == pytest.approx(0.050)


def test_engine_answers_its_scheduler_and_setup_follows_it() -> None:
    assert Engine("vllm").rules.scheduler == "mixed-token-budget"
    assert Engine("sglang").rules.scheduler == "prefill-first"
    assert Engine("trtllm").rules.scheduler == "capacity-micro-batch"
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=4096, gpu="H100-80GB", engine=Engine("sglang"))
    sim, notes = setup(spec, inputs)
    assert sim.sglang is not None
    # SGLang's default chunked prefill on an 80 GiB GPU (server_args.py): 8,192 tokens.
    assert sim.sglang.chunked_prefill_size == 8192
    # ModelRunner: min(clamp(tokens / 4,096 x 512, 2,048, 4,096), tokens // 2).
    tokens = sim.plan.token_capacity
    assert sim.sglang.max_running_requests == min(max(min(tokens * 512 // 4096, 4096), 2048),
                                                  tokens // 2)
    assert "SGLang" in notes[0]
    result = simulate(sim, [RequestSpec(arrival_s=i * 0.05, prompt_len=500, output_len=50)
                            for i in range(20)])
    assert result.metrics.num_requests == 20


@pytest.mark.parametrize(("version", "running"), [("0.5.9", 3_071), ("0.5.23", 3_068)])
def test_simulate_takes_estimates_max_running_requests(version: str, running: int) -> None:
    """One rule for estimate, plan and simulate (kvplan.engines.sglang.pools): Llama-3.1-8B,
    49,150 tokens of 131,072 B (tests/test_sglang_pools.py), page 64, context 8,192: 0.5.9 reads
    the profiled 49,150 tokens, int(49,150 / 8,192 x 512) = 3,071, 0.5.23 the pool's 49,088,
    3,068; the scheduler's min(tokens // 2 = 24,544, that) is the same. --max-running-requests
    given (inputs.max_num_seqs) is the cap itself."""
    spec = load_model("llama-3.1-8b")[0]
    kw = {"context": 8192, "gpu": "H100-80GB", "engine": Engine("sglang"),
          "engine_version": version, "kv_budget_gib": 49_150 / 8192, "block_size": 64}
    sim, notes = setup(spec, estimate_inputs(spec, **kw))
    assert sim.plan.token_capacity == 49_088
    assert sim.sglang.max_running_requests == sim.plan.max_running_requests == running
    assert f"max_running_requests {running:,}" in notes[0]
    given, _ = setup(spec, estimate_inputs(spec, max_num_seqs=8, **kw))
    assert given.sglang.max_running_requests == 8
    # 3,000 tokens, context 1,024 (tests/test_sglang_pools.py): the scheduler takes at most
    # tokens // 2 = 1,500 by default at every release; --max-running-requests 3,000 is taken
    # as given to 0.5.9 (model_runner.py 0.5.9:593-600: min(given // dp, max_num_reqs = given)),
    # capped at 1,500 from 0.5.14.
    tiny = {**kw, "context": 1024, "kv_budget_gib": 3_000 / 8192, "block_size": 1}
    default, _ = setup(spec, estimate_inputs(spec, **tiny))
    assert default.sglang.max_running_requests == 1_500
    mine, _ = setup(spec, estimate_inputs(spec, max_num_seqs=3_000, **tiny))
    assert mine.sglang.max_running_requests == (3_000 if version == "0.5.9" else 1_500)


def test_cli_sglang_and_refusals() -> None:
    ok = runner.invoke(app, ["simulate", "llama-3.1-8b", "--engine", "sglang", "--gpu",
                             "H100-80GB", "--max-model-len", "4096", "--rate", "5",
                             "--num-requests", "20", "--input-len", "300", "--output-len",
                             "20", "--schedule-policy", "lpm", "--format", "json"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["simulate", "llama-3.1-8b", "--engine", "sglang", "--gpu",
                              "H100-80GB", "--max-model-len", "4096", "--rate", "5",
                              "--num-requests", "5", "--schedule-policy", "lifo"])
    assert bad.exit_code == 2
    assert "--schedule-policy" in bad.output
    trt = runner.invoke(app, ["simulate", "llama-3.1-8b", "--engine", "trtllm", "--gpu",
                              "H100-80GB", "--max-model-len", "4096", "--rate", "5",
                              "--num-requests", "5"])
    assert trt.exit_code == 0, trt.output  # TensorRT-LLM's scheduler is simulated too


class _LinearCost:
    """1 ms + 1 us per token + 1 ns per attended key: steps of unequal length."""

    def __init__(self, full: bool = True) -> None:
        self.full_attention_only = full

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        tokens = len(decode_contexts) + sum(n for _, n in chunks)
        keys = sum(decode_contexts) + sum(s * n + n * (n + 1) // 2 for s, n in chunks)
        return 1e-3 + tokens * 1e-6 + keys * 1e-9

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return self.seconds(decode_contexts=[decode_keys] + [0] * (decodes - 1) if decodes
                            else [], chunks=chunks)


_sg_workloads = st.fixed_dictionaries({
    "n": st.integers(1, 30),
    "prompt": st.tuples(st.integers(1, 300), st.integers(0, 300)),
    "output": st.tuples(st.integers(1, 150), st.integers(0, 150)),
    "rate": st.one_of(st.none(), st.floats(0.5, 500)),
    "concurrency": st.one_of(st.none(), st.integers(1, 12)),
    "tokens": st.integers(0, 4000),
    "chunk": st.one_of(st.none(), st.integers(8, 512)),
    "running": st.integers(1, 16),
    "seed": st.integers(0, 1000),
    "caching": st.booleans(),
    "prefix": st.integers(0, 64),
    "overlap": st.booleans(),
    "full": st.booleans(),
    "recv": st.sampled_from((1, 1, 2, 3, 30)),  # --scheduler-recv-interval
})


def _sg_run(w: dict, *, bulk: bool):  # type: ignore[no-untyped-def,type-arg]
    lo, extra = w["prompt"]
    olo, oextra = w["output"]
    concurrency = w["concurrency"] if w["concurrency"] or w["rate"] else 4
    specs = list(synthetic(num_requests=w["n"],
                           input_len=LengthDist(kind="uniform", a=lo, b=lo + extra),
                           output_len=LengthDist(kind="uniform", a=olo, b=olo + oextra),
                           rate=w["rate"], prefix_len=w["prefix"], seed=w["seed"]))
    longest = max(s.prompt_len + s.output_len for s in specs)
    pool = KVPool(max(w["tokens"], longest + 2) + 1, (GroupRule(kind="full", block_size=1),),
                  caching=w["caching"])
    sim = SglangSimulator(pool, SchedulerConfig(max_num_seqs=w["running"],
                                                max_num_batched_tokens=w["chunk"] or 16384,
                                                max_model_len=longest,
                                                async_scheduling=w["overlap"]),
                          _LinearCost(w["full"]),
                          SglangSchedule(chunked_prefill_size=w["chunk"],
                                         max_running_requests=w["running"],
                                         recv_interval=w["recv"]),
                          timeline=True, bulk_decode=bulk)
    return specs, sim.run(specs, concurrency=concurrency), pool


@settings(max_examples=60, deadline=None)
@given(_sg_workloads)
def test_sglang_decode_runs_change_nothing(w: dict) -> None:  # type: ignore[type-arg]
    """The decode runs taken at once (SglangSimulator._decode_run, for speed) give the same
    run as the step-by-step path: every request's first token, finish and retractions, the
    steps, the pool's usage per step, every inter-token gap."""
    specs, a, pool_a = _sg_run(w, bulk=True)
    _, b, pool_b = _sg_run(w, bulk=False)
    assert len(a.finished) == len(specs)
    key_a = [(r.rid, r.first_token_s, r.finish_s, r.preemptions) for r in a.finished]
    key_b = [(r.rid, r.first_token_s, r.finish_s, r.preemptions) for r in b.finished]
    assert [k[0] for k in key_a] == [k[0] for k in key_b]
    for x, y in zip(key_a, key_b, strict=True):
        assert x[1:3] == pytest.approx(y[1:3], rel=1e-12) and x[3] == y[3]
    assert (a.steps, a.preemptions, a.prefix_hits) == (b.steps, b.preemptions, b.prefix_hits)
    assert a.usage_max == pytest.approx(b.usage_max, rel=1e-12)
    assert a.timeline is not None and b.timeline is not None
    assert [(s.running, s.waiting, s.tokens) for s in a.timeline] == [
        (s.running, s.waiting, s.tokens) for s in b.timeline]
    assert [s.kv_usage for s in a.timeline] == pytest.approx([s.kv_usage for s in b.timeline],
                                                            rel=1e-12, abs=1e-15)
    assert sum(a.itl_weights) == sum(b.itl_weights) == sum(s.output_len - 1 for s in specs)
    ia, ib = summary_ms(a.itl_values, a.itl_weights), summary_ms(b.itl_values, b.itl_weights)
    for k in ia:
        assert (ia[k] is None and ib[k] is None) or ia[k] == pytest.approx(ib[k], rel=1e-9)
    assert pool_a.num_free == pool_a.usable and pool_b.num_free == pool_b.usable


def test_sglang_chunked_prompt_alone_is_served() -> None:
    """A closed loop of one request whose prompt needs several chunks: between its chunks the
    request is in neither queue (SglangSimulator.chunked), and the engine used to take itself
    for idle and wait for ever (the bench's AccelMark suite D run, 28,650-token prompts)."""
    sim = _engine(10_000, chunk=100)
    specs = [RequestSpec(arrival_s=0.0, prompt_len=450, output_len=3) for _ in range(2)]
    state = sim.run(specs, concurrency=1)
    # Each: 5 prefill steps of 10 ms (100 x 4 + 50), then 2 decode steps.
    assert [round(r.finish_s - r.sent_s, 9) for r in state.finished] == [0.07, 0.07]
    assert [round(r.first_token_s - r.sent_s, 9) for r in state.finished] == [0.05, 0.05]


def test_sglang_prefill_step_pays_its_eager_launch() -> None:
    # SGLang 0.5.6 runs every extend (prefill) batch eagerly: model_executor/
    # cuda_graph_runner.py:272 captures ForwardMode.DECODE only and server_args.py:508 leaves
    # enable_piecewise_cuda_graph False. The simulator's prefill step adds what the cost model's
    # prefill step adds (roofline `prefill_launch`): ops x 63.2 us. Llama-3.1-8B on one H100
    # (models/llama.py, tests/test_costmodel.py's count): per layer input norm, qkv_proj,
    # rotary_emb, set_kv_buffer, attention, o_proj, post-attention norm, gate_up_proj,
    # SiluAndMul, down_proj (10); 32 x 10 + embedding, final norm, lm_head = 323 ops, no
    # all-reduce on one GPU: 323 x 63.2 us = 20.4136 ms per prefill step, however many prompts
    # (21.641 at 67 us, before hopperops65's refit).
    from kvplan.perf.mixed_step import MixedStepCost

    spec = load_model("llama-3.1-8b")[0]
    sim, _ = setup(spec, estimate_inputs(spec, context=4096, gpu="H100-80GB",
                                         engine=Engine("sglang")))
    cost = sim.cost
    assert isinstance(cost, MixedStepCost) and cost.eager_prefill
    graphed = MixedStepCost(spec, cost.gpu, eff=cost.eff)  # the same step without the launch
    for chunks in ([(0, 1000)], [(0, 500), (0, 300)], [(200, 64)]):
        step = cost.seconds(decode_contexts=[], chunks=chunks)
        assert step - graphed.seconds(decode_contexts=[], chunks=chunks) == pytest.approx(
            0.0204136, abs=1e-9)
        assert cost.seconds_from_sums(0, 0, chunks) == pytest.approx(step, rel=1e-12)
    # A decode step replays its CUDA graph: no launch time.
    assert cost.seconds(decode_contexts=[600, 700], chunks=[]) == graphed.seconds(
        decode_contexts=[600, 700], chunks=[])
    # One request alone: its TTFT is its one prefill step, the launch included.
    alone = simulate(sim, [RequestSpec(arrival_s=0.0, prompt_len=1000, output_len=2)])
    assert alone.metrics.ttft_ms["mean"] == pytest.approx(
        cost.seconds(decode_contexts=[], chunks=[(0, 1000)]) * 1e3, rel=1e-9)
    # vLLM replays its prefills from piecewise CUDA graphs (engine_efficiency: no launch time).
    vllm, _ = setup(spec, estimate_inputs(spec, context=4096, gpu="H100-80GB",
                                          engine=Engine("vllm")))
    assert vllm.cost.launch_seconds(1000) == 0.0


def test_sglang_input_budget_binds_with_chunked_prefill() -> None:
    """--max-prefill-tokens 16,384 beside a chunk of 16,384 (SGLang's defaults on a card of 160
    GiB or more; kvplan.engines.sglang.options.MAX_PREFILL_TOKENS): two 8,192-token prompts at
    0 would fit the chunk together, but PrefillAdder.add_one_req refuses the second, its 8,192
    tokens >= the 8,192 left of the input budget (schedule_policy.py 0.5.8.post1:715, chunked
    prefill on): A prefilled 0-10 ms, B 10-20 ms (prefill first), their first tokens at 10 and
    20 ms rather than both at 10."""
    pool = KVPool(40_001, (GroupRule(kind="full", block_size=1),), caching=False)
    sim = SglangSimulator(pool, SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=16384,
                                                max_model_len=8192 + 2),
                          _FixedCost(), SglangSchedule(chunked_prefill_size=16384,
                                                       max_running_requests=64))
    state = sim.run([RequestSpec(arrival_s=0.0, prompt_len=8192, output_len=2)
                     for _ in range(2)])
    assert sorted(round(r.first_token_s, 9) for r in state.finished) == [0.01, 0.02]


def _recv_engine(interval: int) -> SglangSimulator:
    pool = KVPool(10_001, (GroupRule(kind="full", block_size=1),), caching=False)
    return SglangSimulator(pool, SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=16384,
                                                 max_model_len=4096),
                           _FixedCost(), SglangSchedule(chunked_prefill_size=None,
                                                        max_running_requests=64,
                                                        recv_interval=interval))


@pytest.mark.parametrize("bulk", [True, False])
def test_sglang_recv_interval_takes_requests_every_n_decode_steps(bulk: bool) -> None:
    """--scheduler-recv-interval 3 (SGLang 0.5.9 managers/scheduler.py:1222-1227,
    scheduler_recv_skipper.py; weights environ.py:232-235), 10 ms a step, overlap off. A (100
    in, 10 out) arrives at 0 on an idle engine: taken at once, prefilled 0-10 ms. B (100 in, 3
    out) is sent at 15 ms. Before the step at 10 ms the counter takes the prefill's weight,
    1,000 >= 3: a receive (nothing sent yet), back to 0. A decodes 10-20. At 20 ms the counter
    is 0 + 1 (a decode step) < 3: B is not taken; at 30 ms 2 < 3; at 40 ms 3: B is taken and
    prefilled 40-50 ms (prefill first): TTFT 35 ms, not the 15 ms of interval 1 (taken at 20,
    prefilled 20-30). A: first token 10 ms, decodes at 20, 30, 40 (4 tokens), waits out B's
    prefill, then 6 more with B from 50 ms: finishes at 110 ms (interval 1: 4 tokens by 20,
    B's prefill 20-30, 8 more: 110 ms too). B decodes 50-60 and 60-70: finishes at 70 ms."""
    specs = [RequestSpec(arrival_s=0.0, prompt_len=100, output_len=10),
             RequestSpec(arrival_s=0.015, prompt_len=100, output_len=3)]
    sim = _recv_engine(3)
    sim.decode_runs = bulk
    done = {r.rid: r for r in sim.run(specs).finished}
    assert done[0].first_token_s == pytest.approx(0.010)
    assert done[1].first_token_s - done[1].sent_s == pytest.approx(0.035)
    assert done[1].finish_s == pytest.approx(0.070)
    assert done[0].finish_s == pytest.approx(0.110)
    one = {r.rid: r for r in _recv_engine(1).run(specs).finished}
    assert one[1].first_token_s - one[1].sent_s == pytest.approx(0.015)
    assert one[0].finish_s == pytest.approx(0.110)


def test_sglang_recv_interval_after_a_prefill_and_when_idle() -> None:
    """--scheduler-recv-interval 30: an idle engine takes a request at once (its loop spins
    with no last batch), and after an extend step the counter gains 1,000 >= 30, so B, sent at
    5 ms while A's prefill runs (0-10 ms), is taken at 10 ms and prefilled 10-20 ms: TTFT
    15 ms, as with interval 1."""
    state = _recv_engine(30).run([RequestSpec(arrival_s=0.0, prompt_len=100, output_len=5),
                                  RequestSpec(arrival_s=0.005, prompt_len=100, output_len=5)])
    done = {r.rid: r for r in state.finished}
    assert done[0].first_token_s == pytest.approx(0.010)
    assert done[1].first_token_s - done[1].sent_s == pytest.approx(0.015)


def test_sglang_recv_interval_options_reach_the_scheduler() -> None:
    spec = load_model("llama-3.1-8b")[0]
    inputs = estimate_inputs(spec, context=4096, gpu="H100-80GB", engine=Engine("sglang"))
    sim, _ = setup(spec, inputs, sglang=SglangOptionsSim(scheduler_recv_interval=30,
                                                         max_prefill_tokens=32768))
    assert sim.sglang is not None
    assert (sim.sglang.recv_interval, sim.sglang.max_prefill_tokens) == (30, 32768)
    default, _ = setup(spec, inputs)
    assert default.sglang is not None
    assert (default.sglang.recv_interval, default.sglang.max_prefill_tokens) == (1, 16384)
    with pytest.raises(InputError, match="DP attention"):
        setup(spec, inputs, dp=2, dp_attention=True,
              sglang=SglangOptionsSim(scheduler_recv_interval=10))
