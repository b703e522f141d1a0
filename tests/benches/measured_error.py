"""kvplan's measured error per engine, from the engine bench's honest held-out lines: the data
`kvplan plan` puts beside every verdict (kvplan/engines/measured_error.json).

Run: python -m tests.benches.measured_error  (rewrites kvplan/engines/measured_error.json)

The bench judges a row "within" when |predicted - logged| <= max(2 % of logged, 0.25 GiB) (of
KV: the budget for vLLM and TensorRT-LLM, the token pool times its bytes per token for SGLang).
For each engine, over the held-out rows of examples/engine-bench.md (tests/benches/honest.py: in
no fitted constant's `fitted_on` and of no fitted row's model, GPU, TP and EP), each row's miss
is measured in units of that tolerance, and the 90th percentile k of those misses scales it: 90 %
of the held-out logs fell within max(k x 2 % of the budget, k x 0.25 GiB), stored as `relative`
(k x 0.02) and `bytes` (k x 0.25 GiB). A plan's band is that expression over its own KV budget.
Beside them, `given_budget`: how many recorded vLLM oracle runs with the KV budget given
(tests/data/oracle, examples/vllm-oracle.md) kvplan matches exactly -- `kvplan check`'s band when
the deployment states its budget. Nothing here is typed by hand: tests/test_measured_error.py
recomputes it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from tests.benches import engine_bench, honest, trtllm_bench
from tests.benches.replay import ROOT, TOLERANCE_GIB, GiB, row
from tests.oracle.vllm_oracle import replayed_matches

OUT = ROOT / "kvplan" / "engines" / "measured_error.json"
QUANTILE = 0.9
RELATIVE = 0.02  # the bench's tolerance: max(2 %, TOLERANCE_GIB)
STATISTIC = ("90 % of the held-out start-up logs of examples/engine-bench.md fell within "
             "max(relative x KV budget, bytes) (tests/benches/measured_error.py)")


def quantile(values: Sequence[float], q: float = QUANTILE) -> float:
    """The nearest-rank quantile: the smallest value with at least q of the values at or
    below it (no interpolation, so the figure is one measured row's error)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _figures(held: list[tuple[float, float]]) -> dict[str, Any]:
    """(logged KV bytes, predicted - logged in bytes) of each held-out row -> the record."""
    misses = [abs(miss) / max(RELATIVE * abs(logged), TOLERANCE_GIB * GiB)
              for logged, miss in held]
    k = quantile(misses)
    return {"relative": round(k * RELATIVE, 6), "bytes": int(k * TOLERANCE_GIB * GiB),
            "logs": len(held), "statistic": STATISTIC}


def vllm_figures() -> dict[str, Any]:
    rows = [engine_bench.compare(log) for log in engine_bench.load_logs()]
    held = set(engine_bench.vllm_split(rows).held_out)
    return _figures([(r["logged_gib"] * GiB, (r["predicted_gib"] - r["logged_gib"]) * GiB)
                     for r in rows if r["log"]["id"] in held])


def sglang_figures() -> dict[str, Any]:
    replayed = [r for r in engine_bench.sglang_rows() if r["log"]["replay"]]
    held = set(honest.split((row(r["log"], ep=1) for r in replayed), "engine").held_out)
    return _figures([(r["logged_tokens"] * r["cell_bytes"],
                      (r["predicted_tokens"] - r["logged_tokens"]) * r["cell_bytes"])
                     for r in replayed if r["log"]["id"] in held])


def trtllm_figures() -> dict[str, Any]:
    rows = trtllm_bench.trtllm_rows()
    held = set(honest.split((row(r["log"], ep=r["log"]["ep"]) for r in rows),
                            "engine").held_out)
    return _figures([(r["logged_gib"] * GiB, (r["predicted_gib"] - r["logged_gib"]) * GiB)
                     for r in rows if r["log"]["id"] in held])


def given_budget_figures() -> dict[str, Any]:
    matched, runs = replayed_matches()
    return {"vllm": {"matched": matched, "runs": runs, "statistic": (
        "recorded vLLM 0.32 CPU runs with the KV budget given (tests/data/oracle, "
        "examples/vllm-oracle.md) that kvplan matches exactly (tokens and concurrency)")}}


def figures() -> dict[str, Any]:
    return {"vllm": vllm_figures(), "sglang": sglang_figures(), "trtllm": trtllm_figures(),
            "given_budget": given_budget_figures()}


def main() -> None:
    OUT.write_text(json.dumps(figures(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
