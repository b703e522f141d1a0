"""PlanInputs from what a user asked for: the one place that builds them for `estimate`, `plan`,
`sweep` and `compare`.

`build_inputs` is the constructor every caller goes through: what a GPU preset decides (device
total, A100, nvidia-smi total, platform, NVLink, unified memory: `capacity.plan.gpu_inputs`), the
fields given over it, and the engine's default chunked-prefill budget for that device when none
is given. `estimate_inputs` turns `kvplan estimate`'s options (GiB figures, a GPU name, option
strings) into the PlanInputs it sizes and plans with, checking the combinations the engines
refuse. Pure: no typer, no rich, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError
from kvplan._util.units import GiB, gib_to_bytes
from kvplan.engines.base import (
    DEFAULT_ENGINE,
    Engine,
    PlanInputs,
    default_max_num_batched_tokens,
    gpu_inputs,
    plan_inputs,
)
from kvplan.engines.kv_dtype import run_kv_dtype
from kvplan.engines.moe_layout import check_moe_tp_x_ep
from kvplan.model.spec import ModelSpec

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.hardware.gpus import GPU
    from kvplan.hardware.interconnect import Interconnect
    from kvplan.perf.cost_rules import CostRules


def build_inputs(*, context: int, gpu: GPU | None = None, engine: Engine = DEFAULT_ENGINE,
                engine_version: str | None = None, max_num_batched_tokens: int | None = None,
                **fields: Any) -> PlanInputs:
    """PlanInputs for requests of `context` tokens on `gpu` (None: no preset): the preset's
    fields, then `fields` (any other PlanInputs field) over them; without
    `max_num_batched_tokens`, the engine's default for the device total and version (vLLM's
    `vllm serve` batch defaults, TensorRT-LLM's max_num_tokens)."""
    given = {**(gpu_inputs(gpu) if gpu is not None else {}), **fields}
    if max_num_batched_tokens is None:
        max_num_batched_tokens = default_max_num_batched_tokens(
            given.get("total_bytes"), is_a100=given.get("is_a100", False),
            version=engine_version, engine=engine, capability=given.get("compute_capability"))
    return plan_inputs(context=context, engine=engine, engine_version=engine_version,
                       max_num_batched_tokens=max_num_batched_tokens, **given)


def platform_fields(platform: str | None, cpu_amx: bool | None) -> dict[str, Any]:
    """--platform and --cpu-amx as PlanInputs fields, only those given: otherwise the GPU
    preset's platform (`gpu_inputs`), else PlanInputs' cuda, and the host's AMX unknown. Every
    command that sizes a vLLM pool takes them through here (estimate, check, plan, compare,
    sweep, simulate)."""
    return {name: value for name, value in (("platform", platform), ("cpu_amx", cpu_amx))
            if value is not None}


def mm_fields(limit_mm_per_prompt: str | None, skip_mm_profiling: bool = False
              ) -> dict[str, Any]:
    """--limit-mm-per-prompt (parsed as vLLM takes it) and --skip-mm-profiling as PlanInputs
    fields: vLLM's options, which every command that sizes a multimodal vLLM pool takes through
    here (estimate, plan, plan --rate, simulate)."""
    out: dict[str, Any] = {}
    if limit_mm_per_prompt is not None:
        from kvplan.engines.vllm.mm import parse_mm_limits

        out["limit_mm_per_prompt"] = parse_mm_limits(limit_mm_per_prompt)
    if skip_mm_profiling:
        out["skip_mm_profiling"] = True
    return out


def parse_vision_tower(text: str | None) -> tuple[int, int] | None:
    """--vision-tower LAYERS,HIDDEN (two positive ints), or None."""
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"--vision-tower: expected LAYERS,HIDDEN (e.g. 27,1152), got {text!r}")
    return int(parts[0]), int(parts[1])


def hybrid_manager_choice(mode: str, disable: bool) -> bool | None:
    """vLLM's hybrid KV-cache manager: --hybrid-kv-cache-manager auto | on | off, and
    --disable-hybrid-kv-cache-manager; None: what that version does."""
    if disable:
        if mode == "on":
            raise InputError("--disable-hybrid-kv-cache-manager contradicts "
                             "--hybrid-kv-cache-manager on")
        return False
    return {"auto": None, "on": True, "off": False}[mode]


def speculative_tokens(engine: Engine, method: str | None, tokens: int) -> int:
    """Draft tokens per step: as given, or with a method and none given, the engine's default
    (vLLM 1; SGLang's NEXTN steps); without a method, none may be given."""
    if method is None:
        if tokens:
            raise InputError("--num-speculative-tokens: needs --speculative-method")
        return 0
    return tokens or engine.rules.default_speculative_tokens()


# SGLang's MoE all-to-all settings (SglangOptions; kvplan.engines.sglang.deepep).
_A2A_FIELDS = ("moe_a2a_backend", "deepep_mode", "moe_dense_tp_size", "enable_dp_lm_head")


@dataclass(frozen=True, kw_only=True)
class EstimateInputs:
    """What `kvplan estimate` sizes and plans with."""

    spec: ModelSpec
    """The model as the engine's implementation caches it (EngineRules.served_spec)."""
    sizing: PlanInputs
    """The KV table's inputs: one replica over `tp` ranks, no device budget."""
    capacity: PlanInputs | None
    """With --gpu, --gpu-mem-gib or --kv-budget-gib: the capacity plan's inputs; else None."""
    gpu: GPU | None
    """The --gpu preset, if one was named."""
    device: str
    """How the capacity table names the device ("H100-80GB, 79.19 GiB driver-reported")."""
    kv_dtype_note: str | None = None
    """With no --kv-dtype given: the line saying the checkpoint chose the KV dtype, if it did."""
    cost_rules: CostRules | None = None
    """The time model's opt-in rules asked for (kvplan.perf.cost_rules); None: none."""
    node_gpus: int | None = None
    """GPUs of one host where the deployment says (plan --rate --gpus-per-node): the time
    model's NVLink domain is no larger (kvplan.perf.layout.domain_gpus); None: the preset's."""
    scale_out: Interconnect | None = None
    """The fabric between NVLink domains (plan --rate --link: kvplan.hardware.kv_links.
    scale_out_link); None: the layout's default (ib-ndr)."""


def estimate_inputs(
    spec: ModelSpec, *, context: int, kv_dtype: str | None = "bf16",
    engine: Engine = DEFAULT_ENGINE,
    gpu: str | None = None, gpu_mem_gib: float | None = None, platform: str | None = None,
    cpu_amx: bool | None = None,
    weights_gib: float | None = None, reserve_gib: float | None = None,
    kv_budget_gib: float | None = None, kv_cache_memory: int | None = None,
    expert_parallel: bool = False, ep: int | None = None, hybrid_manager: str = "auto",
    disable_hybrid: bool = False,
    disable_radix_cache: bool = False, limit_mm_per_prompt: str | None = None,
    vision_tower: str | None = None, block_size: int | None = None, tp: int = 1, pp: int = 1,
    mem_fraction: float | None = None, max_num_batched_tokens: int | None = None,
    shared_prefix: int = 0, dp_attention: bool = False, max_num_seqs: int | None = None,
    engine_version: str | None = None, speculative_method: str | None = None,
    num_speculative_tokens: int = 0, cost_rules: CostRules | None = None,
    **engine_options: Any,
) -> EstimateInputs:
    """`kvplan estimate`'s options as PlanInputs. The options named here need converting or
    checking (GiB to bytes, a GPU name, --kv-cache-memory vs --kv-budget-gib, the speculative
    and prefix-caching flags, --limit-mm-per-prompt and --vision-tower text); `engine_options`
    are PlanInputs fields, passed on as given. `kv_dtype` None or ENGINE_AUTO: the engine's
    default (kvplan.engines.kv_dtype.run_kv_dtype: vLLM's is the checkpoint's declared KV dtype,
    else the model dtype). `ep`: the expert-parallel ranks (1, the TP degree, a divisor of it
    between: MoE TP x EP, where the engine launches it, kvplan.engines.moe_layout; or above the
    TP group: vLLM's EP over TP x DP); None: the TP degree with `expert_parallel`, else 1.
    `cost_rules`: the time model's opt-in rules (kvplan.perf.cost_rules), kept for the steps
    the simulator and the offload tiers time; None: none."""
    if ep is None:
        ep = tp if expert_parallel else 1
    elif expert_parallel and ep == 1:
        raise InputError("--expert-parallel and --ep 1: give one")
    check_moe_tp_x_ep(engine.rules, spec, tp=tp, ep=ep, version=engine_version)
    if gpu is not None and gpu_mem_gib is not None:
        raise InputError("--gpu and --gpu-mem-gib: give one, not both")
    if kv_cache_memory is not None:
        if kv_budget_gib is not None:
            raise InputError("--kv-cache-memory and --kv-budget-gib: give one, not both")
        kv_budget_gib = kv_cache_memory / GiB
    preset = None
    if gpu is not None:
        from kvplan.hardware.gpus import get_gpu  # imported (and read) when a GPU is named

        preset = get_gpu(gpu)
    kv_dtype, kv_dtype_note = run_kv_dtype(engine, spec, kv_dtype, engine_version, preset)
    if speculative_method is not None:
        num_speculative_tokens = speculative_tokens(engine, speculative_method,
                                                    num_speculative_tokens)
    if speculative_method is None and (engine_options.get("speculative_eagle_topk") or
                                       engine_options.get("speculative_num_draft_tokens")):
        raise InputError("--speculative-eagle-topk / --speculative-num-draft-tokens: need "
                         "--speculative-method")
    options = {
        "engine_version": engine_version, **platform_fields(platform, cpu_amx),
        "hybrid_kv_cache_manager": hybrid_manager_choice(hybrid_manager, disable_hybrid),
        **engine_options,
        "speculative_method": speculative_method,
        "num_speculative_tokens": num_speculative_tokens,
        "vision_tower": parse_vision_tower(vision_tower),
        **mm_fields(limit_mm_per_prompt),
    }
    if disable_radix_cache:
        if options.get("prefix_caching"):
            raise InputError("--disable-radix-cache and --enable-prefix-caching: give one")
        options["prefix_caching"] = False
    if max_num_batched_tokens is None:
        total = preset.total_bytes if preset is not None else (
            None if gpu_mem_gib is None else gib_to_bytes(gpu_mem_gib))
        max_num_batched_tokens = default_max_num_batched_tokens(
            total, is_a100=preset is not None and preset.is_a100, version=engine_version,
            engine=engine, capability=preset.compute_capability if preset is not None else None)
    common = {"context": context, "kv_dtype": kv_dtype, "block_size": block_size, "tp": tp,
              "engine": engine, "gpu": preset, "max_num_batched_tokens": max_num_batched_tokens,
              **options}
    # The KV table sizes one replica: no device total, stages or budget overrides, nor the MoE
    # all-to-all settings, which need the capacity's layout (DP attention, EP) and change the
    # weights a rank keeps, not the KV (kvplan.engines.sglang.deepep).
    sizing = build_inputs(**{k: v for k, v in common.items() if k not in _A2A_FIELDS},
                          total_bytes=None)
    # As the engine's implementation caches it on that device at that KV dtype (vLLM: MiniCPM3's
    # MLA decompressed, DeepSeek's sparse attention's fp8 row on SM 10.x).
    spec = engine.rules.served_spec(spec, sizing)
    if preset is not None:
        total = preset.total_bytes
        device = (f"{preset.name}, {total / GiB:.2f} GiB "
                  + ("driver-reported" if preset.reported_total_bytes else "nominal"))
    elif gpu_mem_gib is not None:
        total = gib_to_bytes(gpu_mem_gib)
        device = f"{gpu_mem_gib:g} GiB device"
    elif kv_budget_gib is not None:
        total, device = None, "given KV budget"
    else:
        return EstimateInputs(spec=spec, sizing=sizing, capacity=None, gpu=None, device="",
                              kv_dtype_note=kv_dtype_note, cost_rules=cost_rules)
    capacity = build_inputs(
        **common, total_bytes=total, pp=pp, mem_fraction=mem_fraction,
        weights_bytes=None if weights_gib is None else gib_to_bytes(weights_gib),
        reserve_bytes=None if reserve_gib is None else gib_to_bytes(reserve_gib),
        kv_budget_bytes=None if kv_budget_gib is None else gib_to_bytes(kv_budget_gib),
        shared_prefix=shared_prefix, dp_attention=dp_attention,
        ep=ep, max_num_seqs=max_num_seqs)
    if cost_rules is not None:
        cost_rules.check(engine=engine.value, gpu=preset)
    return EstimateInputs(spec=spec, sizing=sizing, capacity=capacity, gpu=preset, device=device,
                          kv_dtype_note=kv_dtype_note, cost_rules=cost_rules)
