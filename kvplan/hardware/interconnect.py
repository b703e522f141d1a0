"""Interconnect presets for the cost model's collectives (TP all-reduce, EP all-to-all).

Units are in the names: ``bytes_per_s`` is the *achievable* one-direction bandwidth of one GPU's
link (decimal bytes per second), ``latency_s`` the fixed time of one small NCCL-style collective
(the EP all-to-all, and all-reduces the custom kernels do not take), and
``custom_all_reduce_latency_s`` the fixed time of one one-shot custom all-reduce replayed in a
CUDA graph (NVLink presets only). Datasheet figures are quoted next to each preset with where the
achievable figure comes from; nothing here is fitted to a serving benchmark.

TP all-reduce at decode sizes (`Interconnect.all_reduce_s`). vLLM and SGLang (and, through its
own one-shot / two-shot kernels, TensorRT-LLM) do not call NCCL for the few-kB-to-few-MB
all-reduces of a decode step on NVLink: they run a custom all-reduce in which every rank loads
its peers' buffers over NVLink. The dispatch, the same in vLLM csrc/custom_all_reduce.cuh and
SGLang sgl-kernel/csrc/allreduce/custom_all_reduce.cuh (`REDUCE_CASE`):

    if world_size == 2: cross_device_reduce_1stage
    elif (world_size <= 4 and bytes < 512 KiB) or (world_size <= 8 and bytes < 256 KiB): 1stage
    else: cross_device_reduce_2stage

for world sizes 2, 4, 6, 8 (`_SUPPORTED_WORLD_SIZES`) and, in SGLang, buffers up to 8 MiB
(`_MAX_CAR_SIZE = 8192 * 1024`, SGLang python/sglang/srt/distributed/device_communicators/
custom_all_reduce.py, index file id 69341442); anything else goes to NCCL. This follows SGLang,
the engine of most bench rows. vLLM since PR 20759 caps the custom kernel per GPU and world size
(vllm/distributed/device_communicators/all_reduce_utils.py `CUSTOM_ALL_REDUCE_MAX_SIZES`, index
file id 183845377: SM 9.0 64 / 32 MiB at 2 / 4 ranks, 512 / 256 KiB at 6 / 8) and hands larger
buffers to torch symmetric-memory (multimem / two-shot) kernels, not modelled apart; TensorRT-LLM
picks its own one-shot / two-shot kernels (AllReduceStrategy AUTO), charged by the same rule.
On SM 10.0 (B200) vLLM 0.14.1-0.19.0 cap the custom kernel at 1 MiB at 8 ranks and symmetric
memory at 128 MiB (all_reduce_utils.py `CUSTOM_ALL_REDUCE_MAX_SIZES["10.0"]`,
`SYMM_MEM_ALL_REDUCE_MAX_SIZES["10.0"]`; cuda_communicator.py `all_reduce` tries custom, then
symmetric memory, then NCCL): a prefill step's buffer runs symmetric memory there. Its time is in
the measured tables nvlink5's bandwidth is read from (interconnects.json: the median bus
bandwidth of the engines' and NCCL's 8-rank all-reduces of 16 MiB-1 GiB on B200,
tests.benches.b200vllm63), and the ring rule prices it at that bandwidth.
kvplan charges

- one-shot (1stage): each rank reads the whole buffer from each of the n - 1 peers and reduces
  it, between two barriers: ``t1 + (n - 1) x bytes / bytes_per_s``;
- two-shot (2stage): a reduce-scatter then an all-gather, each an exchange of 1/n of the buffer
  with the n - 1 peers, with a barrier between: ``t2 + 2 (n - 1) / n x bytes / bytes_per_s``,
  t2 measured where a table gives it, else two one-shot rounds, 2 t1;
- NCCL (no custom kernel on the link, other world sizes, larger buffers): ring,
  ``latency_s + 2 (n - 1) / n x bytes / bytes_per_s``.

``t1`` and ``t2`` are measured, not fitted: the median, over the published timings in CUDA
graphs of messages up to 1 MiB (interconnects.json `timings`, `custom_ar_fixed_s`), of the time
left after the bytes term. The rank count enters through the bytes a rank reads: on H100 the
fixed part shows no trend from 2 to 6 ranks (one-shot 5.5-6.4 us, two-shot 12.2-14.8 us), so it
is one number per link (no 8-rank in-graph table was found). The two-shot fixed part is 2.3 x
the one-shot's on H100 and 2.7 x on B300, more than the 2 x of two rounds (a third barrier);
at 2-4 MiB the rule runs 12-29 % faster than the H100 two-shot rows (their slopes give
200-320 GB/s of peer reads, not 360).

The presets live in ``interconnects.json`` beside this module, each number with its source and
each preset with notes; they are read once, on first use (`INTERCONNECTS`, `get_interconnect`,
`default_interconnect`).
"""

from __future__ import annotations

import functools
import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from kvplan._util.errors import InputError
from kvplan._util.lazy import LazyMapping
from kvplan._util.units import GB, KiB, MiB

US = 1e-6  # seconds per microsecond


@dataclass(frozen=True, kw_only=True)
class CustomArTiming:
    """One published custom all-reduce timing (CUDA graph replay, bf16)."""

    ranks: int
    nbytes: int
    seconds: float


def custom_ar_fixed_s(timings: tuple[CustomArTiming, ...], bytes_per_s: float, *,
                      two_shot: bool = False) -> float:
    """The fixed part of a custom all-reduce: the median over `timings` of the measured time
    less the bytes a rank reads from its peers at `bytes_per_s`: (n - 1) x the buffer one-shot,
    2 (n - 1) / n x it two-shot."""
    def peer_bytes(t: CustomArTiming) -> float:
        return (2 * (t.ranks - 1) / t.ranks if two_shot else t.ranks - 1) * t.nbytes
    return statistics.median(t.seconds - peer_bytes(t) / bytes_per_s for t in timings)


# Custom all-reduce dispatch of vLLM / SGLang (module docstring).
CUSTOM_AR_WORLD_SIZES = (2, 4, 6, 8)
CUSTOM_AR_MAX_BYTES = 8 * MiB


@dataclass(frozen=True, kw_only=True)
class Interconnect:
    name: str
    description: str
    bytes_per_s: float
    """Achievable one-direction bandwidth per GPU (B/s, decimal)."""
    latency_s: float
    """Fixed cost of one NCCL-style collective call (launch + first byte), seconds."""
    source: str
    custom_all_reduce_latency_s: float | None = None
    """Fixed time of one one-shot custom all-reduce in a CUDA graph (NVLink); None: the link
    runs every all-reduce through NCCL."""
    two_shot_latency_s: float | None = None
    """Fixed time of one two-shot custom all-reduce; None: two one-shot rounds."""

    def all_reduce_s(self, ranks: int, nbytes: float) -> float:
        """Seconds of one all-reduce of `nbytes` over `ranks` GPUs (module docstring)."""
        if ranks <= 1:
            return 0.0
        ring = 2 * (ranks - 1) / ranks * nbytes / self.bytes_per_s
        t1 = self.custom_all_reduce_latency_s
        if t1 is None or ranks not in CUSTOM_AR_WORLD_SIZES or nbytes > CUSTOM_AR_MAX_BYTES:
            return self.latency_s + ring
        if ranks == 2 or (ranks <= 4 and nbytes < 512 * KiB) or nbytes < 256 * KiB:
            return t1 + (ranks - 1) * nbytes / self.bytes_per_s  # one-shot
        t2 = self.two_shot_latency_s
        return (2 * t1 if t2 is None else t2) + ring  # two-shot


DATA_FILE = Path(__file__).with_name("interconnects.json")
_UNITS = {"GB/s": GB, "us": US, "KiB": KiB, "MiB": MiB}
_FIELDS = {"name", "notes", "description", "source", "bandwidth", "latency", "custom_all_reduce",
           "two_shot"}


def _quantity(text: object, where: str) -> Any:
    """``"360 GB/s"``, ``"512 KiB"`` (ints) or ``"10 us"`` (float seconds): a whole number and a
    unit."""
    number, _, unit = str(text).partition(" ")
    if unit not in _UNITS or not number.isdigit():
        raise ValueError(f"{DATA_FILE.name}: {where}: {text!r}: expected a whole number and one "
                         f"of {', '.join(_UNITS)}")
    return int(number) * _UNITS[unit]


def _sourced(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict) or not item.get("source") or not (
            "value" in item or "median_of" in item):
        raise ValueError(f"{DATA_FILE.name}: {where}: needs a value (or median_of a timing "
                         "table) and its source")
    return item


@dataclass(frozen=True)
class _Table:
    by_name: dict[str, Interconnect]
    timings: dict[str, tuple[CustomArTiming, ...]]
    sources: dict[str, dict[str, str]]


@functools.cache
def _table() -> _Table:
    """interconnects.json, read and checked once."""
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    timings = {
        key: tuple(CustomArTiming(ranks=row["ranks"],
                                  nbytes=_quantity(row["bytes"], f"timings.{key}"),
                                  seconds=_quantity(row["time"], f"timings.{key}"))
                   for row in table["rows"])
        for key, table in data["timings"].items()}
    presets, sources = [], {}
    for entry in data["interconnects"]:
        where = f"interconnects: {entry.get('name')}"
        if set(entry) - _FIELDS:
            raise ValueError(f"{DATA_FILE.name}: {where}: unknown fields "
                             f"{sorted(set(entry) - _FIELDS)}")
        bandwidth = _sourced(entry.get("bandwidth"), f"{where}.bandwidth")
        latency = _sourced(entry.get("latency"), f"{where}.latency")
        bytes_per_s = _quantity(bandwidth["value"], f"{where}.bandwidth")
        fixed: dict[str, float | None] = {}
        numbers = {"bytes_per_s": bandwidth["source"], "latency_s": latency["source"]}
        for key, field_name in (("custom_all_reduce", "custom_all_reduce_latency_s"),
                                ("two_shot", "two_shot_latency_s")):
            item = entry.get(key)
            if item is None:
                fixed[field_name] = None
                continue
            item = _sourced(item, f"{where}.{key}")
            numbers[field_name] = item["source"]
            if "median_of" in item:  # measured: the table's timings less their bytes terms
                fixed[field_name] = custom_ar_fixed_s(timings[item["median_of"]], bytes_per_s,
                                                      two_shot=key == "two_shot")
            else:
                fixed[field_name] = _quantity(item["value"], f"{where}.{key}")
        presets.append(Interconnect(
            name=entry["name"], description=entry["description"], source=entry["source"],
            bytes_per_s=bytes_per_s, latency_s=_quantity(latency["value"], f"{where}.latency"),
            **fixed))
        sources[entry["name"]] = numbers
    return _Table(by_name={i.name: i for i in presets}, timings=timings, sources=sources)


INTERCONNECTS: Mapping[str, Interconnect] = LazyMapping(lambda: _table().by_name, "INTERCONNECTS")
"""The presets, keyed by name (read on first use)."""


def custom_ar_timings(name: str) -> tuple[CustomArTiming, ...]:
    """A published custom all-reduce timing table of interconnects.json (``"h100_one_shot"``,
    ``"h100_two_shot"``, ``"b300_one_shot"``, ``"b300_two_shot"``)."""
    return _table().timings[name]


def number_sources(name: str) -> dict[str, str]:
    """Where each number of preset `name` comes from, by Interconnect field."""
    return dict(_table().sources[name])


# GPUs in one NVLink domain of an HGX/DGX node: collectives over more ranks cross the network.
GPUS_PER_NODE = 8
# A GB200 / GB300 NVL72 rack joins 72 GPUs in one NVLink domain (18 compute trays of 4 GPUs on
# NVLink switch trays, https://www.nvidia.com/en-us/data-center/gb200-nvl72/); SGLang's GB200
# decode runs EP 48 over it (MNNVL, NCCL_MNNVL_ENABLE=1: https://github.com/sgl-project/sglang/
# issues/10903).
NVL72_GPUS = 72


def scale_up_gpus(gpu_name: str) -> int:
    """GPUs that one NVLink (or xGMI) domain holds for this preset: beyond it, collectives use the
    scale-out network. Grace-Blackwell superchip presets (GB200, GB300) ship in NVL72 racks."""
    return NVL72_GPUS if gpu_name.upper().startswith(("GB200", "GB300")) else GPUS_PER_NODE


def get_interconnect(name: str) -> Interconnect:
    try:
        return INTERCONNECTS[name.lower()]
    except KeyError:
        raise InputError(f"unknown interconnect {name!r}; choose from "
                         + ", ".join(INTERCONNECTS)) from None


def default_interconnect(gpu_name: str) -> Interconnect:
    """The scale-up link a GPU preset ships with in its usual 8-GPU server."""
    key = gpu_name.upper()
    if key.startswith(("B2", "B3", "GB2", "GB3")):
        return INTERCONNECTS["nvlink5"]
    if key.startswith("A100"):
        return INTERCONNECTS["nvlink3"]
    if key.startswith(("H100-80", "H200", "H800", "H20")) and "PCIE" not in key:
        return INTERCONNECTS["nvlink4"]
    if key.startswith("MI355"):
        return INTERCONNECTS["xgmi4"]
    if key.startswith(("MI300", "MI325")):
        return INTERCONNECTS["xgmi3"]
    if key.startswith(("RTX-3", "A10")):
        return INTERCONNECTS["pcie4"]
    return INTERCONNECTS["pcie5"]


class InterconnectName(str, Enum):
    """The preset names, as a choice for the CLI."""

    nvlink4 = "nvlink4"
    nvlink3 = "nvlink3"
    nvlink5 = "nvlink5"
    xgmi3 = "xgmi3"
    xgmi4 = "xgmi4"
    pcie4 = "pcie4"
    pcie5 = "pcie5"
    ib_ndr = "ib-ndr"
    roce_400g = "roce-400g"
