"""How a step is spread over GPUs (`Layout`: tensor, data-attention and expert parallelism) and
which link its collectives take.

`tp` splits attention, dense MLP and (without `ep`) experts over ranks, with two all-reduces per
layer; `dp_attention` gives each rank its own requests and whole attention, or attention split
over `attn_tp` GPUs a rank (SGLang --dp-size below --tp; the dense MLPs and lm_head whole or
split over the TP group as the engine keeps them: kvplan.perf.roofline); `ep`
spreads whole experts over ranks, with an all-to-all dispatch and combine per MoE layer; an `ep`
below the ranks sharing the experts (MoE TP x EP: `moe_tp`, kvplan.weights.expert_layout) also
splits each expert's GEMMs over `moe_tp` ranks inside its group, with no all-to-all.
Collectives inside one NVLink domain use the scale-up interconnect, beyond it the scale-out one
(`link`; the domain: kvplan.hardware.interconnect.scale_up_gpus, or the node where the deployment
says its nodes are smaller: `Layout.node_gpus`, `domain_gpus`).

An all-reduce over several domains (`SpanningLink.all_reduce_s`). The engines' custom all-reduce
refuses a group that spans nodes: vLLM CustomAllreduce.__init__ returns disabled where
`not all(in_the_same_node_as(group, source_rank=0))` (vllm/distributed/device_communicators/
custom_all_reduce.py:90, commit 00d618aa; SGLang's copy logs the same "Custom allreduce is
disabled because this process group spans across nodes"), so the all-reduce is NCCL's. NCCL runs
it hierarchically over nodes: its tree is a chain inside each node and a tree between nodes,
priced in NCCL's own tuning model as `2 * ((nRanks/nNodes - 1) * intraLat + log2i(nNodes) *
interLat)` (NVIDIA/nccl src/graph/tuning.cc `ncclTopoTuneModel`, commit 01afd20a). kvplan prices
that hierarchy with its own presets, in the bandwidth-optimal two-level form, over N domains of
g GPUs (N = ceil(ranks / g)) and a buffer of S bytes:

    t = inner.latency_s + 2 (g - 1) / g x S / inner.bytes_per_s   (reduce-scatter and
                                                                    all-gather in the domain)
      + outer.latency_s + 2 (N - 1) / N x (S / g) / outer.bytes_per_s  (each GPU's 1/g share
                                                                    all-reduced over its own NIC)

one NCCL call's fixed time per level (the presets' latency_s: the scale-up one's, then the
scale-out one's), each GPU driving its own NIC (the fabric `plan --rate --link` names,
kvplan.hardware.kv_links.scale_out_link; default ib-ndr: one 400 Gb/s NIC per GPU).
Other collectives over several domains (the EP all-to-all, the DP gathers' ring halves) take the
scale-out preset whole, as before. Inside an NVL72 rack a group that spans compute trays is one
NVLink domain, but its ranks are on different hosts: no custom kernel, NCCL on NVLink (`link`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

from kvplan._util.errors import InputError
from kvplan.hardware.gpus import GPU
from kvplan.hardware.interconnect import (
    GPUS_PER_NODE,
    Interconnect,
    default_interconnect,
    scale_up_gpus,
)
from kvplan.hardware.kv_links import scale_out_link
from kvplan.model.spec import ModelSpec
from kvplan.weights.expert_layout import moe_tp_size


@dataclass(frozen=True, kw_only=True)
class Layout:
    tp: int = 1
    dp_attention: bool = False
    ep: int = 1
    # With dp_attention: the GPUs of each attention-DP rank (SGLang --tp T --dp-size D: T / D,
    # layers/dp_attention.py compute_dp_attention_world_info); 1: a rank a GPU.
    attn_tp: int = 1
    interconnect: Interconnect | None = None  # None: the GPU's usual scale-up link
    # The fabric between domains (plan --rate --link; kvplan.hardware.kv_links.scale_out_link:
    # ib-ndr, 45 GB/s a GPU and 25 us a call, unless named).
    scale_out: Interconnect = field(default_factory=scale_out_link)
    # GPUs of one host as the deployment says (plan --rate --gpus-per-node); None: the GPU
    # preset's NVLink domain is one host's (scale_up_gpus).
    node_gpus: int | None = None

    @property
    def world(self) -> int:
        return max(self.tp, self.ep)

    @property
    def moe_tp(self) -> int:
        """The ranks each routed expert's GEMMs are split over (kvplan.weights.expert_layout):
        the world without EP, 1 with EP over every rank, world // ep in between."""
        return moe_tp_size(self.world, self.ep)

    @property
    def expert_shards(self) -> int:
        """The ranks the routed experts' weights and FLOPs are spread over: ep x moe_tp."""
        return self.ep * self.moe_tp

    @property
    def attention_tp(self) -> int:
        return self.attn_tp if self.dp_attention else self.tp

    @property
    def dp_ranks(self) -> int:
        """Ranks that each hold their own requests."""
        return (self.world // self.attn_tp if self.dp_attention
                else max(1, self.world // self.tp))


ONE_GPU = Layout()  # the default layout: one GPU, no parallelism



@dataclass(frozen=True, kw_only=True)
class SpanningLink(Interconnect):
    """The link of a collective over several NVLink domains of `domain` GPUs: the scale-out
    preset's numbers (its bandwidth and latency for every collective but the all-reduce), and
    `inner`, the scale-up link inside each domain, for the hierarchical all-reduce."""

    inner: Interconnect
    domain: int

    def all_reduce_s(self, ranks: int, nbytes: float) -> float:
        """NCCL's hierarchical all-reduce over the domains (module docstring)."""
        if ranks <= 1:
            return 0.0
        g = min(self.domain, ranks)
        n = math.ceil(ranks / g)
        inside = 0.0 if g == 1 else (self.inner.latency_s
                                     + 2 * (g - 1) / g * nbytes / self.inner.bytes_per_s)
        across = 0.0 if n == 1 else (self.latency_s
                                     + 2 * (n - 1) / n * nbytes / g / self.bytes_per_s)
        return inside + across


def domain_gpus(layout: Layout, gpu: GPU) -> int:
    """The GPUs of one NVLink domain: the preset's (scale_up_gpus), no more than a host's where
    the layout says hosts are smaller than an HGX node; an NVL72 rack joins its compute trays
    over NVLink switch trays whatever GPUs a tray holds (kvplan.hardware.interconnect)."""
    preset = scale_up_gpus(gpu.name)
    if layout.node_gpus is None or preset > GPUS_PER_NODE:
        return preset
    return min(preset, layout.node_gpus)


def link(layout: Layout, gpu: GPU, ranks: int) -> Interconnect:
    """The interconnect a collective over `ranks` GPUs of `layout` takes on `gpu`: the scale-up
    link inside one NVLink domain (no custom all-reduce where the ranks span hosts of an NVL72
    rack), over several the scale-out one with the hierarchical all-reduce (module docstring)."""
    inner = layout.interconnect or default_interconnect(gpu.name)
    domain = domain_gpus(layout, gpu)
    if ranks > domain:
        out = layout.scale_out
        return SpanningLink(**{f.name: getattr(out, f.name) for f in fields(out)},
                            inner=inner, domain=domain)
    if layout.node_gpus is not None and ranks > layout.node_gpus:
        # custom_all_reduce.py:90 (module docstring): a group over hosts runs NCCL.
        return replace(inner, custom_all_reduce_latency_s=None, two_shot_latency_s=None)
    return inner


def check_layout(spec: ModelSpec, layout: Layout) -> None:
    """Refuse an expert-parallel layout the model cannot take."""
    if layout.ep > 1:
        if spec.moe is None:
            raise InputError("--ep: the model has no routed experts")
        if spec.moe.n_routed_experts < layout.ep:
            raise InputError(f"--ep: {layout.ep} ranks for {spec.moe.n_routed_experts} experts")
        if layout.tp > 1 and layout.ep % layout.tp and layout.tp % layout.ep:
            raise InputError(f"--ep {layout.ep} and --tp {layout.tp}: one must divide the other")
    if layout.dp_attention and layout.attn_tp > 1 and layout.tp % layout.attn_tp:
        raise InputError(f"attention TP {layout.attn_tp}: must divide --tp {layout.tp}")
