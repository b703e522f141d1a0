"""Host-side presets for the KV offload tiers: the link a GPU reloads offloaded KV over
(`HostLink`: PCIe Gen4 / Gen5 x16, NVLink-C2C) and the reference node a GPU preset usually sits
in, with its DRAM (`HostNode`: DGX H100 2 TiB, a GB200 NVL72 compute tray 960 GiB, ...).

The figures live in ``hosts.json`` beside this module, each number with its source, read once on
first use. Link rates are per direction and per GPU (decimal GB/s); DRAM is binary. A GPU preset
without a node (PCIe cards go into many servers) has a link and no DRAM: the caller asks for
``--host-mem-gib``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvplan._util.errors import InputError
from kvplan._util.units import GB, GiB, TiB

DATA_FILE = Path(__file__).with_name("hosts.json")


@dataclass(frozen=True, kw_only=True)
class HostLink:
    """The GPU's link to host memory, one direction, one GPU's share."""

    name: str
    bytes_per_s: int
    source: str


@dataclass(frozen=True, kw_only=True)
class HostNode:
    """The reference node of a GPU preset: its GPUs and its DRAM."""

    name: str
    gpus_per_node: int
    host_mem_bytes: int
    source: str


@dataclass(frozen=True, kw_only=True)
class GpuHost:
    """What hosts.json says of one GPU preset."""

    link: HostLink
    link_source: str
    node: HostNode | None


def _quantity(text: object, where: str) -> int:
    number, _, unit = str(text).partition(" ")
    scale = {"GB/s": GB, "GiB": GiB, "TiB": TiB}.get(unit)
    if scale is None:
        raise ValueError(f"{DATA_FILE.name}: {where}: {text!r}: expected GB/s, GiB or TiB")
    return round(float(number) * scale)


def _sourced(item: Any, where: str) -> tuple[int, str]:
    if not isinstance(item, dict) or not item.get("source") or not item.get("value"):
        raise ValueError(f"{DATA_FILE.name}: {where}: needs a value and its source")
    return _quantity(item["value"], where), item["source"]


@functools.cache
def _table() -> tuple[dict[str, HostLink], dict[str, GpuHost]]:
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    links = {}
    for name, entry in data["links"].items():
        rate, source = _sourced(entry.get("bandwidth"), f"links.{name}.bandwidth")
        links[name] = HostLink(name=name, bytes_per_s=rate, source=source)
    gpus = {}
    for name, entry in data["gpus"].items():
        if entry["link"] not in links:
            raise ValueError(f"{DATA_FILE.name}: gpus.{name}.link: unknown {entry['link']!r}")
        node = None
        if "node" in entry:
            mem, source = _sourced(entry.get("host_mem"), f"gpus.{name}.host_mem")
            node = HostNode(name=entry["node"], gpus_per_node=int(entry["gpus_per_node"]),
                            host_mem_bytes=mem, source=source)
        gpus[name] = GpuHost(link=links[entry["link"]], link_source=entry["link_source"],
                             node=node)
    return links, gpus


def link_names() -> tuple[str, ...]:
    return tuple(_table()[0])


def get_link(name: str) -> HostLink:
    """A link preset by name (``--host-link``)."""
    links = _table()[0]
    if name not in links:
        raise InputError(f"--host-link: unknown link {name!r} (known: {', '.join(links)})")
    return links[name]


def gpu_host(gpu_name: str) -> GpuHost | None:
    """The host link and reference node of GPU preset `gpu_name` (None: not in hosts.json)."""
    return _table()[1].get(gpu_name)
