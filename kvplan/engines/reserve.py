"""What every engine's budget shares: the reserve by part, each with the rule that set it, and
the estimates of the profile forward pass that more than one engine runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class ReservePart:
    name: str  # activation, sampler, mm_encoder, non_torch, cuda_graphs, preloaded
    bytes: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class Reserve:
    parts: tuple[ReservePart, ...] = field(default_factory=tuple)

    @property
    def total(self) -> int:
        return sum(p.bytes for p in self.parts)

    def to_dict(self) -> dict[str, dict[str, object]]:
        return {p.name: {"bytes": p.bytes, "rule": p.rule} for p in self.parts}


def interpolate(points: tuple[tuple[int, float], ...], x: int) -> float:
    """Piecewise-linear through the (tp, GiB) points, extended with the last slope."""
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    (x0, y0), (x1, y1) = points[-2], points[-1]
    return y1 + (y1 - y0) * (x - x1) / (x1 - x0)



# Activation peak of the profile forward pass, in 16-bit: per token, the residual stream, its
# normed copy and the layer output (3 x hidden), and the dense MLP's gate/up output, activation
# and down input (3 x intermediate / TP). llm-d-planner PR #205's PP runs (no sampler on the first
# stage) log 1.05-1.10 GiB for Llama-3.1-8B at 8,192 tokens: this rule gives 0.86 GiB.
ACTIVATION_BYTES = 2


def compute_element_bytes(dtype: str | None) -> int:
    """Bytes per activation and logit element: 4 under ``--dtype float32``, else 2 (the engines
    serve float32 checkpoints in bfloat16 under auto)."""
    return 4 if dtype in ("fp32", "float32") else ACTIVATION_BYTES


def activation_bytes(spec: ModelSpec, *, max_num_batched_tokens: int, tp: int,
                     element_bytes: int = ACTIVATION_BYTES) -> int:
    """The profile forward pass's peak over `max_num_batched_tokens` tokens (an estimate: the
    widest dense layer; MoE layers' buffers are `moe_workspace_bytes`)."""
    dense = spec.mlp.intermediate_size if spec.moe is None or spec.moe.first_k_dense_replace \
        else 0
    per_token = 3 * spec.hidden_size + 3 * dense // tp
    return max_num_batched_tokens * per_token * element_bytes


def moe_workspace_bytes(spec: ModelSpec, *, max_num_batched_tokens: int, tp: int,
                        element_bytes: int = ACTIVATION_BYTES) -> int:
    """vLLM's fused-MoE intermediate buffers (``fused_moe.py``: intermediate_cache1 of
    tokens x top-k x 2 x moe_intermediate / TP, cache2 of half that, cache3 of tokens x top-k x
    hidden, in 16-bit). They stay allocated through the sampler warm-up, so they add to its peak:
    Qwen3-30B-A3B logs 2.68 GiB where the sampler alone is 2.21 GiB and these buffers 0.53 GiB
    (llm-d-planner PR #205, H100, 0.19.0); Qwen1.5-MoE-A2.7B 2.47 vs 2.21 + 0.38."""
    if spec.moe is None:
        return 0
    moe = spec.moe
    per_token = moe.num_experts_per_tok * (3 * moe.moe_intermediate_size // tp + spec.hidden_size)
    return max_num_batched_tokens * per_token * element_bytes


def trunc(x: Any) -> Any:
    """int() for a float, astype(int64) (also toward zero) for a numpy array."""
    if isinstance(x, (int, float)):
        return int(x)
    import numpy as np

    return np.asarray(x, dtype=np.float64).astype(np.int64)
