"""Scicom's January Qwen3-32B vLLM TP 8 length runs (prospective62, source
scicom-vllm-jan2026-lengths) as their servers saw them: one `vllm serve` per GPU kind and
layout, its input lengths run in order, vLLM's prefix cache on and never reset (janwarm62;
tests/data/sim_to_real/WARM-SERVERS.md has the evidence in full).

The harness (Scicom-AI-Enterprise-Organization/llm-benchmaq 7367420, the commit that added the
files, 2026-01-29, and its parent tree): benchmaq/runner.py `run_remote` /
benchmaq/vllm/__init__.py `run` open one `with VLLMServer(...)` per parallelism pair and run
`for ctx in context_sizes: for concurrency ...: run_benchmark(...)` on it (one `vllm bench
serve` subprocess a run, benchmaq/vllm/core/benchmark.py); VLLMServer.start builds a fixed flag
list (--port, --tensor-parallel-size, --pipeline-parallel-size, --gpu-memory-utilization and
optional --data-parallel-size, --max-model-len, --max-num-seqs, --dtype,
--disable-log-requests, --enable-expert-parallel: benchmaq/vllm/core/server.py): no prefix
cache flag can reach the server and nothing between two runs resets its cache (the unmerged
side branch 7f61bd9 adds an `extra_args` pass-through; the runs' yaml configs are not
published, and the one server line its notebook captured has no extra flag). The engine:
vLLM 0.14.1 (the session notebook 7f61bd9 benchmarking-session-1/run.ipynb deploys this H200
pod, 'benchmark_qwen3_32b_h200sxm', with dependencies vllm==0.14.1; its servers print
'enable_prefix_caching=True'), and the January clients print no 0.15.0 temperature warning
(vllm 0.15.0 wheel benchmarks/serve.py:1635-1641; 0.14.1 serve.py:1636 sets
temperature 0 instead). The same harness on 2026-01-27
(examples/6_multiprocess.ipynb, 3b483d5, vLLM 0.14.1) logged 'Prefix cache hit rate: 49.2%'
after its second run of the same prompts, whose mean TTFT fell from 1,315-1,333 to 304-330 ms.
The runs' own dates (each .json "date") give the order 1,024, 2,048, 4,096, 8,192, 15,000,
12-34 s apart on each server (B200 2026-01-29 00:24:51-00:26:04, H100 04:09:49-04:11:12, H200
2026-01-28 05:11:50-05:13:12); the TP 4 DP 2 runs follow minutes later on another server.

What the cache holds: vLLM 0.14.1's RandomDataset (vllm/benchmarks/datasets.py of the sdist:
default_rng(seed) :466, get_sampling_params :620-622, generate_token_sequence :651-652, the
decode / re-encode :381-432), seed 0 and range ratio 0.0 as every run's Namespace prints: at
range ratio 0 the two length draws consume nothing, so request i gets the same offset at every
length (checked with numpy 2.4.6) and request i of a shorter run is a prefix of request i of a
longer one up to its re-encoded end (the same split as the April servers',
tests.benches.scicom_vllm_server, and Scicom's SGLang servers', tests.benches.scicom_server).
No test prompt: every Namespace prints ready_check_timeout_sec=0 and the log 'Skipping
endpoint ready check.', and 0.14.1 serve.py:672-688 sends the initial prompt only when that
timeout is positive; num_warmups=0 (:690). The run before the 1,024 one on each server is not
in the repository (the 1,024 run is its first)."""

from __future__ import annotations

from collections.abc import Callable

from kvplan.analysis.simulate.workload import RequestSpec
from tests.benches.scicom_server import with_segments

SOURCE = "scicom-vllm-jan2026-lengths"
LENGTHS = (1024, 2048, 4096, 8192, 15000)  # each server's input lengths, in the order run
PROMPTS = 100  # every run: 100 prompts at concurrency 100
CONCURRENCY = 100
# On: the harness and the engine's defaults say the cache was kept (the docstring); janwarm62.
REPLAYED = True


def served_on_shared_server(run: dict) -> bool:  # type: ignore[type-arg]
    """Whether `run` is one of Scicom's January vLLM TP 8 length runs (a server of LENGTHS)."""
    w = run["workload"]
    return (run["source"] == SOURCE and run.get("engine", "vllm") == "vllm"
            and w["input_len"] in LENGTHS and w["num_prompts"] == PROMPTS
            and w["max_concurrency"] == CONCURRENCY)


def server_batches(requests_at: Callable[[int], list[RequestSpec]], input_len: int
                   ) -> tuple[list[list[RequestSpec]], list[RequestSpec]]:
    """(what the server served before the run at `input_len`, the run's requests): each earlier
    run of LENGTHS whole, in order, each prompt split at every length request i had on the
    server. `requests_at(length)`: a run's requests at that input length."""
    upto = LENGTHS[: LENGTHS.index(input_len) + 1]
    by_length = {n: requests_at(n) for n in upto}
    earlier = [with_segments(by_length, n) for n in upto[:-1]]
    return earlier, with_segments(by_length, input_len)
