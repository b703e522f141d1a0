"""A constant fitted to measurements, with the rows it was fitted on.

kvplan reads most of its rules from engine source; a few numbers are fitted to public logs or
benchmarks (a median, a least-squares slope). Such a constant is declared as a `Fitted`, so that
its value, where it comes from and the bench rows that set it stay together: the benches
(tests/benches/) then count as held out only the rows in no constant's `fitted_on` that share no
fitted row's (model, GPU, TP, EP) configuration.

    TRTLLM_NCCL = Fitted(value=1.05, source="aiconfigurator H100 TP 2 / 4 points",
                         fitted_on=("aiconfigurator-h100_sxm-llama-3.1-8b-tp2-...", ...))

Row ids are the bench rows' `id` fields (tests/data/engine_logs/*.json) or labels (the cost
bench's cases). An empty `fitted_on` says the constant was fitted on data that is no bench row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Fitted(Generic[T]):
    """A fitted value, its source (how it was fitted, on what) and the bench rows it was fitted
    on (their ids)."""

    value: T
    source: str
    fitted_on: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(set(self.fitted_on)) != len(self.fitted_on):
            raise ValueError(f"{self.source}: a row is named twice in fitted_on")
