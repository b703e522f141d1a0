"""`python -m tests.benches.trtdis64 [--kv]`: where disagg-bench section 3j's TTFT misses come from
(trtdis64, issue 29: 123 replayed TensorRT-LLM disaggregated rows, TTFT inside [0.75, 1.33] on 63).
A forensic. By default it classifies the 3j rows as examples/disagg-bench.md prints them (no
replay: the page's measured and kvplan TTFT / TPOT, the rows' srt-slurm recipe where matched) and
splits each row above 1,024 users by Little's law; `--kv` replays the 58 recipe-matched FP8 rows
with and without trtdis64's rule (disagg_rows `recipe_kv`; about 5 CPU minutes, 20 wall here).

FINDING (trtdis64; every 3j row was read before, on the page and by earlier forensics: none is
blind to anything below)

1. The 60 TTFT misses of the page at a5f87c17, classified from its printed ms (`lines`; rows,
TTFT low / in / high, median TTFT ratio):

| class | rows | low / in / high | median |
|---|---|---|---|
| users <= 16 | 24 | 8 / 12 / 4 | 0.92 |
| users 17-128 | 48 | 11 / 36 / 1 | 0.88 |
| users 129-1,024 | 29 | 10 / 14 / 5 | 0.87 |
| users > 1,024 | 22 | 12 / 1 / 9 | 0.72 |
| ISL 1,024 / OSL 1,024 | 47 | 13 / 25 / 9 | 0.98 |
| ISL 1,024 / OSL 8,192 | 21 | 13 / 7 / 1 | 0.62 |
| ISL 8,192 / OSL 1,024 | 55 | 15 / 31 / 9 | 0.88 |
| FP4 | 48 | 10 / 28 / 10 | 1.07 |
| FP8 | 75 | 31 / 35 / 9 | 0.81 |
| recipe matched, context max_batch_size 1 | 11 | 4 / 7 / 0 | 0.83 |
| recipe matched, context max_batch_size 2 | 35 | 7 / 21 / 7 | 1.10 |
| recipe matched, context max_batch_size 8 | 17 | 6 / 9 / 2 | 1.05 |
| recipe matched, context max_batch_size 16 | 42 | 17 / 20 / 5 | 0.83 |
| recipe matched, context max_batch_size 64 | 1 | 1 / 0 / 0 | 0.63 |
| unmatched (the generator's 1 prompt a step) | 17 | 6 / 6 / 5 | 0.81 |
| one context worker | 107 | 33 / 60 / 14 | 0.88 |
| 2-11 context workers | 16 | 8 / 3 / 5 | 0.38-4.10 by count |

Matching a recipe or not, the context step's prompts and the context workers' count do not
separate the misses. The largest class is the load above 1,024 users: 21 of its 22 rows miss
(12 low, 9 high), a third of the misses, every one with attention-DP generation ranks. It is a
queue, not a per-prompt cost: the measured TTFT there is 1.4-39 s (57-1,220 decode steps).
Next, two per-prompt costs flat in load: the FP8 context servers (B200 / H200 FP8 at 17-1,024
users, TTFT 0.37-0.70, 15-135 decode steps short; disagg_miss63 and trtctx62 read it: the
block-FP8 kernels' rate, closed by the opt-in fitted fractions only), and seven rows at 3-60
users whose recipes seat 1-4 requests a generation worker, six at OSL 8,192 (TTFT ratio
0.00-0.18, the measured TTFT 111-5,101 decode steps: the wait for a seat trtseat58 left open).

2. Above 1,024 users the TTFT is the closed loop's remainder, by Little's law: C = X x (TTFT +
(O - 1) x TPOT), so TTFT = C / X - (O - 1) x TPOT, and where S requests decode a rank over R
ranks, TTFT = (O - 1) x TPOT x (C / (S x R) - 1) (`seat_wait_ms`, `little_split`). Measured S
against kvplan's per rank (`lines`):
- kvplan's S within 2% of the measured (gb200 / gb300 fp4 1k8k c2048 / c4096, gb300 fp8 1k8k
  c4096 / c8192, gb200 fp8 1k8k c2048, b200 fp8 c1920): the TTFT at kvplan's S and the measured
  TPOT is 0.54-1.00 of the measured; the rest is the TPOT gap (0.74-0.95 there).
- the H200 rows (c1152 / c1536 / c3584): 15-60 of 512 seats a rank, not seat-bound; short by
  the FP8 context cost of 1 (0.48-0.62).
- kvplan seating more than the measured (gb200 / gb300 fp4 1k8k c8192: 251 / 249 against 227 /
  223 of 256; gb300 fp8 c12288 719 against 673 of 768): TTFT 0.13-0.43. What holds the
  measured engine 30 seats a rank under its max_batch_size was not found (below).
- kvplan seating far fewer (b200 fp4 1k1k c4096 255 against 460 of 512, gb200 fp4 / fp8 1k1k
  c6144 493 / 526 against 638 / 672 of 768, gb300 fp4 1k1k c8192 556 against 909 of 1,024, gb200
  fp8 1k8k c8192 170 against 251 of 256; less so b200 fp4 c2192, b200 fp8 c4096, gb200 fp4 8k1k
  c4096, gb300 fp4 8k1k c3228): the rest queue for a prefill, TTFT 1.44-16.2 x. On the
  FP8 ones the seats are kvplan's pool's: the replay kept the FP8 DeepSeek checkpoints' bf16 KV
  (disagg_rows.MODELS, the checkpoint's `auto`) where every srt-slurm recipe they match sets
  `kv_cache_config: dtype: fp8` on both roles (all 141 versions, read at their commits in
  NVIDIA/srt-slurm): gb200 fp8 cfg435's pool held 161 requests of I + O a rank under 256 seats.
  The FP4 ones keep a context-bound split (their rate at kvplan's context capacity, 0.97-1.02 x,
  trtdis57), where a shorter decode step leaves more users queued for a prefill.

3. Read in TensorRT-LLM (tensorrt_llm/_torch/pyexecutor/executor_request_queue.py as the code
index stores it at 007a7508, the 1.2 line; the 1.2.0rc6.post1 tag could not be fetched, its
GitHub snapshot is 2.5 GB; no line numbers from the index, functions named): for what could
idle a generation server's seats at full load. `_fetch_new_requests_attention_dp` allgathers
each rank's active requests and fetches up to tp_size x max_num_active_requests less their sum
(`_fetch_and_process_requests` -> `_get_from_waiting_queue`; `_get_from_request_queue` adds no
wait at batch_wait_timeout_ms 0); `_schedule_attention_dp_requests` sets
expected_num_active_requests = max(ceil((active + new) / tp_size), the busiest rank's) and
`_balance_requests_across_ranks` hands new requests out from a heap keyed on each rank's
active prompt tokens, then requests, only to ranks under that count. A rank fills to the mean,
never past max_batch_size while the total is within the seats, and a freed seat is refilled the
next iteration: kvplan's least-loaded handover with per-rank seats (disagg_flow (d),
trtseat58). Active requests include those still receiving their KV (py_executor.py
`_prepare_disagg_gen_init`, trtgap54), which kvplan seats from the handover too. Nothing read
idles seats; what holds the fp4 c8192 rows 30 under theirs is left open (kvplan's pool at the
recipes' FP8 KV holds 346 / 621 a rank there: no pool binds).

The rule (disagg_rows `_trt_recipe_kv`, frozen at 3b43e0fd before any row was replayed with
it; harness fidelity, with the dtype read as TensorRT-LLM reads it, kvplan.engines.trtllm.
kv_dtype): a recipe-matched TensorRT-LLM row's roles run the recipe's kv_cache_config.dtype. It
moves the 58 matched FP8 rows only (the FP4 checkpoint's KV is FP8 already; the 11 unmatched
FP8 rows keep bf16, no recipe stating theirs). Default: it follows the recipes' settings.

RESULT (`--kv`, at 3b43e0fd; shaping = the 11 FP8 rows above 1,024 users whose split was read
before the rule, fitted_rows _AIC_PROSPECTIVE_TRTDIS64; held out = the other 47, classified on
the page before it but not what it was written from; no 3j row is blind, all shaped earlier
rules): both inside / TTFT inside / TPOT inside, median TTFT / TPOT ratio:
- all 58: 25 / 29 / 44, 0.81 / 0.94 -> 27 / 30 / 47, 0.75 / 0.92
- shaping 11: 0 / 0 / 7, 0.70 / 0.82 -> 0 / 0 / 9, 0.61 / 0.84
- held out 47: 25 / 29 / 37, 0.83 / 1.04 -> 27 / 30 / 38, 0.82 / 1.01
- 3j (123; the 65 others do not move): both 55 -> 57, TTFT 63 -> 64, TPOT 95 -> 98.
8 rows move by more than 5%: the pool-bound ones come down from far above to below
(b200 cfg549 c4096 TTFT / TPOT 1.44 / 0.67 -> 0.61 / 0.72, gb200 cfg416 c6144 2.10 / 0.65 ->
0.29 / 0.91, gb200 cfg435 c8192 16.16 / 0.59 -> 0.47 / 0.82, h100 cfg503 c154 1.30 / 0.59 ->
0.29 / 0.70, h200 cfg673 c512 4.32 / 0.84 -> 0.83 / 0.91), and h200 cfg661 / cfg305 / cfg347's
decode steps shorten (TPOT 1.37 -> 1.29, 1.07 -> 0.99, 0.98 -> 0.93). TPOT moves toward the
measured where it moves; the TTFT of the rows it frees from the pool lands in the low class
(item 2's first and third bullets): the miss above 1,024 users is now one-sided, kvplan short.
Issue 29's 80% is not reached; the classes left are item 1's, none with a rule in code read.
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from tests.benches.disagg_rows import BAND

PAGE = Path(__file__).resolve().parents[2] / "examples" / "disagg-bench.md"
_ROW = re.compile(r"^\| (dsr1_\S+) \| (.+?), (\d+)/(\d+), (\d+) conc\. \| ([\d,.]+) / ([\d.]+) \| "
                  r"([\d,.]+) / ([\d.]+) \|")


@dataclass(frozen=True, kw_only=True)
class PageRow:
    """One 3j row as the page prints it (ms)."""

    id: str
    layout: str
    isl: int
    osl: int
    users: int
    measured_ttft: float
    measured_tpot: float
    ttft: float
    tpot: float

    @property
    def ttft_ratio(self) -> float:
        return self.ttft / self.measured_ttft

    @property
    def precision(self) -> str:
        return "fp4" if "_fp4_" in self.id else "fp8"

    @property
    def gpu(self) -> str:
        return self.id.split("_")[1]


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def page_rows(text: str | None = None) -> list[PageRow]:
    """The rows of section 3j's per-row table (`text`: the page's, by default)."""
    text = PAGE.read_text() if text is None else text
    sec = text[text.index("### 3j."):text.index("### 3m.")]
    out = []
    for line in sec.splitlines():
        m = _ROW.match(line)
        if m:
            out.append(PageRow(id=m[1], layout=m[2], isl=int(m[3]), osl=int(m[4]),
                               users=int(m[5]), measured_ttft=_num(m[6]),
                               measured_tpot=_num(m[7]), ttft=_num(m[8]), tpot=_num(m[9])))
    return out


def direction(ratio: float) -> str:
    return "low" if ratio < BAND[0] else "high" if ratio > BAND[1] else "in"


def band(users: int) -> str:
    for hi, name in ((16, "<=16"), (128, "17-128"), (1024, "129-1024")):
        if users <= hi:
            return name
    return ">1024"


def seat_wait_ms(users: int, seats: float, osl: int, tpot_ms: float) -> float:
    """A closed loop's TTFT where `seats` requests decode at once over all generation ranks
    (Little's law: users = X x (TTFT + (O - 1) x TPOT), seats = X x (O - 1) x TPOT)."""
    return (osl - 1) * tpot_ms * (users / seats - 1)


def little_split(users: int, ttft_ms: float, tpot_ms: float, osl: int, ranks: int
                 ) -> tuple[float, float]:
    """(requests a second, requests decoding a generation rank) a closed loop of `users` implies
    from its TTFT and TPOT (ms)."""
    rate = users / ((ttft_ms + (osl - 1) * tpot_ms) / 1e3)
    return rate, rate * (osl - 1) * tpot_ms / 1e3 / ranks


def decode_ranks(layout: str) -> int:
    """Generation ranks of a page layout ('1P DP4 EP4 : 5D TP8 EP8' -> 5; '... : 2D DP8 EP8' ->
    16)."""
    m = re.search(r": (\d+)D (DP|TP)(\d+)", layout)
    assert m is not None, layout
    return int(m[1]) * (int(m[3]) if m[2] == "DP" else 1)


def classes(rows: Iterable[PageRow], key: Callable[[PageRow], object]
            ) -> list[tuple[object, int, dict[str, int], float]]:
    """Rows grouped by `key`: (key, rows, low / in / high counts, median TTFT ratio)."""
    groups: dict[object, list[PageRow]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    out = []
    for k, g in sorted(groups.items(), key=lambda kv: str(kv[0])):
        n = {d: sum(direction(r.ttft_ratio) == d for r in g) for d in ("low", "in", "high")}
        out.append((k, len(g), n, statistics.median(r.ttft_ratio for r in g)))
    return out


def _recipes(ids: set[str]) -> dict[str, tuple[int, int] | None]:
    """Each of the 3j rows `ids`' matched recipe's context and decode max_batch_size."""
    from tests.benches.disagg_rows import prospective_rows, trt_context_recipe
    out: dict[str, tuple[int, int] | None] = {}
    for row in prospective_rows():
        if row["id"] in ids:
            rec = trt_context_recipe(row)
            out[row["id"]] = ((rec.prefill.max_batch_size, rec.decode.max_batch_size)
                              if rec is not None else None)
    return out


def lines(rows: list[PageRow]) -> list[str]:
    rec = _recipes({r.id for r in rows})
    keys: dict[str, Callable[[PageRow], object]] = {
        "users": lambda r: band(r.users), "ISL / OSL": lambda r: (r.isl, r.osl),
        "precision": lambda r: r.precision, "GPU x precision": lambda r: (r.gpu, r.precision),
        "recipe (context max_batch_size)": lambda r: (
            "unmatched" if rec.get(r.id) is None else rec[r.id][0]),  # type: ignore[index]
        "context workers": lambda r: r.layout.split("P ")[0],
    }
    out = [f"3j rows on the page: {len(rows)}; TTFT inside "
           f"{sum(direction(r.ttft_ratio) == 'in' for r in rows)}"]
    for name, key in keys.items():
        out += ["", f"By {name} (rows: low / in / high, median TTFT ratio):"]
        out += [f"- {k}: {n} rows: {c['low']} / {c['in']} / {c['high']}, {m:.2f}"
                for k, n, c, m in classes(rows, key)]
    out += ["", "Above 1,024 users (per generation rank: recipe seats, measured S, kvplan S; "
            "TTFT ratio; the TTFT at kvplan's S and the measured TPOT over the measured):"]
    for r in rows:
        if r.users <= 1024:
            continue
        ranks = decode_ranks(r.layout)
        _, sm = little_split(r.users, r.measured_ttft, r.measured_tpot, r.osl, ranks)
        _, sk = little_split(r.users, r.ttft, r.tpot, r.osl, ranks)
        cf = seat_wait_ms(r.users, sk * ranks, r.osl, r.measured_tpot)
        seats = rec.get(r.id)
        out.append(f"- {r.id}: {seats[1] if seats else '-'} / {sm:.1f} / {sk:.1f}; "
                   f"{r.ttft_ratio:.2f}; {cf / r.measured_ttft:.2f}")
    return out


def kv_lines() -> list[str]:
    """The recipe-matched FP8 rows replayed without and with `_trt_recipe_kv`."""
    from tests.benches.disagg_rows import (
        _why_not,
        prospective_rows,
        replay,
        stated_concurrency,
        trt_context_recipe,
    )
    from tests.benches.fitted_rows import _AIC_PROSPECTIVE_TRTDIS64
    shaped = set(_AIC_PROSPECTIVE_TRTDIS64)
    before, after, ids = [], [], []
    for row in prospective_rows():
        if row["backend"] != "trtllm" or row["precision"] != "fp8" or _why_not(
                row, stated_concurrency(row), prospective=True) or trt_context_recipe(row) is None:
            continue
        a, b = replay(row, prospective=True, recipe_kv=False), replay(row, prospective=True)
        if a.replayed and b.replayed:
            before.append(a)
            after.append(b)
            ids.append(a.id)

    def line(reps: list, keep: Callable[[str], bool]) -> str:
        sel = [r for r, i in zip(reps, ids, strict=True) if keep(i)]
        tt = sum(1 for r in sel if r.ratios and BAND[0] <= r.ratios[0] <= BAND[1])
        tp = sum(1 for r in sel if r.ratios and BAND[0] <= r.ratios[1] <= BAND[1])
        med = statistics.median(r.ratios[0] for r in sel if r.ratios) if sel else float("nan")
        return (f"both {sum(r.inside for r in sel)} of {len(sel)}, TTFT {tt}, TPOT {tp}, "
                f"median TTFT {med:.2f}")
    out = []
    for name, keep in (("all", lambda i: True), ("held out", lambda i: i not in shaped),
                       ("shaping rows", lambda i: i in shaped)):
        out.append(f"- {name}: {line(before, keep)} -> {line(after, keep)}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kv", action="store_true", help="replay the matched FP8 rows (slow)")
    args = ap.parse_args()
    print("\n".join(kv_lines() if args.kv else lines(page_rows())))


if __name__ == "__main__":
    main()
