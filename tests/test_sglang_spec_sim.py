"""SGLang's EAGLE / NEXTN chain speculative decoding in `kvplan simulate`
(kvplan.analysis.simulate.sglang_spec_sim, kvplan.engines.sglang.spec_decode): the step's
composition and KV slots worked by hand, the release's retraction check, tree drafting refused,
more acceptance never slowing a run, and the cost model's TPOT falling with acceptance."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest
from kvplan.analysis.simulate.sglang_scheduler import SglangSchedule
from kvplan.analysis.simulate.sglang_spec_sim import SglangSpecSimulator
from kvplan.analysis.simulate.spec_acceptance import Acceptance
from kvplan.analysis.simulate.spec_sim import SpecDecodeSim
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.sglang.spec_decode import SglangSpecDecode, check_chain
from kvplan.sources.resolve import load_model

runner = CliRunner()
STEP_S = 0.010


class _FixedCost:
    """Every forward takes 10 ms; lm_head rows cost nothing."""

    full_attention_only = True
    spec = None

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return STEP_S if decode_contexts or chunks else 0.0

    def head_seconds(self, rows: int) -> float:
        return 0.0

    def for_spec(self, spec: object, *, eager_prefill: bool | None = None,
                 verify: bool = False) -> _FixedCost:
        return self


class _FreeDraft(_FixedCost):
    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return 0.0


class _Linear:
    """A cost that shows its inputs: `a` a chunk token, `b` a decode, `c` a context token of a
    decode, `h` an lm_head row; `graphed` marks the copy for_spec(eager_prefill=False) gives."""

    full_attention_only = True
    spec = None

    def __init__(self, a: float, b: float, c: float, h: float, graphed: bool = False) -> None:
        self.a, self.b, self.c, self.h, self.graphed = a, b, c, h, graphed

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        return (self.a * sum(n for _, n in chunks) + self.b * len(decode_contexts)
                + self.c * sum(decode_contexts) + (1e3 if chunks and not self.graphed else 0))

    def head_seconds(self, rows: int) -> float:
        return self.h * rows

    def for_spec(self, spec: object, *, eager_prefill: bool | None = None,
                 verify: bool = False) -> _Linear:
        return _Linear(self.a, self.b, self.c, self.h, graphed=eager_prefill is False)


def _sim(steps: int, acceptance: Acceptance, *, version: str = "0.5.6", tokens: int = 400,
         seed: int = 0, target: object = None, draft: object = None,
         caching: bool = False) -> SglangSpecSimulator:
    rule = SglangSpecDecode(method="eagle", num_steps=steps, engine_version=version)
    target = target or _FixedCost()
    spec = SpecDecodeSim(rule=rule, acceptance=acceptance, target_cost=target,  # type: ignore[arg-type]
                         draft_cost=draft or _FreeDraft(), seed=seed)  # type: ignore[arg-type]
    pool = KVPool(tokens, (GroupRule(kind="full", block_size=1),), caching=caching)
    config = SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=8192, max_model_len=4096)
    sched = SglangSchedule(chunked_prefill_size=8192, max_running_requests=8)
    return SglangSpecSimulator(pool, config, target, sched, spec)  # type: ignore[arg-type]


def _req(rid: int, prompt: int, out: int) -> SimRequest:
    return SimRequest(rid, RequestSpec(arrival_s=0.0, prompt_len=prompt, output_len=out), 0.0, 1)


def test_step_composition_and_kv_by_hand() -> None:
    """S 2 (num_draft_tokens 3), page size 1, a 15-token prompt, 10 outputs, every draft
    accepted: step 1 prefills 15 (15 slots), first token. Each decode verifies 3 tokens (15 + 3 =
    18 slots), both drafts accepted: computed 18, outputs 1 + 3 = 4; then 21 / 7, 24 / 10: done.
    Nothing rejected, nothing freed: the request holds exactly its computed tokens."""
    sim = _sim(2, Acceptance.of(k=2, rates=(1.0, 1.0)))
    req = _req(0, 15, 10)
    sim.waiting.append(req)
    expected = [(15, 15, 15, 1), (3, 18, 18, 4), (3, 21, 21, 7), (3, 24, 24, 10)]
    clock = 0.0
    for tokens, slots, computed, outputs in expected:
        scheduled = sim.schedule()
        assert scheduled == [(req, tokens)]
        assert req.alloc == [slots]
        sim._finish_step(scheduled, clock, STEP_S)
        clock += STEP_S
        assert (req.num_computed, req.num_output) == (computed, outputs)
    assert (sim.drafted, sim.accepted, sim.verifies) == (6, 6, 3)


@pytest.mark.parametrize("caching", [False, True])
def test_rejected_draft_slots_are_freed(caching: bool) -> None:
    """Acceptance 0, S 2: each verify takes 3 slots (16 + 3 = 19 at the first) and frees the 2
    rejected ones after it (eagle_info.py 0.5.6 :410-419): 17 held, 399 - 17 = 382 free (the
    pool keeps one null block of its 400); the
    next verify takes 17 + 3 = 20 and keeps 18. The same with the radix cache on (the freed
    slots were never hashed)."""
    sim = _sim(2, Acceptance.of(k=2, rates=(0.0, 0.0)), caching=caching)
    req = _req(0, 16, 4)
    sim.waiting.append(req)
    sim._finish_step(sim.schedule(), 0.0, STEP_S)  # the prefill: 16 slots
    scheduled = sim.schedule()
    assert scheduled == [(req, 3)] and req.alloc == [19]
    sim._finish_step(scheduled, STEP_S, STEP_S)
    assert (req.num_computed, req.num_output, req.alloc) == (17, 2, [17])
    assert sim.pool.num_free == 399 - 17
    scheduled = sim.schedule()
    assert req.alloc == [20]
    sim._finish_step(scheduled, 2 * STEP_S, STEP_S)
    assert req.alloc == [18]


def test_step_seconds_by_hand() -> None:
    """S 3, two decodes at 100 and 200 computed tokens (each verifies 4 tokens). Target (a 1e-3
    a chunk token, h 1e-5 a row, graphed: no 1e3 eager charge): 8 x 1e-3 + 6 extra rows x 1e-5 =
    0.00806. Draft (b 1e-4 a decode, c 1e-7 a context token): 2 one-token passes, the i-th at
    computed + 1 + i: 102 + 202 = 304 and 103 + 203 = 306: 2 x 2 x 1e-4 + 610 x 1e-7 =
    0.000461; the extend of 4 tokens a request (a 1e-6, graphed): 8e-6. Sum 0.008529. A
    prefill batch of one
    16-token chunk: target 16e-3 + 1e3 (eager) and the draft's extend 16e-6 + 1e3."""
    target, draft = _Linear(1e-3, 0.0, 0.0, 1e-5), _Linear(1e-6, 1e-4, 1e-7, 0.0)
    sim = _sim(3, Acceptance.of(k=3, rates=(0.5, 0.2, 0.1)), target=target, draft=draft)
    a, b = _req(0, 100, 50), _req(1, 200, 50)
    for r in (a, b):
        r.num_computed, r.num_output = r.prompt_len, 1
    assert sim.step_seconds([(a, 4), (b, 4)]) == pytest.approx(0.008529)
    p = _req(2, 16, 5)
    assert sim.step_seconds([(p, 16)]) == pytest.approx(16e-3 + 1e3 + 16e-6 + 1e3)


def test_retraction_check_by_release() -> None:
    """check_decode_mem before a decode batch, S 3: 0.5.6 num_draft_tokens + topk x steps =
    4 + 3 = 7 a request, retract_decode's loop 1; 0.5.7 passes the 7 to the loop; 0.5.9
    max(3, 4) = 4 for both. Releases not read are refused."""
    def rule(v: str) -> SglangSpecDecode:
        return SglangSpecDecode(method="mtp", num_steps=3, engine_version=v)
    got = {v: (rule(v).decode_check_tokens(), rule(v).retract_keep_tokens())
           for v in ("0.5.3", "0.5.6", "0.5.7", "0.5.9")}
    assert got == {"0.5.3": (7, 1), "0.5.6": (7, 1), "0.5.7": (7, 7), "0.5.9": (4, 4)}
    for v in ("0.4.9", "0.5.8", "0.5.10"):
        with pytest.raises(InputError, match="0.5.3 - 0.5.7 or 0.5.9"):
            rule(v).decode_check_tokens()
    old = rule("0.5.6")
    assert (old.verify_tokens, old.one_token_draft_passes, old.draft_extend_tokens) == (4, 2, 4)


def test_retraction_from_the_back() -> None:
    """0.5.6, S 2, nothing accepted, a pool of 37 usable tokens (38 less the null block): two
    requests of 10 prompt and 8 output tokens are admitted together (10 + 8 = 18 < 37, then
    18 < 37 - 18 = 19) and hold 20; each decode step adds one token a request (3 taken, 2
    freed): 22, 24, 26, 28 held after four.
    Then 9 free < 2 x 5 (check_decode_mem's 3 + 2 a request): the last admitted is retracted
    (no sort with speculative decoding), 9 + 14 = 23 free >= 1 x 1, and the other verifies."""
    sim = _sim(2, Acceptance.of(k=2, rates=(0.0, 0.0)), tokens=38)
    a, b = _req(0, 10, 8), _req(1, 10, 8)
    sim.waiting.extend([a, b])
    for i in range(5):  # the prefill, then four decode steps
        scheduled = sim.schedule()
        assert len(scheduled) == 2
        sim._finish_step(scheduled, i * STEP_S, STEP_S)
    assert sim.pool.num_free == 9 and (a.num_output, b.num_output) == (5, 5)
    assert sim.schedule() == [(a, 3)]
    assert list(sim.waiting) == [b] and b.preemptions == 1 and b.num_computed == 0


def test_tree_refused() -> None:
    with pytest.raises(InputError, match="chain"):
        check_chain(2)
    check_chain(1)
    check_chain(None)


@settings(max_examples=25, deadline=None)
@given(a=st.floats(1.0, 4.0), b=st.floats(1.0, 4.0), seed=st.integers(0, 1000))
def test_more_acceptance_never_raises_tpot(a: float, b: float, seed: int) -> None:
    """Pathwise from one seed (Acceptance.draw: one uniform per position): a higher mean
    acceptance length accepts at least as many drafts every step, so TPOT is no higher."""
    lo, hi = sorted((a, b))
    tpot = []
    for length in (lo, hi):
        sim = _sim(3, Acceptance.of(k=3, mean_accept_len=length), seed=seed)
        r = sim.run([RequestSpec(arrival_s=0.0, prompt_len=16, output_len=200)]).finished[0]
        tpot.append((r.finish_s - r.first_token_s) / 199)
    assert tpot[1] <= tpot[0] + 1e-12


def _llama_run(length: float | None, *, steps: int = 3) -> float:
    spec = load_model("llama-3.1-8b")[0]
    kw = {} if length is None else {"speculative_method": "eagle3",
                                    "num_speculative_tokens": steps}
    inputs = estimate_inputs(spec, context=8192, gpu="H100-80GB", engine=Engine.sglang,
                             engine_version="0.5.6", **kw)  # type: ignore[arg-type]
    acc = None if length is None else Acceptance.of(k=steps, mean_accept_len=length)
    sim, _ = setup(spec, inputs, acceptance=acc)
    res = simulate(sim, [RequestSpec(arrival_s=0.0, prompt_len=512, output_len=256)])
    return res.metrics.tpot_ms["mean"] or 0.0


def test_cost_model_tpot_falls_with_acceptance() -> None:
    """Llama-3.1-8B, SGLang 0.5.6 on an H100, one request: nothing accepted costs more than no
    drafts (4 tokens verified, the draft's passes); TPOT falls as acceptance rises."""
    base = _llama_run(None)
    tpots = [_llama_run(length) for length in (1.0, 2.0, 3.0, 4.0)]
    assert tpots[0] > base
    assert tpots == sorted(tpots, reverse=True)
    assert tpots[-1] < base


def test_cli_sglang_spec_json_and_refusals() -> None:
    args = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--engine", "sglang",
            "--engine-version", "0.5.9", "--num-requests", "6", "--concurrency", "2",
            "--input-len", "256", "--output-len", "32", "--speculative-method", "eagle",
            "--num-speculative-tokens", "3"]
    ok = runner.invoke(app, [*args, "--spec-mean-accept-len", "2.5", "--format", "json"])
    assert ok.exit_code == 0, ok.output
    sd = json.loads(ok.stdout)["spec_decode"]
    assert (sd["method"], sd["k"], sd["drafted_tokens"] > 0) == ("eagle", 3, True)
    tree = runner.invoke(app, [*args, "--spec-mean-accept-len", "2.5",
                               "--speculative-eagle-topk", "2"])
    assert tree.exit_code == 2 and "chain" in tree.stderr
    assert "Traceback" not in tree.output and len(tree.stderr.strip().splitlines()) == 1
    missing = runner.invoke(app, args)
    assert missing.exit_code == 2 and "--spec-mean-accept-len" in missing.stderr
