"""Scicom's SGLang length runs as their server saw them: one server per configuration, the
four bench_serving runs one after the other on it, its radix cache never flushed.

What ran (Scicom-AI-Enterprise-Organization/llm-benchmaq at 123eefe1): benchmaq/sglang/bench.py
`_run_benchmarks` starts one SGLangServer per `benchmark:` entry (the `with SGLangServer(...)`
block) and runs that entry's `bench:` list in order on it, each `python -m sglang.bench_serving`
(benchmaq/sglang/core/benchmark.py `run_benchmark`); every published log's Namespace has
`flush_cache=False` and `warmup_requests=1`, and the server keeps SGLang's radix cache (the
published server_info: `disable_radix_cache: False`, page_size 1). The order of the list is not
published: kvplan takes the lengths ascending, 1,024, 2,048, 4,096, 8,192 (the order of the
repository's example configs, benchmaq/sglang/examples/sglang_benchmark.yaml; an inference, not
read from the runs' own config).

What the cache holds (SGLang bench_serving `sample_random_requests`, dataset "random"): with
the same --seed (1) every run shuffles ShareGPT the same way, so request i of every run is
built from the same ShareGPT prompt, its token ids repeated and cut to that run's drawn length
(`(prompt_token_ids * ratio)[: input_lens[i]]`): request i of a later run shares its first
min(its length, the earlier one's) tokens with request i of each earlier run. Before each run
the client sends one warm-up request, input_requests[0] with min(output_len, 32) new tokens
(bench_serving `benchmark`: `test_request = input_requests[0]`, `output_len=min(test_request.
output_len, 32)`; read in the code index, not pinned to a tag), and waits for it.

So a run is replayed after the earlier runs of its server and its own warm-up
(kvplan.analysis.simulate.warm_start.simulate_after): request i's prompt is split at every
length request i has on that server, each piece a shared segment keyed by (i, start, end)."""

from __future__ import annotations

from kvplan.analysis.simulate.workload import RequestSpec

# The bench list of every Scicom SGLang length server, in the order kvplan takes it ran.
SERVER_LENGTHS = (1024, 2048, 4096, 8192)
SOURCES = ("scicom-sglang-h100-apr2026", "scicom-sglang-gptoss-mar2026",
           "scicom-sglang-lengths")
WARMUP_MAX_OUTPUT = 32  # bench_serving's warm-up: min(output_len, 32) new tokens


def served_on_shared_server(run: dict) -> bool:  # type: ignore[type-arg]
    """Whether `run` is one of Scicom's SGLang length runs (a server of SERVER_LENGTHS)."""
    return (run["source"] in SOURCES and run.get("engine") == "sglang"
            and run["workload"]["input_len"] in SERVER_LENGTHS)


def with_segments(by_length: dict[int, list[RequestSpec]], input_len: int
                  ) -> list[RequestSpec]:
    """The requests of the run at `input_len`, each prompt i split at every length request i
    has in `by_length` (the server's runs: input length -> their requests, in the same order)
    up to its own: segments ((i, start, end), end - start)."""
    out = []
    for i, req in enumerate(by_length[input_len]):
        cuts = sorted({0, *(reqs[i].prompt_len for reqs in by_length.values())})
        cuts = [c for c in cuts if c <= req.prompt_len]
        segments = tuple(((i, a, b), b - a) for a, b in zip(cuts, cuts[1:], strict=False))
        out.append(RequestSpec(arrival_s=req.arrival_s, prompt_len=req.prompt_len,
                               output_len=req.output_len, segments=segments))
    return out


def warmup(first: RequestSpec) -> RequestSpec:
    """bench_serving's warm-up request: the run's first prompt, min(its output, 32) tokens."""
    return RequestSpec(arrival_s=0.0, prompt_len=first.prompt_len,
                       output_len=max(1, min(first.output_len, WARMUP_MAX_OUTPUT)),
                       segments=first.segments)


def server_batches(by_length: dict[int, list[RequestSpec]], input_len: int
                   ) -> tuple[list[list[RequestSpec]], list[RequestSpec]]:
    """(what the server served before the run at `input_len`, the run's requests): each
    earlier run of SERVER_LENGTHS after its warm-up, then the run's own warm-up."""
    earlier: list[list[RequestSpec]] = []
    for n in SERVER_LENGTHS:
        reqs = with_segments(by_length, n)
        earlier.append([warmup(reqs[0])])
        if n == input_len:
            return earlier, reqs
        earlier.append(reqs)
    raise ValueError(f"{input_len} is not one of the server's lengths {SERVER_LENGTHS}")
