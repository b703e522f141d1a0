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
of equal requests admits them together); the measured and kvplan's E2E; `gap` = measured -
kvplan mean TTFT (ms); the one-wave bound and the opt-in --frontend / --api-output replays. For
prospective63 also: the replacements' `bunch` measured (the runs' saved per-request JSONs,
STALLS) against kvplan's, the engine-wide stalls in those JSONs, and a send-to-engine latency
sweep.

Nothing here changes a rule or a default output. READ here, so SHAPED for any rule written
after it: every run of prospective63, 56 and 53 (their tables), and prospective62's Scicom
concurrency-10 / 200 rows of the same sweeps (the page's table, for the trend in C). p56's SGLang
rows are replayed here on a fresh engine, not after their server's earlier runs as the page
replays them: their figures here are not the page's.

FINDING (b5b2328a + this module; median signed errors, kvplan / measured - 1, of each class's
runs; `class_lines`). No one cause: five classes, each already met by an earlier forensic
except B, and none with a code-following rule to add.
A. prospective63, C <= 50 at 2,048 / 4,096 tokens, dense (16 runs): TTFT -43.2 %, TPOT +12.5 %,
   E2E -2.2 % (TTFT ratio / TPOT ratio 0.50): not the step, the loop's phase. The one-wave
   bound (C prompts at once, fresh engine) gives the measured at C = 25: Qwen3-8B / 14B / 32B
   2,048 and 4,096 TTFT -6 .. +9 %, TPOT -5 .. +5 % (Llama-3.1-70B +13 / +43 %), so kvplan's
   step and scheduler hold a bunched turn right. kvplan's replay settles instead into a
   staggered train (Qwen3-32B 4,096 / 25: the replacements sent in pairs 170.7 ms apart, one
   prefill step, TTFT 600-683 ms; measured 1,144, median 1,180, as a bunched turn). Which
   equilibrium it lands in turns on milliseconds (`latency_lines`: a fixed send-to-engine
   latency of 0 / 1 / 3 / 10 / 25 ms: Llama 4,095 / 25 921 / 921 / 1,279 / 1,279 / 1,546 ms
   against 1,753; Qwen3-32B 4,096 / 25 625 / 625 / 625 / 756 / 950 against 1,144): wave63's
   and frontlat64's finding (the send-to-engine latency is the serving host's; kvplan follows
   vLLM 0.15's core loop and async scheduling), confirmed, not new. C = 100 at >= 2,048 (6):
   TTFT -29.1 %, TPOT -4.4 %, the same loop plus the start-up burst's queue. prospective56's
   Llama-3.1-70B 1,023: measured / kvplan 0.99 / 1.10 / 1.39 / 1.52 / 1.25 at C 10 / 25 / 50
   / 100 / 200: the same class (grows with load).
B. prospective63, C <= 50 at 127-511 tokens, Llama-3.1-70B / Qwen3-32B (8): kvplan HIGH (median +7.6
   %; Llama 127 / 25 +59 %, 511 / 25 +43 %, 127 / 50 +56 %): the same loop the other way. kvplan
   prefills a whole turn in one step (12.5-25 prompts a prefill step at 127 tokens, `co`; 74 of its
   133 ms a step behind the others' prompts) and no latency of 0-25 ms unbunches it (Llama 127 / 25:
   133 / 133 / 133 / 133 / 134 ms, measured 83). The sends say so directly (`bunch_lines`: the mean
   cluster a replacement is sent in, sends within 5 ms, from the saved JSONs): at 127-128 tokens
   measured 4.2 / 12.9 (Llama C 25 / 50), 4.3 / 13.0 (Qwen3-32B) against kvplan's 15.9 / 39.4 and
   15.9 / 39.4; the served loop starts as one burst and spreads into clusters of 1-3 (Llama 127 /
   25: 420 clusters, 314 of them of one or two sends), kvplan's keeps its first turn's grouping for
   ever. A deterministic replay of equal requests keeps one phase; what spreads the served one
   (per-request jitter of the client, HTTP and API server) is in no code read. Not priced. The long
   prompts (A) show the reverse on the same measure: Qwen3-8B / 14B / 32B at 2,048 / 4,096 and C 25
   measured 3.0-14.4 against kvplan's 1.9-5.1.
C. Qwen3-8B / 14B at <= 1,024 tokens (p63 8 at C <= 50: TTFT -37.7 %, TPOT -7.2 %, E2E
   -11.6 %; p56 6: -32.8 / +9.8 / +1.1 %): a per-request part outside the engine, growing with
   load: Qwen3-8B 128 gap +22 / +39 / +88 ms at C 25 / 50 / 100 (kvplan's API-server part 4.0 /
   4.6 / 7.5 ms), p56 Qwen3-8B / 14B 1,024 +36 / +40 ms already at C 10. --frontend's fitted
   25.55 ms covers C 25 (Qwen3-8B 128 / 25 -46 -> +16 %), not C 50-100 (-54 -> -21, -63 ->
   -46 %). At C >= 100 (p63 6: TTFT -33.6 %, TPOT -22.7 %, E2E -25.0 %, ratio 0.85) the decode
   step itself is short (Qwen3-8B 128 / 100 TPOT 4.68 vs 6.81 ms), wave63's note; --api-output
   (the API loop's measured per-step output work) moves that TTFT -63 -> -50 % and the TPOT not
   (-33 %). Left open: the host's per-step output path at batch 50-100 for a small model.
D. gpt-oss-120b (p63 6: TTFT -71.7 %, TPOT -13.9 %; p56's vLLM 4 alike): engine-wide stalls plus the
   step. `stall_lines` (from the runs' saved JSONs, STALLS): 27 stalls in 5 of the 6 gpt-oss runs
   (23 of 1.1-1.3 s, two 2.1-2.4 s, one 1.8, one 0.6), none in the 44 dense runs; without the
   requests they hit the mean TTFT is 49.3 / 67.7 / 130.2 / 219.7 / 523.1 ms against 133.8 / 274.2 /
   170.2 / 342.2 / 543.0 published (gptossttft63's finding, 46 episodes in 16 runs; its JIT-compile
   cause unproven, gptossjit64). Stall-free, the measured is still 2-3 x kvplan's, flat with load
   (p56 1,024: 2.95 / 2.89 / 3.22 at C 10 / 25 / 50; p63 2,048: 2.40 / 2.84): the step class,
   gptossttft63's 60-70 ms floor on ungraphed gpt-oss TP 8 steps (kvplan's 22-34 ms), the same class
   as tpslope66's InferenceX vLLM 0.18 Hopper rows (2.0-2.3 flat).
E. prospective53 (gpustack H200, every request at once, 13 runs): TTFT -28.7 %, TPOT -23.5 %,
   ratio 0.94: the whole timeline scaled, the step (decode and prefill alike ~25 % slower than
   kvplan's on these pages' hosts, as p30 / p31's H100 pages of the same lab), TTFT being queue
   (DeepSeek-R1 32,000 / 100: 78,171 of kvplan's 83,785 ms). Its 128 / 4 rows (-76 / -88 %,
   1,000 requests at once) are API-server ingestion, prospective30's gpustack 128 / 4 class.
Across sets: A in p56 and p63 (Scicom, vLLM 0.15.0, H100 TP 8); C in p56 and p63 (small dense
models, same servers); D in p56, p63 and tpslope66's rows (gpt-oss-120b, Hopper, Triton MXFP4);
E is p53's own (its lab's host). No rule: A's and C's fixed part is a host latency (frontlat64:
a default needs the serving host's own figure), B has no code to follow, D's stall key and step
floor are unread / unmeasured (gptossjit64's next step needs a lent H100), E is the lab's host.

Run: python -m tests.benches.p63ttft68 [SET ...] (SET: prospective63 | prospective56 |
prospective53; default prospective63; about 1.5 CPU minutes a set with its counterfactuals) |
extract CLONE (rewrites STALLS from a local clone of llm-benchmaq holding BENCHMAQ).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
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
SEND_GAP_MS = 5.0  # sends this close are one bunch (under every run's decode step, 3.6-12 ms)
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
    bunch: float = 0.0  # kvplan's replacements' bunch (`bunch`, the replay's sends)
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


def _traced(run: dict, sim: SimSetup  # type: ignore[type-arg]
            ) -> tuple[dict[str, float], float, tuple[float, float], object]:
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
    c = run["workload"].get("max_concurrency")
    sends = bunch([r.sent_s * 1e3 for r in done], c) if c else 0.0
    return parts, lone, (co, sends), metrics([state])


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
        parts, lone, (co, sends), m = _traced(run, sim)
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
                 co_prompts=co, bunch=sends, budget=sim.scheduler.max_num_batched_tokens)


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
              + (f"{_e(r.wave_ttft_ms, r.m['mean_ttft_ms'])} / "
                 f"{_e(r.wave_tpot_ms, r.m['mean_tpot_ms'])} | " if r.concurrency else "- | ")
              + f"{_e(r.frontend_ttft_ms, r.m['mean_ttft_ms'])} | "
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


def bunch(sends_ms: list[float], concurrency: int) -> float:
    """How bunched a closed loop's replacements are: over the sends after the first
    `concurrency` (the start-up burst), the mean size of the cluster each belongs to, a cluster
    being sends each within SEND_GAP_MS of the one before (1: every replacement alone; C: every
    turn's replacements at once)."""
    order = sorted(sends_ms)[concurrency:]
    sizes: list[int] = []
    for k, t in enumerate(order):
        if k and t - order[k - 1] <= SEND_GAP_MS:
            sizes[-1] += 1
        else:
            sizes.append(1)
    return sum(n * n for n in sizes) / len(order) if order else 0.0


def summary(d: dict, concurrency: int) -> dict[str, object]:  # type: ignore[type-arg]
    """One saved `vllm bench serve` result (its start_times, ttfts, itls in s) of a closed loop
    at `concurrency`, summarised as STALLS holds it (`extract`)."""
    ttft = [x * 1e3 for x in d["ttfts"]]
    t0 = min(d["start_times"])
    starts = [(x - t0) * 1e3 for x in d["start_times"]]
    gaps: dict[float, float] = {}  # a gap's start (ms after the first send) -> its length (ms)
    for i, first in enumerate(ttft):
        wall = starts[i] + first
        for g in d["itls"][i]:
            if g * 1e3 > STALL_MS:
                at = round(wall, 1)
                gaps[at] = max(gaps.get(at, 0.0), g * 1e3)
            wall += g * 1e3
    stalls: list[tuple[float, float]] = []
    for at in sorted(gaps):
        if stalls and at - stalls[-1][0] <= 200:
            stalls[-1] = (stalls[-1][0], max(stalls[-1][1], gaps[at]))
        else:
            stalls.append((at, gaps[at]))
    med = statistics.median(ttft)
    hit = {i for i, x in enumerate(ttft) if x > max(STALL_MS, 3 * med)}
    return {"stalls_ms": [[round(a, 1), round(b, 1)] for a, b in stalls], "hit": len(hit),
            "bunch": round(bunch(starts, concurrency), 2),
            "mean_ttft_ms": round(statistics.mean(ttft), 2), "median_ttft_ms": round(med, 2),
            "mean_ttft_without_hit_ms": round(statistics.mean(
                [x for i, x in enumerate(ttft) if i not in hit]), 2)}


def extract(clone: str) -> None:
    """STALLS from a local clone of llm-benchmaq (at BENCHMAQ): per prospective63 run, its saved
    `vllm bench serve --save-result` JSON (the run's URL, .json for .txt): the engine-wide
    stalls (inter-token gaps > STALL_MS of the requests in flight, one stall per cluster of
    gap starts within 0.2 s), their lengths, the requests whose TTFT exceeds max(STALL_MS, 3 x
    the median) and the mean TTFT without them."""
    out: dict[str, dict[str, object]] = {}
    for run in load(tf.DATA / "prospective63.json")["runs"]:
        path = run["url"].split("/blob/")[1].split("/", 1)[1].rsplit(".", 1)[0] + ".json"
        out[run["id"]] = summary(json.loads(subprocess.run(
            ["git", "-C", clone, "show", f"{BENCHMAQ}:{path}"],
            capture_output=True, check=True).stdout), run["workload"]["max_concurrency"])
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


def bunch_lines(rows: list[Split]) -> None:
    """Per run: the measured replacements' bunch (STALLS) against kvplan's replay's, with the
    TTFT error: kvplan's loop bunched where the served one is not, or the other way."""
    doc = json.loads(STALLS.read_text())["runs"]
    print("\n| run | C | bunch measured / kvplan | TTFT err |")
    print("|---|---:|---:|---:|")
    for r in rows:
        if r.refused or r.run["id"] not in doc:
            continue
        print(f"| {r.run['id']} | {r.concurrency} | {doc[r.run['id']]['bunch']:.1f} / "
              f"{r.bunch:.1f} | {_e(r.ttft_mean_ms, r.m['mean_ttft_ms'])} |")


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


def run_class(r: Split) -> str:
    """The class a run falls in (what its figures point to; FINDING): gpt-oss-120b (the MXFP4
    MoE), else by prompt length and load."""
    w = r.run["workload"]
    if "gpt-oss" in r.run["id"]:
        return "gpt-oss-120b"
    if r.concurrency is None:
        return "all at once (rate inf)"
    long = w["input_len"] >= 2047
    if r.concurrency >= 100:
        return f"C >= 100, {'>= 2,048' if long else '<= 1,024'} tokens"
    if long:
        return "C <= 50, >= 2,048 tokens"
    fast = any(m in r.run["id"] for m in ("Qwen3-8B", "Qwen3-14B"))
    return f"C <= 50, <= 1,024 tokens, {'Qwen3-8B / 14B' if fast else 'Llama-70B / Qwen3-32B'}"


def class_lines(rows: list[Split]) -> None:
    """Per class: runs, the median signed error of mean TTFT / TPOT / E2E, the median ratio of
    kvplan's TTFT ratio to its TPOT ratio (near 1: the whole timeline scaled, the step; below
    1: TTFT's own miss) and of the one-wave bound's TTFT error."""
    groups: dict[str, list[Split]] = defaultdict(list)
    for r in rows:
        if not r.refused:
            groups[run_class(r)].append(r)
    print("\n| class | runs | TTFT err | TPOT err | E2E err | TTFT ratio / TPOT ratio | "
          "one-wave TTFT err |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, mine in sorted(groups.items()):
        def med(f: Callable[[Split], float | None], mine: list[Split] = mine) -> float:
            vals = [v for v in map(f, mine) if v is not None]
            return statistics.median(vals) if vals else float("nan")
        ttft = med(lambda r: r.ttft_mean_ms / r.m["mean_ttft_ms"] - 1)
        tpot = med(lambda r: r.tpot_mean_ms / r.m["mean_tpot_ms"] - 1)
        e2e = med(lambda r: r.e2e_mean_ms / r.m["mean_e2e_ms"] - 1 if r.m.get("mean_e2e_ms")
                  else None)
        scaled = med(lambda r: (r.ttft_mean_ms / r.m["mean_ttft_ms"])
                     / (r.tpot_mean_ms / r.m["mean_tpot_ms"]))
        wave = med(lambda r: r.wave_ttft_ms / r.m["mean_ttft_ms"] - 1 if r.concurrency
                   else None)
        print(f"| {name} | {len(mine)} | {ttft:+.1%} | {tpot:+.1%} | {e2e:+.1%} | "
              f"{scaled:.2f} | {wave:+.1%} |")


def main(argv: list[str]) -> None:
    if argv[:1] == ["extract"]:
        extract(argv[1])
        return
    for name in argv or [SETS[0]]:
        rows = set_splits(name)
        print(f"\n## {name}\n")
        print_runs(rows)
        print_load(rows)
        class_lines(rows)
        if name == SETS[0]:
            bunch_lines(rows)
            stall_lines()
            latency_lines()


if __name__ == "__main__":
    main(sys.argv[1:])
