"""SGLang's own settings: the flags only SGLang's rules read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan.engines.base import EngineOptions, options_of

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs


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
