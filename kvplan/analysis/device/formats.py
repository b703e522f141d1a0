"""Storage formats: how one page of each cache kind is laid out in bytes, and how to fill and read
it back.

A page is one block of one layer (vLLM: ``page_size_bytes``). Each cache kind's page is a list
of `Part`s laid end to end inside it:

- full / sliding / chunked attention: K and V for ``block`` tokens, block-major as FlashInfer's
  layout keeps them, ``[2, block, kv_heads, head_dim]`` (K and V apart when ``v_head_dim``
  differs); nvfp4 adds one fp8 scale byte per 16 values;
- MLA: ``[block, kv_lora_rank + qk_rope_head_dim]``; with DeepSeek-V3.2's indexer at fp8, the
  656-byte ``fp8_ds_mla`` row in uint8 (512 fp8 latent values, 4 fp32 scales, 64 bf16 RoPE);
- sparse indexer keys: 132-byte rows in uint8 (128 fp8 values + one fp32 scale);
- recurrent state: the state's own tensors (conv, then SSM / recurrent state) in their dtypes,
  one request's state per page; vLLM pads the page to the attention page and views each tensor
  inside it, as here.

Per-tensor scales (fp8, int8, int4) are constants, not stored per token, as kvplan counts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import DeviceError, InputError, unknown_choice
from kvplan.kv.kinds import (
    FP8_DS_MLA_LATENT,
    FP8_DS_MLA_ROPE,
    INDEXER_QUANT_BLOCK,
    CacheKind,
    FullAttentionCache,
    IndexerCache,
    MLACache,
    RecurrentState,
)
from kvplan.model.attention import HeadAttention, LatentAttention
from kvplan.model.spec import ModelSpec

if TYPE_CHECKING:
    import torch

# Dequantisation scales for the per-tensor-scaled integer formats (values are random anyway).
INT8_SCALE = 1 / 32
INT4_SCALE = 1 / 4
# fp4 e2m1 code points (nvfp4 elements), indexed by the 4-bit code.
FP4_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
              -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
STATE_TORCH_DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}


@dataclass(frozen=True, kw_only=True)
class Storage:
    kv_dtype: str
    dtype: torch.dtype
    pack: int  # values per stored element: 2 for the packed 4-bit formats
    scale_group: int  # nvfp4: one fp8 scale byte per this many values (0: none stored)
    description: str


def storage(kv_dtype: str) -> Storage:
    import torch

    fp8 = getattr(torch, "float8_e4m3fn", None)
    table = {
        "fp32": (torch.float32, 1, 0, "torch.float32"),
        "bf16": (torch.bfloat16, 1, 0, "torch.bfloat16"),
        "fp16": (torch.float16, 1, 0, "torch.float16"),
        "fp8": ((fp8, 1, 0, "torch.float8_e4m3fn") if fp8 is not None else
                (torch.uint8, 1, 0, "uint8 (this torch has no float8_e4m3fn)")),
        "int8": (torch.int8, 1, 0, "torch.int8"),
        "int4": (torch.uint8, 2, 0, "uint8, two int4 values per byte"),
        "nvfp4": (torch.uint8, 2, 16, "uint8, two fp4 values per byte, + one fp8 scale byte "
                                      "per 16 values"),
    }
    if kv_dtype not in table:
        raise unknown_choice("--kv-dtype", table, kv_dtype)
    dtype, pack, group, text = table[kv_dtype]
    return Storage(kv_dtype=kv_dtype, dtype=dtype, pack=pack, scale_group=group,
                   description=text)


@dataclass(frozen=True, kw_only=True)
class Part:
    """One tensor inside a page: its shape per page and its element type.

    ``role``: "kv" (K then V, leading dim 2), "k", "v", "kv_scale" / "k_scale" / "v_scale"
    (nvfp4), "latent", "ds_mla", "indexer", or a state tensor's name ("conv", "ssm", "kv")
    with ``state=True``."""

    role: str
    shape: tuple[int, ...]
    dtype: Any  # torch.dtype
    state: bool = False

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


@dataclass(frozen=True, kw_only=True)
class PageLayout:
    """The parts of one page of one cache kind at one block size, on this rank."""

    cache: CacheKind
    block: int  # tokens per page (1 state for recurrent state)
    parts: tuple[Part, ...]

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.parts)

    def describe(self) -> str:
        def one(p: Part) -> str:
            name = str(p.dtype).replace("torch.", "")
            return f"{p.role} [{', '.join(f'{d:,}' for d in p.shape)}] {name}"

        return " + ".join(one(p) for p in self.parts)


def _head_parts(att: HeadAttention, tp: int, st: Storage, block: int) -> list[Part]:
    import torch

    h = att.kv_heads_per_rank(tp)
    dk, dv = att.head_dim, att.v_head_dim
    unit = st.scale_group or st.pack
    for name, dim in (("head_dim", dk), ("v_head_dim", dv)):
        if dim % unit:
            raise InputError(f"--kv-dtype {st.kv_dtype}: {name} ({dim}) must be a multiple of "
                             f"{unit} to pack it")
    g = st.scale_group
    if dk == dv:
        parts = [Part(role="kv", shape=(2, block, h, dk // st.pack), dtype=st.dtype)]
        if g:
            parts.append(Part(role="kv_scale", shape=(2, block, h, dk // g), dtype=torch.uint8))
        return parts
    parts = [Part(role="k", shape=(block, h, dk // st.pack), dtype=st.dtype),
             Part(role="v", shape=(block, h, dv // st.pack), dtype=st.dtype)]
    if g:
        parts += [Part(role="k_scale", shape=(block, h, dk // g), dtype=torch.uint8),
                  Part(role="v_scale", shape=(block, h, dv // g), dtype=torch.uint8)]
    return parts


def page_layout(cache: CacheKind, spec: ModelSpec, *, tp: int, st: Storage,
                block: int) -> PageLayout:
    """The parts of `cache`'s page; raises DeviceError if they do not add up to the page the
    core predicts (the layout here and the core's formula must agree byte for byte)."""
    import torch

    att = spec.attention
    parts: list[Part]
    if isinstance(cache, RecurrentState):
        parts = [Part(role=t.name, shape=t.shape, state=True,
                      dtype=getattr(torch, STATE_TORCH_DTYPES[t.dtype])) for t in cache.tensors]
        block = 1
    elif isinstance(cache, IndexerCache):
        parts = [Part(role="indexer", shape=(block, cache.token_bytes), dtype=torch.uint8)]
    elif isinstance(cache, MLACache):
        assert isinstance(att, LatentAttention)
        width = att.kv_lora_rank + att.qk_rope_head_dim
        if spec.indexer is not None and st.kv_dtype == "fp8" and cache.token_bytes != width:
            parts = [Part(role="ds_mla", shape=(block, cache.token_bytes), dtype=torch.uint8)]
        else:
            unit = st.scale_group or st.pack
            if width % unit:
                raise InputError(f"--kv-dtype {st.kv_dtype}: kv_lora_rank + qk_rope_head_dim "
                                 f"({width}) must be a multiple of {unit} to pack it")
            parts = [Part(role="latent", shape=(block, width // st.pack), dtype=st.dtype)]
            if st.scale_group:
                parts.append(Part(role="latent_scale", shape=(block, width // st.scale_group),
                                  dtype=torch.uint8))
    elif isinstance(cache, FullAttentionCache):
        if not isinstance(att, HeadAttention):
            raise DeviceError(f"internal: {cache.describe()} on an MLA model")
        parts = _head_parts(att, tp, st, block)
    else:  # pragma: no cover - every kind the core makes is handled above
        raise DeviceError(f"internal: no device layout for {type(cache).__name__}")
    layout = PageLayout(cache=cache, block=block, parts=tuple(parts))
    expected = cache.page_bytes(block)
    if layout.nbytes != expected:
        raise DeviceError(f"internal: the device layout of a {cache.describe()} page is "
                          f"{layout.nbytes:,} B, the core predicts {expected:,} B")
    return layout


# ---------------------------------------------------------------------------------------------
# Random contents and reading them back.


def random_values(shape: tuple[int, ...], part: Part, st: Storage, *, gen: Any,
                  device: str) -> torch.Tensor:
    """Random but well-formed contents for `part` (scales in a sane range, fp8_ds_mla and
    indexer rows built from their fields, states small)."""
    import torch

    dtype = part.dtype
    if part.role.endswith("_scale"):  # fp8-e4m3 scale bytes between 0.5 (0x30) and 2.0 (0x40)
        return torch.randint(0x30, 0x41, shape, dtype=torch.uint8, generator=gen, device=device)
    if part.role in ("ds_mla", "indexer"):
        rows = math.prod(shape[:-1])
        return _packed_rows(rows, part.role, gen=gen, device=device).view(shape)
    if part.state:
        return (torch.randn(shape, generator=gen, device=device) * 0.1).to(dtype)
    if dtype == torch.int8:
        return torch.randint(-127, 128, shape, dtype=torch.int8, generator=gen, device=device)
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, dtype=torch.uint8, generator=gen, device=device)
    return torch.randn(shape, generator=gen, device=device).to(dtype)


def _fp8(torch: Any) -> Any:
    return getattr(torch, "float8_e4m3fn", None)


def _packed_rows(rows: int, role: str, *, gen: Any, device: str) -> torch.Tensor:
    """fp8_ds_mla rows (512 fp8 + 4 fp32 scales + 64 bf16) or indexer keys (128 fp8 + 1 fp32)."""
    import torch

    fp8 = _fp8(torch)
    values = FP8_DS_MLA_LATENT if role == "ds_mla" else INDEXER_QUANT_BLOCK
    raw = torch.randn(rows, values, generator=gen, device=device)
    q = raw.to(fp8).view(torch.uint8) if fp8 is not None else (raw * 32 + 128).clamp(
        0, 255).to(torch.uint8)
    scales = torch.full((rows, values // INDEXER_QUANT_BLOCK), 0.25, device=device)
    pieces = [q, scales.view(torch.uint8)]
    if role == "ds_mla":
        rope = torch.randn(rows, FP8_DS_MLA_ROPE, generator=gen, device=device)
        pieces.append(rope.to(torch.bfloat16).view(torch.uint8))
    return torch.cat(pieces, dim=1)


def _from_fp8(x: torch.Tensor, cd: torch.dtype) -> torch.Tensor:
    import torch

    fp8 = _fp8(torch)
    if fp8 is not None:
        return x.view(fp8).to(cd)
    return (x.to(cd) - 128) / 32


def read_packed_rows(rows: torch.Tensor, role: str, cd: torch.dtype) -> torch.Tensor:
    """uint8 rows [..., row bytes] back to values: fp8_ds_mla -> [..., 512 + 64] (latent, RoPE);
    indexer -> [..., 128]."""
    import torch

    values = FP8_DS_MLA_LATENT if role == "ds_mla" else INDEXER_QUANT_BLOCK
    n_scales = values // INDEXER_QUANT_BLOCK
    q = _from_fp8(rows[..., :values].contiguous(), cd)
    scales = rows[..., values:values + 4 * n_scales].contiguous().view(torch.float32).to(cd)
    x = (q.unflatten(-1, (n_scales, INDEXER_QUANT_BLOCK)) * scales[..., None]).flatten(-2)
    if role != "ds_mla":
        return x
    start = values + 4 * n_scales
    rope = rows[..., start:start + 2 * FP8_DS_MLA_ROPE].contiguous().view(torch.bfloat16)
    return torch.cat([x, rope.to(cd)], dim=-1)


def dequant(x: torch.Tensor, scales: torch.Tensor | None, st: Storage,
            cd: torch.dtype) -> torch.Tensor:
    """Stored K/V/latent values back to the compute dtype."""
    import torch

    name = st.kv_dtype
    if name == "int8":
        return x.to(cd) * INT8_SCALE
    if name == "fp8" and x.dtype == torch.uint8:
        return (x.to(cd) - 128) / 32
    if name not in ("int4", "nvfp4"):
        return x.to(cd)
    codes = torch.stack([x & 0xF, x >> 4], dim=-1).flatten(-2)
    if name == "int4":
        signed = codes.to(torch.int16)
        return torch.where(signed >= 8, signed - 16, signed).to(cd) * INT4_SCALE
    assert scales is not None
    values = torch.tensor(FP4_VALUES, dtype=cd, device=x.device)[codes.long()]
    fp8 = _fp8(torch)
    factor = scales.view(fp8).to(cd) if fp8 is not None else torch.ones_like(scales, dtype=cd)
    return (values.unflatten(-1, (-1, st.scale_group)) * factor[..., None]).flatten(-2)
