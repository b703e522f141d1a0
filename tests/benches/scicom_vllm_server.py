"""Scicom's vLLM 1,024-token runs (prospective56, source scicom-vllm-h100-apr2026) as their
servers saw them: one `vllm serve` per model, its whole bench list run on it in order, vLLM's
prefix cache (on by default) never reset between runs.

What ran (Scicom-AI-Enterprise-Organization/llm-benchmaq at 123eefe1): benchmaq/vllm/bench.py
`_run_benchmarks` starts one VLLMServer per `benchmark:` entry (`with VLLMServer(...)`) and
runs that entry's `bench:` list in order on it, each a `vllm bench serve` subprocess
(benchmaq/vllm/core/benchmark.py `run_benchmark`); nothing between two runs resets the cache.
The order is read from the runs' own result files: each .json's "date" (vllm bench serve writes
it when the run ends) under benchmarks/vllm/runpod_h100sxm/<model>/ at 123eefe1:
- the TP8_DP1 sweeps (Qwen3-8B 2026-04-10 08:57:15-09:08:58, Qwen3-14B 09:30:19-09:44:03,
  Qwen3-32B 10:16:32-10:36:59, Llama-3.1-70B 2026-04-13 09:09:19-09:40:28, gpt-oss-120b
  10:04:57-10:16:04): input 128, 512 (1,000 prompts), 1,024 (1,000), 2,048, 4,096 (500
  prompts), each at concurrency 10, 25, 50, 200, in that order, one run ending 15-130 s after
  the one before (no server restart fits between them);
- the concurrency-100 runs (files named benchmaq-h100x8-..., 2026-04-09: Qwen3-8B 03:48:15-
  03:50:12, Qwen3-14B 03:57:40-03:59:56, Llama-3.1-70B 05:04:17-05:09:19): input 128, 512,
  1,024, 2,048, 4,096 at concurrency 100, in that order, on a server of their own.
The January runs (scicom-vllm-jan2026, CTX1024 first of their sessions) are cold: left as they
are.

What the cache holds (vLLM's RandomDataset, `--dataset-name random`, seed 0 as every run's
Namespace prints, range ratio 0.0): the generator is numpy's default_rng(seed) (vllm
0.11.0 vllm/benchmarks/datasets.py:398; 0.16.0 :465); get_sampling_params draws input lengths,
output lengths, then one offset a request (0.11.0 :515-520; 0.16.0 :619-621): at range ratio 0
both length draws are a single value, which consumes none of the generator (numpy's bounded
integers return the bound without drawing; checked: offsets of a 100-prompt 1,024/128 draw
equal the first 100 of a 1,000-prompt 2,048/512 one, numpy 2.4), so request i has the same
offset in every run; its tokens are allowed_tokens[(offset + i + j) % n] for j < input_len
(0.16.0 :650-652; 0.11.0 :547 over the whole vocabulary), decoded, re-encoded and cut to the
length (0.16.0 gen_prompt_decode_to_target_len :380-420, its extra tokens drawn at the end):
request i of a run at 512 tokens is the first 512 tokens of request i of a run at 1,024, up to
the re-encoding at its end, and the same length at the same seed sends the same prompts. Before
each run the client sends its initial single-prompt test, request 0 with its full output
(0.16.0 vllm/benchmarks/serve.py:642-664: input_requests[0]'s prompt and expected_output_len),
and waits for it.

So a run is replayed after its server's earlier runs, each at its own concurrency, and its own
test prompt (kvplan.analysis.simulate.warm_start.simulate_after); request i's prompt is cut at
every length request i has on the server up to its own (tests.benches.scicom_server.
with_segments: the same split as Scicom's SGLang servers). The re-encoding of each prompt's end
is not modelled (vLLM caches whole 16-token blocks; a run's last partial block is its own).

Evaluated once, after the rule was frozen (d44f5d4d; the pool fix acd71070 let it run): the 23
April rows, all held out (no constant was set from them), median |error| of the mean TTFT 39.8 ->
95.0 %, of the median TTFT 43.9 -> 93.6 %, of the mean TPOT 7.9 -> 29.4 %, with --frontend TTFT
29.0 -> 73.2 %; worse on all 23 rows (a run after its same-length predecessor hits 98 % of its
prompt tokens and its TTFT falls to -94..-98 %; the first run at 1,024, after the 128 and 512
runs, hits 50 % and falls to -43..-83 %). The published TTFTs are those of cold prefills
(rising with concurrency as the cold replay's do), so these servers did not serve the runs'
prompts from cache: their serve flags are not published (benchmaq's own STT example configs set
enable_prefix_caching: false, benchmaq/vllm/stt/examples/*.yaml), and the 0.15 client was not
read (0.11.0 and 0.16.0 were). The replay is left off (REPLAYED): prospective56's figures are
unchanged; the bench list and the split stay for a run whose server is known to cache."""

from __future__ import annotations

from collections.abc import Callable

from kvplan.analysis.simulate.workload import RequestSpec
from tests.benches.scicom_server import with_segments

SOURCE = "scicom-vllm-h100-apr2026"
LENGTHS = (128, 512, 1024, 2048, 4096)  # each server's input lengths, in the order run
PROMPTS = {128: 1000, 512: 1000, 1024: 1000, 2048: 500, 4096: 500}
SWEEP = (10, 25, 50, 200)  # the TP8_DP1 sweep's concurrencies at each length, in order
APART = (100,)  # the concurrency-100 runs' server (2026-04-09)
FIRST_LENGTH = 1024  # the rows' nominal length (a row's input_len may be off by its tokenizer)
# Off: the measured runs contradict a warm cache (the docstring's evaluation); True replays it.
REPLAYED = False


def served_on_shared_server(run: dict) -> bool:  # type: ignore[type-arg]
    """Whether `run` is one of Scicom's April vLLM runs on H100 (a server of LENGTHS)."""
    return (run["source"] == SOURCE and run.get("engine", "vllm") == "vllm"
            and run["workload"]["max_concurrency"] in (*SWEEP, *APART))


def bench_list(concurrency: int) -> list[tuple[int, int]]:
    """The server's runs in the order they ran, (nominal input length, concurrency)."""
    levels = APART if concurrency in APART else SWEEP
    return [(n, c) for n in LENGTHS for c in levels]


def test_prompt(first: RequestSpec) -> RequestSpec:
    """vllm bench serve's initial single-prompt test: the run's request 0, its whole output."""
    return RequestSpec(arrival_s=0.0, prompt_len=first.prompt_len, output_len=first.output_len,
                       segments=first.segments)


def server_batches(requests_at: Callable[[int, int], list[RequestSpec]], run: dict  # type: ignore[type-arg]
                   ) -> tuple[list[list[RequestSpec]], list[RequestSpec], list[int | None]]:
    """(what the server served before `run`, the run's requests, each earlier batch's
    concurrency): every earlier run of its bench list after its test prompt, then the run's
    own test prompt. `requests_at(nominal length, prompts)`: a run's requests at that length."""
    w = run["workload"]
    mine = (FIRST_LENGTH, w["max_concurrency"])
    order = bench_list(w["max_concurrency"])
    upto = order[: order.index(mine) + 1]
    by_length = {n: requests_at(n, PROMPTS[n]) for n in LENGTHS if n <= FIRST_LENGTH}
    if len({len(r) for r in by_length.values()}) != 1:
        raise ValueError("the earlier runs of a server must send the same number of prompts")
    earlier: list[list[RequestSpec]] = []
    limits: list[int | None] = []
    for n, c in upto:
        reqs = with_segments(by_length, n)
        earlier.append([test_prompt(reqs[0])])
        limits.append(1)
        if (n, c) == mine:
            return earlier, reqs, limits
        earlier.append(reqs)
        limits.append(c)
    raise AssertionError("unreachable: the run is in its bench list")
