"""vLLM's own settings: the flags only vLLM's rules read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan.engines.base import EngineOptions, options_of

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs


@dataclass(frozen=True, kw_only=True)
class VllmOptions(EngineOptions):
    hybrid_kv_cache_manager: bool | None = None  # None: what that version does
    # vLLM V1: FlashInfer's top-k/top-p sampler ran (VLLM_USE_FLASHINFER_SAMPLER, flashinfer
    # installed); None: that release's default with the plain wheel (kvplan.engines.vllm.budget).
    flashinfer_sampler: bool | None = None
    # --limit-mm-per-prompt as (modality, count) pairs (unset modalities: 999; 0: that modality
    # is not profiled) and --skip-mm-profiling (no encoder profile at all).
    limit_mm_per_prompt: tuple[tuple[str, int], ...] = ()
    skip_mm_profiling: bool = False
    mm_encoder_tp_mode: str = "weights"  # --mm-encoder-tp-mode: weights | data
    disable_custom_all_reduce: bool = False  # --disable-custom-all-reduce
    # --[no-]async-scheduling; None: the platform's (kvplan.engines.vllm.alloc.Platform). It sets
    # the batches in flight, which sliding and chunked layers reserve tokens for
    # (alloc.vllm_max_concurrent_batches); `kvplan simulate` passes the scheduling it runs.
    async_scheduling: bool | None = None
    # The MXFP4 MoE kernel (kvplan.model.quant_formats.Mxfp4Backend value), as vLLM's
    # VLLM_MXFP4_USE_MARLIN=1 or --moe-backend picks it; None: that release's on that GPU
    # (kvplan.engines.vllm.mxfp4_backend).
    mxfp4_backend: str | None = None
    # --[no-]scheduler-reserve-full-isl (from 0.19.0): admit a waiting request only when its
    # whole prompt fits; None: that release's default (kvplan.engines.vllm.admission).
    reserve_full_isl: bool | None = None
    # A KV connector is set (--kv-transfer-config: every role of `plan --disagg`), which turns
    # the hybrid KV-cache manager off before 0.22 (kvplan.engines.vllm.kv_transfer).
    kv_transfer: bool = False


OPTIONS = VllmOptions


def vllm_options(inputs: PlanInputs) -> VllmOptions:
    opts: VllmOptions = options_of(inputs, VllmOptions, "vllm")
    return opts
