"""What the vLLM perf-dashboard run's server log says about its engine steps, beside kvplan's cost
model (prospective57, issue 30; gptoss58: read after the set's first evaluation, no rule or
constant changed).

The run (tests/data/sim_to_real/prospective57.json, `DASHBOARD`): vLLM 0.15.1 serving
gpt-oss-120b on 8 x H200 at TP 8, InferenceMAX's 1,024 / 1,024 client at concurrency 64. Its
server log is committed beside the client's result (benchmark/results/server.log at a106355,
removed in 29c3b07). vLLM 0.15.1's LoggingStatLogger prints every ~10 s the prompt and generation
tokens of the interval over its real length (vllm/v1/metrics/loggers.py:144-149, 192-193); a
prompt's tokens count at the step that gives its first token, a generated token at each new
token (vllm/v1/metrics/stats.py:266-270).

The record (typed in from the log, with its line numbers): the five lines of the steady window
00:23:37 -> 00:24:27, each "Running: 64 reqs, Waiting: 0 reqs". The measured decode step is the
client's median ITL (the saved JSON's median_itl_ms, 6.316953 ms: most inter-token gaps are
decode-only steps, and under async scheduling a step's tokens stream as it ends). The derivation
(`window`): at 64 tokens a step the window's generated tokens are that many steps; at the decode
step they take `decode_s`; what is left of the window's seconds is the prompt tokens' cost. Its
one assumption, 64 decoding requests in every step, makes the steps a lower bound (a step that
holds a new request's chunk decodes fewer), so the prompt tokens' share is an upper bound by at
most the chunk steps' missing decodes (under 1 % of the steps).

kvplan's side is the replay's own step cost (kvplan.analysis.simulate.run.setup's MixedStepCost):
a decode step of 64 requests at 1,536 tokens of context (mid-request), and a step of eight
1,024-token chunks beside 56 decodes, whose excess over the 56 decodes alone, per prompt token,
is its prefill cost. Nothing here is fitted; the page prints it after the prospective57 tables.

Printed by python -m tests.benches.prospective57_runs (its section of examples/simulate-bench.md).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from tests.benches.aiconfig_agg_runs import rows
from tests.benches.prospective_runs import REPO

SERVER_LOG = ("https://github.com/vllm-project/perf-dashboard/blob/"
              "a106355103423228ad31ef49555a4a2b7e173a0c/benchmark/results/server.log")
# Lines 676, 933, 1062, 1319, 1448 of SERVER_LOG (00:23:47 ... 00:24:27; the line before them,
# 547, at 00:23:37): (Avg prompt throughput, Avg generation throughput) in tokens/s.
WINDOW_LINES = (676, 933, 1062, 1319, 1448)
WINDOW_RATES = ((6552.4, 9426.6), (13105.4, 8819.8), (6552.6, 9437.5), (13105.4, 8883.0),
                (6552.9, 9503.1))
INTERVAL_S = 10.0  # the timestamps' spacing (whole seconds: 00:23:37, :47, ... 00:24:27)
RUNNING = 64  # every line of the window: "Running: 64 reqs, Waiting: 0 reqs"
# The client's saved result (prospective57.json's url): median_itl_ms 6.316953.
DECODE_STEP_MS = 6.317
PROMPT_LEN = 1024  # the run's fixed prompt length
# InferenceX's run of the same server script on 8 x H200 (vLLM 0.18.0, its gptoss_fp4_h200.sh
# at cec542a9a: line 47 `export VLLM_MXFP4_USE_MARLIN=1`, line 66 --random-range-ratio from
# .github/workflows/benchmark-tmpl.yml:67, 0.8), one of aiconfigurator's aggregated rows
# (tests.benches.aiconfig_agg_runs, held out): TP 8, 1,024 / 1,024, concurrency 64.
INFERENCEX_ROW = "2026_04_06_gpt_oss_120b_h200_sxm_vllm_fp4_agg_1024x1024_c64_tp8_ep1_295"
CHUNKS = 8  # 8 x 1,024 prompt tokens: max_num_batched_tokens 8,192
CONTEXT = 1536  # a decode's context mid-request (1,024 prompt + half the 1,024 output)


@dataclass(frozen=True, kw_only=True)
class Window:
    """The log window's work and what the measured decode step leaves for the prompts."""

    prompt_tokens: float
    generated_tokens: float
    seconds: float
    steps: float  # generated tokens at RUNNING a step
    decode_s: float  # the steps at the measured decode step

    @property
    def prompts(self) -> float:
        return self.prompt_tokens / PROMPT_LEN

    @property
    def prefill_s_per_token(self) -> float:
        """The window's seconds less its decode steps', per prompt token."""
        return (self.seconds - self.decode_s) / self.prompt_tokens


def window() -> Window:
    prompt = sum(p for p, _ in WINDOW_RATES) * INTERVAL_S
    generated = sum(g for _, g in WINDOW_RATES) * INTERVAL_S
    steps = generated / RUNNING
    return Window(prompt_tokens=prompt, generated_tokens=generated,
                  seconds=INTERVAL_S * len(WINDOW_RATES), steps=steps,
                  decode_s=steps * DECODE_STEP_MS / 1e3)


@dataclass(frozen=True, kw_only=True)
class KvplanSteps:
    """kvplan's step costs for the run, as its replay sets it up."""

    decode_s: float  # RUNNING decodes at CONTEXT
    chunk_step_s: float  # CHUNKS chunks beside RUNNING - CHUNKS decodes
    prefill_s_per_token: float  # the chunk step's excess over its decodes alone, per token
    dense_by_op: tuple[tuple[str, float], ...]  # the chunk step's token-count ops, largest first


def kvplan_steps(run: dict) -> KvplanSteps:  # type: ignore[type-arg]
    """kvplan's steps for `run` (the perf-dashboard run of prospective57.json)."""
    return _kvplan_steps(run["model"], run["gpu"], run["tp"], run["vllm"], run["max_model_len"],
                         run.get("gpu_memory_utilization"), run["async_scheduling"],
                         run.get("mxfp4_backend"))


@functools.cache
def _kvplan_steps(model: str, gpu: str, tp: int, vllm: str, max_model_len: int,
                  mem_fraction: float | None, async_scheduling: bool,
                  mxfp4_backend: str | None = None) -> KvplanSteps:
    spec = load_spec(str(REPO / model))
    # The run's forced MXFP4 kernel (prospective_runs.run_one reads it alike).
    inputs = estimate_inputs(spec, context=max_model_len, gpu=gpu, tp=tp, engine=Engine.vllm,
                             engine_version=vllm, mem_fraction=mem_fraction,
                             **({} if mxfp4_backend is None else {"mxfp4_backend": mxfp4_backend}))
    cost: MixedStepCost = setup(spec, inputs, async_scheduling=async_scheduling)[0].cost
    decodes = [CONTEXT] * (RUNNING - CHUNKS)
    chunks = [(0, PROMPT_LEN)] * CHUNKS
    mixed = cost.seconds(decode_contexts=decodes, chunks=chunks)
    alone = cost.seconds(decode_contexts=decodes, chunks=[])
    # The ops that scale with the step's tokens (MixedStepCost.dense_seconds reads the same
    # step_time), at the chunk step's token count.
    dense = step_time(cost.spec, cost.gpu, tokens=RUNNING - CHUNKS + CHUNKS * PROMPT_LEN,
                      context=1, requests=1, logits=1, layout=cost.layout, eff=cost.eff,
                      quantization=cost.quantization)
    ops = tuple(sorted(((k, v) for k, v in dense.by_op.items() if k != "attention"),
                       key=lambda kv: -kv[1]))
    return KvplanSteps(
        decode_s=cost.seconds(decode_contexts=[CONTEXT] * RUNNING, chunks=[]),
        chunk_step_s=mixed, prefill_s_per_token=(mixed - alone) / (CHUNKS * PROMPT_LEN),
        dense_by_op=ops)


def inferencex_row() -> tuple[float, float]:
    """(mean TTFT ms, mean TPOT ms) that InferenceX measured (INFERENCEX_ROW)."""
    row = next(r for r in rows() if r["id"] == INFERENCEX_ROW)
    return float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])


def log_note(run: dict, measured_ttft_ms: float,  # type: ignore[type-arg]
             simulated_ttft_ms: float) -> str:
    """The paragraph for prospective57's section (module docstring): `run` the perf-dashboard
    run, its mean TTFT as measured and as the replay simulates it."""
    w, k = window(), kvplan_steps(run)
    chunk_ms = DECODE_STEP_MS + CHUNKS * PROMPT_LEN * w.prefill_s_per_token * 1e3
    priced = w.steps * k.decode_s + w.prompt_tokens * k.prefill_s_per_token
    ops = ", ".join(f"{name} {s * 1e3:.1f} ms" for name, s in k.dense_by_op[:4])
    ix_ttft, ix_tpot = inferencex_row()
    lines = ", ".join(map(str, WINDOW_LINES))
    return (
        "The perf-dashboard server's log (read after the first evaluation, no rule changed: "
        f"{SERVER_LOG}). Start-up: line 7 the non-default args (max_num_seqs 64, "
        "max_num_batched_tokens 8,192, async scheduling, prefix caching off, "
        "max_cudagraph_capture_size 2,048); lines 33-41 'Using Marlin backend' (vLLM 0.15.1 "
        "model_executor/layers/quantization/mxfp4.py:160-162: the run's benchmark/run.sh:142 "
        "exports VLLM_MXFP4_USE_MARLIN=1, though the 0.15.1 wheel vendors triton_kernels) and "
        "lines 55-69 Marlin's warning that the GPU has no native FP4 compute, so the experts run "
        "weight-only (marlin_utils_fp4.py:336); line 36 the FLASH_ATTN backend; lines 100-101 "
        "147 piecewise CUDA graphs for mixed steps (up to 2,048 tokens) and 11 full ones for "
        f"decode. Steps: the five 10-second lines {lines} (00:23:37 -> 00:24:27, each "
        f"'Running: {RUNNING} reqs, Waiting: 0 reqs') count {w.prompt_tokens:,.0f} prompt tokens "
        f"prefilled ({w.prompts:.1f} prompts of {PROMPT_LEN:,}) and {w.generated_tokens:,.0f} "
        f"tokens generated: {w.steps:,.0f} steps at {RUNNING} tokens a step, which at the "
        f"client's median ITL ({DECODE_STEP_MS:.2f} ms, a decode-only step) take "
        f"{w.decode_s:.1f} s of the {w.seconds:.0f}, leaving {w.seconds - w.decode_s:.1f} s for "
        f"the prefill: at most {w.prefill_s_per_token * 1e6:.1f} us a prompt token (the steps' "
        "count is a floor: a step holding a chunk decodes fewer). kvplan's cost "
        f"model (the replay's) charges {k.decode_s * 1e3:.2f} ms for a decode step of "
        f"{RUNNING} requests at {CONTEXT:,} tokens of context "
        f"({k.decode_s * 1e3 / DECODE_STEP_MS - 1:+.1%}) and "
        f"{k.prefill_s_per_token * 1e6:.2f} us a prompt token in a step of {CHUNKS} "
        f"{PROMPT_LEN:,}-token chunks beside {RUNNING - CHUNKS} decodes "
        f"({w.prefill_s_per_token / k.prefill_s_per_token:.1f}x less), and prices the window's "
        f"work at {priced:.1f} s of its {w.seconds:.0f}. That chunk step's ops that scale with "
        f"its tokens, as kvplan charges them: {ops}; the routed experts are charged as "
        "Marlin's 16-bit grouped GEMMs (it dequantizes the FP4 weights; its block of rows is 64 "
        "at these sizes, fused_moe/fused_marlin_moe.py:306-308): their padded rows at the "
        "H200's mma.sync rate, the run's forced kernel since gptosshopper62 (the replay's "
        "mxfp4_backend; before it, Triton's exact FLOPs at the dense bf16 peak: 3.42 us a "
        "prompt token, 10.7 ms of experts). The log puts about "
        f"{(w.prefill_s_per_token - k.prefill_s_per_token) * CHUNKS * PROMPT_LEN * 1e3:.0f} ms "
        "more on each 8,192-token chunk than kvplan, more than its whole experts charge: either "
        "Marlin's grouped GEMMs run at a small fraction of the peak at prefill sizes on Hopper "
        "or the time is elsewhere in the chunk step; no measurement kvplan holds times them "
        "there, so no rule was written. TTFT: the client sends every request at the same "
        "lengths (run.sh, --random-range-ratio 1.0), so a round's 64 requests finish within a "
        "few decode steps of each other and their successors arrive together and queue behind "
        f"about {CHUNKS} chunk steps; the measured mean TTFT ({measured_ttft_ms:.1f} ms) is "
        f"{measured_ttft_ms / chunk_ms:.1f} of the log's chunk steps ({chunk_ms:.0f} ms each), "
        f"kvplan's ({simulated_ttft_ms:.1f} ms) {simulated_ttft_ms / (k.chunk_step_s * 1e3):.1f} "
        f"of its own ({k.chunk_step_s * 1e3:.1f} ms). InferenceX's own run of this configuration "
        "on 8 x H200 (its benchmark/single_node/gptoss_fp4_h200.sh at cec542a9a: vLLM 0.18.0, "
        "also VLLM_MXFP4_USE_MARLIN=1, but lengths drawn with --random-range-ratio 0.8), an "
        f"aggregated row held out on this page, measures "
        f"{ix_ttft:.1f} ms of mean TTFT and {ix_tpot:.2f} ms of TPOT at concurrency 64 (the "
        "aggregated bench replays it at fixed lengths).")

