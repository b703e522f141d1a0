"""The README's bench figures, computed from the benches (the block between its markers).

Run: python -m tests.benches.readme_figures   (rewrites the block in README.md)

tests/test_readme.py checks that the block equals what this computes, so the README never quotes
a stale count. Held out means what tests/benches/honest.py says: in no fitted constant's
`fitted_on` and of no fitted row's model, GPU, TP and EP.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from kvplan._util.units import GiB
from kvplan.capacity.plan import plan_capacity
from kvplan.sources.hf_config import load_config
from tests.benches import cost_bench as cb
from tests.benches import engine_bench as eb
from tests.benches import honest
from tests.benches import trtllm_bench as tb
from tests.benches import weights_bench as wb
from tests.benches.replay import row
from tests.oracle.vllm_oracle import oracle_inputs

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BEGIN = "<!-- bench-figures:begin (python -m tests.benches.readme_figures) -->"
END = "<!-- bench-figures:end -->"


def _pct(x: float) -> str:
    return f"{x:.2%}"


def _vllm() -> str:
    rows = [eb.compare(log) for log in eb.load_logs()]
    split = eb.vllm_split(rows)

    def text(ids: set[str] | None) -> str:
        subset = [r for r in rows if ids is None or r["log"]["id"] in ids]
        errors = [abs(r["error"]) for r in subset]
        return (f"{len(subset)} logs, median |error| {_pct(statistics.median(errors))}, "
                f"{sum(r['within'] for r in subset)} within max(2 %, 0.25 GiB)")

    return (f"- vLLM KV budget vs start-up logs: {text(None)}; held out "
            f"{text(set(split.held_out))} ({len(split.fitted)} logs fitted constants, "
            f"{len(split.same_config)} share a fitted configuration); held out less the logs a "
            f"rule was later written for: {text(set(split.unshaped))}; prospective: "
            f"{len(split.prospective)}.")


def _sglang() -> str:
    rows = [r for r in eb.sglang_rows() if r["log"]["replay"]]
    split = honest.split((row(r["log"], ep=1) for r in rows), "engine")

    def text(ids: set[str] | None) -> str:
        subset = [r for r in rows if ids is None or r["log"]["id"] in ids]
        errors = [abs(r["error"]) for r in subset]
        return (f"{len(subset)} logs, median |error| {_pct(statistics.median(errors))}, "
                f"{sum(r['within'] for r in subset)} within")

    return (f"- SGLang KV tokens vs start-up logs: {text(None)}; held out "
            f"{text(set(split.held_out))} ({len(split.fitted)} logs set the preload constants); "
            "prospective: "
            f"{len(split.prospective)}.")


def _trtllm() -> str:
    rows = tb.trtllm_rows()
    split = honest.split((row(r["log"], ep=r["log"]["ep"]) for r in rows), "engine")

    def text(ids: set[str] | None) -> str:
        errors = [abs(r["error"]) for r in rows if ids is None or r["log"]["id"] in ids]
        return (f"{len(errors)} logs, median |error| {_pct(statistics.median(errors))}, "
                f"{sum(e <= 0.03 for e in errors)} within 3 %")

    points = [r for r in tb.trtllm_point_rows() if r["log"]["replay"]]
    psplit = honest.split((row(r["log"], ep=1) for r in points), "engine")
    held_points = [r for r in points if r["log"]["id"] in set(psplit.held_out)]
    return (f"- TensorRT-LLM KV budget vs start-up logs: {text(None)}; held out "
            f"{text(set(split.held_out))} ({len(split.fitted)} logs fitted constants, "
            f"{len(split.same_config)} share a fitted configuration); max concurrency vs "
            f"{len(points)} aiconfigurator H100 points: held out {len(held_points)}, "
            f"{sum(r['within'] for r in held_points)} within 3 % or one request; prospective: "
            f"{len(split.prospective) + len(psplit.prospective)}.")


def _cost() -> str:
    split = cb.cost_split()
    held, unshaped = set(split.held_out), set(split.unshaped)
    decode = [(c, c.measured_tpot_ms / cb.predicted_tpot_ms(c), c.kind) for c in cb.CASES]
    prefill = [(c, c.measured_ms / cb.predicted_prefill_ms(c), "prefill")
               for c in cb.PREFILL_CASES]
    ttft = [(c, c.measured_ttft_ms / cb.predicted_ttft_ms(c), "ttft") for c in cb.TTFT_CASES]

    def count(table: list[tuple[Any, float, str]], ids: set[str] | None = None) -> str:
        mine = [(r, k) for c, r, k in table if ids is None or c.label in ids]
        return f"{sum(cb.in_band(r, k) for r, k in mine)} of {len(mine)}"

    return (f"- Cost model vs public timings, in band: decode {count(decode)} (held out "
            f"{count(decode, held)}, less the rows a rule was later written for "
            f"{count(decode, unshaped)}); engine-timed prefill {count(prefill)} (held out "
            f"{count(prefill, held)}); serving TTFT {count(ttft)} (held out {count(ttft, held)}, "
            f"less the rows a rule was later written for {count(ttft, unshaped)}); prospective: "
            f"{len(split.prospective)}.")


def _oracle() -> str:
    total = matched = 0
    for results in sorted((ROOT / "tests" / "data" / "oracle").glob("*/results.json")):
        spec, _ = load_config(results.parent / "config.json")
        for run in json.loads(results.read_text()):
            output = run["output"]
            if not output.get("ok"):
                continue
            plan = plan_capacity(spec, oracle_inputs(output, run["argv"]))
            total += 1
            matched += (plan.reported_kv_cache_tokens == output["kv_cache_tokens"]
                        and f"{plan.max_concurrency:.2f}" == f"{output['max_concurrency']:.2f}")
    return (f"- vLLM 0.32 itself (the CPU build, recorded runs on shrunken real configs): "
            f"{matched} of {total} runs match exactly (tokens and two-decimal concurrency).")


def _weights() -> str:
    errors = [abs(wb.predict(c).total / GiB / c.logged_gib - 1) for c in wb.load_cases()]
    return (f"- Weights vs vLLM's \"Model loading took\": {len(errors)} logs, median |error| "
            f"{_pct(statistics.median(errors))}, worst {_pct(max(errors))} (nothing fitted).")


def figures() -> str:
    """The block's Markdown, markers included."""
    lines = [BEGIN, "Bench figures, computed by the benches (examples/*-bench.md; held out: in no "
             "fitted constant's `fitted_on` and of no fitted row's model, GPU, TP and EP; "
             "prospective: added after the last rule change):", "",
             _vllm(), _sglang(), _trtllm(), _cost(), _oracle(), _weights(), END]
    return "\n".join(lines)


def readme_block(text: str) -> str:
    """The block as the README holds it, markers included."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def main() -> None:
    text = README.read_text()
    README.write_text(text.replace(readme_block(text), figures()))


if __name__ == "__main__":
    main()
