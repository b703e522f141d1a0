"""Links a disaggregated deployment hands KV over, prefill worker to decode worker (`kvplan plan
--disagg --link NAME`): InfiniBand, RoCE, EFA between nodes, NVLink or PCIe inside one.

A GPU's KV bandwidth is its NIC's line rate x the NICs it drives (rails) x the share of line
rate an RDMA read reaches; each number has its source in ``kv_links.json`` beside this module
(read once, on first use). Bandwidths are decimal: GB/s = 10**9 B/s, Gb/s = 10**9 bit/s.

The same names serve `plan --rate --link NAME`: the fabric between nodes that a collective over
several NVLink domains crosses (kvplan.perf.layout.SpanningLink). One catalogue, one mapping
(`KvLink.scale_out`): a fabric's per-GPU bandwidth is this module's (line rate x rails x
achieved share), its fixed time per NCCL call the latency of the interconnects.json preset its
`collective` field names (one NCCL call is not one RDMA read: ib-ndr's 25 us there against
10 us here). The default, ib-ndr, gives interconnects.json's ib-ndr preset's numbers exactly
(45 GB/s, 25 us): what `plan --rate` priced before the option existed.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kvplan._util.errors import InputError
from kvplan.hardware.interconnect import INTERCONNECTS, Interconnect

DATA_FILE = Path(__file__).with_name("kv_links.json")
_RATE_UNITS = {"Gb/s": 10**9 // 8, "GB/s": 10**9}
_FIELDS = {"name", "description", "line_rate", "rails_per_gpu", "achieved", "latency"}
_OPTIONAL = {"collective"}  # a fabric between nodes: its NCCL collective preset
DEFAULT_FABRIC = "ib-ndr"  # plan --rate's inter-node fabric when --link is not given


@dataclass(frozen=True, kw_only=True)
class KvLink:
    name: str
    description: str
    line_bytes_per_s: int  # one NIC (or NVLink / PCIe port), one direction
    rails_per_gpu: int
    achieved: float  # share of the line rate a GPU-to-GPU RDMA read reaches
    latency_s: float  # one transfer's fixed time
    sources: tuple[tuple[str, str], ...] = ()  # (field, source)
    # The interconnects.json preset of NCCL's collectives over this fabric (None: not a fabric
    # between nodes with one: EFA, NVLink, PCIe).
    collective: str | None = None

    @property
    def bytes_per_s(self) -> float:
        """One GPU's achievable KV bandwidth, one direction."""
        return self.line_bytes_per_s * self.rails_per_gpu * self.achieved

    def transfer_s(self, nbytes: int) -> float:
        """The time one GPU takes to send (or receive) `nbytes` over its rails."""
        return self.latency_s + nbytes / self.bytes_per_s

    def with_rails(self, rails: int | None) -> KvLink:
        if rails is None:
            return self
        if rails < 1:
            raise InputError(f"--rails: must be >= 1, got {rails}")
        return replace(self, rails_per_gpu=rails, sources=self.sources + (
            ("rails_per_gpu", "given (--rails)"),))

    def scale_out(self) -> Interconnect:
        """This fabric as the link of a collective over several NVLink domains: the per-GPU
        bandwidth of this link (`bytes_per_s`, rails counted), the fixed time of one NCCL call
        of its `collective` preset (module docstring); refused for a link without one."""
        if self.collective is None:
            fabrics = ", ".join(n for n, link in _links().items() if link.collective)
            raise InputError(f"--link {self.name}: not a fabric between nodes with a "
                             f"collective preset (kv_links.json `collective`); the fabric is "
                             f"one of {fabrics}")
        base = INTERCONNECTS[self.collective]
        return Interconnect(name=self.name, description=self.description,
                            bytes_per_s=self.bytes_per_s, latency_s=base.latency_s,
                            source=f"kv_links.json {self.name} (bandwidth); interconnects.json "
                                   f"{base.name} (latency)")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "line_bytes_per_s": self.line_bytes_per_s, "rails_per_gpu": self.rails_per_gpu,
                "achieved": self.achieved, "bytes_per_s": self.bytes_per_s,
                "latency_s": self.latency_s, "sources": dict(self.sources)}


def _sourced(entry: dict[str, Any], key: str, where: str) -> Any:
    item = entry.get(key)
    if not isinstance(item, dict) or "value" not in item or not item.get("source"):
        raise ValueError(f"{DATA_FILE.name}: {where}.{key}: needs a value and its source")
    return item


def _rate(text: str, where: str) -> int:
    number, _, unit = str(text).partition(" ")
    if unit not in _RATE_UNITS or not number.isdigit():
        raise ValueError(f"{DATA_FILE.name}: {where}: {text!r}: expected N Gb/s or N GB/s")
    return int(number) * _RATE_UNITS[unit]


def _latency(text: str, where: str) -> float:
    number, _, unit = str(text).partition(" ")
    if unit != "us" or not number.isdigit():
        raise ValueError(f"{DATA_FILE.name}: {where}: {text!r}: expected N us")
    return int(number) * 1e-6


@functools.cache
def _links() -> dict[str, KvLink]:
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    out = {}
    for entry in data["links"]:
        where = f"links: {entry.get('name')}"
        if set(entry) - _FIELDS - _OPTIONAL:
            raise ValueError(f"{DATA_FILE.name}: {where}: unknown fields "
                             f"{sorted(set(entry) - _FIELDS - _OPTIONAL)}")
        collective = None
        if "collective" in entry:
            collective = _sourced(entry, "collective", where)["value"]
            if collective not in INTERCONNECTS:
                raise ValueError(f"{DATA_FILE.name}: {where}.collective: {collective!r} is no "
                                 "interconnects.json preset")
        items = {k: _sourced(entry, k, where) for k in _FIELDS - {"name", "description"}}
        achieved = float(items["achieved"]["value"])
        rails = items["rails_per_gpu"]["value"]
        if not 0 < achieved <= 1 or not isinstance(rails, int) or rails < 1:
            raise ValueError(f"{DATA_FILE.name}: {where}: achieved in (0, 1], rails >= 1")
        out[entry["name"]] = KvLink(
            name=entry["name"], description=entry["description"],
            line_bytes_per_s=_rate(items["line_rate"]["value"], f"{where}.line_rate"),
            rails_per_gpu=rails, achieved=achieved,
            latency_s=_latency(items["latency"]["value"], f"{where}.latency"),
            sources=tuple((k, items[k]["source"]) for k in sorted(items)),
            collective=collective)
    return out


def kv_link_names() -> tuple[str, ...]:
    return tuple(_links())


def scale_out_link(name: str = DEFAULT_FABRIC, rails: int | None = None) -> Interconnect:
    """The inter-node fabric `name` (a kv_links.json name, --link) as a collective link."""
    return get_kv_link(name).with_rails(rails).scale_out()


def get_kv_link(name: str) -> KvLink:
    """The preset `name` (case-insensitive), or an InputError naming the presets."""
    links = _links()
    key = name.strip().lower()
    if key not in links:
        raise InputError(f"--link: unknown link {name!r} (expected one of "
                         f"{', '.join(links)})")
    return links[key]
