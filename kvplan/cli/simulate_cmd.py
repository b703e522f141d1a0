"""`kvplan simulate`: serve a request stream in a simulation of the engine's scheduler over the
KV pool `estimate` computes (issue 30)."""

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

import kvplan.cli.cost_opts as co
import kvplan.cli.moe_a2a_opts as ma
import kvplan.cli.spec_opts as so
from kvplan.cli.common import (
    AllowLongContextOpt,
    ClientCost,
    CpuAmxOpt,
    DisableHybridSwaMemoryOpt,
    EngineArgOpt,
    EngineVersionOpt,
    ExplainOpt,
    FormatOpt,
    LimitMmOpt,
    MambaFullMemoryRatioOpt,
    MaxMambaCacheSizeOpt,
    ModelArg,
    Mxfp4BackendOpt,
    PlatformOpt,
    PrefixCachingOpt,
    SkipMmProfilingOpt,
    SwaFullTokensRatioOpt,
    generation_config_file,
    handle_errors,
    load_spec,
    with_keys_after,
)
from kvplan.cli.outputs import atomic_write, check_output, file_format
from kvplan.cli.vocab import (
    CONTEXT_FLAGS,
    ENGINE_AUTO,
    FABRIC_PANEL,
    HOST_STAGES_PANEL,
    LENGTH_SPREAD_PANEL,
    SGLANG_PANEL,
    TRTLLM_PANEL,
    kv_dtype_or_auto_option,
    tokens_option,
    tokens_or_off_option,
    tokens_or_zero_option,
)
from kvplan.cli.workload_opts import (
    InputLenOpt,
    NumRequestsOpt,
    OutputLenOpt,
    RangeRatioConvention,
    RateOpt,
    SeedOpt,
    SloTpotOpt,
    SloTtftOpt,
    TraceFormatOpt,
    TraceOpt,
)
from kvplan.engines.base import DEFAULT_ENGINE, Engine
from kvplan.engines.vllm.sampler import SamplingParams
from kvplan.present.progress_view import progress_shown
from kvplan.present.render import OutputFormat, emit
from kvplan.sources.files import shown_path
from kvplan.sources.generation_config import read_generation_config

PLOT_HINT = "pip install 'kvplan[plot]'"
# --plot's formats, told by the extension before the run: any other (.csv, .md, none) reached
# matplotlib's savefig after the simulation, an internal error (fuzz58).
TIMELINE_PLOT_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def simulate_cmd(
    model: ModelArg,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="GPU preset (see `kvplan gpus`): its memory sizes the KV pool and its "
                      "peaks time each step.")] = None,
    tp: Annotated[int, typer.Option("--tp", "--tensor-parallel-size", "-tp", min=1,
                                    help="Tensor-parallel degree.")] = 1,
    pp: Annotated[int, typer.Option("--pp", "--pipeline-parallel-size", min=1,
                                    help="Pipeline stages (vLLM only).")] = 1,
    dp: Annotated[int, typer.Option(
        "--dp", "--data-parallel-size", min=1,
        help="Data-parallel replicas, each its own scheduler and pool; requests dealt out "
             "round-robin.")] = 1,
    ep: Annotated[int, typer.Option(
        "--ep", min=1,
        help="Expert-parallel ranks (1, or --tp: vLLM --enable-expert-parallel; a divisor of "
             "--tp between: MoE TP x EP, each expert split over tp / ep ranks, SGLang "
             "--ep-size, TensorRT-LLM --ep_size; with --dp-attention the engine's EP over the "
             "ranks).")] = 1,
    dp_attention: Annotated[bool, typer.Option(
        "--dp-attention", "--enable-dp-attention",
        help="The --dp ranks are one MoE engine's attention data-parallel ranks, stepping in "
             "lockstep, requests dealt by the engine's balancer (vLLM --data-parallel-size "
             "with --enable-expert-parallel: --tp GPUs a rank, --ep TP x DP; TensorRT-LLM "
             "enable_attention_dp: --tp 1, --ep the ranks; SGLang --enable-dp-attention, "
             "round-robin: --dp divides --tp, --ep 1 or the TP).")] = False,
    engine: Annotated[Engine, typer.Option(
        "--engine", help="Whose scheduler to simulate: vLLM's V1, SGLang's or "
                         "TensorRT-LLM's PyTorch executor (1.0 - 1.3).")] = DEFAULT_ENGINE,
    engine_version: EngineVersionOpt = None,
    engine_arg: EngineArgOpt = None,
    platform: PlatformOpt = None,
    cpu_amx: CpuAmxOpt = None,
    limit_mm_per_prompt: LimitMmOpt = None,
    skip_mm_profiling: SkipMmProfilingOpt = False,
    kv_dtype: Annotated[str, typer.Option(
        "--kv-dtype", "--kv-cache-dtype", parser=kv_dtype_or_auto_option, metavar="DTYPE",
        help="KV-cache element type (bf16, fp8, ...). auto (the default): as `estimate` (bf16, "
             "or for vLLM the KV dtype the checkpoint's quantization_config declares).")
    ] = ENGINE_AUTO,
    max_model_len: Annotated[int | None, typer.Option(
        *CONTEXT_FLAGS, parser=tokens_option,
        metavar="TOKENS",
        help="Tokens per request at most, vLLM --max-model-len (default: the model's "
             "maximum as the engine derives it).")
    ] = None,
    max_num_seqs: Annotated[int | None, typer.Option(
        "--max-num-seqs", min=1,
        help="Running requests at most (vLLM --max-num-seqs, default 1024 or 256 by GPU; "
             "SGLang --max-running-requests, default by its pool; TensorRT-LLM "
             "max_batch_size, default 2048).")] = None,
    max_num_batched_tokens: Annotated[int | None, typer.Option(
        "--max-num-batched-tokens", min=1, parser=tokens_option, metavar="TOKENS",
        help="Token budget per step (default: vLLM's for the GPU, 8192 or 2048; "
             "TensorRT-LLM's max_num_tokens 8192).")] = None,
    prefix_caching: PrefixCachingOpt = None,
    async_scheduling: Annotated[bool | None, typer.Option(
        "--async-scheduling/--no-async-scheduling",
        help="vLLM's async scheduling (default: the version's; on from 0.14) or SGLang's "
             "or TensorRT-LLM's overlap scheduler (default on): a request arriving during a "
             "step waits one more step.")] = None,
    frontend: Annotated[bool, typer.Option(
        "--frontend", rich_help_panel=HOST_STAGES_PANEL,
        help="Simulate the server's CPU before the engine: vLLM's API server (one loop "
             "taking each request and each step's outputs, times measured with vLLM's code "
             "on one CPU: `vllm serve`'s default; --frontend adds a latency fitted on one "
             "H100 host's vLLM 0.19) or "
             "SGLang's TokenizerManager (prompts tokenized one at a time on the loop that "
             "streams the outputs, time per token measured on one CPU); a host differs.")
    ] = False,
    no_frontend: Annotated[bool, typer.Option(
        "--no-frontend", rich_help_panel=HOST_STAGES_PANEL,
        help="Leave vLLM's API server stage out (the engine alone, kvplan's default before "
             "frontdef67).")] = False,
    frontend_latency_ms: Annotated[float | None, typer.Option(
        "--frontend-latency-ms", metavar="MS", rich_help_panel=HOST_STAGES_PANEL,
        help="With vLLM's --frontend: your serving host's measured send-to-engine latency per "
             "request in place of the fitted one (tests/benches/frontlat64_measure.py; "
             "examples/simulate.md).")] = None,
    api_output: Annotated[bool, typer.Option(
        "--api-output", rich_help_panel=HOST_STAGES_PANEL,
        help="Simulate vLLM's API server loop after each step: detokenizing and streaming "
             "each request's token (time per request measured with vLLM's own code on one "
             "CPU; a serving host differs), before the tokens reach the client.")] = False,
    client_cost: Annotated[ClientCost, typer.Option(
        "--client-cost", rich_help_panel=HOST_STAGES_PANEL,
        help="With --concurrency: the benchmark client's own serial work per request "
             "(`measured`: vllm bench serve's loop, finishing each stream then sending each "
             "replacement, timed on one CPU; a benchmark host differs). One vLLM replica.")
    ] = ClientCost.none,
    engine_core_cpu: Annotated[bool | None, typer.Option(
        "--engine-core-cpu/--no-engine-core-cpu", rich_help_panel=HOST_STAGES_PANEL,
        help="Charge vLLM's engine-core CPU per step (scheduler, broadcast to the workers: "
             "time per request measured with vLLM's own code on one CPU, a serving host "
             "differs) after the GPU step, or beside it with async scheduling (default on).")
    ] = None,
    generation_config: Annotated[str | None, typer.Option(
        "--generation-config", metavar="FILE|auto", rich_help_panel=HOST_STAGES_PANEL,
        help="Charge vLLM 0.15's sampler in each step (memory-bound kernels over every "
             "request's logits: a full-vocabulary sort where top_p < 1), every request sampling "
             "with this generation_config.json's temperature / top_p / top_k, as the server "
             "fills a request that sets none (vllm bench serve from 0.15); a file with "
             "temperature 0 for a greedy client. auto: the file beside MODEL's config.json (a "
             "folder or a Hub id), as vLLM's default --generation-config auto. Off unless "
             "given (a client may send its own sampling: give that as a file).")] = None,
    moe_jit_compile_ms: Annotated[float | None, typer.Option(
        "--moe-jit-compile-ms", min=0.0, rich_help_panel=HOST_STAGES_PANEL,
        help="Stall a vLLM step this long for each Triton compile of the fused-MoE GEMM that "
             "start-up did not make (a step's tokens above the CUDA-graph sizes meeting a new "
             "config or size class; rule read in vLLM 0.15.1, 16-bit experts, H100 tables). "
             "No default: no published compile time.")] = None,
    schedule_policy: Annotated[str, typer.Option(
        "--schedule-policy", metavar="fcfs|lpm", rich_help_panel=SGLANG_PANEL,
        help="SGLang --schedule-policy (fcfs, or lpm: longest cached prefix first).")
    ] = "fcfs",
    schedule_conservativeness: Annotated[float, typer.Option(
        "--schedule-conservativeness", min=0.0, rich_help_panel=SGLANG_PANEL,
        help="SGLang --schedule-conservativeness (scales the new-token ratio).")] = 1.0,
    chunked_prefill_size: Annotated[int | None, typer.Option(
        "--chunked-prefill-size", parser=tokens_or_off_option, metavar="TOKENS",
        rich_help_panel=SGLANG_PANEL,
        help="SGLang --chunked-prefill-size (default: its for the GPU; -1: off).")] = None,
    capacity_scheduler_policy: Annotated[str, typer.Option(
        "--capacity-scheduler-policy", metavar="guaranteed_no_evict|max_utilization",
        rich_help_panel=TRTLLM_PANEL,
        help="TensorRT-LLM's capacity_scheduler_policy (default guaranteed_no_evict: a request "
             "starts only with the blocks of its prompt + max tokens free).")
    ] = "guaranteed_no_evict",
    enable_chunked_prefill: Annotated[bool, typer.Option(
        "--enable-chunked-prefill", rich_help_panel=TRTLLM_PANEL,
        help="TensorRT-LLM's enable_chunked_prefill (default off: a prompt runs whole, at "
             "most max_num_tokens).")] = False,
    max_mamba_cache_size: MaxMambaCacheSizeOpt = None,
    mamba_full_memory_ratio: MambaFullMemoryRatioOpt = None,
    swa_full_tokens_ratio: SwaFullTokensRatioOpt = None,
    disable_hybrid_swa_memory: DisableHybridSwaMemoryOpt = False,
    mem_fraction: Annotated[float | None, typer.Option(
        "--mem-fraction", "--gpu-memory-utilization", min=0.01, max=1.0,
        help="vLLM gpu_memory_utilization (default: that version's).")] = None,
    kv_budget_gib: Annotated[float | None, typer.Option(
        "--kv-budget-gib", min=0.0,
        help="KV budget per GPU in GiB (as vLLM prints 'Available KV cache memory').")] = None,
    block_size: Annotated[int | None, typer.Option(
        "--block-size", min=1, help="Tokens per KV block (default: vLLM's, 16 on CUDA).")
    ] = None,
    rate: RateOpt = None,
    arrival: Annotated[str, typer.Option(
        "--arrival", help="Arrival process with --rate: poisson, constant or gamma.")
    ] = "poisson",
    burstiness: Annotated[float, typer.Option(
        "--burstiness", min=0.001,
        help="Gamma shape with --arrival gamma (vllm bench serve --burstiness; 1 = Poisson).")
    ] = 1.0,
    concurrency: Annotated[int | None, typer.Option(
        "--concurrency", "-n", "--max-concurrency", min=1,
        help="Requests in flight at most (closed loop: the next is sent when one finishes).")
    ] = None,
    num_requests: NumRequestsOpt = None,
    max_sim_requests: Annotated[int | None, typer.Option(
        "--max-sim-requests", min=1,
        help="Bound on synthetic requests (default 2,000,000: about 0.6 ms of CPU each).")
    ] = None,
    input_len: InputLenOpt = 1024,
    output_len: OutputLenOpt = 128,
    input_len_dist: Annotated[str | None, typer.Option(
        "--input-len-dist", metavar="DIST",
        help="Prompt lengths: fixed:N, uniform:LO:HI, normal:MU:SIGMA, lognormal:MU:SIGMA.")
    ] = None,
    output_len_dist: Annotated[str | None, typer.Option(
        "--output-len-dist", metavar="DIST", help="Output lengths (as --input-len-dist).")
    ] = None,
    random_range_ratio: Annotated[float | None, typer.Option(
        "--random-range-ratio", min=0.0, max=1.0, metavar="R", rich_help_panel=LENGTH_SPREAD_PANEL,
        help="A benchmark client's random-dataset spread around --input-len / --output-len, "
             "read as --range-ratio-convention reads it.")
    ] = None,
    range_ratio_convention: Annotated[RangeRatioConvention | None, typer.Option(
        "--range-ratio-convention", rich_help_panel=LENGTH_SPREAD_PANEL,
        help="vllm: vllm bench serve, uniform in [L(1-R), L(1+R)], R < 1 (the default); "
             "vllm-legacy / sa-bench / sglang: [int(L R), L], numpy's draw at --seed.")
    ] = None,
    ignore_eos: Annotated[bool, typer.Option(
        "--ignore-eos", rich_help_panel=LENGTH_SPREAD_PANEL,
        help="The client sends every request with ignore_eos (a bench client's --ignore-eos; "
             "each request decodes its whole output either way). Only SGLang's admission "
             "reads it, with the radix cache off (--no-enable-prefix-caching, SGLang "
             "--disable-radix-cache): add_one_req_ignore_eos, no refusal at the input "
             "budget.")] = False,
    link: Annotated[str | None, typer.Option(
        "--link", metavar="NAME", rich_help_panel=FABRIC_PANEL,
        help="The fabric between nodes a TP / EP group over several NVLink domains crosses: "
             "ib-ndr (the default), ib-hdr, roce-400, roce-200 (kvplan/hardware/"
             "kv_links.json, as plan --rate --link).")] = None,
    prefix_len: Annotated[int, typer.Option(
        "--prefix-len", parser=tokens_or_zero_option, metavar="TOKENS",
        help="Tokens of one prefix every prompt starts with.")] = 0,
    seed: SeedOpt = 0,
    speculative_method: so.SimSpecMethodOpt = None,
    num_speculative_tokens: so.SimSpecTokensOpt = 0,
    speculative_eagle_topk: so.SimSpecTopkOpt = None,
    spec_mean_accept_len: so.SpecMeanAcceptLenOpt = None,
    spec_acceptance_rate: so.SpecAcceptanceRateOpt = None,
    spec_draft_config: so.SpecDraftConfigOpt = None,
    trace: TraceOpt = None,
    trace_format: TraceFormatOpt = None,
    trace_block_tokens: Annotated[int, typer.Option(
        "--trace-block-tokens", parser=tokens_option, metavar="TOKENS",
        help="Tokens per Mooncake hash id (512 in the FAST25 traces).")] = 512,
    tokenizer: Annotated[Path | None, typer.Option(
        "--tokenizer", help="tokenizer.json counting ShareGPT tokens (needs 'tokenizers').")
    ] = None,
    slo_ttft_ms: SloTtftOpt = None,
    slo_tpot_ms: SloTpotOpt = None,
    timeline: Annotated[Path | None, typer.Option(
        "--timeline", help="Write KV usage, running and waiting requests per step (CSV).")
    ] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Draw the timeline (PNG/SVG/PDF; needs matplotlib: kvplan[plot]).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --timeline / --plot.")
                     ] = False,
    mxfp4_backend: Mxfp4BackendOpt = None,
    moe_a2a_backend: ma.MoeA2aBackendOpt = None, deepep_mode: ma.DeepepModeOpt = None,
    moe_dense_tp_size: ma.MoeDenseTpOpt = None, enable_dp_lm_head: ma.DpLmHeadOpt = False,
    moe_gemm: co.MoeGemmOpt = None, fp8_moe_gemm: co.Fp8MoeGemmOpt = None,
    moe_gemm_by_rows: co.MoeGemmByRowsOpt = None, fp8_dense_gemm: co.Fp8DenseGemmOpt = None,
    ungraphed_launch_us: co.UngraphedLaunchOpt = None, gemm_by_shape: co.GemmByShapeOpt = False,
    kernel_tables: co.KernelTablesOpt = False,
    mxfp4_experts_by_width: co.Mxfp4ExpertsByWidthOpt = False,
    fmt: FormatOpt = OutputFormat.table,
    explain: ExplainOpt = False,
    allow_long_context: AllowLongContextOpt = False,
) -> None:
    """Simulate the engine's scheduler serving requests over the KV pool `estimate` computes,
    steps timed by the cost model: TTFT, TPOT, ITL, E2E percentiles, throughput, preemptions,
    KV use, prefix hits, goodput (examples/simulate.md)."""
    from kvplan.analysis.inputs import estimate_inputs
    from kvplan.analysis.simulate.client_loop import VLLM_BENCH_CLIENT_COST
    from kvplan.analysis.simulate.dp_lockstep import dp_attention_layout
    from kvplan.analysis.simulate.engine_args import EngineSettings, with_engine_args
    from kvplan.analysis.simulate.run import setup, simulate
    from kvplan.analysis.simulate.sglang_scheduler import POLICIES, SglangOptionsSim
    from kvplan.analysis.simulate.trtllm_scheduler import POLICIES as TRTLLM_POLICIES
    from kvplan.analysis.simulate.trtllm_scheduler import TrtllmOptionsSim
    from kvplan.analysis.simulate.workload import WorkloadOptions, requests_from
    from kvplan.present.cost_rules_view import with_cost_rules
    from kvplan.present.simulate_view import simulate_view, timeline_csv, write_timeline_plot

    with handle_errors():
        if frontend and no_frontend:
            from kvplan._util.errors import InputError

            raise InputError("simulate --frontend and --no-frontend: give one of them")
        rules = co.cost_rules_of(locals())
        rules.check(engine=engine.value)
        moe_a2a = ma.moe_a2a_options(locals(), engine.value)
        spec = load_spec(model)
        gen_file = (None if generation_config is None
                    else generation_config_file(generation_config, model))
        outputs = [(o, p) for o, p in (("--timeline", timeline), ("--plot", plot)) if p]
        inputs_files = tuple(p for p in (trace, tokenizer) if p is not None)
        plot_fmt = None if plot is None else file_format("--plot", str(plot),
                                                         TIMELINE_PLOT_FORMATS)
        for option, path in outputs:
            check_output(option, path, force=force, inputs=inputs_files)
        if plot is not None:
            import importlib.util

            if importlib.util.find_spec("matplotlib") is None:
                from kvplan._util.errors import InputError

                raise InputError(f"--plot: needs matplotlib: {PLOT_HINT}")
        from kvplan.engines.context import check_context, default_context

        context = max_model_len or default_context(spec, engine)
        if context is None:
            from kvplan._util.errors import InputError

            raise InputError("--max-model-len: the model's maximum length is unknown; give it")

        check_context(spec, context, engine=engine, allow_long=allow_long_context,
                      option="--max-model-len")
        requests = requests_from(WorkloadOptions(
            num_requests=num_requests, max_requests=max_sim_requests, rate=rate,
            arrival=arrival, burstiness=burstiness,
            concurrency=concurrency, input_len=input_len, output_len=output_len,
            input_len_dist=input_len_dist, output_len_dist=output_len_dist,
            random_range_ratio=random_range_ratio,
            range_ratio_convention=None if range_ratio_convention is None
            else range_ratio_convention.value,
            prefix_len=prefix_len, seed=seed, trace=None if trace is None else str(trace),
            trace_format=trace_format, trace_block_tokens=trace_block_tokens,
            tokenizer=None if tokenizer is None else str(tokenizer)))
        rank_tp, rank_dp_attention, rank_ep, rank_dp = tp, False, ep, None
        if dp_attention:
            lay = dp_attention_layout(engine.rules, tp=tp, dp=dp, ep=ep)
            rank_tp, rank_dp_attention, rank_ep = lay.tp, lay.dp_attention, lay.ep
            rank_dp = lay.attention_dp_size
        elif ep > tp or tp % ep:
            from kvplan._util.errors import InputError

            raise InputError(f"--ep {ep}: 1, the --tp degree ({tp}) or a divisor of it between "
                             "(MoE TP x EP) is simulated (or --dp-attention)")
        if schedule_policy not in POLICIES:
            from kvplan._util.errors import unknown_choice

            raise unknown_choice("--schedule-policy", POLICIES, schedule_policy)
        if capacity_scheduler_policy not in TRTLLM_POLICIES:
            from kvplan._util.errors import unknown_choice

            raise unknown_choice("--capacity-scheduler-policy", TRTLLM_POLICIES,
                                 capacity_scheduler_policy)
        # kvplan's own options, then the engine's flags (--engine-arg) over them.
        settings = with_engine_args(EngineSettings(
            max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens,
            prefix_caching=prefix_caching, async_scheduling=async_scheduling, **moe_a2a,
            trtllm=TrtllmOptionsSim(chunked_prefill=enable_chunked_prefill,
                                    policy=capacity_scheduler_policy),
            sglang=SglangOptionsSim(chunked_prefill_size=chunked_prefill_size,
                                    schedule_conservativeness=schedule_conservativeness,
                                    schedule_policy=schedule_policy, ignore_eos=ignore_eos)),
            engine, engine_arg or (), engine_version)
        given = {k: v for k, v in settings.estimate_options().items()
                 if k in (*ma.KEYS, "reserve_full_isl")}
        if speculative_eagle_topk is not None:  # a tree is refused before it is sized
            from kvplan.engines.sglang.spec_decode import check_chain

            check_chain(speculative_eagle_topk)
        inputs = estimate_inputs(
            spec, context=context, kv_dtype=kv_dtype,
            engine=engine, gpu=gpu, tp=rank_tp, pp=pp, ep=rank_ep,
            dp_attention=rank_dp_attention, attention_dp_size=rank_dp,
            mem_fraction=mem_fraction, kv_budget_gib=kv_budget_gib, block_size=block_size,
            max_num_batched_tokens=settings.max_num_batched_tokens,
            max_num_seqs=settings.max_num_seqs, **given,
            engine_version=engine_version, prefix_caching=settings.prefix_caching,
            speculative_method=None if speculative_method is None else speculative_method.value,
            num_speculative_tokens=num_speculative_tokens,
            **({} if speculative_eagle_topk is None
               else {"speculative_eagle_topk": speculative_eagle_topk}),
            platform=None if platform is None else platform.value,
            cpu_amx=cpu_amx, limit_mm_per_prompt=limit_mm_per_prompt,
            skip_mm_profiling=skip_mm_profiling, max_mamba_cache_size=max_mamba_cache_size,
            mamba_full_memory_ratio=mamba_full_memory_ratio,
            swa_full_tokens_ratio=swa_full_tokens_ratio,
            disable_hybrid_swa_memory=disable_hybrid_swa_memory,
            mxfp4_backend=None if mxfp4_backend is None else mxfp4_backend.value,
            cost_rules=rules if rules.on else None)
        if link is not None:  # the fabric between nodes (kvplan.hardware.kv_links)
            from kvplan.hardware.kv_links import scale_out_link

            inputs = replace(inputs, scale_out=scale_out_link(link))
        acceptance = None
        if speculative_method is not None or spec_mean_accept_len is not None or (
                spec_acceptance_rate is not None):
            from kvplan.analysis.simulate.spec_acceptance import Acceptance

            if speculative_method is None or inputs.capacity is None:
                from kvplan._util.errors import InputError

                raise InputError("simulate --spec-mean-accept-len / --spec-acceptance-rate: "
                                 "needs --speculative-method (and --gpu)")
            acceptance = Acceptance.of(k=inputs.capacity.num_speculative_tokens,
                                       mean_accept_len=spec_mean_accept_len,
                                       rates=so.parse_rates(spec_acceptance_rate))
        sim, notes = setup(spec, inputs, dp=dp, async_scheduling=settings.async_scheduling,
                           acceptance=acceptance, spec_seed=seed,
                           draft_config=so.draft_config(spec_draft_config),
                           frontend=frontend, dp_attention=dp_attention, api_output=api_output,
                           default_frontend=not no_frontend,
                           trtllm=settings.trtllm,
                           sampling=(None if gen_file is None else SamplingParams.resolve(
                               {}, read_generation_config(gen_file),
                               source=shown_path(gen_file))),
                           moe_jit_compile_s=(None if moe_jit_compile_ms is None
                                              else moe_jit_compile_ms / 1e3),
                           sglang=settings.sglang, engine_core_cpu=engine_core_cpu,
                           frontend_latency_s=(None if frontend_latency_ms is None
                                               else frontend_latency_ms / 1e3),
                           client_cost=(VLLM_BENCH_CLIENT_COST
                                        if client_cost is ClientCost.measured else None))
        if inputs.kv_dtype_note is not None:
            notes = [*notes, inputs.kv_dtype_note]
        if settings.applied:
            notes = [*notes, "engine flags: " + ", ".join(a.text for a in settings.applied)]
        with progress_shown():
            result = simulate(sim, requests, concurrency=concurrency, slo_ttft_ms=slo_ttft_ms,
                              slo_tpot_ms=slo_tpot_ms, timeline=bool(timeline or plot))
        name = inputs.gpu.name if inputs.gpu is not None else str(gpu)
        view = simulate_view(result, model=model, gpu=name, notes=notes,
                             spec=inputs.spec)
        # The context and the closed-loop request count under every command's names.
        view = replace(view, records=with_keys_after(view.records, "max_model_len",
                                                     context=context, concurrency=concurrency))
        if frontend_latency_ms is not None:  # where --frontend's latency came from
            view = replace(view, records={**view.records, "frontend_latency": {
                "ms": frontend_latency_ms, "source": "user-supplied (--frontend-latency-ms)"}})
        if settings.applied:  # the engine's flags as applied (only where given)
            view = replace(view, records={**view.records,
                                          "engine_args": settings.applied_dicts()})
        # The cost rules asked for, and the experts' default table where it prices this model.
        view = with_cost_rules(view, rules.records(
            () if inputs.gpu is None else (inputs.gpu,), moe=spec.moe is not None))
        if timeline is not None:
            text = timeline_csv(result)
            atomic_write("--timeline", timeline,
                         lambda tmp: tmp.write_text(text, encoding="utf-8"), inputs=inputs_files)
        if plot is not None:
            atomic_write("--plot", plot,
                         lambda tmp: write_timeline_plot(result, tmp, view.title,
                                                         plot_fmt or "png"),
                         inputs=inputs_files)
        emit(view, fmt, explain=explain)
