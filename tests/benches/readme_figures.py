"""The README's bench figures, computed from the benches (the block between its markers).

Run: python -m tests.benches.readme_figures   (rewrites the block in README.md)

tests/test_readme.py checks that the block equals what this computes, so the README never quotes
a stale count. Held out means what tests/benches/honest.py says: in no fitted constant's
`fitted_on` and of no fitted row's model, GPU, TP and EP.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from kvplan._util.units import GiB
from tests.benches import cost_bench as cb
from tests.benches import engine_bench as eb
from tests.benches import honest
from tests.benches import trtllm_bench as tb
from tests.benches import weights_bench as wb
from tests.benches.replay import row
from tests.oracle.vllm_oracle import replayed_matches

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BEGIN = "<!-- bench-figures:begin (python -m tests.benches.readme_figures) -->"
END = "<!-- bench-figures:end -->"


def _pct(x: float) -> str:
    return f"{x:.2%}"


def _within(rows: list[dict[str, Any]], ids: set[str] | None = None) -> str:
    subset = [r for r in rows if ids is None or r["log"]["id"] in ids]
    if not subset:
        return "-"
    errors = [abs(r["error"]) for r in subset]
    return (f"{sum(r['within'] for r in subset)} of {len(subset)}, "
            f"{_pct(statistics.median(errors))}")


Row = tuple[str, str, str, str, str]
PROSPECTIVE: list[int] = []


def _vllm() -> list[Row]:
    rows = [eb.compare(log) for log in eb.load_logs()]
    split = eb.vllm_split(rows)
    PROSPECTIVE.append(len(split.prospective))
    return [("vLLM KV budget", "start-up logs, max(2 %, 0.25 GiB)", _within(rows),
             _within(rows, set(split.held_out)), _within(rows, set(split.unshaped)))]


def _sglang() -> list[Row]:
    rows = [r for r in eb.sglang_rows() if r["log"]["replay"]]
    split = honest.split((row(r["log"], ep=1) for r in rows), "engine")
    PROSPECTIVE.append(len(split.prospective))
    return [("SGLang KV tokens", "start-up logs, max(2 %, 0.25 GiB)", _within(rows),
             _within(rows, set(split.held_out)), _within(rows, set(split.unshaped)))]


def _trtllm() -> list[Row]:
    rows = [{**r, "within": abs(r["error"]) <= 0.03} for r in tb.trtllm_rows()]
    split = honest.split((row(r["log"], ep=r["log"]["ep"]) for r in rows), "engine")
    points = [r for r in tb.trtllm_point_rows() if r["log"]["replay"]]
    psplit = honest.split((row(r["log"], ep=1) for r in points), "engine")
    PROSPECTIVE.append(len(split.prospective) + len(psplit.prospective))

    def count(ids: set[str] | None = None) -> str:
        mine = [r for r in points if ids is None or r["log"]["id"] in ids]
        return f"{sum(r['within'] for r in mine)} of {len(mine)}" if mine else "-"

    return [("TensorRT-LLM KV budget", "start-up logs, 3 %", _within(rows),
             _within(rows, set(split.held_out)), _within(rows, set(split.unshaped))),
            ("TensorRT-LLM max concurrency", "aiconfigurator H100, 3 % or 1 request",
             count(), count(set(psplit.held_out)), count(set(psplit.unshaped)))]


def _cost() -> list[Row]:
    split = cb.cost_split()
    PROSPECTIVE.append(len(split.prospective))
    held, unshaped = set(split.held_out), set(split.unshaped)
    decode = [(c, c.measured_tpot_ms / cb.predicted_tpot_ms(c), c.kind) for c in cb.CASES]
    prefill = [(c, c.measured_ms / cb.predicted_prefill_ms(c), "prefill")
               for c in cb.PREFILL_CASES]
    ttft = [(c, c.measured_ttft_ms / cb.predicted_ttft_ms(c), "ttft") for c in cb.TTFT_CASES]

    def count(table: list[tuple[Any, float, str]], ids: set[str] | None = None) -> str:
        mine = [(r, k) for c, r, k in table if ids is None or c.label in ids]
        return f"{sum(cb.in_band(r, k) for r, k in mine)} of {len(mine)}" if mine else "-"

    return [(name, "public timings, in band", count(table), count(table, held),
             count(table, unshaped))
            for name, table in (("Decode time (TPOT)", decode),
                                ("Prefill time, engine-timed", prefill),
                                ("Serving TTFT", ttft))]


def _oracle() -> list[Row]:
    # Every recorded run, the nested deepseek-v4/<case>/ ones too (tests.oracle.vllm_oracle).
    matched, total = replayed_matches()
    return [("vLLM 0.32 KV tokens", "vLLM's CPU build, exact", f"{matched} of {total}",
             "nothing fitted", "")]


def _weights() -> list[Row]:
    errors = [abs(wb.predict(c).total / GiB / c.logged_gib - 1) for c in wb.load_cases()]
    return [("Weights", "vLLM's \"Model loading took\"",
             f"{len(errors)} logs, {_pct(statistics.median(errors))}",
             f"nothing fitted; worst {_pct(max(errors))}", "")]


def figures() -> str:
    """The block's Markdown, markers included."""
    PROSPECTIVE.clear()
    rows = [*_vllm(), *_sglang(), *_trtllm(), *_cost(), *_oracle(), *_weights()]
    lines = [BEGIN, "| kvplan's figure | checked against | all | held out | held out, not "
             "shaped |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", "Cells: within the band of that row, of all, then the median |error|. Held "
              "out: in no fitted constant's `fitted_on` and of no fitted row's model, GPU, TP "
              "and EP; not shaped: less the rows a rule was later written for; prospective "
              f"rows (added after the last rule change): {sum(PROSPECTIVE)}. The rows, with "
              "their URLs: examples/*-bench.md.", END]
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
