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
(`link`; the domain: kvplan.hardware.interconnect.scale_up_gpus).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvplan._util.errors import InputError
from kvplan.hardware.gpus import GPU
from kvplan.hardware.interconnect import (
    INTERCONNECTS,
    Interconnect,
    default_interconnect,
    scale_up_gpus,
)
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
    scale_out: Interconnect = field(default_factory=lambda: INTERCONNECTS["ib-ndr"])

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



def link(layout: Layout, gpu: GPU, ranks: int) -> Interconnect:
    """The interconnect a collective over `ranks` GPUs of `layout` takes on `gpu`."""
    if ranks > scale_up_gpus(gpu.name):
        return layout.scale_out
    return layout.interconnect or default_interconnect(gpu.name)


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
