"""logitsgather63's evaluation (issue 30): the TP logits all-gather under plain TP
(kvplan.perf.step_comm `_vocab_gather`, frozen at b26e18c1 before any row was replayed) with
and without it, on a held-out sample: every 10th of aiconfigurator's aggregated rows that are
held out (not shaped, no host of shaped disagg rows), TP above 1 and replayable
(tests.benches.aiconfig_agg_runs), and the 50 runs of prospective63
(tests.benches.prospective63_runs, held out).

Recorded at b26e18c1 (the without column is the code before it: prospective63's without
figures equal its FIRST_EVALUATION):
- aggregated, 95 rows replayed of 99 picked (983 eligible): TTFT median |error| 37.8 -> 37.8 %,
  in band 33 -> 33; TPOT 12.4 -> 12.6 % (slightly worse: code-following, kept), in band 85 -> 85;
  5 rows' TPOT ratio moved by more than 0.005 (gpt-oss-120b TP 4 / 8, +0.006 to +0.009).
- prospective63, 50 of 50: TTFT mean median |error| 49.1 -> 49.0 %; TPOT mean 9.4 -> 8.9 %
  (Qwen3-8B 13.7 -> 13.1, Qwen3-14B 11.0 -> 10.3, gpt-oss-120b 18.8 -> 18.1, Llama-3.1-70B
  3.3 -> 3.4, Qwen3-32B 6.3 -> 6.1; concurrency 100: 12.1 -> 11.4).

Run: python -m tests.benches.logitsgather63_eval   (each side in its own process; ~5 min of
one CPU)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from unittest.mock import patch


def _side(without: bool) -> dict[str, list[tuple[float, float] | None]]:
    import kvplan.perf.roofline as roofline
    from tests.benches import aiconfig_agg_runs as agg
    from tests.benches import prospective_runs as pr
    from tests.benches.prospective63_runs import DATA
    with patch.object(roofline, "_vocab_gather", lambda *a, **k: None) if without else (
            patch.object(roofline, "_vocab_gather", roofline._vocab_gather)):
        shaped, hosts = agg.shaped_rows(), agg.shaped_hosts()
        held = [r for r in agg.rows() if agg.PREFIX + r["id"] not in shaped
                and agg._host(r) not in hosts and agg.layout(r)[0] > 1 and not agg.why_not(r)]
        rows = [agg.replay(r).ratios for r in held[::10]]
        runs = [pr.run_one(run) for run in pr.load(DATA)["runs"]]
        prosp = [None if r.refused else (pr._err(r, "mean_ttft_ms", "ttft_ms", "mean"),
                                         pr._err(r, "mean_tpot_ms", "tpot_ms", "mean"))
                 for r in runs]
    return {"agg": rows, "prosp": prosp}


def main() -> None:
    if sys.argv[1:2] in (["with"], ["without"]):
        json.dump(_side(sys.argv[1] == "without"), sys.stdout)
        return
    sides = {s: json.loads(subprocess.run([sys.executable, "-m", __spec__.name, s], check=True,
                                          capture_output=True, text=True).stdout)
             for s in ("without", "with")}
    for name, fn in (("aggregated, every 10th held-out TP > 1", lambda x: abs(x - 1)),
                     ("prospective63", abs)):
        key = "agg" if name.startswith("agg") else "prosp"
        pairs = [(b, a) for b, a in zip(sides["without"][key], sides["with"][key], strict=True)
                 if b and a]
        for i, metric in ((0, "TTFT"), (1, "TPOT")):
            before = statistics.median(fn(b[i]) for b, _ in pairs) * 100
            after = statistics.median(fn(a[i]) for _, a in pairs) * 100
            print(f"{name}: {len(pairs)} rows, {metric} median |error| {before:.1f} -> "
                  f"{after:.1f} %")


if __name__ == "__main__":
    main()
