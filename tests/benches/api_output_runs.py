"""The vLLM API server's output stage (`kvplan simulate --api-output`,
kvplan.engines.vllm.frontend.ApiOutputCost, its constant measured by
tests/benches/api_output_cost.py on one CPU, no serving row fitted) on the prospective sets'
vLLM runs: each run replayed as prospective30's machinery does (tests.benches.prospective_runs),
without and with the stage, and with --frontend without and with it.

prospective56's high-concurrency misses (Qwen3-8B, Qwen3-14B and gpt-oss-120b TPOT short by 18
to 48 % at concurrency 100-200) shaped the stage (tests/benches/fitted_rows.py SHAPED_BY): they
are no test of it; the other sets' vLLM runs are held out for it.

The sim-to-real study's stages (tests/benches/sim_to_real.py: the main runs, the prospective
and blind sets), without and with the stage: `sim-to-real` as SET.

Run: python -m tests.benches.api_output_runs [SET ...] (default: every set below).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from kvplan import load_spec
from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.engines.base import Engine
from tests.benches.prospective_runs import PAIRS, REPO, load, requests

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
SETS = ("prospective56", "prospective30", "prospective31", "prospective53", "prospective53b",
        "prospective54")
# (label, frontend, api_output)
VARIANTS = (("default", False, False), ("--api-output", False, True),
            ("--frontend", True, False), ("--frontend --api-output", True, True))
TTFT, TPOT = PAIRS[0], PAIRS[2]


def replay(run: dict) -> dict[str, tuple[float, float]] | str:  # type: ignore[type-arg]
    """The run's (TTFT mean, TPOT mean) errors under each variant, or kvplan's refusal."""
    spec = load_spec(str(REPO / run["model"]))
    out = {}
    try:
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=Engine.vllm, engine_version=run["vllm"],
                                 mem_fraction=run.get("gpu_memory_utilization"))
        for label, frontend, api_output in VARIANTS:
            sim, _ = setup(spec, inputs, frontend=frontend, api_output=api_output,
                           async_scheduling=run.get("async_scheduling"))
            m = simulate(sim, requests(run),
                         concurrency=run["workload"].get("max_concurrency")).metrics
            out[label] = tuple(getattr(m, metric)[stat] / run["measured"][measured] - 1
                               for measured, metric, stat in (TTFT, TPOT))
    except KvplanError as exc:
        return str(exc).replace(f"{REPO}/", "")
    return out  # type: ignore[return-value]


def print_set(name: str) -> None:
    doc = load(DATA / f"{name}.json")
    runs = [r for r in doc["runs"] if r.get("engine", "vllm") == "vllm"]
    print(f"\n### {name}: {len(runs)} vLLM runs\n")
    print("| run | " + " | ".join(f"{v[0]} TTFT / TPOT" for v in VARIANTS) + " |")
    print("|---|" + "---:|" * len(VARIANTS))
    done = []
    for run in runs:
        res = replay(run)
        if isinstance(res, str):
            print(f"| {run['id']} | refused: {res} |")
            continue
        done.append(res)
        print(f"| {run['id']} | " + " | ".join(
            f"{res[v[0]][0]:+.1%} / {res[v[0]][1]:+.1%}" for v in VARIANTS) + " |")
    if done:
        print(f"| median abs ({len(done)} runs) | " + " | ".join(
            f"{statistics.median(abs(r[v[0]][0]) for r in done):.1%} / "
            f"{statistics.median(abs(r[v[0]][1]) for r in done):.1%}" for v in VARIANTS) + " |")


def print_sim_to_real() -> None:
    """The sim-to-real study's stage medians (|error| on each metric the study reports),
    kvplan's default beside --api-output, per set."""
    from tests.benches.sim_to_real import print_stages_beside, simulate_run

    print_stages_beside(
        "sim-to-real study stages: default / --api-output",
        lambda run: (simulate_run(run), simulate_run(run, api_output=True)),
        arrow=" / ", runs_column=False)


if __name__ == "__main__":
    if "sim-to-real" in sys.argv[1:]:
        print_sim_to_real()
        sys.exit(0)
    for set_name in sys.argv[1:] or SETS:
        print_set(set_name)
