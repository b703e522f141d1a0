"""fixedtok66 (issue 30): what is the fixed ~7-11 us per prompt token by which vLLM's measured
TTFT(ISL 8,192) - TTFT(ISL 1,024) exceeds kvplan's step difference (tests.benches.tpslope66
FINDING 2-3: 192 held-out Hopper vLLM MoE rows, at 4 users, over the 7,373 - 922 = 6,451 more
prompt tokens of the workload's mean prompts)? Three hypotheses, tested with code and numbers; NO
RULE WRITTEN (why at the end).

THE EXCESS (tpslope66 FINDING 2, measured minus kvplan's step priced with the kernel the rows
ran, us a prompt token; EXCESS_US): gpt-oss-120b H200 TP 1 / 2 / 4 / 8 10.0 / 10.5 / 8.7 / 8.0,
H100 TP 2 / 4 / 8 10.4 / 8.4 / 7.0 (vLLM 0.18.0, Marlin MXFP4); MiniMax-M2.5 FP8 H200 0.18.0 TP 8
-0.4, H200 0.16.0 TP 4 13.4.

(a) PREFILL CHUNKS x A PER-STEP COST: REJECTED. The rows' servers (SemiAnalysisAI/InferenceX at
aiconfig_harness.INFERENCEX_COMMIT): gpt-oss H100 / H200 benchmarks/single_node/
gptoss_fp4_h200.sh:35-40 (h100 alike) config.yaml: --max-num-batched-tokens 8192, no prefix
caching, --max-cudagraph-capture-size 2048; MiniMax minimaxm2.5_fp8_h200.sh:33-39 sets no budget
(vLLM's `vllm serve` default on a >= 70 GiB Hopper: 1,024 seqs / 8,192 tokens,
kvplan.engines.vllm.alloc.vllm_batch_defaults) nor capture size (min(2 x 1,024, 512) = 512,
kvplan.engines.vllm.budget.vllm_cuda_graph_sizes), prefix caching on; minimaxm2.5_fp8_h100.sh
:37-45 --max-num-seqs 256, PIECEWISE graphs, no budget (8,192). A prompt of the client's
lengths (uniform in [0.8 ISL, ISL], re-encoded by the client to the exact target,
benchmark_serving.py:91-169) is ONE prefill chunk at both ISLs on every row (`prefill_steps`:
922 -> 1, 7,373 -> 1, even 8,192 -> 1 alone; only a prompt within the running decodes' tokens of
8,192 splits, and kvplan's replay schedules those steps itself). Steps at 8,192 minus steps at
1,024 = 0 on every row, so no per-step cost can give a per-token slope, and the budget cannot
separate "per step" from "per token" on these rows (all share 8,192). The one step-kind
difference: gpt-oss's 7,373-token step is above the 2,048 capture size (ungraphed) and its
922-token step is not; kvplan's opt-in price of that (kvplan.perf.vllm_ungraphed: 543 launches
at TP 1, 616 at TP 2-8, x 4.4 us) is 2.39 / 2.71 ms (`ungraphed_ms`), 0.37 / 0.42 us a prompt
token if none of it hid behind the GPU (a 100-300 ms step hides it): at most 6 % of the excess.
MiniMax's two steps are both above its 512 capture size: no difference.
Caveat: the scripts are read at that one commit; the rows ran earlier, and the MiniMax H200
script changed twice before it (git log: a36346339, 5e2c705d3): the flags at run time are
inferred, not recorded by the rows.

(b) HOST WORK PER PROMPT TOKEN: FITS MOST OF gpt-oss's EXCESS ON THIS HOST, NOT MiniMax's. The
client (benchmark_serving.py:91-169, :786; backend_request_func.py:234-330) posts TEXT to
/v1/completions (consecutive vocabulary ids from a random offset, decoded; no chat template in
these scripts), so `vllm serve` tokenizes every prompt before the engine sees it, serial with the
request (vllm/utils/async_utils.py:24-36 at 0.16.0 and 0.18.0, sdists: AsyncMicrobatchTokenizer's
one worker thread; kvplan.engines.vllm.frontend). And from 0.17.0 the API server's detokenizer
primes its DecodeStream with EVERY prompt id (vllm/v1/engine/detokenizer.py 0.17.0:182-184,
0.18.0:180-183 `DecodeStream(ids=request.prompt_token_ids, ...)`, vLLM PR #34217), where 0.16.0
primes at most 24 (detokenizer.py 0.16.0:183-195: the shortest decodable tail of 4-23 ids);
tokenizers decodes that prefill lazily at the first step() (vLLM PR #51281's reading), i.e. when
the first output token is processed on the API server's loop: on TTFT's path
(`detok_prime`). tests/benches/fixedtok66_tokenize.py times both with gpt-oss's own vocabulary
(o200k ranks and regex, converted as transformers converts a tiktoken file) on the client's text,
one core, thread CPU time, 15 prompts a length, on this host (AMD EPYC KVM guest, 2 cores shared
by ~8 jobs; a serving host's core differs). Three runs (12:40, 12:42, 12:44 UTC): a prompt's first
encode 3.8-4.4 ms at 922 tokens, 35.1-41.4 ms at 7,373; over the 6,451 more tokens 4.90 / 5.73 /
4.85 us a prompt token (TOKENIZE_US; median 4.90); the 0.18.0-style detokenizer prime 1.51 / 1.25
us a token (DETOK_US; the first run did not time it). kvplan's stand-in vocabulary (the
32,000-token BPE behind --frontend's VLLM_API_INGEST_S_PER_PROMPT_TOKEN, 2.168 us) on the same
prompts in the same runs: tokenize 3.36 / 3.18, prime 0.92 / 0.88: gpt-oss's vocabulary costs
~1.6 x the stand-in's. Prefix-caching hashes: gpt-oss's scripts turn prefix caching off (no
hashes), and MiniMax's 0.18.0 TP 8 rows, which hash (sha256), show no excess: not it.
What is left (`after_host`, medians 4.90 + 1.38 from 0.17): gpt-oss 0.18.0 H200 TP 1 / 2 / 4 / 8
10.0 / 10.5 / 8.7 / 8.0 -> 3.7 / 4.2 / 2.4 / 1.7, H100 TP 2 / 4 / 8 10.4 / 8.4 / 7.0 -> 4.1 / 2.1
/ 0.7 us a token (the host work: 60-90 % of the excess, card- and TP-independent as the excess
is); MiniMax H200 0.18.0 TP 8 -0.4 -> -6.7 (kvplan's step there would have to be ~43 ms too slow)
and 0.16.0 TP 4 13.4 -> 8.5. MiniMax's two servers contradict it: host work per token grows from
0.16.0 to 0.18.0 (the prime), its excess falls from 13.4 to -0.4. MiniMax's own tokenizer is not
reachable offline (not timed); its TP 4 / TP 8 kvplan steps were not examined here.
The B200 rows (aggfaith64: vLLM 0.15.1, FlashInfer; increases 70 / 53 / 52 / 49 ms at TP 1 / 2
/ 4 / 8, GPU split ops included) are consistent with it: tokenizing alone (no whole-prompt
prime before 0.17) is 4.90 x 6,451 = 32 ms, below the TP 8 increase; their kvplan steps were not
re-derived here.

(c) GPU OPS EVERY RANK RUNS WHOLE: REJECTED for the fixed part. At TP 1 nothing is split, and
the excess is as large there (H200 10.0 us a token) as at TP 8; a GPU op costing ~64 ms for
6,451 tokens at TP 1 and TP 8, on H100, H200 and (aggfaith64) B200 alike, would have to move
~48 MB a token at H200's 4.8 TB/s (`bytes_per_token_to_explain`) where gpt-oss's hidden state
is 5,760 bytes (2,880 x bf16) a token a layer: the per-token activations every rank touches
whole (embedding, norms, router GEMM, top-k, moe_align, Marlin's gather of 4 x hidden and its
output, rotary, the KV write) are a few hundred kB a token over 36 layers, which kvplan prices
(tpslope66 FINDING 2: small kernels 4-8 ms, all-reduce 0-13 ms of the increase). Compute-bound
instead: the only whole-rank GEMM, the router (2 x 2,880 x 128 FLOPs a token a layer, 36 layers:
27 MFLOP a token), is ~0.03 us a token at several hundred TFLOPS. None of them is card-
independent, and B200 (2.3 x Hopper's dense FLOPs) shows a similar flat part.

WHY NO RULE: the hypothesis that fits gpt-oss (the API server's tokenization and, from 0.17,
its whole-prompt detokenizer prime) is host- and vocabulary-dependent (this host's figures, not
the serving hosts'), and MiniMax's two servers go against it; kvplan already prices the
tokenization opt-in (`simulate --frontend`'s per-prompt-token term, 2.168 us with the stand-in
vocabulary), not the prime. No constant was fitted to the rows and no replay was run. Next
steps, not done here: the prime as a version-gated per-prompt-token term of --frontend's stage
(0.17 onward: code above), with a held-out decision; the serving host's times for the
checkpoints' tokenizer.json (gpt-oss's, MiniMax-M2.5's) on the client's prompts.

Run: python -m tests.benches.fixedtok66 (prints the tables; no replay, seconds of CPU).
"""

from __future__ import annotations

import statistics

from kvplan.perf.layout import Layout
from kvplan.perf.vllm_ungraphed import VLLM_UNGRAPHED_LAUNCH_S, vllm_ungraphed_ops
from kvplan.sources.resolve import load_spec

MORE_TOKENS = 7373 - 922  # tpslope66.LENGTHS: the workload's mean prompts at ISL 8,192 / 1,024
# tpslope66 FINDING 2 (its docstring): measured increase minus kvplan's step (the kernel the
# rows ran), us a prompt token, by (GPU, model, vLLM, TP).
EXCESS_US = {
    ("H200", "gpt-oss-120b", "0.18.0", 1): 10.0, ("H200", "gpt-oss-120b", "0.18.0", 2): 10.5,
    ("H200", "gpt-oss-120b", "0.18.0", 4): 8.7, ("H200", "gpt-oss-120b", "0.18.0", 8): 8.0,
    ("H100", "gpt-oss-120b", "0.18.0", 2): 10.4, ("H100", "gpt-oss-120b", "0.18.0", 4): 8.4,
    ("H100", "gpt-oss-120b", "0.18.0", 8): 7.0,
    ("H200", "MiniMax-M2.5", "0.18.0", 8): -0.4, ("H200", "MiniMax-M2.5", "0.16.0", 4): 13.4,
}
# tests/benches/fixedtok66_tokenize.py on this host, o200k (module docstring (b)): tokenize
# (three runs) and the whole-prompt detokenizer prime (two runs), us a prompt token.
TOKENIZE_US = (4.90, 5.73, 4.85)
DETOK_US = (1.51, 1.25)
# vllm/v1/engine/detokenizer.py: 0.16.0 primes <= 24 prompt ids, 0.17.0 every one (docstring (b)).
DETOK_PRIME_SINCE = (0, 17)
# The rows' serve flags (module docstring (a)): (max_num_batched_tokens, capture size).
SERVE = {"gpt-oss-120b": (8192, 2048), "MiniMax-M2.5": (8192, 512)}
H200_TBPS = 4.8  # HBM3e, TB/s


def prefill_steps(prompt: int, budget: int) -> int:
    """Steps a lone prompt's prefill takes under a token budget (chunked prefill)."""
    return -(-prompt // budget)


def ungraphed_ms(tp: int) -> float:
    """kvplan's opt-in host launch price of one ungraphed gpt-oss-120b step at TP `tp`, ms."""
    ops = vllm_ungraphed_ops(load_spec("openai/gpt-oss-120b"), Layout(tp=tp), "mxfp4")
    assert ops is not None
    return ops * VLLM_UNGRAPHED_LAUNCH_S * 1e3


def detok_prime(version: str) -> bool:
    """Whether `version`'s API server primes its detokenizer with the whole prompt."""
    return tuple(int(x) for x in version.split(".")[:2]) >= DETOK_PRIME_SINCE


def after_host(excess_us: float, version: str, tokenize_us: float, detok_us: float) -> float:
    """The excess a prompt token left once the API server's per-prompt-token work (tokenizing;
    the whole-prompt detokenizer prime where `version` has it) is taken off, us."""
    return excess_us - tokenize_us - (detok_us if detok_prime(version) else 0.0)


def bytes_per_token_to_explain(excess_us: float, tbps: float = H200_TBPS) -> float:
    """Bytes a prompt token an HBM-bound op would have to move to take `excess_us`."""
    return excess_us * 1e-6 * tbps * 1e12


def lines() -> list[str]:
    out = ["(a) | model | budget | capture | steps at 922 / 7,373 / 8,192 | graphed 922 / 7,373 "
           "|", "|---|---:|---:|---|---|"]
    for model, (budget, capture) in SERVE.items():
        steps = " / ".join(str(prefill_steps(n, budget)) for n in (922, 7373, 8192))
        graphed = " / ".join("yes" if n <= capture else "no" for n in (922, 7373))
        out.append(f"| {model} | {budget:,} | {capture:,} | {steps} | {graphed} |")
    for tp in (1, 2, 4, 8):
        ms = ungraphed_ms(tp)
        out.append(f"gpt-oss TP {tp}: ungraphed launches {ms:.2f} ms a 7,373-token step, "
                   f"{ms * 1e3 / MORE_TOKENS:.2f} us a prompt token at most")
    tok, det = statistics.median(TOKENIZE_US), statistics.median(DETOK_US)
    out += ["", f"(b) | GPU | model | vLLM | TP | excess us / token | whole-prompt prime | "
            f"left after tokenizing {tok:.2f} (+ prime {det:.2f}) |",
            "|---|---|---|---:|---:|---|---:|"]
    for (gpu, model, version, tp), us in EXCESS_US.items():
        out.append(f"| {gpu} | {model} | {version} | {tp} | {us:.1f} | "
                   f"{'yes' if detok_prime(version) else 'no'} | "
                   f"{after_host(us, version, tok, det):.1f} |")
    out += ["", f"(c) an HBM-bound op taking 10 us a token moves "
            f"{bytes_per_token_to_explain(10.0) / 1e6:.0f} MB a token at {H200_TBPS} TB/s; "
            f"gpt-oss's hidden state is {2880 * 2:,} bytes a token a layer"]
    return out


if __name__ == "__main__":
    print("\n".join(lines()))
