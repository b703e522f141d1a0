"""A constant fitted to measurements, with the rows it was fitted on.

kvplan reads most of its rules from engine source; a few numbers are fitted to public logs or
benchmarks (a median, a least-squares slope). Each such constant has a `Fitted` record at module
level beside it (`<CONSTANT>_FIT`, its value the constant's, or the constant built from the
record's value), so that its value, where it comes from and the bench rows that set it stay
together:

    TRTLLM_NCCL_GIB = 1.05
    TRTLLM_NCCL_GIB_FIT = Fitted(value=TRTLLM_NCCL_GIB, source="aiconfigurator H100 TP 2 / 4",
                                 fitted_on=("aiconfigurator-h100_sxm-llama-3.1-8b-tp2-...", ...))

The benches (tests/benches/fitted_rows.py) collect the records of the modules that declare them
and count as held out only the rows in no record's `fitted_on` that share no fitted row's
(model, GPU, TP, EP) configuration. Nothing here registers a record: declaring one costs an
instance, not a look-up.

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
