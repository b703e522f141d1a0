"""One pipeline stage on one GPU: its layers, weights, reserve and KV budget, and the pool its
engine sizes from that budget (kvplan.engines.base.StagePool)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.capacity.weights import weights_breakdown
from kvplan.engines.base import PlanInputs, total_bytes_of
from kvplan.engines.caches import stage_caches
from kvplan.engines.reserve import Reserve, ReservePart
from kvplan.model.spec import ModelSpec
from kvplan.weights.gemma4_towers import uncounted_towers

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.sglang.pools import SglangPool, SglangPoolSizes
    from kvplan.weights.base import WeightBreakdown
    from kvplan.weights.params import ParamCount


def pp_layer_ranges(num_layers: int, pp: int, per_block: int = 1) -> list[range]:
    """Layers per pipeline stage as vLLM splits them (``vllm/distributed/utils.py:
    get_pp_indices``): equal shares, the remainder going one each to the stages before the last.
    vLLM splits the model code's decoder layers, each `per_block` of kvplan's layers
    (ModelSpec.layers_per_block: LongCat-Flash's two attentions stay on one stage)."""
    blocks = num_layers // per_block
    if pp > blocks:
        raise InputError(f"--pp: {pp} stages for {blocks} layers; need at most one per layer")
    sizes = [blocks // pp] * pp
    for i in range(2, blocks % pp + 2):
        sizes[-i] += 1
    ranges, start = [], 0
    for size in sizes:
        ranges.append(range(start, start + size * per_block))
        start += size * per_block
    return ranges


@dataclass(frozen=True, kw_only=True)
class StagePlan:
    """One pipeline stage on one GPU."""

    stage: int
    first_layer: int
    num_layers: int
    weights_bytes: int
    reserve_bytes: int
    kv_budget_bytes: int
    per_gpu_bytes_per_token: int | None
    page_bytes: int
    group_size: int
    num_groups: int
    num_blocks: int
    blocks_per_request: int
    shared_prefix_blocks: int
    token_capacity: int
    max_concurrency: float
    max_requests: int
    block_size: int = 0  # effective (vLLM raises it for recurrent state)
    requested_block_size: int = 0  # before raising: --block-size, else the backend's default
    state_bytes_per_request: int = 0
    state_padding_percent: float | None = None
    mamba_cache_mode: str | None = None
    kv_cache_groups: tuple[dict[str, object], ...] = ()
    reported_kv_cache_tokens: int = 0
    weights_breakdown: WeightBreakdown | None = None
    reserve_breakdown: Reserve | None = None
    max_running_requests: int | None = None  # the engine's own cap (SGLang)
    sglang_sizes: SglangPoolSizes | None = None
    sglang_pool: SglangPool | None = field(default=None, compare=False)


def stage_weights(spec: ModelSpec, inputs: PlanInputs, stage: range, *, pp_first: bool,
                   pp_last: bool) -> WeightBreakdown:
    """The stage's weights: its layers, and the embeddings and head it holds, the first's and
    the last's, or on every stage where the engine's model class builds them there
    (EngineRules.stage_outer); the MTP draft layers on the last stage alone."""
    outer = inputs.engine.rules.stage_outer(spec)
    first, last = outer.holds(first=pp_first, last=pp_last)
    return weights_breakdown(spec, tp=inputs.tp, dtype=inputs.dtype,
                             quantization=inputs.quantization, layers=stage, first=first,
                             last=last, lm_head=last or outer.lm_head,
                             dp_attention=inputs.dp_attention, ep=inputs.ep,
                             attention_tp=inputs.attention_tp,
                             dp_split=inputs.engine.rules.dp_attention_weights(inputs.options),
                             expert_map_entry_bytes=inputs.engine.rules.expert_map_entry_bytes(),
                             mxfp4=inputs.engine.rules.mxfp4_backend(inputs),
                             attention_scale_bytes=inputs.engine.rules.attention_scale_bytes(spec),
                             # SGLang's --ep-num-redundant-experts (capacity.weights
                             # `redundant_experts_held`); engines without the flag have none.
                             redundant_experts=getattr(inputs.options, "ep_num_redundant_experts",
                                                       0),
                             mtp=pp_last and inputs.speculative_method == "mtp"
                             and inputs.engine.rules.loads_draft_weights(inputs))


def budget_and_formula(inputs: PlanInputs, weights: int, reserve: int) -> tuple[int, str]:
    """The engine's KV budget (kvplan.engines.<name>.budget), or the one given."""
    if inputs.kv_budget_bytes is not None:
        return inputs.kv_budget_bytes, "given (--kv-budget-gib)"
    total = total_bytes_of(inputs)
    rule = inputs.engine.budget
    if inputs.reserve_bytes is None:
        rule.check_reserve_known(inputs)  # TRT-LLM refuses the engine path, unified memory
    return int(rule.kv_bytes(total, inputs.resolved_mem_fraction, weights, reserve)), rule.formula


def refuse_uncounted_towers(spec: ModelSpec, inputs: PlanInputs) -> None:
    """Refuse a budget from the device for a Gemma-3n or Gemma-4 wrapper whose built towers
    (GemmaBlocksSpec.towers) kvplan does not count (kvplan.weights.gemma4_towers
    uncounted_towers) unless the weights or the budget are given: Gemma-3n's MobileNetV5 vision
    tower (a timm model) and audio conformer, and Gemma-4's towers where their sizes were not
    read (a quantized wrapper, a field missing); Gemma-4's are otherwise counted in the weights.
    The budget would come out high by their size."""
    towers = uncounted_towers(spec)
    if not towers or inputs.weights_bytes is not None or inputs.kv_budget_bytes is not None:
        return
    raise UnmodelledError(
        f"{spec.source}: {', '.join(towers)}: the wrapper's vision / audio towers are "
        "not counted in the weights, so the budget from the GPU is not derived: give "
        "--weights-gib (the logged model loading size) or --kv-budget-gib, or, for vLLM, "
        "--limit-mm-per-prompt with 0 for the towers' modalities as the server is started")


def _weights_and_reserve(spec: ModelSpec, inputs: PlanInputs, counts: ParamCount,
                         stage_index: int, layers: range
                         ) -> tuple[int, int, WeightBreakdown, Reserve]:
    refuse_uncounted_towers(spec, inputs)
    breakdown = stage_weights(spec, inputs, layers, pp_first=stage_index == 0,
                               pp_last=layers.stop == spec.num_hidden_layers)
    weights = breakdown.total if inputs.weights_bytes is None else inputs.weights_bytes
    parts = inputs.engine.budget.reserve(spec, inputs)
    if inputs.reserve_bytes is not None:
        parts = Reserve(parts=(ReservePart(name="given", bytes=inputs.reserve_bytes,
                                           rule="--reserve-gib"),))
    return weights, parts.total, breakdown, parts


def _no_cache(stage_index: int, layers: range) -> InputError:
    return InputError(f"--pp: stage {stage_index} (layers {layers.start}-{layers.stop - 1}) "
                      "holds no KV cache of its own (all its layers share an earlier "
                      "stage's or hold none); choose another --pp")


def stage_plan(spec: ModelSpec, inputs: PlanInputs, counts: ParamCount | None,
               stage_index: int, layers: range, context: int) -> StagePlan:
    """`counts` None: the weights are not counted (kvplan.capacity.plan.param_counts), and the
    budget is the one given, or the device's less the weights and reserve given."""
    if counts is None:
        weights, reserve = inputs.weights_bytes or 0, inputs.reserve_bytes or 0
        breakdown, parts = None, None if inputs.reserve_bytes is None else Reserve(parts=(
            ReservePart(name="given", bytes=inputs.reserve_bytes, rule="--reserve-gib"),))
    else:
        weights, reserve, breakdown, parts = _weights_and_reserve(spec, inputs, counts,
                                                                  stage_index, layers)
    budget, _ = budget_and_formula(inputs, weights, reserve)
    caches = stage_caches(spec, inputs, layers)
    pool = inputs.engine.rules.stage_pool(spec, inputs, layers, context, budget, caches)
    if pool is None:
        raise _no_cache(stage_index, layers)
    limits = pool.limits
    num_blocks, shared = pool.num_blocks, pool.shared_prefix_blocks
    own = pool.blocks_per_request - shared
    usable = num_blocks - shared
    # Every pool a request needs pages in must hold it (SGLang's sliding-window pool).
    concurrency = min([usable / own] + [have / need for have, need in limits])
    requests = min([usable // own] + [have // need for have, need in limits])
    return StagePlan(
        stage=stage_index, first_layer=layers.start, num_layers=len(layers),
        weights_bytes=weights, reserve_bytes=reserve, kv_budget_bytes=budget,
        max_concurrency=max(0.0, concurrency), max_requests=max(0, requests),
        weights_breakdown=breakdown, reserve_breakdown=parts,
        **{f.name: getattr(pool, f.name) for f in fields(pool) if f.name != "limits"})
