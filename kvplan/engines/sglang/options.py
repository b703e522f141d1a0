"""SGLang's own settings: the flags only SGLang's rules read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan.engines.base import EngineOptions, options_of

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs
    from kvplan.hardware.gpus import GPU


@dataclass(frozen=True, kw_only=True)
class SglangOptions(EngineOptions):
    # The speculative tree (kvplan.engines.sglang.pools.SglangDraft): None: topk 1 (a chain),
    # and num_draft_tokens = steps + 1, what SGLang sets with topk 1.
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    max_total_tokens: int | None = None  # --max-total-tokens
    # The pools (kvplan.engines.sglang.pools); None: that version's default.
    max_mamba_cache_size: int | None = None  # --max-mamba-cache-size
    mamba_full_memory_ratio: float | None = None  # --mamba-full-memory-ratio
    swa_full_tokens_ratio: float | None = None  # --swa-full-tokens-ratio
    disable_hybrid_swa_memory: bool = False  # --disable-hybrid-swa-memory


OPTIONS = SglangOptions


def sglang_options(inputs: PlanInputs) -> SglangOptions:
    opts: SglangOptions = options_of(inputs, SglangOptions, "sglang")
    return opts


def sglang_chunked_prefill_tokens(gpu: GPU) -> int:
    """Tokens one SGLang prefill step takes at most by default (`--chunked-prefill-size`):
    server_args.py (0.5.x, `_handle_gpu_memory_settings`; 0.4.x `__post_init__` the same
    tiers): GPU memory < 35 GiB 2,048; < 160 GiB (A100, H100, H200) 8,192; else (B200, MI300)
    16,384. `max_prefill_tokens` (default 16,384) bounds the step too; it binds only on the
    largest tier, where it is equal."""
    if gpu.memory_bytes < 35 * 2**30:
        return 2048
    return 8192 if gpu.memory_bytes < 160 * 2**30 else 16384
