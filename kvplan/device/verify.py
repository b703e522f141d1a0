"""`kvplan verify`: allocate the real paged KV cache on a device, hold the predictions against it.

Steps (each measured by means independent of the prediction):

1. Read the device. CUDA: ``torch.cuda.mem_get_info`` (driver free and total). CPU: MemAvailable
   from /proc/meminfo (fallback ``os.sysconf``). The budget is ``--budget-gib`` if given, else on
   CUDA what is free inside the fraction, ``total x mem_fraction - (total - free)``, and on CPU a
   safe cap, ``min(1 GiB, 25% of available)``. Nothing is allocated beyond it.
2. Predict with the core: ``plan_capacity`` in vLLM's accounting with the budget given directly.
3. Allocate the cache as vLLM V1 does: one tensor per layer slot (``group_size`` slots; hybrid
   sliding-window models share a slot between one layer of each group), every slot holding the
   same ``num_blocks`` pages. MHA/GQA/MQA ``[2, num_blocks, block_size, kv_heads, head_dim]`` (K
   and V apart when ``v_head_dim != head_dim``); MLA ``[num_blocks, block_size, kv_lora_rank +
   qk_rope_head_dim]``. Pages are written (zeroed) so that they are resident.
4. Measure. CUDA: deltas of ``memory_allocated``, ``memory_reserved`` and driver free memory (the
   latter is "measured"). CPU: the process RSS delta (/proc/self/statm).
5. Search the real maximum: with the pool held, add chunks of blocks (one block = a page in every
   slot) while the device's own accounting (driver free memory / RSS growth) says the next chunk
   stays inside the budget, halving the chunk down to one block; an out-of-memory error is a
   measured limit, not a crash.
6. Use it: write random K/V (latents) for a batch of requests through a block table, run one
   decode attention step over every layer (gather by block table, softmax(qK^T/sqrt(d))V, GQA
   head grouping); for MLA also check the naive (up-projected) and absorbed forms agree.
7. Free everything (also on KeyboardInterrupt) and check the memory came back.

Storage dtypes: fp32/bf16/fp16 native; fp8 as ``torch.float8_e4m3fn`` (uint8 where this torch
lacks it); int8 as ``torch.int8``; int4 as packed uint8 (two values per byte, last dim halved);
nvfp4 as packed uint8 plus one fp8-e4m3 scale byte per 16 elements in a second tensor beside it.
Per-tensor scales (fp8, int8, int4) are constants, not stored per token, as kvplan counts them.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import platform
import time
import traceback
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kvplan.attention import HeadAttention, LatentAttention
from kvplan.cache import kv_layout
from kvplan.capacity import Engine, PlanInputs, block_pool, plan_capacity
from kvplan.errors import DeviceError, InputError
from kvplan.spec import ModelSpec
from kvplan.units import GiB, MiB, cdiv, human_bytes

if TYPE_CHECKING:
    import torch

CPU_DEFAULT_CAP_BYTES = 1 * GiB
CPU_DEFAULT_AVAILABLE_SHARE = 0.25  # of MemAvailable, when --budget-gib is not given
CPU_MAX_AVAILABLE_SHARE = 0.9  # --budget-gib may not exceed this share of MemAvailable on CPU
DEFAULT_MEM_FRACTION = 0.9
MAX_DECODE_BATCH = {"cpu": 8, "cuda": 64}
MLA_CHECK_MAX_REQUESTS = 4  # the naive form materialises per-head K and V: keep it small
PROGRESS_MIN_LAYERS = 16
PROGRESS_MIN_BYTES = 256 * MiB
# Max relative error allowed between MLA's naive and absorbed forms, by compute dtype.
MLA_TOLERANCES = {"fp32": 1e-4, "bf16": 2e-2, "fp16": 5e-3}
# CPU freed_ok: RSS may stay this far above the baseline after freeing (allocator slack).
CPU_FREE_SLACK_BYTES = 32 * MiB
# Dequantisation scales for the per-tensor-scaled integer formats (values are random anyway).
_INT8_SCALE = 1 / 32
_INT4_SCALE = 1 / 4
# fp4 e2m1 code points (nvfp4 elements), indexed by the 4-bit code.
_FP4_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
               -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)

# Weak references to every tensor the last run allocated, so that tests can check they are gone.
last_run_refs: list[weakref.ref] = []


# ---------------------------------------------------------------------------------------------
# The device and the budget.


@dataclass(frozen=True, kw_only=True)
class DeviceMemory:
    device: str  # "cpu" or "cuda:N"
    device_name: str
    total_bytes: int
    free_bytes: int  # CUDA: driver free memory; CPU: MemAvailable

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")


def resolve_device(device: str) -> str:
    """`--device` to a torch device string: "cpu" or "cuda:N". InputError if unknown or absent."""
    import torch

    name = device.strip().lower()
    if name == "auto":
        return "cuda:0" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return "cpu"
    if name == "cuda" or name.startswith("cuda:"):
        index_text = name.partition(":")[2] or "0"
        if not index_text.isdigit():
            raise InputError(f"--device: expected cuda:N with N a GPU index, got {device!r}")
        if not torch.cuda.is_available():
            build = (f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build")
            raise InputError(f"--device {device}: no CUDA device is available (torch "
                             f"{torch.__version__}, {build}); use --device cpu")
        count = torch.cuda.device_count()
        if int(index_text) >= count:
            raise InputError(f"--device {device}: only {count} CUDA device(s) (0..{count - 1})")
        return f"cuda:{int(index_text)}"
    raise InputError(f"--device: expected cuda, cuda:N, cpu or auto, got {device!r}")


def _meminfo() -> tuple[int, int]:
    """(MemTotal, MemAvailable) in bytes; os.sysconf where /proc/meminfo is missing."""
    values: dict[str, int] = {}
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    values[key] = int(parts[0]) * 1024  # kB
    except OSError:
        pass
    page = os.sysconf("SC_PAGE_SIZE")
    total = values.get("MemTotal") or os.sysconf("SC_PHYS_PAGES") * page
    available = values.get("MemAvailable") or os.sysconf("SC_AVPHYS_PAGES") * page
    return total, available


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return f"{line.partition(':')[2].strip()} ({os.cpu_count()} CPUs)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} CPUs)"


def probe_device(device: str) -> DeviceMemory:
    """Total and free memory of a resolved device ("cpu" or "cuda:N")."""
    import torch

    if device == "cpu":
        total, available = _meminfo()
        return DeviceMemory(device="cpu", device_name=_cpu_name(), total_bytes=total,
                            free_bytes=available)
    index = int(device.partition(":")[2] or 0)
    free, total = torch.cuda.mem_get_info(index)
    return DeviceMemory(device=device, device_name=torch.cuda.get_device_name(index),
                        total_bytes=total, free_bytes=free)


def resolve_budget(mem: DeviceMemory, *, budget_bytes: int | None,
                   mem_fraction: float = DEFAULT_MEM_FRACTION) -> tuple[int, str]:
    """The bytes verify may allocate, and how they were chosen."""
    if not 0 < mem_fraction <= 1:
        raise InputError(f"--mem-fraction: must be in (0, 1], got {mem_fraction}")
    if budget_bytes is not None:
        if budget_bytes <= 0:
            raise InputError(f"--budget-gib: must be > 0, got {budget_bytes / GiB:g}")
        if not mem.is_cuda and budget_bytes > CPU_MAX_AVAILABLE_SHARE * mem.free_bytes:
            raise InputError(
                f"--budget-gib: {budget_bytes / GiB:.2f} GiB exceeds "
                f"{CPU_MAX_AVAILABLE_SHARE:.0%} of this machine's available memory "
                f"({mem.free_bytes / GiB:.2f} GiB)")
        if mem.is_cuda and budget_bytes > mem.free_bytes:
            raise InputError(f"--budget-gib: {budget_bytes / GiB:.2f} GiB exceeds the free memory "
                             f"of {mem.device} ({mem.free_bytes / GiB:.2f} GiB)")
        return budget_bytes, "given (--budget-gib)"
    if not mem.is_cuda:
        cap = min(CPU_DEFAULT_CAP_BYTES, int(mem.free_bytes * CPU_DEFAULT_AVAILABLE_SHARE))
        return cap, "min(1 GiB, 25% of available memory): the CPU default cap"
    in_use = mem.total_bytes - mem.free_bytes
    budget = int(mem.total_bytes * mem_fraction) - in_use
    if budget <= 0:
        raise InputError(f"--mem-fraction {mem_fraction}: nothing is free within it on "
                         f"{mem.device} ({in_use / GiB:.2f} of {mem.total_bytes / GiB:.2f} GiB "
                         "already in use)")
    return budget, "total x mem_fraction - memory already in use"


# ---------------------------------------------------------------------------------------------
# Storage formats and shapes.


@dataclass(frozen=True, kw_only=True)
class _Storage:
    kv_dtype: str
    dtype: torch.dtype
    pack: int  # values per stored element: 2 for the packed 4-bit formats
    scale_group: int  # nvfp4: one fp8 scale byte per this many values (0: none stored)
    description: str


def _storage(kv_dtype: str) -> _Storage:
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
                                      "per 16 values in a separate tensor"),
    }
    if kv_dtype not in table:
        raise InputError(f"--kv-dtype: expected one of {', '.join(table)}, got {kv_dtype!r}")
    dtype, pack, group, text = table[kv_dtype]
    return _Storage(kv_dtype=kv_dtype, dtype=dtype, pack=pack, scale_group=group,
                    description=text)


@dataclass(frozen=True, kw_only=True)
class _Shapes:
    """One layer slot's cache on one rank."""

    latent: bool
    kv_heads: int  # 1 for MLA
    k_dim: int  # head_dim; MLA: kv_lora_rank + qk_rope_head_dim
    v_dim: int  # v_head_dim; MLA: 0 (no V)
    q_heads: int  # query heads on this rank

    def describe(self, num_blocks: str, block_size: int) -> str:
        if self.latent:
            return f"[{num_blocks}, {block_size}, {self.k_dim}]"
        if self.k_dim == self.v_dim:
            return f"[2, {num_blocks}, {block_size}, {self.kv_heads}, {self.k_dim}]"
        return (f"K [{num_blocks}, {block_size}, {self.kv_heads}, {self.k_dim}] + "
                f"V [{num_blocks}, {block_size}, {self.kv_heads}, {self.v_dim}]")


def _shapes(spec: ModelSpec, tp: int, storage: _Storage) -> _Shapes:
    att = spec.attention
    q_heads = max(1, att.num_attention_heads // tp)
    if isinstance(att, LatentAttention):
        shapes = _Shapes(latent=True, kv_heads=1, k_dim=att.kv_lora_rank + att.qk_rope_head_dim,
                         v_dim=0, q_heads=q_heads)
    else:
        assert isinstance(att, HeadAttention)
        kv_heads = att.kv_heads_per_rank(tp)
        # Query heads grouped over KV heads (GQA); a rank holding a replicated KV head keeps all
        # of its query heads on that one head.
        q_heads = kv_heads * max(1, q_heads // kv_heads)
        shapes = _Shapes(latent=False, kv_heads=kv_heads, k_dim=att.head_dim,
                         v_dim=att.v_head_dim, q_heads=q_heads)
    unit = storage.scale_group or storage.pack
    for name, dim in (("head_dim" if not shapes.latent else "kv_lora_rank + qk_rope_head_dim",
                       shapes.k_dim), ("v_head_dim", shapes.v_dim)):
        if dim % unit:
            raise InputError(f"--kv-dtype {storage.kv_dtype}: {name} ({dim}) must be a multiple "
                             f"of {unit} to pack it")
    return shapes


# ---------------------------------------------------------------------------------------------
# Memory accounting, by the device's own means.


class _Meter:
    """Memory in use by the device's own accounting, relative to a baseline."""

    def __init__(self, device: str) -> None:
        import torch

        self.torch = torch
        self.device = device
        self.cuda = device.startswith("cuda")
        self.page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        self.base_used = self.base_allocated = self.base_reserved = 0

    def _rss(self) -> int:
        try:
            with open("/proc/self/statm", encoding="ascii") as fh:
                return int(fh.read().split()[1]) * self.page
        except OSError:
            import resource  # no /proc: the peak RSS is the best available (kB on Linux)

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def used(self) -> int:
        """CUDA: total - driver free memory; CPU: resident set size."""
        if self.cuda:
            self.torch.cuda.synchronize(self.device)
            free, total = self.torch.cuda.mem_get_info(self.device)
            return total - free
        return self._rss()

    def allocated(self) -> int:
        return self.torch.cuda.memory_allocated(self.device) if self.cuda else 0

    def reserved(self) -> int:
        return self.torch.cuda.memory_reserved(self.device) if self.cuda else 0

    def baseline(self) -> None:
        _settle(self.torch, self.device)
        self.base_used = self.used()
        self.base_allocated = self.allocated()
        self.base_reserved = self.reserved()

    def usage(self) -> int:
        return self.used() - self.base_used


def _trim_heap() -> None:
    """Give freed heap pages back to the OS (glibc keeps freed blocks under 32 MiB otherwise)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _settle(torch: Any, device: str) -> None:
    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
    else:
        _trim_heap()


# ---------------------------------------------------------------------------------------------
# The cache tensors.


@dataclass(kw_only=True)
class _Slot:
    """One layer slot: vLLM's per-layer KV tensor (views into `bases`)."""

    k: torch.Tensor
    v: torch.Tensor | None
    k_scale: torch.Tensor | None
    v_scale: torch.Tensor | None
    bases: list[torch.Tensor]

    def parts(self) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        out = [(self.k, self.k_scale)]
        if self.v is not None:
            out.append((self.v, self.v_scale))
        return out

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.bases)


@dataclass(kw_only=True)
class _Held:
    """Every tensor a run holds, in one place, so that freeing is one `clear()`."""

    slots: list[_Slot] = field(default_factory=list)
    extra: list[_Slot] = field(default_factory=list)
    refs: list[weakref.ref] = field(default_factory=list)

    def clear(self) -> None:
        self.slots.clear()
        self.extra.clear()


def _alloc_slot(shapes: _Shapes, storage: _Storage, num_blocks: int, block_size: int,
                device: str, held: _Held) -> _Slot:
    import torch

    def empty(*shape: int, dtype: torch.dtype = storage.dtype) -> torch.Tensor:
        t = torch.empty(shape, dtype=dtype, device=device)
        t.view(torch.uint8).zero_()  # write every page so that it is resident
        held.refs.append(weakref.ref(t))
        return t

    nb, bs, pack, group = num_blocks, block_size, storage.pack, storage.scale_group
    if shapes.latent:
        k = empty(nb, bs, shapes.k_dim // pack)
        ks = empty(nb, bs, shapes.k_dim // group, dtype=torch.uint8) if group else None
        return _Slot(k=k, v=None, k_scale=ks, v_scale=None,
                     bases=[t for t in (k, ks) if t is not None])
    h = shapes.kv_heads
    if shapes.k_dim == shapes.v_dim:
        kv = empty(2, nb, bs, h, shapes.k_dim // pack)
        kvs = empty(2, nb, bs, h, shapes.k_dim // group, dtype=torch.uint8) if group else None
        return _Slot(k=kv[0], v=kv[1], k_scale=None if kvs is None else kvs[0],
                     v_scale=None if kvs is None else kvs[1],
                     bases=[t for t in (kv, kvs) if t is not None])
    k = empty(nb, bs, h, shapes.k_dim // pack)
    v = empty(nb, bs, h, shapes.v_dim // pack)
    ks = empty(nb, bs, h, shapes.k_dim // group, dtype=torch.uint8) if group else None
    vs = empty(nb, bs, h, shapes.v_dim // group, dtype=torch.uint8) if group else None
    return _Slot(k=k, v=v, k_scale=ks, v_scale=vs,
                 bases=[t for t in (k, v, ks, vs) if t is not None])


@contextlib.contextmanager
def _progress(total: int, description: str, enabled: bool) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr (transient; only on a terminal), or a no-op."""
    console = None
    if enabled:
        from rich.console import Console

        console = Console(stderr=True)
    if console is None or not console.is_terminal:
        yield lambda: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress("[progress.description]{task.description}", BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True)
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda: bar.advance(task)


# ---------------------------------------------------------------------------------------------
# Random contents, block tables and the decode step.


def _random_rows(rows: int, width: int, dtype: torch.dtype, *, scale: bool, gen: Any,
                 device: str) -> torch.Tensor:
    import torch

    if scale:  # fp8-e4m3 scale bytes between 0.5 (0x30) and 2.0 (0x40)
        return torch.randint(0x30, 0x41, (rows, width), dtype=torch.uint8, generator=gen,
                             device=device)
    if dtype == torch.int8:
        return torch.randint(-127, 128, (rows, width), dtype=torch.int8, generator=gen,
                             device=device)
    if dtype == torch.uint8:
        return torch.randint(0, 256, (rows, width), dtype=torch.uint8, generator=gen,
                             device=device)
    return torch.randn(rows, width, generator=gen, device=device).to(dtype)


def _write(slot: _Slot, slot_ids: torch.Tensor, gen: Any, device: str) -> None:
    """Write random K/V (or latents) for the token slots `slot_ids` (block * size + offset)."""
    import torch

    rows = slot_ids.numel()
    for part, scales in slot.parts():
        for tensor, is_scale in ((part, False), (scales, True)):
            if tensor is None:
                continue
            flat = tensor.reshape(tensor.shape[0] * tensor.shape[1], -1)
            assert flat.data_ptr() == tensor.data_ptr()  # a view: writes reach the cache
            src = _random_rows(rows, flat.shape[1], tensor.dtype, scale=is_scale, gen=gen,
                               device=device)
            flat.view(torch.uint8)[slot_ids] = src.view(torch.uint8)


def _dequant(x: torch.Tensor, scales: torch.Tensor | None, storage: _Storage,
             cd: torch.dtype) -> torch.Tensor:
    import torch

    name = storage.kv_dtype
    if name == "int8":
        return x.to(cd) * _INT8_SCALE
    if name == "fp8" and x.dtype == torch.uint8:
        return (x.to(cd) - 128) / 32
    if name not in ("int4", "nvfp4"):
        return x.to(cd)
    codes = torch.stack([x & 0xF, x >> 4], dim=-1).flatten(-2)
    if name == "int4":
        signed = codes.to(torch.int16)
        return torch.where(signed >= 8, signed - 16, signed).to(cd) * _INT4_SCALE
    assert scales is not None
    values = torch.tensor(_FP4_VALUES, dtype=cd, device=x.device)[codes.long()]
    fp8 = getattr(torch, "float8_e4m3fn", None)
    factor = scales.view(fp8).to(cd) if fp8 is not None else torch.ones_like(scales, dtype=cd)
    return (values.unflatten(-1, (-1, storage.scale_group)) * factor[..., None]).flatten(-2)


def _gather(part: torch.Tensor, scales: torch.Tensor | None, table: torch.Tensor, n: int,
            storage: _Storage, cd: torch.dtype) -> torch.Tensor:
    """[requests, n tokens, ...] of one cache part, read block by block through the table."""
    x = part[table].flatten(1, 2)[:, :n]
    s = None if scales is None else scales[table].flatten(1, 2)[:, :n]
    return _dequant(x, s, storage, cd)


def _softmax(scores: torch.Tensor, cd: torch.dtype) -> torch.Tensor:
    import torch

    return torch.softmax(scores.float(), dim=-1).to(cd)


def _head_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q [B, Hq, d], k [B, n, Hkv, d], v [B, n, Hkv, dv] -> [B, Hq, dv], GQA grouping."""
    import torch

    b, hq, d = q.shape
    hkv = k.shape[2]
    qg = q.view(b, hkv, hq // hkv, d)
    scores = torch.einsum("bkgd,bnkd->bkgn", qg, k) * d ** -0.5
    out = torch.einsum("bkgn,bnkd->bkgd", _softmax(scores, q.dtype), v)
    return out.reshape(b, hq, v.shape[-1])


@dataclass(frozen=True, kw_only=True)
class _MLAWeights:
    w_uk: torch.Tensor  # [heads, kv_lora_rank, qk_nope_head_dim]
    w_uv: torch.Tensor  # [heads, kv_lora_rank, v_head_dim]
    rank: int
    rope: int

    @property
    def scale(self) -> float:
        return (self.w_uk.shape[-1] + self.rope) ** -0.5


def _mla_absorbed(q_nope: torch.Tensor, q_rope: torch.Tensor, cache: torch.Tensor,
                  w: _MLAWeights) -> torch.Tensor:
    """Absorbed MLA: the query moves into latent space (q_nope W_UK^T), attention runs over the
    cached latent and RoPE key, and W_UV is applied after."""
    import torch

    latent, k_rope = cache[..., :w.rank], cache[..., w.rank:]
    q_latent = torch.einsum("bhd,hcd->bhc", q_nope, w.w_uk)
    scores = (torch.einsum("bhc,bnc->bhn", q_latent, latent)
              + torch.einsum("bhr,bnr->bhn", q_rope, k_rope)) * w.scale
    o_latent = torch.einsum("bhn,bnc->bhc", _softmax(scores, q_nope.dtype), latent)
    return torch.einsum("bhc,hcv->bhv", o_latent, w.w_uv)


def _mla_naive(q_nope: torch.Tensor, q_rope: torch.Tensor, cache: torch.Tensor,
               w: _MLAWeights) -> torch.Tensor:
    """Naive MLA: up-project every cached latent to per-head K_nope and V, attend with the
    shared RoPE key concatenated."""
    import torch

    latent, k_rope = cache[..., :w.rank], cache[..., w.rank:]
    k_nope = torch.einsum("bnc,hcd->bnhd", latent, w.w_uk)
    v = torch.einsum("bnc,hcv->bnhv", latent, w.w_uv)
    heads = k_nope.shape[2]
    k = torch.cat([k_nope, k_rope[:, :, None, :].expand(-1, -1, heads, -1)], dim=-1)
    q = torch.cat([q_nope, q_rope], dim=-1)
    scores = torch.einsum("bhd,bnhd->bhn", q, k) * w.scale
    return torch.einsum("bhn,bnhv->bhv", _softmax(scores, q.dtype), v)


def _sync(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def _compute_dtype(storage: _Storage, device: str) -> tuple[torch.dtype, str]:
    """CPU computes in fp32; CUDA in the cache's own 16/32-bit type (bf16 for quantised caches)."""
    import torch

    if not device.startswith("cuda"):
        return torch.float32, "fp32"
    name = storage.kv_dtype if storage.kv_dtype in ("fp32", "fp16") else "bf16"
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name], name


@dataclass(frozen=True, kw_only=True)
class _DecodeOutcome:
    batch: int
    context: int
    seconds: float
    finite: bool
    mla_error: float | None = None
    mla_naive_seconds: float | None = None
    mla_absorbed_seconds: float | None = None
    mla_requests: int | None = None


def _decode(held: _Held, *, spec: ModelSpec, shapes: _Shapes, storage: _Storage,
            layer_map: Sequence[tuple[int, int]], group_windows: Sequence[int | None],
            pool_blocks: int, batch: int, context: int, block_size: int, device: str,
            gen: Any, progress: bool) -> _DecodeOutcome:
    import torch

    cd, _ = _compute_dtype(storage, device)
    # Each group's requests keep their last min(context, window) tokens; block ids come from the
    # one shared pool in random order, so the block table is not the identity.
    perm = torch.randperm(pool_blocks, generator=gen, device=device)
    tables, slot_ids, lengths, used = [], [], [], 0
    for window in group_windows:
        n = min(context, window or context)
        per_request = cdiv(n, block_size)
        table = perm[used:used + batch * per_request].view(batch, per_request)
        used += batch * per_request
        pos = torch.arange(n, device=device)
        slot_ids.append((table[:, pos // block_size] * block_size + pos % block_size).flatten())
        tables.append(table)
        lengths.append(n)
    if used > pool_blocks:
        raise DeviceError(f"internal: decode batch needs {used} blocks, pool has {pool_blocks}")
    with _progress(len(layer_map), "writing K/V", progress) as advance:
        for group, slot in layer_map:
            _write(held.slots[slot], slot_ids[group], gen, device)
            advance()

    att = spec.attention
    if isinstance(att, LatentAttention):
        dn, dr = att.qk_nope_head_dim, att.qk_rope_head_dim
        w = _MLAWeights(
            w_uk=(torch.randn(shapes.q_heads, att.kv_lora_rank, dn, generator=gen, device=device)
                  * att.kv_lora_rank ** -0.5).to(cd),
            w_uv=(torch.randn(shapes.q_heads, att.kv_lora_rank, att.v_head_dim, generator=gen,
                              device=device) * att.kv_lora_rank ** -0.5).to(cd),
            rank=att.kv_lora_rank, rope=dr)
        q_nope = torch.randn(batch, shapes.q_heads, dn, generator=gen, device=device).to(cd)
        q_rope = torch.randn(batch, shapes.q_heads, dr, generator=gen, device=device).to(cd)
    else:
        q = torch.randn(batch, shapes.q_heads, shapes.k_dim, generator=gen, device=device).to(cd)

    def layer_out(group: int, slot: int) -> torch.Tensor:
        s = held.slots[slot]
        if isinstance(att, LatentAttention):
            cache = _gather(s.k, s.k_scale, tables[group], lengths[group], storage, cd)
            return _mla_absorbed(q_nope, q_rope, cache, w)
        assert s.v is not None
        k = _gather(s.k, s.k_scale, tables[group], lengths[group], storage, cd)
        v = _gather(s.v, s.v_scale, tables[group], lengths[group], storage, cd)
        return _head_attention(q, k, v)

    def step() -> bool:
        finite = True
        for group, slot in layer_map:
            finite &= bool(torch.isfinite(layer_out(group, slot)).all())
        return finite

    step()  # warm-up (kernels, allocator)
    _sync(torch, device)
    start = time.perf_counter()
    finite = step()
    _sync(torch, device)
    seconds = time.perf_counter() - start
    if not isinstance(att, LatentAttention):
        return _DecodeOutcome(batch=batch, context=context, seconds=seconds, finite=finite)

    # MLA: naive vs absorbed on layer 0 for a few requests, both in the compute dtype.
    group, slot = layer_map[0]
    m = min(batch, MLA_CHECK_MAX_REQUESTS)
    s = held.slots[slot]
    cache = _gather(s.k, s.k_scale, tables[group][:m], lengths[group], storage, cd)
    timed: dict[str, tuple[torch.Tensor, float]] = {}
    for name, fn in (("absorbed", _mla_absorbed), ("naive", _mla_naive)):
        _sync(torch, device)
        start = time.perf_counter()
        out = fn(q_nope[:m], q_rope[:m], cache, w)
        _sync(torch, device)
        timed[name] = (out, time.perf_counter() - start)
    naive, absorbed = timed["naive"][0].float(), timed["absorbed"][0].float()
    error = float((absorbed - naive).abs().max() / naive.abs().max().clamp_min(1e-30))
    return _DecodeOutcome(batch=batch, context=context, seconds=seconds,
                          finite=finite and bool(torch.isfinite(naive).all()), mla_error=error,
                          mla_naive_seconds=timed["naive"][1],
                          mla_absorbed_seconds=timed["absorbed"][1], mla_requests=m)


# ---------------------------------------------------------------------------------------------
# The result and the run.


@dataclass(frozen=True, kw_only=True)
class VerifyResult:
    """`kvplan verify`'s numbers. Field names are the JSON contract; sizes in bytes."""

    model: str
    model_name: str
    attention_kind: str
    device: str
    device_name: str
    kv_dtype: str
    storage_dtype: str
    block_size: int
    tp: int
    context: int
    total_bytes: int
    free_bytes: int  # CUDA: driver free; CPU: MemAvailable, before the run
    mem_fraction: float | None  # CUDA only
    budget_bytes: int
    budget_source: str
    page_bytes: int
    group_size: int  # layer slots (one tensor each)
    num_groups: int
    slot_shape: str
    blocks_per_request: int
    predicted_num_blocks: int
    predicted_bytes: int
    tensor_bytes: int  # sum of the allocated tensors' nbytes
    measured_bytes: int  # CUDA: drop in driver free memory; CPU: RSS growth
    measured_method: str
    difference_bytes: int  # measured - predicted
    difference_pct: float
    allocator_overhead_bytes: int  # CUDA: reserved - allocated; CPU: measured - tensor bytes
    cuda_allocated_bytes: int | None
    cuda_reserved_bytes: int | None
    measured_num_blocks: int
    search_bytes: int  # device-measured use with the search's extra blocks held
    search_limit: str
    predicted_token_capacity: int
    measured_token_capacity: int
    predicted_max_concurrency: float
    measured_max_concurrency: float
    decode_batch: int
    decode_context: int
    decode_compute_dtype: str
    decode_step_seconds: float
    decode_output_finite: bool
    absorbed_vs_naive_max_rel_error: float | None
    absorbed_vs_naive_tolerance: float | None
    absorbed_vs_naive_ok: bool | None
    mla_check_requests: int | None
    mla_naive_seconds: float | None
    mla_absorbed_seconds: float | None
    freed_ok: bool
    freed_residual_bytes: int
    live_tensors_after_free: int
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _layer_map(windows: Sequence[int | None], group_size: int, num_groups: int,
               sources: Sequence[int | None] = (),
               ) -> tuple[list[tuple[int, int]], list[int | None]]:
    """(group, slot) per layer, and each group's window, as vLLM's uniform-page grouping lays
    them out: full-attention layers in chunks of group_size, then sliding ones. Layers that
    reuse an earlier layer's cache (cross-layer sharing) get no slot of their own: they read
    their source layer's."""
    owners = [i for i in range(len(windows)) if not sources or sources[i] is None]
    mapping: dict[int, tuple[int, int]] = {}
    group_windows: list[int | None] = []
    if num_groups == 1:
        mapping = {layer: (0, slot) for slot, layer in enumerate(owners)}
        group_windows = [max((windows[i] for i in owners), key=lambda w: w or 0)]
    else:
        full = [i for i in owners if windows[i] is None]
        sliding = [i for i in owners if windows[i] is not None]
        window = max(windows[i] for i in sliding)
        for layers, w in ((full, None), (sliding, window)):
            for start in range(0, len(layers), group_size):
                for slot, layer in enumerate(layers[start:start + group_size]):
                    mapping[layer] = (len(group_windows), slot)
                group_windows.append(w)
    for i in range(len(windows)):
        if i not in mapping:
            mapping[i] = mapping[sources[i]]  # type: ignore[index]
    return [mapping[i] for i in range(len(windows))], group_windows


def _largest_context(group_windows: Sequence[int | None], context: int, block_size: int,
                     blocks: int) -> int:
    """The longest context (<= `context`) whose one request fits in `blocks` blocks."""
    def need(c: int) -> int:
        return sum(cdiv(min(c, w or c), block_size) for w in group_windows)

    lo, hi = 1, context
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if need(mid) <= blocks:
            lo = mid
        else:
            hi = mid - 1
    return lo


def verify(spec: ModelSpec, *, device: str = "auto", context: int = 4096,
           kv_dtype: str = "bf16", block_size: int = 16, tp: int = 1,
           mem_fraction: float = DEFAULT_MEM_FRACTION, budget_bytes: int | None = None,
           max_decode_batch: int | None = None, progress: bool = False,
           seed: int = 0) -> VerifyResult:
    """Allocate `spec`'s paged KV cache on `device` within the budget, measure it, search the
    real maximum, run a decode step over it, free it. See the module docstring."""
    import torch

    if context < 1:
        raise InputError(f"--context: must be >= 1, got {context}")
    unsupported = ("recurrent-state layers" if spec.num_recurrent_layers else
                   "chunked local attention" if spec.layer_chunks else
                   "a sparse-attention indexer cache" if spec.indexer is not None else None)
    if unsupported:
        # Refused rather than allocated as plain attention, which would not be what vLLM takes.
        raise InputError(f"{spec.id} has {unsupported}, which verify does not allocate yet "
                         "(it allocates full, sliding-window and MLA caches); use estimate")
    dev = resolve_device(device)
    storage = _storage(kv_dtype)
    layout = kv_layout(spec, kv_dtype=kv_dtype, block_size=block_size, tp=tp)
    shapes = _shapes(spec, tp, storage)
    mem = probe_device(dev)
    budget, budget_source = resolve_budget(mem, budget_bytes=budget_bytes,
                                           mem_fraction=mem_fraction)
    plan = plan_capacity(spec, PlanInputs(context=context, kv_dtype=kv_dtype,
                                          block_size=block_size, tp=tp, engine=Engine.vllm,
                                          kv_budget_bytes=budget))
    stage = plan.stages[0]
    pool = block_pool(layout, Engine.vllm)
    block_set = stage.page_bytes * stage.group_size
    if plan.num_blocks < pool.num_groups:
        raise InputError(
            f"budget {budget:,} B ({human_bytes(budget)}) is too small for one block"
            + (f" per KV-cache group ({pool.num_groups})" if pool.num_groups > 1 else "")
            + f": one block across {stage.group_size} layer slots is {block_set:,} B; raise "
              "--budget-gib or lower --block-size/--context")
    layer_map, group_windows = _layer_map(spec.layer_windows, stage.group_size, pool.num_groups,
                                          spec.kv_sources)
    predicted_bytes = plan.num_blocks * block_set
    cap = max_decode_batch or MAX_DECODE_BATCH["cuda" if mem.is_cuda else "cpu"]
    show = progress and (len(layer_map) > PROGRESS_MIN_LAYERS
                         or predicted_bytes > PROGRESS_MIN_BYTES)

    held = _Held()
    last_run_refs[:] = []
    meter = _Meter(dev)
    try:
        run = _run(held, meter, torch=torch, spec=spec, shapes=shapes, storage=storage,
                   layer_map=layer_map, group_windows=group_windows, plan_blocks=plan.num_blocks,
                   blocks_per_request=stage.blocks_per_request, block_set=block_set,
                   budget=budget, block_size=block_size, context=context, cap=cap,
                   device=dev, seed=seed, progress=show, group_size=stage.group_size)
    except BaseException as exc:
        # The traceback keeps the finished frames' locals (views of the cache) alive: drop them.
        traceback.clear_frames(exc.__traceback__)
        oom = isinstance(exc, (MemoryError, getattr(torch.cuda, "OutOfMemoryError", MemoryError))
                         ) or (isinstance(exc, RuntimeError) and "out of memory" in str(exc))
        if oom:
            # Outside the block search (which treats it as a measured limit): the predicted pool
            # itself or the decode step's temporaries did not fit. Everything is freed below.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DeviceError(f"{dev}: out of memory outside the block search ({first[:160]}); "
                              "lower --mem-fraction or --budget-gib") from None
        raise
    finally:
        last_run_refs[:] = held.refs
        held.clear()
        _settle(torch, dev)
    live = sum(ref() is not None for ref in held.refs)
    residual = meter.usage()
    if mem.is_cuda:
        freed_ok = (live == 0 and meter.allocated() <= meter.base_allocated
                    and meter.reserved() <= meter.base_reserved)
    else:
        freed_ok = live == 0 and residual <= max(CPU_FREE_SLACK_BYTES, run["measured"] // 20)

    measured = run["measured"]
    tensor_bytes = run["tensor_bytes"]
    decode: _DecodeOutcome = run["decode"]
    measured_blocks = run["measured_blocks"]
    _, cd_name = _compute_dtype(storage, dev)
    tolerance = MLA_TOLERANCES[cd_name] if decode.mla_error is not None else None
    notes = [
        f"KV budget: {budget_source}.",
        f"Allocated as vLLM V1 does: {stage.group_size} layer-slot tensors of "
        f"{shapes.describe(f'{plan.num_blocks:,}', block_size)} in {storage.description}"
        + (f"; {pool.num_groups} KV-cache groups share the slots (vLLM's uniform-page hybrid "
           "allocator)." if pool.num_groups > 1 else "."),
        "Measured: " + run["method"] + ".",
        f"Real maximum: chunks of blocks added while the device's accounting stayed inside the "
        f"budget; stopped by {run['limit']}.",
    ]
    if decode.context < context:
        notes.append(f"Not one request of {context:,} tokens fits: the decode step ran one "
                     f"request of {decode.context:,} tokens.")
    if any(w is not None for w in group_windows):
        notes.append("Sliding-window layers attend over their last min(context, window) tokens.")
    if decode.mla_error is not None:
        notes.append(f"MLA check on layer 0, {decode.mla_requests} request(s): absorbed "
                     f"(q_nope W_UK^T, attend over the latent, then W_UV) vs naive (up-project "
                     f"every latent to K and V) in {cd_name}; tolerance {tolerance:g}.")
    if not mem.is_cuda:
        notes.append("CPU: RSS counts resident pages; decode temporaries (fp32 copies of the "
                     "gathered blocks) are outside the budget.")
    return VerifyResult(
        model=spec.id, model_name=spec.name, attention_kind=spec.kind.value,
        device=dev, device_name=mem.device_name, kv_dtype=kv_dtype,
        storage_dtype=storage.description, block_size=block_size, tp=tp, context=context,
        total_bytes=mem.total_bytes, free_bytes=mem.free_bytes,
        mem_fraction=mem_fraction if mem.is_cuda else None,
        budget_bytes=budget, budget_source=budget_source,
        page_bytes=stage.page_bytes, group_size=stage.group_size, num_groups=pool.num_groups,
        slot_shape=shapes.describe("num_blocks", block_size),
        blocks_per_request=stage.blocks_per_request,
        predicted_num_blocks=plan.num_blocks, predicted_bytes=predicted_bytes,
        tensor_bytes=tensor_bytes, measured_bytes=measured, measured_method=run["method"],
        difference_bytes=measured - predicted_bytes,
        difference_pct=100.0 * (measured - predicted_bytes) / predicted_bytes,
        allocator_overhead_bytes=run["overhead"],
        cuda_allocated_bytes=run["allocated"], cuda_reserved_bytes=run["reserved"],
        measured_num_blocks=measured_blocks, search_bytes=run["search_bytes"],
        search_limit=run["limit"],
        predicted_token_capacity=plan.token_capacity,
        measured_token_capacity=measured_blocks // pool.num_groups * block_size,
        predicted_max_concurrency=plan.max_concurrency,
        measured_max_concurrency=measured_blocks / stage.blocks_per_request,
        decode_batch=decode.batch, decode_context=decode.context,
        decode_compute_dtype=cd_name, decode_step_seconds=decode.seconds,
        decode_output_finite=decode.finite,
        absorbed_vs_naive_max_rel_error=decode.mla_error,
        absorbed_vs_naive_tolerance=tolerance,
        absorbed_vs_naive_ok=None if decode.mla_error is None else decode.mla_error <= tolerance,
        mla_check_requests=decode.mla_requests,
        mla_naive_seconds=decode.mla_naive_seconds,
        mla_absorbed_seconds=decode.mla_absorbed_seconds,
        freed_ok=freed_ok, freed_residual_bytes=residual, live_tensors_after_free=live,
        notes=tuple(notes),
    )


def _run(held: _Held, meter: _Meter, *, torch: Any, spec: ModelSpec, shapes: _Shapes,
         storage: _Storage, layer_map: Sequence[tuple[int, int]],
         group_windows: Sequence[int | None], plan_blocks: int, blocks_per_request: int,
         block_set: int, budget: int, block_size: int, context: int, cap: int, device: str,
         seed: int, progress: bool, group_size: int) -> dict[str, Any]:
    """Everything that holds tensors. Tensors live only in `held` (freed by the caller)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    # Warm up torch (threads, BLAS, CUDA context) before the baseline so it is not counted.
    # A large zeroing starts the intra-op thread pool (its stacks are resident memory).
    warm = torch.ones(64, 64, device=device)
    float((warm @ warm).sum())
    scratch = torch.empty(16 * MiB, dtype=torch.uint8, device=device)
    scratch.zero_()
    _alloc_slot(shapes, storage, 1, block_size, device, _Held())  # the code path, once
    del warm, scratch
    if progress:
        import rich.progress  # noqa: F401  (imported before the baseline: its RSS is not KV)
    meter.baseline()

    # 3. The pool, as the engine allocates it.
    with _progress(group_size, "allocating KV cache", progress) as advance:
        for _ in range(group_size):
            held.slots.append(_alloc_slot(shapes, storage, plan_blocks, block_size, device, held))
            advance()
    tensor_bytes = sum(s.nbytes for s in held.slots)
    if tensor_bytes != plan_blocks * block_set:
        raise DeviceError(f"internal: allocated {tensor_bytes:,} B of tensors for "
                          f"{plan_blocks * block_set:,} B predicted")
    # 4. Measure.
    measured = meter.usage()
    if meter.cuda:
        allocated = meter.allocated() - meter.base_allocated
        reserved = meter.reserved() - meter.base_reserved
        overhead = reserved - allocated
        method = ("drop in driver free memory (torch.cuda.mem_get_info); memory_allocated "
                  f"+{allocated:,} B, memory_reserved +{reserved:,} B")
    else:
        allocated = reserved = None
        overhead = measured - tensor_bytes
        method = "growth of the process RSS (/proc/self/statm) after every page was written"

    # 5. The real maximum, by the device's own accounting. First from above: while the pool
    # measures over the budget (allocator overhead), reallocate it smaller. Then from below: add
    # chunks of blocks (a page in every slot) while the next chunk stays inside the budget,
    # halving the chunk down to one block. An out-of-memory error is a measured limit.
    oom_errors = (getattr(torch.cuda, "OutOfMemoryError", RuntimeError), RuntimeError,
                  MemoryError)

    def alloc_pool(num_blocks: int, into: list[_Slot]) -> None:
        for _ in range(group_size):
            into.append(_alloc_slot(shapes, storage, num_blocks, block_size, device, held))

    pool_blocks = plan_blocks
    limit = "the budget"
    now = measured
    for _ in range(8):
        if now <= budget:
            break
        pool_blocks -= max(1, cdiv(now - budget, block_set))
        held.slots.clear()
        _settle(torch, device)
        if pool_blocks < 1:
            raise DeviceError(f"not one block fits in the budget by {device}'s accounting")
        alloc_pool(pool_blocks, held.slots)
        now = meter.usage()
        limit = (f"the budget (allocator overhead put the predicted pool over it; "
                 f"reallocated with {pool_blocks:,} blocks)")
    blocks = pool_blocks
    chunk = max(1, pool_blocks // 8)
    while now <= budget and chunk >= 1:
        before = meter.usage()
        if before + chunk * block_set > budget:
            chunk //= 2
            continue
        added: list[_Slot] = []
        try:
            alloc_pool(chunk, added)
        except oom_errors:
            limit = "an out-of-memory error"
            added.clear()
            _settle(torch, device)
            chunk //= 2
            continue
        if meter.usage() - before < chunk * block_set // 2:
            # Pages that were already resident (a reused heap) are not growth: stop here.
            limit = "the device's accounting not tracking the allocation"
            added.clear()
            break
        held.extra.extend(added)
        added.clear()
        blocks += chunk
    search_bytes = meter.usage()
    held.extra.clear()
    _settle(torch, device)

    # 6. Use it: a decode step for a batch of requests, in the pool.
    per_request = blocks_per_request
    usable = min(blocks, pool_blocks)
    batch = max(1, min(cap, usable // per_request))
    ctx = context if usable >= per_request else _largest_context(
        group_windows, context, block_size, usable)
    decode = _decode(held, spec=spec, shapes=shapes, storage=storage, layer_map=layer_map,
                     group_windows=group_windows, pool_blocks=pool_blocks, batch=batch,
                     context=ctx, block_size=block_size, device=device, gen=gen,
                     progress=progress)
    return {"measured": measured, "tensor_bytes": tensor_bytes, "allocated": allocated,
            "reserved": reserved, "overhead": overhead, "method": method,
            "measured_blocks": blocks, "limit": limit, "search_bytes": search_bytes,
            "decode": decode}

