"""frontdef67 (issue 30): should vLLM's API-server stage, its MEASURED parts only, be kvplan's
default for `vllm serve` runs? `simulate --frontend` (kvplan.engines.vllm.frontend
VLLM_API_LOOP_COST, vllm_api_output_cost) is five parts on the API server's one loop, four of
them measured with vLLM's own code on one CPU and fitted to no serving row, one fitted:
- `req`: 97.8 us a request of ingestion (parse, sampling params, request build, msgpack;
  tests/benches/api_ingest_cost.py);
- `tok`: 2.168 us a prompt token of ingestion (the tokenizer, same bench);
- `out`: 17.0 us a request given a token in a step (the output stage, api_output_cost.py);
- `prime`: from vLLM 0.17, 0.931 us a prompt token at a request's first token (the
  detokenizer's whole-prompt prime, detok_prime_cost.py);
- `latency`: 25.55 ms a request outside the queue (VLLM_API_LOOP_LATENCY_S), FITTED on one row
  (kvcached's H100 vLLM 0.19.0 rate-16 seed-42 row, tests/benches/frontend_fit.py).

DECOMPOSITION. Each run is replayed six times, the parts added one at a time in the order
above (the stage is a queue: a part's share depends on the parts before it, so the order is
stated): `default` (kvplan's default, no stage), `req`, `+tok`, `+out`, `+prime`, `+latency`
(= `--frontend` as it is). `+prime` is candidate (a): `--frontend --frontend-latency-ms 0`,
every part measured, nothing fitted. The mean TTFT each part adds is the difference of two
successive replays' mean TTFT; per set, the median over its runs.

DECISION RULE (frozen in this commit, before any row was replayed with candidate (a)).
Candidate (a) becomes kvplan's default for vLLM `vllm serve` runs (where `--frontend` applies)
only if ALL of:
 R1. held out: the median over the held-out sets of each set's median |mean TTFT error| is
     lower with (a) than with today's default (no stage);
 R2. the sim-to-real study (its 19 main load stages, shaped) keeps a median |mean TTFT error|
     <= 15 %;
 R3. no held-out set's median |mean TTFT error| grows by more than 5 points;
 R4. no held-out set's median |mean TPOT error| grows by more than 5 points (the output stage
     moves TPOT too).
Else it stays opt-in (reachable as `--frontend --frontend-latency-ms 0`) and is reported.
The sets: the vLLM runs (prospective30's machinery, tests.benches.prospective_runs.run_one)
of prospective31, 53, 53b, 54, 56, 57, 58, 60, 61, 62, 63, 65 (p30 beside them), the
sim-to-real study's stages (tests.benches.sim_to_real, main 19; its prospective / blind /
offload runs beside), blind2 (AccelMark, in process: `vllm serve`'s default would not apply
to it; reported, not in the rule) and aiconfigurator's vLLM rows (`aiconfig`: the subset of
tests.benches.aiconfig_agg_ttft.studied(), every sixth row in its order, fixed here before
any replay; steady-state TTFT as aiconfig_agg_loop.steady measures it).
Splits (the stage's own records, tests/benches/fitted_rows.py SHAPED_BY and prospective_runs
split_of): a run is SHAPED if it is one of prospective30's fitted rows or shares their
configuration, or a SHAPED_BY record of the stage (321c880 the stage's first shape,
72dfef14 / 2b25c6c8 the output stage, 63daad97 the measured loop) names it; every study stage
is shaped (2b25c6c8, and this candidate was proposed after the study's +94 % with the
latency); aiconfig's gpt-oss rows shaped the prime's reading (fixedtok66). The rest is held
out. A held-out set in R1 / R3 / R4: one prospective set's held-out vLLM runs (at least one
simulated), and aiconfig's held-out rows.

Candidate (b) (the model's own tokenizer's cost per token where the client sends text) is
not evaluated here (RESULTS).

RESULTS (15:45-16:40 UTC on the shared 2-core host, the rule frozen at 4112a8d6; median
|simulated / measured - 1| of the mean TTFT, default -> candidate (a) -> --frontend as it is;
TPOT the same way; "adds": the median ms each part adds to a run's mean TTFT, in CHAIN's order):
HELD OUT
- p31 (20 of 24 simulated; default / (a) / latency only): 21.8 -> 21.8 -> 21.3 %, TPOT 16.4 %.
- p53b (1 of 2; one refused): 78.8 -> 71.7 -> 68.3 %, TPOT 42.4 -> 42.7 -> 42.8 %.
- p61 (10, 0.20.0): 17.1 -> 16.6 -> 18.9 %, TPOT 19.6 throughout; adds tok +2.6, prime +1.6.
- p53 (13): TTFT 30.0 -> 29.9 -> 29.9 %, TPOT 21.2 -> 21.4 -> 21.4 %; adds req +2.1, tok +69.4
  (1,000-request bursts: the serial tokenizing), out +2.9, prime 0 (0.11 / 0.13), latency +25.6.
- p54 (2 of 3; one refused): 47.8 -> 47.0 -> 40.5 %, TPOT 12.1 throughout.
- p56 (2): 34.9 -> 36.4 -> 9.6 %, TPOT 20.2 -> 20.2 -> 20.5 %; adds tok -4.3, latency +74.9.
- p57 (11): 41.8 -> 30.4 -> 17.9 %, TPOT 8.0 -> 9.4 -> 9.8 %; adds req +0.4, tok +43.4 (5,000-
  token prompts), out +0.2, latency +149.0.
- p58 (33, MiniMax-M2.5 0.20.0; the last 31 runs replay default / (a) / latency only): 21.0 ->
  16.8 -> 13.2 % (the page: 21.0 / 13.2), TPOT (the 31) 6.6 -> 5.3 -> 5.2 %; (a) adds +94.6 ms
  (tok and the 0.20 prime on 10,240-token prompts).
- p60 (16 vLLM runs; 4 refused): 19.7 % throughout, TPOT 24.1 -> 24.0 % (A100 bursts of minutes).
- p62 (36): 25.8 -> 18.7 -> 6.9 %, TPOT 8.2 -> 8.3 -> 8.2 %; adds req +0.1, tok +7.1, out +0.3.
- p63 (50): 43.7 -> 41.1 -> 14.6 %, TPOT 11.0 -> 8.6 -> 6.9 %; adds tok -1.7, latency +59.3.
- p65 (1): 19.1 -> 19.1 -> 5.5 %, TPOT 34.8 throughout.
- aiconfig (34 of the 51-row subset, not gpt-oss): 37.3 -> 39.7 -> 67.8 %, TPOT 12.9 -> 12.6 ->
  12.6 %; (a) adds +9.5, latency +57.3.
SHAPED
- study main (19 stages): 6.5 -> 7.1 -> 93.9 % (the page: 6.6 / 93.8), mean ITL 1.7 -> 1.7 ->
  2.0 %; every part measured adds 1.5-4 ms a stage (median +1.7: req 0.1, tok 1.2-1.3 at ~550
  tokens, out 0.2-2.0), the latency +25.55: the study's +94 % is the fitted latency.
- p56 Scicom (26): 32.4 -> 32.3 -> 11.1 %, TPOT 7.6 -> 9.8 -> 7.6 %.
- p62 concurrency 200 (18): 26.1 -> 25.2 -> 12.4 %, TPOT 3.9 -> 4.1 -> 6.9 %.
- aiconfig gpt-oss (14): 85.8 -> 113.6 -> 138.0 %.
- p30 (10: kvcached's fitted and same-configuration rows, gpustack's shaping rows): 79.4 ->
  72.7 -> 49.7 %, TPOT 44.1 -> 44.4 -> 44.4 %.
- blind2 (24 levels, p50s; in process, so `vllm serve`'s default does not apply to it): 55.0 ->
  50.8 -> 38.2 %, TPOT 20.2 -> 20.1 -> 20.1 %.
VERDICT (`--from` over the SET lines): R1 met, by a hair: the median of the 13 held-out sets'
medians 30.0 -> 29.9 % (p31 p53 p53b p54 p56 p57 p58 p60 p61 p62 p63 p65 aiconfig; 8 sets
better, p56 +1.5 and aiconfig +2.4 worse, 3 unchanged); R2 met (7.1 %); R3 none worse by > 5
points; R4 none (p57 +1.4 the most). Candidate (a) becomes `vllm
serve`'s default (commit b1ce8404).
What the decomposition says: on the closed-loop held-out sets the fitted latency moves the mean
TTFT by far more than its 25.55 ms (p57 +149, p62 shaped +98, p56 +75, p63 +59 ms median): with
fixed lengths the users' requests de-phase from the engine's steps, which the measured parts
alone do not do; that is where --frontend's gains on p56 / p62 / p63 come from, not from host
work, and it is no measured cost (the latency stays opt-in).

Run: python -m tests.benches.frontdef67 SET ... (SET: 30 31 53 53b 54 56 57 58 60 61 62 63
65, study, blind2, aiconfig). Prints one line a run (mean TTFT per replay, ms) and per set and
split the median parts and the median |error| of each replay.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from unittest import mock

from kvplan._util.errors import KvplanError
from kvplan.engines.vllm.frontend import (
    VLLM_API_OUTPUT_COST,
    ApiOutputCost,
    vllm_api_loop_cost,
    vllm_api_output_cost,
)
from tests.benches import prospective_runs as pr

# The cumulative replays, in order (module docstring); "default": no stage.
CHAIN = ("default", "req", "tok", "out", "prime", "latency")
CANDIDATE = "prime"  # candidate (a): every measured part, latency 0
NO_OUTPUT = ApiOutputCost(s_per_step=0.0, s_per_output=0.0, source="frontdef67: no output work")
STAGE_COMMITS = ("321c880", "72dfef14", "2b25c6c8", "63daad97")
# aiconfig's subset: every sixth studied row (fixed before any replay; first set at every
# third, cut for the shared host's CPU before any aiconfig row was replayed), each replayed
# by default, measured parts (`prime`) and `latency` only.
AICONFIG_EVERY = 6


@contextmanager
def variant(name: str) -> Iterator[None]:
    """`setup(..., frontend=True)` builds the `name` replay of CHAIN ("latency": as it is)."""
    if name == "latency":
        yield
        return
    loop = vllm_api_loop_cost(0.0)  # `--frontend --frontend-latency-ms 0`'s stage
    if name == "req":
        loop = replace(loop, s_per_prompt_token=0.0)

    def output(version: str | None, *, frontend: bool) -> ApiOutputCost:
        if name in ("req", "tok"):
            return NO_OUTPUT
        if name == "out":
            return VLLM_API_OUTPUT_COST
        return vllm_api_output_cost(version, frontend=frontend)

    with mock.patch("kvplan.analysis.simulate.engine_setups.vllm_api_loop_cost",
                    lambda latency_s=None: loop), \
            mock.patch("kvplan.analysis.simulate.run.vllm_api_output_cost", output):
        yield


def shaped_rows() -> set[str]:
    """The run ids the stage's SHAPED_BY records name (module docstring)."""
    from tests.benches.fitted_rows import SHAPED_BY

    return {row for s in SHAPED_BY if s.commit in STAGE_COMMITS for row in s.rows}


def _path(name: str):  # type: ignore[no-untyped-def]
    return pr.DATA if name == "30" else pr.DATA.with_name(f"prospective{name}.json")


_SERVED = pr._served


def _chain(run: dict, chain: tuple[str, ...] = CHAIN  # type: ignore[type-arg]
           ) -> list[dict[str, float]] | None:
    """`run`'s figures in every replay of CHAIN (None: refused). run_one replays the default
    beside each variant: the default's simulation is run once and kept."""
    kept: list = []  # type: ignore[type-arg]

    def served(sim, run):  # type: ignore[no-untyped-def]
        if sim.scheduler.api_server is None and sim.scheduler.api_output is None:
            if not kept:
                kept.append(_SERVED(sim, run))
            return kept[0]
        return _SERVED(sim, run)

    out: list[dict[str, float]] = []
    with mock.patch.object(pr, "_served", served):
        for name in chain[1:]:
            with variant(name):
                result = pr.run_one(run)
            if result.refused:
                return None
            if not out:
                out.append(result.simulated)
            out.append(result.served)
    return out


def _line(label: str, ttft: list[float | None] | list[float], measured: float) -> str:
    parts = " / ".join("-" if t is None else f"{t:,.1f}" for t in ttft)
    return f"{label} | measured {measured:,.1f} | {parts}"


def _summary(label: str, rows: list[tuple[list[float], list[float], float, float]],
             chain: tuple[str, ...] = CHAIN) -> None:
    """Per replay: median |mean TTFT error|, |mean TPOT error|; the median part each adds."""
    if not rows:
        print(f"{label}: no run simulated", flush=True)
        return
    ttft_err = [statistics.median(abs(t[i] / m - 1) for t, _, m, _ in rows)
                for i in range(len(chain))]
    tpot_err = [statistics.median(abs(p[i] / mp - 1) for _, p, _, mp in rows)
                for i in range(len(chain))]
    adds = [statistics.median(t[i] - t[i - 1] for t, _, _, _ in rows)
            for i in range(1, len(chain))]
    print(f"{label} ({len(rows)} runs): median |TTFT mean err| "
          + ", ".join(f"{c} {e:.1%}" for c, e in zip(chain, ttft_err, strict=True))
          + "; |TPOT mean err| "
          + ", ".join(f"{c} {e:.1%}" for c, e in zip(chain, tpot_err, strict=True))
          + "; median ms added by "
          + ", ".join(f"{c} {a:+.2f}" for c, a in zip(chain[1:], adds, strict=True)),
          flush=True)


def prospective(name: str, skip: int = 0, chain: tuple[str, ...] = CHAIN) -> None:
    """One set's vLLM runs (`skip`: its first ones left out; `chain`: the replays)."""
    shaped = shaped_rows()
    runs = [r for r in pr.load(_path(name))["runs"] if r.get("engine", "vllm") == "vllm"][skip:]
    by_split: dict[str, list[tuple[list[float], list[float], float, float]]] = {}
    for run in runs:
        figs = _chain(run, chain)
        if name == "30" and pr.split_of(run["id"]) != "held out":
            split = "shaped"
        else:
            split = "shaped" if run["id"] in shaped else "held out"
        m = run["measured"]
        if figs is None:
            print(f"p{name} | {run['id']} | {split} | refused", flush=True)
            continue
        ttft = [f["ttft_ms.mean"] for f in figs]
        tpot = [f["tpot_ms.mean"] for f in figs]
        print(_line(f"p{name} | {run['id']} | {split} | vLLM {run['vllm']}",
                    [ttft[chain.index(c)] if c in chain else None for c in CHAIN],
                    m["mean_ttft_ms"]), flush=True)
        by_split.setdefault(split, []).append((ttft, tpot, m["mean_ttft_ms"], m["mean_tpot_ms"]))
    for split, rows in sorted(by_split.items()):
        _summary(f"SET p{name} {split}", rows, chain)


# The study's replays are long open-loop runs (minutes each on the shared host): its runs after
# the first three (13, 14, 15, replayed with the whole CHAIN) replay the default, the measured
# parts together (`prime`) and `latency` only.
SHORT = ("default", "prime", "latency")
STUDY_FULL_RUNS = 3


def study(parts: tuple[str, ...] = ("main",), skip: int = 0) -> None:
    """The study's stages (`skip`: its first runs left out, e.g. replayed by an earlier call)."""
    from tests.benches import sim_to_real as s

    records = s.load_records()
    for part in parts:
        _, runs = s.load_runs(**({} if part == "main" else {part: True}))
        rows = []
        for index, run in enumerate(runs):
            if index < skip:
                continue
            chain = CHAIN if index < STUDY_FULL_RUNS else SHORT
            sims = {}
            for c in chain:
                with variant(c) if c != "default" else nullcontext():
                    sims[c] = s.simulate_run(run, frontend=c != "default")
            for stage in range(len(run.stages)):
                key = (run.id, stage, "ttft_mean")
                if key not in records:
                    continue
                ttft = [sims[c].stages[stage]["ttft_mean"] if c in sims else None
                        for c in CHAIN]
                itl = [sims[c].stages[stage]["itl_mean"] if c in sims else None for c in CHAIN]
                m = records[key]["measured"]
                mi = records[(run.id, stage, "itl_mean")]["measured"]
                print(_line(f"study-{part} | {run.id} stage {stage} | shaped", ttft, m),
                      flush=True)
                rows.append(([ttft[CHAIN.index(c)] for c in SHORT],
                              [itl[CHAIN.index(c)] for c in SHORT], m, mi))
        _summary(f"SET study-{part} shaped (TPOT: mean ITL)", rows, SHORT)


def blind2() -> None:
    from tests.benches import accelmark_runs as am

    doc, runs = am.load()
    levels: dict[str, list] = {c: [] for c in CHAIN}  # type: ignore[type-arg]
    for run in runs:
        for c in CHAIN:
            with variant(c) if c != "default" else nullcontext():
                levels[c] += am.simulate(run, doc, frontend=c != "default")
    rows = []
    for i in range(len(levels["default"])):
        lv = [levels[c][i] for c in CHAIN]
        rows.append(([x.simulated["ttft_p50"] for x in lv], [x.simulated["tpot_p50"] for x in lv],
                     lv[0].measured["ttft_ms_p50"], lv[0].measured["tpot_ms_p50"]))
    _summary("SET blind2 shaped (p50s, in process)", rows)


def aiconfig() -> None:
    from tests.benches import aiconfig_agg_runs as agg
    from tests.benches import aiconfig_agg_ttft as t
    from tests.benches.aiconfig_agg_loop import row_run, steady
    from tests.benches.disagg_rows import stated_concurrency

    def figs(row: dict[str, str], version: str, c: str) -> tuple[float, float]:
        agg._setup.cache_clear()  # cached setups: built afresh for each replay
        with variant(c) if c != "default" else nullcontext():
            result = row_run(row, agg.row_setup(row, version, frontend=c != "default"))
        got = steady(list(result.finished), stated_concurrency(row))  # type: ignore[arg-type]
        return got[0], got[1]

    by_split: dict[str, list] = {}  # type: ignore[type-arg]
    for row in t.studied()[::AICONFIG_EVERY]:
        version = agg.release(row)
        assert version is not None
        try:
            got = [figs(row, version, c) for c in SHORT]
        except KvplanError:
            print(f"aiconfig | {row['id']} | refused", flush=True)
            continue
        split = "shaped" if "gpt-oss" in row["model_path"] else "held out"
        ttft, tpot = [g[0] for g in got], [g[1] for g in got]
        m, mp = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
        print(_line(f"aiconfig | {row['id']} | {split} | vLLM {version}",
                    [ttft[SHORT.index(c)] if c in SHORT else None for c in CHAIN], m),
              flush=True)
        by_split.setdefault(split, []).append((ttft, tpot, m, mp))
    for split, rows in sorted(by_split.items()):
        _summary(f"SET aiconfig {split}", rows, SHORT)


def main(names: list[str]) -> None:
    # `default` is the engine alone, as kvplan's default was when the rule was frozen (before
    # this task's change made the measured stage `vllm serve`'s default): the default stage off.
    with mock.patch("kvplan.analysis.simulate.run.measured_default", lambda **_: False):
        _main(names)


def _main(names: list[str]) -> None:
    if names[:1] == ["--from"]:
        verdict(names[1:])
        return
    for name in names:
        if name.startswith("study:"):  # study:N, its first N runs left out
            study(skip=int(name.split(":")[1]))
            continue
        if ":" in name:  # SET:N, its first N runs left out, replayed by SHORT only
            prospective(name.split(":")[0], int(name.split(":")[1]), SHORT)
            continue
        {"study": study, "study-rest": lambda: study(("prospective", "blind", "offload")),
         "blind2": blind2, "aiconfig": aiconfig}.get(
            name, lambda n=name: prospective(n))()


def verdict(paths: list[str]) -> None:
    """The decision rule (module docstring) over the SET lines of earlier runs' output."""
    import re

    held: dict[str, tuple[dict[str, float], dict[str, float]]] = {}
    study_err = None
    for path in paths:
        for text in open(path).read().splitlines():  # noqa: SIM115
            if not text.startswith("SET "):
                continue
            name = text[4:text.index(" (")]
            errs = [{k: float(v) / 100 for k, v in re.findall(r"(\w+) ([\d.]+)%", part)}
                    for part in text.split(";")[:2]]
            if name.endswith(" held out"):
                held[name[:-len(" held out")]] = (errs[0], errs[1])
            if name.startswith("study-main"):
                study_err = errs[0]
    base = statistics.median(t["default"] for t, _ in held.values())
    cand = statistics.median(t[CANDIDATE] for t, _ in held.values())
    worse_ttft = {k: t[CANDIDATE] - t["default"] for k, (t, _) in held.items()
                  if t[CANDIDATE] - t["default"] > 0.05}
    worse_tpot = {k: p[CANDIDATE] - p["default"] for k, (_, p) in held.items()
                  if p[CANDIDATE] - p["default"] > 0.05}
    print(f"held-out sets ({len(held)}): median of medians |TTFT mean err| default {base:.1%} "
          f"-> candidate (a) {cand:.1%} (R1 {'met' if cand < base else 'NOT met'})")
    if study_err is not None:
        met = "met" if study_err[CANDIDATE] <= 0.15 else "NOT met"
        print(f"study main: default {study_err['default']:.1%} -> candidate (a) "
              f"{study_err[CANDIDATE]:.1%} (R2 {met})")
    print(f"R3 (TTFT worse by > 5 points): {worse_ttft or 'none'}; "
          f"R4 (TPOT worse by > 5 points): {worse_tpot or 'none'}")


if __name__ == "__main__":
    main(sys.argv[1:])
