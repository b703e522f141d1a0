"""`kvplan compare`: what MHA, GQA, MQA and MLA would cost for the same model (cache, FLOPs, bytes
moved, roofline time per decoded token). No ``from __future__ import annotations``: typer reads
each option from its annotation."""

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

import kvplan.cli.cost_opts as co
from kvplan.cli.common import (
    CpuAmxOpt,
    ExplainOpt,
    FormatOpt,
    ModelArg,
    PlatformOpt,
    handle_errors,
    load_spec,
)
from kvplan.cli.vocab import (
    CONCURRENCY_FLAGS,
    CONTEXT_FLAGS,
    ENGINE_AUTO,
    kv_dtype_or_auto_option,
    tokens_option,
    tokens_or_zero_option,
)
from kvplan.engines.base import DEFAULT_ENGINE
from kvplan.engines.kv_dtype import run_kv_dtype
from kvplan.hardware.interconnect import InterconnectName
from kvplan.present.render import OutputFormat, emit, warn


def compare_cmd(
    model: ModelArg,
    context: Annotated[int, typer.Option(
        *CONTEXT_FLAGS, parser=tokens_option, metavar="TOKENS",
        help="Tokens per request (decode context); 32k and 1m accepted.")] = 4096,
    batch: Annotated[int, typer.Option(
        *CONCURRENCY_FLAGS, min=1,
        help="Requests decoded at once per attention rank (per GPU with --dp-attention).")] = 1,
    groups: Annotated[int | None, typer.Option(
        "--groups", min=1, help="GQA KV heads (default 8, where 8 divides the query heads; a "
                                "value given must).")] = None,
    kv_lora_rank: Annotated[int | None, typer.Option(
        "--kv-lora-rank", min=1,
        help="MLA latent width d_c (default: the model's, else 4 x head_dim).")] = None,
    rope_dim: Annotated[int | None, typer.Option(
        "--rope-dim", min=1,
        help="MLA decoupled RoPE key width (default: the model's, else head_dim / 2).")] = None,
    kv_dtype: Annotated[str, typer.Option(
        "--kv-dtype", "--kv-cache-dtype", parser=kv_dtype_or_auto_option, metavar="DTYPE",
        help="KV-cache element type of every row: fp32, bf16, fp16, fp8, int8, int4, nvfp4 "
             "(fp8_e4m3, bfloat16 too). auto (the default): the one `kvplan estimate` takes "
             "for the model as published (vLLM's --kv-cache-dtype auto: the KV dtype the "
             "checkpoint's quantization_config declares, else the model dtype), kept for every "
             "variant so they differ in attention only.")] = ENGINE_AUTO,
    block_size: Annotated[int | None, typer.Option(
        "--block-size", min=1, help="Tokens per paged block (default: the engine's for each "
        "variant, as `kvplan estimate` takes it).")] = None,
    tp: Annotated[int, typer.Option("--tp", min=1, help="Tensor-parallel degree.")] = 1,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="GPU preset for max requests, roofline and predicted times.")] = None,
    share_layers: Annotated[int, typer.Option(
        "--share-layers", min=1,
        help="Cross-layer KV sharing (CLA): every K consecutive layers share one cache.")] = 1,
    dp_attention: Annotated[bool, typer.Option(
        "--dp-attention", help="Data-parallel attention: each of the --tp (or --ep) ranks "
                               "serves its own requests with whole attention weights.")] = False,
    ep: Annotated[int, typer.Option(
        "--ep", min=1, help="Expert-parallel ranks: routed experts spread whole over N GPUs "
                            "(an all-to-all per MoE layer where the engine runs one: vLLM only "
                            "with --dp-attention); below --tp, each expert also split over "
                            "tp / ep ranks (MoE TP x EP, no all-to-all).")] = 1,
    platform: PlatformOpt = None,
    cpu_amx: CpuAmxOpt = None,
    interconnect: Annotated[InterconnectName | None, typer.Option(
        "--interconnect", help="Scale-up link for TP/EP collectives (default: the GPU's usual "
                               "one); beyond 8 ranks (72 on GB200/GB300 NVL72), InfiniBand "
                               "NDR.")] = None,
    mtp_tokens: Annotated[int, typer.Option(
        "--mtp-tokens", parser=tokens_or_zero_option, metavar="TOKENS",
        help="Speculative (MTP) draft tokens per decode step.")] = 0,
    mtp_acceptance: Annotated[float, typer.Option(
        "--mtp-acceptance", min=0.0, max=1.0,
        help="Per-token acceptance rate of draft tokens (DeepSeek-V3: 0.85-0.9).")] = 0.85,
    fp8_attention: Annotated[bool, typer.Option(
        "--fp8-attention", help="Attention matmuls at the FP8 peak (default bf16).")] = False,
    gpu_hour_usd: Annotated[float | None, typer.Option(
        "--gpu-hour-usd", min=0.0, help="GPU price per hour: adds USD per million output "
                                        "tokens.")] = None,
    hbm_efficiency: Annotated[float | None, typer.Option(
        "--hbm-efficiency", min=0.01, max=1.0,
        help="Achievable fraction of HBM bandwidth (default: the GPU's; CUDA GPUs 0.9 from "
             "FlashMLA, MI300X 0.80 from STREAM).")] = None,
    fp8_gemm_hbm_efficiency: Annotated[float | None, typer.Option(
        "--fp8-gemm-hbm-efficiency", min=0.01, max=1.0,
        help="Achievable fraction of HBM bandwidth for FP8 GEMMs' weights at decode sizes "
             "(default: the GPU's; CUDA GPUs 0.69 from DeepGEMM on H800, MI300X 0.77 from "
             "aiter's fused MoE).")] = None,
    gemm_efficiency: Annotated[float | None, typer.Option(
        "--gemm-efficiency", min=0.01, max=1.0,
        help="Achievable fraction of the GEMM peak, bf16 and FP8 alike when given (default: "
             "the GPU's; CUDA GPUs 0.70 from DeepGEMM, MI300X 0.54 bf16 / 0.49 FP8 from AMD's "
             "max-achievable FLOPs).")] = None,
    attention_efficiency: Annotated[float | None, typer.Option(
        "--attention-efficiency", min=0.01, max=1.0,
        help="Achievable fraction of the bf16 peak in attention (default: the GPU's; "
             "FlashMLA: 0.6-0.67).")] = None,
    kernel_floor_us: Annotated[float | None, typer.Option(
        "--kernel-floor-us", min=0.0,
        help="Least time of one kernel in a CUDA/HIP graph (default: the GPU's, 4).")] = None,
    layer_overhead_us: Annotated[float, typer.Option(
        "--layer-overhead-us", min=0.0,
        help="Time per decoder layer per step beyond its itemised kernels (fitted on the "
             "dense single-GPU cases of examples/cost-bench.md: 35).")] = 35.0,
    prefill_launch_us: Annotated[float, typer.Option(
        "--prefill-launch-us", min=0.0,
        help="CPU time to launch one prefill op: 70 for SGLang, which launches prefill "
             "eagerly from Python, added to the step's GPU time for each op its model code "
             "launches (fitted on its bench_one_batch prefills, examples/cost-bench.md); 0 for "
             "vLLM and TensorRT-LLM, which launch it from CUDA graphs or a compiled "
             "engine.")] = 70.0,
    moe_gemm: co.MoeGemmOpt = None, fp8_moe_gemm: co.Fp8MoeGemmOpt = None,
    moe_gemm_by_rows: co.MoeGemmByRowsOpt = None, fp8_dense_gemm: co.Fp8DenseGemmOpt = None,
    gemm_by_shape: co.GemmByShapeOpt = False, kernel_tables: co.KernelTablesOpt = False,
    mxfp4_experts_by_width: co.Mxfp4ExpertsByWidthOpt = False,
    fmt: FormatOpt = OutputFormat.table,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Also draw each scheme's max requests (bytes per request without --gpu) "
                       "against context (PNG/SVG; needs matplotlib: kvplan\\[plot]).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --plot.")] = False,
    explain: ExplainOpt = False,
) -> None:
    """MHA, GQA, MQA and MLA side by side for one model: cache, FLOPs, bytes moved, and with
    --gpu the roofline and predicted decode/prefill time, throughput and cost."""
    with handle_errors():
        rules = co.cost_rules_of(locals())
        from kvplan.analysis.compare import compare_schemes
        from kvplan.hardware.gpus import get_gpu
        from kvplan.hardware.interconnect import get_interconnect
        from kvplan.perf.efficiency import DEFAULT_EFFICIENCY, device_efficiency
        from kvplan.perf.layout import Layout
        from kvplan.present.compare_view import compare_view
        from kvplan.present.cost_rules_view import with_cost_rules

        spec = load_spec(model)
        platform_name = None if platform is None else platform.value
        # The "as published" row's dtype is estimate's (the default engine's auto); the
        # rewritten schemes keep it, so the rows differ in attention only.
        kv_dtype, kv_dtype_note = run_kv_dtype(DEFAULT_ENGINE, spec, kv_dtype)
        if kv_dtype_note is not None:
            warn(f"kvplan: warning: {kv_dtype_note}")
        preset = get_gpu(gpu) if gpu is not None else None
        layout = Layout(tp=tp, dp_attention=dp_attention, ep=ep,
                        interconnect=None if interconnect is None
                        else get_interconnect(interconnect.value))
        # The GPU's achievable fractions (kvplan.perf.efficiency.device_efficiency), with the ones
        # given here in their place; a given --gemm-efficiency applies to FP8 GEMMs too.
        given = {"hbm": hbm_efficiency, "fp8_gemm_hbm": fp8_gemm_hbm_efficiency,
                 "gemm": gemm_efficiency, "attention": attention_efficiency,
                 "kernel_floor_s": None if kernel_floor_us is None else kernel_floor_us * 1e-6}
        overrides: dict[str, float | None] = {k: v for k, v in given.items() if v is not None}
        if gemm_efficiency is not None:
            overrides["fp8_gemm"] = None
        base = device_efficiency(preset) if preset is not None else DEFAULT_EFFICIENCY
        efficiency = replace(base, **overrides, prefill_launch_s=prefill_launch_us * 1e-6,
                             layer_overhead_s=layer_overhead_us * 1e-6)
        # The time model's opt-in rules (kvplan.perf.cost_rules) over those fractions.
        if rules.on:
            # compare prices the default engine's (vLLM's) steps.
            rules.check(engine=DEFAULT_ENGINE.value, gpu=preset)
            efficiency = rules.apply(efficiency, preset)
        comparison = compare_schemes(
            spec, context=context, kv_dtype=kv_dtype, batch=batch, groups=groups,
            kv_lora_rank=kv_lora_rank, rope_dim=rope_dim, block_size=block_size, tp=tp,
            gpu=preset, share_layers=share_layers, layout=layout, efficiency=efficiency,
            draft_tokens=mtp_tokens, acceptance=mtp_acceptance, gpu_hour_usd=gpu_hour_usd,
            fp8_attention=fp8_attention, platform=platform_name, cpu_amx=cpu_amx)
        if plot is not None:
            from kvplan.cli.plots import plot_compare

            plot_compare(plot, spec, context=context, kv_dtype=kv_dtype, tp=tp, gpu=gpu,
                         groups=8 if groups is None else groups, block_size=block_size, force=force,
                         platform=platform_name, cpu_amx=cpu_amx)
        view = compare_view(spec, comparison, context=context, batch=batch,
                            kv_dtype=kv_dtype, tp=tp, gpu=preset, share_layers=share_layers)
        # Every row at the same context and request count, under the names every command uses;
        # the opt-in cost rules on, where one is (kvplan.present.cost_rules_view).
        view = replace(view, records=[{**r, "context": context, "concurrency": batch}
                                      for r in view.records])
        emit(with_cost_rules(view, rules.records(() if preset is None else (preset,),
                                                 moe=spec.moe is not None)),
             fmt, explain=explain)
