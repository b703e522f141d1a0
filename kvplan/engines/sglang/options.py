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
    # The speculative tree (kvplan.engines.sglang.draft.SglangDraft): None: topk 1 (a chain),
    # and num_draft_tokens = steps + 1, what SGLang sets with topk 1.
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    max_total_tokens: int | None = None  # --max-total-tokens
    # The pools (kvplan.engines.sglang.pools); None: that version's default.
    max_mamba_cache_size: int | None = None  # --max-mamba-cache-size
    mamba_full_memory_ratio: float | None = None  # --mamba-full-memory-ratio
    swa_full_tokens_ratio: float | None = None  # --swa-full-tokens-ratio
    disable_hybrid_swa_memory: bool = False  # --disable-hybrid-swa-memory
    # Not flags: what SGLang forced for DeepSeek's sparse attention (sglang.dsa_settings), set
    # by SglangEngine.served_inputs: DP attention it turned on after the default fraction was
    # computed (which then holds no DP-attention reserve), and 0.5.3's fraction.
    forced_dp_attention: bool = False
    forced_mem_fraction: float | None = None
    # The MoE layers' communication (kvplan.engines.sglang.deepep): --moe-a2a-backend,
    # --deepep-mode, --moe-dense-tp-size, --enable-dp-lm-head and SGLANG_MOE_NVFP4_DISPATCH.
    moe_a2a_backend: str = "none"
    deepep_mode: str = "auto"
    moe_dense_tp_size: int | None = None
    enable_dp_lm_head: bool = False
    moe_nvfp4_dispatch: bool = False
    # --ep-num-redundant-experts: extra physical experts per MoE layer, their weights on the
    # EP ranks (kvplan.capacity.weights.redundant_experts_held).
    ep_num_redundant_experts: int = 0


OPTIONS = SglangOptions

# --max-prefill-tokens' default (server_args.py:316 in 0.5.8 / 0.5.8.post1, :270 in 0.5.5.post2;
# the scheduler takes it unchanged, managers/tp_worker.py:279-280), the input budget of one
# prefill step per scheduler (one per attention-DP rank; not divided by --dp-size). SGLang's
# PrefillAdder (managers/schedule_policy.py `add_one_req`, 0.5.8.post1:715-716 and :734-735;
# 0.5.5.post2 :584, :603) refuses a prompt once the step holds one and its page-rounded input is
# >= the budget left (`real_input_tokens >= self.rem_input_tokens and len(self.can_run_list) !=
# 0`: OTHER, which ends the step), whether or not chunked prefill is on; each prompt taken lowers
# the budget by its (page-rounded) tokens (`_update_prefill_budget`). With the chunk at the same
# 16,384 (cards of 160 GiB or more, TP attention) a step so takes whole prompts only while their
# sum stays below 16,384: one prompt of 8,192 (not two), fifteen of 1,024 (not sixteen), and
# never cuts a second prompt to the chunk left.
MAX_PREFILL_TOKENS = 16384


def sglang_options(inputs: PlanInputs) -> SglangOptions:
    opts: SglangOptions = options_of(inputs, SglangOptions, "sglang")
    return opts


def sglang_chunked_prefill_tokens(gpu: GPU, *, dp_attention: int = 1) -> int:
    """Tokens one SGLang prefill step takes at most by default (`--chunked-prefill-size`), on
    each scheduler (one per attention-DP rank): server_args.py (0.5.x,
    `_handle_gpu_memory_settings`; 0.4.x `__post_init__` the same tiers): GPU memory < 35 GiB
    2,048; < 160 GiB (A100, H100, H200) 8,192; else (B200, MI300) 16,384. With DP attention
    (`dp_attention`: its --dp-size) each rank's scheduler gets that // dp-size:
    server_args.py `_handle_data_parallelism`, `self.chunked_prefill_size =
    self.chunked_prefill_size // self.dp_size` under `if self.enable_dp_attention` (logged as
    "DP attention is enabled. The chunked prefill size is adjusted to N to avoid MoE kernel
    issues."), run after `_handle_gpu_memory_settings` in `__post_init__`, so the default is
    divided too (0.4.x: the same division in `__post_init__`). `max_prefill_tokens` (default
    16,384, not divided: MAX_PREFILL_TOKENS) bounds the step too, and binds even where it equals
    the chunk: a prompt after the first joins only while its input is below what is left of it
    (MAX_PREFILL_TOKENS)."""
    if gpu.memory_bytes < 35 * 2**30:
        tokens = 2048
    else:
        tokens = 8192 if gpu.memory_bytes < 160 * 2**30 else 16384
    return tokens // max(1, dp_attention)
