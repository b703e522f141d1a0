"""sglbw65 (issue 30), forensic: kvplan's SGLang decode and prefill steps for prospective65's
Qwen3.5 MoE cells on H200 / B200 / B300, op by op, beside what each cell's published throughput
implies. Prints only; no rule here.

For each cookbook cell at concurrency 1,024: the running cap kvplan's SGLang pool gives
(max_running_requests, capped by the mamba slots), the decode step at that batch (every request
at 8,192 + 512 keys) from roofline.step_time's `by_op`, the prefill step of one 8,192-token
prompt (by op, `prefill_launch` the eager launch time), and the decoding batch the cell's
published figures imply by Little's law: output tok/s x P50 TPOT, where output tok/s =
tokens_per_sec_per_gpu x TP x OSL / (ISL + OSL) (the cookbook's definition, quoted in
tests/data/sim_to_real/prospective65.json).

Run: python -m tests.benches.sglbw65 [35B|122B|397B]
"""

from __future__ import annotations

import sys

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.perf.roofline import step_time
from tests.benches.prospective65_runs import DATA
from tests.benches.prospective_runs import REPO, load

ISL, OSL = 8192, 1024


def main(model: str = "35B") -> None:
    for run in load(DATA)["runs"]:
        if model not in run["id"] or "conc 1024" not in run["id"]:
            continue
        spec = load_spec(str(REPO / run["model"]))
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=Engine.sglang,
                                 engine_version=run["sglang"],
                                 mem_fraction=run.get("gpu_memory_utilization"))
        sim, _ = setup(spec, inputs)
        n = sim.scheduler.max_num_seqs
        common = sim.cost._common  # the simulator's own step settings
        gpu = inputs.gpu
        assert gpu is not None
        dec = step_time(spec, gpu, tokens=n, context=ISL + OSL // 2, requests=n, **common)
        pre = step_time(spec, gpu, tokens=ISL, context=ISL, requests=1, phase="prefill",
                        logits=1, **common)
        out = run["published"]["tokens_per_sec_per_gpu"] * run["tp"] * OSL / (ISL + OSL)
        tpot = run["measured"]["median_tpot_ms"]
        print(f"{run['gpu']} TP{run['tp']}: running cap {n}; measured decoding batch "
              f"{out * tpot / 1e3:.0f} ({out:,.0f} output tok/s x {tpot} ms); decode step "
              f"{dec.seconds * 1e3:.2f} ms; prefill of {ISL:,} tokens {pre.seconds * 1e3:.1f} ms")
        for name, st in (("decode", dec), ("prefill", pre)):
            ops = sorted(st.by_op.items(), key=lambda kv: -kv[1])
            print(f"  {name}: " + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in ops if v > 0))


if __name__ == "__main__":
    main(*sys.argv[1:])
