"""TensorRT-LLM's fused MoE by expert format, release and GPU (kvplan.engines.moe_kernel.
MoeKernels): where its CUTLASS block-FP8 MoE runs, whose grouped GEMMs kvplan prices at the fitted
FP8 MoE fraction (CutlassMoeKernel.fitted_fp8; kvplan.perf.efficiency.FP8_MOE_GEMM_FIT).

Which backend runs block-FP8 (DeepSeek FP8 block scales) experts, read in the code index's
copies of NVIDIA/TensorRT-LLM (no release tag of the 2.5 GB repository could be fetched; the
stored versions span the 1.0-1.3 lines):

- The backend is `moe_config.backend`, "CUTLASS" by default in 1.0-1.2 (llmapi/llm_args.py
  MoeConfig; kvplan.engines.trtllm.moe_alltoall cites it) and aiconfigurator's generator writes
  `backend: CUTLASS`. 1.3's AUTO (model_config.py resolve_moe_backend, 1.3.0rc20 lines 339-343,
  as aiconfigurator 095f58a51 collector/trtllm/collect_moe.py:466-477 quotes it) picks
  TRTLLM-gen for block FP8 only on SM 10.x and CUTLASS elsewhere: on Hopper every release runs
  CUTLASS.
- _torch/modules/fused_moe/fused_moe_cutlass.py `CutlassFusedMoE` (the index's copy at commit
  000a01de): its docstring says "fp8 block scales (SM90 Hopper only)"; `_get_quant_method` returns
  DeepSeekFP8BlockScalesFusedMoEMethod for block scales, and `forward_chunk` sets
  use_deepseek_fp8_block_scale and calls torch.ops.trtllm.fused_moe (the CUTLASS runner's
  block-scale path). On SM 10.x block FP8 runs DeepGEMM instead: fused_moe_wide_ep.py
  `WideEPMoE._get_quant_method` returns DeepSeekFP8BlockScalesFusedMoEMethodDeepGemm where
  `get_sm_version() == 100` (later copies: `is_sm_100f()`), and the MoE backend selection
  (`MoEBackendSelection.select_backend`) picks DeepGemm for "Blackwell (SM100) with block FP8",
  CUTLASS otherwise. Which commit each copy is, is not pinned to a tag here.

So the rule holds for block-FP8 experts on SM 9.x (Hopper: H100, H200) in every release
kvplan knows; B200's block-FP8 MoE runs DeepGEMM (the B200 table's kernel_source `deepgemm`,
tests/data/moe_op/SOURCES.md) and keeps the dense FP8 fraction; 16-bit and FP4 experts are
unchanged. Only the fraction: the kernel's activations (kvplan.perf.moe_kernel.cutlass_traffic)
stay unpriced for TensorRT-LLM as before (`prices_traffic` False), so the switch moves one rule.

The switch: `TRTLLM_MOE_KERNELS.cutlass_fp8_fitted`, OFF: evaluated off and on after the rule
was frozen (tests/benches/trtllm_fp8_moe.py, its docstring's figures), the held-out aggregated
rows got worse (H100 Qwen3-235B-A22B-FP8, 124 rows: TTFT median |error| 20.5 -> 31.9 %) while
the shaped disaggregated H200 rows improved, so the fitted fraction stays opt-in (the kernel's
choice is read from the code, its fraction is fitted)."""

from __future__ import annotations

from dataclasses import dataclass

from kvplan.engines.moe_kernel import FP8_BLOCK_EXPERTS, CutlassMoeKernel, MoeKernel
from kvplan.hardware.gpus import GPU

TRTLLM_CUTLASS_FP8_BLOCK_MOE = CutlassMoeKernel(
    name="TensorRT-LLM CutlassFusedMoE (block FP8)",
    source="tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py (module docstring)",
    act_quant_group=128, prices_traffic=False, fitted_fp8=True)


@dataclass(frozen=True)
class TrtllmMoeKernels:
    """TensorRT-LLM's choice (module docstring): the CUTLASS block-FP8 MoE on SM 9.x where
    `cutlass_fp8_fitted`, else no kernel kvplan prices apart."""

    cutlass_fp8_fitted: bool = False

    def kernel(self, fmt: str | None, *, version: str | None, gpu: GPU | None, ep: int,
               dp_ranks: int) -> MoeKernel | None:
        return runs_cutlass_fp8(fmt, gpu) if self.cutlass_fp8_fitted else None


def runs_cutlass_fp8(fmt: str | None, gpu: GPU | None) -> CutlassMoeKernel | None:
    """The CUTLASS block-FP8 MoE where TensorRT-LLM runs it (module docstring: block-FP8 experts
    on SM 9.x), whether or not kvplan prices it at the fitted fraction; else None."""
    if fmt != FP8_BLOCK_EXPERTS or gpu is None:
        return None
    cc = gpu.compute_capability
    if gpu.platform != "cuda" or cc is None or cc[0] != 9:
        return None
    return TRTLLM_CUTLASS_FP8_BLOCK_MOE


TRTLLM_MOE_KERNELS = TrtllmMoeKernels()
