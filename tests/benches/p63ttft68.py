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

import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass

from kvplan._util.errors import KvplanError
from kvplan.analysis.simulate.metrics import metrics
from kvplan.analysis.simulate.run import SimSetup, _engine, simulate
from kvplan.analysis.simulate.scheduler import SimRequest
from tests.benches import ttft_forensic as tf
from tests.benches.prospective_runs import load, requests

SETS = ("prospective63", "prospective56", "prospective53")
PARTS = ("api", "queue", "own", "behind", "rest")


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


def main(argv: list[str]) -> None:
    for name in argv or [SETS[0]]:
        rows = set_splits(name)
        print(f"\n## {name}\n")
        print_runs(rows)
        print_load(rows)


if __name__ == "__main__":
    main(sys.argv[1:])
