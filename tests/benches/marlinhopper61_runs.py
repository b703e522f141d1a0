"""Re-evaluation of task marlinhopper61 (Marlin's mma.sync GEMMs priced at Hopper's mma.sync
rate, kvplan.hardware.gpus.GPU.peak_flops): every vLLM run of the frozen sim_to_real sets that
serves MXFP4 experts (gpt-oss) on a Hopper GPU, replayed as tests.benches.prospective_runs
replays a run (engine flags as the run states them, no --frontend stage), with the MoE kernel
kvplan's vLLM selection names for it (Marlin on vLLM before 0.11.1, Triton's triton_kernels
from it: kvplan.engines.vllm.mxfp4_backend).

Split: prospective31's gpt-oss rows are SHAPED (task gptoss61 read them and found the flat
TPOT miss this task follows up); every other row is held out (nobody looked at them for this
rule). Rows whose kernel is not Marlin are controls: the rule must not move them.

Results (this bench on branch merge 6431be8b with the bench alone, "before", and at the frozen rule
ed29e9f0, "after"; median absolute error of the runs kvplan simulates):

- prospective31, SHAPED, 12 Marlin runs (4 refused both times: the pool): TTFT mean 64.4 % ->
  52.8 %, TPOT mean 57.9 % -> 46.4 %, ITL mean 60.6 % -> 49.4 %; every run's TTFT and ITL
  closer, TPOT 11 of 12 (gpt-oss-20b --async-scheduling 128/4: +0.8 % -> +36.3 %).
- prospective57, held out, 10 Marlin runs (vLLM 0.11.0, H100 TP 2-8): TTFT 68.4 % -> 63.7 %,
  TPOT 22.6 % -> 20.3 %, ITL 22.6 % -> 20.3 %; TTFT closer on 9 (TP2 1/250 unchanged), TPOT
  and ITL on 8, worse on 1 (TP8 5000/250 conc 64: -1.4 % -> +5.1 %), 1 unchanged.
- Controls (no Marlin: prospective56's 4 runs on 0.15.0, prospective57's H200 0.15.1 run):
  unchanged to the printed digit.

Run: python -m tests.benches.marlinhopper61_runs [--json PATH] (prints Markdown; with --json
also writes each row's errors, so that two trees' outputs can be compared).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.engines.base import Engine
from kvplan.engines.moe_kernel import MXFP4_EXPERTS
from kvplan.engines.vllm.moe_kernel import VLLM_MOE_KERNELS
from kvplan.hardware.gpus import get_gpu
from tests.benches.prospective_runs import REPO, load, requests

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
SETS = ("prospective31", "prospective56", "prospective57")
SHAPED = ("prospective31",)
METRICS = (("mean_ttft_ms", "ttft_ms", "mean"), ("mean_tpot_ms", "tpot_ms", "mean"),
           ("mean_itl_ms", "itl_ms", "mean"))


def rows() -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    """(set, run) for every vLLM gpt-oss run on a Hopper GPU in SETS."""
    out = []
    for name in SETS:
        for run in load(DATA / f"{name}.json")["runs"]:
            gpu = get_gpu(run["gpu"])
            if ("gpt-oss" in run["model"] and run.get("engine", "vllm") == "vllm"
                    and gpu.compute_capability is not None and gpu.compute_capability[0] == 9):
                out.append((name, run))
    return out


def kernel_name(run: dict) -> str:  # type: ignore[type-arg]
    k = VLLM_MOE_KERNELS.kernel(MXFP4_EXPERTS, version=run["vllm"], gpu=get_gpu(run["gpu"]),
                                ep=1, dp_ranks=1)
    return "none" if k is None else k.name


def replay(run: dict) -> dict[str, float] | str:  # type: ignore[type-arg]
    """The run's errors (simulated / measured - 1) by measured key, or kvplan's refusal."""
    spec = load_spec(str(REPO / run["model"]))
    try:
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=Engine.vllm,
                                 engine_version=run["vllm"],
                                 mem_fraction=run.get("gpu_memory_utilization"),
                                 max_num_seqs=run.get("max_num_seqs"),
                                 max_num_batched_tokens=run.get("max_num_batched_tokens"),
                                 expert_parallel=run.get("expert_parallel", False))
        sim, _ = setup(spec, inputs, frontend=False,
                       async_scheduling=run.get("async_scheduling"))
        m = simulate(sim, requests(run),
                     concurrency=run["workload"].get("max_concurrency")).metrics
    except Exception as exc:  # noqa: BLE001 - a refused run prints its reason
        return str(exc)[:100]
    return {key: getattr(m, metric)[stat] / run["measured"][key] - 1
            for key, metric, stat in METRICS}


def main() -> None:
    out: dict[str, dict] = {}  # type: ignore[type-arg]
    print("| set | split | run | MoE kernel | TTFT mean err | TPOT mean err | ITL mean err |")
    print("|---|---|---|---|---:|---:|---:|")
    for name, run in rows():
        split = "shaped" if name in SHAPED else "held out"
        r = replay(run)
        kern = kernel_name(run)
        out[run["id"]] = {"set": name, "split": split, "kernel": kern, "errors": r}
        cells = (" | ".join(f"{r[k]:+.1%}" for k, _, _ in METRICS) if isinstance(r, dict)
                 else f"refused: {r} | |")
        print(f"| {name} | {split} | {run['id']} | {kern} | {cells} |", flush=True)
    print("\nMedian absolute error per set and split (runs kvplan simulated):\n")
    print("| set | split | kernel | runs | TTFT mean | TPOT mean | ITL mean |")
    print("|---|---|---|---:|---:|---:|---:|")
    groups: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    for v in out.values():
        if isinstance(v["errors"], dict):
            groups.setdefault((v["set"], v["split"], v["kernel"]), []).append(v["errors"])
    for (name, split, kern), errs in groups.items():
        med = " | ".join(f"{statistics.median(abs(e[k]) for e in errs):.1%}"
                         for k, _, _ in METRICS)
        print(f"| {name} | {split} | {kern} | {len(errs)} | {med} |")
    if "--json" in sys.argv:
        Path(sys.argv[sys.argv.index("--json") + 1]).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
