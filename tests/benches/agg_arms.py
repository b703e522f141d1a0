"""Two arms of the aggregated replay (tests.benches.aiconfig_agg_runs) on one subset of rows,
before -> after: the scaffolding the stop-67 evaluations share (aggflags67_eval, mtprows67_eval,
trtpad67_eval). Each evaluation keeps its own arms, its subset and its per-row list.

- `replay_pairs`: both arms over the rows (one process pool each, rows in order), paired;
- `print_table`: the table's head and its lines over every row, held out / shaped
  (aiconfig_agg_runs.shaped_rows) and, where asked, by backend;
- `pair_line` (the table aggflags67_eval and trtpad67_eval print) and `ratio_cells` (the
  medians every table prints).
"""

from __future__ import annotations

import resource
import statistics
import sys
from collections.abc import Callable

from tests.benches import aiconfig_agg_runs as agg
from tests.benches.disagg_rows import BAND, Replay

Arm = Callable[[dict[str, str]], Replay]
Pair = tuple[Replay, Replay]
Line = Callable[[str, list[Pair]], str]

# `pair_line`'s table: each figure over the rows both arms replay, before -> after.
PAIR_HEAD = ("| rows | both replayed | both inside | TTFT inside | median TTFT err | "
             "median TPOT err | median TTFT ratio | median TPOT ratio | refusals |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|")
BACKENDS = ("vllm", "sglang", "trtllm")


def cpu_s() -> float:
    """CPU seconds of this process and its finished workers."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def inside(x: float) -> bool:
    return BAND[0] <= x <= BAND[1]


def fmt(r: Replay) -> str:
    return "refused" if not r.replayed else f"{r.ttft_ms:,.1f} / {r.tpot_ms:.2f}"


def split(r: Replay, shaped: dict[str, tuple[str, ...]]) -> str:
    return "shaped" if r.id in shaped else "held out"


def ratio_cells(ratios: list[tuple[float, float]]) -> list[str]:
    """Over (TTFT, TPOT) ratios (at least one): both inside the band, TTFT inside, median
    |TTFT err|, median |TPOT err|, median TTFT ratio, median TPOT ratio."""
    t = [a for a, _ in ratios]
    o = [b for _, b in ratios]
    return [str(sum(inside(a) and inside(b) for a, b in ratios)), str(sum(inside(a) for a in t)),
            f"{statistics.median(abs(a - 1) for a in t):.1%}",
            f"{statistics.median(abs(b - 1) for b in o):.1%}",
            f"{statistics.median(t):.2f}", f"{statistics.median(o):.2f}"]


def pair_line(name: str, pairs: list[Pair]) -> str:
    """`PAIR_HEAD`'s line: the figures over the rows both arms replay, and the refusals."""
    both = [(b.ratios, a.ratios) for b, a in pairs if b.ratios and a.ratios]
    refused = (sum(not b.replayed for b, _ in pairs), sum(not a.replayed for _, a in pairs))
    if not both:
        return f"| {name} | 0 | - | - | - | - | - | - | refused {refused[0]} -> {refused[1]} |"
    before = ratio_cells([b for b, _ in both if b])
    after = ratio_cells([a for _, a in both if a])
    out = [f"{x} -> {y}" for x, y in zip(before, after, strict=True)]
    return (f"| {name} | {len(both)} | " + " | ".join(out)
            + f" | refused {refused[0]} -> {refused[1]} |")


def replay_pairs(rows: list[dict[str, str]], first: Arm, second: Arm, *,
                 cpu_label: str | None = None) -> list[Pair]:
    """Both arms over `rows`, paired row by row; with `cpu_label`, each arm's CPU time on
    stderr after that label."""
    start = cpu_s()
    before = list(agg.replay_all(first, rows))
    middle = cpu_s()
    after = list(agg.replay_all(second, rows))
    if cpu_label is not None:
        print(f"{cpu_label}before {middle - start:.1f} s CPU, after {cpu_s() - middle:.1f} s",
              file=sys.stderr)
    return list(zip(before, after, strict=True))


def print_table(title: str, pairs: list[Pair], line: Line = pair_line, *,
                head: tuple[str, str] = PAIR_HEAD,
                by_backend: bool = True) -> dict[str, tuple[str, ...]]:
    """The table: its title and head, then `line` over every row, the held-out and the shaped
    rows and (`by_backend`) each backend's. Returns the shaped rows, for the per-row list."""
    shaped = agg.shaped_rows()
    print(f"\n### {title}: {len(pairs)} rows\n")
    print(head[0])
    print(head[1])
    print(line("all", pairs))
    print(line("split held out", [p for p in pairs if p[0].id not in shaped]))
    print(line("split shaped", [p for p in pairs if p[0].id in shaped]))
    if by_backend:
        for backend in BACKENDS:
            print(line(f"backend {backend}", [p for p in pairs
                                              if agg.row_of(p[0])["backend"] == backend]))
    return shaped
