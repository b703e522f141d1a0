"""Which model runner vLLM uses for a model by default: V1 (v1/worker/gpu_model_runner.py) or
V2 (v1/worker/gpu/model_runner.py). The KV budget's reserve (kvplan.engines.vllm.budget:
sampler, CUDA graphs) and the batches in flight (kvplan.engines.vllm.in_flight: PP + 1 on V2,
PP on V1 at PP > 1) follow it. Kept apart from the budget rules so a plan without a device does
not load them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.versions import version_key

if TYPE_CHECKING:
    from kvplan.model.spec import ModelSpec

# config/vllm.py DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES by release, as Hugging Face model_type
# (Qwen3ForCausalLM: qwen3, LlamaForCausalLM: llama, MistralForCausalLM: mistral,
# DeepseekV2ForCausalLM: deepseek_v2, Qwen2MoeForCausalLM: qwen2_moe, GraniteMoeForCausalLM:
# granitemoe); 0.22-0.23 take them only unquantized and not MoE.
VLLM_V2_MODEL_TYPES: tuple[tuple[tuple[int, ...], frozenset[str], bool], ...] = (
    ((0, 22), frozenset({"qwen3"}), True),
    ((0, 23), frozenset({"qwen3", "llama", "mistral"}), True),
    ((0, 24), frozenset({"qwen3", "llama", "mistral", "deepseek_v2", "qwen2_moe",
                         "granitemoe"}), False),
    ((0, 25), frozenset({"deepseek_v2", "qwen2_moe", "granitemoe"}), False),
)


def vllm_runs_v2(version: str | None, spec: ModelSpec, *, pp: int = 1,
                 speculative_method: str | None = None) -> bool:
    """Whether vLLM `version` runs `spec` on model runner V2 by default (config/vllm.py:
    use_v2_model_runner and _is_default_v2_model_runner_model, read in each wheel): V2 for the
    listed architectures from 0.22 (VLLM_V2_MODEL_TYPES); from 0.25 also for every
    text-generation model that is neither MoE nor hybrid (`not model_config.is_moe`, hybrids
    excluded); from 0.29 for every model unless a feature V2 lacks is on (ngram speculation,
    dual batch overlap, ...: not modelled); else V1. EAGLE3 at PP > 1 is such a feature from
    0.22.1 to 0.29.0 (_get_v2_model_runner_unsupported_features: 0.26.0 :2176-2180, 0.28.0
    :2418-2422, 0.29.0 :2585-2589; gone in 0.30.0): V1 (the budget's reserve passes neither
    `pp` nor `speculative_method`; the batches in flight do). VLLM_USE_V2_MODEL_RUNNER
    overrides all, and ROCm keeps some architectures on V1 (DeepSeek-V3.2 / V4, GLM-DSA from
    0.29): not modelled."""
    key = version_key(version)
    if (0, 22) <= key < (0, 30) and speculative_method == "eagle3" and pp > 1:
        return False
    if key >= (0, 29):
        return True
    hybrid = spec.recurrent is not None or any(m in ("recurrent", "hybrid")
                                               for m in spec.layer_mixers)
    if key >= (0, 25) and spec.moe is None and not hybrid:
        return True
    listed = [(types, plain) for since, types, plain in VLLM_V2_MODEL_TYPES if key >= since]
    if listed:
        types, plain_only = listed[-1]
        quantized = spec.quantization_json is not None or spec.weight_dtype not in (
            "bf16", "fp16", "fp32")
        if spec.model_type in types and not (plain_only and (quantized or spec.moe)):
            return True
    return False
