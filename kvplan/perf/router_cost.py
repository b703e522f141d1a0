"""The float32 MoE router GEMM's time (issue fp32router61; first priced as a counterfactual by
tests/benches/lone_prefill.py, lonepf60).

Where the engine runs a model's router as a float32 GEMM on this release and GPU
(kvplan.engines.router_gemm: each engine's table, read from its model files), the router's
2 x tokens x hidden x router columns FLOPs a MoE layer run on the CUDA cores: they cost

    FLOPs / (the card's dense FP32 peak x the dense GEMM fraction, Efficiency.gemm)

on top of the step's other operations. The router's weight bytes stay where the roofline
already reads them (with the routed experts, kvplan.perf.roofline). The router is replicated,
so every rank computes it over all the tokens entering its MoE layers.

Not priced (the bytes only, as before): an engine or release that runs the router in the
compute dtype, and a GPU whose FP32 peak gpus.json does not hold (`GPU.peak_fp32_flops_per_s`
None: GB200, GB300, H800, H20, MI355X and the GeForce cards, whose FP32 figure was not read
from a datasheet; B200 and B300 hold HGX's 75 TFLOPS a GPU since fp32bw63).
"""

from __future__ import annotations

from typing import Protocol

from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import Efficiency
from kvplan.weights.routers import router_architectures


class _Step(Protocol):
    def fixed(self, name: str, seconds: float) -> None: ...


def fp32_router_runs(spec: ModelSpec, gpu: GPU, eff: Efficiency) -> bool:
    """Whether `eff`'s engine runs `spec`'s router as a float32 GEMM on `gpu` at its release,
    and `gpu` has an FP32 peak to price it at."""
    rule = eff.router_gemm
    return (rule is not None and gpu.peak_fp32_flops_per_s is not None and spec.moe is not None
            and rule.fp32(router_architectures(spec), eff.engine_version, gpu.compute_capability))


def fp32_router_s(spec: ModelSpec, gpu: GPU, eff: Efficiency, *, router_params: int,
                  tokens: int) -> float:
    """Seconds of one MoE layer's float32 router GEMM over `tokens` tokens, its gate holding
    `router_params` weights (hidden x columns); 0.0 where it does not run in float32 or is not
    priced (`fp32_router_runs`)."""
    if not router_params or not tokens or not fp32_router_runs(spec, gpu, eff):
        return 0.0
    assert gpu.peak_fp32_flops_per_s is not None
    return 2 * tokens * router_params / (gpu.peak_fp32_flops_per_s * eff.gemm)


def fp32_router(s: _Step, spec: ModelSpec, gpu: GPU, eff: Efficiency, *, router_params: int,
                tokens: int) -> None:
    """Adds one MoE layer's float32 router GEMM to the step `s` (kvplan.perf.roofline), as the
    operation "router_fp32", where it runs (`fp32_router_s` > 0)."""
    seconds = fp32_router_s(spec, gpu, eff, router_params=router_params, tokens=tokens)
    if seconds:
        s.fixed("router_fp32", seconds)
