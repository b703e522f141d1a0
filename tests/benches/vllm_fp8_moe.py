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

`python -m tests.benches.vllm_fp8_moe [agg] [prospective]` prints both modes' summary per group:
rows, rows moved, median TTFT / TPOT ratio (kvplan / measured; prospective: the mean TTFT and
mean TPOT), median |error|, rows inside disagg_rows.BAND.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.benches.trtllm_fp8_moe import Ratios, groups, line

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


def prospective() -> Ratios:
    from kvplan import load_spec
    from tests.benches import prospective_runs as p

    out: Ratios = {}
    for n in (*HELD_OUT_SETS, *SHAPED_SETS):
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
    sets_fn = {"agg": agg, "prospective": prospective}
    if argv[:1] == ["--mode"]:
        _switch(argv[1] == "on")
        print(json.dumps({s: sets_fn[s]() for s in argv[2:] or list(sets_fn)}))
        return
    sets = argv or list(sets_fn)
    off, on = (json.loads(subprocess.run(
        [sys.executable, "-m", "tests.benches.vllm_fp8_moe", "--mode", mode, *sets],
        check=True, capture_output=True, text=True).stdout) for mode in ("off", "on"))
    print("switch off -> on (vLLM block-FP8 fused MoE at FP8_MOE_GEMM)")
    print("| group | rows | moved | TTFT ratio median | TTFT median abs error | TTFT inside "
          "| TPOT ratio median | TPOT median abs error | TPOT inside | both inside |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in sets:
        a = {k: tuple(v) for k, v in off[s].items()}
        b = {k: tuple(v) for k, v in on[s].items()}
        for name, keys in groups(sorted(a)):
            print(line(name, {k: a[k] for k in keys}, {k: b[k] for k in keys if k in b}))


if __name__ == "__main__":
    main(sys.argv[1:])
