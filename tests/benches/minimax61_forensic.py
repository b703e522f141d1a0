"""Why kvplan's TTFT is 39-67 % short on Wentao274's MiniMax-M2.5 runs at concurrency 64 and
within ~12 % at 128 (vLLM 0.20.0, 8 x H100, TP 8 + EP; prospective58 and prospective61's
test_05 rows, replayed exactly as tests.benches.prospective_runs.run_one replays them). A
forensic: nothing here changes a rule; every figure is computed from the frozen data and the
simulator's own functions.

What vLLM 0.20.0 does (the PyPI sdist, vllm-0.20.0/vllm/...):
- the client (benchmarks/serve.py:789-798): every request a task behind
  asyncio.Semaphore(max_concurrency), request_rate inf, so the first `c` are sent at t = 0 and
  each later one when one finishes; the TTFT clock starts inside the semaphore
  (benchmarks/lib/endpoint_request_func.py:325) and stops at the first SSE chunk with `choices`
  (:351-356, the role-only chunk included): kvplan's closed loop is this loop;
- the scheduler (config/scheduler.py:70, :74, :80): max_num_partial_prefills 1,
  long_prefill_token_threshold 0: no per-prompt cap, prompts take the token budget
  (8,192, stated) first come first served, as kvplan's scheduler does;
- TP 8 with --enable-expert-parallel and DP 1 launches no all-to-all
  (model_executor/layers/fused_moe/config.py:1008-1009 `use_all2all_kernels` needs
  dp_size > 1): the experts are split over the TP ranks and combined by the layer's
  all-reduce, as kvplan.engines.vllm.moe_ep prices it;
- CUDA graphs: the run's deploy record (testsuite_deploy.yaml, prospective58.json 'stated')
  sets --cudagraph-capture-sizes up to 512; vLLM's default would be min(2 x max_num_seqs,
  512) = 128 (config/vllm.py:1479-1483); kvplan pads to the default (its ungraphed price is
  opt-in, 0 by default), so this changes no default figure here;
- the server ran --reasoning-parser (minimax_m2) and --tool-call-parser minimax_m2: per
  streamed chunk the chat generator copies the request's token ids so far
  (entrypoints/openai/chat_completion/serving.py:805-806 `previous_token_ids + ...`) and the
  reasoning parser scans them for the end-of-thinking token
  (reasoning/minimax_m2_reasoning_parser.py:62 `end_token_id in previous_token_ids`): API
  server work per chunk that grows with the output so far (not priced by kvplan; a lead).

The sections (`main`): (1) TTFT from 64 to 128: at 128 a request waits for one of the 64 seats
(max_num_seqs 64), i.e. a whole service time, TTFT64 + (out - 1) x TPOT64 (`service_ms`), so
kvplan's TTFT error there is its TPOT error, not its prefill's; (2) each run's TTFT split
(tests.benches.ttft_forensic.replay); (3) the first steps of the c = 64 replays; (4) the
prefill's price as the running decodes saw it, measured (mean TPOT - median ITL, times the
output's steps, over the ~c prompts admitted in one request's life: `seen_prefill_ms`) against
kvplan's step cost of the same mixed step; (5) a counterfactual that makes concurrency 1 right
by adding a per-step and a per-token prefill price solved from two concurrency-1 rows (SHAPED by
them: not a rule) and what it does at 64 and 128.

Findings (run at branch minimax61 on merge b59ea9d6, no rule changed):
- (1) measured TTFT at 128 equals the measured service time at 64 within 0.2-4.3 % (128/128:
  2,200 vs 2,245 ms); kvplan's TTFT at 128 (-7.6 to +12.6 %) follows its TPOT at 64 (-3.4 to
  +20.9 %), whose decode-only step is slow (64 decodes 19.6 ms vs the measured median ITL
  15.96 ms at 128/128): kvplan is "right" at 128 by a slow decode hiding a short prefill;
- (2) at 64 kvplan's TTFT is 39-66 % queue (the rest of its wave's prompts ahead: 8,192
  tokens a step, 50 + 15 prompts at t = 0 for 128/128); measured - kvplan: 107, 102, 209,
  445, 437, 708 ms from 128/128 to 8192/1024;
- (4) the prefill the decodes saw: kvplan within 0.6-2.3 ms of the measured price for
  prompts up to 1,063 tokens, about half of it from 2,087 tokens on (10.9 vs 20.3, 22.4 vs
  46.1, 50.7 vs 120.2 ms) - the concurrency-1 slope again (264 - 87 ms over 9,216 tokens,
  19.2 us a token, kvplan's 9.3). A fixed price a prefill step is bounded by it: the 63
  prompts of a life add 38 ms (128/128) and 214 ms (512/256) to it in all, over at least
  1.3 and 4.2 budget-full steps (63 x prompt / 8,192), so at most 30 and 50 ms a step if the
  prompts clump to the budget, 0.6 and 3.4 ms if each rides its own step: concurrency 1's
  fixed ~60 ms (the c-1 rows' intercept) is mostly off the steps' path at 64 (a host or
  first-token stage, or a launch that async scheduling hides behind a busy GPU);
- (5) the shaped per-step + per-token premium that makes concurrency 1 exact brings 64 to
  -24 .. +38 % but TPOT to +14 .. +26 % and 128 to +12 .. +22 %: not the mechanism.

Run: python -m tests.benches.minimax61_forensic (about 4 CPU minutes; Markdown to stdout).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.metrics import metrics
from kvplan.analysis.simulate.run import SimSetup, _engine, setup
from kvplan.analysis.simulate.scheduler import SimRequest, StepCost
from kvplan.engines.base import Engine
from tests.benches.prospective_runs import REPO, load, requests
from tests.benches.ttft_forensic import PARTS, replay

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
SETS = ("prospective58", "prospective61")
CASES = ("128/128", "512/256", "1024/512", "2048/1024", "4096/2048", "8192/1024")
# The two concurrency-1 rows the counterfactual is solved from (one prefill step; two).
LONE = ("test_05 1024/512 chat conc 1 ", "test_01 10240/256 chat conc 1 ")


def runs() -> dict[tuple[str, int], tuple[str, dict[str, Any]]]:
    """(case, concurrency) -> (set, run): the test_05 rows at 1, 64 and 128 of both sets, and
    the concurrency-1 rows of LONE keyed (their label, 1)."""
    out: dict[tuple[str, int], tuple[str, dict[str, Any]]] = {}
    for name in SETS:
        for run in load(DATA / f"{name}.json")["runs"]:
            c = run["workload"]["max_concurrency"]
            case = run["id"].split(" test_05 ")[-1].split(" ")[0] if "test_05" in run["id"] else ""
            if case and c in (64, 128):
                out[(case, c)] = (name, run)
            for label in LONE:
                if label in run["id"]:
                    out[(label.strip(), 1)] = (name, run)
    return out


def sim_of(run: dict[str, Any]) -> SimSetup:
    """`run`'s simulation set-up, as run_one builds it (its baseline)."""
    spec = load_spec(str(REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine=Engine.vllm, engine_version=run["vllm"],
                             mem_fraction=run["gpu_memory_utilization"],
                             max_num_seqs=run["max_num_seqs"],
                             max_num_batched_tokens=run["max_num_batched_tokens"],
                             expert_parallel=run["expert_parallel"])
    sim, _ = setup(spec, inputs)
    return sim


class PrefillPremium:
    """A step cost plus `per_step_s` and `per_token_s` x prompt tokens on every step holding
    a prompt chunk (the counterfactual of section 5; no decode-only step changes)."""

    def __init__(self, inner: StepCost, per_step_s: float, per_token_s: float) -> None:
        self.inner, self.per_step_s, self.per_token_s = inner, per_step_s, per_token_s

    @property
    def full_attention_only(self) -> bool:
        return False  # the exact per-request path: every step through `seconds`

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        tokens = sum(n for _, n in chunks)
        extra = self.per_step_s + self.per_token_s * tokens if tokens else 0.0
        return self.inner.seconds(decode_contexts=decode_contexts, chunks=chunks) + extra


Step = tuple[float, float, int, int, int]  # start, seconds, prompts, prompt tokens, decodes


def simulate(run: dict[str, Any], premium: tuple[float, float] | None = None
             ) -> tuple[dict[str, float], list[Step]]:
    """`run` replayed step by step (no bulk decode): its mean TTFT / TPOT (ms) and its steps."""
    sim = sim_of(run)
    engine = _engine(sim, sim.pool_blocks or sim.plan.num_blocks, timeline=False,
                     bulk_decode=False)
    if premium is not None:
        engine.step_cost = PrefillPremium(engine.step_cost, *premium)  # type: ignore[assignment]
    steps: list[Step] = []
    inner = engine._finish_step

    def traced(scheduled: list[tuple[SimRequest, int]], start: float, seconds: float,
               *rest: float | None) -> int:
        chunks = [n for r, n in scheduled if r.num_output == 0 and r.num_computed < r.num_tokens]
        steps.append((start, seconds, len(chunks), sum(chunks), len(scheduled) - len(chunks)))
        return inner(scheduled, start, seconds, *rest)

    engine._finish_step = traced  # type: ignore[method-assign]
    state = engine.run(requests(run), concurrency=run["workload"]["max_concurrency"])
    m = metrics([state])
    return {"ttft": float(m.ttft_ms["mean"] or 0.0), "tpot": float(m.tpot_ms["mean"] or 0.0)}, steps


def service_ms(ttft_ms: float, tpot_ms: float, out: int) -> float:
    """One request's time in a seat: its TTFT and its other out - 1 tokens."""
    return ttft_ms + (out - 1) * tpot_ms


def lengths(run: dict[str, Any]) -> tuple[int, int]:
    """(prompt tokens with the chat template, output tokens)."""
    w = run["workload"]
    return w["input_len"] + run["chat_template_tokens"], w["output_len"]


def seen_prefill_ms(run: dict[str, Any]) -> float:
    """The measured time one prompt's prefill added to the running decodes: (mean TPOT -
    median ITL, the decode-only step) x (out - 1), over the c - 1 prompts admitted during one
    request's life in a closed loop whose c seats each turn over once a life."""
    m, c = run["measured"], run["workload"]["max_concurrency"]
    _, out = lengths(run)
    return (m["mean_tpot_ms"] - m["median_itl_ms"]) * (out - 1) / (c - 1)


def kvplan_prefill_ms(run: dict[str, Any]) -> float:
    """kvplan's counterpart: a step of c - 1 decodes (at the mean context of a life) and the
    whole prompt as one chunk, less the step of c decodes."""
    cost = sim_of(run).cost
    prompt, out = lengths(run)
    c = run["workload"]["max_concurrency"]
    ctx = prompt + out // 2
    mixed = cost.seconds(decode_contexts=[ctx] * (c - 1), chunks=[(0, prompt)])
    return (mixed - cost.seconds(decode_contexts=[ctx] * c, chunks=[])) * 1e3


def premium_from_lone(rows: dict[tuple[str, int], tuple[str, dict[str, Any]]]
                      ) -> tuple[float, float]:
    """(per prefill step s, per prompt token s) that make LONE's two rows' mean TTFT exact:
    the first prefills in one step, the second in ceil(prompt / budget) steps."""
    gaps, shape = [], []
    for label in LONE:
        run = rows[(label.strip(), 1)][1]
        mine, _ = simulate(run)
        prompt, _ = lengths(run)
        steps = -(-prompt // run["max_num_batched_tokens"])
        gaps.append((run["measured"]["mean_ttft_ms"] - mine["ttft"]) / 1e3)
        shape.append((steps, prompt))
    (s1, t1), (s2, t2) = shape
    per_token = (gaps[1] - gaps[0] * s2 / s1) / (t2 - t1 * s2 / s1)
    return (gaps[0] - per_token * t1) / s1, per_token


def main() -> None:
    rows = runs()
    print("## 1. TTFT from concurrency 64 to 128 (ms; service = TTFT64 + (out - 1) x TPOT64)\n")
    print("| case | measured TTFT 64 / 128 | measured service | kvplan TTFT 64 / 128 | kvplan "
          "service | kvplan TPOT 64 error | TTFT 128 error |")
    print("|---|---|---|---|---|---|---|")
    sims = {key: simulate(run)[0] for key, (_, run) in rows.items() if key[1] != 1}
    for case in CASES:
        r64, r128 = rows[(case, 64)][1], rows[(case, 128)][1]
        m64, m128 = r64["measured"], r128["measured"]
        s64, s128 = sims[(case, 64)], sims[(case, 128)]
        _, out = lengths(r64)
        print(f"| {case} | {m64['mean_ttft_ms']:.0f} / {m128['mean_ttft_ms']:.0f} | "
              f"{service_ms(m64['mean_ttft_ms'], m64['mean_tpot_ms'], out):.0f} | "
              f"{s64['ttft']:.0f} / {s128['ttft']:.0f} | "
              f"{service_ms(s64['ttft'], s64['tpot'], out):.0f} | "
              f"{s64['tpot'] / m64['mean_tpot_ms'] - 1:+.1%} | "
              f"{s128['ttft'] / m128['mean_ttft_ms'] - 1:+.1%} |")
    print("\n## 2. TTFT split (ms, means; tests.benches.ttft_forensic)\n")
    print("| run | measured | kvplan | " + " | ".join(PARTS) + " |")
    print("|---|---|---|" + "---|" * len(PARTS))
    for case in CASES:
        for c in (64, 128):
            name, run = rows[(case, c)]
            row = replay(name, run)
            print(f"| {case} c {c} | {run['measured']['mean_ttft_ms']:.0f} | "
                  f"{row.ttft_mean_ms:.0f} | "
                  + " | ".join(f"{row.parts_ms[p]:.0f}" for p in PARTS) + " |")
    print("\n## 3. The first steps at concurrency 64 (start ms, ms, prompts, prompt tokens, "
          "decodes)\n")
    for case in ("128/128", "1024/512"):
        _, steps = simulate(rows[(case, 64)][1])
        prefill = [s for s in steps if s[2]]
        print(f"- {case}: first 4 steps " + "; ".join(
            f"{t * 1e3:.0f} +{d * 1e3:.1f} {k} {n} {dec}" for t, d, k, n, dec in steps[:4])
            + f"; {len(prefill)} of {len(steps)} steps hold a prompt, median prompts a "
            f"prefill step {statistics.median(s[2] for s in prefill):.0f}")
    print("\n## 4. One prompt's prefill as the running decodes saw it (ms)\n")
    print("| case | measured (TPOT - median ITL) | kvplan mixed - decode step |")
    print("|---|---|---|")
    for case in CASES:
        run = rows[(case, 64)][1]
        print(f"| {case} | {seen_prefill_ms(run):.1f} | {kvplan_prefill_ms(run):.1f} |")
    per_step, per_token = premium_from_lone(rows)
    print(f"\n## 5. Counterfactual (SHAPED by {' and '.join(x.strip() for x in LONE)}): "
          f"+{per_step * 1e3:.1f} ms a prefill step, +{per_token * 1e6:.2f} us a prompt "
          "token\n")
    print("| run | TTFT error before -> after | TPOT error before -> after |")
    print("|---|---|---|")
    for key, (_, run) in rows.items():
        m = run["measured"]
        before = sims.get(key) or simulate(run)[0]
        after, _ = simulate(run, (per_step, per_token))
        print(f"| {key[0]} c {key[1]} | {before['ttft'] / m['mean_ttft_ms'] - 1:+.1%} -> "
              f"{after['ttft'] / m['mean_ttft_ms'] - 1:+.1%} | "
              f"{before['tpot'] / m['mean_tpot_ms'] - 1:+.1%} -> "
              f"{after['tpot'] / m['mean_tpot_ms'] - 1:+.1%} |")


if __name__ == "__main__":
    main()
