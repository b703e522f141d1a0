"""The routed experts' fitted compute fractions (kvplan.perf.efficiency.MOE_GEMM_FIT /
FP8_MOE_GEMM_FIT, `Efficiency.moe_gemm` / `fp8_moe_gemm`) judged on serving rows with MoE
models: each set's median TTFT and TPOT ratio (kvplan / measured) and median |error| with
kvplan's default beside the same rows with the fitted fractions on every CUDA preset (AMD
presets unchanged: the fit is NVIDIA kernels'). Printed only, on no generated page:

    PYTHONPATH=. python -m tests.benches.moe_gemm_bench [sets ...]

sets (default: all): s2r (the sim-to-real study's MoE runs, every stage of its main /
prospective / blind / offload sets), prospective (the MoE runs of prospective30-57), accelmark
(its MoE runs' QPS levels), agg (aiconfigurator's aggregated MoE rows, every AGG_EVERY-th
replayable one in the bench's order: a rule fixed before any was replayed), disagg
(disagg-bench's rows 3a-3b and the frozen prospective ones, 3j among them). The two modes run
in separate processes (the benches cache their engines' setups, built with the efficiency of
their first call). Sets (a) are other publishers' rows; agg and disagg are aiconfigurator's,
the publisher of the kernel tables the fractions were fitted on.

Measured at branch moefit58 (the constants committed at 025ca10b before any of these rows was
replayed with them; kvplan / measured medians and median |error|, default -> fitted):
- s2r, the Mixtral-8x7B / 8x22B stages (prospective, blind, offload; 20 stages): TTFT mean
  0.814 -> 0.982 (18.6 -> 14.3 %), ITL mean 1.005 -> 1.078 (1.7 -> 7.8 %): WORSE on ITL;
- prospective30-57's MoE runs (69, 50 moved), median TTFT 0.333 -> 0.566 (66.7 -> 44.6 %),
  median TPOT 0.633 -> 0.725 (36.9 -> 27.6 %); prospective54's 4 runs TTFT 14.9 -> 24.8 %;
- accelmark: no MoE run (its blind2 runs are Llama / Qwen2.5);
- agg (every 4th replayable MoE row, 362 with ratios, 283 moved): TTFT 0.807 -> 0.990 (35.0 ->
  33.8 %), TPOT 1.058 -> 1.065 (15.7 -> 15.7 %); its 266 held-out rows TTFT 0.741 -> 0.965
  (36.5 -> 32.4 %), TPOT 1.036 -> 1.045 (14.5 -> 14.9 %);
- disagg (229 rows with ratios, 120 moved): TTFT 0.627 -> 0.720 (70.0 -> 64.9 %), TPOT
  1.084 -> 1.084 (20.6 -> 21.2 %).
Not the default (the rule set before evaluating: other publishers' rows must not get worse):
the Mixtral stages' ITL does, and the kernel tables show why (examples/moe-op-bench.md, "rows
per expert": Mixtral's few wide experts run near the dense 0.70).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from kvplan.perf import efficiency
from tests.benches import fraction_counterfactual as fc

AGG_EVERY = 4  # the agg set's subsample: every 4th replayable MoE row (fixed before replaying)
SETS = fc.SETS


@contextmanager
def moe_fitted() -> Iterator[None]:
    """Every CUDA preset's efficiency with the fitted experts' fractions (the rest unchanged)."""
    from kvplan.hardware.gpus import GPUS

    table = efficiency.DEVICE_EFFICIENCY
    saved = dict(table)
    for gpu in GPUS.values():
        if gpu.platform == "cuda":
            table[gpu.name] = replace(table.get(gpu.name, efficiency.DEFAULT_EFFICIENCY),
                                      moe_gemm=efficiency.MOE_GEMM,
                                      fp8_moe_gemm=efficiency.FP8_MOE_GEMM)
    try:
        yield
    finally:
        table.clear()
        table.update(saved)


def is_moe(spec: object) -> bool:
    return getattr(spec, "moe", None) is not None


def agg_rows() -> list[dict[str, str]]:
    """The agg set: every AGG_EVERY-th aggregated row with an MoE checkpoint that the bench
    replays (why_not empty), in aiconfig_agg_runs.rows() order."""
    return fc.agg_rows(is_moe, AGG_EVERY)


def collect_one(name: str) -> fc.Ratios:
    from tests.benches import (
        prospective31_runs,
        prospective52_runs,
        prospective53_runs,
        prospective53b_runs,
        prospective54_runs,
        prospective56_runs,
        prospective57_runs,
    )
    from tests.benches import prospective_runs as p

    if name == "prospective":  # prospective30-57, the sets this bench's figures were taken on
        return fc.prospective(is_moe, (p, prospective31_runs, prospective52_runs,
                                       prospective53_runs, prospective53b_runs,
                                       prospective54_runs, prospective56_runs,
                                       prospective57_runs))
    if name == "agg":
        return fc.agg(is_moe, AGG_EVERY)
    if name == "disagg":
        return fc.disagg()
    return {"s2r": fc.s2r, "accelmark": fc.accelmark}[name](is_moe)


def main(argv: list[str]) -> None:
    fc.main(argv, module="tests.benches.moe_gemm_bench", collect=collect_one,
            fitted=moe_fitted, none="no MoE row")


if __name__ == "__main__":
    main(sys.argv[1:])
