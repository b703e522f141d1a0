"""Why kvplan's TTFT is low on the prospective sets (issue 30): a forensic, run by run.

Every run of the prospective sets (tests/benches/prospective*_runs.py, all replayed by
tests.benches.prospective_runs.run_one) simulated again exactly as run_one simulates it (the same
`estimate` inputs, `setup` and requests), with the simulated engine's step hook wrapped so that
each request's TTFT splits into what kvplan charges for it:

- `host`: sent -> the engine core can see it (the API server's tokenizer batcher, vLLM 0.11 -
  0.23's 2 ms wait; with --frontend the server's serial stage too);
- `queue`: seen -> the start of the first step that schedules a chunk of its prompt (waiting for
  a seat: max_num_seqs, the token budget, the KV pool, FCFS behind earlier prompts; and for the
  step in flight, one more under async scheduling);
- `own`: its prompt chunks priced alone (the step cost of a step holding only that chunk);
- `behind`: the rest of the steps its chunks ran in (the other requests' decodes and chunks
  sharing those steps);
- `rest`: TTFT less the four (steps between its chunks that did not schedule it, and the
  --api-output stage's delivery of its first token).

Nothing here changes a rule: the counterfactuals (`COUNTERFACTUALS`) re-run the same replay with
`setup`'s existing opt-in stages (--frontend, --api-output, --no-engine-core-cpu), the experts'
fitted fractions (moefit58's opt-in `Efficiency.moe_gemm` / `fp8_moe_gemm`, fitted on kernel
tables: no serving row), and one bench-only price, vLLM's steps above its largest CUDA graph
launched eagerly (`AboveGraphs`, an upper bound), and print each set's medians before -> after
over the same runs, and each run's errors.

Measured TTFT, as the clients define it (vLLM 0.11.0 vllm/benchmarks/lib/
endpoint_request_func.py:154 `st = time.perf_counter()` just before `session.post`, :189-194 the
first SSE chunk with `choices` on /v1/completions; :287, :311-319 the first chunk with `choices`
on /v1/chat/completions, the role-only chunk included): from the request's send to its first
streamed chunk, so it holds the HTTP round trip, the server's parsing, templating and
tokenizing, the engine core's hops and the first token's output path besides the engine's steps.

Measured at branch ttftwhy59 (e51fee0a; no rule changed; 138 of 157 runs simulated, 19 refused
as before). By regime, median mean-TTFT error (kvplan / measured - 1) and the median of kvplan's
TTFT ratio over its TPOT ratio (near 1: the whole timeline scaled, a step-time miss TTFT
inherits; well below 1: TTFT's own miss): all at once (rate inf, 36 runs) -67.2 %, 0.87, kvplan's
TTFT 98 % queue; closed loop C > 1 (88) -48.3 %, 0.59; concurrency 1 (11) -61.9 % (the median
TTFT's -29.5 %: SGLang's 10-prompt runs hold one cold request), 0.42, kvplan's TTFT 100 % its own
prefill; Poisson (3, Qwen3-0.6B) -79.4 %, 0.21 (31 ms a request missing at 16 req/s). vLLM's 114
runs -59.1 % (0.59), SGLang's 24 -8.0 % (0.87); MoE (102) -65.1 %, dense (36) -41.0 %. vLLM at
concurrency 1, TPOT within -7 .. +17 %: GLM-4.6 (998 prompt tokens) 3.82x measured / kvplan,
MiniMax-M2.5 EP8 at 1,063 / 10,279 / 70,039 / 194,599 tokens 3.25 / 2.62 / 1.80 / 1.41x. The
counterfactual `AboveGraphs` (its code committed at 78c7e673 before the all-set run; the
hypothesis read in vLLM's code after prospective54's GLM-4.6 and prospective58's concurrency-1
rows: those two sets shaped it) moves the median |error| of mean TTFT / mean TPOT: 30 79.4 ->
46.4 / 48.3 -> 57.3 %, 31 68.8 -> 56.8 / 62.8 -> 47.4, 53 45.7 -> 25.3 / 45.2 -> 19.4, 53b 82.7
-> 18.8 / 43.5 -> 13.4, 56 39.8 -> 17.1 / 7.4 -> 13.8, 57 72.0 -> 38.8 / 23.1 -> 16.7 (held out);
54 55.4 -> 6.9 / 16.5 -> 9.0, 58 54.4 -> 15.7 / 14.2 -> 13.1 (shaped). TPOT worse on 30 and 56,
short prompts overshot (58 test_05 +14 .. +66 %): an upper bound, not a default. The price
read from vLLM's compiled code (kvplan.perf.vllm_ungraphed, opt-in `Efficiency.
ungraphed_launch_s`, frozen at e1abab3f before this run: the same kernels, 4.4 us a launch, not
70) moves them little: 30 79.4 -> 75.6 / 48.3 -> 48.0 %, 31 68.8 -> 68.0 / 62.8 -> 61.9, 53 45.7
-> 45.7 / 45.2 -> 43.5, 53b 82.7 -> 82.7, 56 39.8 -> 38.3 / 7.4 -> 7.9, 57 72.0 -> 69.6 / 23.1 ->
21.9, 54 55.4 -> 52.4, 58 54.4 -> 49.7 / 14.2 -> 14.2; it worsens sim_to_real's ITL and E2E
(kvplan.perf.vllm_ungraphed has the numbers): opt-in.

Run: python -m tests.benches.ttft_forensic [SET ...] [--cf=NAME ...] (prints Markdown tables to
stdout; SET: a set's name as in SETS, default all; NAME: a key of COUNTERFACTUALS, default all).
All sets and counterfactuals: about 25 CPU minutes.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kvplan import load_spec
from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.metrics import metrics
from kvplan.analysis.simulate.run import SimSetup, _engine, setup
from kvplan.analysis.simulate.scheduler import SimRequest, Simulator, StepCost
from kvplan.engines.base import Engine
from kvplan.engines.vllm.frontend import (
    VLLM_API_SERVER_COST,
    VLLM_PROMPT_HOST_COST,
    VLLM_PROMPT_HOST_S_PER_TOKEN,
    ApiServerCost,
)
from kvplan.perf.vllm_ungraphed import VLLM_UNGRAPHED_LAUNCH_S
from tests.benches.moe_gemm_bench import moe_fitted
from tests.benches.prospective_runs import REPO, load, requests, split_of
from tests.benches.row_sampling import row_sampling

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
# The prospective sets, in the page's order.
SETS = ("prospective30", "prospective31", "prospective52", "prospective53", "prospective53b",
        "prospective54", "prospective56", "prospective57", "prospective58")
PARTS = ("host", "queue", "own", "behind", "rest")
# The prompt length of --frontend's two fit rows (kvplan.engines.vllm.frontend: 512-token
# prompts, whose tokenizing its fitted per-request time holds).
FRONTEND_FIT_PROMPT_TOKENS = 512


@dataclass(frozen=True, kw_only=True)
class Options:
    """The opt-in stages of `setup` a replay runs with (all None / False: run_one's baseline)."""

    frontend: bool = False
    api_output: bool = False
    engine_core_cpu: bool | None = None
    # The routed experts' fitted compute fractions on every CUDA preset (opt-in since moefit58:
    # tests.benches.moe_gemm_bench.moe_fitted; fitted on kernel tables, no serving row).
    moe_gemm: bool = False
    # vLLM's steps above its largest CUDA graph charged the eager launch time (AboveGraphs).
    vllm_prefill_launch: bool = False
    # vLLM's steps above its largest CUDA graph charged kvplan's rule for them, opt-in
    # (kvplan.perf.vllm_ungraphed: the compiled model's kernels x VLLM_UNGRAPHED_LAUNCH_S).
    vllm_ungraphed: bool = False
    # The prompt's host work per token, measured (kvplan.engines.vllm.frontend.
    # VLLM_PROMPT_HOST_COST): alone, or as the per-token term of --frontend's stage.
    prompt_host: bool = False
    # The experts' fraction by rows per expert (moeshape59's opt-in Efficiency.moe_gemm_shape).
    moe_gemm_shape: bool = False

    @property
    def vllm_only(self) -> bool:
        """Whether a stage here is vLLM's alone (refused for another engine)."""
        return (self.frontend or self.api_output or self.engine_core_cpu is not None
                or self.vllm_prefill_launch or self.vllm_ungraphed or self.prompt_host)

    @property
    def moe_only(self) -> bool:
        """Whether only the experts' fractions change (a dense run keeps its baseline)."""
        return (self.moe_gemm or self.moe_gemm_shape) and not self.vllm_only


@contextmanager
def eager_launch() -> Iterator[None]:
    """Every vLLM step cost built inside it priced with the eager launch time, as kvplan prices
    steps under --enforce-eager (kvplan.perf.engine_traits.engine_efficiency: each op of
    SGLang's model code, which stands in for vLLM's, x the 70 us PREFILL_LAUNCH_FIT, added to
    a step holding a prompt chunk)."""
    from kvplan.analysis.simulate import engine_setups as run  # the step costs are built there

    inner = run.engine_efficiency

    def eager(engine: str, *args: Any, **kwargs: Any) -> Any:
        if engine == Engine.vllm.value:
            kwargs["enforce_eager"] = True
        return inner(engine, *args, **kwargs)

    run.engine_efficiency = eager  # type: ignore[assignment]
    try:
        yield
    finally:
        run.engine_efficiency = inner


@contextmanager
def ungraphed_launch(price: float = VLLM_UNGRAPHED_LAUNCH_S) -> Iterator[None]:
    """Every vLLM step cost built inside it with kvplan's opt-in price of a step above the
    largest CUDA graph (`Efficiency.ungraphed_launch_s`; kvplan.perf.vllm_ungraphed)."""
    from kvplan.analysis.simulate import engine_setups as run  # the step costs are built there

    inner = run.engine_efficiency

    def priced(engine: str, *args: Any, **kwargs: Any) -> Any:
        eff = inner(engine, *args, **kwargs)
        return replace(eff, ungraphed_launch_s=price) if engine == Engine.vllm.value else eff

    run.engine_efficiency = priced  # type: ignore[assignment]
    try:
        yield
    finally:
        run.engine_efficiency = inner


@dataclass(frozen=True, kw_only=True)
class AboveGraphs:
    """A vLLM step of more tokens than its largest CUDA graph priced `eager`, else `graphed`.
    vLLM replays a step of up to max_cudagraph_capture_size tokens (default min(2 x
    max_num_seqs, 512)) from its graphs; a larger one, any step with a prompt chunk above that
    size, runs the torch.compile'd model with no graph (vLLM 0.15.1
    vllm/v1/cudagraph_dispatcher.py:207-211 `dispatch`: num_tokens > max_cudagraph_capture_size
    -> CUDAGraphMode.NONE), its kernels launched from Python, which kvplan charges 0
    (engine_efficiency's docstring: "not measured here"). Inductor fuses elementwise ops that
    SGLang's eager count holds, so `eager` is an upper bound, not a price."""

    graphed: StepCost
    eager: StepCost
    max_graph_tokens: int

    @property
    def full_attention_only(self) -> bool:
        return self.graphed.full_attention_only

    def _pick(self, tokens: int) -> StepCost:
        return self.eager if tokens > self.max_graph_tokens else self.graphed

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        tokens = len(decode_contexts) + sum(n for _, n in chunks)
        return self._pick(tokens).seconds(decode_contexts=decode_contexts, chunks=chunks)

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        tokens = decodes + sum(n for _, n in chunks)
        return self._pick(tokens).seconds_from_sums(decodes, decode_keys, chunks)


# The counterfactuals: existing opt-in stages and fractions, alone and the two that act on
# separate parts of the split together (the API server's per request, the MoE prefill's price),
# and vLLM's ungraphed steps' launch (an upper bound).
COUNTERFACTUALS: dict[str, Options] = {
    "--frontend": Options(frontend=True),
    "--api-output": Options(api_output=True),
    "--no-engine-core-cpu": Options(engine_core_cpu=False),
    "moe_gemm fitted": Options(moe_gemm=True),
    "--frontend + moe_gemm fitted": Options(frontend=True, moe_gemm=True),
    "vLLM steps above the graphs launched eagerly (upper bound)": Options(
        vllm_prefill_launch=True),
    "vLLM steps above the graphs, compiled kernels x 4.4 us (opt-in rule)": Options(
        vllm_ungraphed=True),
    # lonepf60 (tests/benches/lone_prefill.py): the prompt's host work per token, measured.
    "prompt host work per token (measured)": Options(prompt_host=True),
    "--frontend with the measured per-token term": Options(frontend=True, prompt_host=True),
    "moe_gemm by rows per expert": Options(moe_gemm_shape=True),
    "prompt host per token + moe_gemm fitted": Options(prompt_host=True, moe_gemm=True),
}


def prompt_host_stage(frontend: bool) -> ApiServerCost:
    """The API server's stage with the measured per-prompt-token term: alone, or with
    --frontend's fitted constants, whose per-request time held a 512-token prompt's tokenizing
    (VLLM_API_SERVER_COST's fit rows), less that prompt's measured term."""
    if not frontend:
        return VLLM_PROMPT_HOST_COST
    fit = VLLM_API_SERVER_COST
    return replace(fit, s_per_request=fit.s_per_request - FRONTEND_FIT_PROMPT_TOKENS
                   * VLLM_PROMPT_HOST_S_PER_TOKEN, s_per_prompt_token=VLLM_PROMPT_HOST_S_PER_TOKEN,
                   source=VLLM_PROMPT_HOST_COST.source)


@dataclass(kw_only=True)
class Trace:
    """Per request (by id): the first step scheduling its prompt, and its prefill steps' time
    priced alone and in full."""

    first_start: dict[int, float] = field(default_factory=dict)
    own: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    steps: dict[int, float] = field(default_factory=lambda: defaultdict(float))

    def watch(self, engine: Simulator) -> None:
        """Wrap `engine`'s step hook (Simulator._finish_step: every step's non-batched
        requests, before they advance) on this instance only."""
        inner, cost = engine._finish_step, engine.step_cost

        def finish_step(scheduled: list[tuple[SimRequest, int]], start: float,
                        seconds: float, *rest: float | None) -> int:
            for req, n in scheduled:
                if req.num_output == 0 and req.num_computed < req.num_tokens:
                    self.first_start.setdefault(req.rid, start)
                    self.own[req.rid] += cost.seconds(decode_contexts=[],
                                                      chunks=[(req.num_computed, n)])
                    self.steps[req.rid] += seconds
            return inner(scheduled, start, seconds, *rest)

        engine._finish_step = finish_step  # type: ignore[method-assign]

    def parts(self, r: SimRequest) -> dict[str, float]:
        """`r`'s TTFT split (seconds), PARTS' order; they sum to its TTFT."""
        start = self.first_start[r.rid]
        host, queue = r.seen_s - r.sent_s, start - r.seen_s
        own, steps = self.own[r.rid], self.steps[r.rid]
        rest = (r.first_token_s - r.sent_s) - host - queue - steps
        return {"host": host, "queue": queue, "own": own, "behind": steps - own, "rest": rest}


@dataclass(frozen=True, kw_only=True)
class Row:
    """One run: its settings, the measured TTFT and TPOT, kvplan's, and the split (means, ms)."""

    set_name: str
    run: dict  # type: ignore[type-arg]
    dense: bool
    async_scheduling: bool
    ttft_mean_ms: float
    ttft_p50_ms: float
    tpot_mean_ms: float
    parts_ms: dict[str, float]
    refused: str = ""

    @property
    def measured(self) -> dict[str, float]:
        return self.run["measured"]  # type: ignore[no-any-return]

    @property
    def ttft_err(self) -> float:
        return self.ttft_mean_ms / self.measured["mean_ttft_ms"] - 1

    @property
    def ttft_p50_err(self) -> float:
        return self.ttft_p50_ms / self.measured["median_ttft_ms"] - 1

    @property
    def beyond_tpot(self) -> float:
        """kvplan's mean-TTFT ratio to the measured over its mean-TPOT ratio: below 1, TTFT is
        short by more than the step time is (a miss of TTFT's own); near 1, the whole timeline
        is scaled (a step-time miss that TTFT inherits)."""
        return (1 + self.ttft_err) / (1 + self.tpot_err)

    @property
    def tpot_err(self) -> float:
        return self.tpot_mean_ms / self.measured["mean_tpot_ms"] - 1

    @property
    def gap_ms(self) -> float:
        """Measured less simulated mean TTFT (positive: kvplan low)."""
        return self.measured["mean_ttft_ms"] - self.ttft_mean_ms


def engine_of(run: dict) -> Engine:  # type: ignore[type-arg]
    return Engine(run.get("engine", "vllm"))


def chat(run: dict) -> bool:  # type: ignore[type-arg]
    """The run went through /v1/chat/completions: its totals hold a chat template's tokens, or
    its id says so (a template of 0 tokens is not told apart from /v1/completions)."""
    return bool(run["chat_template_tokens"]) or " chat " in run["id"]


def replay(set_name: str, run: dict, opts: Options = Options()) -> Row:  # type: ignore[type-arg]
    """`run` simulated as prospective_runs.run_one simulates it (its baseline: `opts` empty),
    with every request's TTFT split (Trace)."""
    spec = load_spec(str(REPO / run["model"]))
    engine = engine_of(run)
    dense = spec.moe is None
    sampling = row_sampling(run.get("sampling"))  # as run_one charges it (sampler63)
    try:
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"],
                                 tp=run["tp"], engine=engine, engine_version=run[engine.value],
                                 mem_fraction=run.get("gpu_memory_utilization"),
                                 max_num_seqs=run.get("max_num_seqs"),
                                 max_num_batched_tokens=run.get("max_num_batched_tokens"),
                                 expert_parallel=run.get("expert_parallel", False))
        with (moe_fitted() if opts.moe_gemm else nullcontext(),
              moe_fitted("shape") if opts.moe_gemm_shape else nullcontext(),
              ungraphed_launch() if opts.vllm_ungraphed else nullcontext()):
            sim, _ = setup(spec, inputs, frontend=opts.frontend, api_output=opts.api_output,
                           engine_core_cpu=opts.engine_core_cpu,
                           async_scheduling=run.get("async_scheduling"), sampling=sampling)
            if opts.prompt_host:
                sim = replace(sim, scheduler=replace(
                    sim.scheduler, api_server=prompt_host_stage(opts.frontend)))
            if opts.vllm_prefill_launch and sim.cost.graph_sizes:
                with eager_launch():
                    eager, _ = setup(spec, inputs, frontend=opts.frontend,
                                     api_output=opts.api_output,
                                     engine_core_cpu=opts.engine_core_cpu,
                                     async_scheduling=run.get("async_scheduling"),
                                     sampling=sampling)
                sim = replace(sim, cost=AboveGraphs(  # type: ignore[arg-type]
                    graphed=sim.cost, eager=eager.cost, max_graph_tokens=sim.cost.graph_sizes[-1]))
            return _traced(set_name, run, sim, dense)
    except KvplanError as exc:
        return Row(set_name=set_name, run=run, dense=dense, async_scheduling=False,
                   ttft_mean_ms=0.0, ttft_p50_ms=0.0, tpot_mean_ms=0.0, parts_ms={},
                   refused=str(exc).replace(f"{REPO}/", ""))


def _traced(set_name: str, run: dict, sim: SimSetup, dense: bool) -> Row:  # type: ignore[type-arg]
    """One replica (run_one's runs are all dp 1), as kvplan.analysis.simulate.run.simulate
    builds and runs it, its step hook traced."""
    assert sim.dp == 1 and sim.dp_balance is None
    engine = _engine(sim, sim.pool_blocks or sim.plan.num_blocks, timeline=False,
                     bulk_decode=True)
    trace = Trace()
    trace.watch(engine)
    state = engine.run(requests(run), concurrency=run["workload"].get("max_concurrency"))
    m = metrics([state])
    done = state.finished
    parts = {p: sum(trace.parts(r)[p] for r in done) / len(done) * 1e3 for p in PARTS}
    return Row(set_name=set_name, run=run, dense=dense,
               async_scheduling=sim.scheduler.async_scheduling,
               ttft_mean_ms=float(m.ttft_ms["mean"] or 0.0),
               ttft_p50_ms=float(m.ttft_ms["p50"] or 0.0),
               tpot_mean_ms=float(m.tpot_ms["mean"] or 0.0), parts_ms=parts)


def set_rows(set_name: str, opts: Options = Options()) -> list[Row]:
    """Every run of the set replayed with `opts`."""
    return [replay(set_name, run, opts) for run in load(DATA / f"{set_name}.json")["runs"]]


# -- the regimes ----------------------------------------------------------------------------

def load_kind(row: Row) -> str:
    """How the client sent the requests: one at a time, a closed loop of C, all at once, or at
    a Poisson rate."""
    w = row.run["workload"]
    c = w.get("max_concurrency")
    if c == 1:
        return "concurrency 1"
    if c is not None:
        return "closed loop, C > 1"
    return "all at once (rate inf)" if w["request_rate"] is None else "Poisson rate"


def prompt_tokens(run: dict) -> float:  # type: ignore[type-arg]
    """A prompt's mean tokens as sent: the measured input total over the prompts where the run
    printed it (SGLang's random lengths draw 1..input_len), else input_len plus the chat
    template's tokens."""
    w = run["workload"]
    total = run["measured"].get("total_input_tokens")
    return total / w["num_prompts"] if total else w["input_len"] + run["chat_template_tokens"]


def prompt_kind(row: Row) -> str:
    return "prompt <= 2,048" if prompt_tokens(row.run) <= 2048 else "prompt > 2,048"


REGIMES: dict[str, Callable[[Row], str]] = {
    "load": load_kind,
    "prompt": prompt_kind,
    "scheduling": lambda r: "async" if r.async_scheduling else "sync",
    "endpoint": lambda r: "chat" if chat(r.run) else "completions / generate",
    "model": lambda r: "dense" if r.dense else "MoE",
    "engine": lambda r: engine_of(r.run).value,
}


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def print_runs(rows: list[Row]) -> None:
    """The per-run table: settings, measured and kvplan's TTFT, the split."""
    print("| set | run | model | GPU x TP | engine | async | endpoint | in / out | load | "
          "prompts | rounds | measured TTFT mean / median ms | kvplan mean / median | err | "
          "median err | host | queue | own prefill | behind others | rest | TPOT err |")
    print("|---|---|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          "---:|---:|---:|")
    for r in rows:
        run, w = r.run, r.run["workload"]
        c = w.get("max_concurrency")
        load_ = (f"C {c}" if c else "rate inf" if w["request_rate"] is None
                 else f"{w['request_rate']:g} req/s")
        rounds = f"{w['num_prompts'] / c:.0f}" if c else "-"
        eng = f"{engine_of(run).value} {run[engine_of(run).value]}"
        head = (f"| {r.set_name} | {run['id']} | {'dense' if r.dense else 'MoE'} | "
                f"{run['gpu']} x {run['tp']} | {eng} | {'on' if r.async_scheduling else 'off'} | "
                f"{'chat' if chat(run) else 'completions'} | {w['input_len']:,} / "
                f"{w['output_len']:,} | {load_} | {w['num_prompts']:,} | {rounds} | "
                f"{r.measured['mean_ttft_ms']:,.1f} / {r.measured['median_ttft_ms']:,.1f} | ")
        if r.refused:
            print(f"{head}refused: {r.refused} | | | | | | | | | |")
            continue
        p = r.parts_ms
        print(f"{head}{r.ttft_mean_ms:,.1f} / {r.ttft_p50_ms:,.1f} | {r.ttft_err:+.1%} | "
              f"{r.ttft_p50_err:+.1%} | " + " | ".join(f"{p[k]:,.1f}" for k in PARTS)
              + f" | {r.tpot_err:+.1%} |")


def print_regimes(rows: list[Row]) -> None:
    """Which regimes carry the miss: per regime, the runs, the median signed and absolute mean
    TTFT error, the median gap (measured - kvplan, ms) and its share of kvplan's split."""
    done = [r for r in rows if not r.refused]
    print("\n| regime | runs | median TTFT err | median abs err | median TTFT-median err | "
          "median gap ms | median measured / kvplan | median TTFT ratio / TPOT ratio | "
          "kvplan's split, median share: host / queue / own / behind / rest |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, key in REGIMES.items():
        groups: dict[str, list[Row]] = defaultdict(list)
        for r in done:
            groups[key(r)].append(r)
        for label, mine in sorted(groups.items()):
            shares = " / ".join(
                f"{_median([r.parts_ms[p] / r.ttft_mean_ms for r in mine if r.ttft_mean_ms]):.0%}"
                for p in PARTS)
            print(f"| {name}: {label} | {len(mine)} | "
                  f"{_median([r.ttft_err for r in mine]):+.1%} | "
                  f"{_median([abs(r.ttft_err) for r in mine]):.1%} | "
                  f"{_median([r.ttft_p50_err for r in mine]):+.1%} | "
                  f"{_median([r.gap_ms for r in mine]):,.1f} | "
                  f"{_median([r.measured['mean_ttft_ms'] / r.ttft_mean_ms for r in mine]):.2f}x"
                  f" | {_median([r.beyond_tpot for r in mine]):.2f} | {shares} |")


def print_alone(rows: list[Row]) -> None:
    """Concurrency 1: the measured TTFT against kvplan's one prefill (no queue), by prompt."""
    lone = sorted((r for r in rows if not r.refused and load_kind(r) == "concurrency 1"),
                  key=lambda r: prompt_tokens(r.run))
    if not lone:
        return
    print("\n| concurrency 1 run | prompt tokens (mean) | measured TTFT mean / median ms | "
          "kvplan | gap ms (mean) | gap / prompt token us | kvplan own prefill | host | "
          "measured / kvplan (mean, median) | TPOT err |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in lone:
        tokens = prompt_tokens(r.run)
        print(f"| {r.set_name}: {r.run['id']} | {tokens:,.0f} | "
              f"{r.measured['mean_ttft_ms']:,.1f} / {r.measured['median_ttft_ms']:,.1f} | "
              f"{r.ttft_mean_ms:,.1f} | {r.gap_ms:,.1f} | {r.gap_ms / tokens * 1e3:,.2f} | "
              f"{r.parts_ms['own']:,.1f} | {r.parts_ms['host']:,.2f} | "
              f"{r.measured['mean_ttft_ms'] / r.ttft_mean_ms:.2f}x, "
              f"{r.measured['median_ttft_ms'] / r.ttft_p50_ms:.2f}x | {r.tpot_err:+.1%} |")


def set_medians(rows: list[Row]) -> tuple[float, float, int]:
    """Median |error| of mean TTFT and mean TPOT over the simulated runs, and their count."""
    done = [r for r in rows if not r.refused]
    return (_median([abs(r.ttft_err) for r in done]), _median([abs(r.tpot_err) for r in done]),
            len(done))


def _cf_runs(name: str, opts: Options) -> list[dict]:  # type: ignore[type-arg]
    """The set's runs a counterfactual moves: vLLM's for vLLM's stages, MoE models' for the
    experts' fractions."""
    runs = load(DATA / f"{name}.json")["runs"]
    if opts.vllm_only:
        runs = [run for run in runs if engine_of(run) is Engine.vllm]
    return runs


def counterfactual(name: str, opts: Options, base: list[Row]) -> list[Row]:
    """The set's runs `opts` applies to, replayed with it (a dense run under the experts'
    fractions alone: its baseline row, which they do not move)."""
    ids = {run["id"] for run in _cf_runs(name, opts)}
    return [r if opts.moe_only and r.dense
            else replay(name, r.run, opts) for r in base if r.run["id"] in ids]


def print_counterfactuals(base: dict[str, list[Row]],
                          alt: dict[str, dict[str, list[Row]]]) -> None:
    """Each counterfactual's set medians beside the baseline's over the same runs, and on
    prospective30 the --frontend fit's held-out runs alone (prospective_runs.split_of)."""
    print("\n| set | counterfactual | runs simulated | TTFT mean median abs err: baseline -> "
          "counterfactual | TPOT mean: baseline -> counterfactual |")
    print("|---|---|---:|---:|---:|")
    for set_name, rows in base.items():
        for cf, by_set in alt.items():
            moved = by_set.get(set_name, [])
            parts = [("", moved)]
            if set_name == "prospective30" and "frontend" in cf:
                parts.append((" (held out of its fit)",
                              [r for r in moved if split_of(r.run["id"]) == "held out"]))
            for label, mine in parts:
                ids = {r.run["id"] for r in mine if not r.refused}
                if not ids:
                    continue
                before = set_medians([r for r in rows if r.run["id"] in ids])
                after = set_medians([r for r in mine if r.run["id"] in ids])
                print(f"| {set_name}{label} | {cf} | {len(ids)} | {before[0]:.1%} -> "
                      f"{after[0]:.1%} | {before[1]:.1%} -> {after[1]:.1%} |")


def print_cf_runs(base: dict[str, list[Row]], alt: dict[str, dict[str, list[Row]]]) -> None:
    """Per run: the mean TTFT and mean TPOT errors, baseline and under each counterfactual."""
    print("\n| set | run | baseline TTFT / TPOT err | "
          + " | ".join(f"{cf}: TTFT / TPOT err" for cf in alt) + " |")
    print("|---|---|---:|" + "---:|" * len(alt))
    for set_name, rows in base.items():
        for r in rows:
            if r.refused:
                continue
            cells = []
            for by_set in alt.values():
                hit = [a for a in by_set.get(set_name, []) if a.run["id"] == r.run["id"]]
                cells.append(f"{hit[0].ttft_err:+.1%} / {hit[0].tpot_err:+.1%}"
                             if hit and not hit[0].refused else "-")
            print(f"| {set_name} | {r.run['id']} | {r.ttft_err:+.1%} / {r.tpot_err:+.1%} | "
                  + " | ".join(cells) + " |")


def main(argv: list[str]) -> None:
    """argv: set names (default all); `--cf=NAME` (repeatable): only these counterfactuals."""
    names = [a for a in argv if not a.startswith("--cf=")] or list(SETS)
    chosen = [a.removeprefix("--cf=") for a in argv if a.startswith("--cf=")]
    cfs = {k: v for k, v in COUNTERFACTUALS.items() if not chosen or k in chosen}
    base = {name: set_rows(name) for name in names}
    rows = [r for name in names for r in base[name]]
    print("## TTFT forensic: kvplan's TTFT split, run by run\n")
    print("Means over each run's requests, ms; err = kvplan / measured - 1 (mean TTFT); host, "
          "queue, own prefill, behind others and rest sum to kvplan's mean TTFT "
          "(tests/benches/ttft_forensic.py's docstring). rounds: prompts / concurrency.\n")
    print_runs(rows)
    print_regimes(rows)
    print_alone(rows)
    alt = {cf: {name: counterfactual(name, opts, base[name]) for name in names}
           for cf, opts in cfs.items()}
    print_counterfactuals(base, alt)
    print_cf_runs(base, alt)


if __name__ == "__main__":
    main(sys.argv[1:])
