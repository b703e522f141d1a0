"""Print each Scicom SGLang row's errors (TTFT, TPOT, ITL, E2E mean) for given set files."""
import sys
from pathlib import Path

from tests.benches.prospective_runs import load, run_one

for name in sys.argv[1:]:
    path = Path("tests/data/sim_to_real") / f"{name}.json"
    for run in load(path)["runs"]:
        if run.get("engine") != "sglang":
            continue
        r = run_one(run)
        if r.refused:
            print(name, run["id"], "REFUSED", r.refused[:80])
            continue
        s, m = r.simulated, r.measured
        print(f"{name}\t{run['id']}\tTTFT {s['ttft_ms.mean']/m['mean_ttft_ms']-1:+.3f}\t"
              f"TPOT {s['tpot_ms.mean']/m['mean_tpot_ms']-1:+.3f}\t"
              f"ITL {s['itl_ms.mean']/m['mean_itl_ms']-1:+.3f}\t"
              f"E2E {s['e2e_ms.mean']/m['mean_e2e_ms']-1:+.3f}\thit {r.prefix_hit_rate:.3f}",
              flush=True)
