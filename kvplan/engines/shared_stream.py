"""An engine's shared experts run on a second CUDA stream beside the routed experts in a
graph-captured decode step, as plain data (`SharedExpertStream`). kvplan.perf.engine_traits
decides whether a step takes it; kvplan.perf.roofline.step_time prices the overlap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class SharedExpertStream:
    """The model types (config.json `model_type`) whose MoE layer, in a decode step
    replayed from a CUDA graph, runs its shared experts on the current stream while the router,
    the top-k and the routed experts run on a second one, where `unfused` says the shared
    experts are not folded into the routed experts' fused MoE (the engine's own rule for the
    model, GPU and expert-parallel size); CUDA only, without DP attention or an all-to-all."""

    model_types: frozenset[str]
    since: str  # the first release read to have it
    unfused: Callable[[ModelSpec, GPU, int], bool]  # (model, GPU, EP size)
    source: str
