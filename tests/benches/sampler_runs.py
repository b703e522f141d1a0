"""vLLM 0.15's sampler in the step (`kvplan simulate --generation-config`,
kvplan.engines.vllm.sampler, priced by kvplan.perf.sampler_cost: bytes read in the code at the
GPU's HBM rate, nothing fitted), frozen at 70bdd3b0 before any row below was replayed with it.

Each vLLM run is replayed as prospective30's machinery does (tests.benches.prospective_runs),
without and with the sampler, the requests sampling as its client and server make them (each
run's recorded `sampling` row setting, tests.benches.row_sampling, since sampler63): Scicom's
prospective56 runs with `vllm bench serve` 0.15.0, which sends no temperature / top_p / top_k
(its printed Namespace; vllm-project/vllm PR 32723), so the server takes the checkpoint's
generation_config.json; prospective57's perf-dashboard run with
benchmark/lib/backend_request_func.py, whose completions payload sends temperature 0.0 (greedy);
the sim-to-real study's runs with inference-perf, whose completion body
(inference_perf/apis/completion.py, to_request_body) sends no sampling key (the campaign's
values.yaml: api type completion, vllm/vllm-openai:v0.15.1). The rule is read for vLLM 0.15
only: runs of other releases are left out (counted), and so are the sets with none
(prospective30 / 31 / 53 / 53b / 54: 0.10.2 - 0.20.1; prospective57's Ray Serve runs, 0.11.0).

prospective56's vLLM runs shaped the rule (their TPOT miss at concurrency 200, following the
vocabulary, led to reading the sampler: tests/benches/fitted_rows.py SHAPED_BY); prospective57's
0.15.1 run and the sim-to-real study's runs are held out (blind: first evaluated after the
freeze).

Run: python -m tests.benches.sampler_runs [prospective56 | prospective57 | sim-to-real ...].
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
from kvplan.engines.vllm.sampler import SamplingParams
from tests.benches.prospective_runs import PAIRS, REPO, load, requests
from tests.benches.row_sampling import row_sampling, sampling_label

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
TTFT, TPOT = PAIRS[0], PAIRS[2]


def run_sampling(run: dict) -> SamplingParams | None:  # type: ignore[type-arg]
    """What every request of `run` samples with (its recorded `sampling` row setting,
    tests.benches.row_sampling); None where the bench does not know."""
    return row_sampling(run.get("sampling"))


def replay(run: dict) -> tuple[tuple[float, float], tuple[float, float]] | str:  # type: ignore[type-arg]
    """The run's (TTFT mean, TPOT mean) errors without and with the sampler, or why not."""
    if not str(run["vllm"]).startswith("0.15"):
        return f"vLLM {run['vllm']}: the rule is read for 0.15 only"
    sampling = run_sampling(run)
    if sampling is None:
        return "the requests' sampling parameters are not known"
    spec = load_spec(str(REPO / run["model"]))
    out = []
    try:
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=Engine.vllm, engine_version=run["vllm"],
                                 mem_fraction=run.get("gpu_memory_utilization"))
        for s in (None, sampling):
            sim, _ = setup(spec, inputs, async_scheduling=run.get("async_scheduling"),
                           sampling=s)
            m = simulate(sim, requests(run),
                         concurrency=run["workload"].get("max_concurrency")).metrics
            out.append(tuple(getattr(m, metric)[stat] / run["measured"][measured] - 1
                             for measured, metric, stat in (TTFT, TPOT)))
    except KvplanError as exc:
        return str(exc).replace(f"{REPO}/", "")
    return out[0], out[1]  # type: ignore[return-value]


def print_set(name: str) -> None:
    doc = load(DATA / f"{name}.json")
    runs = [r for r in doc["runs"] if r.get("engine", "vllm") == "vllm"]
    print(f"\n### {name}: {len(runs)} vLLM runs, default / with the sampler\n")
    print("| run | sampling | TTFT mean | TPOT mean |")
    print("|---|---|---:|---:|")
    done, left = [], 0
    for run in runs:
        res = replay(run)
        if isinstance(res, str):
            left += 1
            continue
        s = run_sampling(run)
        assert s is not None
        kind = sampling_label(s)
        done.append(res)
        (t0, p0), (t1, p1) = res
        print(f"| {run['id']} | {kind} | {t0:+.1%} -> {t1:+.1%} | {p0:+.1%} -> {p1:+.1%} |")
    if done:
        med = [statistics.median(abs(r[v][k]) for r in done) for k in (0, 1) for v in (0, 1)]
        print(f"| median abs ({len(done)} runs) | | {med[0]:.1%} -> {med[1]:.1%} | "
              f"{med[2]:.1%} -> {med[3]:.1%} |")
    if left:
        print(f"\n{left} vLLM runs left out (another vLLM release, or sampling not known).")


def print_sim_to_real() -> None:
    """The sim-to-real study's stage medians (|error| per metric the study reports), kvplan's
    default beside the sampler, per set; runs of another release than 0.15 left out."""
    from tests.benches.sim_to_real import print_stages_beside, simulate_run

    print_stages_beside(
        "sim-to-real study stages: default -> with the sampler",
        lambda run: (simulate_run(run, charge_sampling=False), simulate_run(run)),
        keep=lambda run: run.sampling is not None and str(run.vllm).startswith("0.15"))


if __name__ == "__main__":
    for arg in sys.argv[1:] or ("prospective56", "prospective57", "sim-to-real"):
        if arg == "sim-to-real":
            print_sim_to_real()
        else:
            print_set(arg)
