"""vLLM's fused-MoE buffers in the profile run: how big, and whether they outlive the forward.

Read in the 0.10.2, 0.11.0, 0.12.0, 0.13.0, 0.14.0 and 0.15.1 wheels
(``model_executor/layers/fused_moe/``), for the path a plain-wheel install takes on CUDA with
TP (and TP + EP without DP): no DeepGEMM (``deep_gemm`` is not a dependency of the wheel), no
FlashInfer MoE (opt-in), no all2all kernels (DP + EP only).

- To 0.13: ``UnquantizedFusedMoEMethod.forward_cuda`` and ``Fp8MoEMethod.apply`` call the
  function ``fused_experts`` -> ``fused_experts_impl`` (fused_moe.py), which allocates its
  caches with ``torch.empty`` on every call: ``cache13`` of M x top-k x max(N, K) (cache 1 and
  cache 3 share it) and ``intermediate_cache2`` of M x top-k x N / 2, in the activation dtype,
  M = min(tokens, VLLM_FUSED_MOE_CHUNK_SIZE). They are freed when the layer returns, so the
  profile's torch peak is max(forward + these, sampler warm-up): they never stack on the
  sampler. (0.11's ``SharedResizableBuffer`` keeps the modular kernel's buffers, but that
  kernel is built only for all2all, ``FusedMoEMethodBase.init_prepare_finalize``.)
- From 0.14: both methods build a ``FusedMoEModularKernel(MoEPrepareAndFinalizeNoEP(),
  TritonExperts(...))`` (``unquantized_fused_moe_method.py``, ``oracle/fp8.py``), whose
  ``_allocate_buffers`` takes them from ``current_workspace_manager()`` (v1/worker/
  workspace.py: one grow-only buffer per slot, kept for the process): ``TritonExperts.
  workspace_shapes`` = workspace13 (M, top-k, max(N / 2, K)), workspace2 (M, top-k, max(N,
  K)), output (M_full, K); with one chunk the output shares workspace13's buffer. They stay
  allocated through the sampler warm-up, so they add to its peak.
- VLLM_FUSED_MOE_CHUNK_SIZE (envs.py): 32,768 to 0.11, 16,384 from 0.12.
- N = 2 x the expert intermediate size on the rank (gate and up), K = hidden. With expert
  parallelism the MoE layer is not split over TP (``FusedMoEParallelConfig.make``: use_ep ->
  tp_size 1), so N is the whole intermediate; every rank still sees every token.

Checked against the logs' torch peaks (examples/engine-bench.md): Qwen3-30B-A3B at 0.19 logs
2.68 GiB where the sampler warm-up alone is 2.21 and these buffers 0.50 GiB; Qwen3-235B-A22B
FP8 at TP 8 + EP on 0.10.2 logs 1.40 GiB, the sort sampler's 1.38 alone (its 0.17 GiB of MoE
caches freed before it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan._util.units import GiB
from kvplan._util.versions import version_key

if TYPE_CHECKING:
    from kvplan.model.spec import ModelSpec

# The default path is a modular kernel on the workspace manager from this release.
VLLM_MOE_WORKSPACE_MANAGER_SINCE = (0, 14)
# VLLM_FUSED_MOE_CHUNK_SIZE's default by release: 32,768 to 0.11, 16,384 from 0.12.
VLLM_FUSED_MOE_CHUNK_SIZES: tuple[tuple[tuple[int, ...], int], ...] = (
    ((0, 0), 32768),
    ((0, 12), 16384),
)


@dataclass(frozen=True, kw_only=True)
class VllmMoEWorkspace:
    """The fused-MoE buffers of the profile forward on one rank."""

    bytes: int
    persistent: bool  # kept through the sampler warm-up (the workspace manager)
    rule: str


def vllm_fused_moe_chunk_size(version: str | None) -> int:
    key = version_key(version)
    return [size for since, size in VLLM_FUSED_MOE_CHUNK_SIZES if key >= since][-1]


def _other_kernels(spec: ModelSpec) -> str:
    """What the rule says of a checkpoint whose MoE layers vLLM runs on other kernels (MXFP4,
    Marlin INT4, NVFP4, ...): the shapes above are the Triton path's, theirs are not modelled."""
    method = json.loads(spec.quantization_json).get("quant_method") \
        if spec.quantization_json else None
    if method in (None, "fp8", "compressed-tensors"):
        return ""
    return f"; the Triton path's shapes: {method}'s MoE kernels are not modelled"


def vllm_moe_workspace(spec: ModelSpec, *, version: str | None, max_num_batched_tokens: int,
                       tp: int, ep: int, element_bytes: int) -> VllmMoEWorkspace | None:
    """The fused-MoE buffers at `max_num_batched_tokens` tokens (None: no MoE layer)."""
    moe = spec.moe
    if moe is None:
        return None
    moe_tp = 1 if ep > 1 else tp
    n = 2 * (moe.moe_intermediate_size // moe_tp)
    k = spec.hidden_size
    topk = moe.num_experts_per_tok
    tokens = max_num_batched_tokens
    chunk = vllm_fused_moe_chunk_size(version)
    m = min(tokens, chunk)
    width = (f"N {n:,}, K {k:,}, top-k {topk}, M {m:,}" + (" (EP: N not split)" if ep > 1 else "")
             + _other_kernels(spec))
    if version_key(version) >= VLLM_MOE_WORKSPACE_MANAGER_SINCE:
        ws13 = m * topk * max(n // 2, k)
        ws2 = m * topk * max(n, k)
        out = tokens * k
        elements = (max(ws13, out) if tokens <= chunk else ws13 + out) + ws2
        return VllmMoEWorkspace(
            bytes=elements * element_bytes, persistent=True,
            rule=f"fused-MoE workspaces {elements * element_bytes / GiB:.2f} GiB ({width}; "
                 "TritonExperts on the workspace manager, kept through the sampler warm-up)")
    elements = m * topk * (max(n, k) + n // 2)
    return VllmMoEWorkspace(
        bytes=elements * element_bytes, persistent=False,
        rule=f"fused-MoE caches {elements * element_bytes / GiB:.2f} GiB ({width}; "
             "fused_experts_impl, freed before the sampler warm-up)")
