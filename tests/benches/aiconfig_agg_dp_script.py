"""A COUNTERFACTUAL for the TensorRT-LLM attention-DP rows of aiconfigurator's aggregated set
(issue 30, trtdp56): the rows the frozen bench replays (cohort aggdp55, tests.benches.
aiconfig_agg_dp) replayed again with the engine flags their InferenceX script states at the
row's date, in place of the engine defaults the frozen bench assumed. Written after the cohort's
first evaluation and after its rows' TTFT was seen (they shaped the attention-DP balance rule,
kvplan.engines.trtllm.dp_balance.AdpContextGate: tests/benches/fitted_rows.py SHAPED_BY), so
nothing here is held out and it is not the set's headline: it asks whether the scripts' flags
explain the frozen replay's misses.

Provenance: every replayed row is an InferenceX row (tests.benches.aiconfig_harness.provenance,
`image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc...`), DeepSeek-R1 NVFP4 on B200 (TP 1 x DP 8,
EP 8) and gpt-oss-120b MXFP4 on B200 (TP 1 x DP 4, EP 4). Their scripts
(SemiAnalysisAI/InferenceX; `trtllm-serve` with an --extra_llm_api_options YAML):

- benchmarks/dsr1_fp4_b200_trt.sh at 6eecc0e66 (2026-02-03 17:34 UTC, the minute the post2
  rows were measured; the post3 rows 2026-02-06; the fields below as at b30c3398a before it):
  --max_num_tokens max(8,192, (CONC + ISL + 64 + 63) // 64 x 64) (lines 73-75, 96), no
  --max_batch_size (TensorRT-LLM's 2,048), kv_cache_config dtype fp8,
  free_gpu_memory_fraction 0.8, enable_block_reuse false (53-56), attention_dp_config
  batching_wait_iters 0, enable_balance true, timeout_iters 60 (62-68).
- benchmarks/gptoss_fp4_b200_trt.sh at b30c3398a (2026-01-27; the row measured 2026-02-05):
  --max_num_tokens 20,000, --max_batch_size 512 (76, 83-85), kv_cache_config dtype fp8,
  enable_block_reuse false, free_gpu_memory_fraction 0.85 (43-46), attention_dp_config
  enable_balance true (its iteration counts TensorRT-LLM's defaults, 50 and 10; 66-67).

Not applied (kvplan does not simulate it, or it does not move the scheduler): CUDA-graph padding
(enable_padding, max_batch_size CONC / 4 under DP), the MoE backend (CUTLASS under DP), piecewise
CUDA graphs, stream_interval (the first token is sent at once: aiconfig_harness.HARNESS),
TRTLLM_MOE_A2A_WORKSPACE_MB, speculative decoding (the *_mtp.sh scripts: the rows state none).

Two workloads: the frozen bench's (aiconfig_agg_runs: a closed loop of fixed ISL / OSL, 3
requests per user, each user's first and last not measured) and InferenceX's
(aiconfig_harness_replay.workload: 10 x C requests, lengths uniform in [0.8, 1] x ISL / OSL,
every request measured; mean TTFT and TPOT). Variants, each a row's replay: `tokens` (the
script's max_num_tokens, max_batch_size and pool flags, no balance), `script` (all the flags
above), each under the bench's workload, then `script` and `tokens` under InferenceX's.

Run: python -m tests.benches.aiconfig_agg_dp_script (some minutes of CPU; one process).
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import SimSetup, setup, simulate
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmOptionsSim
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine
from kvplan.engines.trtllm.dp_balance import AdpBalance
from tests.benches import aiconfig_agg_dp
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_harness_replay as harness
from tests.benches.disagg_rows import BAND, stated_concurrency

INFERENCEX_FP4 = "6eecc0e66"  # benchmarks/dsr1_fp4_b200_trt.sh
INFERENCEX_GPTOSS = "b30c3398a"  # benchmarks/gptoss_fp4_b200_trt.sh


@dataclass(frozen=True, kw_only=True)
class ScriptFlags:
    """The flags an InferenceX TensorRT-LLM script gives one run (module docstring)."""

    script: str
    max_num_tokens: int
    max_batch_size: int | None  # None: TensorRT-LLM's default (2,048)
    mem_fraction: float  # kv_cache_config.free_gpu_memory_fraction
    kv_dtype: str  # kv_cache_config.dtype
    adp_balance: AdpBalance  # attention_dp_config, enable_balance true


def _dsr1_fp4(conc: int, isl: int) -> ScriptFlags:
    tokens = max(8192, (conc + isl + 64 + 63) // 64 * 64)
    return ScriptFlags(script=f"dsr1_fp4_b200_trt.sh@{INFERENCEX_FP4}", max_num_tokens=tokens,
                       max_batch_size=None, mem_fraction=0.8, kv_dtype="fp8",
                       adp_balance=AdpBalance(timeout_iters=60, batching_wait_iters=0))


def _gptoss_fp4(conc: int, isl: int) -> ScriptFlags:
    return ScriptFlags(script=f"gptoss_fp4_b200_trt.sh@{INFERENCEX_GPTOSS}",
                       max_num_tokens=20000, max_batch_size=512, mem_fraction=0.85,
                       kv_dtype="fp8", adp_balance=AdpBalance())


# (model, precision, system) -> the script's flags for (concurrency, ISL).
SCRIPTS: dict[tuple[str, str, str], Callable[[int, int], ScriptFlags]] = {
    ("deepseek-ai/DeepSeek-R1", "fp4", "b200_sxm"): _dsr1_fp4,
    ("openai/gpt-oss-120b", "fp4", "b200_sxm"): _gptoss_fp4,
}
VARIANTS = ("tokens", "script")
WORKLOADS = ("bench", "InferenceX")


def studied() -> list[dict[str, str]]:
    """The TensorRT-LLM attention-DP rows the frozen bench replays, in file order."""
    return [r for r in agg.rows() if r["backend"] == "trtllm" and agg.layout(r)[1] > 1
            and agg.cohort_of(r) == aiconfig_agg_dp.COHORT and not agg.why_not(r)]


def flags_of(row: dict[str, str]) -> ScriptFlags | None:
    rule = SCRIPTS.get((row["model_path"], row["precision"], row["system"]))
    conc = stated_concurrency(row)
    assert conc is not None
    return None if rule is None else rule(conc, int(row["isl"]))


def _setup(row: dict[str, str], flags: ScriptFlags, balance: bool) -> SimSetup:
    config, _, _ = agg.AGG_MODELS[(row["model_path"], row["precision"])]
    spec = agg._spec(config)
    tp, dp, _, ep = agg.layout(row)
    rank = aiconfig_agg_dp.rank_layout(row["backend"], tp, dp, 1, ep)
    isl, osl = int(row["isl"]), int(row["osl"])
    inputs = estimate_inputs(spec, context=isl + osl + agg.CONTEXT_PAD, kv_dtype=flags.kv_dtype,
                             engine=Engine(row["backend"]), gpu=agg.GPUS[row["system"]],
                             tp=rank.tp, ep=rank.ep, dp_attention=rank.dp_attention,
                             engine_version=agg.release(row),
                             max_num_batched_tokens=flags.max_num_tokens,
                             max_num_seqs=flags.max_batch_size, mem_fraction=flags.mem_fraction,
                             prefix_caching=False)
    opts = TrtllmOptionsSim(adp_balance=flags.adp_balance if balance else None)
    sim, _ = setup(inputs.spec, inputs, dp=dp, dp_attention=True, trtllm=opts)
    return sim


@dataclass(frozen=True, kw_only=True)
class Result:
    ttft_ms: float | None
    tpot_ms: float | None
    why_not: str = ""


def replay(row: dict[str, str], variant: str, workload: str) -> Result:
    flags = flags_of(row)
    if flags is None:
        return Result(ttft_ms=None, tpot_ms=None, why_not="no script read for this host")
    conc = stated_concurrency(row)
    assert conc is not None
    isl, osl = int(row["isl"]), int(row["osl"])
    try:
        sim = _setup(row, flags, balance=variant == "script")
        if workload == "bench":
            specs = [RequestSpec(arrival_s=0.0, prompt_len=isl, output_len=osl)
                     for _ in range(agg.ROUNDS * conc)]
            done = list(simulate(sim, specs, concurrency=conc).finished)
            ttft, tpot, _ = agg.steady(done, conc)
            return Result(ttft_ms=ttft, tpot_ms=tpot)
        done = list(simulate(sim, harness.workload(isl, osl, conc), concurrency=conc).finished)
    except KvplanError as e:
        return Result(ttft_ms=None, tpot_ms=None, why_not=str(e).splitlines()[0])
    ttft = statistics.fmean(r.first_token_s - r.sent_s for r in done) * 1e3
    tpot = statistics.fmean((r.finish_s - r.first_token_s) / (r.output_len - 1)
                            for r in done if r.output_len > 1) * 1e3
    return Result(ttft_ms=ttft, tpot_ms=tpot)


@cache
def results() -> dict[tuple[str, str, str], Result]:
    """(row id, variant, workload) -> its replay."""
    return {(r["id"], v, w): replay(r, v, w) for r in studied()
            for w in WORKLOADS for v in VARIANTS}


def _ratios(row: dict[str, str], res: Result) -> tuple[float, float] | None:
    if res.ttft_ms is None or res.tpot_ms is None:
        return None
    return (res.ttft_ms / float(row["silicon_ttft_ms"]),
            res.tpot_ms / float(row["silicon_tpot_ms"]))


def _inside(x: float) -> bool:
    return BAND[0] <= x <= BAND[1]


def summary_line(name: str, pairs: list[tuple[float, float] | None]) -> str:
    done = [p for p in pairs if p is not None]
    if not done:
        return f"| {name} | 0 | - | - | - | - | - |"
    return (f"| {name} | {len(done)} | {sum(_inside(a) for a, _ in done)} | "
            f"{sum(_inside(b) for _, b in done)} | "
            f"{sum(_inside(a) and _inside(b) for a, b in done)} | "
            f"{statistics.median(a for a, _ in done):.2f} | "
            f"{statistics.median(b for _, b in done):.2f} |")


def print_section() -> None:
    """The counterfactual's lines, after aiconfig_agg_flags' (tests.benches.simulate_bench)."""
    rows = [r for r in studied() if flags_of(r) is not None]
    unread = [r for r in studied() if flags_of(r) is None]
    frozen = {r.id.removeprefix(agg.PREFIX): r for r in map(agg.replay, rows)}
    res = results()
    print("\n### Counterfactual (trtdp56, read after the evaluation): TensorRT-LLM attention "
          "DP at its InferenceX script's flags\n")
    print("NOT the set's evaluation (the frozen replay above is; these rows shaped the "
          "attention-DP balance rule, SHAPED_BY c7cccdf): the TensorRT-LLM attention-DP rows "
          "the frozen bench replays, again with the flags their InferenceX script states "
          "(tests/benches/aiconfig_agg_dp_script.py: max_num_tokens, max_batch_size, the KV "
          "pool's flags, attention_dp_config enable_balance), under the bench's workload and "
          "under InferenceX's (10 x C requests, lengths uniform in [0.8, 1] x ISL / OSL, every "
          "request measured, means). `tokens`: the script's flags but the balance; `script`: "
          "all of them. Ratios are kvplan / measured. Not in it: "
          + ", ".join(f"{r['id']} ({agg.replay(r).why_not or 'replayed'})" for r in unread)
          + ".\n")
    print("| variant | replayed | TTFT inside | TPOT inside | both inside | median TTFT ratio | "
          "median TPOT ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(summary_line("frozen (the page's replay: since aggflags67 the script's flags, "
                       "bench workload)",
                       [frozen[r["id"]].ratios for r in rows]))
    for w in WORKLOADS:
        for v in VARIANTS:
            print(summary_line(f"{v}, {w} workload",
                               [_ratios(r, res[(r["id"], v, w)]) for r in rows]))
    print("\n| row | layout and load | measured TTFT / TPOT ms | frozen | "
          + " | ".join(f"{v}, {w}" for w in WORKLOADS for v in VARIANTS) + " |")
    print("|---|---|---|---|" + "---|" * (len(WORKLOADS) * len(VARIANTS)))
    for r in rows:
        f = frozen[r["id"]]
        cells = []
        for w in WORKLOADS:
            for v in VARIANTS:
                x = res[(r["id"], v, w)]
                cells.append(x.why_not or f"{x.ttft_ms:,.1f} / {x.tpot_ms:.2f}")
        print(f"| {r['id']} | {f.label} | {f.measured_ttft_ms:,.1f} / {f.measured_tpot_ms:.2f} "
              f"| " + (f"{f.ttft_ms:,.1f} / {f.tpot_ms:.2f}" if f.replayed else f.why_not)
              + " | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1:]:
        for row in [r for r in studied() if any(i in r["id"] for i in sys.argv[1:])]:
            for w in WORKLOADS:
                for v in VARIANTS:
                    print(row["id"], v, w, replay(row, v, w))
    else:
        print_section()
