"""Capacity planning: how many requests of N tokens fit on a GPU, in each engine's own terms.

Pure functions; exact integer bytes; no I/O. Three accountings of "memory fraction":

vLLM V1 (``vllm/v1/worker/gpu_worker.py: determine_available_memory``)
    kv_budget = total x gpu_memory_utilization - (weights + activation peak + non-torch memory
    [+ CUDA graphs since v0.21]). ``total`` is the device total the driver reports (H100 80GB:
    79.19 GiB), not free memory. ``--kv-cache-memory`` replaces the whole derivation.
SGLang (``python/sglang/srt/model_executor/model_runner.py: profile_max_num_token``)
    rest = free_after_weights - free_before_weights x (1 - mem_fraction_static)
         = free_before x mem_fraction_static - weights,
    where free_before is the memory free before the weights load (device total minus the CUDA
    context and anything else already resident).
TensorRT-LLM (``tensorrt_llm/_torch/pyexecutor/_util.py``: KvCacheCreator)
    kv_budget = (total - weights - activation peak) x free_gpu_memory_fraction.

Block accounting follows vLLM's ``vllm/v1/core/kv_cache_utils.py``: one page per layer of
``block_size x bytes_per_token_per_layer``; ``num_blocks = budget // page // group_size``; for
hybrid sliding-window models layers are split into groups of equal size that share one page
tensor per slot. SGLang counts tokens: ``rest // cell_size`` floored to the page size (default 1),
with its separate sliding-window and recurrent-state pools for the families that have them
(kvplan.engines.sglang.pools).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError
from kvplan._util.search import first_true
from kvplan._util.units import cdiv
from kvplan.engines.vllm.alloc import (
    VllmKVConfig,
    check_model_served,
    describe_groups,
    get_platform,
    vllm_batch_defaults,
    vllm_cached_spec,
    vllm_kv_config,
    vllm_profile,
)
from kvplan.kv.cache import check_tp, layer_caches
from kvplan.kv.kinds import FullAttentionCache, LayerCaches, RequestShape
from kvplan.model.spec import ModelSpec

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.budgets import Reserve
    from kvplan.engines.sglang.pools import SglangPool, SglangPoolSizes
    from kvplan.hardware.gpus import GPU
    from kvplan.weights.breakdown import WeightBreakdown
    from kvplan.weights.params import ParamCount


class Engine(str, Enum):
    vllm = "vllm"
    sglang = "sglang"
    trtllm = "trtllm"


# The engines' budget rules (and SGLang's pools, below) load on first use: `kvplan estimate`
# without a device needs neither, and building their dataclasses is a tenth of its start-up
# (examples/startup-bench.md).
def engine_budget(engine: Engine) -> Any:
    """The engine's budget rule (kvplan.engines.budgets.BUDGETS): its fraction, reserve and the
    inverse questions."""
    from kvplan.engines.budgets import BUDGETS

    return BUDGETS[engine.value]


# KV dtypes per engine, best quality first. fp8 only on GPUs with fp8 tensor cores (Ada, Hopper,
# Blackwell, MI300): vLLM's and SGLang's fp8 KV kernels are documented for those; kvplan does not
# plan fp8 KV on Ampere. vLLM runs no int4/nvfp4 KV cache (its --kv-cache-dtype choices are auto,
# bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc: vllm/config/cache.py CacheDType).
KV_DTYPES = {Engine.vllm: ("bf16", "fp8"), Engine.sglang: ("bf16", "fp8"),
             Engine.trtllm: ("bf16", "fp8")}


def supported_kv_dtypes(engine: Engine, gpu: GPU | None) -> tuple[str, ...]:
    dtypes = KV_DTYPES[engine]
    if gpu is not None and not gpu.peak_fp8_flops_per_s:
        dtypes = tuple(d for d in dtypes if d != "fp8")
    return dtypes


def check_kv_dtype(engine: Engine, kv_dtype: str, gpu: GPU | None) -> None:
    """Refuse, in one line, a KV dtype the engine cannot run (on this GPU)."""
    allowed = supported_kv_dtypes(engine, gpu)
    if kv_dtype in ("fp32", "fp16"):
        return  # the engines accept the model's own dtype; kvplan sizes it as asked
    if kv_dtype not in allowed:
        where = f" on {gpu.name}" if gpu is not None and kv_dtype == "fp8" else ""
        raise InputError(f"--kv-dtype: {engine.value} cannot run KV cache dtype {kv_dtype}{where} "
                         f"(supported here: {', '.join(allowed)})")


# Default block (page) size in tokens: vLLM 16 on CUDA; SGLang page_size 1; TRT-LLM
# tokens_per_block 32. MLA backends force their own (FlashMLA 64, CUTLASS MLA 128): pass it.
DEFAULT_BLOCK_SIZES = {Engine.vllm: 16, Engine.sglang: 1, Engine.trtllm: 32}

def gpu_inputs(gpu: GPU) -> dict[str, Any]:
    """The PlanInputs fields a GPU preset decides, in one place for estimate, plan and sweep."""
    from kvplan.hardware.interconnect import default_interconnect

    return {"total_bytes": gpu.total_bytes, "is_a100": gpu.is_a100,
            "smi_total_bytes": gpu.smi_total_bytes, "platform": gpu.platform,
            "nvlink": default_interconnect(gpu.name).name.startswith("nvlink"),
            "unified_memory": gpu.unified_memory}


def default_max_num_batched_tokens(total_bytes: int | None, *, is_a100: bool = False,
                                   version: str | None = None,
                                   engine: Engine = Engine.vllm) -> int:
    """vLLM's default chunked-prefill budget for `vllm serve` (EngineArgs.get_batch_defaults,
    by version and device memory: see kvplan.engines.budgets.vllm_batch_defaults); TRT-LLM's
    max_num_tokens default (8192, llm_args.py) whatever the device."""
    if engine is Engine.trtllm:
        from kvplan.engines.budgets import TRTLLM_MAX_NUM_TOKENS

        return TRTLLM_MAX_NUM_TOKENS
    return vllm_batch_defaults(total_bytes, is_a100=is_a100, version=version)[1]


def default_mem_fraction(engine: Engine, tp: int) -> float:
    """The engine's default memory fraction at TP `tp` on an unknown device (see
    kvplan.engines.budgets for the version and GPU rules)."""
    return PlanInputs(context=1, engine=engine, tp=tp).resolved_mem_fraction


def pp_layer_ranges(num_layers: int, pp: int) -> list[range]:
    """Layers per pipeline stage as vLLM splits them (``vllm/distributed/utils.py:
    get_pp_indices``): equal shares, the remainder going one each to the stages before the last."""
    if pp > num_layers:
        raise InputError(f"--pp: {pp} stages for {num_layers} layers; need at most one per layer")
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    ranges, start = [], 0
    for size in sizes:
        ranges.append(range(start, start + size))
        start += size
    return ranges


@dataclass(frozen=True, kw_only=True)
class PlanInputs:
    context: int
    kv_dtype: str = "bf16"
    block_size: int | None = None  # None: the engine's default
    tp: int = 1
    pp: int = 1
    engine: Engine = Engine.vllm
    mem_fraction: float | None = None  # None: the engine's default
    total_bytes: int | None = None  # device total; required unless kv_budget_bytes is given
    weights_bytes: int | None = None  # per GPU override
    reserve_bytes: int | None = None  # override of the activation/runtime (or preload) estimate
    kv_budget_bytes: int | None = None  # per GPU; skips the derivation
    max_num_batched_tokens: int = 8192
    shared_prefix: int = 0
    dp_attention: bool = False
    ep: int = 1  # expert-parallel ranks: routed experts whole, ceil(E / ep) per rank
    engine_version: str | None = None  # None: the newest modelled
    platform: str = "cuda"  # vLLM: cuda | rocm | cpu
    hybrid_kv_cache_manager: bool | None = None  # None: what that version does
    prefix_caching: bool | None = None  # None: that version's default (mamba cache mode)
    ssm_dtype: str = "auto"  # vLLM --mamba-ssm-cache-dtype
    speculative_method: str | None = None  # mtp | eagle | eagle3
    num_speculative_tokens: int = 0  # SGLang: --speculative-num-steps
    # SGLang's tree (kvplan.engines.sglang.pools.SglangDraft): None: topk 1 (a chain), and
    # num_draft_tokens = steps + 1, what SGLang sets with topk 1.
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    dtype: str | None = None  # compute dtype of unquantized weights (None: the engines' auto)
    max_num_seqs: int | None = None  # the engine's cap on running requests
    enforce_eager: bool = False  # vLLM / TRT-LLM: no CUDA graphs (nothing reserved for them)
    # TRT-LLM cuda_graph_config: max_batch_size (None or 0: 128) and enable_padding.
    cuda_graph_max_batch_size: int | None = None
    cuda_graph_padding: bool = False
    # vLLM V1: FlashInfer's top-k/top-p sampler ran (VLLM_USE_FLASHINFER_SAMPLER, flashinfer
    # installed); None: that release's default with the plain wheel (engines/budgets.py).
    flashinfer_sampler: bool | None = None
    # vLLM --limit-mm-per-prompt as (modality, count) pairs (unset modalities: 999; 0: that
    # modality is not profiled) and --skip-mm-profiling (no encoder profile at all).
    limit_mm_per_prompt: tuple[tuple[str, int], ...] = ()
    skip_mm_profiling: bool = False
    mm_encoder_tp_mode: str = "weights"  # vLLM --mm-encoder-tp-mode: weights | data
    is_a100: bool = False  # vLLM's batch defaults treat A100s apart
    smi_total_bytes: int | None = None  # nvidia-smi's total (SGLang sizes defaults from it)
    # The GPUs share NVLink, so vLLM's custom all-reduce runs (PCIe-only cards: it does not).
    nvlink: bool = True
    disable_custom_all_reduce: bool = False  # vLLM --disable-custom-all-reduce
    unified_memory: bool = False  # GB10: the OS's memory counts as used (TRT-LLM refuses)
    is_mla: bool = False  # SGLang reserves more for MLA's prefill CUDA graphs (set from spec)
    # A multimodal checkpoint's vision encoder (num_hidden_layers, hidden_size): SGLang lowers its
    # default fraction for it (kvplan.engines.budgets.sglang_vlm_factor); set from the spec's
    # vision tower, or given (--vision-tower).
    vision_tower: tuple[int, int] | None = None
    max_total_tokens: int | None = None  # SGLang --max-total-tokens / TRT-LLM max_tokens
    trtllm_backend: str = "pytorch"  # pytorch (blocks by version) | engine (rounded up)
    quantization: str | None = None  # load-time quantization (bitsandbytes)
    # SGLang's pools (kvplan.engines.sglang.pools); None: that version's default.
    max_mamba_cache_size: int | None = None  # --max-mamba-cache-size
    mamba_full_memory_ratio: float | None = None  # --mamba-full-memory-ratio
    swa_full_tokens_ratio: float | None = None  # --swa-full-tokens-ratio
    disable_hybrid_swa_memory: bool = False  # --disable-hybrid-swa-memory

    @property
    def resolved_block_size(self) -> int:
        """The block size asked for (vLLM may raise it for recurrent state: see the plan)."""
        if self.block_size:
            return self.block_size
        if self.engine is Engine.vllm:
            return get_platform(self.platform).default_block
        return DEFAULT_BLOCK_SIZES[self.engine]

    @property
    def resolved_mem_fraction(self) -> float:
        if self.mem_fraction is not None:
            return self.mem_fraction
        return engine_budget(self.engine).default_fraction(self)[0]

    @property
    def mem_fraction_rule(self) -> str:
        if self.mem_fraction is not None:
            return "given"
        return engine_budget(self.engine).default_fraction(self)[1]

    @property
    def kv_tp(self) -> int:
        """TP degree the KV heads are split over: 1 with data-parallel attention."""
        return 1 if self.dp_attention else self.tp


@dataclass(frozen=True, kw_only=True)
class StagePlan:
    """One pipeline stage on one GPU."""

    stage: int
    first_layer: int
    num_layers: int
    weights_bytes: int
    reserve_bytes: int
    kv_budget_bytes: int
    per_gpu_bytes_per_token: int
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
    per_gpu_bytes_per_token: int
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
    # allocated" line; kvplan.engines.sglang.pools.SglangDraft).
    draft_max_total_num_tokens: int | None = None
    draft_kv_bytes: int | None = None
    sglang_pool: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def weights_breakdown(spec: ModelSpec, *, tp: int, dtype: str | None = None,
                      quantization: str | None = None, layers: range | None = None,
                      first: bool = True, last: bool = True, dp_attention: bool = False,
                      ep: int = 1, mtp: bool = False, vision: bool = True,
                      ) -> WeightBreakdown:
    """Weights one GPU holds, as the engine loads them (kvplan.weights.breakdown): the checkpoint's
    quantization_config (or --quantization bitsandbytes), the rest in the compute dtype (--dtype,
    else the engines' auto rule: float32 is served in bf16). With data-parallel attention every
    rank holds all attention, dense-MLP, embedding and lm_head weights; only routed experts are
    split over the ranks (SGLang --enable-dp-attention, vLLM DP + EP).

    A spec loaded with its checkpoint (a folder or Hub repo with safetensors) is measured from
    the tensor headers (`checkpoint_breakdown`, source "checkpoint"): experts held whole over
    ``ep`` ranks when ``ep`` > 1, the vision tower when ``vision``, MTP layers when ``mtp``.
    Load-time bitsandbytes re-quantizes the stored weights, so it keeps the architecture
    model."""
    # The weight rules load on first use: `kvplan estimate` without a GPU never needs them.
    from kvplan.weights.breakdown import checkpoint_breakdown, engine_dtype, weight_breakdown

    quant = None
    if quantization == "bitsandbytes":
        from kvplan.weights.formats import (
            bitsandbytes_config,  # the quantized formats: for these only
        )

        quant = bitsandbytes_config()
    elif spec.quantization_json is not None:
        from kvplan.weights.formats import parse_quantization_config

        quant = parse_quantization_config(spec.quantization_config, spec.path)
    if dtype is None:
        # Legacy specs that state a quantized dtype (torch_dtype: float8) keep it for every
        # weight; a floating checkpoint dtype follows the engines' auto rule.
        dtype = spec.weight_dtype if spec.weight_dtype in ("fp8", "int8", "int4") else (
            engine_dtype(spec.weight_dtype))
    kw = {"dtype": dtype, "layers": layers, "first": first, "last": last, "vision": vision}
    if spec.checkpoint is not None and quantization != "bitsandbytes":
        return checkpoint_breakdown(spec.checkpoint, spec, quant, tp=tp, ep=ep,
                                    dp_attention=dp_attention, mtp=mtp, **kw)
    split = weight_breakdown(spec, quant, tp=tp, **kw)
    if ep > 1 and spec.moe is not None:
        # Expert parallelism (vLLM --enable-expert-parallel, SGLang --ep-size): each rank holds
        # ceil(E / ep) routed experts whole instead of a 1/tp slice of every expert
        # (vLLM FusedMoE: determine_expert_map); the busiest rank sets the memory.
        # The experts group also holds the routers, whole on every rank: from the whole model
        # (experts + routers) and a 1/ep slice (experts / ep + routers), the routed experts are
        # (whole - slice) x ep / (ep - 1).
        whole = weight_breakdown(spec, quant, tp=1, **kw)
        sliced = weight_breakdown(spec, quant, tp=ep, **kw)
        routed = (whole.experts - sliced.experts) * ep // (ep - 1)
        routed_scales = (whole.expert_scales - sliced.expert_scales) * ep // (ep - 1)
        per_rank = -(-spec.moe.n_routed_experts // ep)
        experts = (whole.experts - routed) + routed * per_rank // spec.moe.n_routed_experts
        scales = (whole.expert_scales - routed_scales) + (
            routed_scales * per_rank // spec.moe.n_routed_experts)
        split = replace(split, experts=experts, expert_scales=scales,
                        quantization_scales=split.quantization_scales - split.expert_scales
                        + scales)
    if not dp_attention or tp == 1:
        return split
    whole = weight_breakdown(spec, quant, tp=1, **kw)
    return replace(whole, experts=split.experts,
                   quantization_scales=whole.quantization_scales - whole.expert_scales
                   + split.expert_scales, expert_scales=split.expert_scales)


def _weights_bytes(spec: ModelSpec, inputs: PlanInputs, stage: range, *, pp_first: bool,
                   pp_last: bool) -> WeightBreakdown:
    return weights_breakdown(spec, tp=inputs.tp, dtype=inputs.dtype,
                             quantization=inputs.quantization, layers=stage, first=pp_first,
                             last=pp_last, dp_attention=inputs.dp_attention, ep=inputs.ep,
                             mtp=inputs.speculative_method == "mtp"
                             and inputs.engine is not Engine.sglang)


# SGLang's target model skips the MTP layers (DeepseekV3ForCausalLM); its draft worker loads them
# after the target's pool is sized (before 0.5.14: outside the budget) or before it (0.5.14+:
# kvplan then needs --weights-gib, kvplan.engines.sglang.pools.check_draft_weights_known).


def _budget(inputs: PlanInputs, weights: int, reserve: int) -> tuple[int, str]:
    """The engine's KV budget (kvplan.engines.budgets), or the one given."""
    if inputs.kv_budget_bytes is not None:
        return inputs.kv_budget_bytes, "given (--kv-budget-gib)"
    if inputs.total_bytes is None:
        raise InputError("give --gpu, --gpu-mem-gib or --kv-budget-gib to plan capacity")
    rule = engine_budget(inputs.engine)
    if inputs.reserve_bytes is None:
        rule.check_reserve_known(inputs)  # TRT-LLM refuses the engine path, unified memory
    return int(rule.kv_bytes(inputs.total_bytes, inputs.resolved_mem_fraction, weights,
                             reserve)), rule.formula


SPECULATIVE_METHODS = ("mtp", "eagle", "eagle3")


def draft_layers(spec: ModelSpec, inputs: PlanInputs) -> int:
    """KV layers a drafter adds (vLLM registers them like the target's): MTP, the model's
    num_nextn_predict_layers layers of its own kind; EAGLE / EAGLE-3, one full-attention layer."""
    method = inputs.speculative_method
    if method is None:
        if inputs.num_speculative_tokens:
            raise InputError("--num-speculative-tokens: needs --speculative-method")
        return 0
    if method not in SPECULATIVE_METHODS:
        raise InputError(f"--speculative-method: expected one of {', '.join(SPECULATIVE_METHODS)}"
                         f", got {method!r}")
    if inputs.num_speculative_tokens < 1:
        raise InputError("--num-speculative-tokens: must be >= 1 with --speculative-method")
    if method == "mtp":
        if not spec.num_nextn_predict_layers:
            raise InputError(f"--speculative-method mtp: {spec.id} has no MTP layers "
                             "(num_nextn_predict_layers is 0)")
        return spec.num_nextn_predict_layers
    return 1


def resolved_ssm_dtype(spec: ModelSpec, inputs: PlanInputs) -> str:
    """vLLM's CPU backend keeps the SSM state in float32 unless a Gated-DeltaNet model is given
    bf16/fp16 explicitly (vllm/platforms/cpu.py, AVX512-BF16 hosts)."""
    platform = get_platform(inputs.platform)
    if platform.fp32_ssm_state and spec.recurrent is not None:
        explicit_half = inputs.ssm_dtype in ("bfloat16", "float16")
        if not (explicit_half and spec.recurrent.kind == "gated_delta_net"):
            return "float32"
    return inputs.ssm_dtype


def served_spec(spec: ModelSpec, engine: Engine) -> ModelSpec:
    """The model as `engine` caches it: vLLM caches MiniCPM3's MLA decompressed
    (`vllm_cached_spec`); SGLang and TRT-LLM as the architecture says. Weights are unchanged."""
    return vllm_cached_spec(spec) if engine is Engine.vllm else spec


def _vllm_state_dtypes(spec: ModelSpec, inputs: PlanInputs) -> tuple[str | None, str]:
    return None, resolved_ssm_dtype(spec, inputs)


def _sglang_state_dtypes(spec: ModelSpec, inputs: PlanInputs) -> tuple[str | None, str]:
    from kvplan.engines.sglang.pools import sglang_state_dtypes

    return sglang_state_dtypes(spec, inputs.ssm_dtype)


def _refuse_sglang(spec: ModelSpec, inputs: PlanInputs) -> None:
    from kvplan.engines.sglang.pools import check_sglang_served

    check_sglang_served(spec, inputs)


# (conv, SSM) dtypes of the recurrent state as each engine keeps it (conv None: the model's
# compute dtype, vLLM's rule; SGLang: kvplan.engines.sglang.pools.sglang_state_dtypes).
STATE_DTYPES = {Engine.vllm: _vllm_state_dtypes, Engine.trtllm: _vllm_state_dtypes,
                Engine.sglang: _sglang_state_dtypes}


def state_dtypes(spec: ModelSpec, inputs: PlanInputs) -> tuple[str | None, str]:
    """(conv, SSM) dtypes of the recurrent state as the selected engine keeps it."""
    return STATE_DTYPES[inputs.engine](spec, inputs)


def stage_caches(spec: ModelSpec, inputs: PlanInputs, layers: range | None = None,
                 ) -> tuple[LayerCaches, ...]:
    """Every cache one rank of a pipeline stage holds (default: the whole model), as the
    engine's implementation of the model caches it (`served_spec`)."""
    spec = served_spec(spec, inputs.engine)
    conv, ssm = state_dtypes(spec, inputs)
    return layer_caches(spec, kv_dtype=inputs.kv_dtype, tp=inputs.kv_tp, layer_range=layers,
                        ssm_dtype=ssm, conv_dtype=conv,
                        num_draft_layers=draft_layers(spec, inputs),
                        num_spec_tokens=inputs.num_speculative_tokens)


def vllm_stage_config(spec: ModelSpec, inputs: PlanInputs, layers: range | None = None,
                      context: int | None = None, *,
                      caches: tuple[LayerCaches, ...] | None = None) -> VllmKVConfig:
    """vLLM's KV-cache groups for one pipeline stage (default: the whole model)."""
    check_model_served(spec.model_type, inputs.engine_version)
    if caches is None:
        caches = stage_caches(spec, inputs, layers)
    return vllm_kv_config(
        caches, context=inputs.context if context is None else context,
        profile=vllm_profile(inputs.engine_version), platform=get_platform(inputs.platform),
        block_size=inputs.block_size, hybrid_manager=inputs.hybrid_kv_cache_manager,
        prefix_caching=inputs.prefix_caching,
        max_num_batched_tokens=inputs.max_num_batched_tokens,
        num_spec_tokens=inputs.num_speculative_tokens, pp=inputs.pp)


def _refuse_trtllm(spec: ModelSpec, inputs: PlanInputs) -> None:
    """TRT-LLM pools for recurrent state, chunked attention, the sparse indexer and draft layers
    are not modelled: refuse rather than size them as attention."""
    what = None
    if spec.num_recurrent_layers:
        what = "recurrent-state layers"
    elif spec.layer_chunks:
        what = "chunked local attention"
    elif spec.indexer is not None:
        what = "the sparse-attention indexer cache"
    elif inputs.speculative_method is not None:
        what = "speculative-decoding draft layers"
    if what is not None:
        raise InputError(f"--engine {inputs.engine.value}: {spec.id} has {what}, which kvplan "
                         "models for vLLM only; use --engine vllm")


# What each engine's accounting leaves unmodelled, refused in one line (vLLM: everything here
# is modelled, kvplan.engines.vllm.alloc).
UNMODELLED = {Engine.vllm: lambda spec, inputs: None, Engine.sglang: _refuse_sglang,
              Engine.trtllm: _refuse_trtllm}


def refuse_unmodelled(spec: ModelSpec, inputs: PlanInputs) -> None:
    """Refuse, in one line, caches the selected engine's pools are not modelled for."""
    UNMODELLED[inputs.engine](spec, inputs)


def _weights_and_reserve(spec: ModelSpec, inputs: PlanInputs, counts: ParamCount,
                         stage_index: int, layers: range
                         ) -> tuple[int, int, WeightBreakdown, Reserve]:
    breakdown = _weights_bytes(spec, inputs, layers, pp_first=stage_index == 0,
                               pp_last=layers.stop == spec.num_hidden_layers)
    weights = breakdown.total if inputs.weights_bytes is None else inputs.weights_bytes
    parts = engine_budget(inputs.engine).reserve(spec, inputs)
    if inputs.reserve_bytes is not None:
        from kvplan.engines.budgets import Reserve, ReservePart

        parts = Reserve(parts=(ReservePart(name="given", bytes=inputs.reserve_bytes,
                                           rule="--reserve-gib"),))
    return weights, parts.total, breakdown, parts


def _no_cache(stage_index: int, layers: range) -> InputError:
    return InputError(f"--pp: stage {stage_index} (layers {layers.start}-{layers.stop - 1}) "
                      "holds no KV cache of its own (all its layers share an earlier "
                      "stage's or hold none); choose another --pp")


def _stage_plan(spec: ModelSpec, inputs: PlanInputs, counts: ParamCount, stage_index: int,
                layers: range, context: int) -> StagePlan:
    weights, reserve, breakdown, parts = _weights_and_reserve(spec, inputs, counts, stage_index,
                                                              layers)
    budget, _ = _budget(inputs, weights, reserve)
    pool = POOLS[inputs.engine](spec, inputs, layers, context, budget)
    if pool is None:
        raise _no_cache(stage_index, layers)
    limits = pool.pop("limits", ())
    num_blocks, shared = pool["num_blocks"], pool["shared_prefix_blocks"]
    own = pool["blocks_per_request"] - shared
    usable = num_blocks - shared
    # Every pool a request needs pages in must hold it (SGLang's sliding-window pool).
    concurrency = min([usable / own] + [have / need for have, need in limits])
    requests = min([usable // own] + [have // need for have, need in limits])
    return StagePlan(
        stage=stage_index, first_layer=layers.start, num_layers=len(layers),
        weights_bytes=weights, reserve_bytes=reserve, kv_budget_bytes=budget,
        max_concurrency=max(0.0, concurrency), max_requests=max(0, requests),
        weights_breakdown=breakdown, reserve_breakdown=parts, **pool)


def _sglang_pool(spec: ModelSpec, inputs: PlanInputs, layers: range, context: int,
                 budget: int) -> dict[str, Any] | None:
    """SGLang's pools for the stage (kvplan.engines.sglang.pools): the full-attention token
    pool in pages, with its sliding-window or recurrent-state pool beside it."""
    caches = stage_caches(spec, inputs, layers)
    from kvplan.engines.sglang.pools import sglang_pool

    pool = sglang_pool(spec, inputs, caches)
    if pool is None:
        return None
    sizes = pool.size(budget)
    page = pool.page_size
    tokens = sizes.max_total_num_tokens
    blocks = cdiv(context, page)
    return {
        "per_gpu_bytes_per_token": pool.bytes_per_token, "page_bytes": page * pool.cell,
        "group_size": 1, "num_groups": 1, "num_blocks": tokens // page,
        "blocks_per_request": blocks,
        # A shared prefix is cached once in the full pool (radix cache, whole pages).
        "shared_prefix_blocks": min(inputs.shared_prefix, context) // page,
        "token_capacity": tokens, "block_size": page, "reported_kv_cache_tokens": tokens,
        "state_bytes_per_request": getattr(pool, "per_req", 0),
        "kv_cache_groups": ({"kind": pool.kind, "groups": 1, "layers": len(layers),
                             "padding_layers": 0, "block_size": page,
                             "page_bytes": page * pool.cell, "pages_per_request": blocks},),
        "max_running_requests": sizes.max_running_requests, "sglang_sizes": sizes,
        "sglang_pool": pool, "limits": pool.extra_limits(sizes, context),
    }


@dataclass(frozen=True, kw_only=True)
class TokenPool:
    """TRT-LLM's pool on one rank: every layer that owns a cache sized as full attention
    (`cache`, kvplan.kv.kinds), all `num_layers` in one group, a block one page per layer."""

    cache: FullAttentionCache
    num_layers: int
    block_size: int

    @property
    def page_bytes(self) -> int:
        return self.cache.page_bytes(self.block_size)

    def pages_per_request(self, context: Any) -> Any:
        """Pages (blocks) one request holds at `context` (ints or numpy arrays)."""
        return self.cache.pages_per_request(context, self.block_size, RequestShape())


def token_pool(spec: ModelSpec, inputs: PlanInputs, layers: range | None = None,
               ) -> TokenPool | None:
    """TRT-LLM's pool for a stage (default: the whole model); None when it holds no cache."""
    refuse_unmodelled(spec, inputs)
    caches = [c for lc in stage_caches(spec, inputs, layers) for c in lc.caches]
    if not caches:
        return None
    return TokenPool(cache=FullAttentionCache(token_bytes=caches[0].bytes_per_token),
                     num_layers=len(caches), block_size=inputs.resolved_block_size)


def _token_pool(spec: ModelSpec, inputs: PlanInputs, layers: range, context: int,
                budget: int) -> dict[str, Any] | None:
    """TRT-LLM's pool: every layer sized as full attention, one group."""
    pool = token_pool(spec, inputs, layers)
    if pool is None:
        return None
    block_size = pool.block_size
    bytes_per_token = pool.num_layers * pool.cache.bytes_per_token
    # max_tokens from the budget (capped by the user's max_tokens), then whole blocks, rounded
    # by version / backend (kvplan.engines.budgets.TrtllmBudget.num_blocks).
    num_blocks = engine_budget(Engine.trtllm).num_blocks(inputs, budget, bytes_per_token,
                                                         block_size)
    need = pool.pages_per_request(context)
    # A shared prefix is cached once, in whole blocks (prefix caching shares full blocks only).
    shared = min(inputs.shared_prefix, context) // block_size
    tokens = num_blocks * block_size
    return {
        "per_gpu_bytes_per_token": bytes_per_token, "page_bytes": pool.page_bytes,
        "group_size": pool.num_layers, "num_groups": 1, "num_blocks": num_blocks,
        "blocks_per_request": need, "shared_prefix_blocks": shared,
        "token_capacity": tokens, "block_size": block_size, "reported_kv_cache_tokens": tokens,
        "kv_cache_groups": ({"kind": "full", "groups": 1, "layers": pool.num_layers,
                             "padding_layers": 0, "block_size": block_size,
                             "page_bytes": pool.page_bytes, "pages_per_request": need},),
    }


def _vllm_pool(spec: ModelSpec, inputs: PlanInputs, layers: range, context: int,
               budget: int) -> dict[str, Any] | None:
    """vLLM's pool: its KV-cache groups for the stage (kvplan.engines.vllm.alloc)."""
    caches = stage_caches(spec, inputs, layers)
    config = vllm_stage_config(spec, inputs, layers, context, caches=caches)
    if not config.groups:
        return None
    num_blocks = config.num_blocks(budget)
    first = config.groups[0]
    return {
        "per_gpu_bytes_per_token": sum(c.bytes_per_token for lc in caches for c in lc.caches),
        "page_bytes": first.page_bytes, "group_size": len(first.layers) + first.padding_layers,
        "num_groups": len(config.groups), "num_blocks": num_blocks,
        "blocks_per_request": config.blocks_per_request,
        # A shared prefix is cached once, in whole blocks, by the groups whose kind keeps every
        # token (full attention, MLA); windows, chunks and states are per request.
        "shared_prefix_blocks": sum(min(inputs.shared_prefix, context) // g.block_size
                                    for g in config.groups if g.cache.shares_prefix),
        # vLLM <= 0.19 logs num_blocks // num_groups x block_size as "GPU KV cache size".
        "token_capacity": num_blocks // len(config.groups) * config.block_size,
        "block_size": config.block_size, "requested_block_size": config.requested_block_size,
        "state_bytes_per_request": config.state_bytes_per_request,
        "state_padding_percent": config.state_padding_percent,
        "mamba_cache_mode": config.mamba_cache_mode,
        "kv_cache_groups": tuple(describe_groups(config)),
        "reported_kv_cache_tokens": config.reported_tokens(num_blocks, context),
    }


# Each engine's pool for one stage: the dict of StagePlan fields it decides.
POOLS = {Engine.vllm: _vllm_pool, Engine.sglang: _sglang_pool, Engine.trtllm: _token_pool}


def _check(spec: ModelSpec, inputs: PlanInputs) -> None:
    if inputs.kv_budget_bytes is None and inputs.total_bytes is None:
        raise InputError("give --gpu, --gpu-mem-gib or --kv-budget-gib to plan capacity")
    f = inputs.resolved_mem_fraction
    if not 0 < f <= 1:
        raise InputError(f"--mem-fraction: must be in (0, 1], got {f}")
    check_tp(spec, inputs.tp)
    if inputs.shared_prefix < 0:
        raise InputError("--shared-prefix: must be >= 0")
    if inputs.shared_prefix > inputs.context:
        raise InputError(f"--shared-prefix: {inputs.shared_prefix} exceeds --context "
                         f"({inputs.context})")


def plan_capacity(spec: ModelSpec, inputs: PlanInputs, *, context: int | None = None,
                  ) -> CapacityPlan:
    spec = served_spec(spec, inputs.engine)
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

    counts = count_params(spec)
    stages = tuple(
        _stage_plan(spec, inputs, counts, i, layers, context)
        for i, layers in enumerate(pp_layer_ranges(spec.num_hidden_layers, inputs.pp))
    )
    # The least-capable stage sets the answer: every request needs blocks on every stage.
    limiting = min(stages, key=lambda s: (s.max_concurrency, s.num_blocks))
    _, formula = _budget(inputs, limiting.weights_bytes, limiting.reserve_bytes)
    cap = min((c for c in (inputs.max_num_seqs, limiting.max_running_requests)
               if c is not None), default=None)
    if cap is not None and limiting.max_requests > cap:
        # The scheduler runs at most max_num_seqs requests whatever the cache holds (SGLang:
        # its max_running_requests, capped by the recurrent-state slots).
        limiting = replace(limiting, max_requests=cap)
    sizes = limiting.sglang_sizes
    dp = inputs.tp if inputs.dp_attention else 1
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
        params=counts.total,
        params_active=counts.active,
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
        max_num_batched_tokens=inputs.max_num_batched_tokens,
        shared_prefix=inputs.shared_prefix,
        limiting_stage=limiting.stage,
        stages=stages,
        engine_version=(vllm_profile(inputs.engine_version).version
                        if inputs.engine is Engine.vllm else inputs.engine_version),
        platform=inputs.platform if inputs.engine is Engine.vllm else None,
        requested_block_size=limiting.requested_block_size or inputs.resolved_block_size,
        state_bytes_per_request=limiting.state_bytes_per_request,
        state_padding_percent=limiting.state_padding_percent,
        mamba_cache_mode=limiting.mamba_cache_mode,
        kv_cache_groups=limiting.kv_cache_groups,
        reported_kv_cache_tokens=limiting.reported_kv_cache_tokens,
        weights_source="given" if inputs.weights_bytes is not None else (
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


def longest_context(spec: ModelSpec, inputs: PlanInputs, requests: int) -> int | None:
    """The longest context at which `requests` concurrent requests still fit (per GPU / DP rank);
    None if not even one token's worth fits. Capped at the model's max_position_embeddings
    (or 2^24 tokens), since sliding-window-only models never run out."""
    limit = spec.max_position_embeddings or (1 << 24)

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
    in the selected engine's meaning of the fraction. None without a device total."""
    if inputs.total_bytes is None:
        return None
    probe = replace(inputs, mem_fraction=1.0, kv_budget_bytes=None)
    worst = 0.0
    for st in plan_capacity(spec, probe).stages:
        if st.sglang_pool is not None:
            need_bytes = int(st.sglang_pool.rest_needed(requests, inputs.context,
                                                        min(inputs.shared_prefix, inputs.context)))
        else:
            own = st.blocks_per_request - st.shared_prefix_blocks
            need_bytes = (st.shared_prefix_blocks + requests * own) * st.page_bytes * \
                st.group_size
        f = engine_budget(inputs.engine).fraction_for(probe, need_bytes, st.weights_bytes,
                                                      st.reserve_bytes)
        worst = max(worst, f)
    return worst
