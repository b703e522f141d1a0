"""fixedtok66 (issue 30), hypothesis (b): the API server's tokenization of InferenceX's random
prompts with gpt-oss-120b's own vocabulary (o200k), timed per prompt token on this host.

Run with vLLM's CPU build (not kvplan's venv), on one core, with the `bpe-openai` wheel's
o200k_base rank file (the only copy of the vocabulary reachable offline here):
    pip install --target /tmp/bpeo bpe-openai
    taskset -c 1 nice ~/vllm-cpu/bin/python tests/benches/fixedtok66_tokenize.py \
        /tmp/bpeo/bpe_openai/data/o200k_base.tiktoken.gz [--standin]
Times are the thread's CPU time (time.thread_time; the host is shared), the median of REPEATS
prompts per length. HOST figures: this machine's CPU (AMD EPYC, KVM guest), not a serving host's.

THE TOKENIZER. gpt-oss-120b's tokenizer.json is o200k_harmony: OpenAI's o200k_base ranks and
pre-tokenizer regex with more special tokens (which a completions prompt of random ordinary
tokens never contains). vLLM loads it as a transformers fast tokenizer (tokenizers' BPE), so it is
rebuilt here the way transformers converts a tiktoken file (convert_slow_tokenizer.py
`TikTokenConverter`: vocab and merges from the ranks, Split(o200k regex, isolated) then
ByteLevel(use_regex=False), ignore_merges), from the rank file bpe-openai 0.1.4 ships. The regex is
bpe-openai's `o200k_base` `_pat_str`. Not checked byte for byte against the checkpoint's
tokenizer.json (not reachable offline); MiniMax-M2.5's own tokenizer is not reachable: not timed.

THE PROMPT. What the rows' client sends (SemiAnalysisAI/InferenceX at aiconfig_harness.
INFERENCEX_COMMIT, utils/bench_serving/benchmark_serving.py:91-169 `sample_random_requests`):
token ids offset + i + j (mod vocab_size) for consecutive j, decoded to TEXT, then re-encoded
and topped up with random ids / cut until it encodes to the target length (up to 10 tries), no
chat template (the non-MTP scripts); posted as text to /v1/completions, so the server tokenizes it
again. The target lengths are the workload's mean prompts at ISL 1,024 / 8,192 (922 / 7,373:
tests.benches.tpslope66.LENGTHS); the figure compared with tpslope66's fixed part is the
difference of the two encode times over the 6,451 more tokens.

What the server runs (vLLM 0.15.0-0.22.1, the rows' 0.16.0 / 0.18.0 among them):
`AsyncMicrobatchTokenizer` (vllm/utils/async_utils.py; kvplan.engines.vllm.frontend) calls the
fast tokenizer's `__call__` with add_special_tokens for the completions prompt on its one worker
thread; the Rust encode is timed here (`encode(text, add_special_tokens=False)`), the batcher's 2
ms wait is a per-request constant (it cancels in the 8,192 - 1,024 difference). Also timed
(`detok_prefill`): the API server's detokenizer set-up from 0.17.0 (vllm/v1/engine/detokenizer.py
0.18.0:180-183, `DecodeStream(ids=request.prompt_token_ids)`: every prompt id, decoded at the
first step; 0.16.0 primes at most 24 ids), with this wheel's tokenizers 0.23.
`--standin` adds the same table for kvplan's stand-in vocabulary (tests/benches/
api_output_cost.py's 32,000-token BPE, behind VLLM_API_INGEST_S_PER_PROMPT_TOKEN). Results and
their reading: tests/benches/fixedtok66.py (b).
"""

from __future__ import annotations

import base64
import gzip
import random
import statistics
import sys
import time

# bpe-openai 0.1.4 `get_encoding("o200k_base")._pat_str` (module docstring).
O200K_PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"])
LENGTHS = (922, 7373)  # tests.benches.tpslope66.LENGTHS
REPEATS = 15
SHAPE = (922, 2048, 4096, 7373)  # LENGTHS and two between: the curve's shape
RETRIES = 10  # benchmark_serving.py's max_retries


def load_ranks(path: str) -> dict[bytes, int]:
    """A tiktoken rank file (base64 token, space, rank per line; gzip if it ends .gz)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return {base64.b64decode(tok): int(rank)
                for tok, rank in (line.split() for line in f if line.strip())}


def o200k_tokenizer(path: str):  # type: ignore[no-untyped-def]
    """transformers' TikTokenConverter over the rank file (module docstring)."""
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = load_ranks(path)

    class _Converter(TikTokenConverter):
        @staticmethod
        def load_tiktoken_bpe(tiktoken_url: str) -> dict[bytes, int]:
            return ranks

    tok = _Converter(vocab_file=path, pattern=O200K_PATTERN).converted()
    return PreTrainedTokenizerFast(tokenizer_object=tok)


def client_prompt(tokenizer, length: int, rng: random.Random) -> str:  # type: ignore[no-untyped-def]
    """InferenceX's random prompt text of `length` tokens (module docstring)."""
    vocab = tokenizer.vocab_size
    offset = rng.randrange(vocab)
    text = tokenizer.decode([(offset + j) % vocab for j in range(length)])
    for _ in range(RETRIES):
        ids = tokenizer.encode(text, add_special_tokens=False)
        if len(ids) < length:
            ids += [rng.randrange(vocab) for _ in range(length - len(ids))]
        elif len(ids) > length:
            ids = ids[:length]
        else:
            break
        text = tokenizer.decode(ids)
    return text


def detok_prefill(tokenizer, ids: list[int]) -> None:  # type: ignore[no-untyped-def]
    """The 0.32 wheel's FastIncrementalDetokenizer set-up for a request (vllm/v1/engine/
    detokenizer.py:195-198: a DecodeStream primed with the prompt's ids) and its first step."""
    from tokenizers.decoders import DecodeStream

    DecodeStream(ids=ids, skip_special_tokens=True).step(tokenizer._tokenizer, ids[0])


def measure(client, server, length: int, seed: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Over REPEATS prompts built by `client` (the client's own tokenizer: another process),
    each encoded by the long-lived `server` tokenizer: the first encode (as the server sees
    each prompt once; its BPE word cache holds what earlier prompts left) and a second one
    (the same text again: every word cached). Medians, plus the first's quartiles."""
    rng = random.Random(seed)
    first, again, detok, toks, chars = [], [], [], [], []
    for _ in range(REPEATS):
        text = client_prompt(client, length, rng)
        t = time.thread_time()
        ids = server.encode(text, add_special_tokens=False)
        first.append(time.thread_time() - t)
        t = time.thread_time()
        server.encode(text, add_special_tokens=False)
        again.append(time.thread_time() - t)
        t = time.thread_time()
        detok_prefill(server, ids)
        detok.append(time.thread_time() - t)
        toks.append(len(ids))
        chars.append(len(text))
    q = statistics.quantiles(first, n=4)
    return {"tokens": statistics.median(toks), "chars": statistics.median(chars),
            "first": statistics.median(first), "q1": q[0], "q3": q[2],
            "again": statistics.median(again), "detok": statistics.median(detok)}


def table(client, server, name: str) -> None:  # type: ignore[no-untyped-def]
    server.encode(client_prompt(client, 2000, random.Random(0)), add_special_tokens=False)
    print(f"\n{name}: vocab_size {server.vocab_size:,}; {REPEATS} prompts a length")
    print("| target tokens | encoded tokens | characters | first encode ms (q1 - q3) | "
          "us / token | encode again ms | us / token | detokenizer prefill ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = {}
    for n in SHAPE:
        m = rows[n] = measure(client, server, n, seed=n)
        print(f"| {n:,} | {m['tokens']:,.0f} | {m['chars']:,.0f} | {m['first'] * 1e3:.2f} "
              f"({m['q1'] * 1e3:.2f} - {m['q3'] * 1e3:.2f}) | {m['first'] / n * 1e6:.3f} | "
              f"{m['again'] * 1e3:.2f} | {m['again'] / n * 1e6:.3f} | "
              f"{m['detok'] * 1e3:.3f} |", flush=True)
    lo, hi = LENGTHS
    for kind in ("first", "again", "detok"):
        slope = (rows[hi][kind] - rows[lo][kind]) / (hi - lo)
        print(f"{kind}: (t({hi:,}) - t({lo:,})) / {hi - lo:,} tokens = {slope * 1e6:.3f} us a "
              "prompt token")


def main() -> None:
    table(o200k_tokenizer(sys.argv[1]), o200k_tokenizer(sys.argv[1]),
          "o200k (gpt-oss-120b's vocabulary)")
    if "--standin" in sys.argv:  # kvplan's --frontend stand-in (VLLM_API_INGEST_*), same prompts
        import tempfile
        from pathlib import Path

        from transformers import PreTrainedTokenizerFast

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from api_output_cost import train_tokenizer

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "tokenizer.json"
            train_tokenizer(path)
            pair = [PreTrainedTokenizerFast(tokenizer_file=str(path)) for _ in range(2)]
        table(*pair, "stand-in 32,000-token BPE (tests/benches/api_output_cost.py)")


if __name__ == "__main__":
    main()
