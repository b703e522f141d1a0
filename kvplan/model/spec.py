"""Model specs: what a model is, as frozen dataclasses with its architecture feature fields, and
the pure rules of cross-layer KV sharing. No I/O: kvplan.sources.spec_yaml reads a spec YAML
(or the mapping config.json import builds) into these types, validating every field at the
boundary. The schema is documented in ``model_specs/README.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError, SpecError
from kvplan.model.attention import Attention, AttentionKind
from kvplan.model.context_limit import ContextLimit, PositionFields
from kvplan.model.gemma4_towers import Gemma4Towers
from kvplan.model.recurrent import RecurrentSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from kvplan.model.checkpoint import CheckpointWeights

SLIDING = "sliding_attention"
FULL = "full_attention"
CHUNKED = "chunked_attention"
RECURRENT = "recurrent"
HYBRID = "hybrid"  # attention and a recurrent state side by side in one layer (Falcon-H1)
MLP_ONLY = "mlp"  # no token mixer at all (Nemotron-H's '-' and 'E' layers)
LAYER_TYPES = (FULL, SLIDING, CHUNKED, RECURRENT, HYBRID, MLP_ONLY)

STATE_DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True, kw_only=True)
class Assumption:
    """A value kvplan took without the config stating it for this architecture (a config.json of
    a model_type kvplan does not know, or a wrapper's tower it does not price): the field, the
    value taken, why, and what it `affects`: "kv" (a cache size rests on it) or "weights" (only
    the weight count, hence a GPU's KV budget). A spec with any is not exact
    (`ModelSpec.exact`); one with none affecting the KV is `kv_exact`. The JSON of estimate and
    plan lists them."""

    field: str
    value: str
    why: str
    affects: str = "kv"


@dataclass(frozen=True, kw_only=True)
class MLPSpec:
    intermediate_size: int
    gated: bool = True
    bias: bool = False


@dataclass(frozen=True, kw_only=True)
class MoESpec:
    n_routed_experts: int
    num_experts_per_tok: int
    moe_intermediate_size: int
    n_shared_experts: int = 0
    shared_expert_intermediate_size: int = 0
    first_k_dense_replace: int = 0
    moe_layer_freq: int = 1
    # Identity ("zero-computation") experts beside the routed ones (LongCat-Flash's
    # zero_expert_num): no weights, but columns of the router (models/longcat_flash.py
    # LongcatRouter: n_routed_experts + zero_expert_num outputs).
    zero_experts: int = 0
    # The config switches on a float32 per-expert score-correction bias of the router
    # (topk_method noaux_tc, use_routing_bias, use_expert_bias, moe_router_enable_expert_bias):
    # priced where the family builds it only so (kvplan.weights.routers).
    score_bias: bool = False

    def is_moe_layer(self, index: int) -> bool:
        return index >= self.first_k_dense_replace and (
            (index - self.first_k_dense_replace) % self.moe_layer_freq == 0
        )


@dataclass(frozen=True, kw_only=True)
class IndexerSpec:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5). IndexCache
    (GLM-5.2/5.3's ``index_topk_freq`` > 1): the main-stack layers in ``skipped_layers`` build no
    indexer, hence no indexer cache, and reuse an earlier layer's top-k; MTP draft layers always
    keep theirs (kvplan.sources.hf_index_cache reads the set). ``indexer_types_length``: the
    entries of the config's ``indexer_types`` list (None: it has none), which SGLang 0.5.20+
    reads instead, keeping every layer past its end (kvplan.engines.sglang.index_cache)."""

    index_head_dim: int
    index_n_heads: int
    index_topk: int
    skipped_layers: frozenset[int] = frozenset()
    indexer_types_length: int | None = None

    def keeps(self, layer: int) -> bool:
        """Whether main-stack layer `layer` has its own indexer and indexer cache."""
        return layer not in self.skipped_layers


@dataclass(frozen=True, kw_only=True)
class VisionTowerSpec:
    """A vision encoder and the projector into the language model of a multimodal checkpoint,
    as vLLM builds them: ``kind`` "siglip" (vllm/model_executor/models/siglip.py
    SiglipVisionModel; the projector named by ``projector``: "gemma3" = gemma3_mm.py
    Gemma3MultiModalProjector) or "llama4" (mllama4.py Llama4VisionModel: a linear patch
    embedding, a CLS token, pre-norm blocks, a pixel-shuffle MLP adapter; projector "llama4" =
    Llama4MultiModalProjector). Loaded with the model, so in "Model loading took X GiB"; it holds
    no KV cache."""

    kind: str  # "siglip" | "llama4"
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    image_size: int
    patch_size: int
    num_channels: int = 3
    projector: str = "gemma3"

    # Tokens one image becomes in the language model: gemma3_mm.py Gemma3MultiModalProjector
    # pools the (image_size / patch_size)^2 patches to mm_tokens_per_image (config.json, 256).
    tokens_per_image: int = 256

    # Llama-4 only (vision_config): patches per language-model token after the pixel shuffle
    # (round(1 / pixel_shuffle_ratio^2): 4 at ratio 0.5), the adapter's widths, the vision
    # output fed to the projector, and the most tiles one image is cut into (the processor's
    # max_patches, preprocessor_config.json, not in config.json: 16 in the Llama-4 checkpoints).
    patches_per_token: int = 4
    projector_input_dim: int = 0
    projector_output_dim: int = 0
    vision_output_dim: int = 0
    max_tiles: int = 16

    @property
    def num_positions(self) -> int:
        """SiglipVisionEmbeddings: one position per patch ((image_size / patch_size) ** 2)."""
        return (self.image_size // self.patch_size) ** 2

    @property
    def tokens_per_tile(self) -> int:
        """Llama-4: language-model tokens per tile after the pixel shuffle
        (Mllama4ProcessingInfo.get_patch_per_chunk: patches // round(1 / ratio^2))."""
        return self.num_positions // self.patches_per_token


# The processors' largest input, from the checkpoints' preprocessor configs (not in config.json):
# Qwen3-VL and Qwen3.5 ship preprocessor_config.json "size": {"longest_edge": 16777216} (4096 x
# 4096 px) and video_preprocessor_config.json "size": {"longest_edge": 25165824} (two frames'
# pixels: vLLM divides by temporal_patch_size, qwen3_vl.py get_max_video_tokens).
QWEN3_VL_MAX_PIXELS = 16_777_216
QWEN3_VL_VIDEO_MAX_PIXELS = 25_165_824


@dataclass(frozen=True, kw_only=True)
class QwenViTSpec:
    """The vision transformer of Qwen3-VL / Qwen3.5 checkpoints (vision_config), as vLLM builds
    it (vllm/model_executor/models/qwen3_vl.py Qwen3_VisionTransformer: a Conv3d patch embed
    over temporal_patch_size x patch_size^2 pixels, `depth` pre-norm blocks of attention and a
    GELU MLP, a 2 x 2 patch merger to out_hidden_size, plus one merger per deepstack layer).
    Its weights are counted in group "vision" (kvplan.weights.breakdown); what it adds to the
    reserve is vLLM's encoder profile (kvplan.engines.vllm.mm)."""

    kind: str  # "qwen3_vl"
    depth: int
    hidden_size: int
    intermediate_size: int
    num_heads: int
    patch_size: int
    spatial_merge_size: int
    temporal_patch_size: int
    out_hidden_size: int
    in_channels: int = 3
    deepstack_layers: int = 0  # len(deepstack_visual_indexes)
    num_position_embeddings: int = 2304  # pos_embed rows (Qwen3-VL's default)
    max_pixels: int = QWEN3_VL_MAX_PIXELS
    video_max_pixels: int = QWEN3_VL_VIDEO_MAX_PIXELS

    @property
    def merge_unit(self) -> int:
        """Pixels on a side of one language-model token: patch_size x spatial_merge_size."""
        return self.patch_size * self.spatial_merge_size

    @property
    def pixels_per_patch(self) -> int:
        """Elements of one patch: in_channels x temporal_patch_size x patch_size^2."""
        return self.in_channels * self.temporal_patch_size * self.patch_size ** 2


@dataclass(frozen=True, kw_only=True)
class Qwen2ViTSpec:
    """The vision transformer of Qwen2-VL and Qwen2.5-VL checkpoints (vision_config), as vLLM
    0.32 builds it (models/qwen2_vl.py Qwen2VisionTransformer, models/qwen2_5_vl.py
    Qwen2_5_VisionTransformer): a Conv3d patch embed without bias over temporal_patch_size x
    patch_size^2 pixels, `depth` pre-norm blocks (fused qkv with bias, output projection with
    bias, an MLP with biases: fc1 / fc2 (Qwen2-VL, QuickGELU) or gate_up / down (Qwen2.5-VL,
    gated)), a rotary table, and a patch merger (a norm, then spatial_merge_size^2 x hidden ->
    same -> out_hidden_size). Qwen2.5-VL's window attention changes no weight. Its weights are
    counted in group "vision" (kvplan.weights.breakdown); vLLM's encoder profile of it is not
    modelled (the reader warns)."""

    kind: str  # "qwen2_vl" | "qwen2_5_vl"
    depth: int
    hidden_size: int  # the tower's width (Qwen2-VL: vision_config.embed_dim)
    intermediate_size: int  # the block MLP's (Qwen2-VL: int(embed_dim x mlp_ratio))
    num_heads: int
    patch_size: int
    spatial_merge_size: int
    temporal_patch_size: int
    out_hidden_size: int  # the merger's output (Qwen2-VL: vision_config.hidden_size)
    in_channels: int = 3
    # Qwen2.5-VL: RMSNorm (weight only) and a gated MLP; Qwen2-VL: LayerNorm (weight and
    # bias) and fc1 / fc2.
    rms_norm: bool = False
    gated_mlp: bool = False

    @property
    def pixels_per_patch(self) -> int:
        """Elements of one patch: in_channels x temporal_patch_size x patch_size^2."""
        return self.in_channels * self.temporal_patch_size * self.patch_size ** 2


@dataclass(frozen=True, kw_only=True)
class GemmaBlocksSpec:
    """Gemma-3n's and Gemma-4's weights beyond attention and MLP, as vLLM 0.32 models/gemma3n.py
    and models/gemma4.py build them (counted by kvplan.weights.gemma_blocks): per-layer
    embeddings (a second vocabulary table of num_layers x hidden_size_per_layer_input columns, a
    projection into it and a gate in each layer; 0: none), AltUp over altup_num_inputs copies of
    the residual stream and LAuReL's rank-`laurel_rank` side branch (Gemma-3n; 0: none); and
    KV-shared layers that build only q_proj and q_norm (Gemma3nAttention, Gemma4Attention: no
    k/v, no k_norm)."""

    altup_num_inputs: int = 0
    laurel_rank: int = 0
    hidden_size_per_layer_input: int = 0
    vocab_size_per_layer_input: int = 0
    # Gemma-4's use_double_wide_mlp: the KV-shared layers' MLP twice intermediate_size wide
    # (gemma4.py:570-582 Gemma4DecoderLayer).
    double_wide_shared_mlp: bool = False
    # Gemma-4's enable_moe_block: each MoE layer keeps its dense MLP beside the experts, with
    # three more norms (gemma4.py:605-651: post_feedforward_layernorm_1 / _2,
    # pre_feedforward_layernorm_2); the router's scale and per-expert scale are
    # kvplan.weights.routers'.
    dense_mlp_beside_moe: bool = False
    # The multimodal wrapper's towers vLLM builds beside the language model (vision_config,
    # audio_config: Gemma3nForConditionalGeneration, Gemma4ForConditionalGeneration); where not
    # counted (tower_shapes None), a budget from the device needs the weights given
    # (kvplan.capacity.stages). Empty: the text model alone.
    towers: tuple[str, ...] = ()
    # Gemma-4's towers' sizes, where kvplan counts them (kvplan.weights.gemma4_towers): the
    # towers above are then priced, not refused.
    tower_shapes: Gemma4Towers | None = None


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    id: str
    name: str
    source: str
    path: str
    model_type: str
    weight_dtype: str  # kvplan dtype name (bf16, fp8, ...)
    num_hidden_layers: int
    hidden_size: int
    vocab_size: int
    attention: Attention
    mlp: MLPSpec
    moe: MoESpec | None = None
    tie_word_embeddings: bool = False
    position_embedding: str = "rope"  # rope, learned, alibi, or none (no rotary table built)
    max_position_embeddings: int | None = None
    # The longest context vLLM starts with (kvplan.model.context_limit), where the config's
    # position keys or RoPE scaling make it differ from max_position_embeddings; None: that.
    context_limit: ContextLimit | None = None
    # config.json's position keys and rope_scaling, from which each engine derives its own
    # maximum (`engine_max_context`); None: the spec states only `max_context`'s fields.
    position_fields: PositionFields | None = None
    norm_type: str = "rmsnorm"
    # One entry per layer: the sliding window in tokens, or None for full attention.
    layer_windows: tuple[int | None, ...] = ()
    # One entry per layer: None when the layer owns its KV cache, else the index of the earlier
    # layer whose cache it reuses (cross-layer KV sharing: CLA, gemma-3n). Empty: all own.
    kv_sources: tuple[int | None, ...] = ()
    # One entry per layer, from LAYER_TYPES' mixers: "attention", "recurrent", "hybrid" or
    # "mlp". Empty: every layer is attention (of the kind layer_windows / layer_chunks say).
    layer_mixers: tuple[str, ...] = ()
    # One entry per layer: the chunk of chunked local attention (Llama-4), else None.
    layer_chunks: tuple[int | None, ...] = ()
    # Whether each layer has an MLP/MoE block (Nemotron-H: mixer layers do not). Empty: all.
    layer_has_mlp: tuple[bool, ...] = ()
    # kvplan layers (one attention each) per decoder layer of the model code: LongCat-Flash's
    # FlashDecoderLayer holds two MLA attentions (models/longcat_flash.py self_attn, a ModuleList
    # of 2), read as two layers; pipeline stages split whole decoder layers (capacity.stages).
    layers_per_block: int = 1
    recurrent: RecurrentSpec | None = None
    indexer: IndexerSpec | None = None
    # Multi-token-prediction layers after the main stack (DeepSeek-V3, GLM-4.5, Qwen3-Next):
    # loaded and given KV only with speculative decoding (--speculative-method mtp).
    num_nextn_predict_layers: int = 0
    # The config's `use_qk_norm` (GLM-4.5: per-head RMSNorm of q and k before RoPE); the cost
    # model reads it through `per_head_qk_norm`, for the architectures that honour it
    # (kvplan.sources.features).
    qk_norm: bool = False
    # Rows of each distinct rotary cos/sin table vLLM builds
    # (kvplan.weights.base.rope_cache_elements).
    # Empty: one table of max_position_embeddings rows.
    rope_tables: tuple[int, ...] = ()
    # Values per row of those tables where only part of each head rotates (vLLM get_rope's
    # rotary_dim: head_dim x partial_rotary_factor, or the family's rotary_dim; read by
    # kvplan.sources.hf_rotary). None: the attention's head_dim (MLA: qk_rope_head_dim).
    rotary_dim: int | None = None
    # Set by vLLM's served_spec where its Transformers modeling backend builds the model
    # (kvplan.engines.vllm.architectures.transformers_backend_rotary): transformers' rotary
    # modules hold this many pairs of float32 inv_freq / original_inv_freq buffers instead of
    # vLLM's cos/sin tables (kvplan.weights.base.rope_cache_bytes). 0: vLLM's get_rope tables.
    rotary_inv_freq_pairs: int = 0
    # A multimodal checkpoint's vision encoder, counted in its weights (no KV cache). None: a
    # text-only model, or a tower kvplan does not describe (flagged where it matters).
    vision: VisionTowerSpec | None = None
    # A Qwen3-VL / Qwen3.5 vision transformer: not in the weight estimate (as before), sized for
    # vLLM's encoder profile only. None: none, or one kvplan does not describe.
    qwen_vit: QwenViTSpec | None = None
    # A Qwen2-VL / Qwen2.5-VL vision transformer, counted in the weights (group "vision"); its
    # encoder profile is not modelled. None: none, or one kvplan does not describe.
    qwen2_vit: Qwen2ViTSpec | None = None
    # Gemma-3n's per-layer embeddings, AltUp and LAuReL weights; None: a model without them.
    gemma_blocks: GemmaBlocksSpec | None = None
    # config.json's quantization_config, as canonical JSON text (validated at load time by
    # kvplan.model.quant_config.parse_quantization_config); None: weights in weight_dtype.
    quantization_json: str | None = None
    # The file quantization_json was read from when not config.json's quantization_config:
    # "hf_quant_config.json" (ModelOpt 0.29 and older; kvplan.sources.hf_files.read_quant_file),
    # so that what names a field of it names that file. None: config.json or the spec file.
    quantization_file: str | None = None
    # The safetensors headers of the checkpoint the spec was loaded with (a local folder or a
    # Hugging Face repo): exact per-tensor sizes for kvplan.weights.checkpoint. None: sizes from the
    # architecture. Read once at load time, so that planning does no I/O.
    checkpoint: CheckpointWeights | None = field(default=None, compare=False, repr=False)
    # Architecture features the cost model reads (kvplan.perf.op_counts): set where the spec is
    # built, from the spec file or else by model_type (kvplan.sources.features, which names the
    # engine code behind each).
    per_head_qk_norm: bool = False  # RMSNorm of q and k per head (Qwen3; GLM-4.5 by use_qk_norm)
    full_width_qk_norm: bool = False  # one q / k RMSNorm over all heads (MiniMax-M2)
    attention_output_gate: bool = False  # a sigmoid gate per head on the output (Qwen3-Next)
    shared_expert_gate: bool = False  # a sigmoid gate on the shared expert (Qwen2-MoE)
    shared_expert_in_fused_moe: bool = False  # SGLang runs it inside fused_moe (GLM-4.5)
    compiled_grouped_topk: bool = False  # no fused SGLang top-k for its router (GLM-4.5)
    triton_causal_conv: bool = False  # SGLang's Mamba2 layers use the Triton conv (Nemotron-H)
    mtp_own_head: bool = False  # each MTP layer its own lm head, eh_proj whole (DeepSeek-V3)
    head_wise_attn_gate: bool = False  # g_proj: a sigmoid logit per query head (Step-3.5)
    sandwich_norms: bool = False  # four hidden-size norms per layer, not two (Trinity / Afmoe)
    rope_table_float32: bool = False  # the rotary table in float32 whatever the dtype (gpt-oss)
    attention_sinks: bool = False  # a learned sink logit per query head and layer (gpt-oss)
    expert_biases: bool = False  # routed experts' gate_up and down biases (gpt-oss)
    # Weights only (kvplan.weights.params; the vLLM 0.32 lines: kvplan.sources.features):
    layernorm_without_bias: bool = False  # LayerNorms hold no bias (DBRX drops them)
    parallel_block_norm: bool = False  # one input norm feeds attention and MLP (GPT-J)
    lm_head_bias: bool = False  # the untied lm_head has a bias over the vocabulary (GPT-J)
    embedding_layernorm: bool = False  # a LayerNorm after the token embeddings (BLOOM)
    learned_position_offset: bool = False  # 2 position rows past max_position_embeddings (OPT)
    replicated_qk_norm: bool = False  # q / k norms over all heads, whole on every rank (OLMoE)
    headwise_qk_norm: bool = False  # q / k norms of (heads, head_dim), split with them (Cohere)
    # One entry per layer when attention shapes differ by layer type (Gemma-4's global layers:
    # other KV heads and head size than the sliding ones); empty: `attention` on every layer.
    layer_attention: tuple[Attention, ...] = ()
    # What was assumed rather than read (an unknown model_type's config.json): empty for every
    # family kvplan reads field by field and for the bundled specs.
    assumptions: tuple[Assumption, ...] = ()
    # Whether config.json states torch_dtype / dtype: False where weight_dtype is transformers'
    # float32 default for an absent one (TensorRT-LLM reads None as bfloat16 instead).
    weight_dtype_stated: bool = True
    # A multimodal wrapper's own torch_dtype where it differs from its text part's weight_dtype:
    # vLLM's get_torch_dtype reads the outer config's first, SGLang the text config's.
    wrapper_dtype: str | None = None
    # config.json's `architectures` (the model classes it names, first first) and whether its
    # `auto_map` names remote modeling code (an AutoModel* entry): what an engine's model
    # registry picks its implementation by (kvplan.engines.vllm.architectures). Empty / False:
    # a spec file, or a config without them.
    architectures: tuple[str, ...] = ()
    remote_code: bool = False
    # A multimodal wrapper's language model class, as vLLM builds it over the text sub-config
    # (kvplan.sources.hf_wrappers.text_class_fields); empty: none, or not a wrapper.
    text_architectures: tuple[str, ...] = ()
    # The config class `auto_map` names for AutoConfig (the checkpoint's own code, None: none),
    # and config.json's top-level model_type as stated beside it (None: none stated; a wrapper's
    # own, where model_type is its text part's): an engine builds the config without that code
    # only from a class its transformers or its own registry has for that model_type
    # (kvplan.engines.vllm.config_class).
    remote_config: str | None = None
    config_model_type: str | None = None

    @property
    def exact(self) -> bool:
        """Whether the sizes rest only on what the config states for a family kvplan knows."""
        return not self.assumptions

    @property
    def kv_exact(self) -> bool:
        """Whether the per-token, per-block and per-request cache sizes rest only on what the
        config states (assumptions about weights alone leave them exact)."""
        return all(a.affects == "weights" for a in self.assumptions)

    @property
    def quantization_config(self) -> dict[str, Any] | None:
        import json

        return None if self.quantization_json is None else json.loads(self.quantization_json)

    def attention_at(self, index: int) -> Attention:
        """Layer `index`'s attention shape (`attention` unless shapes differ by layer type)."""
        return self.layer_attention[index] if self.layer_attention else self.attention

    @property
    def attention_shapes(self) -> tuple[Attention, ...]:
        """Every distinct attention shape, `attention` first."""
        return tuple(dict.fromkeys((self.attention, *self.layer_attention)))

    def mixer(self, index: int) -> str:
        return self.layer_mixers[index] if self.layer_mixers else "attention"

    def has_attention(self, index: int) -> bool:
        return self.mixer(index) in ("attention", "hybrid")

    def has_recurrent(self, index: int) -> bool:
        return self.mixer(index) in ("recurrent", "hybrid")

    def has_mlp(self, index: int) -> bool:
        return self.layer_has_mlp[index] if self.layer_has_mlp else True

    def chunk(self, index: int) -> int | None:
        return self.layer_chunks[index] if self.layer_chunks else None

    @property
    def num_attention_layers(self) -> int:
        return sum(1 for i in range(self.num_hidden_layers) if self.has_attention(i))

    @property
    def num_recurrent_layers(self) -> int:
        return sum(1 for i in range(self.num_hidden_layers) if self.has_recurrent(i))

    @property
    def kv_owner_flags(self) -> tuple[bool, ...]:
        """Per layer: does it hold a KV cache of its own?"""
        if not self.kv_sources:
            return (True,) * self.num_hidden_layers
        return tuple(src is None for src in self.kv_sources)

    def projects_kv(self, index: int) -> bool:
        """Whether layer `index` builds key/value projections: not a KV-shared Gemma-3n or
        Gemma-4 layer (models/gemma3n.py Gemma3nAttention, models/gemma4.py:409-418
        Gemma4Attention: `if self.is_kv_shared_layer`, q_proj only)."""
        return self.gemma_blocks is None or self.kv_owner_flags[index]

    def mlp_width(self, index: int) -> int:
        """The dense MLP's width in layer `index`: intermediate_size, twice that on a KV-shared
        layer of a Gemma-4 with use_double_wide_mlp (GemmaBlocksSpec.double_wide_shared_mlp)."""
        b = self.gemma_blocks
        wide = b is not None and b.double_wide_shared_mlp and not self.kv_owner_flags[index]
        return self.mlp.intermediate_size * (2 if wide else 1)

    @property
    def num_kv_shared_layers(self) -> int:
        return sum(1 for owns in self.kv_owner_flags if not owns)

    @property
    def kind(self) -> AttentionKind:
        return self.attention.kind

    @property
    def is_hybrid(self) -> bool:
        """Some layers slide and some attend to the whole context (gemma-2, gemma-3)."""
        return len({w is None for w in self.layer_windows}) > 1 or any(
            c is not None for c in self.layer_chunks) or self.num_recurrent_layers > 0

    @property
    def max_context(self) -> ContextLimit | None:
        """The model's maximum context (vLLM's derived max_model_len): `context_limit`, else
        max_position_embeddings; None when the spec states neither."""
        if self.context_limit is not None:
            return self.context_limit
        if self.max_position_embeddings is None:
            return None
        where = "config.json" if self.path.endswith(".json") else "spec"
        return ContextLimit(tokens=self.max_position_embeddings,
                            source=f"{where} max_position_embeddings")

    def engine_max_context(self, rule: Callable[[PositionFields], ContextLimit | None]
                           ) -> ContextLimit | None:
        """The maximum context an engine whose own rule is `rule` derives from
        `position_fields`; `max_context` where the spec holds none or the rule finds no key, and
        where the two name the same key and number (one wording for one answer)."""
        stated = self.max_context
        own = None if self.position_fields is None else rule(self.position_fields)
        if own is None or (stated is not None and stated.tokens == own.tokens
                           and stated.source.split(" ", 1)[-1] == own.source.split(" ", 1)[-1]):
            return stated
        return own

    @property
    def max_context_tokens(self) -> int | None:
        limit = self.max_context
        return None if limit is None else limit.tokens

    @property
    def sliding_window(self) -> int | None:
        windows = {w for w in self.layer_windows if w is not None}
        return max(windows) if windows else None




def share_every_sources(num_layers: int, k: int) -> tuple[int | None, ...]:
    """CLA with factor k: layer i reuses the cache of layer i - (i mod k), the first of its run
    of k consecutive layers (Brandon et al. 2024, "Reducing Transformer Key-Value Cache Size with
    Cross-Layer Attention")."""
    return tuple(None if i % k == 0 else i - i % k for i in range(num_layers))


def last_layers_sources(windows: tuple[int | None, ...], shared: int) -> tuple[int | None, ...]:
    """gemma-3n's `num_kv_shared_layers`: the last `shared` layers own no cache; each reuses the
    last cache-owning layer of the same attention type (sliding or full) before them
    (transformers' Gemma3nTextAttention)."""
    n = len(windows)
    first_shared = n - shared
    sources: list[int | None] = [None] * n
    for i in range(first_shared, n):
        same = [j for j in range(first_shared) if windows[j] == windows[i]]
        sources[i] = same[-1] if same else -1
    return tuple(sources)


def validate_kv_sources(sources: tuple[int | None, ...], windows: tuple[int | None, ...],
                        *, path: str, field: str) -> None:
    for i, src in enumerate(sources):
        if src is None:
            continue
        if src == -1:
            raise SpecError(path, field, f"layer {i} has no earlier cache-owning layer of the "
                                         "same attention type to share with")
        if src == i:
            raise SpecError(path, field, f"layer {i} cannot share its KV cache with itself")
        if not 0 <= src < i:
            raise SpecError(path, field, f"layer {i} cannot share with layer {src}: a layer "
                                         "can only reuse an EARLIER layer's KV cache")
        if sources[src] is not None:
            raise SpecError(path, field, f"layer {i} shares with layer {src}, which itself "
                                         f"reuses layer {sources[src]}: point at the owner")
        if windows[src] != windows[i]:
            def kind(w: int | None) -> str:
                return "full attention" if w is None else f"sliding window {w}"

            raise SpecError(path, field, f"layer {i} ({kind(windows[i])}) cannot share with "
                                         f"layer {src} ({kind(windows[src])}): different kinds")



def with_share_every(spec: ModelSpec, k: int) -> ModelSpec:
    """The same model with CLA applied: every run of k consecutive layers shares one cache."""
    from dataclasses import replace

    if k < 1:
        raise InputError(f"--share-layers: must be >= 1, got {k}")
    if k == 1:
        return spec
    sources = share_every_sources(spec.num_hidden_layers, k)
    try:
        validate_kv_sources(sources, spec.layer_windows, path=spec.path, field="kv_sharing")
    except SpecError as exc:
        raise InputError(f"--share-layers {k}: {exc.message}") from None
    return replace(spec, kv_sources=sources)


