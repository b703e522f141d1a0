"""The benchmark client and frontend each prospective disaggregated row ran behind
(disaggwhy59; the rules: kvplan.analysis.simulate.bench_client, kvplan.engines.dynamo_frontend).

The SGLang and TensorRT-LLM rows of disagg-bench sections 3a-3k are InferenceX runs
(aiconfigurator 095f58a5 sdk/config_adapter/inferencex.py), which InferenceX launches through
srt-slurm (SemiAnalysisAI/InferenceX runners/launch_gb200-nv.sh: srtctl apply of the recipe,
srt-slurm branch sa-submission-q1-2026): the client is the recipe's `benchmark: type:
"sa-bench"` (every TensorRT-LLM recipe read at 75f6e32a; the SGLang recipes of
tests/data/disagg/srt_slurm_sglang_recipes.json likewise) and the frontend srt-slurm's Dynamo
frontends behind nginx (their `frontend: type: dynamo`, or the default "dynamo" where the
recipe names none: srt-slurm core/schema.py FrontendConfig).

A public run whose point states its `vllm bench serve` --num-prompts (prospdis65's Anyscale runs:
run_bm.sh at 04ba8ab4 passes 5 x C at --max-concurrency C, --request-rate 1e9) is replayed with
that client (`VLLM_BENCH_SERVE`, kvplan.analysis.simulate.bench_client.vllm_bench_serve: every
request averaged, the first burst included), as prospective57's collocated runs of the same
repository are (kvplan simulate's closed loop averages every request); before raypd65 it took
the simulation's default (four rounds, the first and last not averaged).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace

from kvplan.analysis.simulate.bench_client import (
    BenchClient,
    genai_perf,
    sa_bench,
    vllm_bench_serve,
)
from kvplan.engines.dynamo_frontend import DYNAMO_SRT_SLURM, FrontendRouting

ENGINES = ("sglang", "trtllm")  # the prospective rows' engines (InferenceX through srt-slurm)
# The row keys a public run's point sets for its client (disagg_public.replay_run).
VLLM_BENCH_SERVE = "vllm bench serve"
GENAI_PERF = "genai-perf"  # dynnocon67: prospdis66's points (warm-up + measured requests)


def measured_date(row: dict[str, str]) -> dt.date | None:
    m = re.search(r"measured=(\d{4})-(\d{2})-(\d{2})", row["silicon_data_source"])
    return dt.date(*map(int, m.groups())) if m else None


def _srt_slurm(row: dict[str, str]) -> bool:
    """An InferenceX run of the prospective set: an SGLang / TensorRT-LLM row with a measured
    date (section 4's public runs and section 2's vLLM rows are not)."""
    return row["backend"] in ENGINES and measured_date(row) is not None


def client(row: dict[str, str], *, lengths: bool = True) -> BenchClient | None:
    """`vllm bench serve` where the row (a public run's point) names it with its prompts and
    concurrency; sa-bench as srt-slurm's bench.sh ran it at the row's measured date, for the
    rows run through srt-slurm; None otherwise (the simulation's default measurement). `lengths`
    False: every request at the row's ISL / OSL, not sa-bench's --random-range-ratio 0.8 draw
    (before rangeratio60; the bench's counterfactual)."""
    if row.get("bench_client") == VLLM_BENCH_SERVE:
        return vllm_bench_serve(int(row["bench_num_prompts"]), int(row["bench_concurrency"]))
    if row.get("bench_client") == GENAI_PERF:
        return genai_perf(int(row["bench_num_prompts"]), int(row["bench_concurrency"]))
    day = measured_date(row)
    c = sa_bench(day) if _srt_slurm(row) and day is not None else None
    return c if c is None or lengths else replace(c, lengths=None)


def routing(row: dict[str, str]) -> FrontendRouting | None:
    """srt-slurm's Dynamo frontends for the rows run through srt-slurm; None otherwise (the
    least-loaded worker)."""
    return DYNAMO_SRT_SLURM if _srt_slurm(row) else None
