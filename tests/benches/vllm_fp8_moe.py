"""vLLM's block-FP8 fused MoE at the fitted FP8 MoE fraction (vllmfp8moe61,
kvplan.engines.vllm.moe_kernel): the rows it can move, replayed with the switch
(`VLLM_MOE_KERNELS.fp8_fitted`) off and on, each mode in its own process (the benches cache
their setups). Modelled on tests/benches/trtllm_fp8_moe.py (trtfp8moe61), whose mechanism
(`fitted_fp8`, kvplan.perf.moe_kernel.fitted_fp8_experts) it shares.

The rule moves vLLM rows whose routed experts are 128 x 128 block FP8 (routed_expert_formats)
on H100 / H200 only. Selected by that alone, before any was replayed:

- agg: aiconfigurator's aggregated vLLM rows on h100_sxm / h200_sxm that the bench replays
  (aiconfig_agg_runs.why_not empty) with block-FP8 experts, keyed by the bench's own split
  (held out / shaped by earlier rules); none was read for this rule.
- prospective53 / 56 / 57: vLLM runs on H100 / H200 with block-FP8 experts, HELD OUT for it.
- prospective58 / 61: the MiniMax-M2.5 vLLM 0.20 runs the minimax61 forensic read, whose finding
  (prefill priced ~2x fast) motivated this rule: SHAPED.

`python -m tests.benches.vllm_fp8_moe [agg] [prospective | held shaped]` prints both modes'
summary per group: rows, rows moved, median TTFT / TPOT ratio (kvplan / measured; prospective:
the mean TTFT and mean TPOT), median |error|, rows inside disagg_rows.BAND.

Scope (vLLM's code): block-FP8 experts on SM 9.0 run Triton's fused_moe without EP and
FlashInfer's CUTLASS MoE with it (0.17.0-0.20.0, and the 0.32.0 wheel's oracle/fp8.py:120-130);
DeepGEMM only where VLLM_USE_DEEP_GEMM / VLLM_MOE_USE_DEEP_GEMM is set in the environment
(0.32.0 oracle/fp8.py:478-491; envs.py:1619 defaults it to "1" but `envs.is_set` asks whether it
was set); 0.11.0 / 0.12.0 Triton in the plain wheel (moe_ep); 0.13-0.16 not read (no kernel,
nothing moves); SM 10.x FlashInfer's TRT-LLM-gen kernel (not priced, nothing moves).

Evaluation (the switch frozen OFF at d422abe1 before any row was replayed; kvplan / measured):

Median |error| and rows in band (disagg_rows.BAND), off -> on:
- agg held out (H100 + H200): 122 rows, 96 moved; TTFT 29.8 % -> 40.9 %, in band 60 -> 51; TPOT
  14.5 % -> 12.0 %, in band 92 -> 101.
  - H100 MiniMax-M2.5: 13 rows, 13 moved; TTFT 28.4 % -> 66.4 %, in band 6 -> 3; TPOT 9.4 % ->
  9.4 %, in band 13 -> 13.
  - H200 MiniMax-M2.5: 71 rows, 45 moved; TTFT 27.1 % -> 35.2 %, in band 41 -> 31; TPOT 9.5 % ->
  8.1 %, in band 71 -> 71.
  - H200 Qwen3-235B-A22B-FP8: 38 rows, 38 moved; TTFT 42.3 % -> 45.7 %, in band 13 -> 17; TPOT
  34.8 % -> 27.4 %, in band 8 -> 17.
- agg shaped by earlier rules (H100 MiniMax): 13 rows, 13 moved; TTFT 50.9 % -> 61.9 %, in band
  6 -> 2; TPOT 8.1 % -> 6.8 %, in band 12 -> 12.
- prospective53 held out (DeepSeek-R1 H200, 0.11.0): 4 rows, 4 moved; TTFT 56.5 % -> 40.7 %, in
  band 0 -> 1; TPOT 49.4 % -> 33.7 %, in band 0 -> 0.
- prospective53 DeepSeek-V3.2 (0.13.0: kernel not read): 5 rows, none moved (TTFT 43.7 %, TPOT
  37.0 %).
- prospective56 held out (MiniMax-M2 H100, vllm#28200): 2 rows, 2 moved; TTFT 48.7 % -> 42.3 %,
  in band 0 -> 0; TPOT 20.6 % -> 20.5 %, in band 2 -> 2.
- prospective57: no run moves (gpt-oss only: MXFP4 experts).
- prospective58 SHAPED (MiniMax-M2.5 H100 TP8 EP8, 0.20.0): 33 rows, 32 moved; TTFT 41.9 % ->
  28.7 %, in band 11 -> 15; TPOT 11.9 % -> 7.9 %, in band 31 -> 33.
- prospective61 SHAPED (the same server, test_05 conc 64 / 128): 10 rows, 10 moved; TTFT 19.5 %
  -> 15.3 %, in band 6 -> 6; TPOT 16.7 % -> 18.1 %, in band 10 -> 10.

The minimax61 forensic's prefill price as the running decodes saw it (SHAPED;
minimax61_forensic.kvplan_prefill_ms against seen_prefill_ms, ms): 8,192/1,024 at concurrency 64
67.8 -> 88.6 against 120.2 seen, at 128 61.3 -> 82.4 against 61.9; 4,096/2,048 at 64 31.0 -> 35.5
against 46.1, at 128 29.7 -> 34.4 against 24.2; prompts of 2,048 or less do not move (their
steps' experts stay memory-bound). The rule closes half the gap at concurrency 64 and opens one
at 128: the forensic's "~2x" is not the experts' fraction alone.

Cost bench (cost_bench.all_cases with block-FP8 experts, 55): no vLLM case on Hopper; the vLLM
MiniMax-M2.5 cases run on B200 (not moved). One moves, an SGLang PD case the bench prices on
vLLM's engine path (launch_path: not eager): "DeepSeek-V3 DP-attn + EP72, SGLang PD, 256/GPU"
94.36 -> 113.24 ms against 91.9 measured (+2.7 % -> +23.2 %): not a vLLM row.

Decision: NOT the default. The held-out aggregated rows, the bulk of the held-out evidence (96
moved), get worse on TTFT (median |error| +11 points, 9 fewer in band; both in band 50 -> 39)
while TPOT improves; the few held-out prospective runs (6 moved) improve on TTFT. kvplan already
prices vLLM's MiniMax-M2.5 TTFT on aiconfigurator's H100 rows high (median ratio 1.27) and the
rule raises it (1.66); on H200 it lifts the median from 0.81 to 0.98 but widens the spread. The
~2x short prefill the forensics saw is not the experts' GEMM fraction alone. The switch stays
OFF (`VllmMoeKernels.fp8_fitted`, opt-in by constructing VllmMoeKernels(fp8_fitted=True)).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.benches.trtllm_fp8_moe import Ratios, print_off_on

HOPPER = ("h100_sxm", "h200_sxm")
HOPPER_RUN_GPUS = ("H100-80GB", "H200-141GB", "H200")
DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
HELD_OUT_SETS = (53, 56, 57)
SHAPED_SETS = (58, 61)


def _switch(on: bool) -> None:
    from kvplan.engines.vllm.moe_kernel import VLLM_MOE_KERNELS

    object.__setattr__(VLLM_MOE_KERNELS, "fp8_fitted", on)


def _block_fp8(spec: object) -> bool:
    from kvplan.engines.moe_kernel import FP8_BLOCK_EXPERTS
    from kvplan.perf.moe_kernel import routed_expert_formats

    layers = range(spec.num_hidden_layers)  # type: ignore[attr-defined]
    return FP8_BLOCK_EXPERTS in routed_expert_formats(spec, layers).values()  # type: ignore[arg-type]


def agg() -> Ratios:
    from tests.benches import aiconfig_agg_runs as g

    out: Ratios = {}
    for row in g.rows():
        if row["backend"] != "vllm" or row["system"] not in HOPPER or g.why_not(row):
            continue
        config = g.AGG_MODELS[(row["model_path"], row["precision"])][0]
        if not _block_fp8(g._spec(config)):
            continue
        r = g.replay(row)
        if r.ratios is not None:
            split = "held" if g.split_of(r).startswith("held out") else "shaped"
            out[f"agg {split}|{row['system']}|{row['model_path']}|{r.id}"] = r.ratios
    return out


def prospective(sets: tuple[int, ...] = (*HELD_OUT_SETS, *SHAPED_SETS)) -> Ratios:
    from kvplan import load_spec
    from tests.benches import prospective_runs as p

    out: Ratios = {}
    for n in sets:
        path = DATA / f"prospective{n}.json"
        for run in p.load(path)["runs"]:
            if (run.get("engine", "vllm") != "vllm" or run["gpu"] not in HOPPER_RUN_GPUS
                    or not _block_fp8(load_spec(str(p.REPO / run["model"])))):
                continue
            r = p.run_one(run)
            if r.refused:
                continue
            split = "held" if n in HELD_OUT_SETS else "SHAPED"
            ratios = tuple(r.simulated[f"{m}.{s}"] / r.measured[k]
                           for k, m, s in (p.PAIRS[0], p.PAIRS[2]))
            out[f"prospective{n} {split}|{run['gpu']}|{Path(run['model']).stem}|{run['id']}"] = (
                ratios[0], ratios[1])
    return out


def main(argv: list[str]) -> None:
    sets_fn = {"agg": agg, "prospective": prospective,
               "held": lambda: prospective(HELD_OUT_SETS),
               "shaped": lambda: prospective(SHAPED_SETS)}
    if argv[:1] == ["--mode"]:
        _switch(argv[1] == "on")
        print(json.dumps({s: sets_fn[s]() for s in argv[2:] or list(sets_fn)}))
        return
    print_off_on("tests.benches.vllm_fp8_moe", argv or list(sets_fn),
                 "vLLM block-FP8 fused MoE at FP8_MOE_GEMM")


if __name__ == "__main__":
    main(sys.argv[1:])
