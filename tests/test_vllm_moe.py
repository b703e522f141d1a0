"""vLLM's fused-MoE buffers in the profile run and the non-torch memory beyond the measured TP
(issue #26): hand-worked numbers from real configs, after the vLLM source of each release
(model_executor/layers/fused_moe/fused_moe.py fused_experts_impl and TritonExperts.
workspace_shapes, modular_kernel.py _allocate_buffers, unquantized_fused_moe_method.py,
quantization/fp8.py / fused_moe/oracle/fp8.py, envs.py VLLM_FUSED_MOE_CHUNK_SIZE; read in the
0.10.2, 0.11.0, 0.12.0, 0.13.0, 0.14.0 and 0.15.1 wheels)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvplan._util.units import GiB
from kvplan.engines.base import Engine, plan_inputs
from kvplan.engines.vllm.budget import VllmBudget, vllm_non_torch_gib
from kvplan.engines.vllm.moe import vllm_fused_moe_chunk_size, vllm_moe_workspace
from kvplan.sources.resolve import load_spec

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
DEEPSEEK_V3 = load_spec("deepseek-v3")  # hidden 7168, moe_intermediate 2048, top-k 8
QWEN3_30B = load_spec(str(CONFIGS / "qwen3-30b-a3b.json"))  # hidden 2048, 768, top-k 8
QWEN3_235B = load_spec(str(CONFIGS / "qwen3-235b-a22b.json"))  # hidden 4096, 1536, top-k 8


def test_chunk_size_by_release() -> None:
    # envs.py: "32768" in the 0.10.2 and 0.11.0 wheels, str(16 * 1024) from 0.12.0.
    assert vllm_fused_moe_chunk_size("0.10.2") == 32768
    assert vllm_fused_moe_chunk_size("0.11.0") == 32768
    assert vllm_fused_moe_chunk_size("0.12.0") == 16384
    assert vllm_fused_moe_chunk_size("0.15.1") == 16384


def test_deepseek_v3_tp8_at_0_11_is_freed_before_the_sampler() -> None:
    # DeepSeek-V3/R1 FP8 at TP 8, vLLM 0.11.0: Fp8MoEMethod.apply calls fused_experts (DeepGEMM
    # is skipped for N <= 512 on Hopper and absent from the plain wheel) -> fused_experts_impl:
    # N = w1.size(1) = 2 x 2048 / 8 = 512, K = 7168, M = min(8192, 32768) = 8192:
    # cache13 8192 x 8 x max(512, 7168) + cache2 8192 x 8 x 256 = 65,536 x 7,424 elements,
    # x 2 B = 973,078,528 B, freed when the layer returns.
    ws = vllm_moe_workspace(DEEPSEEK_V3, version="0.11.0", max_num_batched_tokens=8192, tp=8,
                            ep=1, element_bytes=2)
    assert ws is not None
    assert ws.bytes == 973_078_528
    assert not ws.persistent


def test_qwen3_30b_a3b_at_0_19_is_kept_through_the_sampler() -> None:
    # From 0.14 the unquantized method runs FusedMoEModularKernel(TritonExperts) on the workspace
    # manager. Qwen3-30B-A3B at TP 1, 8,192 tokens: N = 2 x 768 = 1536, K = 2048: workspace13
    # 8192 x 8 x max(768, 2048) = 134,217,728 (the output 8192 x 2048 shares it), workspace2
    # 8192 x 8 x max(1536, 2048) = 134,217,728; 268,435,456 elements x 2 B = 0.5 GiB. The
    # 0.19.0 H100 log (llm-d-planner PR #205) peaks at 2.68 GiB with the sampler's 2.21.
    ws = vllm_moe_workspace(QWEN3_30B, version="0.19.0", max_num_batched_tokens=8192, tp=1,
                            ep=1, element_bytes=2)
    assert ws is not None
    assert ws.bytes == 536_870_912 == GiB // 2
    assert ws.persistent


def test_the_workspace_manager_arrives_in_0_14() -> None:
    # 0.13.0: UnquantizedFusedMoEMethod.forward_cuda calls fused_experts (transient);
    # 0.14.0: self.kernel = FusedMoEModularKernel(MoEPrepareAndFinalizeNoEP(), TritonExperts).
    def persistent(version: str) -> bool:
        ws = vllm_moe_workspace(QWEN3_30B, version=version, max_num_batched_tokens=8192, tp=1,
                                ep=1, element_bytes=2)
        assert ws is not None
        return ws.persistent

    assert not persistent("0.13.0")
    assert persistent("0.14.0")


def test_expert_parallel_does_not_split_the_intermediate() -> None:
    # Qwen3-235B-A22B-Instruct-2507-FP8 at TP 8 with --enable-expert-parallel, 0.10.2 (the log
    # in tests/data/engine_logs/vllm_startup_logs.json: "E=16,N=1536" in its MoE config name):
    # FusedMoEParallelConfig.make gives the MoE layer tp_size 1, so N = 2 x 1536 = 3072, K =
    # 4096, M = 2048: 2048 x 8 x (max(3072, 4096) + 1536) x 2 B = 184,549,376 B.
    ws = vllm_moe_workspace(QWEN3_235B, version="0.10.2", max_num_batched_tokens=2048, tp=8,
                            ep=8, element_bytes=2)
    assert ws is not None and ws.bytes == 184_549_376 and not ws.persistent
    # Without EP the intermediate is split: N = 2 x 1536 / 8 = 384: 2048 x 8 x (4096 + 192) x 2.
    split = vllm_moe_workspace(QWEN3_235B, version="0.10.2", max_num_batched_tokens=2048, tp=8,
                               ep=1, element_bytes=2)
    assert split is not None and split.bytes == 2048 * 8 * (4096 + 192) * 2


def test_more_tokens_than_one_chunk_keep_the_whole_output() -> None:
    # 0.19, 32,768 tokens > the 16,384 chunk: workspaces for one chunk, the output for all:
    # 16384 x 8 x 2048 + 16384 x 8 x 2048 + 32768 x 2048 = 603,979,776 elements x 2 B.
    ws = vllm_moe_workspace(QWEN3_30B, version="0.19.0", max_num_batched_tokens=32768, tp=1,
                            ep=1, element_bytes=2)
    assert ws is not None and ws.bytes == 1_207_959_552


def test_dense_model_has_none() -> None:
    assert vllm_moe_workspace(load_spec("llama-3.1-8b"), version="0.19.0",
                              max_num_batched_tokens=8192, tp=1, ep=1, element_bytes=2) is None


def _reserve(spec, **kw) -> dict:
    inputs = plan_inputs(context=4096, engine=Engine.vllm, total_bytes=141 * GiB, **kw)
    return VllmBudget().reserve(spec, inputs).to_dict()


def test_transient_caches_do_not_stack_on_the_sampler() -> None:
    # DeepSeek-V3 at TP 8 on 0.11.0 with 1,024 rows: the sort sampler's warm-up (0.13 GiB +
    # 1,024 x 129,280 x 34.64 B = 4.40 GiB) is larger than the forward with its 0.91 GiB of MoE
    # caches, so the peak is the sampler's alone: activation + sampler parts = the sampler.
    parts = _reserve(DEEPSEEK_V3, tp=8, engine_version="0.11.0", max_num_seqs=1024,
                     max_num_batched_tokens=8192)
    sampler = int(0.13 * GiB + 1024 * 129_280 * 34.64)
    assert parts["activation"]["bytes"] + parts["sampler"]["bytes"] == sampler
    assert "freed before the sampler" in parts["activation"]["rule"]


@given(tokens=st.integers(min_value=1, max_value=65536), tp=st.sampled_from([1, 2, 4, 8]),
       version=st.sampled_from(["0.10.2", "0.11.0", "0.13.0", "0.14.0", "0.19.0", "0.32.0"]))
def test_buffers_grow_with_tokens(tokens: int, tp: int, version: str) -> None:
    def size(n: int) -> int:
        ws = vllm_moe_workspace(QWEN3_235B, version=version, max_num_batched_tokens=n, tp=tp,
                                ep=1, element_bytes=2)
        assert ws is not None
        return ws.bytes

    assert 0 < size(tokens) <= size(tokens + 1)


@pytest.mark.parametrize(("version", "tp", "gib"), [
    ("0.11.0", 4, 1.84), ("0.11.0", 8, 1.84), ("0.11.0", 3, 1.195),
    ("0.19.0", 4, 2.17), ("0.19.0", 8, 2.17),
])
def test_non_torch_is_held_beyond_the_largest_measured_tp(version: str, tp: int,
                                                          gib: float) -> None:
    # The points: 0.10-0.18 (1, 0.13), (2, 0.55), (4, 1.84); 0.19+ (1, 0.25), (2, 2.07),
    # (4, 2.17). TP 3 interpolates (0.55 + (1.84 - 0.55) / 2); TP 8 holds the TP 4 figure
    # (formerly 1.84 + 4 x 0.645 = 4.42 GiB at 0.11).
    assert vllm_non_torch_gib(version, tp=tp) == pytest.approx(gib)


def test_other_moe_kernels_are_named_not_modelled() -> None:
    # gpt-oss (MXFP4) runs its MoE on Marlin / triton_kernels, not TritonExperts: the rule keeps
    # the Triton path's shapes and says so; FP8 block quantization runs TritonExperts.
    gpt_oss = vllm_moe_workspace(load_spec("gpt-oss-20b"), version="0.19.0",
                                 max_num_batched_tokens=8192, tp=1, ep=1, element_bytes=2)
    assert gpt_oss is not None and "mxfp4's MoE kernels are not modelled" in gpt_oss.rule
    ds = vllm_moe_workspace(DEEPSEEK_V3, version="0.19.0", max_num_batched_tokens=8192, tp=8,
                            ep=1, element_bytes=2)
    assert ds is not None and "not modelled" not in ds.rule
