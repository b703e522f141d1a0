"""TensorRT-LLM's own settings: the flags only TensorRT-LLM's rules read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan.engines.base import EngineOptions, options_of

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs


@dataclass(frozen=True, kw_only=True)
class TrtllmOptions(EngineOptions):
    # cuda_graph_config: max_batch_size (None or 0: 128) and enable_padding.
    cuda_graph_max_batch_size: int | None = None
    cuda_graph_padding: bool = False
    max_total_tokens: int | None = None  # KvCacheConfig max_tokens
    trtllm_backend: str = "pytorch"  # pytorch (blocks by version) | engine (rounded up)


OPTIONS = TrtllmOptions


def trtllm_options(inputs: PlanInputs) -> TrtllmOptions:
    opts: TrtllmOptions = options_of(inputs, TrtllmOptions, "trtllm")
    return opts
