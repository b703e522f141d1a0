"""`kvplan estimate`'s answers: the KV-cache sizes, and with a device (or a KV budget) the
capacity plan and the reverse questions (the longest context and the memory fraction for N
requests)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import EstimateInputs
from kvplan.engines.caches import draft_layers
from kvplan.engines.context import max_context_tokens
from kvplan.engines.kv_dtype import check_kv_dtype
from kvplan.kv.cache import Estimate, estimate

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.analysis.offload_run import OffloadAsk
    from kvplan.capacity.offload import OffloadPlan
    from kvplan.capacity.plan import CapacityPlan


@dataclass(frozen=True, kw_only=True)
class ReverseAnswers:
    requests: int
    longest_context: int | None
    longest_context_capped: bool
    fraction_needed: float | None


@dataclass(frozen=True, kw_only=True)
class EstimateAnswer:
    estimate: Estimate
    plan: CapacityPlan | None
    """None: no device or KV budget was given."""
    reverse: ReverseAnswers | None
    """The answers for --requests N, if asked."""
    offload: OffloadPlan | None = None
    """The offload tiers and prefix reuse, if asked (kvplan.analysis.offload_run)."""


def run_estimate(inputs: EstimateInputs, *, batch: int = 1, requests: int | None = None,
                 on_warning: Callable[[str], None] | None = None,
                 offload: OffloadAsk | None = None) -> EstimateAnswer:
    """Size the KV cache of `inputs.spec` for `batch` requests and, with a capacity question,
    plan it on the device. A KV dtype the engine does not run on the GPU is an error when
    capacity was asked, else `on_warning` is told and the sizes are computed anyway."""
    spec, sizing = inputs.spec, inputs.sizing
    rules = sizing.engine.rules
    # The engine's own allocator for `estimate` (vLLM: its KV-cache groups), after refusing
    # what its pools do not model.
    engine_config = rules.estimate_config(spec, sizing)
    try:
        check_kv_dtype(sizing.engine, sizing.kv_dtype, inputs.gpu)
    except InputError as exc:
        if inputs.capacity is not None:
            raise
        if on_warning is not None:
            on_warning(f"{exc}; sizes shown anyway")
    conv_dtype, ssm_state_dtype = rules.state_dtypes(spec, sizing)
    # The page a sequence is held in as the engine runs the model (SGLang: 64 for DeepSeek's
    # sparse attention whatever --page-size says), the block asked reported beside it.
    est = estimate(spec, context=sizing.context, batch=batch, kv_dtype=sizing.kv_dtype,
                   block_size=rules.sequence_block_size(spec, sizing),
                   requested_block_size=sizing.resolved_block_size, tp=sizing.tp,
                   engine_config=engine_config, num_draft_layers=draft_layers(spec, sizing),
                   ssm_dtype=ssm_state_dtype, conv_dtype=conv_dtype,
                   num_spec_tokens=sizing.num_speculative_tokens)
    if inputs.capacity is None:
        if requests is not None:
            raise InputError("--requests: needs --gpu, --gpu-mem-gib or --kv-budget-gib")
        if offload is not None and offload.asked:
            raise InputError("the offload tiers (--kv-offloading-size, --hicache-*, "
                             "--host-cache-size, --prefix-hit-rate): need --gpu, --gpu-mem-gib "
                             "or --kv-budget-gib")
        return EstimateAnswer(estimate=est, plan=None, reverse=None)
    # The capacity rules (stages, weights, the engine's budget) load only when a device or a KV
    # budget is given: `kvplan estimate` alone never needs them (examples/startup-bench.md).
    from kvplan.capacity.plan import plan_capacity
    from kvplan.capacity.reverse import fraction_needed, longest_context

    plan = plan_capacity(spec, inputs.capacity)
    reverse = None
    if requests is not None:
        longest = longest_context(spec, inputs.capacity, requests)
        reverse = ReverseAnswers(
            requests=requests, longest_context=longest,
            longest_context_capped=longest is not None and longest == (
                max_context_tokens(spec, inputs.capacity.engine) or 1 << 24),
            fraction_needed=fraction_needed(spec, inputs.capacity, requests),
        )
    tiers = None
    if offload is not None and offload.asked:
        from kvplan.analysis.offload_run import run_offload

        tiers = run_offload(spec, inputs.capacity, plan, inputs.gpu, offload,
                            cost_rules=inputs.cost_rules)
    return EstimateAnswer(estimate=est, plan=plan, reverse=reverse, offload=tiers)
