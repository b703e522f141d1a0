"""The reverse questions: the longest context at which N requests fit, and the memory fraction
they need, in the selected engine's meaning of the fraction."""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.errors import UnmodelledError
from kvplan._util.search import first_true
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import PlanInputs
from kvplan.engines.context import max_context_tokens
from kvplan.model.spec import ModelSpec


def longest_context(spec: ModelSpec, inputs: PlanInputs, requests: int) -> int | None:
    """The longest context at which `requests` concurrent requests still fit (per GPU / DP rank);
    None if not even one token's worth fits. Capped at the model's maximum context (as
    the engine's own derived maximum, kvplan.engines.context; else 2^24 tokens), since
    sliding-window-only models never run out."""
    limit = max_context_tokens(spec, inputs.engine) or (1 << 24)

    def fits(ctx: int) -> bool:
        shared = min(inputs.shared_prefix, ctx)
        probe = replace(inputs, shared_prefix=shared, context=ctx)
        return plan_capacity(spec, probe).max_requests >= requests

    if not fits(1):
        return None
    if fits(limit):
        return limit
    # Requests fall as context grows: the longest fitting context is one below the first misfit.
    first_misfit = first_true(lambda ctx: not fits(ctx), limit=limit)
    assert first_misfit is not None
    return first_misfit - 1


def fraction_needed(spec: ModelSpec, inputs: PlanInputs, requests: int) -> float | None:
    """The memory fraction at which `requests` requests of `inputs.context` tokens fit (per GPU),
    in the selected engine's meaning of the fraction. None without a device total, or where the
    budget from the device is not derived without a given reserve (DeepSeek-V4's profile-run
    workspaces: kvplan.engines.vllm.compressed.refuse_v4_profile_peaks) and only
    --kv-budget-gib was given, which this question sets aside)."""
    if inputs.total_bytes is None:
        return None
    probe = replace(inputs, mem_fraction=1.0, kv_budget_bytes=None)
    worst = 0.0
    rules, budget = inputs.engine.rules, inputs.engine.budget
    try:
        stages = plan_capacity(spec, probe).stages
    except UnmodelledError:
        if inputs.kv_budget_bytes is None:
            raise
        return None
    for st in stages:
        need_bytes = rules.kv_bytes_needed(st, requests, inputs.context,
                                           min(inputs.shared_prefix, inputs.context))
        f = budget.fraction_for(probe, need_bytes, st.weights_bytes, st.reserve_bytes)
        worst = max(worst, f)
    return worst
