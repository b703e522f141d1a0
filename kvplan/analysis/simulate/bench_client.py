"""How a benchmark client runs and measures a closed loop at a stated concurrency, for the
disaggregated simulation (kvplan.analysis.simulate.disagg_sim, `measure_all_rounds`).

sa-bench, the client srt-slurm runs for the InferenceX disaggregated runs (NVIDIA/srt-slurm
src/srtctl/benchmarks/scripts/sa-bench/bench.sh, and benchmark_serving.py beside it, at
cc158081, 2026-03; the recipes' `benchmark: type: "sa-bench"`, req_rate "inf"):

- a warm-up run of 2 x C prompts (bench.sh:82-95), then, as a second, separate invocation, the
  measured run of `--num-prompts` = k x C prompts at `--max-concurrency` C and request rate inf
  (bench.sh:98-126): every request is created at once and an asyncio semaphore of C lets one
  start as another ends (benchmark_serving.py `limited_request_func`): a closed loop of C users
  with k requests each, all C first requests sent at the start, the server idle (the warm-up's
  requests have all ended: `asyncio.gather`);
- TTFT is from the request's POST (after the semaphore) to its first streamed chunk
  (backend_request_func.py `async_request_dynamo_completions`: st = time.perf_counter() before
  session.post; ttft at the first chunk), averaged over every request of the measured run
  (`calculate_metrics`): the first round's burst included, the last round's drain too.
- k by bench.sh's history: 5 from 7da82281 (2025-12-20), 8 at 55698764 (2026-01-21), 10 from
  88ff268d (2026-01-23, "2x warmup, 10x concurrency").

- the lengths: `--random-range-ratio` 0.8 (bench.sh's RANDOM_RANGE_RATIO default, bench.sh:37
  at cc158081, the value InferenceX's multi-node workflow sets), so benchmark_serving.py
  `sample_random_requests` draws each prompt and each output length uniform in [int(0.8 L), L]
  from numpy's legacy state at --seed 0 (bench.sh passes none): kvplan.analysis.simulate.
  range_ratio.BoundedBelow, bit for bit, each request's own in send order (`lengths`). The
  measured run's --use-chat-template takes the template's tokens less one off L before the draw
  and adds them back (`template_tokens`); the rows' tokenizers are not in the stores, so it is
  0 here: the lower bound sits 0.2 x that many tokens low, the upper bound is L either way.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from kvplan.analysis.simulate.range_ratio import BoundedBelow, RandomLengths


@dataclass(frozen=True, kw_only=True)
class BenchClient:
    name: str
    rounds: int  # requests per user in the measured run
    measures_first_round: bool  # its mean includes each user's first request (the burst)
    lengths: RandomLengths | None = None  # its length spread (None: every request at L)
    seed: int = 0  # the seed it draws the lengths with


# (first day in force, requests per user): bench.sh's `num_prompts=$((concurrency * k))`.
SA_BENCH_ROUNDS = ((dt.date(2025, 12, 20), 5), (dt.date(2026, 1, 21), 8),
                   (dt.date(2026, 1, 23), 10))
SA_BENCH_RANGE_RATIO = 0.8  # bench.sh RANDOM_RANGE_RATIO=${12:-0.8} (module docstring)
SA_BENCH_SEED = 0  # benchmark_serving.py --seed default (bench.sh passes none)


def sa_bench(measured: dt.date) -> BenchClient | None:
    """sa-bench as bench.sh ran it on `measured` (None before its first version)."""
    rounds = None
    for since, k in SA_BENCH_ROUNDS:
        if measured >= since:
            rounds = k
    if rounds is None:
        return None
    return BenchClient(name="sa-bench", rounds=rounds, measures_first_round=True,
                       lengths=BoundedBelow(name="sa-bench", ratio=SA_BENCH_RANGE_RATIO),
                       seed=SA_BENCH_SEED)
