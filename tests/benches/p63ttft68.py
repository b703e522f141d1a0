"""p63ttft68 (issue 30): why the held-out vLLM sets miss mean TTFT by 30-41 % (prospective63,
then 56 and 53) while TPOT is within ~9-21 %.

Each run replayed exactly as the page replays it (tests.benches.ttft_forensic.replay: the same
`estimate` inputs, `setup` and requests as prospective_runs.run_one, kvplan's default, no
--frontend), its step hook traced so that each request's TTFT splits into kvplan's parts:
`api` (sent -> the engine core sees it: the API server's measured loop, frontdef67's default,
and the tokenizer batcher), `queue` (seen -> the first step that schedules its prompt), `own`
(its prompt's chunks priced alone), `behind` (the rest of the steps its chunks ran in: the
other prompts and decodes sharing them) and `rest`. Beside them: `lone`, the one-prompt
prefill step at the run's layout (the step cost of one prompt alone, nothing else in it);
`co`, the mean number of prompts in a step that prefills one (kvplan's waves: a closed loop
of equal requests admits them together); the measured and kvplan's E2E; and `gap` = measured
- kvplan mean TTFT (ms).

Nothing here changes a rule or a default output; the sets read here (prospective63, 56, 53)
become SHAPED for any rule written after this reading.

Run: python -m tests.benches.p63ttft68 [SET ...] (SET: prospective63 | prospective56 |
prospective53; default prospective63), a few CPU seconds a set.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass

from kvplan import load_spec
from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.metrics import metrics
from kvplan.analysis.simulate.run import SimSetup, _engine, setup, simulate
from kvplan.analysis.simulate.scheduler import SimRequest
from kvplan.engines.base import Engine
from tests.benches import ttft_forensic as tf
from tests.benches.prospective_runs import REPO, load, requests

SETS = ("prospective63", "prospective56", "prospective53")
PARTS = ("api", "queue", "own", "behind", "rest")
STALLS = tf.DATA / "p63ttft68_stalls.json"  # per run: the engine-wide stalls in its requests
BENCHMAQ = "123eefe103473a886b6610cd62cfd630406c7507"  # llm-benchmaq, prospective63's commit
STALL_MS = 400.0  # an inter-token gap above this is a stall (the runs' p99 ITL is below it)
# The send-to-engine latency sweep (`latency_lines`): --frontend's measured loop with a fixed
# latency d in place of its fitted one; d = 0 is kvplan's default replay.
LATENCIES_S = (0.0, 0.001, 0.003, 0.01, 0.025)
LATENCY_RUNS = (
    "scicom vLLM Llama-3.1-70B H100 TP8 random 4095/128 conc 25 (500 prompts)",
    "scicom vLLM Qwen3-32B H100 TP8 random 4096/128 conc 25 (500 prompts)",
    "scicom vLLM Qwen3-8B H100 TP8 random 4096/128 conc 25 (500 prompts)",
    "scicom vLLM Qwen3-14B H100 TP8 random 2048/128 conc 50 (500 prompts)",
    "scicom vLLM Llama-3.1-70B H100 TP8 random 127/128 conc 25 (1000 prompts)",
    "scicom vLLM Qwen3-8B H100 TP8 random 128/128 conc 50 (1000 prompts)",
)


@dataclass(kw_only=True)
class Waves(tf.Trace):
    """ttft_forensic's Trace, plus per step that prefills a prompt: how many prompts it holds."""

    co: list[int] | None = None

    def watch(self, engine: tf.Simulator) -> None:  # type: ignore[name-defined]
        super().watch(engine)
        inner = engine._finish_step
        self.co = []

        def finish_step(scheduled: list[tuple[SimRequest, int]], *rest: object) -> int:
            prompts = sum(1 for req, _ in scheduled
                          if req.num_output == 0 and req.num_computed < req.num_tokens)
            if prompts:
                assert self.co is not None
                self.co.append(prompts)
            return inner(scheduled, *rest)  # type: ignore[arg-type]

        engine._finish_step = finish_step  # type: ignore[method-assign]


@dataclass(frozen=True, kw_only=True)
class Split:
    """One run: measured, kvplan's figures and kvplan's TTFT split (means, ms)."""

    set_name: str
    run: dict  # type: ignore[type-arg]
    ttft_mean_ms: float = 0.0
    ttft_p50_ms: float = 0.0
    tpot_mean_ms: float = 0.0
    e2e_mean_ms: float = 0.0
    parts_ms: dict[str, float] | None = None
    lone_ms: float = 0.0  # one prompt's prefill step alone at the run's layout
    co_prompts: float = 0.0  # mean prompts per step that prefills one
    budget: int = 0
    # One wave: the run's C requests all sent at t = 0 to a fresh engine (the bunched closed
    # loop's bound: every prompt of a wave waits through the wave's prefill), mean TTFT / TPOT.
    wave_ttft_ms: float = 0.0
    wave_tpot_ms: float = 0.0
    # kvplan's mean TTFT with the existing opt-in stages (ttft_forensic.COUNTERFACTUALS).
    frontend_ttft_ms: float = 0.0
    api_output_ttft_ms: float = 0.0
    api_output_tpot_ms: float = 0.0
    refused: str = ""

    @property
    def m(self) -> dict[str, float]:
        return self.run["measured"]  # type: ignore[no-any-return]

    @property
    def concurrency(self) -> int | None:
        return self.run["workload"].get("max_concurrency")  # type: ignore[no-any-return]

    @property
    def gap_ms(self) -> float:
        return self.m["mean_ttft_ms"] - self.ttft_mean_ms


def _traced(run: dict, sim: SimSetup) -> tuple[dict[str, float], float, float, object]:  # type: ignore[type-arg]
    engine = _engine(sim, sim.pool_blocks or sim.plan.num_blocks, timeline=False,
                     bulk_decode=True)
    trace = Waves()
    trace.watch(engine)
    state = engine.run(requests(run), concurrency=run["workload"].get("max_concurrency"))
    done = state.finished
    parts = {p: sum(trace.parts(r)[q] for r in done) / len(done) * 1e3
             for p, q in zip(PARTS, tf.PARTS, strict=True)}
    prompt = done[0].prompt_len
    lone = sim.cost.seconds(decode_contexts=[], chunks=[(0, prompt)]) * 1e3
    co = statistics.mean(trace.co) if trace.co else 0.0
    return parts, lone, co, metrics([state])


def split(set_name: str, run: dict) -> Split:  # type: ignore[type-arg]
    """`run` replayed as the page does (ttft_forensic.replay's baseline), its TTFT split."""
    base = tf.replay(set_name, run)  # the same inputs; refusals come back here
    if base.refused:
        return Split(set_name=set_name, run=run, refused=base.refused)
    captured: dict[str, SimSetup] = {}
    inner = tf._traced

    def keep(set_name_: str, run_: dict, sim: SimSetup, dense: bool) -> tf.Row:  # type: ignore[type-arg]
        captured["sim"] = sim
        return inner(set_name_, run_, sim, dense)

    tf._traced = keep  # type: ignore[assignment]
    try:
        tf.replay(set_name, run)
    finally:
        tf._traced = inner  # type: ignore[assignment]
    sim = captured["sim"]
    try:
        parts, lone, co, m = _traced(run, sim)
    except KvplanError as exc:
        return Split(set_name=set_name, run=run, refused=str(exc))
    c = run["workload"].get("max_concurrency")
    wave = (simulate(sim, requests({**run, "workload": {**run["workload"], "num_prompts": c}}),
                     concurrency=c).metrics if c else None)
    front = tf.replay(set_name, run, tf.COUNTERFACTUALS["--frontend"])
    out = tf.replay(set_name, run, tf.COUNTERFACTUALS["--api-output"])
    return Split(set_name=set_name, run=run, ttft_mean_ms=float(m.ttft_ms["mean"]),
                 wave_ttft_ms=float(wave.ttft_ms["mean"]) if wave else 0.0,
                 wave_tpot_ms=float(wave.tpot_ms["mean"]) if wave else 0.0,
                 frontend_ttft_ms=front.ttft_mean_ms, api_output_ttft_ms=out.ttft_mean_ms,
                 api_output_tpot_ms=out.tpot_mean_ms,
                 ttft_p50_ms=float(m.ttft_ms["p50"]), tpot_mean_ms=float(m.tpot_ms["mean"]),
                 e2e_mean_ms=float(m.e2e_ms["mean"]), parts_ms=parts, lone_ms=lone,
                 co_prompts=co, budget=sim.scheduler.max_num_batched_tokens)


def set_splits(set_name: str) -> list[Split]:
    return [split(set_name, run) for run in load(tf.DATA / f"{set_name}.json")["runs"]]


def _e(pred: float, meas: float | None) -> str:
    return f"{pred / meas - 1:+.0%}" if meas else "-"


def print_runs(rows: list[Split]) -> None:
    print("| run | C | measured TTFT mean / p50 | kvplan mean / p50 | err | gap ms | "
          "api | queue | own | behind | rest | lone | co | TPOT meas / kvplan | TPOT err | "
          "E2E err | one wave: TTFT / TPOT err | --frontend TTFT err | --api-output TTFT / "
          "TPOT err |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          "---:|---:|---:|")
    for r in rows:
        c = r.concurrency or "inf"
        if r.refused:
            print(f"| {r.run['id']} | {c} | refused: {r.refused[:80]} |" + " |" * 16)
            continue
        p = r.parts_ms or {}
        print(f"| {r.run['id']} | {c} | {r.m['mean_ttft_ms']:,.1f} / {r.m['median_ttft_ms']:,.1f}"
              f" | {r.ttft_mean_ms:,.1f} / {r.ttft_p50_ms:,.1f} | "
              f"{_e(r.ttft_mean_ms, r.m['mean_ttft_ms'])} | {r.gap_ms:,.1f} | "
              + " | ".join(f"{p[k]:,.1f}" for k in PARTS)
              + f" | {r.lone_ms:,.1f} | {r.co_prompts:.1f} | {r.m['mean_tpot_ms']:.2f} / "
              f"{r.tpot_mean_ms:.2f} | {_e(r.tpot_mean_ms, r.m['mean_tpot_ms'])} | "
              f"{_e(r.e2e_mean_ms, r.m.get('mean_e2e_ms'))} | "
              f"{_e(r.wave_ttft_ms, r.m['mean_ttft_ms'])} / "
              f"{_e(r.wave_tpot_ms, r.m['mean_tpot_ms'])} | "
              f"{_e(r.frontend_ttft_ms, r.m['mean_ttft_ms'])} | "
              f"{_e(r.api_output_ttft_ms, r.m['mean_ttft_ms'])} / "
              f"{_e(r.api_output_tpot_ms, r.m['mean_tpot_ms'])} |")


def _cell(r: Split) -> tuple[str, str]:
    """(model + layout, prompt length) of a run: the load varies within a cell."""
    rid = r.run["id"]
    head = rid.split(" random ")[0] if " random " in rid else rid.rsplit(" conc ", 1)[0]
    return head, str(r.run["workload"]["input_len"])


def print_load(rows: list[Split]) -> None:
    """Per cell (model, layout, prompt length), the measured / kvplan TTFT ratio and the gap at
    each concurrency: a flat ratio is the step, a gap growing with C the queue, a flat gap a
    per-request offset."""
    cells: dict[tuple[str, str], list[Split]] = defaultdict(list)
    for r in rows:
        if not r.refused and r.concurrency:
            cells[_cell(r)].append(r)
    print("\n| cell | in | C: measured / kvplan TTFT (gap ms) | measured TTFT / lone | "
          "kvplan TTFT / lone |")
    print("|---|---:|---|---|---|")
    for (head, n), mine in cells.items():
        mine.sort(key=lambda r: r.concurrency or 0)
        print(f"| {head} | {n} | " + "; ".join(
            f"{r.concurrency}: {r.m['mean_ttft_ms'] / r.ttft_mean_ms:.2f} ({r.gap_ms:+,.0f})"
            for r in mine) + " | " + "; ".join(
            f"{r.m['mean_ttft_ms'] / r.lone_ms:.1f}" for r in mine) + " | " + "; ".join(
            f"{r.ttft_mean_ms / r.lone_ms:.1f}" for r in mine) + " |")


def extract(clone: str) -> None:
    """STALLS from a local clone of llm-benchmaq (at BENCHMAQ): per prospective63 run, its saved
    `vllm bench serve --save-result` JSON (the run's URL, .json for .txt): the engine-wide
    stalls (inter-token gaps > STALL_MS of the requests in flight, one stall per cluster of
    gap starts within 0.2 s), their lengths, the requests whose TTFT exceeds max(STALL_MS, 3 x
    the median) and the mean TTFT without them."""
    out: dict[str, dict[str, object]] = {}
    for run in load(tf.DATA / "prospective63.json")["runs"]:
        path = run["url"].split("/blob/")[1].split("/", 1)[1].rsplit(".", 1)[0] + ".json"
        d = json.loads(subprocess.run(["git", "-C", clone, "show", f"{BENCHMAQ}:{path}"],
                                      capture_output=True, check=True).stdout)
        ttft = [x * 1e3 for x in d["ttfts"]]
        t0 = min(d["start_times"])
        starts = [(x - t0) * 1e3 for x in d["start_times"]]
        gaps: dict[float, float] = {}  # a gap's start (ms) -> its length (ms)
        for i, first in enumerate(ttft):
            wall = starts[i] + first
            for g in d["itls"][i]:
                if g * 1e3 > STALL_MS:
                    gaps[round(wall, 1)] = max(gaps.get(round(wall, 1), 0.0), g * 1e3)
                wall += g * 1e3
        stalls: list[tuple[float, float]] = []
        for at in sorted(gaps):
            if stalls and at - stalls[-1][0] <= 200:
                stalls[-1] = (stalls[-1][0], max(stalls[-1][1], gaps[at]))
            else:
                stalls.append((at, gaps[at]))
        med = statistics.median(ttft)
        hit = {i for i, x in enumerate(ttft) if x > max(STALL_MS, 3 * med)}
        out[run["id"]] = {
            "stalls_ms": [[round(a, 1), round(b, 1)] for a, b in stalls],
            "hit": len(hit), "mean_ttft_ms": round(statistics.mean(ttft), 2),
            "median_ttft_ms": round(med, 2),
            "mean_ttft_without_hit_ms": round(statistics.mean(
                [x for i, x in enumerate(ttft) if i not in hit]), 2)}
    doc = {"what": "Per prospective63 run, read from its `vllm bench serve --save-result` JSON "
           "beside its .txt in Scicom-AI-Enterprise-Organization/llm-benchmaq at "
           f"{BENCHMAQ} (tests/benches/p63ttft68.py extract): the engine-wide stalls (every "
           f"inter-token gap > {STALL_MS:g} ms of the requests in flight, gap starts within "
           "0.2 s one stall: [its start after the run's first send, its longest gap], ms), the "
           f"requests whose TTFT exceeds max({STALL_MS:g} ms, 3 x the run's median) ('hit'), the "
           "mean and median TTFT and the mean without the hit requests (ms).",
           "commit": BENCHMAQ, "runs": out}
    STALLS.write_text(json.dumps(doc, indent=1) + "\n")


def stall_lines() -> None:
    """Per run with an engine-wide stall or a hit request: the stalls and what they add."""
    doc = json.loads(STALLS.read_text())["runs"]
    print("\n| run | stalls (start s: length ms) | hit requests | measured TTFT mean / median |"
          " mean without the hit |")
    print("|---|---|---:|---:|---:|")
    for rid, r in doc.items():
        if not r["stalls_ms"] and not r["hit"]:
            continue
        stalls = "; ".join(f"{a / 1e3:.2f}: {b:,.0f}" for a, b in r["stalls_ms"]) or "none"
        print(f"| {rid} | {stalls} | {r['hit']} | {r['mean_ttft_ms']:,.1f} / "
              f"{r['median_ttft_ms']:,.1f} | {r['mean_ttft_without_hit_ms']:,.1f} |")
    quiet = [rid for rid, r in doc.items() if not r["stalls_ms"]]
    print(f"\nRuns without an engine-wide stall: {len(quiet)} of {len(doc)}.")


def latency_lines() -> None:
    """kvplan's mean TTFT / TPOT on LATENCY_RUNS with a fixed send-to-engine latency (the
    --frontend stage's measured loop, its fitted latency replaced by each of LATENCIES_S)."""
    runs = {r["id"]: r for r in load(tf.DATA / "prospective63.json")["runs"]}
    print("\n| run | measured TTFT / TPOT | " + " | ".join(
        f"latency {d * 1e3:g} ms" for d in LATENCIES_S) + " |")
    print("|---|---:|" + "---:|" * len(LATENCIES_S))
    for rid in LATENCY_RUNS:
        run = runs[rid]
        spec = load_spec(str(REPO / run["model"]))
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=Engine.vllm,
                                 engine_version=run["vllm"])
        cells = []
        for d in LATENCIES_S:
            sim, _ = setup(spec, inputs, frontend=d > 0, frontend_latency_s=d if d else None)
            m = simulate(sim, requests(run), concurrency=run["workload"]["max_concurrency"])
            cells.append(f"{m.metrics.ttft_ms['mean']:,.0f} / {m.metrics.tpot_ms['mean']:.2f}")
        meas = run["measured"]
        print(f"| {rid} | {meas['mean_ttft_ms']:,.0f} / {meas['mean_tpot_ms']:.2f} | "
              + " | ".join(cells) + " |")


def main(argv: list[str]) -> None:
    if argv[:1] == ["extract"]:
        extract(argv[1])
        return
    for name in argv or [SETS[0]]:
        rows = set_splits(name)
        print(f"\n## {name}\n")
        print_runs(rows)
        print_load(rows)
        if name == SETS[0]:
            stall_lines()
            latency_lines()


if __name__ == "__main__":
    main(sys.argv[1:])
