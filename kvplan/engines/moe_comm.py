"""The MoE all-to-all an engine's launch selects, as the time model asks it
(kvplan.perf.roofline): the bytes one rank sends to the other EP ranks per token of a MoE layer,
dispatch and combine together, in a prefill (extend) or a decode step, and the seconds they take.

An engine declares the rule that picks it from a launch's options in its CostTraits
(`CostTraits.moe_all_to_all`, a `MoeAllToAllRule`); kvplan.perf.engine_traits.engine_efficiency
asks it once per launch and hands the answer to the cost model (`Efficiency.moe_a2a`). None: the
engine's default MoE communication (its gather rules or the generic all-to-all,
kvplan.perf.roofline). SGLang's DeepEP: kvplan.engines.sglang.deepep."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from kvplan.model.spec import ModelSpec, MoESpec

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.hardware.interconnect import Interconnect


class MoeAllToAll(Protocol):
    """A MoE layer's token dispatch and combine across the EP ranks."""

    name: str

    def bytes_per_token(self, moe: MoESpec, hidden: int, ep: int, phase: str) -> float:
        """Bytes one rank sends to the other `ep` - 1 ranks per token it holds, dispatch plus
        combine, in a `phase` ("prefill" or "decode") step; its expectation over routing."""
        ...

    def seconds(self, tokens: float, moe: MoESpec, hidden: int, ep: int, phase: str,
                gpu_name: str, link: Interconnect) -> float:
        """Seconds of one MoE layer's dispatch and combine for `tokens` tokens a rank on
        `gpu_name`, whose EP collectives take `link`."""
        ...

    def notes(self, gpu_name: str, ep: int, phase: str) -> tuple[str, ...]:
        """What the plan should say about how a `phase` step's all-to-all at `ep` ranks on
        `gpu_name` is priced where it is not measured as launched (a stand-in); () else."""
        ...


# A launch's options (kvplan.engines.base.EngineOptions, or None) and the model -> the
# all-to-all it runs (None: none selected).
MoeAllToAllRule = Callable[[Any, ModelSpec], "MoeAllToAll | None"]
