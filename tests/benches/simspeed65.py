"""simspeed65 (issue 30, CI time): the vLLM and SGLang replays the aggregated bench runs under
InferenceX's client workload (tests.benches.aiconfig_agg_client, aiconfig_agg_runs.CLIENT_WORKLOAD
on), plus two prospective runs, timed and dumped in full so that a speed change can be shown to
leave every output byte as it was.

The cases (chosen before any code was changed, from aggwork64's per-row CPU in its 'after' arm:
the costliest of each engine and kind, and a few at high concurrency or long outputs):
`AGG` names rows of tests.benches.aggwork64_eval.subset(); `PROSPECTIVE` names (set, run id)
pairs of the frozen prospective sets (an SGLang hybrid (GDN) run and a vLLM hybrid run).

Each case's dump holds every simulate call's SimMetrics (dataclasses.asdict) and every finished
request's (rid, sent_s, first_token_s, finish_s, last_token_s, num_output, preemptions) in the
order returned, floats as Python's repr writes them (exact), and the row's Replay / Result.

Where the time went (cProfile of each case at main 38738b15): SGLang's page-size-1 token pool
with the radix cache on (Qwen3.5-397B, DeepSeek-R1): a block object per token, created, evicted
from the LRU one by one (each eviction told to the mamba radix tree) and returned one by one at
a finish (KVPool._new_blocks / free: about 60 % of the profile), and Python's cyclic GC over the
millions of live blocks (gc off: 16.1 -> 10.7 s on sgl-qwen35-fp8-8k-c128); SGLang's decode steps
that `_decode_run` cannot take (a queue waiting, or pages above one token: GLM-5, the prospective
Qwen3.5-27B) and vLLM's hybrid pools (gpt-oss's sliding + full, Qwen3-Next's full + state),
which take the exact per-request path: KVPool / HybridPool.allocate, blocks_needed and
release_skipped once per running request per step (about 60 - 70 %).

Measured (simspeed65, CPU s of the simulate calls, min of 3 unless said, base = main 38738b15
and this branch interleaved on the shared 2-core host): see MEASURED; every dump byte-identical.

Run: python -m tests.benches.simspeed65 dump DIR [CASE ...] | time [CASE ...] [--repeat N]
| profile CASE OUT.prof | list
"""

from __future__ import annotations

import cProfile
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.benches import aggwork64_eval, prospective_runs
from tests.benches import aiconfig_agg_runs as agg

AGG = {
    "sgl-qwen35-fp8-8k-c128":
        "2026_03_25_qwen3_5_397b_b200_sxm_sglang"
        "_fp8_agg_8192x1024_c128_tp4_0_ep1_0_462",
    "sgl-dsr1-8k-c64":
        "2026_04_06_deepseek_r1_b200_sxm_sgla"
        "ng_fp8_agg_8192x1024_c64_tp8_ep1_901",
    "sgl-glm5-1k-c128":
        "2026_03_25_glm_5_b300_sxm_sglang_fp"
        "8_agg_1024x1024_c128_tp8_0_ep1_0_51",
    "sgl-qwen35-1k8k-c16":
        "2026_04_06_qwen3_5_397b_b200_sxm_sgla"
        "ng_fp8_agg_1024x8192_c16_tp4_ep1_1922",
    "vllm-gptoss-1k-c128":
        "2026_04_06_gpt_oss_120b_b200_sxm_vll"
        "m_fp4_agg_1024x1024_c128_tp2_ep1_1062",
    "vllm-gptoss-1k8k-c16":
        "2026_04_06_gpt_oss_120b_h100_sxm_vl"
        "lm_fp4_agg_1024x8192_c16_tp8_ep1_187",
    "vllm-minimax-8k-c128":
        "2026_03_25_minimax_m2_5_b200_sxm_vllm"
        "_fp8_agg_8192x1024_c128_tp2_0_ep1_0_85",
    "vllm-minimax-nightly-1k-c128":
        "2026_03_25_minimax_m2_5_b200_sxm_vllm_"
        "fp4_agg_1024x1024_c128_tp4_0_ep1_0_1327",
}
_DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
PROSPECTIVE = {
    "prosp-sgl-qwen35-27b-c1024": ("prospective64.json", "dougyster SGLang Qwen3.5-27B H200 TP1 "
                                   "random 8192/1024 conc 1024 (2048 prompts)"),
    "prosp-vllm-qwen3next-c256": ("prospective53b.json", None),  # its one run
}


# Measured at this branch's freeze (simspeed65): CPU s of the simulate calls, min of 3,
# base (main 38738b15) -> this branch, interleaved on the loaded shared 2-core host; every
# case's dump byte-identical to the base's.
MEASURED = {
    "sgl-qwen35-fp8-8k-c128": (17.37, 15.91),
    "sgl-dsr1-8k-c64": (7.84, 7.60),
    "sgl-glm5-1k-c128": (4.30, 2.31),
    "sgl-qwen35-1k8k-c16": (2.06, 1.91),
    "vllm-gptoss-1k-c128": (4.58, 3.80),
    "vllm-gptoss-1k8k-c16": (5.24, 4.23),
    "vllm-minimax-8k-c128": (1.38, 1.30),
    "vllm-minimax-nightly-1k-c128": (1.69, 1.61),
    "prosp-sgl-qwen35-27b-c1024": (5.23, 2.81),
    "prosp-vllm-qwen3next-c256": (4.91, 2.35),
}
# aggwork64_eval's 'after' arm (CLIENT_WORKLOAD on) on its subset, base and this branch run at
# once and stopped at 09:35 UTC: the 66 rows both finished, every output equal, CPU 78.5 ->
# 69.5 s (x 1.13; vLLM 41 rows 42.5 -> 37.0, SGLang 24 rows 36.0 -> 32.5).
SUBSET = (66, 78.5, 69.5)


def _plain(x: Any) -> Any:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, float):
        return repr(x)
    return x


def _request(r: Any) -> list[Any]:
    return [r.rid, repr(r.sent_s), repr(r.first_token_s), repr(r.finish_s),
            repr(r.last_token_s), r.num_output, r.preemptions, r.prompt_len, r.output_len]


class _Capture:
    """Wraps a module's `simulate` / `row_run`: each call's result kept (and its CPU time)."""

    def __init__(self) -> None:
        self.results: list[Any] = []
        self.sim_cpu = 0.0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            t = time.process_time()
            out = fn(*args, **kwargs)
            self.sim_cpu += time.process_time() - t
            self.results.append(out)
            return out
        return wrapped


def _agg_row(row_id: str) -> dict[str, str]:
    return next(r for r in aggwork64_eval.subset() if r["id"] == row_id)


def run_case(name: str) -> tuple[Any, _Capture]:
    """The case replayed once (CLIENT_WORKLOAD on for an aggregated row); returns its outcome
    and the capture of its simulate calls."""
    cap = _Capture()
    if name in AGG:
        agg.CLIENT_WORKLOAD = True
        original = agg.row_run
        agg.row_run = cap.wrap(original)
        try:
            out = agg.replay(_agg_row(AGG[name]))
        finally:
            agg.row_run = original
        return out, cap
    path, run_id = PROSPECTIVE[name]
    runs = prospective_runs.load(_DATA / path)["runs"]
    run = next(r for r in runs if run_id is None or r["id"] == run_id)
    original = prospective_runs.simulate
    prospective_runs.simulate = cap.wrap(original)
    try:
        out = prospective_runs.run_one(run)
    finally:
        prospective_runs.simulate = original
    return out, cap


def dump(name: str, out: Any, cap: _Capture) -> dict[str, Any]:
    calls = []
    for res in cap.results:
        metrics = getattr(res, "metrics", res)
        calls.append({"metrics": _plain(metrics),
                      "finished": [_request(r) for r in getattr(res, "finished", ())]})
    return {"case": name, "outcome": _plain(out), "calls": calls}


def main(argv: list[str]) -> None:
    cmd = argv[0]
    if cmd == "list":
        print("\n".join([*AGG, *PROSPECTIVE]))
        return
    if cmd == "profile":
        name, path = argv[1], argv[2]
        prof = cProfile.Profile()
        prof.enable()
        run_case(name)
        prof.disable()
        prof.dump_stats(path)
        return
    repeat = 1
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if cmd == "dump":
        folder = Path(argv[1])
        folder.mkdir(parents=True, exist_ok=True)
        names = argv[2:] or [*AGG, *PROSPECTIVE]
    else:
        names = argv[1:] or [*AGG, *PROSPECTIVE]
    for name in names:
        times = []
        for _ in range(repeat):
            t = time.process_time()
            out, cap = run_case(name)
            times.append((time.process_time() - t, cap.sim_cpu))
        if cmd == "dump":
            (folder / f"{name}.json").write_text(json.dumps(dump(name, out, cap), indent=0))
        # The first repeat pays the set-up (its caches); the simulate calls' CPU apart.
        print(f"{name}: CPU s total " + " ".join(f"{a:.2f}" for a, _ in times)
              + " | simulate " + " ".join(f"{b:.2f}" for _, b in times), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
