"""SGLang's two Hopper decode rules that sgldec67 read but did not write (issues 30, 29,
sglh200_68): the flashinfer all-reduce + RMSNorm fusion on SM 9.0 from 0.5.7, and DeepSeek-V3's
shared expert folded into the fused MoE on CUDA at EP 1.

DECISION RULE (committed before any row was replayed with the rules):
- Both rules follow SGLang's code (0.5.7 / 0.5.9 wheels); they land whatever the figures do,
  and a figure that moves the wrong way is reported as such.
- Rows: every SGLang row on H100 / H200 that the aggregated replay (aiconfig_agg_runs) replays
  and the rules can move (the DeepSeek-R1 / V3 FP8 TP 8 rows of SGLang 0.5.9, 39; the H200
  Qwen3-235B rows ran 0.5.6.post2, before both rules, and the Qwen3.5-397B rows are a model
  type neither names, so they cannot move), and the prospective sets' SGLang Hopper runs the
  rules can move (prospective56 / 61's gpt-oss-120b H100 / H200 TP 8 under 0.5.8: the
  all-reduce fusion only). Per set: rows, median |TPOT err| and |TTFT err|, before (main at
  b5b2328a) -> after.
- Splits: the DeepSeek-R1 H200 rows 289, 285, 256 (1,024 / 1,024 at 4 / 16 / 64 users) were
  read by sgldec67 to find these rules: SHAPED. The other 36 DeepSeek H200 rows: held out
  (never read to write a rule; they share the shaped rows' engine, model and GPU). The Scicom
  gpt-oss runs: shaped already (sgllong61's warm-server replay, sglgptoss64), reported apart.
- Expected, the test of the rules: on the 36 held-out DeepSeek H200 rows the median |TPOT err|
  falls (kvplan sat 0.6 - 3.2 ms above at 4 - 64 users, sgldec67), and the median |TTFT err|
  gets no worse by more than 1 point (the fusion also takes eager-prefill norms out). If the
  TPOT median does not fall, the rules still land (they follow code) and that is reported.

Run: python -m tests.benches.sglh200_68 (prints one line a row, then the medians).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from tests.benches import aiconfig_agg_runs as agg
from tests.benches.aiconfig_agg_configs import why_refused
from tests.benches.prospective_runs import _err, run_one, runs_by_id

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
# sgldec67's decomposition read these (1,024 / 1,024 TP 8 at 4 / 16 / 64 users): shaped.
SHAPED = frozenset(f"2026_03_25_deepseek_r1_h200_sxm_sglang_fp8_agg_1024x1024_c{c}_tp8_0_ep1_0_{n}"
                   for c, n in ((4, 289), (16, 285), (64, 256)))
DEEPSEEK = ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3")
PROSPECTIVE = ("prospective56.json", "prospective61.json")


def agg_rows() -> list[dict[str, str]]:
    """The aggregated SGLang H200 / H100 DeepSeek rows the replay runs (module docstring)."""
    return [r for r in agg.rows()
            if r["backend"] == "sglang" and r["system"] in ("h200_sxm", "h100_sxm")
            and r["model_path"] in DEEPSEEK and not agg.why_not(r) and not why_refused(r)]


def prospective_runs() -> list[dict]:  # type: ignore[type-arg]
    """prospective56 / 61's SGLang gpt-oss-120b runs on H100 / H200 (module docstring)."""
    return [r for f in PROSPECTIVE for r in runs_by_id(DATA / f).values()
            if r.get("engine") == "sglang" and "gpt-oss" in r["model"]
            and r["gpu"] in ("H100-80GB", "H200")]


def _median(errors: list[float]) -> str:
    return f"{statistics.median(abs(e) for e in errors) * 100:.1f} %" if errors else "-"


def main(which: str = "all") -> None:
    sets: dict[str, list[tuple[float, float]]] = {}
    if which in ("all", "agg"):
        for r in agg_rows():
            rep = agg.replay(r)
            if rep.why_not:
                print(f"{r['id']} refused: {rep.why_not}")
                continue
            assert rep.ttft_ms is not None and rep.tpot_ms is not None
            ttft = rep.ttft_ms / rep.measured_ttft_ms - 1
            tpot = rep.tpot_ms / rep.measured_tpot_ms - 1
            split = "shaped" if r["id"] in SHAPED else "held out"
            sets.setdefault(f"agg DeepSeek H200 {split}", []).append((ttft, tpot))
            print(f"{r['id']} {split} TTFT {rep.ttft_ms:.1f}/{rep.measured_ttft_ms:.1f} "
                  f"({ttft:+.3f}) TPOT {rep.tpot_ms:.3f}/{rep.measured_tpot_ms:.3f} "
                  f"({tpot:+.3f})", flush=True)
    if which in ("all", "prosp"):
        for run in prospective_runs():
            res = run_one(run)
            if res.refused:
                print(f"{run['id']} refused: {res.refused}")
                continue
            ttft = _err(res, "mean_ttft_ms", "ttft_ms", "mean")
            tpot = _err(res, "mean_tpot_ms", "tpot_ms", "mean")
            sets.setdefault("prospective56/61 gpt-oss Hopper (shaped)", []).append((ttft, tpot))
            print(f"{run['id']} TTFT {ttft:+.3f} TPOT {tpot:+.3f}", flush=True)
    for name, errs in sets.items():
        print(f"{name}: {len(errs)} rows, median |TPOT err| {_median([e[1] for e in errs])}, "
              f"median |TTFT err| {_median([e[0] for e in errs])}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
