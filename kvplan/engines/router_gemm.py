"""Which MoE routers an engine runs as a float32 GEMM, by architecture and release (issue
fp32router61): plain data each engine declares (CostTraits.router_gemm); the time model prices
such a router's FLOPs at the card's FP32 peak (kvplan.perf.router_cost).

A float32 router GEMM (weight and input float32, `F.linear` / a ReplicatedLinear with
params_dtype float32 on an input cast to float32) runs on the CUDA cores, not the tensor cores:
TF32 would need `torch.backends.cuda.matmul.allow_tf32` or a float32 matmul precision below
"highest", and neither engine lowers it (vLLM sets torch.set_float32_matmul_precision from
VLLM_FLOAT32_MATMUL_PRECISION, default "highest": 0.20.0 envs.py:83, v1/worker/gpu_worker.py:
122-124, 0.32.0 envs.py:93, gpu_worker.py:210-211; 0.11.0 sets nothing, PyTorch's default being
"highest"; SGLang 0.5.7 / 0.5.10 set neither anywhere in sglang/srt). Each engine's table names
its lines (kvplan.engines.vllm.router_gemm, kvplan.engines.sglang.router_gemm). TensorRT-LLM
declares none: its GLM-4-MoE (tensorrt_llm/_torch/models/modeling_glm.py) reuses
modeling_deepseekv3.py's DeepseekV3Gate, whose weight is built in the model's dtype in the code
index's copies (one older copy builds it in float32); no release tag was read, so TensorRT-LLM's
routers keep their bytes only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from kvplan._util.versions import version_key


@dataclass(frozen=True, kw_only=True)
class Fp32Gate:
    """One architecture's float32 router GEMM on one engine: from release `since` (None: every
    release that serves the architecture), read at `source`."""

    since: str | None = None
    source: str


@dataclass(frozen=True, kw_only=True, eq=False)
class RouterGemmRule:
    """An engine's float32 routers (`gates`, by config.json architecture) and the GPUs where a
    release runs them on tensor cores instead (`tensor_core_capabilities`: a compute
    capability's major -> the first release read to do so; vLLM's bf16x3 router GEMM on
    Blackwell)."""

    gates: Mapping[str, Fp32Gate]
    tensor_core_capabilities: Mapping[int, str] = field(default_factory=dict)

    def fp32(self, architectures: tuple[str, ...], version: str | None,
             capability: tuple[int, int] | None) -> bool:
        """Whether a model of `architectures` runs its router as a float32 GEMM on this release
        (None: the newest) and a GPU of `capability`."""
        return _fp32(self, architectures, version, capability)


@cache
def _fp32(rule: RouterGemmRule, architectures: tuple[str, ...], version: str | None,
          capability: tuple[int, int] | None) -> bool:
    gate = next((rule.gates[a] for a in architectures if a in rule.gates), None)
    if gate is None:
        return False
    if version is not None and gate.since is not None and (
            version_key(version) < version_key(gate.since)):
        return False
    since = rule.tensor_core_capabilities.get(capability[0]) if capability else None
    return since is None or (version is not None and version_key(version) < version_key(since))
