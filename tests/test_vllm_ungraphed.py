"""vLLM's steps above its largest CUDA graph (kvplan.perf.vllm_ungraphed): the kernels counted
by hand from vLLM 0.15.1's compiled model, and the opt-in host price a step pays."""

from dataclasses import replace
from pathlib import Path

import pytest

from kvplan import load_spec
from kvplan.engines.vllm.budget import vllm_cuda_graph_sizes
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.vllm_ungraphed import VLLM_UNGRAPHED_LAUNCH_S, vllm_ungraphed_ops

CONFIGS = Path(__file__).parent / "data" / "configs"


def test_llama_8b_step_above_graphs_by_hand() -> None:
    # Llama-3.1-8B (32 layers, bf16, one GPU), an 8,192-token step (above vLLM's largest graph,
    # 512): per layer input norm 1 + qkv_proj 1 + rotary 1 + KV write 1 + attention 1 + o_proj 1
    # + post-attention norm 1 = 7, MLP gate_up 1 + SiluAndMul 1 + down 1 = 3: 10 x 32 = 320,
    # + embedding, final norm, lm_head = 323 kernels; x 4.4 us = 1.4212 ms.
    spec = load_spec(str(CONFIGS / "llama-3.1-8b.json"))
    assert vllm_ungraphed_ops(spec) == 323
    assert 323 * VLLM_UNGRAPHED_LAUNCH_S == pytest.approx(1.4212e-3)
    # TP 2: two all-reduces a layer and one after the embedding: 12 x 32 + 4 = 388.
    assert vllm_ungraphed_ops(spec, Layout(tp=2)) == 388


def test_qwen3_moe_by_hand() -> None:
    # Qwen3-30B-A3B (48 layers, all MoE, per-head q/k norms): attention 1 + 1 + 2 + 1 + 2 + 1
    # + 1 = 9; MoE router 1 + top-k 1 + moe_align and its zeroing 2 + two grouped GEMMs 2 +
    # act 1 + moe_sum 1 = 8: 17 x 48 + 3 = 819.
    assert vllm_ungraphed_ops(load_spec(str(CONFIGS / "qwen3-30b-a3b.json"))) == 819


def test_mla_not_counted() -> None:
    assert vllm_ungraphed_ops(load_spec(str(CONFIGS / "deepseek-v2-lite.json"))) is None


def test_step_cost_charges_only_above_the_largest_graph() -> None:
    spec = load_spec(str(CONFIGS / "llama-3.1-8b.json"))
    gpu = get_gpu("H100-80GB")
    sizes = vllm_cuda_graph_sizes(max_num_seqs=256, max_num_batched_tokens=8192)
    assert sizes[-1] == 512
    base = replace(device_efficiency(gpu), prefill_launch_s=0.0)
    off = MixedStepCost(spec, gpu, eff=base, graph_sizes=sizes)
    on = MixedStepCost(spec, gpu, eff=replace(base, ungraphed_launch_s=VLLM_UNGRAPHED_LAUNCH_S),
                       graph_sizes=sizes)
    for n, extra in ((512, 0.0), (513, 323 * VLLM_UNGRAPHED_LAUNCH_S),
                     (8192, 323 * VLLM_UNGRAPHED_LAUNCH_S)):
        chunks = [(0, n)]
        assert on.seconds(decode_contexts=[], chunks=chunks) == pytest.approx(
            off.seconds(decode_contexts=[], chunks=chunks) + extra)
        assert on.seconds_from_sums(0, 0, chunks) == pytest.approx(
            off.seconds_from_sums(0, 0, chunks) + extra)
    # No graphs captured (--enforce-eager): nothing charged here.
    bare = MixedStepCost(spec, gpu, eff=replace(base, ungraphed_launch_s=1e-3))
    assert bare.ungraphed_seconds(8192) == 0.0
