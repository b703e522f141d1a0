"""`python -m tests.benches.disagg_miss67 [--max-users C] [--all]`: every replayed row of
examples/disagg-bench.md section 3 (3a, 3b: SGLang; 3j: TensorRT-LLM) in one table, and its
misses grouped by (engine, GPU, the side that misses, direction), largest group first (dis3j67,
issue 29). The rows come from the sections' own row function (disagg_rows.replay at its default
switches, as prospective_replays gives them), never from the page; by default only the rows of
at most --max-users users (16: a few CPU minutes); --all replays all 217 (about 25 CPU minutes).

A miss is a row outside [0.75, 1.33] on TTFT or TPOT; its side is TTFT, TPOT or both, and its
direction low / high per missing side (a TTFT the simulation found saturated counts high, as in
disagg_miss63). Every row here was read before (sections 3a, 3b and 3j print them): the table
classifies, it holds nothing out.

FINDING (dis3j67; all 217 rows were read before: shaped, none held out; no rule written, nothing
in kvplan moves, SHAPED_BY holds nothing from it)

The rows at main 0808e98a: the page's tables (regenerated at f508b64c; later commits test / bench
only); the row function re-run here gives the page's ratios on all 34 rows of at most 8 users
(`--max-users 8`, none differing by 0.01) and its TTFT / TPOT on cfg527 c512 (1,144.0 / 19.17),
cfg239 c8192 (5,167 / 30.54) and cfg416 c6144 (3,820 / 70.97 ms). Both inside: 3a 17
of 42, 3b 24 of 52, 3j 62 of 123; 103 of 217, 114 misses. By side and direction: TTFT low 55,
TTFT low / TPOT high 13, TTFT high / TPOT low 13, TPOT high 13, TTFT high 11, both low 4, both
high 3, TPOT low 2: TTFT low on 72 of the 114. Largest (engine, GPU, side, direction) groups:
SGLang GB200 TTFT low 10 (median TTFT ratio 0.57), SGLang B200 TTFT low 9 (0.31), SGLang GB300
TTFT low 9 (0.62), TensorRT-LLM H200 TTFT low 9 (0.56), TensorRT-LLM B200 TTFT low 7 (0.65),
SGLang GB200 TTFT high / TPOT low 6 (3.40); over the GPUs, SGLang TTFT low 29 and TensorRT-LLM
TTFT low 26 (TPOT inside), the two read below with their rows low on TTFT and out on TPOT too
(34 and 38). `lens_lines` splits them by users (TTFT ratio: the median; load: the measured rate
over kvplan's prefill role's most prompts a second, disagg_trtllm_load.role_rates, median and
largest; gap: measured - kvplan TTFT, median, and in the row's decode steps; at seats: rows whose
users a decode rank reach kvplan's seats a rank):

| engine, users | rows | FP4 / FP8 | TTFT ratio | load (max) | gap ms (steps) | at seats |
|---|---|---|---|---|---|---|
| SGLang <= 32 | 15 | 6 / 9 | 0.63 | 0.08 (0.31) | 200 (20) | 0 |
| SGLang > 32 | 19 | 12 / 7 | 0.38 | 0.54 (0.82) | 6,672 (263) | 1 |
| TensorRT-LLM <= 32 | 8 | 3 / 5 | 0.16 | 0.00 (0.04) | 1,210 (145) | 7 |
| TensorRT-LLM > 32 | 30 | 6 / 24 | 0.59 | 0.50 (0.94) | 1,650 (72) | 21 |

- SGLang <= 32 users: no queue in the measurement (the prefill role at most 0.31 busy at the
  measured rate); an additive ~200 ms. 7 of its 9 FP8 rows are disagg63's FP8 class at ISL 8,192
  (cfg536, cfg519, cfg455: the block-FP8 kernels' rate, measured only in aiconfigurator's tables,
  fitted fraction opt-in); kvplan.engines.sglang.connectors records the low-load loop read in
  0.5.8.post1 and ruled out. Nothing new read; the class is not in code read to date.
- SGLang > 32 users: 16 of the 19 show a queue (measured TTFT 2.6-29.6 s; the other three,
  gb200 cfg252 c64 and the GB200 / GB300 mid-curve c512 rows, 673-911 ms at load 0.08-0.10, are
  the additive class above) with every decode rank's users within kvplan's seats but one
  (cfg434, its recipe's 32), where the decode side admits all the users' prompts on 87 of 94
  rows (section 3d): the queue the engine shows is then at the prefill, whose rate the measured
  one is, and kvplan's full prefill step serves 1 / load of it: 1.7x at the median of the 16
  (1.2x-3.2x, load 0.82-0.31). The prefill side's code was read for this class
  before and ruled out (kvplan.engines.sglang.connectors, "as the prefill-side cause of the rows'
  high-concurrency TTFT misses (cfg527)"; the bootstrap-room rank draw is simulated): what is
  left is kvplan's time for a full step (GB200 mid-curve recipe: 16 prompts of 1,024 tokens a
  DP rank, 815 ms), a cost-model term, not a scheduler rule. 12 of the 19 are FP4.
- TensorRT-LLM <= 32 users: 7 of 8 run as many users a generation rank as the recipe's seats or
  more: one seat a server at c1-c7 (five of them with several servers, c3-c7: section 3m's
  routing class, Dynamo's frontends route round-robin, not by load, the uniform draw refuted
  there; b200 fp8 cfg662 c1, one user, is the FP8 class) and H100 cfg494 c30 (10 users a rank
  over 8 seats: trtttft61's seat wait, kvplan's decode step 0.85 of the measured). Read here:
  Dynamo dropped the decode-first flow (--disaggregation-strategy) in ai-dynamo/dynamo PR #4097
  (merged 2025-11-04: "Lose the prefill_first and decode_first distinction. The frontend
  handles that now."), before the rows' Dynamo 0.8.1: a request holds no generation seat during
  its context phase, as kvplan has it; not a cause.
- TensorRT-LLM > 32 users: the measured rate a median 0.50 of kvplan's context capacity; 21 of
  30 run the recipe's max_batch_size a rank or more (most recipes name batchN, N = C / ranks). A
  TensorRT-LLM attention-DP generation server gives new requests to the ranks under the target
  ceil((active + new) / ranks) by fewest tokens (pyexecutor ADP router, `_balance_requests_
  across_ranks`, as GitHub's index stores it; the 1.2.0rc6 tag could not be fetched: the
  snapshot is 2.5 GB), so with users equal to seats and one generation server no request waits
  for a seat once every user holds one (with several servers the frontends' round-robin still
  can: 3m; gb200 / gb300 fp4 cfg374 / cfg421 c60, 15 servers of 4 seats at load 0.01-0.02,
  TTFT 0.03 / 0.17, are that class). 10 of the 21 have one generation server (TTFT ratio
  0.15-0.71), 11 several (0.03-0.66): no clear split by it. kvplan's own TTFT there is in good
  part sa-bench's first burst through its context server: cfg239 c8192 5,167 ms, 833 without
  the client rule (disagg_client; measured 35,516); cfg416 c6144 3,820 / 2,297 (measured
  11,395). A context server at a third of kvplan's rate would carry that burst about three
  times as long: the same prefill-rate reading as SGLang's above. 24 of the 30 are FP8
  (trtttft61 / trtctx62's block-FP8 kernels).

So the largest class, TTFT low above 32 users (49 rows, both engines, FP4 and FP8), reads as
kvplan's prefill role serving 1.7-2x the measured rate at a full step (the engines' medians of
1 / load); no engine code read sets that rate, so no rule is written. The next step is measured,
not read: the context step's time at 8-16 prompts a rank against a kernel table
(aiconfigurator's context tables, as trtctx62 did for FP8), which would move the aggregated
page's prefill-heavy rows too.
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from kvplan.engines.base import Engine
from tests.benches.disagg_miss63 import direction
from tests.benches.disagg_rows import (
    BACKEND_COHORTS,
    FIRST_COHORT,
    PREFIX,
    Replay,
    decode_max_seqs,
    prospective_replays,
    prospective_rows,
    replay,
    replay_setup,
    stated_concurrency,
    trtllm_release,
)
from tests.benches.disagg_trtllm_load import role_rates


def section_of(rep: Replay) -> str:
    """The subsection a replayed row is printed in: 3j the TensorRT-LLM cohort, 3b the first
    SGLang cohort (bc0cfec), 3a the later ones (disagg_bench._prospective_rows)."""
    if rep.cohort == BACKEND_COHORTS["trtllm"]:
        return "3j"
    return "3b" if rep.cohort == FIRST_COHORT else "3a"


@dataclass(frozen=True, kw_only=True)
class MissRow:
    """One replayed section-3 row: what it ran and kvplan's ratios to its measured times."""

    section: str
    row_id: str
    engine: str
    release: str
    gpu: str
    model: str
    precision: str
    isl: int
    osl: int
    users: int
    connector: str
    ttft_ratio: float | None  # None: kvplan's prefill saturated at the row's load
    tpot_ratio: float

    @property
    def ttft_dir(self) -> str:
        return direction(self.ttft_ratio)

    @property
    def tpot_dir(self) -> str:
        return direction(self.tpot_ratio)

    @property
    def side(self) -> str:
        """'TTFT', 'TPOT', 'both', or '' (inside the band on both)."""
        t, p = self.ttft_dir != "in", self.tpot_dir != "in"
        return "both" if t and p else "TTFT" if t else "TPOT" if p else ""

    @property
    def way(self) -> str:
        """The direction of the missing side(s): 'low' / 'high', or 'TTFT x / TPOT y' for both."""
        if self.side == "both":
            return f"TTFT {self.ttft_dir} / TPOT {self.tpot_dir}"
        return self.ttft_dir if self.side == "TTFT" else self.tpot_dir if self.side else ""

    @property
    def group(self) -> tuple[str, str, str, str]:
        return self.engine, self.gpu, self.side, self.way


def miss_row(rep: Replay, row: dict[str, str]) -> MissRow:
    """The table's row for a replayed `rep` of the frozen `row`."""
    assert rep.replayed and rep.tpot_ms is not None and rep.concurrency is not None
    r = rep.ratios
    return MissRow(
        section=section_of(rep), row_id=rep.id.removeprefix(PREFIX), engine=row["backend"],
        release=trtllm_release(row) or "?", gpu=row["system"].removesuffix("_sxm"),
        model=row["model_path"], precision=row["precision"], isl=rep.input_len,
        osl=rep.output_len, users=rep.concurrency,
        connector=Engine(row["backend"]).rules.kv_connector(None).name,
        ttft_ratio=r[0] if r is not None else None,
        tpot_ratio=rep.tpot_ms / rep.measured_tpot_ms)


def table(replays: Iterable[Replay]) -> list[MissRow]:
    """The replayed SGLang / TensorRT-LLM rows among `replays` (prospective_replays' rows)."""
    by_id = {PREFIX + r["id"]: r for r in prospective_rows()}
    return [miss_row(rep, by_id[rep.id]) for rep in replays
            if rep.replayed and by_id[rep.id]["backend"] in ("sglang", "trtllm")]


@dataclass(frozen=True)
class Group:
    key: tuple[str, ...]
    rows: tuple[MissRow, ...]

    @property
    def median_ttft(self) -> float | None:
        tt = [r.ttft_ratio for r in self.rows if r.ttft_ratio is not None]
        return statistics.median(tt) if tt else None

    @property
    def median_tpot(self) -> float:
        return statistics.median(r.tpot_ratio for r in self.rows)


def groups(rows: Iterable[MissRow], *, by_gpu: bool = True) -> list[Group]:
    """The misses grouped by (engine, GPU, side, direction) (`by_gpu` False: without the GPU),
    largest first, ties by key."""
    out: dict[tuple[str, ...], list[MissRow]] = defaultdict(list)
    for r in rows:
        if r.side:
            out[r.group if by_gpu else (r.engine, r.side, r.way)].append(r)
    return sorted((Group(k, tuple(v)) for k, v in out.items()),
                  key=lambda g: (-len(g.rows), g.key))


def _ratio(x: float | None) -> str:
    return "sat." if x is None else f"{x:.2f}"


def lines(rows: list[MissRow]) -> list[str]:
    """The counts by section, the ranked groups and the table."""
    out = []
    for sec in sorted({r.section for r in rows}):
        s = [r for r in rows if r.section == sec]
        out.append(f"- {sec}: both inside {sum(not r.side for r in s)} of {len(s)}")
    out.append(f"- all: both inside {sum(not r.side for r in rows)} of {len(rows)}; misses "
               f"{sum(bool(r.side) for r in rows)}")
    for title, by_gpu in (("engine, GPU, side, direction", True),
                          ("engine, side, direction", False)):
        out += ["", f"Misses by {title}, largest first:", ""]
        for g in groups(rows, by_gpu=by_gpu):
            out.append(f"- {' / '.join(g.key)}: {len(g.rows)} (median TTFT "
                       f"{_ratio(g.median_ttft)}, TPOT {g.median_tpot:.2f})")
    out += ["", "| section | row | engine | release | GPU | model | ISL / OSL | users | "
            "connector | TTFT ratio | TPOT ratio | misses |", "|" + "---|" * 12]
    for r in sorted(rows, key=lambda r: (r.section, r.row_id)):
        miss = f"{r.side} ({r.way})" if r.side else "-"
        out.append(f"| {r.section} | {r.row_id} | {r.engine} | {r.release} | {r.gpu} | "
                   f"{r.model} ({r.precision}) | {r.isl} / {r.osl} | {r.users} | {r.connector} | "
                   f"{_ratio(r.ttft_ratio)} | {r.tpot_ratio:.2f} | {miss} |")
    return out


LIGHT = 32  # users: at or below, a "light" row (disagg_miss63's bands run <= 16, 17-128)


@dataclass(frozen=True, kw_only=True)
class Lens:
    """What the measured numbers say of a TTFT-low row (computed, nothing fitted)."""

    load: float  # measured request rate over kvplan's prefill role's most prompts a second
    gap_ms: float  # measured TTFT - kvplan's
    gap_steps: float  # that in the row's measured decode steps
    seats_full: bool  # the row's users a decode rank at or above kvplan's seats a rank


def lens(rep: Replay) -> Lens | None:
    """The lens of a replayed row (disagg_trtllm_load.role_rates: Little's law over the measured
    times against kvplan's prefill role with every step full; decode_max_seqs: the seats)."""
    rates = role_rates(rep)
    if rates is None or rep.ttft_ms is None or rep.concurrency is None:
        return None
    row = {PREFIX + r["id"]: r for r in prospective_rows()}[rep.id]
    st = replay_setup(row)
    ranks = int(row["decode_num_workers"]) * st.decode.layout.replicas
    gap = rep.measured_ttft_ms - rep.ttft_ms
    return Lens(load=rates.load, gap_ms=gap, gap_steps=gap / rep.measured_tpot_ms,
                seats_full=-(-rep.concurrency // ranks) >= decode_max_seqs(row, st))


def lens_lines(replays: Iterable[Replay]) -> list[str]:
    """The TTFT-low rows by engine and load (at most LIGHT users, or more): their precision,
    median TTFT ratio, measured rate over kvplan's prefill capacity, the gap and the rows whose
    users a decode rank fill kvplan's seats."""
    reps = {r.id.removeprefix(PREFIX): r for r in replays}
    out = [f"TTFT-low rows (any TPOT) by engine and users (<= {LIGHT} or more):", ""]
    low = [m for m in table(reps.values()) if m.ttft_dir == "low"]
    for eng in sorted({m.engine for m in low}):
        for name, light in ((f"<= {LIGHT}", True), (f"> {LIGHT}", False)):
            g = [m for m in low if m.engine == eng and (m.users <= LIGHT) == light]
            lenses = [x for m in g if (x := lens(reps[m.row_id])) is not None]
            if not lenses:
                continue
            prec = Counter(m.precision for m in g)
            loads = [x.load for x in lenses]
            ttft = [m.ttft_ratio for m in g if m.ttft_ratio is not None]  # low: never None
            out.append(
                f"- {eng} {name}: {len(g)} rows "
                f"({', '.join(f'{k} {v}' for k, v in sorted(prec.items()))}); "
                f"median TTFT ratio {statistics.median(ttft):.2f}; "
                f"measured rate / kvplan's prefill capacity median "
                f"{statistics.median(loads):.2f} (max {max(loads):.2f}); measured - kvplan "
                f"TTFT median {statistics.median(x.gap_ms for x in lenses):,.0f} ms "
                f"({statistics.median(x.gap_steps for x in lenses):,.0f} decode steps); users a "
                f"decode rank at kvplan's seats on {sum(x.seats_full for x in lenses)}")
    return out


def collect(max_users: int | None) -> list[Replay]:
    """Every replayed row (`max_users` None: prospective_replays, cached), or those of at most
    `max_users` users, each replayed here."""
    if max_users is None:
        return prospective_replays()
    picked = [r for r in prospective_rows() if r["backend"] in ("sglang", "trtllm")
              and (u := stated_concurrency(r)) is not None and u <= max_users]
    return [replay(r, prospective=True) for r in picked]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-users", type=int, default=16)
    ap.add_argument("--all", action="store_true", help="every replayed row (slow)")
    args = ap.parse_args()
    reps = collect(None if args.all else args.max_users)
    print("\n".join(lines(table(reps)) + [""] + lens_lines(reps)))


if __name__ == "__main__":
    main()
