"""SGLang replays its speculative steps from CUDA graphs it captured, taking a batch by its
requests (kvplan.engines.decode_graphs; issue 30): the target's verify of bs x (S + 1) tokens,
the draft's passes and its draft extend are captured for bs <= --cuda-graph-max-bs, as a decode
step is, in `estimate` (kvplan.perf.costmodel) and `simulate`
(kvplan.analysis.simulate.sglang_spec_sim).

The worked example throughout: DeepSeek-V3 (block FP8) on B200, TP 8, SGLang 0.5.9, NEXTN (MTP)
with S = k = 3 draft tokens (--speculative-num-draft-tokens 4), at --cuda-graph-max-bs 8 (the
DecodeGraphs that flag gives; kvplan reads SGLang's default by GPU memory, 512 on B200). What a
captured step hides is tests/test_shared_stream.py's: the shared expert's 4 kernels at the 4 us
floor less its weights' 0.998 us streaming = 15.002 us in each MoE layer, the routed experts
being longer at these few tokens (16 a verify at batch 4)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.plan_search import _cost_setup, evaluate
from kvplan.analysis.plan_types import Layout as PlanLayout
from kvplan.analysis.plan_types import PlanRequest
from kvplan.analysis.simulate.engine_setups import step_cost
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.scheduler import SchedulerConfig, SimRequest
from kvplan.analysis.simulate.sglang_scheduler import SglangSchedule
from kvplan.analysis.simulate.sglang_spec_sim import SglangSpecSimulator
from kvplan.analysis.simulate.spec_acceptance import Acceptance
from kvplan.analysis.simulate.spec_sim import SpecDecodeSim, draft_layer_spec
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine, PlanInputs, gpu_inputs
from kvplan.engines.decode_graphs import NO_DECODE_GRAPHS, DecodeGraphs
from kvplan.engines.sglang.spec_decode import SglangSpecDecode
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.costmodel import predict

K = 3  # draft tokens a step: a verify of 1 + K = 4 tokens a request
MAX_BS = 8  # --cuda-graph-max-bs
MOE_LAYERS = 58  # DeepSeek-V3: 61 layers, the first 3 dense
HIDDEN_S = 15.002e-6  # a captured MoE layer's hidden shared expert (module docstring)
CONTEXT = 2048


def test_captured_batch_sizes_count_requests() -> None:
    """At --cuda-graph-max-bs 8 with k = 3, can_run takes batches of 1..8 requests (4..32
    verify tokens), not 9 (36); comparing the verify's tokens with 8, as kvplan did before,
    took only batches 1 and 2 (4 and 8 tokens). A step holding a prefill chunk is an eager
    extend; the verify / draft-extend runners take their S + 1 tokens a request."""
    graphs = DecodeGraphs(max_requests=MAX_BS)
    assert [b for b in range(1, 12) if graphs.replays(b)] == list(range(1, 9))
    assert [b for b in range(1, 12) if b * (1 + K) <= MAX_BS] == [1, 2]  # the old test
    assert not graphs.replays(4, chunks=True)
    assert graphs.verifying().replays(4, chunks=True)
    assert not graphs.verifying().replays(9, chunks=True)
    assert not NO_DECODE_GRAPHS.replays(1) and not NO_DECODE_GRAPHS.verifying().replays(1)


def test_sglang_default_on_b200_tp8() -> None:
    """B200 (nvidia-smi 183 GiB >= 160): --cuda-graph-max-bs 512 at any TP
    (sglang_graph_defaults). With k = 3 a verify of 512 requests (2,048 tokens) is captured,
    513 is not; the old token test stopped at 128 requests (512 tokens)."""
    sglang = Engine("sglang")
    graphs = sglang.rules.decode_graphs(
        PlanInputs(context=CONTEXT, tp=8, engine=sglang, **gpu_inputs(get_gpu("B200"))))
    assert graphs == DecodeGraphs(max_requests=512)
    assert graphs.replays(512) and not graphs.replays(513)
    assert graphs.replays(200)  # 800 verify tokens


def _cost_inputs():  # type: ignore[no-untyped-def]
    """estimate / plan's cost inputs for DeepSeek-V3 B200 TP 8 SGLang 0.5.9 (capest67's)."""
    spec, gpu = load_spec("deepseek-v3"), get_gpu("B200")
    req = PlanRequest(concurrency=4, context=8192, gpu=gpu, engine=Engine("sglang"),
                      engine_version="0.5.9")
    cand = evaluate(spec, req, gpu, PlanLayout(tp=8), "bf16", None, 8192)
    assert cand is not None
    served, g, ci = _cost_setup(spec, req, cand)
    return served, g, replace(ci, context=CONTEXT, draft_tokens=K)


def test_cost_model_captures_verify_and_draft_passes() -> None:
    """Batch 4, k = 3: the verify (16 tokens) hides the shared expert in its 58 MoE layers and
    each of the 3 draft passes (one MoE layer, layer 60's shape) in its one: (58 + 3) x 15.002
    us = 0.9151 ms less than with no graphs. At batch 9 (over 8) neither is captured."""
    served, gpu, ci = _cost_inputs()

    def step_ms(batch: int, graphs: DecodeGraphs) -> float:
        return predict(served, gpu, replace(ci, batch=batch, graphs=graphs)).decode_step_ms

    graphs = DecodeGraphs(max_requests=MAX_BS)
    hidden_ms = step_ms(4, NO_DECODE_GRAPHS) - step_ms(4, graphs)
    assert hidden_ms == pytest.approx((MOE_LAYERS + K) * HIDDEN_S * 1e3, rel=1e-4)
    assert step_ms(9, graphs) == step_ms(9, NO_DECODE_GRAPHS)


def _decoding(rid: int) -> SimRequest:
    """A request past its prompt of CONTEXT - 1 tokens, its first token out."""
    req = SimRequest(rid, RequestSpec(arrival_s=0.0, prompt_len=CONTEXT - 1, output_len=64),
                     0.0, 1)
    req.num_output, req.num_computed = 1, CONTEXT - 1
    return req


def _spec_step_s(graphs: DecodeGraphs, batch: int) -> float:
    """SglangSpecSimulator's decode step (verify, S - 1 = 2 draft passes, one draft extend)
    for `batch` decoding requests, the target's and draft's steps priced by the simulator's
    own set-up for SGLang 0.5.9 (step_cost) with these graphs."""
    spec = load_spec("deepseek-v3")
    inputs = estimate_inputs(spec, context=8192, kv_dtype="bf16", engine=Engine("sglang"),
                             gpu="B200", tp=8, engine_version="0.5.9")
    target = step_cost(spec, inputs, (), None, graphs)
    rule = SglangSpecDecode(method="mtp", num_steps=K, engine_version="0.5.9")
    sim_spec = SpecDecodeSim(rule=rule, acceptance=Acceptance.of(k=K, mean_accept_len=2.0),
                             target_cost=target, draft_cost=target.for_spec(
                                 draft_layer_spec(spec)))
    pool = KVPool(100_000, (GroupRule(kind="full", block_size=1),))
    config = SchedulerConfig(max_num_seqs=48, max_num_batched_tokens=16384,
                             max_model_len=8192)
    sim = SglangSpecSimulator(pool, config, target, SglangSchedule(
        chunked_prefill_size=16384, max_running_requests=48), sim_spec)
    return sim.step_seconds([(_decoding(i), 1 + K) for i in range(batch)])


def test_simulated_spec_step_captures_verify_passes_and_extend() -> None:
    """The same batch of 4 in the simulator: the verify (58 MoE layers), the 2 one-token draft
    passes and the draft extend (one MoE layer each) are captured: (58 + 2 + 1) x 15.002 us
    less than with no graphs; before this rule only the 2 passes were (2 x 15.002 us). At 9
    requests none is."""
    graphs = DecodeGraphs(max_requests=MAX_BS)
    hidden_s = _spec_step_s(NO_DECODE_GRAPHS, 4) - _spec_step_s(graphs, 4)
    assert hidden_s == pytest.approx((MOE_LAYERS + (K - 1) + 1) * HIDDEN_S, rel=1e-4)
    assert _spec_step_s(graphs, 9) == _spec_step_s(NO_DECODE_GRAPHS, 9)
