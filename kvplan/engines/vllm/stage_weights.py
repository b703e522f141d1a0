"""vLLM's model classes under pipeline parallelism: which refuse it, and which weights outside
the decoder layers each stage builds (EngineRules.stage_outer).

Which classes run it. vLLM 0.32 vllm/config/model.py:1556-1563 (ModelConfig.
verify_with_parallel_config) raises "Pipeline parallelism is not supported for this model.
Supported models implement the `SupportsPP` interface." when --pipeline-parallel-size > 1 and
the class the registry resolves does not implement SupportsPP (models/registry.py:1462-1468
is_pp_supported_model -> _ModelInfo.supports_pp). kvplan/sources/vllm_registry.json holds that
flag as vLLM 0.32's own inspection gives it (`supports_pp`, tests/benches/vllm_registry_dump.py);
kvplan refuses --pp > 1 in one line where it is false: Gemma-3n's classes among them
(models/gemma3n.py:1102 `class Gemma3nForCausalLM(nn.Module)`, models/gemma3n_mm.py:575-577
`Gemma3nForConditionalGeneration(nn.Module, SupportsMultiModal, SupportsTranscription)`),
Mamba2ForCausalLM, Zamba2ForCausalLM, Idefics3 / SmolVLM, Aria, Phi-4-multimodal. A class read
only statically (a newer release's, no flag) is not refused.

What a stage builds. Llama's split (models/llama.py:377-397: embed_tokens on the first rank, or
on the last with tied embeddings, norm on the last, each a PPMissingLayer elsewhere) is the one
kvplan.weights.breakdown describes with `first` / `last`. Gemma-4 builds all of them on every
stage: models/gemma4.py Gemma4Model.__init__ (:1007-1087, no rank test) makes embed_tokens, the
per-layer embeddings (embed_tokens_per_layer, per_layer_model_projection and
per_layer_projection_norm, where hidden_size_per_layer_input > 0) and the final norm
unconditionally, and Gemma4ForCausalLM (:1447-1454) a ParallelLMHead tied to that stage's
embed_tokens; only the forward pass reads the rank (:1335 is_first_rank, :1379 is_last_rank).
The wrappers build that same Gemma4ForCausalLM (gemma4_mm.py:1136-1140,
gemma4_unified.py:289-293, `architectures=["Gemma4ForCausalLM"]`). Qwen3-MoE does the same:
models/qwen3_moe.py Qwen3MoeModel (:468-479) makes embed_tokens and norm, Qwen3MoeForCausalLM
(:580-587) its lm_head (tied or not), with no rank test. Both measured at PP 2 on vLLM 0.32's CPU
build (tests/data/oracle/weight-bytes.json: gemma-4-e2b-text-pp2, qwen3-30b-a3b-pp2): every
stage holds them. Many more of vLLM 0.32's classes build them without a rank test (mixtral.py,
qwen2_moe.py, gemma3.py, gpt_oss.py, ...); they are not listed here until read and measured.
"""

from __future__ import annotations

from kvplan._util.errors import InputError
from kvplan.model.spec import ModelSpec
from kvplan.sources.support import vllm_registry
from kvplan.weights.base import StageOuter

# Architectures (config.json `architectures`, vLLM's registry names) whose class builds the
# embeddings and the head on every pipeline stage.
_OUTER_ON_EVERY_STAGE = frozenset({
    "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
    "Gemma4UnifiedForConditionalGeneration", "Qwen3MoeForCausalLM"})


def vllm_stage_outer(spec: ModelSpec) -> StageOuter:
    """The outer weights vLLM builds on a stage that is not the first / not the last."""
    if _OUTER_ON_EVERY_STAGE.intersection(spec.architectures):
        return StageOuter(embeddings=True, head=True)
    return StageOuter()


def check_vllm_pipeline(spec: ModelSpec, pp: int) -> None:
    """Refuse, in one line, --pp > 1 for a class vLLM refuses to split into stages: the first
    of config.json's `architectures` its registry lists (as ModelRegistry.inspect_model_cls
    takes them), where vllm_registry.json says supports_pp false."""
    if pp <= 1:
        return
    rows = vllm_registry()["architectures"]
    name = next((a for a in spec.architectures if a in rows), None)
    if name is not None and rows[name].get("supports_pp") is False:
        raise InputError(
            f"{spec.path}: architectures: {name} (vLLM models/{rows[name]['module']}.py) does "
            "not implement SupportsPP, so vLLM refuses --pipeline-parallel-size "
            f"{pp} ('Pipeline parallelism is not supported for this model'); plan it with --pp 1")
