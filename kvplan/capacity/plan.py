"""The capacity plan: how many requests of N tokens fit on a GPU, in the selected engine's own
terms. Pure functions; exact integer bytes; no I/O.

Every pipeline stage gets the engine's KV budget (kvplan.engines.<name>.budget: what the engine's
"memory fraction" leaves after weights and its reserve) and the pool the engine sizes from it
(kvplan.engines.<name>.engine: ``stage_pool``, a kvplan.engines.base.StagePool); the least
capable stage sets the answer, capped by the engine's limit on running requests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.capacity.stages import StagePlan, budget_and_formula, pp_layer_ranges, stage_plan
from kvplan.engines.base import PlanInputs, total_bytes_of
from kvplan.kv.cache import check_tp
from kvplan.model.spec import ModelSpec

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.weights.params import ParamCount


@dataclass(frozen=True, kw_only=True)
class CapacityPlan:
    """`kvplan estimate --gpu ...`: the numbers, for the stage that limits the answer."""

    engine: str
    context: int
    kv_dtype: str
    block_size: int
    tp: int
    pp: int
    dp_attention: bool
    mem_fraction: float
    total_bytes: int | None
    budget_formula: str
    kv_budget_given: bool
    params: int
    params_active: int
    weight_dtype: str
    weights_bytes: int
    reserve_bytes: int
    kv_budget_bytes: int
    per_gpu_bytes_per_token: int | None  # None: no whole bytes per token (DeepSeek-V4)
    num_blocks: int
    blocks_per_request: int
    token_capacity: int
    max_concurrency: float
    max_requests: int
    total_max_requests: int  # across data-parallel attention ranks (= max_requests without)
    max_num_batched_tokens: int
    shared_prefix: int
    limiting_stage: int
    stages: tuple[StagePlan, ...] = field(default_factory=tuple)
    engine_version: str | None = None
    platform: str | None = None
    requested_block_size: int = 0
    state_bytes_per_request: int = 0
    state_padding_percent: float | None = None
    mamba_cache_mode: str | None = None
    kv_cache_groups: tuple[dict[str, object], ...] = ()
    reported_kv_cache_tokens: int = 0
    weights_source: str = "architecture"  # or "given" (--weights-gib)
    reserve_breakdown: dict[str, dict[str, object]] = field(default_factory=dict)
    mem_fraction_rule: str = ""
    weights_breakdown: dict[str, int] = field(default_factory=dict)
    quantization: str = "none"
    # SGLang (None for the other engines): its cap on running requests, the sizes of its
    # separate pools and the pool type (kvplan.engines.sglang.pools).
    max_running_requests: int | None = None
    full_max_total_num_tokens: int | None = None
    swa_max_total_num_tokens: int | None = None
    max_mamba_cache_size: int | None = None
    mamba_conv_state_bytes: int | None = None
    mamba_ssm_state_bytes: int | None = None
    # SGLang's speculative draft worker: its own pool's tokens and bytes (its "KV Cache is
    # allocated" line; kvplan.engines.sglang.draft.SglangDraft).
    draft_max_total_num_tokens: int | None = None
    draft_kv_bytes: int | None = None
    sglang_pool: dict[str, object] = field(default_factory=dict)

    # SGLang's --dp-size under DP attention where given (its ranks of tp / dp GPUs; None:
    # --tp ranks of one GPU, and no JSON key).
    attention_dp_size: int | None = None

    # False: the model's weights are not counted (none since dsv4weights counted DeepSeek-V4's;
    # kept for a family kvplan cannot count): the budget was given, and
    # params, weights and reserve are not kvplan's numbers (null in the JSON unless given).
    weights_counted: bool = True

    def to_dict(self) -> dict[str, object]:
        record = asdict(self)
        if record["attention_dp_size"] is None:
            del record["attention_dp_size"]
        # Not a key of its own: weights_source says "not counted" (the JSON of every other
        # model unchanged).
        if record.pop("weights_counted"):
            return record
        record.update(params=None, params_active=None)
        if self.weights_source != "given":
            record["weights_bytes"] = None
        if not self.reserve_breakdown.get("given"):
            record["reserve_bytes"] = None
        return record


def param_counts(spec: ModelSpec, inputs: PlanInputs,
                 count: Callable[[ModelSpec], ParamCount]) -> ParamCount | None:
    """The model's parameters (`count`: kvplan.weights.params.count_params), or None where
    kvplan does not count them (an UnmodelledError) and the budget does not need
    them: --kv-budget-gib, or both --weights-gib and --reserve-gib given; else that refusal."""
    try:
        return count(spec)
    except UnmodelledError:
        if inputs.kv_budget_bytes is not None or (
                inputs.weights_bytes is not None and inputs.reserve_bytes is not None):
            return None
        raise


def _check(spec: ModelSpec, inputs: PlanInputs) -> None:
    if inputs.kv_budget_bytes is None:
        total_bytes_of(inputs)  # refuses a plan with neither a device size nor a KV budget
    f = inputs.resolved_mem_fraction
    if not 0 < f <= 1:
        raise InputError(f"--mem-fraction: must be in (0, 1], got {f}")
    check_tp(spec, inputs.tp)
    dp = inputs.attention_dp_size
    if dp is not None and not inputs.dp_attention:
        raise InputError(f"--dp-size {dp}: the attention-DP ranks; needs --dp-attention")
    if dp is not None and (dp < 2 or inputs.tp % dp):
        # SGLang turns DP attention off at --dp-size 1 and asserts tp_size % dp_size == 0
        # (server_args.py _handle_data_parallelism: 0.5.3 :949-956, 0.5.6 :1491-1498, 0.5.9
        # :2109-2116).
        raise InputError(f"--dp-size {dp}: attention DP needs 2 or more ranks dividing --tp "
                         f"{inputs.tp}")
    if inputs.shared_prefix < 0:
        raise InputError("--shared-prefix: must be >= 0")
    if inputs.shared_prefix > inputs.context:
        raise InputError(f"--shared-prefix: {inputs.shared_prefix} exceeds --context "
                         f"({inputs.context})")


def plan_capacity(spec: ModelSpec, inputs: PlanInputs, *, context: int | None = None,
                  ) -> CapacityPlan:
    rules = inputs.engine.rules
    spec = rules.served_spec(spec, inputs)
    inputs = rules.served_inputs(spec, inputs)  # SGLang's DSA settings (sglang.dsa_settings)
    if spec.kind.value == "mla" and not inputs.is_mla:
        inputs = replace(inputs, is_mla=True)
    if spec.vision is not None and inputs.vision_tower is None:
        inputs = replace(inputs, vision_tower=(spec.vision.num_hidden_layers,
                                               spec.vision.hidden_size))
    _check(spec, inputs)
    context = inputs.context if context is None else context
    from kvplan.weights.params import (
        count_params,  # on first plan: `kvplan estimate` alone never counts
    )

    counts = param_counts(spec, inputs, count_params)
    stages = tuple(
        stage_plan(spec, inputs, counts, i, layers, context)
        for i, layers in enumerate(pp_layer_ranges(spec.num_hidden_layers, inputs.pp,
                                                   spec.layers_per_block))
    )
    # The least-capable stage sets the answer: every request needs blocks on every stage.
    limiting = min(stages, key=lambda s: (s.max_concurrency, s.num_blocks))
    _, formula = budget_and_formula(inputs, limiting.weights_bytes, limiting.reserve_bytes)
    cap = min((c for c in (inputs.max_num_seqs, limiting.max_running_requests)
               if c is not None), default=None)
    if cap is not None and limiting.max_requests > cap:
        # The scheduler runs at most max_num_seqs requests whatever the cache holds (SGLang:
        # its max_running_requests, capped by the recurrent-state slots).
        limiting = replace(limiting, max_requests=cap)
    sizes = limiting.sglang_sizes
    dp = inputs.attention_dp_ranks
    return CapacityPlan(
        engine=inputs.engine.value,
        context=context,
        kv_dtype=inputs.kv_dtype,
        block_size=limiting.block_size or inputs.resolved_block_size,
        tp=inputs.tp,
        pp=inputs.pp,
        dp_attention=inputs.dp_attention,
        mem_fraction=inputs.resolved_mem_fraction,
        total_bytes=inputs.total_bytes,
        budget_formula=formula,
        kv_budget_given=inputs.kv_budget_bytes is not None,
        params=0 if counts is None else counts.total,
        params_active=0 if counts is None else counts.active,
        weights_counted=counts is not None,
        weight_dtype=(limiting.weights_breakdown.dtype if limiting.weights_breakdown
                      else spec.weight_dtype),
        weights_bytes=limiting.weights_bytes,
        reserve_bytes=limiting.reserve_bytes,
        kv_budget_bytes=limiting.kv_budget_bytes,
        per_gpu_bytes_per_token=limiting.per_gpu_bytes_per_token,
        num_blocks=limiting.num_blocks,
        blocks_per_request=limiting.blocks_per_request,
        token_capacity=limiting.token_capacity,
        max_concurrency=limiting.max_concurrency,
        max_requests=limiting.max_requests,
        total_max_requests=limiting.max_requests * dp,
        attention_dp_size=inputs.attention_dp_size if inputs.dp_attention else None,
        max_num_batched_tokens=inputs.max_num_batched_tokens,
        shared_prefix=inputs.shared_prefix,
        limiting_stage=limiting.stage,
        stages=stages,
        engine_version=rules.reported_version(inputs),
        platform=rules.reported_platform(inputs),
        requested_block_size=limiting.requested_block_size or inputs.resolved_block_size,
        state_bytes_per_request=limiting.state_bytes_per_request,
        state_padding_percent=limiting.state_padding_percent,
        mamba_cache_mode=limiting.mamba_cache_mode,
        kv_cache_groups=limiting.kv_cache_groups,
        reported_kv_cache_tokens=limiting.reported_kv_cache_tokens,
        weights_source="given" if inputs.weights_bytes is not None else "not counted" if (
            counts is None) else (
            limiting.weights_breakdown.source if limiting.weights_breakdown else "architecture"),
        weights_breakdown=(limiting.weights_breakdown.as_dict()
                           if limiting.weights_breakdown else {}),
        quantization=(limiting.weights_breakdown.method if limiting.weights_breakdown
                      else "none"),
        reserve_breakdown=(limiting.reserve_breakdown.to_dict() if limiting.reserve_breakdown
                           else {}),
        mem_fraction_rule=inputs.mem_fraction_rule,
        max_running_requests=limiting.max_running_requests,
        full_max_total_num_tokens=getattr(sizes, "full_max_total_num_tokens", None),
        swa_max_total_num_tokens=getattr(sizes, "swa_max_total_num_tokens", None),
        max_mamba_cache_size=getattr(sizes, "max_mamba_cache_size", None),
        mamba_conv_state_bytes=getattr(sizes, "mamba_conv_state_bytes", None),
        mamba_ssm_state_bytes=getattr(sizes, "mamba_ssm_state_bytes", None),
        draft_max_total_num_tokens=getattr(sizes, "draft_max_total_num_tokens", None),
        draft_kv_bytes=getattr(sizes, "draft_kv_bytes", None),
        sglang_pool=limiting.sglang_pool.describe() if limiting.sglang_pool else {},
    )
