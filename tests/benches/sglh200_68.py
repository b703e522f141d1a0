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

RESULT (written after the replay; before = main at b5b2328a, after = the rules, 912e2e62; the
same figures on the final tree; about 1 CPU minute each on the shared 2-core host):
- Aggregated, DeepSeek-R1 / V3 FP8 H200 TP 8, SGLang 0.5.9 (39 rows, 13 distinct measurements:
  each 2026-03-25 row has a 2026-04-06 copy and a dsr1_..._cfg81 copy with the same figures).
  Held out, 36: median |TPOT err| 14.8 -> 8.2 %, median |TTFT err| 149.9 -> 151.9 %. Shaped, 3
  (289, 285, 256): TPOT 18.9 -> 6.7 %, TTFT 100.9 -> 99.0 %. The held-out rows less the 6
  copies of the shaped ones (30): TPOT 14.7 -> 8.6 %, TTFT 172.1 -> 174.4 %. Every decode
  step is 1.26 - 1.32 ms shorter (kvplan was above the measured TPOT at 12 of 13 points, by
  1.1 - 4.9 ms; after, at 11 by 0.03 - 3.5 ms, and 0.26 ms below at 1,024 / 1,024 C 64; at
  8,192 / 1,024 C 64 it was already 4.1 ms below and goes to 5.4 below). The mean TTFT moves
  both ways (-112 to +40 ms): the fused norms shorten a short extend, the shared expert's
  FLOPs priced inside the fused MoE lengthen a long one.
- Decision rule: TPOT met (14.8 -> 8.2 % on the 36 held out); TTFT NOT met: +2.0 points
  (149.9 -> 151.9 %), past the 1-point bound. The rules land as code; the TTFT errors here
  (+50 to +576 %) are dominated by what these rules do not touch.
- prospective56 / 61 gpt-oss-120b H100 / H200 TP 8, SGLang 0.5.8 (8 runs, shaped already;
  replayed cold with prospective_runs.run_one, not the page's warm-server replay): kvplan
  was already fast (TPOT -45 to -86 %); the fusion makes it faster: median |TPOT err| 66.8 ->
  67.2 %, TTFT 67.2 -> 67.2 %. Moves the wrong way, by code.
- Not moved, by construction: the H200 Qwen3-235B rows (0.5.6.post2), the Qwen3.5-397B rows
  (model type qwen3_5_moe, EP 8), prospective60's DeepSeek H200 rows (SGLang 0.5.3),
  prospective64 / 65 (Qwen3.5 / 3.6 model types). The disaggregated rows: of the 113 SGLang
  DeepSeek H100 / H200 rows (0.5.8 / 0.5.8.post1) 110 are refused (layout not stated); the 3
  replayed (prospective cfg434, shaped by earlier rules) move TTFT 24.5 -> 24.8 %, TPOT 2.0
  -> 1.7 % (median |err|).

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
