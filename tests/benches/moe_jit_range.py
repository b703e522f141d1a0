"""What `simulate --moe-jit-compile-ms` would do to the sim-to-real study's vLLM sets (issue 30,
branch mixjit53), over a range of compile times: no published figure of a Triton fused_moe
compile on H100 was found, so kvplan sets none and no page uses one; this only shows the range
(never pick a value from it: that would fit the constant on these rows, which shaped the rule).

    PYTHONPATH=. python -m tests.benches.moe_jit_range [0.5,1,2]   (about 10 s a run and value)

Per set (prospective, blind, offload): the median |predicted / measured - 1| of TTFT mean / p90
/ p99, ITL and E2E mean over every stage (the dense runs' stages do not move: no Triton MoE),
the Mixtral stage-0 rows' signed mean-TTFT error, and the compiles each Mixtral run met."""

from __future__ import annotations

import statistics
import sys

from tests.benches import sim_to_real as s

KEYS = ("ttft_mean", "ttft_p90", "ttft_p99", "itl_mean", "e2e_mean")


def main(values: list[float]) -> None:
    rec = s.load_records()
    for kw in ("prospective", "blind", "offload"):
        _, runs = s.load_runs(**{kw: True})
        dense = {r.id: s.simulate_run(r) for r in runs if "mixtral" not in r.model.lower()}
        for c in (None, *values):
            errs: dict[str, list[float]] = {k: [] for k in KEYS}
            first, compiles = [], []
            for run in runs:
                mix = run.id not in dense
                sim = s.simulate_run(run, moe_jit_compile_s=c) if mix else dense[run.id]
                if mix:
                    compiles.append(f"{run.id}: {sim.jit_compiles}")
                for i in range(len(run.stages)):
                    for k in KEYS:
                        if (run.id, i, k) in rec:
                            errs[k].append(abs(sim.stages[i][k] / rec[(run.id, i, k)]["measured"]
                                               - 1))
                    if mix and i == 0:
                        first.append(sim.stages[0]["ttft_mean"]
                                     / rec[(run.id, 0, "ttft_mean")]["measured"] - 1)
            print(f"{kw}, {'off' if c is None else f'{c:g} s'}: "
                  + ", ".join(f"{k} {statistics.median(v):.1%}" for k, v in errs.items())
                  + f"; Mixtral stage 0 mean TTFT {statistics.median(first):+.1%} "
                  f"({min(first):+.1%} to {max(first):+.1%}); compiles {', '.join(compiles)}")


if __name__ == "__main__":
    main([float(v) for v in (sys.argv[1] if len(sys.argv) > 1 else "0,0.5,1,2,4").split(",")])
