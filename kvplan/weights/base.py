"""A weight breakdown (`WeightBreakdown`: bytes per group, per tensor-parallel rank and pipeline
stage) and the rules its two sources share: the compute dtype the engines load (`engine_dtype`),
the vocabulary padding and the rotary table vLLM builds beside the weights. The breakdown from the
architecture is kvplan.weights.breakdown; the one from a checkpoint's safetensors headers is
kvplan.weights.checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvplan._util.dtypes import WEIGHT_DTYPE_ALIASES
from kvplan._util.units import cdiv
from kvplan.model.attention import HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec

# vLLM's VocabParallelEmbedding / ParallelLMHead pad the vocabulary to a multiple of 64 before
# splitting it over tensor-parallel ranks (DEFAULT_VOCAB_PADDING_SIZE in
# vllm/model_executor/layers/vocab_parallel_embedding.py).
VOCAB_PADDING = 64


# ---------------------------------------------------------------------------------------------
# The engines' dtype rule.

_ENGINE_DTYPE = {"fp32": "bf16", "bf16": "bf16", "fp16": "fp16"}


def engine_dtype(torch_dtype: str | None) -> str:
    """The compute dtype vLLM and SGLang load with under ``--dtype auto``, as a kvplan name.

    vLLM ModelConfig (vllm/config/model.py, _resolve_auto_dtype) and SGLang's ModelConfig take the
    config's ``torch_dtype``/``dtype``, but a float32 config is served in bfloat16 (float16 on
    GPUs without bf16); a config without a dtype reads as float32 and so also becomes bfloat16.
    Quantized-weight dtypes in torch_dtype (rare) fall back to bfloat16 as well."""
    if torch_dtype is None:
        return "bf16"
    name = WEIGHT_DTYPE_ALIASES.get(torch_dtype, torch_dtype)
    return _ENGINE_DTYPE.get(name, "bf16")


def engine_dtype_note(torch_dtype: str | None) -> str | None:
    """The note to show when `engine_dtype` differs from what config.json says."""
    if torch_dtype is None:
        return "torch_dtype absent: the engines load bfloat16 (float32 is downcast under auto)"
    name = WEIGHT_DTYPE_ALIASES.get(torch_dtype, torch_dtype)
    if name == "fp32":
        return "torch_dtype float32: vLLM and SGLang load bfloat16 under --dtype auto"
    if name not in _ENGINE_DTYPE:
        return f"torch_dtype {torch_dtype!r}: the compute dtype is taken as bfloat16"
    return None


# ---------------------------------------------------------------------------------------------
# The result.


@dataclass(frozen=True, kw_only=True)
class WeightBreakdown:
    """Weight bytes by group (per tensor-parallel rank when ``tp`` > 1). Quantization scales,
    zero points and act-order indices of every group are in ``quantization_scales`` only."""

    embeddings: int
    attention: int  # attention projections and recurrent mixers (+ their biases and norms)
    dense_mlp: int  # dense MLPs and shared experts
    experts: int  # routed experts and routers
    lm_head: int
    norms: int  # per-layer and final norms
    quantization_scales: int
    dtype: str  # the compute dtype
    method: str  # "none" or the QuantConfig's description
    notes: tuple[str, ...] = field(default=())
    expert_scales: int = 0  # the part of quantization_scales that belongs to routed experts
    # The parts of quantization_scales that belong to the dense MLPs (with shared experts) and
    # to the lm_head (`DpAttentionWeights` keeps them split where the engine does).
    dense_mlp_scales: int = 0
    lm_head_scales: int = 0
    vision: int = 0  # a multimodal vision tower and projector (checkpoint, or spec.vision)
    mtp: int = 0  # multi-token-prediction layers, loaded with --speculative-method mtp
    source: str = "architecture"  # or "checkpoint" (sizes from the safetensors headers)
    engine_added: int = 0  # bytes the engine allocates beyond the checkpoint (in the groups)
    # vLLM's rotary cos/sin table (`rope_cache_elements`): held on the GPU, but a lookup table,
    # not a weight a decode step streams, so kept out of the groups the cost model reads.
    rope_cache: int = 0
    # The part of quantization_scales that belongs to the MTP draft layers (`mtp`; the
    # architecture path's, which `DpAttentionWeights` placement keeps as split).
    mtp_scales: int = 0
    # vLLM's int32 expert maps under expert parallelism (kvplan.capacity.weights
    # `expert_map_bytes`): a buffer on the GPU like the rotary table, never streamed by a step.
    expert_map: int = 0
    # vLLM's float32 scalar scale buffers of each attention layer (kvplan.capacity.weights
    # `attention_scales_bytes`): on the GPU with the weights, never streamed by a step.
    attention_scales: int = 0

    @property
    def total(self) -> int:
        return (self.embeddings + self.attention + self.dense_mlp + self.experts + self.lm_head
                + self.norms + self.quantization_scales + self.vision + self.mtp
                + self.rope_cache + self.expert_map + self.attention_scales)

    def as_dict(self) -> dict[str, int]:
        return {"embeddings": self.embeddings, "attention": self.attention,
                "dense_mlp": self.dense_mlp, "experts": self.experts, "lm_head": self.lm_head,
                "norms": self.norms, "vision": self.vision, "mtp": self.mtp,
                "quantization_scales": self.quantization_scales, "rope_cache": self.rope_cache,
                "expert_map": self.expert_map, "attention_scales": self.attention_scales,
                "total": self.total}


def rope_cache_elements(spec: ModelSpec) -> int:
    """Elements of the rotary-embedding table vLLM builds for the model: (max_position_embeddings,
    rotary_dim), held in the model dtype on every rank and pipeline stage that has an attention
    layer, once per distinct rope configuration.

    vllm/model_executor/layers/rotary_embedding/base.py: ``RotaryEmbedding.__init__`` computes
    ``_compute_cos_sin_cache()`` (cos and sin concatenated: ``max_position_embeddings`` rows of
    ``rotary_dim`` values), casts it with ``cache.to(dtype)`` (the default dtype, i.e. the model
    dtype) and registers it as the ``cos_sin_cache`` buffer; ``get_rope`` in
    rotary_embedding/__init__.py shares one instance between the layers (``_ROPE_DICT``, keyed by
    head size, rotary dim, max position, rope parameters and dtype). It is built with the model,
    so vLLM's "Model loading took X GiB" includes it: 131,072 x 128 x 2 B = 32 MiB for Llama-3.1
    (64 MiB at --dtype float32), 2.5 GiB for Llama-4-Scout (max_position_embeddings 10,485,760).
    YaRN and DeepSeek-YaRN tables have original_max_position_embeddings x factor rows, which is
    what those configs state as max_position_embeddings. A spec that lists ``rope_tables`` gets
    one table of each listed row count instead: Gemma-3 builds two (gemma3.py Gemma3Attention:
    sliding layers use rope_local_base_freq without scaling, max_position_embeddings rows; global
    layers config.rope_scaling, and rotary_embedding/linear_scaling_rope.py
    LinearScalingRotaryEmbedding builds max_position_embeddings x factor rows: 131,072 x 8 for
    gemma-3-27b, 256 MiB in bf16). rotary_dim is ModelSpec.rotary_dim where only part of each
    head rotates (head_dim x partial_rotary_factor, kvplan.sources.hf_rotary: Qwen3-Next's
    262,144 x 64, not x 256), else head_dim (MLA: qk_rope_head_dim); longrope's short/long pair
    is not modelled. No rope (learned or ALiBi positions, or "none": attention without a rotary
    table, as Nemotron-H's) or no max_position_embeddings: 0."""
    if not spec.max_position_embeddings:
        return 0
    return sum(spec.rope_tables or (spec.max_position_embeddings,)) * _rotary_width(spec)


def _rotary_width(spec: ModelSpec) -> int:
    """Values each position rotates: ModelSpec.rotary_dim, else head_dim (MLA:
    qk_rope_head_dim); 0 without rope."""
    if spec.position_embedding != "rope":
        return 0
    att = spec.attention
    if isinstance(att, LatentAttention):
        return att.qk_rope_head_dim
    if isinstance(att, HeadAttention):
        return spec.rotary_dim or att.head_dim
    return 0


def rope_cache_bytes(spec: ModelSpec, compute_bits: int) -> int:
    """Bytes of the rotary tables (`rope_cache_elements`): in the compute dtype of
    ``compute_bits``, or float32 where the family asks get_rope for it
    (ModelSpec.rope_table_float32: vLLM 0.32 models/gpt_oss.py:110-113 `get_rope(...,
    dtype=torch.float32)`; gpt-oss-20b 131,072 x 64 x 4 B = 32 MiB, where bf16 gave 16 MiB)."""
    if spec.rotary_inv_freq_pairs:
        return transformers_rotary_bytes(spec)
    bits = 32 if spec.rope_table_float32 else compute_bits
    return cdiv(rope_cache_elements(spec) * bits, 8)


def transformers_rotary_bytes(spec: ModelSpec) -> int:
    """What transformers' rotary modules hold where vLLM builds the model through its
    Transformers modeling backend (ModelSpec.rotary_inv_freq_pairs), instead of get_rope's
    cos/sin tables: no table, but per rotary configuration a float32 ``inv_freq`` and its
    ``original_inv_freq`` clone of ceil(rotary_dim / 2) values each. transformers 5.19 (vLLM
    0.32 CPU build's) models/starcoder2/modeling_starcoder2.py:276-279 (`rope_init_fn`,
    :297 `torch.arange(0, dim, 2, dtype=torch.float)`, `nn.Buffer(inv_freq)`,
    `nn.Buffer(inv_freq.clone())`), one module per model (:323 `self.rotary_emb`); OLMo-3's
    and Mellum's a pair per layer type (models/olmo3/modeling_olmo3.py Olmo3RotaryEmbedding:
    `f"{layer_type}_inv_freq"`). vLLM builds the HF model with `init_on_device_without_buffers
    ("meta")` (models/transformers/base.py:173-179): parameters on meta, buffers on the load
    device, so they are on the GPU. Starcoder2-15B (head_dim 128): 2 x 64 x 4 B = 512 B, where
    its cos/sin table would be 16,384 x 128 x 2 B = 4 MiB. No rope: 0. (transformers 4.x,
    installed with the older vLLM releases, kept original_inv_freq as an alias of inv_freq,
    one buffer, 256 B less on Starcoder2: the 5.19 pair is taken for every release.)"""
    return spec.rotary_inv_freq_pairs * 2 * cdiv(_rotary_width(spec), 2) * 4


@dataclass(frozen=True, kw_only=True)
class DpAttentionWeights:
    """Where an engine's weights sit under data-parallel attention, one attention-DP rank per GPU
    (attention TP 1): the attention projections and the token embeddings are whole on every
    rank (SGLang's attention TP above 1 splits the attention over the rank's GPUs:
    kvplan.capacity.weights `_dp_weights`), the routed experts split over the ranks (TP or EP)
    as without it. ``mlp_split``: the dense MLP layers and the shared experts stay split over
    the whole TP group, else they are whole too; ``lm_head_split``: likewise the lm_head.
    vLLM's DP + EP runs each DP rank as a replica of all but the routed experts (both False);
    SGLang builds only attention and embeddings on the attention-TP group
    (kvplan.engines.sglang.engine `dp_attention_weights`)."""

    mlp_split: bool = False
    lm_head_split: bool = False


@dataclass(frozen=True, kw_only=True)
class StageOuter:
    """The weights outside the decoder layers that a pipeline stage holds beyond its place:
    ``embeddings`` (the token, position and per-layer embeddings, which every engine builds on
    the first stage) and ``head`` (the final norm and lm_head, built on the last stage). Both
    False: the split `weight_breakdown` describes (vLLM's Llama: PPMissingLayer elsewhere);
    both True: every stage builds them all, a tied lm_head then sharing its stage's embedding
    (kvplan.engines.vllm.stage_weights: vLLM's Gemma-4, Mixtral, ...); ``embeddings`` alone:
    every stage builds the embeddings, the last alone the final norm and a lm_head tied to
    them (vLLM's Qwen3.5, LFM2); ``lm_head``: the lm_head on every stage, the final norm on the
    last alone (vLLM's Qwen3-Next)."""

    embeddings: bool = False
    head: bool = False
    lm_head: bool = False

    def holds(self, *, first: bool, last: bool) -> tuple[bool, bool]:
        """(embeddings, head) of the stage that is the first / the last one or not."""
        return first or self.embeddings, last or self.head


def stage_has_attention(spec: ModelSpec, layers: range | None) -> bool:
    return any(spec.has_attention(i) for i in range(spec.num_hidden_layers)
               if layers is None or i in layers)


def experts_module(spec: ModelSpec, layer: int) -> str:
    """The name quantization configs match decoder layer `layer`'s routed experts by: their
    first expert's gate_proj under the fused-MoE module (vLLM 0.32 compressed_tensors_moe.py:37
    looks a FusedMoE up as ``{prefix}.0.gate_proj``; ModelOpt's is_layer_excluded matches the
    prefix itself, which this name extends). The experts sit under ``mlp`` (``model.layers.3.
    mlp.experts``) except in Gemma-4, whose layer builds them beside its dense MLP (models/
    gemma4.py:646-653 Gemma4DecoderLayer: FusedMoE prefix ``{layer}.experts``; the wrapper maps
    ``model.language_model.`` to ``language_model.model.``, gemma4_mm.py:1044-1055), so that an
    ignore entry ``model.language_model.layers.0.mlp*`` (the NVFP4 26B-A4B's) leaves them
    quantized."""
    blocks = spec.gemma_blocks
    under = "" if blocks is not None and blocks.dense_mlp_beside_moe else "mlp."
    return f"model.layers.{layer}.{under}experts.0.gate_proj"
