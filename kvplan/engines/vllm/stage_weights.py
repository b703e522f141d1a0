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
gemma4_unified.py:289-293, `architectures=["Gemma4ForCausalLM"]`). Most MoE and hybrid
families do the same (mixtral.py, qwen2_moe.py, qwen3_moe.py, gemma2.py, gemma3.py, gpt_oss.py,
jamba.py, dbrx.py, granitemoe*.py, phimoe.py, nemotron_h.py, minicpm.py, gemma.py, olmoe.py,
olmo_hybrid.py, hy_v3.py), and older dense ones (gpt2.py, gpt_j.py, bloom.py, falcon.py,
opt.py, internlm2.py, stablelm.py). Qwen3.5 and LFM2 build only their embeddings on every
stage, the final norm and the lm_head (LFM2's tied) on the last; Qwen3-Next its embeddings and
lm_head, the final norm on the last. `_STAGE_OUTER` names the lines. Measured at PP 2 on vLLM
0.32's CPU build (tests/data/oracle/weight-bytes.json, the `-pp2` cases): every stage holds
them. Classes not in the table keep the first / last split (llama.py and the others vLLM 0.32
builds under `get_pp_group().is_first_rank` / `is_last_rank`, PPMissingLayer elsewhere). The
scan of every model file vLLM 0.32 registers with SupportsPP (wgap26: an AST read of each
VocabParallelEmbedding / ParallelLMHead / final norm for an enclosing rank test, each hit then
read by hand) is examples/vllm-pp-stages.md; the rest of the table (ChatGLM, Cohere, Mamba,
Orion, PLaMo-3, Molmo, the Qwen3-VL-MoE / Omni wrappers, ...) comes from it.
"""

from __future__ import annotations

from kvplan._util.errors import InputError
from kvplan.model.spec import ModelSpec
from kvplan.sources.support import vllm_registry
from kvplan.weights.base import StageOuter

_EVERY = StageOuter(embeddings=True, head=True)
_EMBEDDINGS = StageOuter(embeddings=True)
_EMBEDDINGS_LM_HEAD = StageOuter(embeddings=True, lm_head=True)

# Architectures (config.json `architectures`, vLLM 0.32's registry names) whose class builds
# the embeddings, or the embeddings and the head, on every pipeline stage, each as read in
# vLLM 0.32.0's vllm/model_executor/models/<file>.py (the Model's __init__ and the
# ForCausalLM's lm_head; no rank test in either unless said). A tied head is
# `lm_head.tie_weights(self.model.embed_tokens)`: the stage's own embedding, no copy.
_STAGE_OUTER: dict[str, StageOuter] = {
    # gemma4.py:1007-1087 (embed_tokens, per-layer embeddings, norm), :1447-1454 (tied head);
    # gemma4_mm.py:1136-1140 and gemma4_unified.py:289-293 build that Gemma4ForCausalLM.
    "Gemma4ForCausalLM": _EVERY, "Gemma4ForConditionalGeneration": _EVERY,
    "Gemma4UnifiedForConditionalGeneration": _EVERY,
    # qwen3_moe.py:468-479 (embed_tokens, norm), :580-587 (lm_head, tied or not).
    "Qwen3MoeForCausalLM": _EVERY,
    # mixtral.py:316-336 (embed_tokens, norm), :406-413 (lm_head, tied or not).
    "MixtralForCausalLM": _EVERY,
    # qwen2_moe.py:372-388 (embed_tokens, norm), :462-469 (lm_head, tied or not).
    "Qwen2MoeForCausalLM": _EVERY,
    # gemma2.py:259-270 (embed_tokens, norm); no lm_head at all: the logits read the stage's
    # embed_tokens (:342, :368).
    "Gemma2ForCausalLM": _EVERY,
    # gemma3.py:300-313 (embed_tokens, norm), :392-399 (lm_head, tied or not); gemma3_mm.py
    # :561-565 builds that Gemma3ForCausalLM as its language model.
    "Gemma3ForCausalLM": _EVERY, "Gemma3ForConditionalGeneration": _EVERY,
    # gpt_oss.py:487-500 (embedding, norm), :1459-1463 (lm_head, untied).
    "GptOssForCausalLM": _EVERY,
    # jamba.py:314-341 (embed_tokens, final_layernorm), :426-430 (lm_head, untied).
    "JambaForCausalLM": _EVERY,
    # dbrx.py:343-352 (wte, norm_f), :439-444 (lm_head; tied refused at :432-433).
    "DbrxForCausalLM": _EVERY,
    # granitemoe.py:333-345 (embed_tokens, norm), :410-417 (lm_head, tied or not).
    "GraniteMoeForCausalLM": _EVERY,
    # granitemoeshared.py:167-182, :246-253 (the SWA checkpoints too: its docstring, :8).
    "GraniteMoeSharedForCausalLM": _EVERY, "GraniteMoeSWAForCausalLM": _EVERY,
    # granitemoehybrid.py:343-368 (embed_tokens, norm), :668-675 (lm_head, tied or not).
    "GraniteMoeHybridForCausalLM": _EVERY,
    # phimoe.py:458-471 (embed_tokens, LayerNorm), :551-557 (lm_head with its bias, untied).
    "PhiMoEForCausalLM": _EVERY,
    # nemotron_h.py:585-621 (embed_tokens, norm_f), :844-849 (lm_head, untied).
    "NemotronHForCausalLM": _EVERY,
    # minicpm.py:415-421 (embed_tokens, norm), :598-605 (lm_head, tied or not).
    "MiniCPMForCausalLM": _EVERY,
    # minicpm3.py:207 MiniCPM3Model(MiniCPMModel), :224-240 MiniCPM3ForCausalLM(
    # MiniCPMForCausalLM): the same embed_tokens, norm and lm_head (wgap26's scan).
    "MiniCPM3ForCausalLM": _EVERY,
    # The embeddings alone: the final norm and the lm_head (tied to the stage's embed_tokens)
    # on the last stage only, PPMissingLayer elsewhere. qwen3_5.py:251-254 (embed_tokens),
    # :275-278 (norm), :346-356 (lm_head); the wrappers build Qwen3_5ForCausalLM (:522-524) and
    # Qwen3_5MoeForCausalLM (:745-747). lfm2.py:325-354, :467-476; lfm2_moe.py:427-459,
    # :583-592.
    "Qwen3_5ForCausalLM": _EMBEDDINGS, "Qwen3_5MoeForCausalLM": _EMBEDDINGS,
    "Qwen3_5ForConditionalGeneration": _EMBEDDINGS,
    "Qwen3_5MoeForConditionalGeneration": _EMBEDDINGS,
    "Lfm2ForCausalLM": _EMBEDDINGS, "Lfm2MoeForCausalLM": _EMBEDDINGS,
    # The embeddings and the lm_head, the final norm on the last stage alone:
    # qwen3_next.py:660-663 (embed_tokens), :684-687 (norm, PPMissingLayer elsewhere),
    # :851-855 (lm_head, untied, no rank test).
    "Qwen3NextForCausalLM": _EMBEDDINGS_LM_HEAD,
    # gemma.py:274-285 (embed_tokens, norm), :358-365 (lm_head, tied or not); olmoe.py:282-292
    # (embed_tokens, norm), :372-377 (lm_head, untied). vLLM 0.32's registry.py:106, :184 name
    # these native classes (vllm_registry.json lists the Transformers backend's entry).
    "GemmaForCausalLM": _EVERY, "OlmoeForCausalLM": _EVERY,
    # The older dense families: gpt2.py:204-216 (wte, wpe, ln_f), :279-286 (lm_head, tied or
    # not); gpt_j.py:201-210 (wte, ln_f), :265-271 (lm_head with its bias, untied); bloom.py
    # :249-267 (word_embeddings, their LayerNorm, ln_f), :327-333 (lm_head, tied or not);
    # falcon.py:380-395 (word_embeddings, ln_f), :497-510 (lm_head, tied unless the config
    # says false); opt.py:212-257 (embed_tokens, embed_positions, project_in / project_out,
    # final_layer_norm), :356-362 (lm_head, tied or not); internlm2.py:274-285 (tok_embeddings,
    # norm), :348-355 (output, tied or not); stablelm.py:226-240 (embed_tokens, LayerNorm),
    # :292-299 (lm_head, tied or not).
    "GPT2LMHeadModel": _EVERY, "GPTJForCausalLM": _EVERY, "BloomForCausalLM": _EVERY,
    "FalconForCausalLM": _EVERY, "OPTForCausalLM": _EVERY, "InternLM2ForCausalLM": _EVERY,
    "StableLmForCausalLM": _EVERY,
    # olmo_hybrid.py:325-342 (embed_tokens, norm), :402-409 (lm_head, tied or not); hy_v3.py
    # :450-465 (embed_tokens, norm), :672-679 (lm_head, tied or not).
    "OlmoHybridForCausalLM": _EVERY, "HYV3ForCausalLM": _EVERY,
    # The rest of vLLM 0.32's SupportsPP scan (wgap26; the list: examples/vllm-pp-stages.md).
    # chatglm.py:330-335 (embedding), :284-289 (GLMTransformer's final_layernorm), :344-349
    # (output_layer, untied); glm4v.py:379 GLM4VModel(ChatGLMModel).
    "ChatGLMModel": _EVERY, "ChatGLMForConditionalGeneration": _EVERY,
    "GLM4VForCausalLM": _EVERY,
    # commandr.py:351-353 (embed_tokens), :362-363 (norm), no lm_head: the logits read the
    # stage's embed_tokens (:460-468); cohere2_moe.py:402-414, :523; cohere_compass.py:2252-2267
    # (its text model), :2322 (CohereForCausalLM's logits), built by the wrapper at :1381;
    # cohere2_vision.py:351-356 builds the text_config's class (Cohere2ForCausalLM).
    "CohereForCausalLM": _EVERY, "Cohere2ForCausalLM": _EVERY, "Cohere2MoeForCausalLM": _EVERY,
    "CohereCompassForConditionalGeneration": _EVERY,
    "Cohere2VisionForConditionalGeneration": _EVERY,
    # mamba.py:116 (embeddings), :134 (norm_f), :191-197 (lm_head, tied or not); FalconMamba
    # is the same class (registry.py:104).
    "MambaForCausalLM": _EVERY, "FalconMambaForCausalLM": _EVERY,
    # orion.py:231 (embed_tokens), :242 (norm), :301-308 (lm_head, tied or not); plamo3.py:342,
    # :352, :414-424 (its lm_head's rows: the vocabulary rounded up to 16, then padded: a
    # vocabulary not a multiple of 16 gives an untied head 64 rows more, not modelled: no
    # published PLaMo-3 config has one, wgap26b); rnj1.py:274, :287,
    # :358-365; k2_horizon.py:1112, :1124, :1509; muse_glimmer.py:1310, :1326, :1512 (its
    # ForConditionalGeneration is that class, registry.py:537); molmo.py:825, :843, :1346-1353;
    # molmo2.py:1155, :1178, :2390; moondream3.py:830 (wte), :848 (post_ln), :1085-1091 (an
    # lm_head with bias, not counted: kvplan refuses Moondream3 whole, support.json).
    "OrionForCausalLM": _EVERY, "Plamo3ForCausalLM": _EVERY, "Rnj1ForCausalLM": _EVERY,
    "K2HorizonForCausalLM": _EVERY, "MuseGlimmerForCausalLM": _EVERY,
    "MuseGlimmerForConditionalGeneration": _EVERY, "MolmoForCausalLM": _EVERY,
    "Molmo2ForConditionalGeneration": _EVERY, "Moondream3ForCausalLM": _EVERY,
    "HfMoondream": _EVERY,
    # Wrappers building one of the table's language models: qwen3_vl_moe.py:93, :165-175, :285
    # and qwen3_omni_moe_thinker.py:1082, :1148-1155, :1721 (Qwen3MoeLLMModel is
    # qwen3_moe.py's Qwen3MoeModel; lm_head tied or not); interns1_pro.py:457, :480-487, :584
    # (the same model); cosmos3_edge.py:369 (NemotronHModel), :413 (lm_head), :574;
    # paligemma.py:294-298 (the text_config's Gemma or Gemma-2 class).
    "Qwen3VLMoeForConditionalGeneration": _EVERY, "Qwen3OmniMoeForConditionalGeneration": _EVERY,
    "InternS1ProForConditionalGeneration": _EVERY,
    "Cosmos3EdgeForConditionalGeneration": _EVERY, "PaliGemmaForConditionalGeneration": _EVERY,
    # The embeddings alone, as Qwen3.5: interns2_mobius.py:303 (embed_tokens), :331-334 and
    # :428-438 (norm, lm_head on the last); interns2_preview.py:32 subclasses
    # Qwen3_5MoeForConditionalGeneration; minicpmv4_6.py:1252 builds Qwen3_5ForCausalLM, and
    # minicpmv4_7.py:124 subclasses it.
    "InternS2MobiusForConditionalGeneration": _EMBEDDINGS,
    "InternS2PreviewForConditionalGeneration": _EMBEDDINGS,
    "MiniCPMV4_6ForConditionalGeneration": _EMBEDDINGS,
    "MiniCPMV4_7ForConditionalGeneration": _EMBEDDINGS,
    # vLLM 0.32's own packages (vllm/models/<name>/, the nvidia/ build on every platform but
    # ROCm): inkling/nvidia/model.py:274-293 (embed_tokens, embed_norm, norm), :439 (lm_head);
    # qwen4_exp/nvidia/model.py:436 (embed_tokens), :737-741 (lm_head), the final stage's
    # hyper-connection mixer on the last alone (:460).
    "InklingForCausalLM": _EVERY, "InklingForConditionalGeneration": _EVERY,
    "Qwen4ExpForCausalLM": _EMBEDDINGS_LM_HEAD,
    "Qwen4ExpForConditionalGeneration": _EMBEDDINGS_LM_HEAD,
}


def vllm_stage_outer(spec: ModelSpec) -> StageOuter:
    """The outer weights vLLM builds on a stage that is not the first / not the last: those of
    the first of config.json's `architectures` the table lists, else of the language model
    class a wrapper builds (ModelSpec.text_architectures: LLaVA over Mixtral builds
    MixtralForCausalLM through init_vllm_registered_model, llava.py:569-573, and holds no
    embedding or head of its own; the llava-mixtral shrink's PP 2 probe, wgap26b)."""
    name = next((a for a in (*spec.architectures, *spec.text_architectures)
                 if a in _STAGE_OUTER), None)
    return StageOuter() if name is None else _STAGE_OUTER[name]


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
    # Qwen3-VL's classes assert on every stage but the first that it starts at or after layer
    # len(deepstack_visual_indexes) (models/qwen3_vl.py:2051-2059, qwen3_vl_moe.py:293-300; the
    # qwen3-vl-30b-a3b shrink, 4 layers and 3 deepstack indexes, stopped there at PP 2). The
    # second stage starts after the first's layers: get_pp_indices gives it num_layers // pp,
    # one more when the remainder is pp - 1 (kvplan.capacity.stages.pp_layer_ranges).
    vit = spec.qwen_vit
    if (name is not None and rows[name].get("module") in ("qwen3_vl", "qwen3_vl_moe")
            and vit is not None and vit.deepstack_layers):
        def second_start(stages: int) -> int:
            layers = spec.num_hidden_layers
            return layers // stages + (layers % stages == stages - 1)

        if second_start(pp) < vit.deepstack_layers:
            most = max(p for p in range(1, pp) if p == 1 or second_start(p) >= vit.deepstack_layers)
            raise InputError(
                f"--pp: {pp} stages put the second stage's first layer at {second_start(pp)}, "
                f"before {name}'s {vit.deepstack_layers} deepstack layers; vLLM asserts "
                "'start_layer should be greater than or equal to len(deepstack_visual_indexes)' "
                f"(models/{rows[name]['module']}.py); plan it with --pp {most}")
