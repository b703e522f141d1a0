"""SGLang's extend steps under InferenceX's client workload: counted and priced as the code runs
them? (issue 30, sglextend67)

sglclient66 (tests.benches.sglclient66) split kvplan's client-mode SGLang TPOT into decode steps
and extend stalls and found the stalls (one extend per arriving prompt, 154-380 ms each, ~0.8 x C
per request) the excess. This bench asks which of the three could be wrong, per SGLang row of
aggwork64's subset, from the same instrumentation (sglclient66._instrument, its `split`):

- the COUNT: the extend steps a request sits through (stalls/req) and the prompts each extend
  takes (prompts/ext: the requests of each extend batch, counted in `schedule`), at the bench's
  flags (--scheduler-recv-interval 1) and at the row's InferenceX script's interval (the recv
  arm, sglclient66.replay_recv; '-' where the script is not known);
- the PRICE: kvplan's mean extend (stall ms) against what the measured TPOT leaves for them,
  `room` = measured TPOT - kvplan's decode share per output token (the TPOT the request would
  have with no extend if kvplan's decode steps are right), and the extend price that room
  implies at kvplan's count (`implied_extend_ms`);
- the DECODE-AFTER-EXTEND path: read, below.

Instrumentation and arithmetic only: no rule or constant of kvplan changed, nothing fitted, so no
row is shaped by this bench (the recv arm's DeepSeek rows shaped rule 3's TTFT: marked).

Read (SGLang 0.5.9 sdist, python/sglang/srt/managers/scheduler.py unless named), against
kvplan.analysis.simulate.sglang_scheduler and scheduler.Simulator.run:
- recv: `event_loop_overlap` (:1135-1185) calls `recv_requests` once per iteration (:1148),
  which drains every request the tokenizer has sent, non-blocking (:1229-1250, zmq.NOBLOCK
  at :1237; no cap: SGLANG_SCHEDULER_MAX_RECV_PER_POLL -1, environ.py:251), unless the skipper
  (--scheduler-recv-interval > 1, :1222-1227) skips it. kvplan: one `_receives` per loop
  iteration, every sent request up to the cutoff taken (step_boundary). Same.
- which batch: `get_next_batch_to_run` (:1875-1957) merges the last extend into the running
  batch and runs a new prefill batch first whenever `get_new_batch_prefill` forms one (:1935-
  1938), decodes only without one; no mixed chunk (server_args.py:597), no prefill delayer
  (:342, enabled only by an env var, :838-840). kvplan rule 1. Same.
- how many one extend takes: `_get_new_batch_prefill_raw` (:1977-2200) walks the whole waiting
  queue (:2053) through PrefillAdder.add_one_req (:2096) until a budget stops it (:2098-2114);
  nothing waits for more requests. kvplan `_prefill_batch`. Same. So with the bench's interval
  of 1, SGLang's extends take what arrived during one loop iteration; in a closed loop of C
  users whose outputs are spread over [0.8, 1] x OSL, finishes (hence arrivals) are spread,
  and kvplan's 1.0 - 1.3 prompts per extend is what the code gives.
- the decode after an extend: the next iteration merges the extend batch (:1895-1919) and its
  requests decode from the next batch, their first token resolved on the GPU (future map); the
  overlap loop launches batch k + 1 before processing batch k's result (:1165-1173). kvplan:
  an extend's requests decode from the next step. Same.
- Not modelled, read: the overlap loop's iteration that launches an eager extend lasts its CPU
  launch (run_batch on the scheduler thread, :2278-2330), so the next recv sees the arrivals up
  to about the extend's end, where kvplan's async cutoff is the extend's start: an arrival
  during an extend gets its own extend one decode step earlier in SGLang. The count is the same
  (kvplan's next extend takes those arrivals plus the decode step's); only their TTFT moves, by
  one decode step for the share of arrivals that fall in an extend (27 % on row 288: about
  0.27 x 24 ms = 6.5 ms of its 296 ms mean TTFT, and kvplan's TTFT is already below the
  measured there).

FINDING (`python -m tests.benches.sglextend67`, 5.6 minutes wall on the shared host; 30 of the
subset's 39 SGLang rows replayed, the 9 others refused as in sglclient66; nothing changed, so no
before -> after: every row is a diagnostic):
- The COUNT follows the code (above). At the bench's interval of 1, kvplan's extends take 1.05 -
  1.29 prompts each (the closed loop's finishes are spread by the [0.8, 1] x OSL outputs) and a
  request sits through ~0.8 x C of them (2.7 at C 4, 13.4-13.8 at 16, 26.6-27.3 at 32, 52.4-53.8
  at 64, 97.9-103.8 at 128). With the script's interval (16 rows) SGLang's skipper groups them:
  C 64 ISL 1,024 (row 288) 1.19 -> 3.56 prompts per extend, 52.4 -> 16.8 stalls per request;
  C 32 (472) 1.16 -> 2.32, 26.6 -> 12.7; C 16 (263) 1.10 -> 1.65, 13.4 -> 8.7; ISL 8,192 C 64
  1.13 -> 1.73, 53.8 -> 33.5; C 4 - 8 (interval 10) unchanged (2.7 stalls: arrivals are rarer
  than 10 decode steps).
- The PRICE is not what the measured TPOT leaves no room for: on 13 of the 30 rows kvplan's
  DECODE share alone (the decode steps a request sits through per output token) is at or above
  the measured TPOT, so no extend price would fit: 7 of the 9 ISL-1,024 rows at C >= 16 (the
  rows sglclient66 found +46 / +55 / +31 %: DeepSeek-R1 B200 TP8 0.5.9 C 16 / 64 decode share
  15.04 / 24.08 ms against a measured TPOT of 13.18 / 22.53; H200 C 16 19.62 / 16.63; B300
  0.5.10.post1 C 16 15.04 / 14.59; Qwen3.5 B200 TP4 C 32 15.43 / 13.80, C 16 1k/8k 11.80 /
  8.61), and 6 others (DeepSeek-R1 C 4 - 8 on B200 / H200: 10.70 / 5.76 at 1k/8k C 4, 10.69 /
  8.76, 12.26 / 10.29, 15.34 / 12.20; Qwen3.5 B300 bf16 C 4: 7.31 / 6.45, 7.32 / 6.69), where
  extends are 0.06 - 0.61 ms of the TPOT. With the script's interval the decode shares barely
  move (24.08 -> 24.01 on row 288), so the room stays negative (-1.48 ms there). Where there is
  room (17 rows: DeepSeek-R1's and Qwen3.5 B200 / H200's ISL-8,192 rows, Qwen3.5 H200 EP 8,
  Qwen3.5 B200 at C 4 - 8, GLM-5), the extend price it implies at kvplan's count is a median
  232 ms against kvplan's own median 253 ms over the same rows: kvplan's stalls fill the room
  about as the measured TPOT allows. One exception: GLM-5 B300 (a nightly
  build, no interval in its script): C 128 room 5.51 ms implies 53 ms extends against kvplan's
  211, C 8 37 ms against 208, and its C 8 measured mean TTFT (143 ms, wait and frontend
  included) bounds a lone extend below kvplan's 208 ms: there the extend price is too high.
  Elsewhere a lone extend is not overpriced: at C <= 8 kvplan's mean TTFT is below the
  measured on 12 of 14 rows (DeepSeek-R1 B200 C 4 177 / 183 ms; Qwen3.5 B200 C 4 213 / 305),
  above only on GLM-5 B300 C 8 (259 / 143) and Qwen3.5 B300 bf16 1k C 4 (193 / 156).
- So the client-workload TPOT excess on the ISL-1,024 C >= 16 rows is kvplan's decode steps
  priced above what the measured TPOT holds, with the extend stalls (correctly counted for the
  flags the bench passes, about correctly priced) added on top; the script's
  --scheduler-recv-interval (a harness flag, sglclient66) removes two thirds of the stalls and
  brings the TTFT close (row 263: 207 -> 396 ms against 402 measured; 288: 296 -> 615 against
  799). Next suspects, not examined here: the decode step of DeepSeek-R1 FP8 on B200 TP8 /
  Qwen3.5 B200 TP4 under SGLang 0.5.9 at C 16 - 64 (the fixed-length replay's TPOT error on
  these rows hides behind its lockstep's few stalls), and GLM-5's extend on B300.

Run: python -m tests.benches.sglextend67 [ROW_ID_SUFFIX ...]   (default: every SGLang row of
aggwork64's subset; ~3 minutes on the shared 2-core host)
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass

from kvplan.analysis.simulate import sglang_scheduler as sgl
from tests.benches import aiconfig_agg_client_rows as section
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_sglang_flags, sglclient66
from tests.benches.disagg_rows import PREFIX, Replay, stated_concurrency

_sizes: list[int] = []  # requests of each extend batch of the current run
_kept_sizes: list[list[int]] = []  # per kept run, parallel to sglclient66._runs


def _instrument() -> None:
    """sglclient66's tags, and the requests each extend batch takes."""
    sglclient66._instrument()
    cls = sgl.SglangSimulator
    schedule = cls.schedule

    def schedule_sized(self):  # type: ignore[no-untyped-def]
        out = schedule(self)
        if out and self.extending:
            _sizes.append(len(out))
        return out

    cls.schedule = schedule_sized  # type: ignore[method-assign]
    row_run = agg.row_run

    def row_run_sized(row, sim, requests=None):  # type: ignore[no-untyped-def]
        _sizes.clear()
        result = row_run(row, sim, requests)
        _kept_sizes.append(list(_sizes))
        return result

    agg.row_run = row_run_sized  # type: ignore[assignment]


def room(measured_tpot_ms: float, decode_share_ms: float) -> float:
    """What the measured TPOT leaves for the extend stalls per output token (ms), if kvplan's
    decode steps are right: the measured TPOT less kvplan's decode share."""
    return measured_tpot_ms - decode_share_ms


def implied_extend_ms(room_ms: float, extend_share_ms: float, stall_ms: float) -> float | None:
    """The mean extend price (ms) at which kvplan's stalls would fill `room_ms` exactly, at
    kvplan's count: its extend share per token scales with the price, so stall_ms x room /
    share. None without stalls; <= 0 where the decode share alone passes the measured TPOT."""
    if extend_share_ms <= 0:
        return None
    return stall_ms * room_ms / extend_share_ms


@dataclass(frozen=True)
class Arm:
    """One replay of a row, decomposed: its Replay, sglclient66's Split, the prompts per
    extend batch (mean), or None where it was not replayed."""

    replay: Replay
    split: sglclient66.Split | None
    prompts_per_extend: float | None


def _decomposed(rep: Replay, row: dict[str, str]) -> Arm:
    """The kept run whose client TPOT is the Replay's (sglclient66._kept), with its sizes."""
    for (finished, steps), sizes in zip(sglclient66._runs, _kept_sizes, strict=True):
        _, tpot, _ = sglclient66.client.measure(row, finished)
        if rep.tpot_ms is not None and abs(tpot - rep.tpot_ms) < 1e-9:
            return Arm(rep, sglclient66.split(finished, steps),
                       statistics.fmean(sizes) if sizes else None)
    return Arm(rep, None, None)


def _run(row: dict[str, str], interval: int | None) -> Arm:
    sglclient66._runs.clear()
    _kept_sizes.clear()
    rep = (section.replay_client(row) if interval is None
           else sglclient66.replay_recv(row, interval))
    return _decomposed(rep, row)


def _cells(a: Arm | None, meas: float) -> list[str]:
    if a is None or a.split is None:
        return ["-"] * 7
    s = a.split
    r = room(meas, s.decode)
    imp = implied_extend_ms(r, s.extend, s.stall_ms)
    return [f"{a.replay.tpot_ms or 0:.2f} ({(a.replay.tpot_ms or 0) / meas - 1:+.0%})",
            f"{s.decode:.2f}", f"{s.extend:.2f}", f"{s.stalls:.1f}",
            "-" if a.prompts_per_extend is None else f"{a.prompts_per_extend:.2f}",
            f"{s.stall_ms:.0f}", f"{r:+.2f} / " + ("-" if imp is None else f"{imp:.0f}")]


def main() -> None:
    want = sys.argv[1:]
    _instrument()
    sglclient66._with_recv()
    shaped = set(aiconfig_sglang_flags.recv_shaped().rows)
    print("| row | shaped (rule 3) | ISL/OSL | C | meas TTFT / TPOT | kvplan TTFT | TPOT (err) | "
          "decode share | extend share | stalls/req | prompts/ext | stall ms | room / implied "
          "ms | recv | recv: TPOT (err) | decode share | extend share | stalls/req | prompts/ext "
          "| stall ms | room / implied ms |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          "---:|---:|---:|---:|")
    rooms: list[tuple[str, float, float, float]] = []  # (group, room, stall ms, implied)
    for row in sglclient66.rows(False):
        if want and not any(row["id"].endswith(w) for w in want):
            continue
        base = _run(row, None)
        interval = sglclient66.recv_interval(row)
        rv = _run(row, interval) if interval is not None and interval > 1 else None
        meas = float(row["silicon_tpot_ms"])
        if base.split is None:
            print(f"| {row['id'][-44:]} | not replayed: {base.replay.why_not[:60]} |")
            continue
        s = base.split
        group = ("ISL 1,024, C >= 16" if int(row["isl"]) == 1024
                 and (stated_concurrency(row) or 0) >= 16 else "other")
        imp = implied_extend_ms(room(meas, s.decode), s.extend, s.stall_ms)
        rooms.append((group, room(meas, s.decode), s.stall_ms,
                      float("nan") if imp is None else imp))
        print(f"| {row['id'][-44:]} | {'y' if PREFIX + row['id'] in shaped else ''} | "
              f"{row['isl']}/{row['osl']} | {stated_concurrency(row)} | "
              f"{float(row['silicon_ttft_ms']):.0f} / {meas:.2f} | "
              f"{base.replay.ttft_ms or 0:.0f} | "
              + " | ".join(_cells(base, meas)) + f" | {interval or '-'} | "
              + " | ".join(_cells(rv, meas)) + " |", flush=True)
    print("\n| rows | n | room <= 0 (decode share alone >= measured TPOT) | median room ms | "
          "room > 0: median kvplan stall ms | median implied ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in ("ISL 1,024, C >= 16", "other", "all"):
        part = [x for x in rooms if name == "all" or x[0] == name]
        if not part:
            continue
        pos = [x for x in part if x[1] > 0]
        cells = (f"{statistics.median(x[2] for x in pos):.0f} | "
                 f"{statistics.median(x[3] for x in pos):.0f}") if pos else "- | -"
        print(f"| {name} | {len(part)} | {sum(x[1] <= 0 for x in part)} | "
              f"{statistics.median(x[1] for x in part):+.2f} | {cells} |")


if __name__ == "__main__":
    main()
