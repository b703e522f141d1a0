"""GPU presets: memory capacity, what engines see as the device total, bandwidth and peak FLOPs.

Units are in the field names. Three memory figures are easy to confuse:

* ``memory_bytes`` -- the marketing capacity. HBM and GDDR capacities are binary: an "80GB" H100
  has 80 GiB = 85,899,345,920 B of DRAM (nvidia-smi shows 81,559 MiB of it), an "80GB" A100
  shows exactly 81,920 MiB, a "141GB" H200 has 141 GiB, an MI300X "192 GB" is 192 GiB. The
  check that settles it: a decimal reading (80 GB = 74.5 GiB) would sit *below* what the
  driver reports, which is impossible.
* ``reported_total_bytes`` -- the best driver-reported total a public log shows. Preferably
  ``torch.cuda.mem_get_info()[1]`` (``reported_total_kind == "mem_get_info"``): the
  ``total_gpu_memory`` vLLM multiplies by ``gpu_memory_utilization``, the "total capacity" in
  PyTorch's OOM message and the total SGLang's "avail mem" counts down from. Where no such line
  was found but an nvidia-smi table was, its ``MiB`` total (``"nvidia-smi"``), which on the
  cards where both are known is 0.3-0.85 GiB *above* mem_get_info (H100 80GB: 81,559 MiB =
  79.65 GiB vs 79.19 GiB; RTX 4090: 23.99 vs 23.65) -- still far closer than the capacity.
  Both are below the capacity: the driver/firmware keep some, and GDDR6 with ECC on (L4, A10G,
  L40S) also loses 1/16. They vary by a few hundredths of a GiB with driver and CUDA version
  (H100 80GB logs show 79.11-79.22 GiB), so each figure is one observed log line, quoted with
  its URL in ``reported_total_source``.
* ``total_bytes`` -- the reported figure when known, else the capacity.

``smi_total_bytes`` keeps the nvidia-smi figure separately where a log shows it: SGLang sizes
its defaults (``mem_fraction_static``, cuda-graph batch sizes) from ``nvidia-smi
--query-gpu=memory.total``, not from torch.

FLOPs are DENSE tensor-core peaks, one per GEMM input type (`GPU.peak_flops`, `GPU.runs`: bf16,
fp8 and, on Blackwell, fp4; a type the card has no tensor cores for is None). Datasheets
usually print the 2:4-sparsity figure in the same row ("1,979 TFLOPS*"); that number is halved
here. GeForce cards run bf16 and fp8 matmuls at the "FP32 accumulate" rate of their whitepaper,
half the "FP16 accumulate" headline. Bandwidth is decimal (TB/s = 10**12 B/s). FP4 is read for
the data-centre Blackwell parts (B200, B300, GB200, GB300) and GB10 only; on the RTX Blackwell
cards it is not read, so an NVFP4 GEMM there is priced as weight-only (bf16 math). Hopper
presets also carry the rate of Ampere's warp-level ``mma.sync`` (``mma_sync_bf16_dense``, about
2/3 of the bf16 peak, which only ``wgmma`` reaches): a kernel that issues only mma.sync (Marlin)
runs at it (`GPU.peak_flops`).

The figures live in ``gpus.json`` beside this module, each number with its source and each preset
with notes on how its figures were read; they are read once, on first use (`GPUS`, `get_gpu`),
so a command that names no GPU never parses them. (JSON, not YAML: it parses in a fraction of a
millisecond, where the YAML reader would add several to `kvplan estimate --gpu`.)
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvplan._util.dtypes import GemmMath
from kvplan._util.errors import InputError
from kvplan._util.lazy import LazyMapping
from kvplan._util.search import close_names
from kvplan._util.units import GB, TB, GiB, MiB

NO_LOG = "no public start-up log found: total_bytes falls back to the nominal capacity"

DATA_FILE = Path(__file__).with_name("gpus.json")


@dataclass(frozen=True, kw_only=True)
class GPU:
    name: str
    """Preset key, e.g. ``"H100-80GB"``."""
    full_name: str
    """Product name, e.g. ``"NVIDIA H100 80GB HBM3 (SXM5)"``."""
    memory_bytes: int
    """Marketing capacity in bytes (binary for HBM/GDDR: 80GB -> 80 GiB)."""
    reported_total_bytes: int | None
    """Driver-reported device total from a public log, or None where none was found."""
    reported_total_source: str
    """The log line and its URL; where ``reported_total_bytes`` is None, why (``NO_LOG``)."""
    hbm_bytes_per_s: int
    """Peak DRAM bandwidth in bytes/s (decimal)."""
    peak_bf16_flops_per_s: int
    """Dense (no sparsity) bf16 tensor-core peak."""
    peak_fp8_flops_per_s: int | None
    """Dense fp8 tensor-core peak; None where the card has no fp8 tensor cores (Ampere)."""
    source: str
    """Datasheet URL for memory, bandwidth and FLOPs (and how a figure was derived from it)."""
    peak_fp4_flops_per_s: int | None = None
    """Dense fp4 (NVFP4 / MXFP4 inputs) tensor-core peak; None where the card has none (before
    Blackwell) or where no figure was read (gpus.json: ``fp4_dense`` absent)."""
    peak_mma_sync_bf16_flops_per_s: int | None = None
    """Dense bf16 rate of Ampere's warp-level ``mma.sync`` tensor-core instruction where it is
    below `peak_bf16_flops_per_s` (Hopper: about 2/3 of the peak, which only the warpgroup
    ``wgmma`` reaches; gpus.json ``mma_sync_bf16_dense``, its source there); None: mma.sync
    reaches the card's bf16 peak (Ampere, Ada: their native instruction) or no figure was read
    (H20). A kernel that issues only mma.sync (kvplan.engines.moe_kernel: Marlin) runs at it."""
    peak_fp32_flops_per_s: int | None = None
    """Dense float32 peak on the CUDA cores (the datasheet's "FP32" row; AMD: FP32 vector), what
    a float32 GEMM at torch's "highest" precision runs at (kvplan.perf.router_cost); None where
    no datasheet figure was read (gpus.json: ``fp32_dense`` absent)."""
    peak_tf32_flops_per_s: int | None = None
    """Dense TF32 tensor-core peak (the sparse figure halved); None where not read. Kept beside
    the FP32 peak: no engine kvplan models lowers float32 matmuls to TF32."""
    is_a100: bool = False
    """vLLM treats A100 specially when choosing the default max_num_batched_tokens."""
    reported_total_kind: str = ""
    """``"mem_get_info"`` (torch/vLLM/SGLang), ``"nvidia-smi"``, or "" when unknown."""
    smi_total_bytes: int | None = None
    """nvidia-smi's ``MiB`` total where a public log shows it (what SGLang sizes defaults by)."""
    smi_total_source: str = ""
    """URL of the nvidia-smi table; "" when ``smi_total_bytes`` is None."""
    compute_capability: tuple[int, int] | None = None
    """What ``torch.cuda.get_device_capability()`` returns on it (H100 (9, 0), B200 (10, 0);
    ROCm: the gfx version, MI300X gfx942 (9, 4)): the engines pick defaults by it (SGLang's
    KV dtype for DeepSeek's sparse attention, kvplan.engines.sglang.kv_dtype)."""
    platform: str = "cuda"
    """Software platform: ``"cuda"`` or ``"rocm"``."""
    unified_memory: bool = False
    """CPU and GPU share one DRAM pool (GB10 / DGX Spark): the OS's memory counts as used."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted by `get_gpu` (compared case- and separator-insensitively)."""

    def runs(self, math: GemmMath) -> GemmMath:
        """The type a GEMM the checkpoint asks to run at `math` really runs at on this card.
        The engines fall back to a weight-only kernel (dequantize the weights to bf16 in the
        GEMM: Marlin) where the card has no tensor cores for the activations' type: vLLM
        modelopt.py / compressed_tensors_w4a4_nvfp4.py pick the FP4 Marlin kernel below
        compute capability 10.0 (`is_fp4_marlin_supported`), and fp8.py the FP8 Marlin kernel
        below 8.9 (Ampere); SGLang's quantization/ modules do likewise."""
        if math is GemmMath.fp4 and self.peak_fp4_flops_per_s:
            return GemmMath.fp4
        if math is GemmMath.fp8 and self.peak_fp8_flops_per_s:
            return GemmMath.fp8
        return GemmMath.bf16

    def peak_flops(self, math: GemmMath, *, mma_sync: bool = False) -> int:
        """Dense tensor-core FLOP/s of a GEMM the checkpoint asks to run at `math` (`runs`);
        `mma_sync`: its kernel issues only Ampere's mma.sync, so a bf16 GEMM runs at
        `peak_mma_sync_bf16_flops_per_s` where the card sets one."""
        ran = self.runs(math)
        if ran is GemmMath.fp4 and self.peak_fp4_flops_per_s:
            return self.peak_fp4_flops_per_s
        if ran is GemmMath.fp8 and self.peak_fp8_flops_per_s:
            return self.peak_fp8_flops_per_s
        if mma_sync and self.peak_mma_sync_bf16_flops_per_s:
            return self.peak_mma_sync_bf16_flops_per_s
        return self.peak_bf16_flops_per_s

    @property
    def total_bytes(self) -> int:
        """What engines see as the device total: the reported figure when known, else capacity."""
        if self.reported_total_bytes is not None:
            return self.reported_total_bytes
        return self.memory_bytes


# The units a value in gpus.json may carry, in bytes, bytes/s or FLOP/s.
_BINARY_UNITS = {"GiB": GiB, "MiB": MiB}
_DECIMAL_UNITS = {"GB/s": GB, "TB/s": TB, "TFLOPS": 10**12}
# gpus.json's number fields -> the GPU field each sets.
_NUMBERS = {"memory": "memory_bytes", "bandwidth": "hbm_bytes_per_s",
            "bf16_dense": "peak_bf16_flops_per_s", "fp8_dense": "peak_fp8_flops_per_s",
            "fp4_dense": "peak_fp4_flops_per_s", "fp32_dense": "peak_fp32_flops_per_s",
            "tf32_dense": "peak_tf32_flops_per_s",
            "mma_sync_bf16_dense": "peak_mma_sync_bf16_flops_per_s",
            "reported_total": "reported_total_bytes", "smi_total": "smi_total_bytes"}
_FLAGS = {"name", "notes", "full_name", "aliases", "datasheet", "platform", "is_a100",
          "unified_memory", "compute_capability"}


def _quantity(text: object, where: str) -> int:
    """``"80 GiB"``, ``"79.19 GiB"``, ``"23028 MiB"``, ``"3350 GB/s"``, ``"989.5 TFLOPS"`` in
    bytes, bytes/s or FLOP/s. A binary figure with decimals is a total as a log prints it,
    rounded down to whole bytes; a decimal one must come out whole."""
    number, _, unit = str(text).partition(" ")
    if unit in _BINARY_UNITS:
        return int(float(number) * _BINARY_UNITS[unit])
    if unit not in _DECIMAL_UNITS:
        raise ValueError(f"{DATA_FILE.name}: {where}: {text!r}: expected a number and one of "
                         f"{', '.join([*_BINARY_UNITS, *_DECIMAL_UNITS])}")
    whole, _, fraction = number.partition(".")
    scaled, rest = divmod(int(whole + fraction) * _DECIMAL_UNITS[unit], 10 ** len(fraction))
    if rest:
        raise ValueError(f"{DATA_FILE.name}: {where}: {text!r} is not a whole number")
    return scaled


def _number(entry: dict[str, Any], key: str, where: str) -> tuple[int | None, str]:
    """One number of an entry and its source; (None, source) for ``value: null``."""
    item = entry.get(key)
    if not isinstance(item, dict) or not item.get("source") or "value" not in item:
        raise ValueError(f"{DATA_FILE.name}: {where}.{key}: needs a value and its source")
    value = item["value"]
    return (None if value is None else _quantity(value, f"{where}.{key}")), item["source"]


def _capability(entry: dict[str, Any], where: str) -> tuple[int, int]:
    """``{"value": "9.0", "source": ...}`` as (9, 0)."""
    item = entry.get("compute_capability")
    if not isinstance(item, dict) or not item.get("source") or "value" not in item:
        raise ValueError(f"{DATA_FILE.name}: {where}.compute_capability: needs a value and its "
                         "source")
    major, dot, minor = str(item["value"]).partition(".")
    if not (dot and major.isdigit() and minor.isdigit()):
        raise ValueError(f"{DATA_FILE.name}: {where}.compute_capability: {item['value']!r}: "
                         "expected major.minor")
    return int(major), int(minor)


def _preset(entry: dict[str, Any]) -> tuple[GPU, dict[str, str]]:
    """One gpus.json entry as a GPU, and the source of each of its numbers by GPU field."""
    where = f"gpus: {entry.get('name')}"
    unknown = set(entry) - _FLAGS - set(_NUMBERS)
    if unknown:
        raise ValueError(f"{DATA_FILE.name}: {where}: unknown fields {sorted(unknown)}")
    numbers, sources = {}, {}
    for key, field_name in _NUMBERS.items():
        if entry.get(key) is None and key in ("reported_total", "smi_total", "fp4_dense",
                                              "fp32_dense", "tf32_dense",
                                              "mma_sync_bf16_dense"):
            numbers[field_name], sources[field_name] = None, (  # none found / not read
                NO_LOG if key == "reported_total" else "")
            continue
        numbers[field_name], sources[field_name] = _number(entry, key, where)
    reported = entry.get("reported_total")
    gpu = GPU(
        compute_capability=_capability(entry, where),
        name=entry["name"], full_name=entry["full_name"], source=entry["datasheet"],
        reported_total_source=sources["reported_total_bytes"],
        reported_total_kind="" if reported is None else reported["kind"],
        smi_total_source=sources["smi_total_bytes"],
        platform=entry.get("platform", "cuda"), is_a100=entry.get("is_a100", False),
        unified_memory=entry.get("unified_memory", False),
        aliases=tuple(entry.get("aliases", ())), **numbers)
    return gpu, sources


@dataclass(frozen=True)
class _Table:
    by_name: dict[str, GPU]
    by_key: dict[str, GPU]
    sources: dict[str, dict[str, str]]


@functools.cache
def _table() -> _Table:
    """gpus.json, read and checked once."""
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    presets, sources = [], {}
    for entry in data["gpus"]:
        gpu, numbers = _preset(entry)
        presets.append(gpu)
        sources[gpu.name] = numbers
    return _Table(by_name={gpu.name: gpu for gpu in presets}, by_key=_index(presets),
                  sources=sources)


GPUS: Mapping[str, GPU] = LazyMapping(lambda: _table().by_name, "GPUS")
"""The presets, keyed by name, in gpus.json's order (read on first use)."""


def number_sources(name: str) -> dict[str, str]:
    """Where each number of preset `name` comes from, by GPU field (``"memory_bytes"``,
    ``"hbm_bytes_per_s"``, ``"peak_bf16_flops_per_s"``, ...), as gpus.json states it."""
    return dict(_table().sources[name])


# Vendor words that torch/nvidia-smi/rocm-smi put in front of a product name; dropped so that
# "NVIDIA GeForce RTX 4090" or "AMD Instinct MI300X" (torch.cuda.get_device_name) also resolve.
_VENDOR_WORDS = re.compile(r"\b(nvidia|geforce|amd|instinct)\b")


def _key(name: str) -> str:
    """Lookup key: lower case, without vendor words or separators ("RTX-4090" == "rtx 4090")."""
    return re.sub(r"[^a-z0-9]", "", _VENDOR_WORDS.sub("", name.lower()))


def _index(presets: list[GPU]) -> dict[str, GPU]:
    index: dict[str, GPU] = {}
    for gpu in presets:
        for spelling in (gpu.name, *gpu.aliases):
            key = _key(spelling)
            other = index.setdefault(key, gpu)
            if other is not gpu:
                raise ValueError(f"GPU alias {spelling!r} names both {other.name} and {gpu.name}")
    return index



def get_gpu(name: str) -> GPU:
    """Look up a preset by name or alias, ignoring case, separators and vendor words
    (``"h100"``, ``"H100-SXM"``, ``"NVIDIA GeForce RTX 4090"`` and ``"4090"`` all work)."""
    by_key = _table().by_key
    gpu = by_key.get(_key(name))
    if gpu is not None:
        return gpu
    close = close_names(_key(name), by_key, key=lambda k: k, n=8)
    suggestions = list(dict.fromkeys(by_key[key].name for key in close))[:3]
    hint = f"did you mean {', '.join(suggestions)}? " if suggestions else ""
    raise InputError(f"--gpu: unknown GPU {name.strip()!r}; {hint}(known: {', '.join(GPUS)})")


def device_of_size(total_bytes: int) -> GPU:
    """A device known only by its total (`--gpu-mem-gib`): no bandwidth or FLOPs (no time
    model), no fp8 tensor cores (bf16 KV unless one is asked for)."""
    return GPU(name="device", full_name=f"{total_bytes / (1 << 30):g} GiB device",
               memory_bytes=total_bytes, reported_total_bytes=total_bytes,
               reported_total_source="--gpu-mem-gib", hbm_bytes_per_s=0,
               peak_bf16_flops_per_s=0, peak_fp8_flops_per_s=None, source="--gpu-mem-gib")
