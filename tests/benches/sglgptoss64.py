"""Forensic of issue 30's gpt-oss-120b miss on Scicom's SGLang runs (task sglgptoss64):
prospective61's nine gpt-oss-120b TP 8 runs (SGLang 0.5.8.post1, 8 x A100 80GB / H100 / H200,
random 2,048 / 4,096 / 8,192 in, 128 out, 100 prompts at concurrency 100), where kvplan's mean
TPOT is -46 to -82 % and its mean TTFT -13 to -88 %, beside prospective56's 1,024-token runs of
the same servers and the same publisher's dense SGLang 0.5.9 H100 runs (the control). Nothing
here changes a rule, a constant or the harness. Read after those rows' errors were printed: the
nine are prospective (held out) rows, and what this module reads from them would SHAPE any rule
written from it (none is).

The runs' per-request records. Each run's `sglang.bench_serving --output-details` JSONL beside its
.txt in Scicom's llm-benchmaq (commit SCICOM_COMMIT, benchmarks/sglang/runpod_<gpu>sxm/<model>/)
holds every request's TTFT and inter-token gaps, its lengths and the server's own
/get_server_info (the flags after SGLang's model-specific overrides, its KV pool and the memory
it measured). `extract` reads them (from a local git mirror of the repository) into DATA, one
summary per file (`summarize`). Every request of these runs is sent at t = 0 (request rate inf,
concurrency 100 = the prompt count), so a request's token times are its TTFT plus its gaps on one
clock. Run:
    python -m tests.benches.sglgptoss64 --extract MIRROR_GIT_DIR   (rewrites DATA)
    python -m tests.benches.sglgptoss64                             (prints Markdown)

FINDING is the reading, with its verdict.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

SCICOM_COMMIT = "123eefe103473a886b6610cd62cfd630406c7507"
DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "sglgptoss64_runs.json"
LENGTHS = (1024, 2048, 4096, 8192)
# The length suffix of each file name (bench_serving's run tag, the same on every server).
TAGS = {1024: "38769a", 2048: "7da261", 4096: "3168fa", 8192: "46cf8d"}
GPTOSS_GPUS = ("A100", "H100", "H200")
# The dense control: the same publisher's SGLang 0.5.9 TP 8 H100 runs (prospective56 / 61).
DENSE = ("Llama3.1-70B", "Qwen3-14B", "Qwen3-8B", "Qwen3.5-27B")
# The models whose files the repository names GPU first (the others: layout and model first).
GPU_NAMED = ("gpt-oss-120b", "Qwen3.5-27B")
GROUP_S = 0.02  # first tokens this close are one prefill batch's (a step is >= 60 ms here)
STEADY_GAPS = 5  # the gaps after the stall that time the steady decode step (see below)
SERVER_KEYS = ("version", "attention_backend", "moe_runner_backend", "cuda_graph_max_bs",
               "disable_overlap_schedule", "chunked_prefill_size", "mem_fraction_static",
               "context_length", "max_total_num_tokens", "swa_full_tokens_ratio",
               "disable_hybrid_swa_memory", "enable_piecewise_cuda_graph", "dtype")


def path_of(model: str, gpu: str, length: int) -> str:
    """The JSONL's path in llm-benchmaq at SCICOM_COMMIT."""
    name = (f"{gpu}_tp8_dp1_in{length}" if model in GPU_NAMED
            else f"tp8_dp1_{model}_in{length}")
    return (f"benchmarks/sglang/runpod_{gpu.lower()}sxm/{model}/{name}_out128_p100_c100_"
            f"{TAGS[length]}.jsonl")


def token_times(doc: dict) -> list[list[float]]:  # type: ignore[type-arg]
    """Each request's token arrival times (s from the run's start: every request sent at 0):
    its TTFT, then each inter-token gap added."""
    out = []
    for ttft, gaps in zip(doc["ttfts"], doc["itls"], strict=True):
        t = ttft
        times = [t]
        for g in gaps:
            t += g
            times.append(t)
        out.append(times)
    return out


def silent_gap(doc: dict) -> tuple[float, float]:  # type: ignore[type-arg]
    """The longest interval in which no request received any token (first or later), on the
    merged timeline of every request's tokens: (start, end) s. A gap no step of the run
    explains is a server-wide stall: nothing was emitted to anyone."""
    ev = sorted(t for times in token_times(doc) for t in times)
    k = max(range(len(ev) - 1), key=lambda j: ev[j + 1] - ev[j])
    return ev[k], ev[k + 1]


def figures(doc: dict, cut: tuple[float, float] | None = None  # type: ignore[type-arg]
            ) -> dict[str, float]:
    """bench_serving's figures (ms) recomputed from the records: mean / median TTFT, mean /
    median TPOT (a request of more than one output token: its gaps' sum / (output - 1)), mean
    ITL (every gap). With `cut` (a silent gap's (start, end)), as if the server had not stalled:
    the gap's length taken off every TTFT that ends after it and off every inter-token gap that
    spans it."""
    ttfts, tpots, itls = [], [], []
    span = 0.0 if cut is None else cut[1] - cut[0]
    eps = 1e-9
    for times, out in zip(token_times(doc), doc["output_lens"], strict=True):
        first = times[0]
        ttfts.append(first - span if cut is not None and first >= cut[1] - eps else first)
        gaps = []
        for a, b in zip(times[:-1], times[1:], strict=True):
            spans = cut is not None and a <= cut[0] + eps and b >= cut[1] - eps
            gaps.append(b - a - (span if spans else 0.0))
        itls += gaps
        if out > 1:
            tpots.append(sum(gaps) / (out - 1))
    return {"mean_ttft_ms": 1e3 * statistics.fmean(ttfts),
            "median_ttft_ms": 1e3 * statistics.median(ttfts),
            "mean_tpot_ms": 1e3 * statistics.fmean(tpots),
            "median_tpot_ms": 1e3 * statistics.median(tpots),
            "mean_itl_ms": 1e3 * statistics.fmean(itls)}


def steady_step(doc: dict, gap: tuple[float, float],  # type: ignore[type-arg]
                n: int = STEADY_GAPS) -> float:
    """The decode step right after the stall (ms): over the requests that got their first
    token before it and had `n` more gaps after the one spanning it, the median of those `n`
    gaps. Every request is decoding then (the prompts after the stall are prefilled first:
    SGLang runs a waiting prefill before a decode), so it is the step at about 100 running
    requests, less those finished."""
    steps = []
    for times in token_times(doc):
        if times[0] > gap[0]:
            continue
        k = next((j for j, (a, b) in enumerate(zip(times[:-1], times[1:], strict=True))
                  if a <= gap[0] + 1e-9 and b >= gap[1] - 1e-9), None)
        if k is not None and k + 1 + n < len(times):
            steps += [b - a for a, b in zip(times[k + 1:k + 1 + n], times[k + 2:k + 2 + n],
                                            strict=True)]
    return 1e3 * statistics.median(steps) if steps else 0.0


def groups_after(doc: dict, gap: tuple[float, float],  # type: ignore[type-arg]
                 window_s: float = GROUP_S) -> int:
    """The prefill batches that finished prompts after the stall: the first tokens at or after
    its end, grouped where one arrives within `window_s` of the group's first."""
    firsts = sorted(t for t in doc["ttfts"] if t >= gap[1] - 1e-9)
    groups = 0
    start = None
    for t in firsts:
        if start is None or t - start > window_s:
            groups, start = groups + 1, t
    return groups


def summarize(doc: dict) -> dict:  # type: ignore[type-arg]
    """One run's figures: as printed (recomputed), the silent gap (start, end, s), the first
    tokens before / after it, the figures with the gap cut, the steady decode step after it,
    and the server's flags and memory as its /get_server_info reported them."""
    gap = silent_gap(doc)
    firsts = doc["ttfts"]
    info = doc.get("server_info", {})
    states = (info.get("internal_states") or [{}])[0]
    return {
        "requests": len(firsts), "input_tokens": sum(doc["input_lens"]),
        "output_tokens": sum(doc["output_lens"]),
        "printed": figures(doc), "gap_cut": figures(doc, gap),
        "gap_start_s": gap[0], "gap_end_s": gap[1], "gap_s": gap[1] - gap[0],
        "first_tokens_before_gap": sum(1 for t in firsts if t <= gap[0] + 1e-9),
        "steady_step_ms": steady_step(doc, gap),
        "first_token_groups_after_gap": groups_after(doc, gap),
        "server": {k: info.get(k) for k in SERVER_KEYS},
        "memory_usage": states.get("memory_usage"),
    }


def extract(mirror: str) -> dict:  # type: ignore[type-arg]
    """DATA's content from a git mirror of Scicom's llm-benchmaq: the gpt-oss-120b TP 8 SGLang
    files of GPTOSS_GPUS at every length, the DENSE models' H100 TP 8 files, summarized, keyed
    by 'model gpu length'."""
    runs = {}
    for model, gpus in (("gpt-oss-120b", GPTOSS_GPUS), *((m, ("H100",)) for m in DENSE)):
        for gpu in gpus:
            for length in LENGTHS:
                text = subprocess.run(
                    ["git", "-C", mirror, "show", f"{SCICOM_COMMIT}:{path_of(model, gpu, length)}"],
                    check=True, capture_output=True, text=True).stdout
                runs[f"{model} {gpu} {length}"] = summarize(json.loads(text))
    return {"what": ("Per-run figures of Scicom's SGLang TP 8 length runs (gpt-oss-120b on A100 / "
                     "H100 / H200, SGLang 0.5.8.post1; the dense models on H100, 0.5.9), "
                     "computed by tests.benches.sglgptoss64.summarize from each run's "
                     f"--output-details JSONL at llm-benchmaq {SCICOM_COMMIT[:7]}"),
            "runs": runs}


FINDING = """FINDING (SGLang 0.5.8.post1 read in its PyPI wheel, the release the runs' server_info
reports, line numbers its; Scicom's harness and records read in llm-benchmaq at 123eefe; every
figure from DATA and this module's printout; all of it read after the rows' errors, so it SHAPES
any rule written from it: none is).

1. kvplan's decode step at 100 running requests (2,100-token contexts, SGLang 0.5.8, TP 8,
   `decode_parts`): A100 10.0 ms (routed experts 4.56, all-reduce 1.74, small kernels 1.30,
   per-layer overhead 1.26, attention 0.60, attention projections 0.29, logits gather 0.20,
   lm_head 0.08), H100 7.3 ms (experts 2.77), H200 6.4 ms (experts 1.94). A measured mean TPOT
   of 135 ms at 100 users is not a step 4x that price: the steady step right after the stall
   (`steady_step`, about 100 running) is 19.6-20.5 ms on the A100 (2,048-8,192 in; 21.5 at
   1,024), 11.7-12.2 on the H100, 10.0-10.4 on the H200: about 2.0x kvplan's step on the A100
   and 1.6x on Hopper.
2. One server-wide stall per run (`silent_gap`). Each of the twelve gpt-oss files (1,024 in
   included) has one interval in which no request received any token, first or later: 1.04-1.39
   s at 4,096 / 8,192 in, 1.57-2.67 s at 2,048 in, 2.41-2.88 s at 1,024 in. It falls in the
   prefill phase, at its end: 77-89 of the 100 prompts have their first token before it, the
   rest (the last ones sent) come in one or two prefill batches right after it (`groups_after`),
   then the decode. The tokens after it come at the steady step (no burst), so it is the server
   not stepping, not the client. The dense 0.5.9 runs of the same harness on the H100 have none:
   their longest silent interval is 0.07-0.36 s (one prefill chunk) in 15 of 16 files;
   Qwen3.5-27B's 8,192-in file shows 0.77 s only because one record's TTFT is 0.0 (a one-token
   request) and the first prefill ends at 0.77 s. Every request that had its first token before
   the stall waits it out in one gap, and with outputs drawn from 1-128 tokens
   (random_range_ratio 0) a short output divides it by little: the stall is most of the printed
   mean TPOT. With the gap cut (`figures(doc, gap)`): A100 2,048 in mean TPOT 135.2 -> 33.9 ms
   (kvplan 33.4), median 59.5 -> 24.0 (kvplan 18.1), mean TTFT 1,191 -> 684 (kvplan 553). Over
   the nine runs kvplan's error against the records moves: mean TPOT -46..-82 % -> -16..+18 %,
   median TPOT -41..-76 % -> -1..-24 %, mean ITL -44..-76 % -> -2..-25 %, mean TTFT -13..-88 %
   -> -4..-86 %; the TPOT residue is the step of (1). The H100 2,048 / 4,096 TTFTs stay -86 /
   -64 %: their first token comes at 2.05 / 1.20 s (the A100's and H200's at 0.25-0.71 s), a
   delay before any token that a silent interval between tokens does not see.
   The gptossttft63 forensic found the same on vLLM 0.15.0's gpt-oss runs of this publisher
   (server-wide stalls of 1.12-1.32 s and multiples, none in the dense runs): the code both
   engines share for gpt-oss and for no dense model is the triton_kernels MoE (matmul_ogs and
   its routing), compiled by Triton at first use of a kernel key, which fits a fixed quantum and
   its multiples; which key a new run's prefill meets for the first time was not read.
3. What SGLang 0.5.8 runs (server_args.py; each confirmed by the runs' server_info). Attention:
   GptOssForCausalLM's override :1257-1265, trtllm_mha on SM100, fa3 on SM90, else triton
   (server_info: triton on the A100, fa3 on H100 / H200). MoE: :1300-1316, triton_kernel when
   ep_size 1 and triton_kernels imports (server_info: triton_kernel on all three); the MXFP4
   experts stay MXFP4 on SM 8.0 too (layers/quantization/mxfp4.py:534-563 swizzles them for
   matmul_ogs; the bf16 upcast at :564-581 is the path without triton_kernels; get_min_
   capability 80), so no dequantized bf16 MoE. CUDA graphs: cuda_graph_max_bs 512 at TP >= 4
   with 60-160 GB (:934-953; server_info 512, capture sizes ... 96, 104 ...): 100 running
   requests replay a graph (104), no eager decode. Overlap scheduler: no gpt-oss override
   disables it (server_info disable_overlap_schedule False); chunked_prefill_size 8,192 (:934-
   953); max_running_requests None (4,096 effective). kvplan's replay assumes each of these.
4. The harness. benchmaq/sglang/core/server.py runs `python -m sglang.launch_server
   --model-path ... --host --port` plus the config's flags; the config is not committed, but
   server_info gives them: context_length 12,000 and mem_fraction_static 0.9 (prospective61.json
   replays 131,072 and SGLang's default fraction: neither binds at 100 x <= 8,320 tokens).
   The server measured 27.38 GB of weights per GPU (memory_usage.weight, all three GPUs;
   model_runner.py:947-948: free memory before minus after the load) where kvplan's estimate
   charges 8.65 GiB (MXFP4 experts), and a pool of 5,519,745 / 5,469,844 / 12,533,773 tokens
   (A100 / H100 / H200) where kvplan's replay has 7.0 / 7.0 / 14.8 M: a capacity miss these
   runs do not bind; why the load holds 27 GB was not read. Read later (sglgptoss64b,
   tests/benches/prospective61_served.py): the figure is GiB (utils/common.py:576), the bf16
   size of a checkpoint without quantization_config (kvplan 27.28 GiB; prospective56_served had
   found it for the 1,024-token runs), not an upcast (the triton_kernel runner keeps MXFP4);
   replayed so, kvplan's step at 100 requests is 20.5 / 13.7 / 10.8 ms against the steady
   19.6-20.5 / 11.7-12.2 / 10.0-10.3 of (1).

Verdict: no rule. The stall is most of the TPOT and TTFT miss, but its cause is read from the
records, not from code kvplan has read to the line (no compile key, no JIT log is published),
and no held-out row could test a stall rule (every SGLang gpt-oss row kvplan replays is one of
these servers'). The residual step (1.9x on the A100's triton attention + triton_kernels MXFP4
MoE, 1.6x on Hopper) is a step price kvplan does not reach; no GPU was lent to time it. The
capacity miss (4) is a lead for SGLang's gpt-oss load. Next: on a lent A100 / H100, run SGLang
0.5.8 gpt-oss-120b TP 8 with TRITON_PRINT_AUTOTUNING / a JIT hook over this workload (which
kernel compiles mid-run), time one decode step at 100 requests, and read the load's memory.
"""


def decode_parts() -> dict[str, dict[str, float]]:
    """kvplan's decode step (ms) at 100 running requests of 2,100-token contexts, by op
    (kvplan.perf.roofline.step_time's by_op over the SGLang 0.5.8 TP 8 step cost's settings),
    and its total, per GPU."""
    from kvplan import load_spec
    from kvplan.analysis.inputs import estimate_inputs
    from kvplan.analysis.simulate.run import setup
    from kvplan.engines.base import Engine
    from kvplan.perf.roofline import step_time
    from tests.benches.prospective_runs import REPO
    spec = load_spec(str(REPO / "tests/data/configs/gpt-oss-120b.json"))
    out = {}
    for gpu, preset in (("A100", "A100-80GB"), ("H100", "H100-80GB"), ("H200", "H200")):
        inputs = estimate_inputs(spec, context=131072, gpu=preset, tp=8, engine=Engine.sglang,
                                 engine_version="0.5.8")
        cost = setup(spec, inputs)[0].cost
        st = step_time(spec, inputs.gpu, tokens=100, context=2100, requests=100,
                       **cost._common)
        parts = {k: 1e3 * v for k, v in st.by_op.items() if v > 0}
        out[gpu] = {"total": 1e3 * cost.seconds(decode_contexts=[2100] * 100, chunks=[]),
                    **dict(sorted(parts.items(), key=lambda kv: -kv[1]))}
    return out


def replayed() -> dict[str, dict[str, float]]:
    """kvplan's figures for prospective61's nine gpt-oss runs as its section replays them
    (tests.benches.prospective_runs.run_one), keyed like DATA."""
    from tests.benches.prospective61_runs import DATA as P61
    from tests.benches.prospective_runs import load, run_one
    out = {}
    for run in load(P61)["runs"]:
        if run["id"].startswith("scicom SGLang gpt-oss-120b "):
            gpu, length = run["id"].split()[3], run["workload"]["input_len"]
            out[f"gpt-oss-120b {gpu} {length}"] = run_one(run).simulated
    return out


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--extract":
        DATA.write_text(json.dumps(extract(sys.argv[2]), indent=1, sort_keys=True) + "\n")
        return
    runs = json.loads(DATA.read_text())["runs"]
    print("## Scicom's SGLang TP 8 length runs: each run's per-request records\n")
    print("| run | gap s (from, to) | first tokens before | steady step ms | printed TTFT mean "
          "/ TPOT mean / median / ITL ms | gap cut |")
    print("|---|---:|---:|---:|---:|---:|")
    for key, v in runs.items():
        p, c = v["printed"], v["gap_cut"]
        print(f"| {key} | {v['gap_s']:.2f} ({v['gap_start_s']:.2f}, {v['gap_end_s']:.2f}) | "
              f"{v['first_tokens_before_gap']} | {v['steady_step_ms']:.1f} | "
              f"{p['mean_ttft_ms']:.0f} / {p['mean_tpot_ms']:.1f} / {p['median_tpot_ms']:.1f} / "
              f"{p['mean_itl_ms']:.1f} | {c['mean_ttft_ms']:.0f} / {c['mean_tpot_ms']:.1f} / "
              f"{c['median_tpot_ms']:.1f} / {c['mean_itl_ms']:.1f} |")
    print("\n## Servers (gpt-oss-120b, from server_info)\n")
    for gpu in GPTOSS_GPUS:
        v = runs[f"gpt-oss-120b {gpu} 2048"]
        print(f"- {gpu}: {v['server']}; memory_usage {v['memory_usage']}")
    print("\n## kvplan's decode step at 100 requests, 2,100-token contexts (ms)\n")
    for gpu, parts in decode_parts().items():
        print(f"- {gpu}: " + ", ".join(f"{k} {x:.2f}" for k, x in parts.items()))
    print("\n## kvplan against the records as printed and with the stall cut "
          "(error: kvplan / measured - 1)\n")
    print("| run | TTFT mean printed / cut | TPOT mean printed / cut | TPOT median printed / "
          "cut | ITL printed / cut |")
    print("|---|---:|---:|---:|---:|")
    for key, sim in replayed().items():
        v = runs[key]
        cells = []
        for metric, name in (("ttft_ms.mean", "mean_ttft_ms"), ("tpot_ms.mean", "mean_tpot_ms"),
                             ("tpot_ms.p50", "median_tpot_ms"), ("itl_ms.mean", "mean_itl_ms")):
            cells.append(f"{sim[metric] / v['printed'][name] - 1:+.0%} / "
                         f"{sim[metric] / v['gap_cut'][name] - 1:+.0%}")
        print(f"| {key} | " + " | ".join(cells) + " |", flush=True)
    print("\n" + FINDING)


if __name__ == "__main__":
    main()
