"""The dense FP8 GEMMs' fitted fraction (kvplan.perf.efficiency.FP8_DENSE_GEMM_FIT,
`Efficiency.fp8_dense_gemm`, fitted by tests/benches/fp8_gemm_fit.py on aiconfigurator's H100
GEMM tables) judged on serving rows whose checkpoint runs its dense GEMMs in FP8 (`dense_fp8`:
the attention projections or the dense MLPs ask for w8a8 FP8): each set's median TTFT and TPOT
ratio (kvplan / measured) and median |error|, kvplan's default beside the same rows with the
fitted fraction on every SM 9.0 preset (H100, H800, H20, H200; the Blackwell presets keep
their 0.55, AMD theirs). Printed only, on no generated page
(tests/benches/fraction_counterfactual.py runs the two modes):

    PYTHONPATH=. python -m tests.benches.fp8_gemm_bench [sets ...]

sets: s2r, prospective (prospective30-58's FP8 runs), accelmark, agg (every AGG_EVERY-th
replayable aggregated row with an FP8 checkpoint: a rule fixed before any was replayed), disagg
(every row: no model filter). s2r, prospective and accelmark are other publishers' rows; agg
and disagg are aiconfigurator's, the publisher of the kernel tables the fraction was fitted on.

Measured at branch fp8gemm59 (the constant committed at 9a2afeaa before any of these rows was
replayed with it; kvplan / measured medians and median |error|, default -> fitted):
- s2r: no FP8 run (the study's 27 runs serve bf16 checkpoints);
- prospective30-58's FP8 runs (46: prospective53's DeepSeek-V3 / V3.2 on H200, 9;
  prospective54's MiniMax-M2 on GB300, 2, unmoved: not SM 9.0; prospective56's and 58's
  MiniMax-M2 on H100, 2 + 33; 43 moved): TTFT 0.554 -> 0.570 (44.6 -> 43.0 %), TPOT 0.901 ->
  0.904 (17.1 -> 17.1 %); by set, TTFT |error| prospective53 44.5 -> 42.4 %, 54 14.9 -> 14.9 %,
  56 32.6 -> 30.6 %, 58 47.8 -> 46.3 %; TPOT prospective53 44.4 -> 42.3 %, 54 6.5 -> 6.5 %, 56
  21.3 -> 21.3 %, 58 14.7 -> 14.2 %: no set worse;
- accelmark: no FP8 run (Llama-3 / 3.1-8B, Qwen2.5-0.5B in bf16);
- agg (every 4th replayable FP8 row: MiniMax-M2.5, Qwen3-235B-A22B-FP8, Qwen3-32B, Qwen3.5-397B,
  DeepSeek-R1 / V3 FP8; 249 with ratios, 135 moved): TTFT 0.802 -> 0.837 (38.0 -> 37.3 %), TPOT
  1.084 -> 1.101 (15.2 -> 15.7 %); its 147 held-out rows TTFT 0.722 -> 0.735 (40.0 -> 39.7 %),
  TPOT 1.057 -> 1.058 (13.1 -> 13.1 %);
- disagg (every row, 231 with ratios, 36 moved: the FP8 ones on Hopper): TTFT 0.812 -> 0.812
  (52.6 -> 51.6 %), TPOT 1.099 -> 1.099 (18.6 -> 18.6 %).
Not the default (the rule set before evaluating: the other publishers' sets' TTFT better and TPOT
no more than a point worse, which holds; aiconfigurator's agg set not worse, which its TPOT is,
by 0.5 point over the 249 rows, flat on the held-out 147). The gain is small everywhere: kvplan's
FP8 TTFTs stay 30-60 % low, so the dense GEMMs' fraction is not what those misses are made of.
Were it made the default, the prefill launch fit (kvplan.perf.efficiency.PREFILL_LAUNCH_FIT, its
4 DeepSeek FP8 TP-8 H200 prefills) would move from 69.6 to 67.1 us (cost_bench.
fitted_prefill_launch_s under fp8_fitted), and would have to be refitted with it.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from kvplan.perf import efficiency
from tests.benches import fraction_counterfactual as fc

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec

PROSPECTIVE_SETS = (
    "prospective_runs", "prospective31_runs", "prospective52_runs", "prospective53_runs",
    "prospective53b_runs", "prospective54_runs", "prospective56_runs", "prospective57_runs",
    "prospective58_runs")
AGG_EVERY = 4  # every 4th replayable FP8 row (fixed before replaying, as moe_gemm_bench's)
FIT_ARCH = (9, 0)  # the fit's tables are Hopper's (H100; H200 held out)


def fp8_fitted() -> AbstractContextManager[None]:
    """Every SM 9.0 preset's efficiency with the fitted dense FP8 fraction (the rest unchanged)."""
    return fc.patched_presets(
        lambda gpu: gpu.platform == "cuda" and gpu.compute_capability == FIT_ARCH,
        fp8_dense_gemm=efficiency.FP8_DENSE_GEMM)


def dense_fp8(spec: ModelSpec) -> bool:
    """The checkpoint's attention projections or dense MLPs ask for w8a8 FP8 GEMMs."""
    from kvplan._util.dtypes import GemmMath
    from kvplan.perf.weight_bytes import bytes_per_param

    math = bytes_per_param(spec, 1)[1]
    return GemmMath.fp8 in (math["attention"], math["dense_mlp"])


def collect_one(name: str) -> fc.Ratios:
    # prospective30-58: the sets this bench's figures were taken on
    return fc.collect(name, dense_fp8, AGG_EVERY, PROSPECTIVE_SETS)


def main(argv: list[str]) -> None:
    fc.main(argv, module="tests.benches.fp8_gemm_bench", collect=collect_one,
            fitted=fp8_fitted, none="no FP8 row")


if __name__ == "__main__":
    main(sys.argv[1:])
