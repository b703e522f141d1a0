"""vLLM's multimodal encoder profile: the dummy images (or videos) its profile run pushes through
the vision encoder before the language model's dummy forward, and what that adds to the torch
peak the KV budget subtracts.

What vLLM does (read in the 0.10.2, 0.19.0, 0.22.0, 0.27.0 and 0.32.0 sources):

- ``v1/worker/gpu_model_runner.py: profile_run`` (model runner V1, every release here; model
  runner V2 ``v1/worker/gpu/model_runner.py`` from 0.27, ``gpu/mm/encoder_runner.py:
  profile_encoder_cache``; V2 in 0.25-0.26 profiles no encoder) runs the encoder on a batch of
  dummy items of the modality with the most tokens per item, keeps the outputs in the encoder
  cache, and only then runs the language model's dummy forward and sampler; the outputs are
  freed at the end. So the profile's torch peak is
      max(encoder peak, encoder outputs + the language model's peak),
  the encoder's temporaries being freed when it returns.
- How many items (``multimodal/encoder_budget.py: MultiModalBudget._get_max_items``, the same
  from 0.10.2, where it is ``v1/worker/utils.py``, to 0.32.0; ``v1/core/encoder_cache_manager.py:
  compute_mm_encoder_budget``):
  encoder budget = max(max_num_batched_tokens, the largest item's tokens) (the scheduler's
  max_num_encoder_input_tokens and encoder_cache_size are both max_num_batched_tokens);
  items = max(1, min(budget // T, max_num_seqs x max(1, min(limit, max_model_len // T)))),
  T the chosen modality's tokens per item and `limit` its --limit-mm-per-prompt count (999
  unset, ``config/multimodal.py: get_limit_per_prompt``). A modality whose limit is 0 is not
  profiled; all 0: no encoder profile ("Encoder cache will not be initialized"). Ties go to the
  later name in 0.19-0.32 (``get_modality_with_max_tokens``: max over (tokens, name)), to the
  first listed (image) in 0.10.2; no tower modelled here has a tie. Logged as "Encoder cache
  will be initialized with a budget of B tokens, and profiled with N <modality> items of the
  maximum feature size". --skip-mm-profiling skips it all.
- The dummy items are the processor's largest input (``multimodal/processing/context.py``
  casts its outputs to the model dtype), on every TP rank with the encoder's linears split
  (ColumnParallel / RowParallel) unless --mm-encoder-tp-mode data (whole items per rank, for
  the towers that support it).

Encoder peaks are counted per patch from the forward code (eager; compile_mm_encoder is off by
default), the widest point of one block plus what stays alive through the blocks; attention is
FlashAttention / SDPA varlen, no patches x patches matrix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kvplan._util.errors import InputError

if TYPE_CHECKING:
    from kvplan.model.spec import ModelSpec, QwenViTSpec, VisionTowerSpec

# config/multimodal.py get_limit_per_prompt: an unspecified modality allows 999 items.
DEFAULT_MM_LIMIT = 999


@dataclass(frozen=True, kw_only=True)
class EncoderModality:
    name: str  # "image" | "video"
    tokens_per_item: int  # language-model tokens of the largest item
    patches_per_item: int  # encoder sequence positions of that item


class EncoderProfiler(Protocol):
    """One vision-encoder family: its largest items and its activation peak."""

    source: str
    supports_encoder_tp_data: bool

    def modalities(self) -> tuple[EncoderModality, ...]: ...

    def peak_bytes(self, patches: int, *, tp: int, element_bytes: int) -> int: ...

    def output_bytes(self, tokens: int, *, element_bytes: int) -> int: ...

    def busiest_rank_patches(self, items: int, modality: EncoderModality, tp: int) -> int:
        """--mm-encoder-tp-mode data: the encoder positions on the busiest rank."""
        ...


def _items_per_rank(items: int, modality: EncoderModality, tp: int) -> int:
    """models/vision.py run_dp_sharded_mrope_vision_model: whole items dealt out by patch count
    (get_load_balance_assignment: equal dummy items, ceil(items / TP) on the busiest rank)."""
    return -(-items // tp) * modality.patches_per_item


@dataclass(frozen=True)
class QwenViTProfiler:
    """Qwen3-VL / Qwen3.5 (models/qwen3_vl.py Qwen3_VisionTransformer, the 0.17-0.32 forward).

    Largest image (Qwen2VLProcessingInfo.get_image_size_with_most_features): max_pixels //
    (patch x merge)^2 tokens (16,777,216 // 32^2 = 16,384 for the shipped preprocessor config,
    a 4096 x 4096 image), x merge^2 patches (65,536). Largest video (Qwen3VLProcessingInfo.
    get_max_video_tokens): two frames of video_max_pixels // temporal_patch_size pixels, one
    temporal patch: 25,165,824 // 2 // 32^2 = 12,288 tokens; the image wins unless its limit is 0.

    Alive through the blocks, per patch: the pixel values (in_channels x temporal x patch^2, in
    the model dtype), the interpolated position embeddings (hidden; encoder_metadata keeps
    them), the rotary cos / sin (head_dim in all) and, for Qwen3-VL, the deepstack features
    merged at earlier blocks (deepstack_feature_lists: out_hidden_size per merge^2 patches
    each; all three of Qwen3-VL's, at blocks 8 / 16 / 24 of 27, are alive through the last
    blocks). The widest point of a block
    (Qwen3_VisionBlock with Qwen2_5_VisionAttention): at the output projection the residual,
    norm1's output, qkv (3h / TP), the contiguous q-k copy and its rotated copy (2h / TP each),
    the attention output made contiguous (h / TP) and the projection's output (h): 3h + 8h / TP;
    in the MLP the residual, norm2's output, fc1's output and its GELU (I / TP each): 2h + 2I /
    TP (at fc2: 3h + I / TP). The merger's pass is narrower. Outputs kept in the encoder cache:
    tokens x out_hidden_size x (1 + deepstack layers)."""

    vit: QwenViTSpec
    source: str = "qwen3_vl.py Qwen3_VisionTransformer"
    # Qwen3VLForConditionalGeneration.supports_encoder_tp_data (Qwen3.5 inherits it).
    supports_encoder_tp_data: bool = True

    def modalities(self) -> tuple[EncoderModality, ...]:
        v = self.vit
        unit2 = v.merge_unit ** 2
        merge2 = v.spatial_merge_size ** 2
        image = v.max_pixels // unit2
        video = v.video_max_pixels // v.temporal_patch_size // unit2
        return (EncoderModality(name="image", tokens_per_item=image,
                                patches_per_item=image * merge2),
                EncoderModality(name="video", tokens_per_item=video,
                                patches_per_item=video * merge2))

    def per_patch_elements(self, tp: int) -> int:
        v = self.vit
        h, inter = v.hidden_size, v.intermediate_size
        head_dim = h // v.num_heads
        deepstack = v.deepstack_layers * v.out_hidden_size // v.spatial_merge_size ** 2
        alive = v.pixels_per_patch + h + head_dim + deepstack
        block = max(3 * h + 8 * h // tp, 2 * h + 2 * inter // tp, 3 * h + inter // tp)
        return alive + block

    def peak_bytes(self, patches: int, *, tp: int, element_bytes: int) -> int:
        return patches * self.per_patch_elements(tp) * element_bytes

    def output_bytes(self, tokens: int, *, element_bytes: int) -> int:
        return tokens * self.vit.out_hidden_size * (1 + self.vit.deepstack_layers) * element_bytes

    def busiest_rank_patches(self, items: int, modality: EncoderModality, tp: int) -> int:
        return _items_per_rank(items, modality, tp)


@dataclass(frozen=True)
class _TowerProfiler:
    """A tower whose outputs are projected to the language model's hidden size (`text_hidden`,
    kept in the encoder cache per token), peaking at `per_patch_elements` per patch."""

    tower: VisionTowerSpec
    text_hidden: int

    def per_patch_elements(self, tp: int) -> int:
        raise NotImplementedError

    def peak_bytes(self, patches: int, *, tp: int, element_bytes: int) -> int:
        return patches * self.per_patch_elements(tp) * element_bytes

    def output_bytes(self, tokens: int, *, element_bytes: int) -> int:
        return tokens * self.text_hidden * element_bytes


@dataclass(frozen=True)
class SiglipProfiler(_TowerProfiler):
    """Gemma-3's SigLIP tower (models/siglip.py SiglipEncoderLayer, gemma3_mm.py).

    One image is image_size^2 pixels, (image_size / patch)^2 patches (4,096 at 896 / 14) and
    tokens_per_image tokens after the projector's pooling (256); pan-and-scan is off by default.
    Alive through the layers, per patch: the pixel values (channels x patch^2). The widest point
    of a layer: in the MLP the residual, layer_norm2's output, fc1's output and its activation
    (I / TP each): 2h + 2I / TP (at fc2 3h + I / TP; the attention's at out_proj: residual,
    norm, qkv 3h / TP, output h / TP, projection h: 3h + 4h / TP). Outputs kept: tokens x the
    language model's hidden size."""

    source: str = "siglip.py SiglipEncoderLayer, gemma3_mm.py"
    # gemma3_mm.py does not declare supports_encoder_tp_data: config/model.py falls back to
    # "weights" for --mm-encoder-tp-mode data.
    supports_encoder_tp_data: bool = False

    def modalities(self) -> tuple[EncoderModality, ...]:
        return (EncoderModality(name="image", tokens_per_item=self.tower.tokens_per_image,
                                patches_per_item=self.tower.num_positions),)

    def per_patch_elements(self, tp: int) -> int:
        t = self.tower
        h, inter = t.hidden_size, t.intermediate_size
        block = max(3 * h + 4 * h // tp, 2 * h + 2 * inter // tp, 3 * h + inter // tp)
        return t.num_channels * t.patch_size ** 2 + block

    def busiest_rank_patches(self, items: int, modality: EncoderModality, tp: int) -> int:
        return _items_per_rank(items, modality, tp)


@dataclass(frozen=True)
class Llama4VisionProfiler(_TowerProfiler):
    """Llama-4's vision model (models/mllama4.py Llama4VisionModel, read in the 0.15.1 wheel; eager:
    its support_torch_compile is enabled only with compile_mm_encoder, off by default).

    Largest image (Mllama4ProcessingInfo.get_image_size_with_most_features): max_tiles tiles in
    a row (16 x 1; the processor's max_patches, 16), cut into those tiles plus one global tile
    (patches_per_image = 1 + 16), each image_size^2 pixels: (image_size / patch)^2 + 1 encoder
    positions (the patches and a CLS token; 577 at 336 / 14) and (image_size / patch)^2 /
    patches_per_token language-model tokens after the pixel shuffle (144): 17 x 144 = 2,448
    tokens, the placeholder's embeddings (its tile separators are text).

    Alive through the blocks, per position: the pixel values (channels x patch^2) and the
    residual stream. The widest point of a block is its rotary embedding
    (rotary_embedding/llama4_vision_rope.py forward_native: q and k cast to float32, each
    multiplied by the complex table, then cast back while the float32 tensors are alive:
    8 h / TP in float32 plus 2 h / TP, 10 h / TP in 16-bit units) beside the residual, the
    norm's output and qkv (3 h / TP): 2 h + 13 h / TP; the MLP holds 2 h + 2 I / TP (fc1's output
    and its GELU), narrower for Llama-4 (I = 4 h). Outputs kept in the encoder cache: tokens x
    the language model's hidden size (Llama4MultiModalProjector, gathered)."""

    source: str = "mllama4.py Llama4VisionModel"
    # Llama4ForConditionalGeneration.supports_encoder_tp_data.
    supports_encoder_tp_data: bool = True

    @property
    def tiles_per_item(self) -> int:
        t = self.tower
        return t.max_tiles + 1 if t.max_tiles > 1 else 1

    def modalities(self) -> tuple[EncoderModality, ...]:
        t = self.tower
        return (EncoderModality(name="image",
                                tokens_per_item=self.tiles_per_item * t.tokens_per_tile,
                                patches_per_item=self.tiles_per_item * (t.num_positions + 1)),)

    def per_patch_elements(self, tp: int) -> int:
        t = self.tower
        h, inter = t.hidden_size, t.intermediate_size
        block = max(2 * h + 13 * h // tp, 2 * h + 2 * inter // tp)
        return t.num_channels * t.patch_size ** 2 + block

    def busiest_rank_patches(self, items: int, modality: EncoderModality, tp: int) -> int:
        """models/vision.py run_dp_sharded_vision_model: the tiles of every item are split
        evenly over the ranks (padded to a multiple of TP), ceil(tiles / TP) on each."""
        tiles = items * self.tiles_per_item
        return -(-tiles // tp) * (self.tower.num_positions + 1)


def encoder_profiler(spec: ModelSpec) -> EncoderProfiler | None:
    """The spec's vision encoder as vLLM profiles it; None when it has none kvplan describes
    (text models, and towers kvplan does not read: nothing is added, as before)."""
    if spec.qwen_vit is not None:
        return QwenViTProfiler(spec.qwen_vit)
    if spec.vision is not None and spec.vision.kind == "llama4":
        return Llama4VisionProfiler(spec.vision, spec.hidden_size)
    if spec.vision is not None:
        return SiglipProfiler(spec.vision, spec.hidden_size)
    return None


@dataclass(frozen=True, kw_only=True)
class EncoderProfile:
    modality: str
    items: int
    tokens_per_item: int
    budget_tokens: int
    patches: int  # all items
    peak_bytes: int  # the encoder's own peak, outputs included
    output_bytes: int  # kept through the language model's profile
    source: str

    @property
    def rule(self) -> str:
        return (f"encoder profile: {self.items} {self.modality} item(s) of "
                f"{self.tokens_per_item:,} tokens (budget {self.budget_tokens:,}), "
                f"{self.patches:,} patches through "
                f"{self.source} peaking at {self.peak_bytes / (1 << 30):.2f} GiB, its "
                f"{self.output_bytes / (1 << 30):.2f} GiB of outputs kept through the language "
                "model's profile (gpu_model_runner.py profile_run, multimodal/encoder_budget.py)")


def mm_items_per_batch(*, tokens_per_item: int, max_num_batched_tokens: int, max_num_seqs: int,
                       max_model_len: int, limit: int) -> tuple[int, int]:
    """(items, encoder budget in tokens): MultiModalBudget._get_max_items with chunked prefill
    on (the V1 default), compute_mm_encoder_budget."""
    budget = max(max_num_batched_tokens, tokens_per_item)
    per_prompt = max(1, min(limit, max_model_len // tokens_per_item))
    return max(1, min(budget // tokens_per_item, max_num_seqs * per_prompt)), budget


def vllm_encoder_profile(spec: ModelSpec, *, max_num_batched_tokens: int, max_num_seqs: int,
                         max_model_len: int, limits: Mapping[str, int], tp: int,
                         element_bytes: int, encoder_data_parallel: bool = False
                         ) -> EncoderProfile | None:
    """What the profile run pushes through the encoder on the busiest TP rank; None: nothing
    (no encoder kvplan describes, or every modality's limit 0). `encoder_data_parallel`:
    --mm-encoder-tp-mode data (models/vision.py run_dp_sharded_mrope_vision_model, Qwen-VL
    towers): every rank holds the whole tower and the items are dealt out by patch count
    (get_load_balance_assignment: equal dummy items, ceil(items / TP) on the busiest rank), the
    outputs all-gathered to every rank."""
    profiler = encoder_profiler(spec)
    if profiler is None:
        return None
    active = [m for m in profiler.modalities() if limits.get(m.name, DEFAULT_MM_LIMIT) > 0]
    if not active:
        return None
    chosen = max(active, key=lambda m: (m.tokens_per_item, m.name))
    items, budget = mm_items_per_batch(
        tokens_per_item=chosen.tokens_per_item, max_num_batched_tokens=max_num_batched_tokens,
        max_num_seqs=max_num_seqs, max_model_len=max_model_len,
        limit=limits.get(chosen.name, DEFAULT_MM_LIMIT))
    patches = items * chosen.patches_per_item
    outputs = profiler.output_bytes(items * chosen.tokens_per_item, element_bytes=element_bytes)
    if encoder_data_parallel and profiler.supports_encoder_tp_data:
        busiest = profiler.busiest_rank_patches(items, chosen, tp)
        peak = profiler.peak_bytes(busiest, tp=1, element_bytes=element_bytes)
    else:
        peak = profiler.peak_bytes(patches, tp=tp, element_bytes=element_bytes)
    return EncoderProfile(modality=chosen.name, items=items,
                          tokens_per_item=chosen.tokens_per_item, budget_tokens=budget,
                          patches=patches, peak_bytes=max(peak, outputs), output_bytes=outputs,
                          source=profiler.source)


def parse_mm_limits(text: str) -> tuple[tuple[str, int], ...]:
    """--limit-mm-per-prompt as vLLM takes it: JSON ('{"image": 0, "video": 0}', a count or
    {"count": n} per modality) or 'image=0,video=0'; (modality, count) pairs."""
    import json

    text = text.strip()
    pairs: list[tuple[str, object]]
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"--limit-mm-per-prompt {text!r}: not JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise InputError(f"--limit-mm-per-prompt {text!r}: expected an object")
        pairs = [(k, v["count"] if isinstance(v, dict) and "count" in v else v)
                 for k, v in data.items()]
    else:
        pairs = []
        for item in filter(None, (p.strip() for p in text.split(","))):
            name, sep, value = item.partition("=")
            if not sep:
                raise InputError(f"--limit-mm-per-prompt {item!r}: expected MODALITY=COUNT")
            pairs.append((name.strip(), value.strip()))
    out: list[tuple[str, int]] = []
    for name, value in pairs:
        if isinstance(value, int) and not isinstance(value, bool):
            count = value
        elif isinstance(value, str) and value.isdigit():
            count = int(value)
        else:
            count = -1
        if not name or count < 0:
            raise InputError(f"--limit-mm-per-prompt {name}={value!r}: expected a whole number "
                             ">= 0")
        out.append((name, count))
    return tuple(out)
