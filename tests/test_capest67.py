"""`estimate` / `plan` price SGLang's captured decode step as `simulate` does (issue 30): one
source, EngineRules.decode_graphs (SGLang: --cuda-graph-max-bs requests by default,
kvplan.engines.sglang.budget.sglang_cuda_graph_max_bs), read by the cost model's CostInputs
(kvplan.analysis.plan_search) and the simulator's MixedStepCost (engine_setups)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.plan_search import _cost_setup, evaluate
from kvplan.analysis.plan_types import Layout as PlanLayout
from kvplan.analysis.plan_types import PlanRequest
from kvplan.analysis.simulate.engine_setups import step_cost
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.engines.decode_graphs import NO_DECODE_GRAPHS, DecodeGraphs
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.costmodel import predict

CONTEXT, MAX_LEN = 2048, 8192


def _paths():  # type: ignore[no-untyped-def]
    """DeepSeek-R1 (the deepseek-v3 bundle: R1's config.json is the same deepseek_v3 model)
    on B200 TP 8, SGLang 0.5.9, bf16 KV: (the simulator's step cost and its EstimateInputs,
    the cost model's served spec, GPU and CostInputs as `estimate` / `plan` build them)."""
    spec, gpu = load_spec("deepseek-v3"), get_gpu("B200")
    inputs = estimate_inputs(spec, context=MAX_LEN, kv_dtype="bf16", engine=Engine("sglang"),
                             gpu="B200", tp=8, engine_version="0.5.9")
    sim, _ = setup(spec, inputs)
    req = PlanRequest(concurrency=16, context=MAX_LEN, gpu=gpu, engine=Engine("sglang"),
                      engine_version="0.5.9")
    cand = evaluate(spec, req, gpu, PlanLayout(tp=8), "bf16", None, MAX_LEN)
    assert cand is not None
    served, g, cost_inputs = _cost_setup(spec, req, cand)
    return spec, inputs, sim.cost, served, g, replace(cost_inputs, context=CONTEXT)


def test_estimate_decode_step_is_simulates_at_batch_16() -> None:
    """B200 (nvidia-smi 183 GiB, >= 160) at TP 8: --cuda-graph-max-bs 512 in both paths. 16
    decodes at 2,048 keys: estimate's decode step is the simulator's decode-only step to the
    last bit, and both hide the shared expert: 58 MoE layers x (4 kernels x 4 us floor - its
    weights' 0.998 us streaming) = 58 x 15.002 us = 0.870 ms (tests/test_shared_stream.py)."""
    spec, inputs, sim_cost, served, gpu, ci = _paths()
    assert ci.graphs == sim_cost.graphs == DecodeGraphs(max_requests=512)
    est = predict(served, gpu, replace(ci, batch=16)).decode_step_ms
    sim = sim_cost.seconds(decode_contexts=[CONTEXT] * 16, chunks=[]) * 1e3
    assert est == sim
    uncaptured = predict(served, gpu, replace(ci, batch=16, graphs=NO_DECODE_GRAPHS)).decode_step_ms
    assert uncaptured - est == pytest.approx(58 * 15.002e-3, rel=1e-4)
    eager = step_cost(spec, inputs, (), None)
    assert eager.seconds(decode_contexts=[CONTEXT] * 16, chunks=[]) * 1e3 == uncaptured


def test_above_max_bs_no_overlap_in_either_path() -> None:
    """520 decodes > 512: replayed eagerly in SGLang (cuda_graph_runner can_run false), so
    neither path hides the shared expert (each equal to its own path with no capture)."""
    spec, inputs, sim_cost, served, gpu, ci = _paths()
    est = predict(served, gpu, replace(ci, batch=520)).decode_step_ms
    none = replace(ci, batch=520, graphs=NO_DECODE_GRAPHS)
    assert est == predict(served, gpu, none).decode_step_ms
    eager = step_cost(spec, inputs, (), None)
    assert sim_cost.seconds(decode_contexts=[CONTEXT] * 520, chunks=[]) == eager.seconds(
        decode_contexts=[CONTEXT] * 520, chunks=[])


def test_vllm_and_trtllm_price_no_captured_step() -> None:
    """vLLM's and TensorRT-LLM's rules price no captured step (their graphs pad by
    decode_graph_sizes; no rule of theirs reads step_time's `captured`)."""
    _, inputs, *_ = _paths()
    for engine in ("vllm", "trtllm"):
        assert Engine(engine).rules.decode_graphs(inputs.capacity) == NO_DECODE_GRAPHS
    assert Engine("sglang").rules.decode_graphs(inputs.capacity).max_requests == 512
