"""Model specs: frozen dataclasses, and the YAML loader that validates them at the boundary.

A spec is read with ``yaml.safe_load``; unknown keys are rejected; every error names the file
and the field (``model_specs/x.yaml: attention.num_key_value_heads: must divide ...``).
The schema is documented in ``model_specs/README.md``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .attention import Attention, AttentionKind, HeadAttention, LatentAttention
from .dtypes import WEIGHT_DTYPE_ALIASES
from .errors import InputError, SpecError
from .validate import MAX_LAYERS, MAX_SIZE, checked_int, checked_text

if TYPE_CHECKING:
    from .checkpoint import CheckpointWeights

SLIDING = "sliding_attention"
FULL = "full_attention"
CHUNKED = "chunked_attention"
RECURRENT = "recurrent"
HYBRID = "hybrid"  # attention and a recurrent state side by side in one layer (Falcon-H1)
MLP_ONLY = "mlp"  # no token mixer at all (Nemotron-H's '-' and 'E' layers)
LAYER_TYPES = (FULL, SLIDING, CHUNKED, RECURRENT, HYBRID, MLP_ONLY)

# Recurrent state kinds and the fields each needs (see model_specs/README.md).
RECURRENT_FIELDS: dict[str, tuple[str, ...]] = {
    "mamba1": ("intermediate_size", "state_size", "conv_kernel"),
    "mamba2": ("intermediate_size", "state_size", "conv_kernel", "n_groups", "num_heads",
               "head_dim"),
    "gated_delta_net": ("num_key_heads", "num_value_heads", "key_head_dim", "value_head_dim",
                        "conv_kernel"),
    "kda": ("num_heads", "head_dim", "conv_kernel"),
    "short_conv": ("intermediate_size", "conv_kernel"),
    "linear_attention": ("num_heads", "head_dim"),
}
STATE_DTYPES = ("float32", "bfloat16", "float16")


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

    def is_moe_layer(self, index: int) -> bool:
        return index >= self.first_k_dense_replace and (
            (index - self.first_k_dense_replace) % self.moe_layer_freq == 0
        )


@dataclass(frozen=True, kw_only=True)
class RecurrentSpec:
    """The recurrent mixer of hybrid models; shapes as vLLM's MambaStateShapeCalculator uses them.

    ``ssm_dtype``: the dtype the config fixes for the SSM/recurrent state (Nemotron-H's
    ``mamba_ssm_cache_dtype``, default float32 in vLLM; Qwen3.5's ``mamba_ssm_dtype``); None:
    the conv state's dtype (the model dtype), except KDA whose recurrent state is float32.
    """

    kind: str
    conv_kernel: int = 0
    intermediate_size: int = 0
    state_size: int = 0
    n_groups: int = 1
    num_heads: int = 0
    head_dim: int = 0
    num_key_heads: int = 0
    num_value_heads: int = 0
    key_head_dim: int = 0
    value_head_dim: int = 0
    ssm_dtype: str | None = None
    conv_bias: bool = True
    dt_rank: int = 0  # mamba1 (0: ceil(hidden / 16))


@dataclass(frozen=True, kw_only=True)
class IndexerSpec:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5)."""

    index_head_dim: int
    index_n_heads: int
    index_topk: int


@dataclass(frozen=True, kw_only=True)
class VisionTowerSpec:
    """A SigLIP vision encoder and the projector into the language model of a multimodal
    checkpoint, as vLLM builds them (vllm/model_executor/models/siglip.py SiglipVisionModel;
    the projector named by ``projector``: "gemma3" = gemma3_mm.py Gemma3MultiModalProjector).
    Loaded with the model, so in "Model loading took X GiB"; it holds no KV cache."""

    kind: str  # "siglip"
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

    @property
    def num_positions(self) -> int:
        """SiglipVisionEmbeddings: one position per patch ((image_size / patch_size) ** 2)."""
        return (self.image_size // self.patch_size) ** 2


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
    Its weights are counted in group "vision" (kvplan.weights); what it adds to the reserve is
    vLLM's encoder profile (kvplan.engines.vllm_mm)."""

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
    position_embedding: str = "rope"
    max_position_embeddings: int | None = None
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
    recurrent: RecurrentSpec | None = None
    indexer: IndexerSpec | None = None
    # Multi-token-prediction layers after the main stack (DeepSeek-V3, GLM-4.5, Qwen3-Next):
    # loaded and given KV only with speculative decoding (--speculative-method mtp).
    num_nextn_predict_layers: int = 0
    # The config's `use_qk_norm` (GLM-4.5: per-head RMSNorm of q and k before RoPE); read by the
    # cost model only for the architectures that honour it (costmodel.CONFIG_QK_NORM_MODEL_TYPES).
    qk_norm: bool = False
    # Rows of each distinct rotary cos/sin table vLLM builds (kvplan.weights.rope_cache_elements).
    # Empty: one table of max_position_embeddings rows.
    rope_tables: tuple[int, ...] = ()
    # A multimodal checkpoint's vision encoder, counted in its weights (no KV cache). None: a
    # text-only model, or a tower kvplan does not describe (flagged where it matters).
    vision: VisionTowerSpec | None = None
    # A Qwen3-VL / Qwen3.5 vision transformer: not in the weight estimate (as before), sized for
    # vLLM's encoder profile only. None: none, or one kvplan does not describe.
    qwen_vit: QwenViTSpec | None = None
    # config.json's quantization_config, as canonical JSON text (validated at load time by
    # kvplan.weights.parse_quantization_config); None: weights in weight_dtype.
    quantization_json: str | None = None
    # The safetensors headers of the checkpoint the spec was loaded with (a local folder or a
    # Hugging Face repo): exact per-tensor sizes for kvplan.weights. None: sizes from the
    # architecture. Read once at load time, so that planning does no I/O.
    checkpoint: CheckpointWeights | None = field(default=None, compare=False, repr=False)

    @property
    def quantization_config(self) -> dict[str, Any] | None:
        import json

        return None if self.quantization_json is None else json.loads(self.quantization_json)

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
    def sliding_window(self) -> int | None:
        windows = {w for w in self.layer_windows if w is not None}
        return max(windows) if windows else None


# ---------------------------------------------------------------------------------------------
# Validation helpers. Each takes the mapping, the key and the dotted prefix used in messages.


class _Reader:
    """Reads one mapping section, remembering which keys were consumed."""

    def __init__(self, data: Any, path: str, prefix: str) -> None:
        if not isinstance(data, Mapping):
            raise SpecError(path, prefix.rstrip(".") or None, "expected a mapping of fields")
        self.data = data
        self.path = path
        self.prefix = prefix
        self.seen: set[str] = set()

    def field(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def error(self, key: str, message: str) -> SpecError:
        return SpecError(self.path, self.field(key), message)

    def _get(self, key: str, required: bool) -> Any:
        self.seen.add(key)
        if key not in self.data or self.data[key] is None:
            if required:
                raise self.error(key, "missing required field")
            return None
        return self.data[key]

    def int(self, key: str, *, required: bool = True, default: int | None = None,
            minimum: int = 1, maximum: int = MAX_SIZE) -> int | None:
        value = self._get(key, required)
        if value is None:
            return default
        return checked_int(value, path=self.path, field=self.field(key), minimum=minimum,
                           maximum=maximum)

    def str(self, key: str, *, required: bool = True, default: str | None = None,
            choices: tuple[str, ...] | None = None) -> str | None:
        value = self._get(key, required)
        if value is None:
            return default
        checked_text(value, path=self.path, field=self.field(key))
        if choices is not None and value not in choices:
            raise self.error(key, f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def bool(self, key: str, *, default: bool = False) -> bool:
        value = self._get(key, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def section(self, key: str, *, required: bool = True) -> _Reader | None:
        value = self._get(key, required)
        if value is None:
            return None
        return _Reader(value, self.path, self.field(key) + ".")

    def forbid(self, keys: tuple[str, ...], why: str) -> None:
        for key in keys:
            if key in self.data:
                raise self.error(key, why)

    def finish(self) -> None:
        unknown = sorted(str(k) for k in self.data if k not in self.seen)
        if unknown:
            raise self.error(unknown[0], "unknown field (see model_specs/README.md for the schema)")


_HEAD_FIELDS = ("num_key_value_heads", "head_dim")
_MLA_FIELDS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "q_lora_rank")


def _parse_attention(r: _Reader) -> Attention:
    kind_name = r.str("kind", choices=tuple(k.value for k in AttentionKind))
    kind = AttentionKind(kind_name)
    heads = r.int("num_attention_heads")
    # attention_bias is accepted for every kind (DeepSeek configs carry `attention_bias: false`).
    attention_bias = r.bool("attention_bias")
    if kind is AttentionKind.mla:
        r.forbid(_HEAD_FIELDS, "not used by kind mla (MLA caches kv_lora_rank + qk_rope_head_dim)")
        return LatentAttention(
            num_attention_heads=heads,
            kv_lora_rank=r.int("kv_lora_rank"),
            qk_rope_head_dim=r.int("qk_rope_head_dim"),
            qk_nope_head_dim=r.int("qk_nope_head_dim"),
            v_head_dim=r.int("v_head_dim"),
            q_lora_rank=r.int("q_lora_rank", required=False),
        )
    r.forbid(_MLA_FIELDS, f"only valid for kind mla, not {kind.value}")
    kv_heads = r.int("num_key_value_heads")
    head_dim = r.int("head_dim")
    v_head_dim = r.int("v_head_dim", required=False, default=head_dim)
    if heads % kv_heads:
        raise r.error("num_key_value_heads", f"must divide num_attention_heads ({heads})")
    if kind is AttentionKind.mha and kv_heads != heads:
        raise r.error("num_key_value_heads",
                      f"kind mha needs num_attention_heads ({heads}) KV heads")
    if kind is AttentionKind.mqa and kv_heads != 1:
        raise r.error("num_key_value_heads", f"kind mqa needs exactly 1 KV head, got {kv_heads}")
    if kind is AttentionKind.gqa and not 1 <= kv_heads <= heads:
        raise r.error("num_key_value_heads", "kind gqa needs between 1 and num_attention_heads")
    return HeadAttention(
        kind=kind,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=v_head_dim,
        attention_bias=attention_bias,
        o_proj_bias=r.bool("o_proj_bias"),
    )


def _parse_windows(r: _Reader, num_layers: int) -> tuple[int | None, ...]:
    window = r.int("sliding_window", required=False)
    pattern = r.int("sliding_window_pattern", required=False)
    types = r._get("layer_types", False)
    if pattern is not None and types is not None:
        raise r.error("layer_types", "give either sliding_window_pattern or layer_types, not both")
    if (pattern is not None or types is not None) and window is None:
        raise r.error("sliding_window", "missing: required with sliding_window_pattern/layer_types")
    if window is None:
        return (None,) * num_layers
    if types is not None:
        if not isinstance(types, list) or len(types) != num_layers:
            raise r.error("layer_types", f"expected a list of {num_layers} entries (one per layer)")
        bad = [t for t in types if t not in (SLIDING, FULL)]
        if bad:
            raise r.error("layer_types", f"entries must be {SLIDING} or {FULL}, got {bad[0]!r}")
        return tuple(window if t == SLIDING else None for t in types)
    if pattern is not None:
        # Every `pattern`-th layer (1-based) is global: gemma-3's 6 gives 5 local : 1 global.
        return tuple(None if (i + 1) % pattern == 0 else window for i in range(num_layers))
    return (window,) * num_layers


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


def _parse_sharing(r: _Reader, windows: tuple[int | None, ...]) -> tuple[int | None, ...]:
    n = len(windows)
    every = r.int("share_every", required=False)
    last = r.int("num_kv_shared_layers", required=False, minimum=0)
    targets = r._get("kv_shared_layer_targets", False)
    given = [name for name, v in (("share_every", every), ("num_kv_shared_layers", last),
                                  ("kv_shared_layer_targets", targets)) if v is not None]
    if len(given) != 1:
        raise SpecError(r.path, r.prefix.rstrip("."),
                        "give exactly one of share_every, num_kv_shared_layers, "
                        "kv_shared_layer_targets")
    r.finish()
    if every is not None:
        sources = share_every_sources(n, every)
        field = r.field("share_every")
    elif last is not None:
        if last >= n:
            raise r.error("num_kv_shared_layers", f"must be < num_hidden_layers ({n})")
        sources = last_layers_sources(windows, last)
        field = r.field("num_kv_shared_layers")
    else:
        field = r.field("kv_shared_layer_targets")
        if not isinstance(targets, list) or len(targets) != n:
            raise SpecError(r.path, field, f"expected a list of {n} entries (null or a layer "
                                           "index, one per layer)")
        for t in targets:
            if t is not None and (isinstance(t, bool) or not isinstance(t, int)):
                raise SpecError(r.path, field, f"entries must be null or a layer index, got {t!r}")
        sources = tuple(targets)
    validate_kv_sources(sources, windows, path=r.path, field=field)
    return sources


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


def _parse_moe(r: _Reader, num_layers: int) -> MoESpec:
    moe = MoESpec(
        n_routed_experts=r.int("n_routed_experts"),
        num_experts_per_tok=r.int("num_experts_per_tok"),
        moe_intermediate_size=r.int("moe_intermediate_size"),
        n_shared_experts=r.int("n_shared_experts", required=False, default=0, minimum=0),
        shared_expert_intermediate_size=r.int(
            "shared_expert_intermediate_size", required=False, default=0, minimum=0
        ),
        first_k_dense_replace=r.int("first_k_dense_replace", required=False, default=0, minimum=0),
        moe_layer_freq=r.int("moe_layer_freq", required=False, default=1),
    )
    if moe.num_experts_per_tok > moe.n_routed_experts:
        raise r.error("num_experts_per_tok",
                      f"must be <= n_routed_experts ({moe.n_routed_experts})")
    if moe.first_k_dense_replace > num_layers:
        raise r.error("first_k_dense_replace", f"must be <= num_hidden_layers ({num_layers})")
    r.finish()
    return moe


def _parse_quantization(r: _Reader, path: str) -> str | None:
    """The quantization_config mapping, checked by the weights model (one line on error)."""
    import json

    qc = r._get("quantization_config", False)
    if qc is None:
        return None
    from .quant import parse_quantization_config  # pure; imported late (it imports spec)

    parse_quantization_config(qc, path)
    try:
        return json.dumps(qc, sort_keys=True)
    except (TypeError, ValueError):
        raise r.error("quantization_config", "expected a JSON-like mapping") from None


_MIXER_OF = {FULL: "attention", SLIDING: "attention", CHUNKED: "attention",
             RECURRENT: "recurrent", HYBRID: "hybrid", MLP_ONLY: "mlp"}


def _parse_layer_types(r: _Reader, att_r: _Reader, types: Any, num_layers: int
                       ) -> tuple[tuple[int | None, ...], tuple[int | None, ...],
                                  tuple[str, ...]]:
    """Top-level ``layer_types``: one entry per layer from LAYER_TYPES. Returns the sliding
    windows, the local-attention chunks and the mixers, one entry per layer each."""
    field = r.field("layer_types")
    if not isinstance(types, list) or len(types) != num_layers:
        raise SpecError(r.path, field, f"expected a list of {num_layers} entries (one per layer)")
    bad = [t for t in types if t not in LAYER_TYPES]
    if bad:
        raise SpecError(r.path, field, f"entries must be one of {', '.join(LAYER_TYPES)}, "
                                       f"got {bad[0]!r}")
    att_r.forbid(("layer_types", "sliding_window_pattern"),
                 "not with the top-level layer_types (which already says which layers slide)")
    window = att_r.int("sliding_window", required=False)
    chunk = att_r.int("attention_chunk_size", required=False)
    if SLIDING in types and window is None:
        raise att_r.error("sliding_window", "missing: layer_types has sliding_attention layers")
    if CHUNKED in types and chunk is None:
        raise att_r.error("attention_chunk_size",
                          "missing: layer_types has chunked_attention layers")
    windows = tuple(window if t == SLIDING else None for t in types)
    chunks = tuple(chunk if t == CHUNKED else None for t in types)
    if all(c is None for c in chunks):
        chunks = ()
    return windows, chunks, tuple(_MIXER_OF[t] for t in types)


def _parse_indexer(r: _Reader, attention: Attention) -> IndexerSpec:
    if not isinstance(attention, LatentAttention):
        raise SpecError(r.path, r.prefix.rstrip("."), "the sparse-attention indexer is only "
                                                      "modelled for kind mla")
    spec = IndexerSpec(index_head_dim=r.int("index_head_dim"), index_n_heads=r.int("index_n_heads"),
                       index_topk=r.int("index_topk"))
    r.finish()
    return spec


def _parse_recurrent(r: _Reader) -> RecurrentSpec:
    kind = r.str("kind", choices=tuple(RECURRENT_FIELDS))
    needed = RECURRENT_FIELDS[kind]
    values: dict[str, Any] = {"kind": kind}
    for name in ("conv_kernel", "intermediate_size", "state_size", "n_groups", "num_heads",
                 "head_dim", "num_key_heads", "num_value_heads", "key_head_dim",
                 "value_head_dim", "dt_rank"):
        if name in needed:
            values[name] = r.int(name)
        else:
            value = r.int(name, required=False)
            if value is not None and name != "dt_rank":
                raise r.error(name, f"not used by kind {kind} (it needs {', '.join(needed)})")
            if value is not None:
                values[name] = value
    values["ssm_dtype"] = r.str("ssm_dtype", required=False, choices=STATE_DTYPES)
    values["conv_bias"] = r.bool("conv_bias", default=True)
    rec = RecurrentSpec(**values)
    if kind == "mamba2":
        if rec.num_heads % rec.n_groups:
            raise r.error("n_groups", f"must divide num_heads ({rec.num_heads})")
        if rec.num_heads * rec.head_dim != rec.intermediate_size:
            raise r.error("intermediate_size", f"must equal num_heads x head_dim "
                                               f"({rec.num_heads * rec.head_dim})")
    if kind == "gated_delta_net" and rec.num_value_heads % rec.num_key_heads:
        raise r.error("num_value_heads", f"must be a multiple of num_key_heads "
                                         f"({rec.num_key_heads})")
    r.finish()
    return rec


def parse_spec(data: Any, *, path: str, spec_id: str) -> ModelSpec:
    """Validate a mapping (from YAML, or converted from config.json) into a ModelSpec."""
    r = _Reader(data, path, "")
    layers = r.int("num_hidden_layers", maximum=MAX_LAYERS)
    weight_dtype = r.str("torch_dtype", required=False, default="bfloat16")
    if weight_dtype not in WEIGHT_DTYPE_ALIASES:
        raise r.error("torch_dtype", f"expected one of {', '.join(WEIGHT_DTYPE_ALIASES)}")
    att_r = r.section("attention")
    attention = _parse_attention(att_r)
    types = r._get("layer_types", False)
    if types is None:
        windows = _parse_windows(att_r, layers)
        mixers: tuple[str, ...] = ()
        chunks: tuple[int | None, ...] = ()
    else:
        windows, chunks, mixers = _parse_layer_types(r, att_r, types, layers)
    indexer_r = att_r.section("indexer", required=False)
    indexer = _parse_indexer(indexer_r, attention) if indexer_r is not None else None
    att_r.finish()
    rec_r = r.section("recurrent", required=False)
    needs_state = any(m in ("recurrent", "hybrid") for m in mixers)
    if needs_state and rec_r is None:
        raise r.error("recurrent", "missing: layer_types has recurrent/hybrid layers, whose "
                                   "state shape this section gives")
    if rec_r is not None and not needs_state:
        raise r.error("recurrent", "given, but no layer_types entry is recurrent or hybrid")
    recurrent = _parse_recurrent(rec_r) if rec_r is not None else None
    mlp_r = r.section("mlp")
    mlp = MLPSpec(
        intermediate_size=mlp_r.int("intermediate_size"),
        gated=mlp_r.bool("gated", default=True),
        bias=mlp_r.bool("bias"),
    )
    in_mixer_layers = mlp_r.bool("in_mixer_layers", default=True)
    mlp_r.finish()
    has_mlp: tuple[bool, ...] = ()
    if not in_mixer_layers:
        if not mixers:
            raise r.error("mlp.in_mixer_layers", "false needs layer_types with mlp layers")
        has_mlp = tuple(m == "mlp" for m in mixers)
    elif any(m == "mlp" for m in mixers):
        has_mlp = (True,) * layers
    sharing_r = r.section("kv_sharing", required=False)
    sources = _parse_sharing(sharing_r, windows) if sharing_r is not None else ()
    moe_r = r.section("moe", required=False)
    moe = _parse_moe(moe_r, layers) if moe_r is not None else None
    position_embedding = r.str(
        "position_embedding", required=False, default="rope", choices=("rope", "learned", "alibi")
    )
    max_pos = r.int("max_position_embeddings", required=False)
    if position_embedding == "learned" and max_pos is None:
        raise r.error("max_position_embeddings", "required with position_embedding: learned")
    spec = ModelSpec(
        id=spec_id,
        name=r.str("name"),
        source=r.str("source"),
        path=path,
        model_type=r.str("model_type", required=False, default="unknown"),
        weight_dtype=WEIGHT_DTYPE_ALIASES[weight_dtype],
        num_hidden_layers=layers,
        hidden_size=r.int("hidden_size"),
        vocab_size=r.int("vocab_size"),
        attention=attention,
        mlp=mlp,
        moe=moe,
        tie_word_embeddings=r.bool("tie_word_embeddings"),
        position_embedding=position_embedding,
        max_position_embeddings=max_pos,
        norm_type=r.str("norm_type", required=False, default="rmsnorm",
                        choices=("rmsnorm", "layernorm")),
        layer_windows=windows,
        kv_sources=sources,
        layer_mixers=mixers,
        layer_chunks=chunks,
        layer_has_mlp=has_mlp,
        recurrent=recurrent,
        indexer=indexer,
        num_nextn_predict_layers=r.int("num_nextn_predict_layers", required=False, default=0,
                                       minimum=0),
        rope_tables=_parse_rope_tables(r),
        qk_norm=r.bool("qk_norm"),
        vision=_parse_vision(r.section("vision", required=False)),
        qwen_vit=_parse_qwen_vit(r.section("qwen_vit", required=False)),
        quantization_json=_parse_quantization(r, path),
    )
    r.finish()
    return spec


def _parse_rope_tables(r: _Reader) -> tuple[int, ...]:
    value = r._get("rope_tables", False)
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise r.error("rope_tables", "expected a list of row counts (one per rotary table)")
    return tuple(checked_int(v, path=r.path, field=r.field("rope_tables")) for v in value)


def _parse_vision(r: _Reader | None) -> VisionTowerSpec | None:
    if r is None:
        return None
    tower = VisionTowerSpec(
        kind=r.str("kind", choices=("siglip",)),
        hidden_size=r.int("hidden_size"),
        intermediate_size=r.int("intermediate_size"),
        num_hidden_layers=r.int("num_hidden_layers"),
        num_attention_heads=r.int("num_attention_heads"),
        image_size=r.int("image_size"),
        patch_size=r.int("patch_size"),
        num_channels=r.int("num_channels", required=False, default=3),
        projector=r.str("projector", choices=("gemma3",)),
        tokens_per_image=r.int("tokens_per_image", required=False, default=256),
    )
    r.finish()
    if tower.hidden_size % tower.num_attention_heads:
        raise r.error("num_attention_heads", "must divide hidden_size")
    return tower


def _parse_qwen_vit(r: _Reader | None) -> QwenViTSpec | None:
    if r is None:
        return None
    tower = QwenViTSpec(
        kind=r.str("kind", choices=("qwen3_vl",)),
        depth=r.int("depth"),
        hidden_size=r.int("hidden_size"),
        intermediate_size=r.int("intermediate_size"),
        num_heads=r.int("num_heads"),
        patch_size=r.int("patch_size"),
        spatial_merge_size=r.int("spatial_merge_size"),
        temporal_patch_size=r.int("temporal_patch_size"),
        out_hidden_size=r.int("out_hidden_size"),
        in_channels=r.int("in_channels", required=False, default=3),
        deepstack_layers=r.int("deepstack_layers", required=False, default=0, minimum=0),
        num_position_embeddings=r.int("num_position_embeddings", required=False, default=2304),
        max_pixels=r.int("max_pixels", required=False, default=QWEN3_VL_MAX_PIXELS),
        video_max_pixels=r.int("video_max_pixels", required=False,
                               default=QWEN3_VL_VIDEO_MAX_PIXELS),
    )
    r.finish()
    if tower.hidden_size % tower.num_heads:
        raise r.error("num_heads", "must divide hidden_size")
    return tower


# ---------------------------------------------------------------------------------------------
# Finding and reading files.


def bundled_specs_dir() -> Path:
    """Installed wheels carry the specs inside the package; a checkout has them at the top."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "model_specs", here.parent / "model_specs"):
        if candidate.is_dir():
            return candidate
    return here.parent / "model_specs"


def bundled_spec_ids() -> list[str]:
    return sorted(p.stem for p in bundled_specs_dir().glob("*.yaml"))


# Real config.json files are < 100 kB and spec YAMLs < 10 kB; a larger file is not a model
# description (and /dev/zero or a 10 GB file must not be read into memory).
MAX_INPUT_BYTES = 16 << 20
# Longer than any real path; the OS would refuse it anyway (ENAMETOOLONG), we say so first.
MAX_PATH_CHARS = 4096


def shown_path(path: str | Path) -> str:
    """A path as error messages show it: one line (control characters escaped), not too long."""
    text = str(path)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        text = repr(text)[1:-1]
    return text if len(text) <= 200 else f"{text[:100]}...{text[-40:]} ({len(text):,} characters)"


def _os_problem(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "file not found"
    return f"cannot read: {exc.strerror or exc.__class__.__name__}"


def path_kind(path: Path) -> str | None:
    """'file', 'dir', 'other' (FIFO, device, socket) or None (absent); stat errors other than
    absence (a symlink loop, a name too long, no permission) are a SpecError naming the path."""
    if len(str(path)) > MAX_PATH_CHARS:
        raise SpecError(shown_path(path), None, "path too long")
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise SpecError(shown_path(path), None, _os_problem(exc)) from None
    except ValueError:  # an embedded NUL byte
        raise SpecError(shown_path(path), None, "not a valid path") from None
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "dir" if stat.S_ISDIR(st.st_mode) else "other"


def read_text(path: Path) -> str:
    """A UTF-8 regular file's text. Anything else (missing, a directory, a FIFO or device, a
    symlink loop, unreadable, over MAX_INPUT_BYTES, not UTF-8) is a SpecError naming the file.

    The file is opened non-blocking and checked with fstat before a byte is read, so a FIFO
    named config.json cannot hang kvplan and /dev/zero cannot fill memory."""
    shown = shown_path(path)
    if len(str(path)) > MAX_PATH_CHARS:
        raise SpecError(shown, None, "path too long")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise SpecError(shown, None, _os_problem(exc)) from None
    except ValueError:
        raise SpecError(shown, None, "not a valid path") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SpecError(shown, None, "is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise SpecError(shown, None, "not a regular file (a FIFO, device or socket); "
                                         "refused before reading")
        if st.st_size > MAX_INPUT_BYTES:
            raise SpecError(shown, None, f"too large ({st.st_size:,} bytes; a model description "
                                         f"is at most {MAX_INPUT_BYTES:,})")
        chunks = []
        size = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_INPUT_BYTES:  # grew while we read
                raise SpecError(shown, None, f"too large (over {MAX_INPUT_BYTES:,} bytes)")
            chunks.append(chunk)
    except OSError as exc:
        raise SpecError(shown, None, _os_problem(exc)) from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(shown, None, f"not UTF-8 text (byte {exc.start:,})") from None


def load_spec_file(path: Path, *, spec_id: str | None = None) -> ModelSpec:
    import yaml  # light, but only needed here

    shown = shown_path(path)
    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise SpecError(shown, None, f"malformed YAML{where}: {problem}") from None
    except (ValueError, RecursionError, OverflowError) as exc:
        # A 5,000-digit integer (Python's int-string limit), nesting too deep to walk.
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise SpecError(shown, None, f"malformed YAML: {reason.splitlines()[0][:200]}") from None
    if data is None:
        raise SpecError(shown, None, "file is empty")
    return parse_spec(data, path=shown, spec_id=spec_id or path.stem)


def looks_like_path(model: str) -> bool:
    """A MODEL argument that names a file or folder rather than a bundled id: it contains a path
    separator or ends in .yaml/.yml/.json. Anything else is looked up as a bundled id first, so a
    folder called ``llama-3-8b`` in the working directory never shadows the bundled spec."""
    seps = [os.sep] + ([os.altsep] if os.altsep else [])
    return any(sep in model for sep in seps) or model.lower().endswith((".yaml", ".yml",
                                                                         ".json"))


def load_model(model: str) -> tuple[ModelSpec, list[str]]:
    """Resolve a MODEL argument, with any import warnings: a bundled id (``deepseek-v3``), a
    spec YAML file, a HuggingFace ``config.json``, or a folder holding a config.json.

    Bundled ids resolve first unless MODEL looks like a path (`looks_like_path`)."""
    if not model or not model.strip():
        raise InputError("MODEL: empty (give a bundled id, a spec YAML or a config.json)")
    if not looks_like_path(model) and len(model) <= 255:
        bundled = bundled_specs_dir() / f"{model}.yaml"
        if model in bundled_spec_ids():
            return load_spec_file(bundled, spec_id=model), []
    candidate = Path(model)
    kind = path_kind(candidate)
    if kind is None:
        from .hub import is_hub_id, load_hub_model  # huggingface_hub only for Hub ids

        if is_hub_id(model):
            return load_hub_model(model)
    if kind == "dir":
        if path_kind(candidate / "config.json") is None:
            raise SpecError(shown_path(candidate), None,
                            "a folder without a config.json (give a spec YAML, a config.json or "
                            "a folder holding one)")
        from .checkpoint import has_checkpoint, read_checkpoint
        from .hf_config import load_config  # only when a config.json is given

        spec, warnings = load_config(candidate)
        if has_checkpoint(candidate):
            spec = replace(spec, checkpoint=read_checkpoint(
                candidate, num_hidden_layers=spec.num_hidden_layers))
        return spec, warnings
    if candidate.suffix.lower() == ".json":
        from .hf_config import load_config

        return load_config(candidate)
    if kind is not None or candidate.suffix.lower() in (".yaml", ".yml"):
        return load_spec_file(candidate), []
    known = ", ".join(bundled_spec_ids())
    raise SpecError(shown_path(model), None, f"no such file or bundled spec (bundled: {known})")


def load_spec(model: str) -> ModelSpec:
    """Like `load_model`, without the import warnings."""
    return load_model(model)[0]


def load_bundled_specs() -> list[ModelSpec]:
    return [load_spec(spec_id) for spec_id in bundled_spec_ids()]
