"""`kvplan verify` on one rank: allocate this rank's shard of the paged KV cache as vLLM's
allocator lays it out, hold kvplan's own plan against the device's own accounting, free it.

What this checks is the allocator overhead: the cache kvplan plans, allocated by torch, takes
what the plan says and nothing hidden (`CHECK`). Both sides come from kvplan's rules, so it does
not show that kvplan matches an engine: that is the vLLM oracle's job (tests/test_vllm_oracle.py,
examples/vllm-oracle.md) and the start-up log replays' (examples/engine-bench.md).

Steps (each measured by means independent of the prediction):

1. Read the device (`probe.Device`). The budget is ``--budget-gib`` if given, else on CUDA what
   is free inside the fraction, ``total x mem_fraction - (total - free)``, and on CPU a safe cap.
   The budget is a hard limit on the run's peak (RSS on CPU, reserved memory on CUDA, over the
   start): a decode workspace is carved out of it (as vLLM subtracts its activation peak) and
   the KV cache gets the rest, ``kv_budget = budget - workspace``.
2. Predict with the core: `capacity.vllm_stage_config` for this rank's stage and TP shard,
   ``num_blocks = kv_budget // bytes_per_block``.
3. Allocate from that config (`alloc.pool_plan`): raw page tensors, each layer's views
   (`formats.page_layout`), every page written so that it is resident.
4. Measure: CUDA driver free memory, ``memory_allocated`` / ``memory_reserved``; CPU RSS.
5. Search the real maximum (`alloc.search_blocks`); an out-of-memory error is a limit.
6. Use it (`step.decode_step`): a decode step for a batch, in chunks sized to the workspace.
7. Free everything (also on errors and Ctrl-C) and check the memory came back; report the peak.
"""

from __future__ import annotations

import gc
import traceback
import weakref
from dataclasses import asdict, dataclass, replace
from typing import Any

from kvplan._util.errors import DeviceError, InputError
from kvplan._util.progress import report
from kvplan._util.units import MiB, human_bytes
from kvplan.analysis.device.alloc import (
    Held,
    PoolPlan,
    allocate,
    pool_plan,
    raw_tensors,
    search_blocks,
)
from kvplan.analysis.device.formats import Storage, storage
from kvplan.analysis.device.probe import (
    CPU_DEFAULT_CAP_BYTES,
    DEFAULT_MEM_FRACTION,
    Device,
    DeviceMemory,
    make_device,
    probe_device,
    resolve_budget,
    resolve_device,
)
from kvplan.analysis.device.step import MLA_TOLERANCES, StepOutcome, decode_step
from kvplan.capacity.stages import pp_layer_ranges
from kvplan.engines.base import PlanInputs
from kvplan.engines.caches import stage_caches
from kvplan.engines.vllm.alloc import VllmKVConfig, vllm_cached_spec
from kvplan.engines.vllm.engine import vllm_stage_config
from kvplan.kv.cache import check_token_sized
from kvplan.model.attention import LatentAttention
from kvplan.model.spec import ModelSpec

__all__ = ["CHECK", "CPU_DEFAULT_CAP_BYTES", "DeviceMemory", "RankPlan", "VerifyResult",
           "plan_rank", "probe_device", "resolve_budget", "resolve_device", "verify",
           "workspace_bytes"]

# What `kvplan verify` compares, in its JSON (`check`) and its notes.
CHECK = ("allocator overhead: kvplan's own plan allocated with torch and measured on the device "
         "(torch adds no hidden overhead); agreement with an engine is shown by the vLLM oracle, "
         "not by verify")


MAX_DECODE_BATCH = {"cpu": 8, "cuda": 64}
# CPU freed_ok: RSS may stay this far above the baseline after freeing (allocator slack).
CPU_FREE_SLACK_BYTES = 32 * MiB
# The decode workspace: 1/8 of the budget, at least 1 MiB, at most 256 MiB (and never over half
# the budget). The step's chunks are sized to a quarter of it (step.CHUNK_SHARE).
WORKSPACE_SHARE = 8
WORKSPACE_MIN_BYTES = 1 * MiB
WORKSPACE_MAX_BYTES = 256 * MiB
# The warm-up request's context: long enough for several chunks of the decode step's loops,
# short enough to cost little next to the measured run.
WARM_UP_MAX_TOKENS = 256

# Weak references to every tensor the last run allocated, so that tests can check they are gone.
last_run_refs: list[weakref.ref] = []


def workspace_bytes(budget: int) -> int:
    return min(budget // 2, max(WORKSPACE_MIN_BYTES, min(WORKSPACE_MAX_BYTES,
                                                          budget // WORKSPACE_SHARE)))


@dataclass(frozen=True, kw_only=True)
class RankPlan:
    """What one rank holds and what the core predicts for it (pure: no torch)."""

    rank: int
    tp_rank: int
    stage: int
    layers: range
    inputs: PlanInputs
    config: VllmKVConfig
    caches: tuple[Any, ...]
    budget_bytes: int
    workspace_bytes: int
    kv_budget_bytes: int
    num_blocks: int

    @property
    def predicted_bytes(self) -> int:
        return self.num_blocks * self.config.bytes_per_block


def plan_rank(spec: ModelSpec, *, rank: int, tp: int, pp: int, context: int, kv_dtype: str,
              block_size: int | None, budget: int, speculative_method: str | None = None,
              num_speculative_tokens: int = 0) -> RankPlan:
    """This rank's stage, shard and prediction (vLLM orders ranks TP-first: rank = stage x tp +
    tp_rank)."""
    if context < 1:
        raise InputError(f"--context: must be >= 1, got {context}")
    stage, tp_rank = divmod(rank, tp)
    layers = pp_layer_ranges(spec.num_hidden_layers, pp, spec.layers_per_block)[stage]
    work = workspace_bytes(budget)
    inputs = PlanInputs(context=context, kv_dtype=kv_dtype, block_size=block_size, tp=tp, pp=pp,
                        kv_budget_bytes=budget - work,
                        speculative_method=speculative_method,
                        num_speculative_tokens=num_speculative_tokens)
    config = vllm_stage_config(spec, inputs, layers, context)
    if not config.groups:
        raise InputError(f"--pp: stage {stage} (layers {layers.start}-{layers.stop - 1}) holds no "
                         "KV cache of its own; choose another --pp")
    caches = stage_caches(spec, inputs, layers)
    num_blocks = config.num_blocks(budget - work)
    if num_blocks < 1:
        raise InputError(
            f"budget {budget:,} B ({human_bytes(budget)}) less the {human_bytes(work)} decode "
            f"workspace is too small for one block: one block across every tensor of rank "
            f"{rank} is {config.bytes_per_block:,} B; raise --budget-gib or lower "
            "--block-size/--context")
    return RankPlan(rank=rank, tp_rank=tp_rank, stage=stage, layers=layers, inputs=inputs,
                    config=config, caches=caches, budget_bytes=budget, workspace_bytes=work,
                    kv_budget_bytes=budget - work, num_blocks=num_blocks)


@dataclass(frozen=True, kw_only=True)
class VerifyResult:
    """`kvplan verify`'s numbers. Field names are the JSON contract; sizes in bytes. With
    several ranks the top level is the rank with the fewest measured blocks, its
    ``predicted_num_blocks`` / ``measured_num_blocks`` the minimum over ranks (what the ranks
    agree on, as vLLM takes the minimum), and ``ranks`` has every rank."""

    model: str
    model_name: str
    attention_kind: str
    device: str
    device_name: str
    kv_dtype: str
    storage_dtype: str
    block_size: int  # effective (vLLM raises it for recurrent state)
    tp: int
    context: int
    total_bytes: int
    free_bytes: int  # CUDA: driver free; CPU: MemAvailable, before the run
    mem_fraction: float | None  # CUDA only
    budget_bytes: int  # the hard limit on this rank's peak
    budget_source: str
    kv_budget_bytes: int  # budget - decode workspace: what the prediction is for
    decode_workspace_bytes: int
    page_bytes: int  # the largest page
    group_size: int  # raw tensors (vLLM's KVCacheTensors)
    num_groups: int
    slot_shape: str
    blocks_per_request: int
    predicted_num_blocks: int
    predicted_bytes: int
    tensor_bytes: int  # sum of the allocated tensors' nbytes
    measured_bytes: int  # CUDA: drop in driver free memory; CPU: RSS growth
    measured_method: str
    difference_bytes: int  # measured - predicted
    difference_pct: float
    allocator_overhead_bytes: int  # CUDA: reserved - allocated; CPU: measured - tensor bytes
    cuda_allocated_bytes: int | None
    cuda_reserved_bytes: int | None
    measured_num_blocks: int
    search_bytes: int  # device-measured use with the search's extra blocks held
    search_limit: str
    predicted_token_capacity: int
    measured_token_capacity: int
    predicted_max_concurrency: float
    measured_max_concurrency: float
    decode_batch: int
    decode_context: int
    decode_compute_dtype: str
    decode_step_seconds: float | None
    decode_output_finite: bool
    decode_chunk_tokens: int
    absorbed_vs_naive_max_rel_error: float | None
    absorbed_vs_naive_tolerance: float | None
    absorbed_vs_naive_ok: bool | None
    mla_check_requests: int | None
    mla_naive_seconds: float | None
    mla_absorbed_seconds: float | None
    peak_bytes: int  # CPU: peak anonymous RSS over the start; CUDA: peak reserved over it
    peak_limit_bytes: int  # budget + the allocator's granularity
    peak_ok: bool
    file_backed_growth_bytes: int  # CPU: library code pages faulted in during the run
    freed_ok: bool
    freed_residual_bytes: int
    live_tensors_after_free: int
    pp: int = 1
    rank: int = 0
    world_size: int = 1
    stage: int = 0
    first_layer: int = 0
    num_layers: int = 0
    requested_block_size: int = 0
    state_padding_percent: float | None = None
    mamba_cache_mode: str | None = None
    kv_cache_groups: tuple[dict[str, object], ...] = ()
    ranks: tuple[dict[str, object], ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def rank_record(self) -> dict[str, object]:
        return {"rank": self.rank, "stage": self.stage, "tp_rank": self.rank % self.tp,
                "first_layer": self.first_layer, "num_layers": self.num_layers,
                "device": self.device, "predicted_num_blocks": self.predicted_num_blocks,
                "measured_num_blocks": self.measured_num_blocks,
                "predicted_bytes": self.predicted_bytes, "measured_bytes": self.measured_bytes,
                "tensor_bytes": self.tensor_bytes, "peak_bytes": self.peak_bytes,
                "peak_ok": self.peak_ok,
                "file_backed_growth_bytes": self.file_backed_growth_bytes,
                "decode_step_seconds": self.decode_step_seconds,
                "decode_output_finite": self.decode_output_finite, "freed_ok": self.freed_ok}


def _describe_tensors(plan: PoolPlan, num_blocks: str) -> str:
    seen: dict[str, int] = {}
    for m in plan.members:
        text = f"{m.layout.cache.describe()}: {m.layout.describe()}"
        seen[text] = seen.get(text, 0) + 1
    pages = sorted(set(plan.buffer_pages))
    head = (f"{len(plan.buffer_pages)} tensor(s) of [{num_blocks} x "
            + " / ".join(f"{p:,}" for p in pages) + " B]")
    return head + "; " + "; ".join(f"{n} x {t}" for t, n in seen.items())


def verify(spec: ModelSpec, *, device: str = "auto", context: int = 4096,
           kv_dtype: str = "bf16", block_size: int | None = None, tp: int = 1, pp: int = 1,
           rank: int = 0, world_size: int = 1, local_rank: int = 0, local_ranks: int = 1,
           mem_fraction: float = DEFAULT_MEM_FRACTION, budget_bytes: int | None = None,
           max_decode_batch: int | None = None, seed: int = 0,
           speculative_method: str | None = None, num_speculative_tokens: int = 0,
           dev: Device | None = None) -> VerifyResult:
    """Verify rank `rank` of a `tp` x `pp` layout on `device` (see the module docstring).
    `dev` replaces the device (tests inject a fake to drive the search's branches)."""
    check_token_sized(spec, "verify")
    import torch

    # vLLM's cache of a decompressed MLA model (MiniCPM3) is plain per-head K and V: allocate
    # and attend over it as such (the weights are not allocated by verify).
    att = vllm_cached_spec(spec).attention
    if isinstance(att, LatentAttention) and att.decompressed_cache:
        spec = replace(spec, attention=att.as_cached_heads())
    if dev is None:
        dev = make_device(resolve_device(device, local_rank=local_rank))
    st = storage(kv_dtype)
    mem = dev.probe()
    budget, budget_source = resolve_budget(mem, budget_bytes=budget_bytes,
                                           mem_fraction=mem_fraction, local_ranks=local_ranks)
    rp = plan_rank(spec, rank=rank, tp=tp, pp=pp, context=context, kv_dtype=kv_dtype,
                   block_size=block_size, budget=budget, speculative_method=speculative_method,
                   num_speculative_tokens=num_speculative_tokens)
    plan = pool_plan(spec, rp.config, rp.caches, tp=rp.inputs.kv_tp, st=st)
    cap = max_decode_batch or MAX_DECODE_BATCH["cuda" if dev.is_cuda else "cpu"]
    held = Held()
    last_run_refs[:] = []
    # The objects alive before the run are not its garbage: frozen, the full collections of
    # every `settle()` walk only what the run made (with torch imported a process holds
    # ~10^5-10^6 objects, and each collection took 0.1-0.4 s, half of a small run's time).
    gc.collect()
    gc.freeze()
    try:
        run = _run(held, dev, torch=torch, spec=spec, st=st, rp=rp, plan=plan, cap=cap,
                   seed=seed, tp=rp.inputs.kv_tp)
    except BaseException as exc:
        # The traceback keeps the finished frames' locals (views of the cache) alive: drop them.
        traceback.clear_frames(exc.__traceback__)
        if dev.is_oom(exc):
            # Outside the block search (which treats it as a measured limit): the predicted pool
            # itself or the decode step's temporaries did not fit. Everything is freed below.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DeviceError(f"{dev.name}: out of memory outside the block search "
                              f"({first[:160]}); lower --mem-fraction or --budget-gib") from None
        raise
    finally:
        last_run_refs[:] = held.refs
        held.clear()
        dev.settle()
        gc.unfreeze()
    live = sum(ref() is not None for ref in held.refs)
    residual = dev.usage()
    if dev.is_cuda:
        freed_ok = (live == 0 and dev.allocated() <= dev.base_allocated
                    and dev.reserved() <= dev.base_reserved)
    else:
        freed_ok = live == 0 and residual <= max(CPU_FREE_SLACK_BYTES, run["measured"] // 20)
    return _result(spec, rp, plan, run, dev=dev, mem=mem, st=st, budget_source=budget_source,
                   mem_fraction=mem_fraction, world_size=world_size, freed_ok=freed_ok,
                   live=live, residual=residual)


def _result(spec: ModelSpec, rp: RankPlan, plan: PoolPlan, run: dict[str, Any], *, dev: Device,
            mem: DeviceMemory, st: Storage, budget_source: str, mem_fraction: float,
            world_size: int, freed_ok: bool, live: int, residual: int) -> VerifyResult:
    config = rp.config
    decode: StepOutcome = run["decode"]
    measured, tensor_bytes = run["measured"], run["tensor_bytes"]
    predicted_bytes = rp.predicted_bytes
    cd_name = dev.compute_dtype(st.kv_dtype)[1]
    tolerance = MLA_TOLERANCES[cd_name] if decode.mla_error is not None else None
    measured_blocks = run["measured_blocks"]
    bpr = config.blocks_per_request
    peak_limit = rp.budget_bytes + dev.granularity_bytes
    notes = [
        f"KV budget: {budget_source}, less a {human_bytes(rp.workspace_bytes)} decode "
        f"workspace: {rp.kv_budget_bytes:,} B for the cache.",
        f"Rank {rp.rank} of {world_size}: stage {rp.stage} (layers {rp.layers.start}-"
        f"{rp.layers.stop - 1}), TP shard {rp.tp_rank} of {rp.inputs.tp}.",
        "Allocated as vLLM V1 does from its KV-cache config: "
        + _describe_tensors(plan, f"{rp.num_blocks:,}") + ".",
        "Measured: " + run["method"] + ".",
        f"Real maximum: chunks of blocks added while the device's accounting stayed inside the "
        f"KV budget (the allocator's fixed overhead, {run['charged']:,} B, charged to the "
        f"workspace); stopped by {run['limit']}.",
        f"Peak over the start: {run['peak']:,} B against the budget {rp.budget_bytes:,} B + "
        f"{human_bytes(dev.granularity_bytes)} allocator granularity"
        + ("" if run["peak_exact"] else " (peak sampled: this kernel cannot reset VmHWM)")
        + (f"; RSS high-water mark less the {run['file_backed']:,} B of library code pages "
           "faulted in during the run (file-backed, shared: not taken from the budget)"
           if not dev.is_cuda else "") + ".",
    ]
    if config.block_size_raised:
        notes.append(f"Block size raised to {config.block_size} tokens so that one attention "
                     f"page holds a recurrent state (padding {config.state_padding_percent:.2f}%)."
                     if config.state_padding_percent is not None else
                     f"Block size raised to {config.block_size} tokens.")
    if decode.batch == 0:
        notes.append("Not one request fits in the pool: no decode step was run.")
    elif decode.context < rp.inputs.context:
        notes.append(f"Not one request of {rp.inputs.context:,} tokens fits: the decode step ran "
                     f"one request of {decode.context:,} tokens.")
    if decode.sparse_topk is not None:
        notes.append(f"Sparse attention: the indexer scores every cached key; MLA attends its "
                     f"top {decode.sparse_topk:,} tokens.")
    if decode.mla_error is not None:
        notes.append(f"MLA check on the first MLA layer, {decode.mla_requests} request(s), "
                     f"{decode.mla_heads} head(s): absorbed vs naive (up-project every latent to "
                     f"K and V) in {cd_name}; tolerance {tolerance:g}.")
    return VerifyResult(
        model=spec.id, model_name=spec.name, attention_kind=spec.kind.value,
        device=dev.name, device_name=mem.device_name, kv_dtype=st.kv_dtype,
        storage_dtype=st.description, block_size=config.block_size, tp=rp.inputs.tp,
        pp=rp.inputs.pp, context=rp.inputs.context,
        total_bytes=mem.total_bytes, free_bytes=mem.free_bytes,
        mem_fraction=mem_fraction if dev.is_cuda else None,
        budget_bytes=rp.budget_bytes, budget_source=budget_source,
        kv_budget_bytes=rp.kv_budget_bytes, decode_workspace_bytes=rp.workspace_bytes,
        page_bytes=max(plan.buffer_pages), group_size=len(plan.buffer_pages),
        num_groups=len(config.groups), slot_shape=_describe_tensors(plan, "num_blocks"),
        blocks_per_request=bpr,
        predicted_num_blocks=rp.num_blocks, predicted_bytes=predicted_bytes,
        tensor_bytes=tensor_bytes, measured_bytes=measured, measured_method=run["method"],
        difference_bytes=measured - predicted_bytes,
        difference_pct=100.0 * (measured - predicted_bytes) / predicted_bytes,
        allocator_overhead_bytes=run["overhead"],
        cuda_allocated_bytes=run["allocated"], cuda_reserved_bytes=run["reserved"],
        measured_num_blocks=measured_blocks, search_bytes=run["search_bytes"],
        search_limit=run["limit"],
        predicted_token_capacity=rp.num_blocks // len(config.groups) * config.block_size,
        measured_token_capacity=measured_blocks // len(config.groups) * config.block_size,
        predicted_max_concurrency=config.max_concurrency(rp.num_blocks),
        measured_max_concurrency=config.max_concurrency(measured_blocks),
        decode_batch=decode.batch, decode_context=decode.context,
        decode_compute_dtype=cd_name, decode_step_seconds=decode.seconds,
        decode_output_finite=decode.finite, decode_chunk_tokens=decode.chunk_tokens,
        absorbed_vs_naive_max_rel_error=decode.mla_error,
        absorbed_vs_naive_tolerance=tolerance,
        absorbed_vs_naive_ok=None if decode.mla_error is None else decode.mla_error <= tolerance,
        mla_check_requests=decode.mla_requests,
        mla_naive_seconds=decode.mla_naive_seconds,
        mla_absorbed_seconds=decode.mla_absorbed_seconds,
        peak_bytes=run["peak"], peak_limit_bytes=peak_limit, peak_ok=run["peak"] <= peak_limit,
        file_backed_growth_bytes=run["file_backed"],
        freed_ok=freed_ok, freed_residual_bytes=residual, live_tensors_after_free=live,
        rank=rp.rank, world_size=world_size, stage=rp.stage, first_layer=rp.layers.start,
        num_layers=len(rp.layers), requested_block_size=config.requested_block_size,
        state_padding_percent=config.state_padding_percent,
        mamba_cache_mode=config.mamba_cache_mode,
        kv_cache_groups=tuple(
            dict(g) for g in config.describe_groups()),
        notes=tuple(notes),
    )


def _largest_context(config: VllmKVConfig, context: int, blocks: int) -> int:
    """The longest context (<= `context`) whose one request fits in `blocks` blocks (0: none)."""
    if config.pages_per_request(1) > blocks:
        return 0
    lo, hi = 1, context
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if config.pages_per_request(mid) <= blocks:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _warm_up(dev: Device, *, torch: Any, spec: ModelSpec, st: Storage, rp: RankPlan,
             plan: PoolPlan, tp: int, gen: Any, refs: list[weakref.ref]) -> None:
    """Run the whole path once, on a pool of one short request, before the baseline, so that
    what a process pays once is not counted against the budget: the intra-op thread pool
    (a large zeroing starts it; its stacks are resident), BLAS and the CUDA context, cuBLAS's
    workspace, and on CPU the library code pages each kernel faults in on its first call (a
    fresh spawned rank faulted in ~8 MiB of them during its first decode step). The same
    kernels run on the same chunk sizes; only the context is shorter."""
    scratch = torch.empty(16 * MiB, dtype=torch.uint8, device=dev.torch_device)
    scratch.zero_()
    del scratch
    context = min(rp.inputs.context, WARM_UP_MAX_TOKENS)
    config = (rp.config if context == rp.inputs.context
              else vllm_stage_config(spec, rp.inputs, rp.layers, context))
    warm_plan = replace(plan, config=config)
    warm = Held(refs=refs)  # its tensors are checked gone with the run's
    try:
        allocate(warm_plan, config.blocks_per_request, dev.torch_device, warm)
        decode_step(warm, warm_plan, spec=spec, st=st, tp=tp, device=dev, batch=1,
                    context=context, workspace=rp.workspace_bytes, gen=gen)
    finally:
        warm.clear()
        dev.settle()


def _run(held: Held, dev: Device, *, torch: Any, spec: ModelSpec, st: Storage, rp: RankPlan,
         plan: PoolPlan, cap: int, seed: int, tp: int) -> dict[str, Any]:
    """Everything that holds tensors. Tensors live only in `held` (freed by the caller)."""
    where = dev.torch_device
    gen = torch.Generator(device=where)
    gen.manual_seed(seed)
    report("verify: warm-up")
    _warm_up(dev, torch=torch, spec=spec, st=st, rp=rp, plan=plan, tp=tp, gen=gen, refs=held.refs)
    dev.baseline()

    # 3. The pool, as the engine allocates it.
    report(f"verify: fill {rp.num_blocks:,} blocks")
    allocate(plan, rp.num_blocks, where, held)
    tensor_bytes = held.nbytes
    if tensor_bytes != rp.predicted_bytes:
        raise DeviceError(f"internal: allocated {tensor_bytes:,} B of tensors for "
                          f"{rp.predicted_bytes:,} B predicted")
    # 4. Measure.
    measured = dev.usage()
    if dev.is_cuda:
        allocated = dev.allocated() - dev.base_allocated
        reserved = dev.reserved() - dev.base_reserved
        overhead = reserved - allocated
        method = ("drop in driver free memory (torch.cuda.mem_get_info); memory_allocated "
                  f"+{allocated:,} B, memory_reserved +{reserved:,} B")
    else:
        allocated = reserved = None
        overhead = measured - tensor_bytes
        method = ("growth of the process's anonymous resident memory (/proc/self/statm "
                  "resident - shared) after every page was written")

    # 5. The real maximum, by the device's own accounting, inside the KV budget.
    def shrink(blocks: int) -> None:
        held.clear()
        dev.settle()
        allocate(plan, blocks, where, held)

    def add(blocks: int) -> list[Any]:
        return raw_tensors(plan.buffer_pages, blocks, where, held.refs)

    # The allocator's fixed overhead (per-tensor rounding, bookkeeping: it does not grow with
    # the blocks) is charged to the workspace, as vLLM charges non-torch memory outside its KV
    # budget, up to half the workspace; the blocks themselves must fit in the KV budget. The
    # search reads it at its own first reading, not from `measured`: on CPU the anonymous RSS
    # also holds the interpreter's heap, and a page it touched after `measured` (this code's
    # own objects) made the pool one block short of a budget it fits by less than a page. On
    # CUDA the meaning is unchanged: the driver's used memory holds no host heap, and nothing
    # allocates device memory between `measured` and that reading (no tensor is made there), so
    # it is the same `measured - tensor_bytes` as before.
    report("verify: search the largest pool")
    found = search_blocks(dev, pool_blocks=rp.num_blocks, block_bytes=plan.bytes_per_block,
                          budget=rp.kv_budget_bytes, shrink_pool=shrink, add_blocks=add,
                          max_charged_bytes=rp.workspace_bytes // 2)

    # 6. Use it: a decode step for a batch of requests, in the pool.
    usable = min(found.blocks, found.pool_blocks)
    bpr = rp.config.blocks_per_request
    if usable >= bpr:
        batch, ctx = max(1, min(cap, usable // bpr)), rp.inputs.context
    else:
        ctx = _largest_context(rp.config, rp.inputs.context, usable)
        batch = 1 if ctx else 0
    if batch:
        config_ctx = rp.config if ctx == rp.inputs.context else vllm_stage_config(
            spec, rp.inputs, rp.layers, ctx)
        step_plan = plan if config_ctx is rp.config else replace(plan, config=config_ctx)
        report(f"verify: decode {batch:,} x {ctx:,} tokens")
        decode = decode_step(held, step_plan, spec=spec, st=st, tp=tp, device=dev,
                             batch=batch, context=ctx, workspace=rp.workspace_bytes, gen=gen)
    else:
        decode = StepOutcome(batch=0, context=0, seconds=None, finite=True)
    dev.sync()
    report("verify: done", 1, 1)
    peak = dev.peak_usage()
    file_backed = dev.file_backed_growth()
    return {"measured": measured, "tensor_bytes": tensor_bytes, "allocated": allocated,
            "reserved": reserved, "overhead": overhead, "method": method,
            "measured_blocks": found.blocks, "limit": found.limit,
            "search_bytes": found.search_bytes, "decode": decode, "peak": peak,
            "charged": found.charged_bytes, "file_backed": file_backed,
            "peak_exact": getattr(dev, "peak_is_exact", True)}


def merge_ranks(results: list[VerifyResult]) -> VerifyResult:
    """The ranks' results as one: the rank with the fewest measured blocks at the top, the
    minimum of predicted and of measured blocks (what the ranks agree on), every rank listed."""
    ordered = sorted(results, key=lambda r: r.rank)
    worst = min(ordered, key=lambda r: (r.measured_num_blocks, r.rank))
    predicted = min(r.predicted_num_blocks for r in ordered)
    measured = min(r.measured_num_blocks for r in ordered)
    config_note = (f"{len(ordered)} ranks agree on num_blocks by the minimum over ranks "
                   f"(all_reduce MIN, as vLLM does): predicted {predicted:,}, measured "
                   f"{measured:,}; the other columns are rank {worst.rank}'s.")
    return replace(
        worst, predicted_num_blocks=predicted, measured_num_blocks=measured,
        predicted_max_concurrency=predicted / worst.blocks_per_request,
        measured_max_concurrency=measured / worst.blocks_per_request,
        peak_ok=all(r.peak_ok for r in ordered), freed_ok=all(r.freed_ok for r in ordered),
        decode_output_finite=all(r.decode_output_finite for r in ordered),
        ranks=tuple(r.rank_record() for r in ordered),
        notes=(*worst.notes, config_note) if len(ordered) > 1 else worst.notes)


__all__ += ["merge_ranks"]
