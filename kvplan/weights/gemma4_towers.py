"""Bytes of Gemma-4's vision and audio towers as vLLM 0.32 holds them (models/gemma4_mm.py:
1095-1133): transformers' Gemma4VisionModel / Gemma4AudioModel (AutoModel.from_config; their
nn.Linear replaced by ReplicatedLinear, recursive_replace_linear, so whole on every rank) and
vLLM's Gemma4MultimodalEmbedder (gemma4_mm.py:948-993: a ReplicatedLinear embedding_projection
into the text width; its RMSNorm has no weight). Parameters and buffers in the model dtype
(built under it), but for the vision rotary's two float32 inv_freq buffers.

Shapes from transformers 5 models/gemma4/modeling_gemma4.py (the oracle venv's):
- Gemma4ClippableLinear (:176-202): an nn.Linear without bias and, with use_clipped_linears,
  four scalar buffers (input_min / _max, output_min / _max);
- Gemma4VisionModel (:1977-1993): patch_embedder (:587-596) input_proj (3 x patch^2 -> hidden)
  and position_embedding_table (2 x position_embedding_size x hidden); the encoder's rotary
  (:715-751) inv_freq and original_inv_freq, float32, of ceil(head_dim / 4) each; per layer
  (:974-985) q / k / v / o (:905-924, clippable: heads x head_dim, kv_heads x head_dim), q_norm
  and k_norm of head_dim (v_norm has no weight), the gated MLP (:699-712, three clippable) and
  four norms of hidden; with `standardize`, std_bias and std_scale of hidden;
- Gemma4AudioModel (:1891-1912): subsample_conv_projection (:365-407: two bias-free 3x3 Conv2d,
  1 -> c0 -> c1 channels, each with a bias-free LayerNorm, and input_proj_linear of
  (c0 // 4) x c1 -> hidden), rel_pos_enc's inv_timescales (hidden // 2, :226-246), per layer
  (:533-560) two feed-forwards (:423-440: 4 x hidden up and down, clippable, two norms), the
  attention (:257-285: q / k / v / post clippable, relative_k_proj, per_dim_scale of
  hidden / heads, a scalar softcap buffer), the light conv (:492-510: linear_start 2 x hidden,
  linear_end, clippable; a depthwise Conv1d of hidden x conv_kernel_size; two norms), three
  norms; output_proj (hidden -> output_proj_dims, with bias).
Measured to the byte on the oracle shrinks gemma-4-e2b-it (vision and audio) and gemma-4-31b-it
(vision, standardize) (tests/data/oracle/weight-bytes.json).
"""

from __future__ import annotations

from kvplan._util.units import cdiv
from kvplan.model.gemma4_towers import Gemma4AudioTower, Gemma4VisionTower
from kvplan.model.spec import ModelSpec

FLOAT32_BYTES = 4
_CLIP_BUFFERS = 4  # Gemma4ClippableLinear's input_min, input_max, output_min, output_max


def vision_elements(v: Gemma4VisionTower, text_hidden: int) -> int:
    """The vision tower's and its embedder's elements in the model dtype."""
    h, q, kv = v.hidden_size, v.num_attention_heads * v.head_dim, v.num_key_value_heads * v.head_dim
    clip = _CLIP_BUFFERS if v.use_clipped_linears else 0
    layer = (2 * q * h + 2 * kv * h + 3 * v.intermediate_size * h  # q, o, k, v; gate, up, down
             + 7 * clip + 2 * v.head_dim + 4 * h)
    return (3 * v.patch_size ** 2 * h + 2 * v.position_embedding_size * h
            + v.num_hidden_layers * layer + (2 * h if v.standardize else 0)
            + text_hidden * h)  # embed_vision.embedding_projection


def vision_float32_bytes(v: Gemma4VisionTower) -> int:
    """The rotary's inv_freq and original_inv_freq: arange(0, head_dim // 2, 2), float32."""
    return 2 * cdiv(v.head_dim // 2, 2) * FLOAT32_BYTES


def audio_elements(a: Gemma4AudioTower, text_hidden: int) -> int:
    """The audio tower's and its embedder's elements in the model dtype."""
    h = a.hidden_size
    c0, c1 = a.subsampling_conv_channels
    clip = _CLIP_BUFFERS if a.use_clipped_linears else 0
    feed_forward = 8 * h * h + 2 * clip + 2 * h
    attention = 5 * h * h + 4 * clip + h // a.num_attention_heads + 1
    light_conv = 3 * h * h + 2 * clip + h * a.conv_kernel_size + 2 * h
    layer = 2 * feed_forward + attention + light_conv + 3 * h
    subsample = 9 * c0 + c0 + 9 * c0 * c1 + c1 + (c0 // 4) * c1 * h
    return (subsample + h // 2 + a.num_hidden_layers * layer
            + a.output_proj_dims * h + a.output_proj_dims  # output_proj, with bias
            + text_hidden * a.output_proj_dims)  # embed_audio.embedding_projection


def tower_bytes(spec: ModelSpec, bits: int) -> int:
    """Bytes of the towers vLLM builds (GemmaBlocksSpec.towers: vision_config, audio_config)
    whose sizes kvplan read (tower_shapes), on every rank; 0 where none."""
    blocks = spec.gemma_blocks
    shapes = blocks.tower_shapes if blocks is not None else None
    if shapes is None:
        return 0
    total = 0
    if "vision_config" in blocks.towers:
        total += (cdiv(vision_elements(shapes.vision, spec.hidden_size) * bits, 8)
                  + vision_float32_bytes(shapes.vision))
    if "audio_config" in blocks.towers and shapes.audio is not None:
        total += cdiv(audio_elements(shapes.audio, spec.hidden_size) * bits, 8)
    return total


def uncounted_towers(spec: ModelSpec) -> tuple[str, ...]:
    """The wrapper's built towers kvplan does not count (a budget from the device is refused for
    them: kvplan.capacity.stages.refuse_uncounted_towers)."""
    blocks = spec.gemma_blocks
    if blocks is None:
        return ()
    shapes = blocks.tower_shapes
    counted = set() if shapes is None else {
        "vision_config", *(("audio_config",) if shapes.audio is not None else ())}
    return tuple(t for t in blocks.towers if t not in counted)
