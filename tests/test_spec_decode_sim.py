"""vLLM V1's speculative decoding in `kvplan simulate` (kvplan.analysis.simulate.spec_sim,
kvplan.engines.vllm.spec_decode): the step's composition worked by hand, TPOT over the accepted
tokens, acceptance 0 as pure extra verify work, and more acceptance never slowing a run."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest
from kvplan.analysis.simulate.spec_acceptance import Acceptance, chain_rate
from kvplan.analysis.simulate.spec_sim import SpecDecodeSim, SpecSimulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.vllm.spec_decode import VllmSpecDecode
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.sources.resolve import load_model

runner = CliRunner()
STEP_S = 0.010


class _FixedCost:
    """Every forward takes 10 ms (the target's); the lm_head rows and the drafter cost nothing."""

    full_attention_only = True

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return STEP_S if decode_contexts or chunks else 0.0

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        return STEP_S

    def head_seconds(self, rows: int) -> float:
        return 0.0


class _FreeDraft(_FixedCost):
    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return 0.0


def _sim(k: int, acceptance: Acceptance, *, blocks: int = 400, seed: int = 0) -> SpecSimulator:
    spec = SpecDecodeSim(rule=VllmSpecDecode(method="eagle3", num_speculative_tokens=k),
                         acceptance=acceptance, target_cost=_FixedCost(),  # type: ignore[arg-type]
                         draft_cost=_FreeDraft(), seed=seed)  # type: ignore[arg-type]
    pool = KVPool(blocks, (GroupRule(kind="full", block_size=16),), caching=False)
    return SpecSimulator(pool, SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512,
                                               max_model_len=4096), _FixedCost(), spec)


def test_step_composition_by_hand() -> None:
    """k 2, every draft accepted (per-position rates 1, 1), block size 16, one request of a
    15-token prompt and 10 output tokens. vLLM 0.32 (kvplan.engines.vllm.spec_decode):
    step 1 prefills 15 tokens and reserves 2 lookahead slots: 17 slots, 2 blocks (1 without
    drafts); first token. Step 2 verifies 1 + 2 = 3 tokens, slots 15 + 3 + 2 = 20 (2 blocks);
    both drafts accepted: computed 15 + 3 = 18, outputs 1 + 3 = 4. Step 3: slots 18 + 5 = 23,
    computed 21, outputs 7. Step 4: slots 26 (2 blocks), computed 24, outputs 10: done."""
    sim = _sim(2, Acceptance.of(k=2, rates=(1.0, 1.0)))
    req = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=15, output_len=10), 0.0, 1)
    sim.waiting.append(req)
    expected = [(15, 2, 15, 1), (3, 2, 18, 4), (3, 2, 21, 7), (3, 2, 24, 10)]
    clock = 0.0
    for tokens, blocks, computed, outputs in expected:
        scheduled = sim.schedule()
        assert scheduled == [(req, tokens)]
        assert req.alloc == [blocks]
        sim._finish_step(scheduled, clock, STEP_S)
        clock += STEP_S
        assert (req.num_computed, req.num_output) == (computed, outputs)
    assert req.finish_s == pytest.approx(4 * STEP_S)
    assert (sim.drafted, sim.accepted, sim.verifies) == (6, 6, 3)


def test_rejected_drafts_roll_back() -> None:
    """Acceptance 0 (rates 0, 0): every verify schedules 3 tokens and advances by 1 (vLLM's
    num_computed_tokens -= num_rejected), one token a step; slots stay reserved for 1 + 2 + 2."""
    sim = _sim(2, Acceptance.of(k=2, rates=(0.0, 0.0)))
    req = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=16, output_len=4), 0.0, 1)
    sim.waiting.append(req)
    got = []
    for i in range(4):
        scheduled = sim.schedule()
        got.append((scheduled[0][1], req.alloc[0]))
        sim._finish_step(scheduled, i * STEP_S, STEP_S)
    # prefill: 16 + 2 slots = 2 blocks; decodes at 16, 17, 18 computed: 16 + 3 + 2 = 21 (2).
    assert got == [(16, 2), (3, 2), (3, 2), (3, 2)]
    assert req.num_output == 4 and req.num_computed == 19
    assert (sim.drafted, sim.accepted) == (6, 0)


def test_decode_tokens_capped_by_budget_and_max_model_len() -> None:
    rule = VllmSpecDecode(method="mtp", num_speculative_tokens=3)
    assert rule.decode_tokens(num_computed=100, max_model_len=4096, budget=8192) == 4
    assert rule.decode_tokens(num_computed=100, max_model_len=4096, budget=2) == 2
    # scheduler.py:715-721: max_model_len - num_computed - 1 = 4096 - 4093 - 1 = 2.
    assert rule.decode_tokens(num_computed=4093, max_model_len=4096, budget=8192) == 2
    assert rule.lookahead_slots == 3 and rule.one_token_draft_passes == 2


def test_tpot_is_step_over_accepted_tokens_decode_only() -> None:
    """One request, 10 ms steps: every draft accepted (k 2) gives 3 tokens a step, TPOT
    10 / 3 ms, ITL 10 ms (one chunk a step, as vllm bench serve times it); mean acceptance
    length 2.5 (k 3) gives TPOT about 10 / 2.5 = 4 ms over 3,001 tokens."""
    sim = _sim(2, Acceptance.of(k=2, rates=(1.0, 1.0)))
    st_ = sim.run([RequestSpec(arrival_s=0.0, prompt_len=16, output_len=3001)])
    r = st_.finished[0]
    assert (r.finish_s - r.first_token_s) / 3000 == pytest.approx(STEP_S / 3)
    assert st_.itl_values == pytest.approx([STEP_S] * 1000)
    sim = _sim(3, Acceptance.of(k=3, mean_accept_len=2.5))
    r = sim.run([RequestSpec(arrival_s=0.0, prompt_len=16, output_len=3001)]).finished[0]
    tpot = (r.finish_s - r.first_token_s) / 3000
    assert tpot == pytest.approx(STEP_S / 2.5, rel=0.03)
    assert 1 + sim.accepted / sim.verifies == pytest.approx(2.5, rel=0.03)


@settings(max_examples=25, deadline=None)
@given(a=st.floats(1.0, 4.0), b=st.floats(1.0, 4.0), seed=st.integers(0, 1000))
def test_more_acceptance_never_raises_tpot(a: float, b: float, seed: int) -> None:
    """Pathwise from one seed (Acceptance.draw draws one uniform per position): a higher mean
    acceptance length accepts at least as many drafts every step, so TPOT is no higher."""
    lo, hi = sorted((a, b))
    tpot = []
    for length in (lo, hi):
        sim = _sim(3, Acceptance.of(k=3, mean_accept_len=length), seed=seed)
        r = sim.run([RequestSpec(arrival_s=0.0, prompt_len=16, output_len=200)]).finished[0]
        tpot.append((r.finish_s - r.first_token_s) / 199)
    assert tpot[1] <= tpot[0] + 1e-12


def test_chain_rate_by_hand() -> None:
    # k 3, L 2.75: q + q^2 + q^3 = 1.75; q = 0.7537: 0.7537 + 0.5681 + 0.4282 = 1.7500.
    q = chain_rate(2.75, 3)
    assert q + q ** 2 + q ** 3 == pytest.approx(1.75)
    assert chain_rate(1.0, 3) == 0.0 and chain_rate(4.0, 3) == 1.0
    # per-position 0.8, 0.6, 0.3: conditional 0.8, 0.75, 0.5; L = 1 + 1.7 = 2.7.
    acc = Acceptance.of(k=3, rates=(0.8, 0.6, 0.3))
    assert acc.conditional == pytest.approx((0.8, 0.75, 0.5))
    assert acc.mean_accept_len == pytest.approx(2.7)
    rng = random.Random(1)
    mean = sum(acc.draw(rng) for _ in range(200_000)) / 200_000
    assert mean == pytest.approx(1.7, rel=0.01)
    # One average rate P 0.5 with k 3: L = 1 + 1.5.
    assert Acceptance.of(k=3, rates=(0.5,)).mean_accept_len == pytest.approx(2.5)


def test_acceptance_is_required_and_checked() -> None:
    with pytest.raises(InputError, match="acceptance"):
        Acceptance.of(k=3)
    with pytest.raises(InputError, match="outside"):
        Acceptance.of(k=3, mean_accept_len=4.5)
    with pytest.raises(InputError, match="must not rise"):
        Acceptance.of(k=2, rates=(0.5, 0.6))


def _llama_run(length: float | None, *, k: int = 3) -> dict[str, float]:
    spec = load_model("llama-3.1-8b")[0]
    kw = {} if length is None else {"speculative_method": "eagle3", "num_speculative_tokens": k}
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", **kw)  # type: ignore[arg-type]
    acc = None if length is None else Acceptance.of(k=k, mean_accept_len=length)
    sim, _ = setup(spec, inputs, acceptance=acc)
    res = simulate(sim, [RequestSpec(arrival_s=0.0, prompt_len=512, output_len=256)])
    return {"tpot": res.metrics.tpot_ms["mean"] or 0.0, "steps": res.metrics.steps,
            "itl": res.metrics.itl_ms["mean"] or 0.0}


def test_acceptance_zero_is_extra_verify_work_on_the_cost_model() -> None:
    """Llama-3.1-8B on an H100, one request: with nothing accepted the run takes the same
    steps as without drafts (one token a step), each longer (3 drafts verified, the drafter's
    3 passes); with acceptance, TPOT falls with the mean acceptance length."""
    base, zero = _llama_run(None), _llama_run(1.0)
    assert zero["steps"] == base["steps"]
    assert zero["tpot"] > base["tpot"]
    tpots = [_llama_run(length)["tpot"] for length in (1.0, 2.0, 3.0, 4.0)]
    assert tpots == sorted(tpots, reverse=True)


def test_cli_spec_decode_json_and_refusal() -> None:
    args = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--num-requests", "8",
            "--concurrency", "2", "--input-len", "256", "--output-len", "64",
            "--speculative-method", "eagle3", "--num-speculative-tokens", "3"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2
    assert "--spec-mean-accept-len" in refused.stderr and "Traceback" not in refused.output
    ok = runner.invoke(app, [*args, "--spec-mean-accept-len", "2.5", "--format", "json"])
    assert ok.exit_code == 0, ok.output
    rec = json.loads(ok.stdout)
    sd = rec["spec_decode"]
    assert (sd["method"], sd["k"]) == ("eagle3", 3)
    assert sd["mean_accept_len"] == pytest.approx(2.5)
    assert "--spec-mean-accept-len 2.5" in sd["acceptance_source"]
    assert sd["drafted_tokens"] > 0
    # vLLM's --frontend brings the API server's output stage (vllmhost62), which speculation
    # is not simulated with: one line, exit 2, no internal error.
    for flag in ("--frontend", "--api-output"):
        both = runner.invoke(app, [*args, "--spec-mean-accept-len", "2.5", flag])
        assert both.exit_code == 2 and "not simulated with" in both.stderr, both.output
        assert "internal error" not in both.output


def test_draft_launches_by_hand() -> None:
    """vLLM 0.10.0 / 0.11.0 eagle.py (kvplan.engines.vllm.spec_decode): first pass 11 host
    launches, 21 per later pass, 1 stack when k > 1; EAGLE-3 + 1 fc (first pass) + 4 a pass
    (vocabulary map). EAGLE k 1: 11; EAGLE-3 k 1: 11 + 1 + 4 = 16; EAGLE k 4: 11 + 3 x 21 +
    1 = 75; EAGLE-3 k 7: 16 + 6 x 25 + 1 = 167. Releases not read (0.9.2, 0.11.1, 0.19.0, the
    newest) charge none."""
    def rule(method: str, k: int) -> VllmSpecDecode:
        return VllmSpecDecode(method=method, num_speculative_tokens=k)
    assert rule("eagle", 1).draft_launches("0.10.0") == 11
    assert rule("eagle3", 1).draft_launches("0.11.0") == 16
    assert rule("eagle", 4).draft_launches("0.10.1") == 75
    assert rule("eagle3", 7).draft_launches("0.10.0") == 167
    for unread in ("0.9.2", "0.11.1", "0.19.0", None):
        assert rule("eagle", 4).draft_launches(unread) is None


def test_draft_launch_seconds_added_to_the_step() -> None:
    """Llama-3.1-8B on an H100 at vLLM 0.10.0, EAGLE k 3: 11 + 2 x 21 + 1 = 54 launches x
    4.4 us (kvplan.perf.vllm_ungraphed) = 237.6 us more than the same step with none; 0 at
    0.19.0 (not read)."""
    spec = load_model("llama-3.1-8b")[0]
    gpu = get_gpu("H100-80GB")
    rule = VllmSpecDecode(method="eagle", num_speculative_tokens=3)
    acc = Acceptance.of(k=3, mean_accept_len=2.0)
    eff = replace(device_efficiency(gpu), engine_version="0.10.0")
    sim = SpecDecodeSim.of(rule, acc, MixedStepCost(spec, gpu, eff=eff))
    assert sim.draft_launch_s == pytest.approx(237.6e-6)
    late = SpecDecodeSim.of(rule, acc, MixedStepCost(
        spec, gpu, eff=replace(eff, engine_version="0.19.0")))
    assert late.draft_launch_s == 0.0
    pool = KVPool(400, (GroupRule(kind="full", block_size=16),), caching=False)
    cfg = SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=512, max_model_len=4096)
    req = SimRequest(0, RequestSpec(arrival_s=0.0, prompt_len=84, output_len=8), 0.0, 1)
    req.num_computed, req.num_output = 88, 5  # decoding: computed = 84 + 5 - 1
    cost = sim.target_cost
    times = [SpecSimulator(pool, cfg, cost, s).step_seconds([(req, 4)])  # type: ignore[arg-type]
             for s in (sim, replace(sim, draft_launch_s=0.0))]
    assert times[0] - times[1] == pytest.approx(237.6e-6)
