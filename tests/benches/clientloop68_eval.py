"""clientloop68's decision rule (tests/benches/clientloop68.py DECISION RULE): the held-out sets'
vLLM closed-loop runs replayed as the page replays them (tests.benches.prospective_runs
`run_one`'s default figures: no --frontend) with and without `--client-cost measured`.

Run: python -m tests.benches.clientloop68_eval [SET ...] (SET: 54 | 57 | 58 | 61 | 62; the rule's
other sets have no vLLM closed-loop run). One line per row, then per set and pooled.
`python -m tests.benches.clientloop68_eval bunch`: prospective63's (SHAPED: p63ttft68 read it)
short-prompt runs, kvplan's replacements' bunch (p63ttft68.bunch) and TTFT without / with.
"""

from __future__ import annotations

import statistics
import sys
import time

from kvplan import load_spec
from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.client_loop import VLLM_BENCH_CLIENT_COST
from kvplan.analysis.simulate.run import setup
from tests.benches import prospective_runs as pr
from tests.benches.row_sampling import row_sampling

SETS = ("54", "57", "58", "61", "62")


def rows(name: str) -> list[dict]:  # type: ignore[type-arg]
    """The set's vLLM closed-loop runs the rule counts (p62 less its concurrency 10 / 200)."""
    doc = pr.load(pr.DATA.parent / f"prospective{name}.json")
    out = [r for r in doc["runs"] if r.get("engine", "vllm") == "vllm"
           and r["workload"].get("max_concurrency")]
    if name == "62":
        out = [r for r in out if r["workload"]["max_concurrency"] not in (10, 200)]
    return out


def ttft_errors(run: dict) -> tuple[float, float] | None:  # type: ignore[type-arg]
    """(without, with) the stage: kvplan's mean TTFT / measured - 1; None where kvplan refuses
    the run (as run_one does)."""
    spec = load_spec(str(pr.REPO / run["model"]))
    out = []
    try:
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine_version=run["vllm"],
                                 mem_fraction=run.get("gpu_memory_utilization"),
                                 max_num_seqs=run.get("max_num_seqs"),
                                 max_num_batched_tokens=run.get("max_num_batched_tokens"),
                                 expert_parallel=run.get("expert_parallel", False),
                                 flashinfer_sampler=run.get("flashinfer_sampler"),
                                 **({"mxfp4_backend": run["mxfp4_backend"]}
                                    if "mxfp4_backend" in run else {}))
        for cost in (None, VLLM_BENCH_CLIENT_COST):
            sim, _ = setup(spec, inputs, async_scheduling=run.get("async_scheduling"),
                           sampling=row_sampling(run.get("sampling")), client_cost=cost)
            m = pr._served(sim, run)
            out.append(m.ttft_ms["mean"] / run["measured"]["mean_ttft_ms"] - 1)
    except KvplanError:
        return None
    return out[0], out[1]


BUNCH_RUNS = ("Llama-3.1-70B H100 TP8 random 127/128 conc 25",
              "Llama-3.1-70B H100 TP8 random 127/128 conc 50",
              "Qwen3-32B H100 TP8 random 128/128 conc 25",
              "Qwen3-32B H100 TP8 random 128/128 conc 50",
              "Qwen3-8B H100 TP8 random 128/128 conc 25")


def bunch_lines() -> None:
    """p63ttft68's bunch of kvplan's sends (its measured one in p63ttft68_stalls.json) and the
    mean TTFT, without / with the stage, on BUNCH_RUNS."""
    import json

    from kvplan.analysis.simulate.metrics import metrics
    from kvplan.analysis.simulate.run import _engine
    from tests.benches import p63ttft68 as p63
    doc = json.loads(p63.STALLS.read_text())["runs"]
    print("| run | measured bunch / TTFT ms | kvplan | with --client-cost measured |")
    print("|---|---:|---:|---:|")
    for run in rows("63"):
        if not any(k in run["id"] for k in BUNCH_RUNS):
            continue
        spec = load_spec(str(pr.REPO / run["model"]))
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine_version=run["vllm"])
        c = run["workload"]["max_concurrency"]
        cells = []
        for cost in (None, VLLM_BENCH_CLIENT_COST):
            sim, _ = setup(spec, inputs, sampling=row_sampling(run.get("sampling")),
                           client_cost=cost)
            engine = _engine(sim, sim.pool_blocks or sim.plan.num_blocks, timeline=False,
                             bulk_decode=True)
            st = engine.run(pr.requests(run), concurrency=c)
            m = metrics([st])
            cells.append(f"{p63.bunch([r.sent_s * 1e3 for r in st.finished], c):.1f} / "
                         f"{m.ttft_ms['mean']:,.0f}")
        print(f"| {run['id']} | {doc[run['id']]['bunch']:.1f} / "
              f"{run['measured']['mean_ttft_ms']:,.0f} | {cells[0]} | {cells[1]} |", flush=True)


def main(argv: list[str]) -> None:
    if argv == ["bunch"]:
        bunch_lines()
        return
    pooled: list[tuple[float, float]] = []
    per_set = {}
    for name in argv or SETS:
        errs = []
        for run in rows(name):
            t0 = time.perf_counter()
            e = ttft_errors(run)
            if e is None:
                print(f"| p{name} | {run['id']} | refused |", flush=True)
                continue
            errs.append(e)
            print(f"| p{name} | {run['id']} | {e[0]:+.1%} | {e[1]:+.1%} | "
                  f"{time.perf_counter() - t0:.0f} s |", flush=True)
        if errs:
            per_set[name] = tuple(statistics.median(abs(x[i]) for x in errs) for i in (0, 1))
            pooled += errs
    print("\n| set | rows | median abs TTFT err before | after |")
    for name, (b, a) in per_set.items():
        print(f"| p{name} | | {b:.1%} | {a:.1%} |")
    mom = [statistics.median(v[i] for v in per_set.values()) for i in (0, 1)]
    pool = [statistics.median(abs(x[i]) for x in pooled) for i in (0, 1)]
    within = [sum(abs(x[i]) <= 0.15 for x in pooled) for i in (0, 1)]
    print(f"\nmedian of medians {mom[0]:.1%} -> {mom[1]:.1%}; pooled ({len(pooled)} rows) median "
          f"{pool[0]:.1%} -> {pool[1]:.1%}, within 15 %: {within[0]} -> {within[1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
