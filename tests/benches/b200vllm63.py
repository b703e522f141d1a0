"""B200 (SM 10.0) under vLLM: why kvplan is fast there while H100 / H200 are close (issue 30,
b200vllm63). A forensic of the prefill step's parts against aiconfigurator's B200 kernel
tables, and the measurement behind the NVLink 5 bandwidth.

The evidence that opened it: prospective62's January Qwen3-32B TP 8 rows, replayed warm
(janwarm62): kvplan's mean TTFT -28 to -41 % on B200, -8 to -19 % on H100 / H200; the warm
replay's H100 / B200 TTFT ratio 2.10-2.13 where the runs measure 1.53-1.73.

Rows (listed by `row_lines` BEFORE any rule of this task was written; the splits are the
benches' own: tests.benches.aiconfig_agg_runs.split_of's, tests.benches.fitted_rows.SHAPED_BY):
- SHAPED (read before the rule, they opened it): Scicom's five Qwen3-32B B200 TP 8 vLLM 0.14.1
  runs (prospective56's 1,024-token row, prospective62's 2,048 / 4,096 / 8,192 / 15,000 rows),
  and their H100 / H200 twins read beside them.
- HELD OUT, the set that judges the rule: aiconfigurator's aggregated vLLM rows on B200 and
  B300 (InferenceX's runs: MiniMax-M2.5 FP8 / NVFP4, Kimi-K2.5 INT4 / NVFP4, gpt-oss-120b
  MXFP4; vLLM 0.15.1-0.19.0 and a nightly) that kvplan replays, less those b8b24713 shaped;
  and prospective53b's Qwen3-Next-80B-A3B B200 TP 4 run. vllmlong62 printed the TTFT of a few
  of the aggregated rows (MiniMax-M2.5 B200, Kimi-K2.5 B200); no rule was written from them.
No B200 bf16 dense model's vLLM row is held out: every aggregated B200 row is a quantized MoE.

What kvplan prices like Hopper, part by part, for one Qwen3-32B TP 8 prefill step of 8,192
tokens (`breakdown_lines`; vLLM 0.14.1 defaults): on H100 164.4 ms = MLP GEMMs 74.4 + TP
all-reduces 53.5 + attention projections 17.9 + attention 14.8 + the rest 3.8; on B200 78.0 ms
= 32.7 + 27.1 + 7.9 + 6.5 + 3.8. Against the tables (tests/data/dense_op, tests/data/
attention_op; examples/dense-op-bench.md and attention-op-bench.md, kvplan / measured):
- bf16 GEMMs at M 4k-16k: vLLM 0.19.0 H100 1.08, B200 0.96 (at M 512-2k 1.07 / 0.88). The
  B200 preset's bf16 peak is the dense one: 2,250 TFLOPS = HGX B200's 4.5 PFLOPS* with
  sparsity, halved (kvplan/hardware/gpus.json; the 1,000 W HGX part, which the runs' 8-GPU
  pods are); the tables reach 0.63-0.69 of it at prefill sizes where H100 reaches 0.72-0.79.
- context attention (GQA, vLLM 0.19.0): H100 1.06 / 1.19 at 3k-8k / 10k-32k keys, B200 0.88 /
  1.04; vLLM 0.14.1-0.19.0 pick FlashInfer first on SM 10.0 for a non-MLA model, FlashAttention
  first on SM 9.0 (vllm/platforms/cuda.py `_get_backend_priorities`: 0.14.1 :69-82, 0.19.0
  :100-111), and the table times the
  backend vLLM picks: its B200 rows are that backend's.
- the TP all-reduce of a prefill step's buffer (8,192 x 5,120 x 2 B = 80 MiB), 8 ranks:
  kvplan 0.418 ms on H100 and 0.212 ms on B200, where vLLM's own all-reduce (eager, the
  table's vLLM_custom_eager: at 64 / 128 MiB 0.362 / 0.663 ms on H100, 0.251 / 0.428 ms on
  B200) takes about 0.44 and 0.30 ms (linear between). kvplan / measured: H100 0.96, B200
  0.72. The all-reduces are a third of kvplan's step on either card, so this is the largest
  gap: about 11 ms of the B200 step's 78 (14 %), none on H100.
What vLLM runs for it (read in the sdists, vllm/distributed/device_communicators/: 0.14.1,
0.17.0, 0.19.0 alike): cuda_communicator.py `all_reduce` (0.14.1 :126-166, 0.17.0 :161, 0.19.0
:180) tries the custom all-reduce, then torch symmetric memory, then NCCL; all_reduce_utils.py
caps the custom kernel on SM 10.0 at 1 MiB at 8 ranks (`CUSTOM_ALL_REDUCE_MAX_SIZES["10.0"]`,
0.14.1 :33-46) and symmetric memory at 128 MiB (`SYMM_MEM_ALL_REDUCE_MAX_SIZES["10.0"]`, 0.14.1
:48-61; on SM 9.0 64 MiB): a B200 prefill's all-reduce runs symm_mem.py's multimem kernel
(`_WORLD_SIZES_MULTIMEM["10.0"]` = [6, 8], 0.14.1 :28-31), a decode step's (100 x 5,120 x 2 B
= 1,000 KiB) the custom one. kvplan's rule is one ring at the link's bandwidth above 8 MiB
(kvplan.hardware.interconnect), and nvlink5's 720 GB/s was an estimate (900 GB/s each way x
0.8, no measurement cited) where nvlink4's 360 GB/s is nccl-tests'. The measurement
(`bus_bandwidth`): the median bus bandwidth, 2 (n - 1) / n x bytes / time, of every 8-rank
all-reduce of 16 MiB to 1 GiB in the tables (the sizes kvplan's ring prices; vLLM eager and in a
graph, SGLang eager and in a graph, TensorRT-LLM, NCCL 2.29.2): H100 370 GB/s (the preset's
360, read elsewhere: the method agrees), H200 398, B200 588 (its 64-128 MiB rows alone 539; its
1 GiB rows 642-723, the old estimate's figure, reached only there).

FINDING and rule. nvlink5's bandwidth is now that measurement, 588 GB/s (interconnects.json,
commit 153bb2ff, frozen before any row below was re-evaluated; tests/test_b200vllm63.py works
an 80 MiB all-reduce by hand: 257.7 us, 0.212 ms before). It is a measurement read as nvlink4's
was, no fit to a serving row, and the default: the held-out set improves. Before -> after
(kvplan / measured; median |error|):
- HELD OUT, aiconfigurator's 467 replayed aggregated vLLM rows on B200 / B300: TTFT 36.5 ->
  33.8 % (median ratio 0.67 -> 0.70; in band [0.75, 1.33] 155 -> 175), TPOT 13.8 -> 13.9 %
  (in band 432 -> 432). B200 (367) TTFT 38.4 -> 36.0 %, B300 (100) 27.5 -> 27.4 %; worse on
  TTFT in 52 of 467 rows, the B300 Kimi-K2.5 NVFP4 rows above all (22 rows, already slow:
  median ratio 0.99-1.09 -> 1.08-1.17, |error| 22.5-22.6 -> 27.1-27.8 %).
  prospective53b's Qwen3-Next B200 TP 4 run: TTFT -82.7 -> -82.1 %, TPOT -43.5 -> -43.2 %.
- SHAPED, the five Scicom Qwen3-32B B200 TP 8 runs (vLLM 0.14.1; fitted_rows SHAPED_BY):
  TTFT -42.1 / -41.0 / -35.6 / -30.1 / -28.2 % -> -37.4 / -36.3 / -30.7 / -25.1 / -23.6 % at
  1,024 / 2,048 / 4,096 / 8,192 / 15,000 in; TPOT -3.2 / -4.3 / -12.5 / -17.7 / -21.7 % ->
  -0.3 / -1.5 / -9.2 / -13.8 / -17.7 %. The H100 / H200 twins do not move.
- SHAPED by earlier rules, aiconfigurator's 14 Kimi-K2.5 GB200 vLLM disaggregated rows
  (fitted_rows _AIC_KIMI_VLLM): TTFT 21.9 -> 20.8 %, TPOT 20.7 -> 20.7 %.
- The cost bench's B200 / GB200 cases move by under 1 % but the GB200 SGLang EP 48 decode
  (TPOT ratio 1.55 -> 1.48); no case crosses its band.
What is left: the Scicom B200 rows are still 24-37 % fast on TTFT where H100 is 11-20 %. A
counterfactual (not a rule), B200 bf16 GEMMs at 0.66 (vLLM's median fraction in the B200
table at prefill sizes) in place of 0.70, moves them 2 points more (-35.4 / -34.4 / -28.6 /
-22.9 / -21.6 %): the kernel tables explain part of the B200 gap, not all of it.

Not found: no bf16 GEMM path, attention backend, CUDA graph size or launch rule of vLLM that
differs between SM 9.0 and SM 10.0 in a way kvplan prices wrong beyond the ratios above: the
capture sizes (min(2 x max_num_seqs, 512): 0.14.1 vllm/config/vllm.py:1068-1128) and the
chunk (8,192 tokens for the API server on any GPU of >= 70 GiB but an A100: 0.14.1
vllm/engine/arg_utils.py:1836-1858) are the same on H100, H200 and B200, and kvplan's
per-kernel floor and fitted layer overhead (4 us, 35 us a layer) are the same on every card
(3.8 ms of both steps, not the gap).

Run: python -m tests.benches.b200vllm63 (the row listing replays nothing: a few seconds).
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.dense_op_bench import ArRow, read_ar_rows
from tests.benches.disagg_rows import PREFIX
from tests.benches.prospective_runs import load

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "tests" / "data" / "sim_to_real"
MIB = 1024 * 1024
# The all-reduce sizes kvplan prices as a ring at the link's bandwidth (above the custom
# kernel's 8 MiB: kvplan.hardware.interconnect), up to the tables' largest, at 8 ranks.
RING_SIZES = (16 * MIB, 1024 * MIB)
RANKS = 8
BLACKWELL = ("b200_sxm", "b300_sxm")


def bus_bandwidth(gpu: str, rows: list[ArRow] | None = None, *, ranks: int = RANKS,
                  sizes: tuple[int, int] = RING_SIZES) -> float:
    """The median bus bandwidth (bytes/s: 2 (n - 1) / n x buffer / time, nccl-tests' busbw) of
    every all-reduce row of `gpu` (a kvplan preset name: H100-80GB, H200, B200) at `ranks`
    whose buffer is within `sizes`, every implementation the tables hold."""
    rows = read_ar_rows() if rows is None else rows
    picked = [2 * (r.ranks - 1) / r.ranks * r.nbytes / (r.measured_ms * 1e-3) for r in rows
              if r.gpu == gpu and r.ranks == ranks and sizes[0] <= r.nbytes <= sizes[1]]
    return statistics.median(picked)


def aggregated_rows() -> Counter[tuple[str, ...]]:
    """aiconfigurator's aggregated vLLM rows on B200 / B300, counted by (system, checkpoint,
    precision, release, replayed or why not, split), the split as the bench prints it."""
    counts: Counter[tuple[str, ...]] = Counter()
    for r in agg.rows():
        if r["backend"] != "vllm" or r["system"] not in BLACKWELL:
            continue
        rid = PREFIX + r["id"]
        why = agg.why_not(r)
        if rid in agg.shaped_rows():
            split = "shaped by " + ", ".join(agg.shaped_rows()[rid])
        elif agg._host(r) in agg.shaped_hosts():
            split = "held out, host of shaped disagg rows"
        else:
            split = "held out"
        counts[(r["system"], r["model_path"], r["precision"], r["backend_version"],
                "replayed" if not why else "not replayed", split)] += 1
    return counts


def prospective_runs() -> list[tuple[str, str]]:
    """(set, run id) of every vLLM run on a Blackwell GPU in the prospective sets."""
    out = []
    for path in sorted(SETS.glob("prospective*.json")):
        for run in load(path)["runs"]:
            if run.get("engine", "vllm") == "vllm" and str(run.get("gpu", "")).upper().startswith(
                    ("B2", "B3", "GB2", "GB3")):
                out.append((path.stem, run["id"]))
    return out


def row_lines() -> list[str]:
    lines = ["| system | checkpoint | precision | release | replayed | split | rows |",
             "|---|---|---|---|---|---|---:|"]
    lines += [f"| {' | '.join(k)} | {n} |" for k, n in sorted(aggregated_rows().items())]
    lines.append("")
    lines += [f"- {name}: {rid}" for name, rid in prospective_runs()]
    return lines


def breakdown_lines(tokens: int = 8192) -> list[str]:
    """kvplan's price of one Qwen3-32B TP 8 prefill step of `tokens` tokens, by operation, on
    H100, H200 and B200 under vLLM 0.14.1 (the January rows' release)."""
    spec = load_model(str(ROOT / "tests" / "data" / "configs" / "qwen3-32b.json"))[0]
    lines = []
    for name in ("H100-80GB", "H200", "B200"):
        gpu = get_gpu(name)
        eff = engine_efficiency("vllm", device_efficiency(gpu), version="0.14.1")
        st = step_time(spec, gpu, tokens=tokens, context=tokens, requests=1, phase="prefill",
                       layout=Layout(tp=8), eff=eff)
        parts = ", ".join(f"{op} {s * 1e3:.2f}" for op, s in
                          sorted(st.by_op.items(), key=lambda kv: -kv[1]))
        lines.append(f"- {name}: {st.seconds * 1e3:.2f} ms ({parts})")
    return lines


def main() -> None:
    print("\n".join(row_lines()))
    print()
    print("\n".join(breakdown_lines()))
    print()
    rows = read_ar_rows()
    for gpu in ("H100-80GB", "H200", "B200"):
        print(f"- {gpu}: median bus bandwidth, {RANKS} ranks, 16 MiB-1 GiB: "
              f"{bus_bandwidth(gpu, rows) / 1e9:.1f} GB/s; 64-128 MiB: "
              f"{bus_bandwidth(gpu, rows, sizes=(64 * MIB, 128 * MIB)) / 1e9:.1f} GB/s")


if __name__ == "__main__":
    main()
