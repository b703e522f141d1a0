"""Which engines read each of kvplan's engine options: the one table the CLI asks before a
command runs (kvplan.cli.engine_opts), so that an option the chosen engine does not read is
refused in one line instead of being ignored.

An option's help panel (kvplan.cli.vocab VLLM_PANEL / SGLANG_PANEL / TRTLLM_PANEL) names the
engine whose flag it mirrors, not every engine whose rules read it: `--platform` sits in vLLM's
panel and SGLang's budget reads it too. So each row below was read from kvplan's own code paths
(the file that reads the setting is cited), not from the panel. Two kinds of row:

- the option fills a field of one engine's `EngineOptions` subclass (VllmOptions,
  SglangOptions, TrtllmOptions): only the engines whose options type has that field read it;
  `kvplan.engines.rules.plan_inputs` drops it for the others (tests/test_engine_options_cli.py
  checks these rows against the options types);
- the option fills a field every engine's `PlanInputs` carries (platform, prefix_caching,
  enforce_eager, vision_tower, attention_dp_size) or a simulator setting: the engines whose
  rules read that field, by grep of kvplan/engines and kvplan/analysis/simulate.

Keyed by the option's first spelling (click's `opts[0]`), as each command declares it.
"""

from __future__ import annotations

from kvplan.engines.rules import Engine

__all__ = ["OPTION_READERS", "readers_of"]

_VLLM = frozenset({Engine.vllm})
_SGLANG = frozenset({Engine.sglang})
_TRTLLM = frozenset({Engine.trtllm})
_ALL = frozenset(Engine)

OPTION_READERS: dict[str, frozenset[Engine]] = {
    # --- PlanInputs fields: the engines whose rules read them ---
    # platform: vLLM (vllm/block_size.py:388, vllm/budget.py:453 and :583), SGLang
    # (sglang/budget.py:195 sglang_preload_gib's table by platform, sglang/dsa_page.py:67 ROCm
    # page size); no TensorRT-LLM rule reads inputs.platform (its moe_kernel reads the GPU's).
    "--platform": _VLLM | _SGLANG,
    # cpu_amx: vLLM's CPU MLA block (vllm/block_size.py:428 cpu_mla_block) alone.
    "--cpu-amx": _VLLM,
    # prefix_caching: vLLM (vllm/engine.py:119 and :126, the hybrid pool), SGLang's radix
    # cache (sglang/pools.py:533-545; simulate engine_setups.py:251), TensorRT-LLM's block
    # reuse (trtllm/engine_args.py:61 maps enable_block_reuse to it; simulate
    # engine_setups.py:308).
    "--enable-prefix-caching": _ALL,
    # SGLang's spelling of prefix_caching=False (kvplan.analysis.inputs.estimate_inputs sets
    # the same PlanInputs field), so every engine that reads prefix_caching reads it.
    "--disable-radix-cache": _ALL,
    # enforce_eager: vLLM's and TensorRT-LLM's CUDA-graph reserve (vllm/budget.py:552,
    # trtllm/budget.py:397); SGLang's budget reads no such field.
    "--enforce-eager": _VLLM | _TRTLLM,
    # vision_tower: SGLang's VLM fraction factor (sglang/budget.py:222 sglang_vlm_factor);
    # kvplan.capacity.plan fills it from the spec for every engine, but only SGLang reads it.
    "--vision-tower": _SGLANG,
    # attention_dp_size: PlanInputs.attention_dp_ranks (engines/rules.py:158-161), the
    # attention-DP ranks every engine's layout, KV TP and pool take (capacity/plan.py:131):
    # SGLang's --dp-size, read whatever the engine.
    "--dp-size": _ALL,
    # --- vLLM's own options (VllmOptions, vllm/options.py) ---
    "--disable-custom-all-reduce": _VLLM,
    "--hybrid-kv-cache-manager": _VLLM,
    "--disable-hybrid-kv-cache-manager": _VLLM,
    "--kv-transfer": _VLLM,
    # mxfp4_backend is a VllmOptions field: SGLang's and TensorRT-LLM's `mxfp4_backend`
    # answer None whatever it is (sglang/engine.py:263, trtllm/engine.py:261).
    "--mxfp4-backend": _VLLM,
    "--flashinfer-sampler": _VLLM,
    "--limit-mm-per-prompt": _VLLM,
    "--skip-mm-profiling": _VLLM,
    "--mm-encoder-tp-mode": _VLLM,
    # --- SGLang's own options (SglangOptions, sglang/options.py) ---
    "--speculative-eagle-topk": _SGLANG,
    "--speculative-num-draft-tokens": _SGLANG,
    "--ep-num-redundant-experts": _SGLANG,
    "--max-mamba-cache-size": _SGLANG,
    "--mamba-full-memory-ratio": _SGLANG,
    "--swa-full-tokens-ratio": _SGLANG,
    "--disable-hybrid-swa-memory": _SGLANG,
    # SglangOptions.max_total_tokens and TrtllmOptions.max_total_tokens (KvCacheConfig
    # max_tokens): both engines cap their pool with it.
    "--max-total-tokens": _SGLANG | _TRTLLM,
    # --- TensorRT-LLM's own options (TrtllmOptions, trtllm/options.py) ---
    "--cuda-graph-max-batch-size": _TRTLLM,
    "--cuda-graph-padding": _TRTLLM,
    "--trtllm-backend": _TRTLLM,
    # --- simulate's scheduler options ---
    # SglangOptionsSim (analysis/simulate/sglang_scheduler.py), read by SGLang's setup alone
    # (analysis/simulate/engine_setups.py:238-247).
    "--schedule-policy": _SGLANG,
    "--schedule-conservativeness": _SGLANG,
    "--chunked-prefill-size": _SGLANG,
    # TrtllmOptionsSim, read by TensorRT-LLM's setup alone (engine_setups.py:310; run.py:128-131
    # refuses a changed one for the others).
    "--capacity-scheduler-policy": _TRTLLM,
    "--enable-chunked-prefill": _TRTLLM,
}


def readers_of(option: str) -> frozenset[Engine] | None:
    """The engines that read `option` (its first spelling); None: not an engine option (every
    engine reads it)."""
    return OPTION_READERS.get(option)
