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

`vllm bench serve` at --max-concurrency C, --num-prompts k x C and an unbounded request rate
(read in the vLLM 0.11.0 source, vllm/benchmarks/serve.py and lib/endpoint_request_func.py;
raypd65): one "initial single prompt test run" (serve.py:508) ends before the measured run and
is not counted; then every request's task is created as `get_request` yields it (serve.py:618-
662; at an infinite rate it yields them without sleeping, :193-194; a finite rate sleeps each
gap, ~1 ns at the 1e9 Anyscale's run_bm.sh passes) and an asyncio.Semaphore(C) lets one start as
another ends (`limited_request_func`, :593-601): a closed loop of C users, k requests each, the
C first ones sent at once; TTFT from the POST inside the semaphore (endpoint_request_func.py:154)
to the first streamed chunk with choices (:193); `calculate_metrics` (serve.py:301-324)
averages TTFT and TPOT over every successful request of the run, the first burst included.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from kvplan._util.errors import InputError
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


def vllm_bench_serve(num_prompts: int, concurrency: int) -> BenchClient:
    """`vllm bench serve` with --num-prompts `num_prompts` at --max-concurrency `concurrency`
    and an unbounded request rate (module docstring): num_prompts / concurrency requests a
    user, every one averaged, the first burst included; each request at the dataset's fixed
    lengths (no spread). Refused where the prompts are not whole rounds of the users (the
    closed loop's k requests a user)."""
    if concurrency < 1 or num_prompts < concurrency or num_prompts % concurrency:
        raise InputError(f"vllm bench serve: --num-prompts {num_prompts} is not a whole number "
                         f"of rounds of --max-concurrency {concurrency}")
    return BenchClient(name="vllm bench serve", rounds=num_prompts // concurrency,
                       measures_first_round=True)


def genai_perf(requests: int, concurrency: int) -> BenchClient:
    """genai-perf at --concurrency `concurrency` over `requests` requests, its
    --warmup-request-count and --request-count together (dynnocon67): one closed loop of C
    users on the same server, ceil(requests / C) requests a user, every one averaged, the
    first burst included. Not read in genai-perf's code: the warm-up phase run back to back
    with the measured one (the server's state, e.g. a pool's held blocks, carried over) and
    averaged in (10-32 of 330-632 requests on prospdis66's points) are assumed, as
    prospdis67's forensic assumed them."""
    if concurrency < 1 or requests < concurrency:
        raise InputError(f"genai-perf: {requests} requests at --concurrency {concurrency}: "
                         "expected at least one a user")
    return BenchClient(name="genai-perf", rounds=-(-requests // concurrency),
                       measures_first_round=True)
