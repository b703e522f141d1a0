"""`kvplan plan` sizes each layout with the expert parallelism its launch command runs (task
epweights): weights, budget and blocks from `plan_capacity` at that layout's tp and ep, as
`kvplan estimate` computes them, not at its TP degree with EP only in the label."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kvplan.analysis.estimate_run import run_estimate
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.plan_search import evaluate, with_ep
from kvplan.analysis.plan_types import Layout, PlanRequest
from kvplan.capacity.weights import weights_breakdown
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.resolve import load_spec

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"


def test_vllm_tp2_dp4_ep8_weights_per_gpu_by_hand() -> None:
    """Mixtral-8x7B (config.json: hidden 4096, 32 layers, 32 heads / 8 KV heads of 128, 8
    experts of intermediate 14336, vocab 32000, untied, bf16), vLLM `--tensor-parallel-size 2
    --data-parallel-size 4 --enable-expert-parallel`: EP = TP x DP = 8 ranks
    (vllm/model_executor/layers/fused_moe/config.py:1198-1221, FusedMoEParallelConfig.make:
    tp_size flattened across DP, then ep_size = tp_size), ceil(8 / 8) = 1 expert whole per rank
    (fused_moe/expert_map_manager.py:67-69); attention, embedding and lm_head split by TP 2.
    Per layer: attention (2 x 4096^2 + 2 x 4096 x 1024) / 2 = 20,971,520; router 4096 x 8 =
    32,768 (whole); one expert 3 x 14336 x 4096 = 176,160,768; 2 norms 8,192 -> 197,173,248,
    x 32 = 6,309,543,936. Embedding and lm_head 32000 / 2 x 4096 = 65,536,000 each, final
    norm 4,096: 6,440,620,032 params x 2 B = 12,881,240,064 B, plus the rotary cos/sin cache
    32768 positions x 128 x 2 B = 8,388,608 (vllm/model_executor/layers/rotary_embedding):
    12,889,628,672 B per GPU, and FusedMoE's int32 expert map under EP, 8 entries x 4 B in
    each of the 32 layers = 1,024 B (kvplan.capacity.weights.expert_map_bytes; sizefix57):
    12,889,629,696 B, and each of the 32 attention layers' four float32 scale buffers, 16 B
    (vLLM 0.32 attention.py:133-139; sizefix58): 512 B more, 12,889,630,208 B. Sized at TP 2
    without EP (before), each GPU held half of every expert: 43.50 GiB."""
    spec = load_spec("mixtral-8x7b")
    gpu = get_gpu("H100")
    req = PlanRequest(concurrency=1, context=32768, gpu=gpu)
    lay = with_ep(spec, req, Layout(tp=2, dp=4))
    assert lay.ep == 8
    cand = evaluate(spec, req, gpu, lay, "fp8", None, 32768)
    assert cand is not None
    assert cand.capacity.weights_bytes == 12_889_628_672 + 1_024 + 32 * 16
    assert weights_breakdown(spec, tp=2, ep=8).total == 12_889_628_672


def test_plan_at_tp_ep_is_estimate_with_expert_parallel() -> None:
    """A "tp 4, ep 4" candidate has `kvplan estimate --tp 4 --enable-expert-parallel`'s numbers
    (vLLM's MoE workspace with EP does not split N: the reserve differs from TP alone; before,
    plan printed estimate's non-EP 94.86x for this layout, with EP it is 92.92x)."""
    spec = load_spec("mixtral-8x7b")
    gpu = get_gpu("H100")
    req = PlanRequest(concurrency=1, context=32768, gpu=gpu)
    cand = evaluate(spec, req, gpu, with_ep(spec, req, Layout(tp=4)), "fp8", None, 32768)
    est = run_estimate(estimate_inputs(spec, context=32768, kv_dtype="fp8", gpu="H100", tp=4,
                                       expert_parallel=True)).plan
    assert cand is not None and cand.layout.ep == 4
    assert (cand.capacity.weights_bytes, cand.capacity.reserve_bytes,
            cand.capacity.kv_budget_bytes, cand.capacity.num_blocks, cand.max_concurrency) == (
        est.weights_bytes, est.reserve_bytes, est.kv_budget_bytes, est.num_blocks,
        est.max_concurrency)


def test_ep_ranks_follow_each_engines_launch() -> None:
    """vLLM: EP spans the replicas (TP x DP); SGLang (server_args.py: tp_size % ep_size == 0,
    moe_tp_size = tp_size // ep_size) and TensorRT-LLM run EP inside the TP group, as their
    launch lines write `--ep-size TP` / `--ep_size TP`; with DP attention, the TP ranks."""
    mixtral, v3 = load_spec("mixtral-8x7b"), load_spec("deepseek-v3")
    gpu = get_gpu("H100")
    want = {Engine.vllm: 4, Engine.sglang: 2, Engine.trtllm: 2}
    for engine, ep in want.items():
        req = PlanRequest(concurrency=1, context=4096, gpu=gpu, engine=engine)
        assert with_ep(mixtral, req, Layout(tp=2, dp=2)).ep == ep
        assert with_ep(v3, req, Layout(tp=8, dp=8, dp_attention=True)).ep == 8
    # Experts that do not split evenly: no EP (Mixtral's 8 over 6 ranks).
    req = PlanRequest(concurrency=1, context=4096, gpu=gpu)
    assert with_ep(mixtral, req, Layout(tp=2, dp=3)).ep == 1
    assert with_ep(load_spec("llama-3.1-8b"), req, Layout(tp=2, dp=2)).ep == 1


def test_plan_replicas_are_sized_with_their_ep() -> None:
    """DeepSeek-V4-Flash, 64 requests of 32k on H200s (--reserve-gib 4: vLLM's V4 workspaces
    are not modelled): the plan's replicas hold ceil(256 / (TP x DP)) experts per GPU, and its
    weights are weights_breakdown's at that TP and EP (at TP 2 alone, 73.76 GiB: no layout of
    8 GPUs served it before)."""
    result = CliRunner().invoke(app, [
        "plan", str(CONFIGS / "dsv4" / "deepseek-v4-flash.json"), "-n", "64", "-c", "32k",
        "--gpu", "H200", "--reserve-gib", "4", "--format", "json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    lay = plan["layout"]
    assert lay["dp"] > 1 and lay["ep"] == lay["tp"] * lay["dp"], lay
    assert "--enable-expert-parallel" in plan["command"]
    spec = load_spec(str(CONFIGS / "dsv4" / "deepseek-v4-flash.json"))
    # vLLM's int32 expert map under EP (sizefix57): 256 entries x 4 B in each MoE layer.
    assert plan["weights_bytes"] == weights_breakdown(spec, tp=lay["tp"], ep=lay["ep"],
                                                      expert_map_entry_bytes=4).total
