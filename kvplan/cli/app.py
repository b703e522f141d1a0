"""Typer commands. Each one parses its options, calls the pure core and emits a View.

Errors: domain code raises KvplanError; `handle_errors` (cli/common.py) turns it into one line
on stderr and exit code 2 (bad input) or 1 (runtime failure).

No ``from __future__ import annotations`` here (nor in plan_cmd / verify_cmd): string annotations
typer evaluates twice, 11 ms on `estimate`'s options (examples/startup-bench.md).
"""

import contextlib
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand

import kvplan.cli.cost_opts as co
import kvplan.cli.moe_a2a_opts as ma
import kvplan.cli.offload_opts as oo
from kvplan._util.dtypes import KVDType
from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan.analysis.answers import estimate_headline
from kvplan.analysis.estimate_run import run_estimate
from kvplan.analysis.inputs import estimate_inputs
from kvplan.cli.common import (
    AllowLongContextOpt,
    CpuAmxOpt,
    DisableHybridOpt,
    DisableHybridSwaMemoryOpt,
    DTypeOpt,
    EngineVersionOpt,
    ExplainOpt,
    FormatOpt,
    GpuMemGibOpt,
    HybridManager,
    HybridManagerOpt,
    KVDTypeOpt,
    KvplanCommand,
    KvplanGroup,
    KvTransferOpt,
    LimitMmOpt,
    MambaFullMemoryRatioOpt,
    MaxMambaCacheSizeOpt,
    MaxNumBatchedTokensOpt,
    MaxNumSeqsOpt,
    MmEncoderTpMode,
    ModelArg,
    Mxfp4BackendOpt,
    PlatformOpt,
    PrefixCachingOpt,
    QuantizationOpt,
    ReserveGibOpt,
    SkipMmProfilingOpt,
    SpecMethodOpt,
    SpecTokensOpt,
    StateDType,
    StateDTypeOpt,
    SwaFullTokensRatioOpt,
    TorchCommand,
    TrtllmBackend,
    WeightDType,
    WeightsGibOpt,
    defer_warning,
    handle_errors,
    load_spec,
    with_keys_after,
)
from kvplan.cli.help_cmd import first_sentence
from kvplan.cli.outputs import atomic_write, check_output
from kvplan.cli.vocab import (
    CONCURRENCY_FLAGS,
    CONTEXT_FLAGS,
    ENGINE_AUTO,
    SGLANG_PANEL,
    TRTLLM_PANEL,
    VLLM_PANEL,
    kv_dtype_or_auto_option,
    tokens_option,
    tokens_or_zero_option,
)
from kvplan.engines.base import (
    DEFAULT_ENGINE,
    Engine,
)
from kvplan.engines.context import above_max_record, context_refusal
from kvplan.present.answers import estimate_answer
from kvplan.present.capacity_view import capacity_summary_view, capacity_view
from kvplan.present.cost_rules_view import with_cost_rules
from kvplan.present.estimate_view import estimate_summary, estimate_view
from kvplan.present.offload_view import with_offload
from kvplan.present.render import OutputFormat, emit, warn
from kvplan.sources.files import shown_path
from kvplan.sources.resolve import load_bundled_specs


def _version(value: bool) -> None:
    if value:
        from kvplan._util.version import __version__

        sys.stdout.write(f"kvplan {__version__}\n")
        raise typer.Exit(0)


def _root(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Print kvplan's version and exit.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display on stderr "
                                        "(also after the command).")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Every table column, whatever the "
                                       "terminal's width (also after the command).")] = False,
) -> None:
    """Plan LLM inference KV-cache memory: per token, per block, per request, per GPU."""

def specs_cmd(
    kv_dtype: KVDTypeOpt = KVDType.bf16,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """List the bundled model specs with their attention kind and KV bytes per token."""
    from kvplan.present.catalog_view import specs_view

    with handle_errors():
        emit(specs_view(load_bundled_specs(), kv_dtype=kv_dtype.value), fmt)


def engines_cmd(fmt: FormatOpt = OutputFormat.table) -> None:
    """List the engine profiles (--engine-version) and what changes between versions."""
    from kvplan.present.catalog_view import engines_view

    with handle_errors():
        emit(engines_view(), fmt)


def gpus_cmd(fmt: FormatOpt = OutputFormat.table) -> None:
    """List the GPU presets: memory, reported total, bandwidth and dense peak FLOP/s."""
    from kvplan.hardware.gpus import GPUS
    from kvplan.present.catalog_view import gpus_view

    with handle_errors():
        emit(gpus_view(list(GPUS.values())), fmt)


def estimate_cmd(
    model: ModelArg,
    context: Annotated[int, typer.Option(
        *CONTEXT_FLAGS, parser=tokens_option,
        metavar="TOKENS", help="Tokens per request (prompt + output); 32k and 1m accepted "
                               "(vLLM --max-model-len, SGLang --context-length).")] = 4096,
    concurrency: Annotated[int | None, typer.Option(
        *CONCURRENCY_FLAGS, min=1,
        help="Concurrent requests (default 1): their KV cache; with a GPU or KV budget, also "
             "the longest context and the memory fraction they need.")] = None,
    kv_dtype: Annotated[str, typer.Option(
        "--kv-dtype", "--kv-cache-dtype", parser=kv_dtype_or_auto_option, metavar="DTYPE",
        help="KV-cache element type: fp32, bf16, fp16, fp8, int8, int4, nvfp4; the engines' "
             "spellings too (fp8_e4m3, fp8_e5m2, bfloat16). auto (the default): the engine's "
             "own, i.e. the model dtype (bf16; fp16 for a float16 checkpoint), or for vLLM the "
             "KV dtype the checkpoint's quantization_config declares.")] = ENGINE_AUTO,
    block_size: Annotated[int | None, typer.Option(
        "--block-size", "--page-size", min=1,
        help="Tokens per paged block (SGLang --page-size). Default: the engine's (vLLM 16 on "
             "CUDA, 128 on CPU; SGLang 1; TRT-LLM 32); vLLM raises it for recurrent state.")
    ] = None,
    tp: Annotated[int, typer.Option(
        "--tp", "--tensor-parallel-size", "-tp", min=1,
        help="Tensor-parallel degree (sizes are per GPU).")] = 1,
    pp: Annotated[int, typer.Option("--pp", "--pipeline-parallel-size", min=1,
                                    help="Pipeline-parallel stages.")] = 1,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="GPU preset: plan capacity on it (H100-80GB, H200, A100-80GB, MI300X, "
                      "...; see `kvplan gpus`).",
    )] = None,
    gpu_mem_gib: GpuMemGibOpt = None,
    engine: Annotated[Engine, typer.Option(
        "--engine", help="Whose memory-fraction accounting to follow.")] = DEFAULT_ENGINE,
    mem_fraction: Annotated[float | None, typer.Option(
        "--mem-fraction", "--gpu-memory-utilization", "--mem-fraction-static", min=0.0, max=1.0,
        help="Memory fraction: vLLM gpu_memory_utilization (0.92; 0.9 before 0.20) / SGLang "
             "mem_fraction_static "
             "(0.88 at TP1) / "
             "TRT-LLM free_gpu_memory_fraction (0.9).")] = None,
    weights_gib: WeightsGibOpt = None,
    reserve_gib: ReserveGibOpt = None,
    kv_budget_gib: Annotated[float | None, typer.Option(
        "--kv-budget-gib", min=0.0,
        help="KV budget per GPU in GiB, as vLLM prints 'Available KV cache memory'; skips the "
             "derivation.")] = None,
    kv_cache_memory: Annotated[int | None, typer.Option(
        "--kv-cache-memory", min=1,
        help="KV budget per GPU in bytes (vLLM's --kv-cache-memory); like --kv-budget-gib.")
    ] = None,
    max_num_seqs: MaxNumSeqsOpt = None,
    max_num_batched_tokens: MaxNumBatchedTokensOpt = None,
    shared_prefix: Annotated[int, typer.Option(
        "--shared-prefix", "--shared-prefix-tokens", parser=tokens_or_zero_option, metavar="TOKENS",
        help="Tokens of a prefix cached once, shared by all requests (whole blocks).")] = 0,
    dp_attention: Annotated[bool, typer.Option(
        "--dp-attention", help="Data-parallel attention: each of the --tp ranks holds only its "
                               "own requests' KV (SGLang --enable-dp-attention).")] = False,
    dp_size: Annotated[int | None, typer.Option(
        "--dp-size", rich_help_panel=SGLANG_PANEL, min=1,
        help="SGLang --dp-size with --dp-attention: D ranks of --tp / D GPUs each, the KV "
             "heads split over them (default: --tp ranks of one GPU).")] = None,
    disable_custom_all_reduce: Annotated[bool, typer.Option(
        "--disable-custom-all-reduce", rich_help_panel=VLLM_PANEL,
        help="vLLM without its custom all-reduce: TP ranks hold no "
        "all-reduce IPC buffers (also the case on PCIe-only GPUs).")] = False,
    expert_parallel: Annotated[bool, typer.Option(
        "--enable-expert-parallel", help="Expert parallelism over the --tp ranks (vLLM "
        "--enable-expert-parallel): each rank holds ceil(experts / tp) routed experts whole "
        "instead of a 1/tp slice of every one.")] = False,
    engine_version: EngineVersionOpt = None,
    platform: PlatformOpt = None,
    cpu_amx: CpuAmxOpt = None,
    hybrid_manager: HybridManagerOpt = HybridManager.auto,
    disable_hybrid: DisableHybridOpt = False,
    kv_transfer: KvTransferOpt = False,
    prefix_caching: PrefixCachingOpt = None,
    ssm_dtype: StateDTypeOpt = StateDType.auto,
    speculative_method: SpecMethodOpt = None,
    num_speculative_tokens: SpecTokensOpt = 0,
    speculative_eagle_topk: Annotated[int | None, typer.Option(
        "--speculative-eagle-topk", rich_help_panel=SGLANG_PANEL, min=1,
        help="SGLang: draft branches per step (default 1, a chain; then num_draft_tokens = "
             "steps + 1).")] = None,
    speculative_num_draft_tokens: Annotated[int | None, typer.Option(
        "--speculative-num-draft-tokens", rich_help_panel=SGLANG_PANEL,
        parser=tokens_option, metavar="TOKENS",
        help="SGLang: tokens verified per step (needed with --speculative-eagle-topk > 1).")
    ] = None,
    vision_tower: Annotated[str | None, typer.Option(
        "--vision-tower", rich_help_panel=SGLANG_PANEL, metavar="LAYERS,HIDDEN",
        help="SGLang: a multimodal checkpoint's vision_config num_hidden_layers,hidden_size "
             "(SGLang lowers its default fraction for it; Gemma-3's SigLIP is read from the "
             "spec).")] = None,
    dtype: DTypeOpt = WeightDType.auto,
    quantization: QuantizationOpt = None,
    mxfp4_backend: Mxfp4BackendOpt = None,
    enforce_eager: Annotated[bool, typer.Option(
        "--enforce-eager", rich_help_panel=VLLM_PANEL,
        help="vLLM without CUDA graphs (TRT-LLM: cuda_graph_config null): "
        "nothing reserved for them.")] = False,
    cuda_graph_max_batch_size: Annotated[int | None, typer.Option(
        "--cuda-graph-max-batch-size", rich_help_panel=TRTLLM_PANEL, min=1,
        help="TRT-LLM cuda_graph_config.max_batch_size: the largest decode batch captured "
             "(default 128).")] = None,
    cuda_graph_padding: Annotated[bool, typer.Option(
        "--cuda-graph-padding", rich_help_panel=TRTLLM_PANEL,
        help="TRT-LLM cuda_graph_config.enable_padding: capture 1, 2, "
        "4 and multiples of 8 (default off: 1-31, 32, 64, 128).")] = False,
    flashinfer_sampler: Annotated[bool | None, typer.Option(
        "--flashinfer-sampler/--no-flashinfer-sampler", rich_help_panel=VLLM_PANEL,
        help="vLLM V1: FlashInfer's top-k/top-p sampler ran (VLLM_USE_FLASHINFER_SAMPLER, "
             "flashinfer installed) or not; default: that release's with the plain wheel "
             "(PyTorch sort to 0.16, Triton 0.17-0.21, FlashInfer from 0.22).")] = None,
    limit_mm_per_prompt: LimitMmOpt = None,
    skip_mm_profiling: SkipMmProfilingOpt = False,
    mm_encoder_tp_mode: Annotated[MmEncoderTpMode, typer.Option(
        "--mm-encoder-tp-mode", rich_help_panel=VLLM_PANEL,
        help="vLLM: the vision encoder split over TP ranks (weights) or whole on each rank, the "
             "profile's items dealt out (data).")] = MmEncoderTpMode.weights,
    ep_num_redundant_experts: Annotated[int, typer.Option(
        "--ep-num-redundant-experts", rich_help_panel=SGLANG_PANEL, min=0, metavar="N",
        help="SGLang: N more physical experts a MoE layer under expert parallelism, "
             "(experts + N) / EP a rank, their weights out of the KV pool.")] = 0,
    max_total_tokens: Annotated[int | None, typer.Option(
        "--max-total-tokens", rich_help_panel=SGLANG_PANEL,
        min=1, parser=tokens_option, metavar="TOKENS",
        help="SGLang --max-total-tokens / TRT-LLM max_tokens: a cap on the pool in tokens.")
    ] = None,
    trtllm_backend: Annotated[TrtllmBackend, typer.Option(
        "--trtllm-backend", rich_help_panel=TRTLLM_PANEL,
        help="TensorRT-LLM backend: pytorch (budget derived, blocks rounded "
        "by --engine-version) or engine (TensorRT engines: blocks rounded up; needs "
        "--reserve-gib or --kv-budget-gib).")] = TrtllmBackend.pytorch,
    max_mamba_cache_size: MaxMambaCacheSizeOpt = None,
    mamba_full_memory_ratio: MambaFullMemoryRatioOpt = None,
    swa_full_tokens_ratio: SwaFullTokensRatioOpt = None,
    disable_hybrid_swa_memory: DisableHybridSwaMemoryOpt = False,
    disable_radix_cache: Annotated[bool, typer.Option(
        "--disable-radix-cache", rich_help_panel=SGLANG_PANEL,
        help="SGLang without its prefix cache (alias of --no-enable-prefix-caching): a "
             "running request takes one recurrent-state slot, not three.")] = False,
    kv_offloading_size: oo.KvOffloadingSizeOpt = None,
    kv_offloading_backend: oo.KvOffloadingBackendOpt = oo.OffloadBackend.native,
    lmcache_chunk_size: oo.LmcacheChunkOpt = 256, lmcache_cpu_gib: oo.LmcacheCpuOpt = None,
    lmcache_disk_gib: oo.LmcacheDiskOpt = None, hierarchical_cache: oo.HicacheOpt = False,
    hicache_ratio: oo.HicacheRatioOpt = 2.0, hicache_size: oo.HicacheSizeOpt = 0.0,
    hicache_storage_backend: oo.HicacheStorageOpt = None,
    host_cache_size: oo.HostCacheOpt = None, host_mem_gib: oo.HostMemOpt = None,
    host_link: oo.HostLinkOpt = None, disk_read_gbps: oo.DiskReadOpt = None,
    prefix_hit_rate: oo.PrefixHitOpt = 0.0,
    moe_a2a_backend: ma.MoeA2aBackendOpt = None, deepep_mode: ma.DeepepModeOpt = None,
    moe_dense_tp_size: ma.MoeDenseTpOpt = None, enable_dp_lm_head: ma.DpLmHeadOpt = False,
    moe_gemm: co.MoeGemmOpt = None, fp8_moe_gemm: co.Fp8MoeGemmOpt = None,
    moe_gemm_by_rows: co.MoeGemmByRowsOpt = None, fp8_dense_gemm: co.Fp8DenseGemmOpt = None,
    gemm_by_shape: co.GemmByShapeOpt = False, kernel_tables: co.KernelTablesOpt = False,
    mxfp4_experts_by_width: co.Mxfp4ExpertsByWidthOpt = False,
    fmt: FormatOpt = OutputFormat.table,
    explain: ExplainOpt = False,
    allow_long_context: AllowLongContextOpt = False,
) -> None:
    """KV-cache size per token, per layer, per paged block, per sequence and for a batch;
    with --gpu, --gpu-mem-gib or --kv-budget-gib, also how many requests fit on one GPU."""
    with handle_errors():
        # The time model's opt-in rules: estimate times only the offload tiers' recompute.
        rules = co.cost_rules_of(locals())
        inputs = estimate_inputs(
            load_spec(model), context=context, engine=engine, gpu=gpu,
            kv_dtype=kv_dtype,
            gpu_mem_gib=gpu_mem_gib, platform=None if platform is None else platform.value,
            weights_gib=weights_gib, reserve_gib=reserve_gib, kv_budget_gib=kv_budget_gib,
            kv_cache_memory=kv_cache_memory, expert_parallel=expert_parallel,
            hybrid_manager=hybrid_manager.value, disable_hybrid=disable_hybrid,
            disable_radix_cache=disable_radix_cache, limit_mm_per_prompt=limit_mm_per_prompt,
            vision_tower=vision_tower, block_size=block_size, tp=tp, pp=pp,
            mem_fraction=mem_fraction, max_num_batched_tokens=max_num_batched_tokens,
            shared_prefix=shared_prefix, dp_attention=dp_attention, max_num_seqs=max_num_seqs,
            attention_dp_size=dp_size, engine_version=engine_version,
            speculative_method=None if speculative_method is None else speculative_method.value,
            num_speculative_tokens=num_speculative_tokens,
            # PlanInputs fields, as given:
            prefix_caching=prefix_caching, ssm_dtype=ssm_dtype.value, cpu_amx=cpu_amx,
            kv_transfer=kv_transfer, speculative_eagle_topk=speculative_eagle_topk,
            speculative_num_draft_tokens=speculative_num_draft_tokens,
            dtype=None if dtype is WeightDType.auto else dtype.value,
            quantization=None if quantization is None else quantization.value,
            enforce_eager=enforce_eager, cuda_graph_max_batch_size=cuda_graph_max_batch_size,
            cuda_graph_padding=cuda_graph_padding, flashinfer_sampler=flashinfer_sampler,
            mxfp4_backend=None if mxfp4_backend is None else mxfp4_backend.value,
            skip_mm_profiling=skip_mm_profiling, mm_encoder_tp_mode=mm_encoder_tp_mode.value,
            disable_custom_all_reduce=disable_custom_all_reduce,
            max_total_tokens=max_total_tokens, trtllm_backend=trtllm_backend.value,
            ep_num_redundant_experts=ep_num_redundant_experts,
            max_mamba_cache_size=max_mamba_cache_size,
            mamba_full_memory_ratio=mamba_full_memory_ratio,
            swa_full_tokens_ratio=swa_full_tokens_ratio,
            disable_hybrid_swa_memory=disable_hybrid_swa_memory,
            cost_rules=rules if rules.on else None, **ma.moe_a2a_options(locals(), engine.value))
        if inputs.kv_dtype_note is not None:
            warn(f"kvplan: warning: {inputs.kv_dtype_note}")
        ask = oo.offload_ask(**{k: v for k, v in locals().items() if k in oo.ASK_KEYS})
        if rules.on and (ask is None or not ask.asked):
            raise InputError(f"{rules.records()[0]['option']}: estimate prices time only for "
                             "the offload tiers' recompute (--kv-offloading-size, "
                             "--enable-hierarchical-cache, --host-cache-size, ...); plan, "
                             "compare and simulate price every step")
        answer = run_estimate(inputs, batch=concurrency or 1,
                              requests=None if inputs.capacity is None else concurrency,
                              offload=ask,
                              on_warning=lambda message: warn(f"kvplan: warning: {message}"))
        view = estimate_view(inputs.spec, answer.estimate)
        # A context the engine refuses to start with: computed all the same (estimate is the
        # calculator; its --context defaults to 4,096 whatever the model), said on stderr
        # unless --allow-long-context, and recorded under "above_max_context".
        above = above_max_record(inputs.spec, context, engine)
        if above is not None:
            if not allow_long_context:
                warn("kvplan: warning: " + context_refusal(inputs.spec, context, engine))
            view = replace(view, records={**view.records, "above_max_context": above})
        # "batch" kept; "concurrency" is the same count under the name every command uses.
        view = replace(view, records=with_keys_after(view.records, "batch",
                                                     concurrency=answer.estimate.batch))
        line = estimate_answer(estimate_headline(
            answer, device=None if inputs.gpu is None else inputs.gpu.name))
        if answer.plan is None:
            emit(replace(view, answer=line, summary=estimate_summary(inputs.spec, view)), fmt,
                 explain=explain)
            return
        cap = capacity_view(inputs.spec, answer.plan, device=inputs.device,
                            reverse=answer.reverse)
        if answer.plan.max_requests == 0:
            warn(f"kvplan: warning: not one request of {context:,} tokens fits in the KV budget "
                 f"({answer.plan.kv_budget_bytes / GiB:.2f} GiB per GPU)")
        summary = capacity_summary_view(inputs.spec, answer.plan, device=inputs.device,
                                        est=answer.estimate, reverse=answer.reverse)
        emit(with_cost_rules(with_offload(
            replace(view, records={**view.records, **cap.records}, more=(*view.more, cap),
                    answer=line, summary=summary), answer.offload), rules.records(
                        () if inputs.gpu is None or answer.offload is None else (inputs.gpu,),
                        moe=inputs.spec.moe is not None)),
             fmt, explain=explain)


def import_cmd(
    config: Annotated[str, typer.Argument(
        help="A HuggingFace config.json, or a folder holding one (local files only).")],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write the spec YAML here (default: stdout).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --output if it exists.")
                     ] = False,
) -> None:
    """Convert a HuggingFace config.json into a kvplan spec YAML to review and edit."""
    with handle_errors():
        from kvplan.sources.hf_config import spec_mapping_from_config, spec_yaml_text
        from kvplan.sources.hf_files import read_config
        from kvplan.sources.spec_yaml import parse_spec

        data, shown = read_config(Path(config))
        mapping, warnings = spec_mapping_from_config(data, path=shown)
        parse_spec(mapping, path=shown, spec_id=mapping.get("model_type", "model"))  # validate
        text = spec_yaml_text(mapping, warnings)
        target = None if output is None else Path(output)
        if target is not None:  # refuse before printing anything
            check_output("--output", target, force=force, inputs=[Path(shown)])
        for w in warnings:
            defer_warning(f"kvplan: warning: {w}")
        if target is None:
            sys.stdout.write(text)
            return
        atomic_write("--output", target, lambda tmp: tmp.write_text(text, encoding="utf-8"),
                     force=force, inputs=[Path(shown)])
        warn(f"kvplan: wrote {shown_path(target)}")


# Every command, in `kvplan --help`'s order: name -> the function, or "module:function" for a
# command in a module of its own (imported only when that command runs or is listed), and its
# click class (None: KvplanCommand, whose numeric flags are finite and bounded).
COMMANDS: dict[str, tuple[Callable[..., None] | str, type[TyperCommand] | None]] = {
    "specs": (specs_cmd, None),
    "engines": (engines_cmd, None),
    "gpus": (gpus_cmd, None),
    "models": ("kvplan.cli.models_cmd:models_cmd", None),
    "estimate": (estimate_cmd, None),
    "compare": ("kvplan.cli.compare_cmd:compare_cmd", None),
    "import": (import_cmd, None),
    "plan": ("kvplan.cli.plan_cmd:plan_cmd", None),
    "report": ("kvplan.cli.report_cmd:report_cmd", None),
    "verify": ("kvplan.cli.verify_cmd:verify_cmd", TorchCommand),  # how to install torch if absent
    "sweep": ("kvplan.cli.sweep_cmd:sweep_cmd", None),
    "check": ("kvplan.cli.check_cmd:check_cmd", None),
    "simulate": ("kvplan.cli.simulate_cmd:simulate_cmd", None),
    "help": ("kvplan.cli.help_cmd:help_cmd", None),  # every command's options in full
}


def make_app(only: str | None = None) -> typer.Typer:
    """The kvplan app: every command, or with `only` just that one (`main` runs one command and
    should not import the others' modules, nor have typer build their parameters)."""
    import importlib

    built = typer.Typer(
        cls=KvplanGroup,  # one-line usage errors (cli/common.py); --help stays rich
        no_args_is_help=True,
        add_completion=True,  # --install-completion / --show-completion (typer)
        pretty_exceptions_enable=False,
        help="Plan LLM inference KV-cache memory: per token, per block, per request, per GPU.",
    )
    built.callback()(_root)
    for name, (function, cls) in COMMANDS.items():
        if only is not None and name != only:
            continue
        if isinstance(function, str):
            module, attr = function.split(":")
            function = getattr(importlib.import_module(module), attr)
        built.command(name, cls=cls or KvplanCommand,
                      short_help=first_sentence(function.__doc__ or ""))(function)
    return built


def __getattr__(name: str) -> typer.Typer:  # `from kvplan.cli.app import app`: every command
    if name == "app":
        globals()["app"] = full = make_app()
        return full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """The `kvplan` entry point. Usage errors are one line (KvplanGroup); here stdout's own
    failures are handled: a closed pipe (`kvplan specs | head -1`) ends quietly, a full disk is
    one line and exit 1, a terminal that cannot encode a character gets '?' instead, and any
    other unexpected error is one line too (KVPLAN_DEBUG=1 shows the traceback)."""
    import errno
    import os

    debug = os.environ.get("KVPLAN_DEBUG") == "1"
    for stream in (sys.stdout, sys.stderr):
        if (getattr(stream, "encoding", None) or "").lower().replace("-", "") != "utf8":
            with contextlib.suppress(Exception):
                stream.reconfigure(errors="replace")  # type: ignore[union-attr]
    try:
        try:
            make_app(_command_named(sys.argv[1:] if argv is None else argv))(
                args=argv, prog_name="kvplan")
        finally:
            sys.stdout.flush()
    except SystemExit:
        raise
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(1)
    except OSError as exc:
        if debug:
            raise
        _silence_stdout()
        where = "stdout" if exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT) else "kvplan"
        sys.stderr.write(f"kvplan: error: {where}: {exc.strerror or exc}\n")
        sys.exit(1)
    except KeyboardInterrupt:
        sys.stderr.write("kvplan: error: interrupted\n")
        sys.exit(130)
    except MemoryError:  # past a bound the user lifted (--max-points): a runtime failure
        if debug:
            raise
        sys.stderr.write("kvplan: error: out of memory (a smaller input, or an output that is "
                         "streamed: see examples/errors.md)\n")
        sys.exit(1)
    except (RecursionError, Exception) as exc:  # a bug: still one line
        if debug:
            raise
        sys.stderr.write(f"kvplan: error: internal error: {exc.__class__.__name__}: "
                         f"{' '.join(str(exc).split())[:300]} (KVPLAN_DEBUG=1 shows the "
                         "traceback; please report it)\n")
        sys.exit(1)


def _command_named(argv: list[str]) -> str | None:
    """The command the first word names, if any: `kvplan`, `kvplan --help`, `kvplan --version`
    and a misspelt command get every command (the listing, typer's "No such command" and its
    suggestions)."""
    words = [a for a in argv if a not in ("--wide", "--quiet", "-q")]
    # `kvplan help COMMAND` reads the other commands' options: it gets every command.
    return words[0] if words and words[0] in COMMANDS and words[0] != "help" else None


def _silence_stdout() -> None:
    """After stdout failed, point it at /dev/null so the interpreter's final flush is quiet."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
