"""gcspeed66 (issue 30, CI time): where Python's cyclic garbage collector spends the simulator's
time, on simspeed65's cases (tests.benches.simspeed65: the aggregated bench's costliest rows
under InferenceX's client workload, and two prospective runs).

What it found (main b299323e, one case per process): on the heaviest case,
sgl-qwen35-fp8-8k-c128 (SGLang, Qwen3.5-397B, page size 1, the mamba radix cache), 4.3 - 4.6 s
of 14 - 15 s of CPU went to the collector (14,067 generation-0, 1,279 generation-1 and 20
full collections): each one scans the live containers, and the replay holds about 1.3 million
(one `[hash, refs]` list per cached token, kvplan.analysis.simulate.kv_pool). Nothing in the
run needs the collector: it makes no cycle it drops, except two it leaves behind when it
returns: each radix tree holds its pool and the pool the tree's eviction hook
(`KVPool.on_evict`), and the finished requests handed back keep their page lists
(`SimRequest.kept`), so 1.33 million objects were still alive at the end of a run, scanned
once more by the caller's next collections.

The change (speed only, every output byte-identical): `simulate` and `simulate_after` run with
the collector paused (kvplan.analysis.simulate.gc_scope.collector_paused: re-entrant,
thread-safe, restored in `finally`, an off collector left off) and, before they return, let go
of the run's pages (run.let_go: the eviction hooks off the pools, SimRequest.drop_pages on the
finished requests), so the pools, trees and pages are freed by reference counting as the run
returns: 3,938 objects left allocated at the scope's end on sgl-qwen35-1k8k-c16 (1,328,760
before let_go). gc.freeze() around the run does not help (the pages are made inside it: 18.4
s, collector 4.3 s, on a loaded host); turning the collector off without let_go left one full
scan of the 1.3 million objects (1.1 s) to the caller. Peak RSS of the heaviest case: 1,228
MiB before and after (ru_maxrss; the run makes no cyclic garbage for the collector to free).

Measured (main b299323e -> this branch, both arms run at the same time on the shared 2-core
host, load 7 - 17, so single numbers drift by 20 - 30 %): MEASURED, CPU s of each case's simulate
calls, min of 3 (simspeed65's `time --repeat 3`). The gain is on SGLang's page-size-1 rows (a
page object per token); the vLLM rows' collector was 0.3 s of 6.6 s at most and their
before -> after is inside the host's noise. Every simspeed65 dump byte-identical (10 cases).
aggwork64_eval's 120-row subset, one run of each arm: fixed lengths (the page's mode) 42.9 ->
28.9 s, CLIENT_WORKLOAD 179.2 -> 127.8 s, every row's outputs equal in both modes (`same`).
prospective64_runs, prospective65_runs and prospective58_runs: the same pages, 184.0 -> 183.0,
124.4 -> 121.6 and 126.0 -> 90.0 s CPU (user, one run each; peak RSS 570 MiB both on 58).
tests.benches.prospdis65_runs.replay_all (simulate_disagg, the disagg page's simulator): the
collector 0.03 s of 3.65 s, and the disagg page calls no `simulate`: left as it was.

Run: python -m tests.benches.gcspeed66 gc CASE (one case per process: its CPU, the collector's
time and collections through gc.callbacks, peak RSS) | same A.jsonl B.jsonl (two runs of
tests.benches.aggwork64_eval: every row's outputs equal, CPU apart)
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from typing import Any

from tests.benches import simspeed65

# CPU s of the simulate calls (simspeed65's `time`), min of 3: main b299323e -> this branch.
MEASURED: dict[str, tuple[float, float]] = {
    "sgl-qwen35-fp8-8k-c128": (19.93, 13.87),
    "sgl-dsr1-8k-c64": (9.81, 6.22),
    "sgl-glm5-1k-c128": (2.22, 2.24),
    "sgl-qwen35-1k8k-c16": (1.62, 1.45),
    "vllm-gptoss-1k-c128": (5.40, 5.21),
    "vllm-gptoss-1k8k-c16": (5.44, 5.84),
    "vllm-minimax-8k-c128": (1.85, 1.15),
    "vllm-minimax-nightly-1k-c128": (2.36, 1.54),
    "prosp-sgl-qwen35-27b-c1024": (3.78, 4.00),
    "prosp-vllm-qwen3next-c256": (3.15, 2.97),
}
# One process per case (`gc`), main -> this branch: the collector's CPU s and peak RSS MiB.
COLLECTOR = {
    "sgl-qwen35-fp8-8k-c128": ((4.63, 1228), (0.03, 1228)),
    "sgl-dsr1-8k-c64": ((4.00, 641), (0.01, 641)),
    "vllm-gptoss-1k8k-c16": ((0.33, 91), (0.01, 92)),
    "prosp-vllm-qwen3next-c256": ((0.04, 39), (0.00, 39)),
}


class _Collector:
    """The collector's CPU time and collections per generation, through gc.callbacks."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.seconds += time.process_time() - self._start
            self.collections[info["generation"]] += 1


def gc_case(name: str) -> str:
    watch = _Collector()
    gc.callbacks.append(watch)
    try:
        t = time.process_time()
        _, cap = simspeed65.run_case(name)
        total = time.process_time() - t
    finally:
        gc.callbacks.remove(watch)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (f"{name}: CPU s {total:.2f} (simulate {cap.sim_cpu:.2f}), collector {watch.seconds:.2f}"
            f" s in {watch.collections} collections (gen 0, 1, 2), peak RSS {rss:,.0f} MiB")


def same(a: str, b: str) -> str:
    """Two aggwork64_eval outputs: every row's outputs equal (its CPU time apart)."""
    rows = [{d["id"]: {k: v for k, v in d.items() if k != "cpu_s"}
             for d in map(json.loads, open(p))} for p in (a, b)]
    common = sorted(set(rows[0]) & set(rows[1]))
    differ = [i for i in common if rows[0][i] != rows[1][i]]
    cpu = [sum(d["cpu_s"] for d in map(json.loads, open(p)) if d["id"] in common) for p in (a, b)]
    return (f"{len(common)} rows in both, {len(differ)} differ {differ[:5]}; CPU s of those rows "
            f"{cpu[0]:.1f} -> {cpu[1]:.1f}")


def main(argv: list[str]) -> None:
    if argv[0] == "gc":
        print(gc_case(argv[1]), flush=True)
    elif argv[0] == "same":
        print(same(argv[1], argv[2]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
