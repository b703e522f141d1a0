"""vLLM's sampler in the simulated step (`kvplan simulate --generation-config`, off by
default): each step's time plus the sampler over its scheduled requests' logits
(kvplan.perf.sampler_cost over kvplan.engines.vllm.sampler, read in vLLM 0.15.0). vLLM samples
one row per scheduled request, a partial prefill's included (its token discarded:
v1/worker/gpu_model_runner.py computes logits at every request's last scheduled token)."""

from __future__ import annotations

from dataclasses import dataclass

from kvplan.analysis.simulate.sim_types import StepCost
from kvplan.perf.sampler_cost import SamplerCost


@dataclass(kw_only=True)
class SampledStepCost:
    """`inner`'s step time plus `sampler`'s seconds over the step's requests."""

    inner: StepCost
    sampler: SamplerCost

    @property
    def full_attention_only(self) -> bool:
        return self.inner.full_attention_only

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        base = self.inner.seconds(decode_contexts=decode_contexts, chunks=chunks)
        rows = len(decode_contexts) + len(chunks)
        return base + (self.sampler.seconds(rows) if base else 0.0)

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        base = self.inner.seconds_from_sums(decodes, decode_keys, chunks)
        return base + (self.sampler.seconds(decodes + len(chunks)) if base else 0.0)
