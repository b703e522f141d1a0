"""inference-sim's sim-to-real accuracy study, replayed in `kvplan simulate` (issue 30).

The study (https://github.com/inference-sim/sim-to-real-accuracy-validation) served vLLM
v0.15.1 on H100s with inference-perf and compared BLIS, Vidur, LLM-Optimizer and
aiconfigurator with what the client measured, per load stage: mean / p90 / p99 TTFT and E2E
and mean ITL. Its per-request traces are not public; the workload *profiles* are, in the data
collection campaign (tests/data/sim_to_real/runs.json names each values.yaml). The runs kept
here are those whose profile could be matched to the study's run one to one (model, GPU,
workload, TP, max_num_batched_tokens, gpu_mem, no CPU offload): 11 runs, 19 load stages.

The workload, as the profile gives it and as BLIS (the study's own simulator) expands it:
inference-perf `load.type: constant` (one request every 1 / rate s, stage after stage), the
`shared_prefix` data (a system prompt of `system_prompt_len` tokens per group, shared by that
group's users, then a `question_len`-token question of the request's own), `output_len` tokens
out (`ignore_eos: true`). The profiles set `enable_multi_turn_chat: true`; BLIS ignores that
flag (each request stands alone, no context carried from a user's earlier rounds) and so does
this replay: kvplan has no record of what the client really sent after the first round.

Nothing is fitted to these runs: the step time is kvplan.perf.mixed_step over the cost
model's efficiencies (two fitted constants, fitted on other rows: tests/benches/fitted_rows.py),
so every row is held out. But they shaped one rule: their client TTFT sat about one decode step
above the simulated one, which led to simulating vLLM's async scheduling (SHAPED_BY, commit
6a963b5); the bench prints kvplan with it off too. The simulator's TTFT is the engine's
(arrival to first token out of the step): the client's adds the HTTP, tokenisation and
streaming path, which kvplan does not model.

Two more sets are kept apart: the prospective runs (Mixtral-8x7B, added after the last rule
change) and the blind runs (runs.json "blind_runs": Mixtral-8x22B TP8 and a Mixtral-8x7B TP2
re-run, frozen at commit 2279126 before kvplan was run on them, evaluated once, no rule changed
since); runs.json "blind_skipped" lists the study's other runs and why each is left out.
The offload runs (runs.json "offload_runs": the study's runs served with `--cpu-offload-gb 4`,
vLLM's weight offload) were frozen at commit 674ffd2 with how they are simulated (weights per
GPU less the offloaded GiB, so a KV budget larger by them; the step time without the flag),
before kvplan was run on them, and evaluated once. Their Mixtral stages' TTFT, 11-26 % low in
all three sets, led to reading vLLM 0.15.1's fused MoE (issue 30): its padded expert rows and
the activations between its kernels are charged since commit 3df5cf3 (kvplan.perf.moe_kernel),
and those stages are SHAPED_BY it.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kvplan import load_spec
from kvplan._util.units import GiB
from kvplan.analysis.inputs import EstimateInputs, estimate_inputs
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.metrics import metrics, summary_ms
from kvplan.analysis.simulate.run import replica_step_cost, setup
from kvplan.analysis.simulate.scheduler import SimRequest, Simulator
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.vllm.sampler import SamplingParams
from kvplan.model.spec import ModelSpec
from tests.benches import accelmark_runs, mixtral_ttft, tp_breakdown
from tests.benches.fitted_rows import SHAPED_BY
from tests.benches.row_sampling import row_sampling

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
REPO = Path(__file__).resolve().parents[2]

# The study's metric names (error_records.csv `metric_name`) and what kvplan reports for each.
METRICS = ("ttft_mean", "ttft_p90", "ttft_p99", "itl_mean", "e2e_mean", "e2e_p90", "e2e_p99")
# The simulators of the study, as its CSV names them.
OTHERS = ("blis-roofline", "blis-evolved", "blis-trained-physics", "vidur",
          "llm-optimizer-estimate", "aiconfigurator-estimate")


@dataclass(frozen=True, kw_only=True)
class Run:
    id: int
    folder: str
    model: str
    gpu: str
    tp: int
    vllm: str
    max_model_len: int
    max_num_batched_tokens: int
    max_num_seqs: int
    gpu_memory_utilization: float
    profile: str
    workload: dict  # type: ignore[type-arg]
    cpu_offload_gb: float = 0.0  # vLLM --cpu-offload-gb (the offload runs)
    # What the requests sampled with (tests.benches.row_sampling; runs.json sampling_amended)
    sampling: dict | None = None  # type: ignore[type-arg]

    @property
    def stages(self) -> list[tuple[float, int]]:
        return [(float(rate), int(seconds)) for rate, seconds in self.workload["stages"]]


def load_runs(*, prospective: bool = False, blind: bool = False, offload: bool = False
              ) -> tuple[dict, list[Run]]:  # type: ignore[type-arg]
    """The study's runs kept here; `prospective`: those added after the last rule change
    (runs.json "prospective_runs"); `blind`: the set frozen before kvplan's error on it was
    computed (runs.json "blind_runs", commit 2279126); `offload`: the runs served with
    --cpu-offload-gb, frozen likewise (runs.json "offload_runs", commit 674ffd2)."""
    doc = json.loads((DATA / "runs.json").read_text())
    key = ("offload_runs" if offload else "blind_runs" if blind
           else "prospective_runs" if prospective else "runs")
    return doc, [Run(**r) for r in doc[key]]


def load_records() -> dict[tuple[int, int, str], dict[str, float]]:
    """(run id, stage index, metric) -> {"measured": ..., simulator: predicted, ...};
    stage -1 is the whole run."""
    out: dict[tuple[int, int, str], dict[str, float]] = {}
    with (DATA / "error_records.csv").open() as f:
        for row in csv.DictReader(f):
            key = (int(row["exp_id"]), int(row["stage_index"]), row["metric_name"])
            cell = out.setdefault(key, {})
            cell["measured"] = float(row["actual"])
            cell[row["simulator"]] = float(row["predicted"])
    return out


def requests(run: Run) -> Iterator[RequestSpec]:
    """The profile's requests in arrival order (see the module's docstring)."""
    w = run.workload
    users = w["num_unique_system_prompts"] * w["num_users_per_system_prompt"]
    prompt = w["system_prompt_len"] + w["question_len"]
    start, i = 0.0, 0
    for rate, seconds in run.stages:
        for k in range(round(rate * seconds)):
            # inference-perf: request i goes to user i % users; a user's group is its system
            # prompt (users_per_group consecutive users per group).
            group = (i % users) // w["num_users_per_system_prompt"]
            yield RequestSpec(arrival_s=start + k / rate, prompt_len=prompt,
                              output_len=w["output_len"],
                              segments=((("system", group), w["system_prompt_len"]),))
            i += 1
        start += seconds


def _stage_figures(finished: list[SimRequest]) -> dict[str, float]:
    ttft = summary_ms([r.first_token_s - r.sent_s for r in finished])
    e2e = summary_ms([r.finish_s - r.sent_s for r in finished])
    tpot = summary_ms([(r.finish_s - r.first_token_s) / (r.output_len - 1) for r in finished])
    out = {"ttft_mean": ttft["mean"], "ttft_p90": ttft["p90"], "ttft_p99": ttft["p99"],
           "itl_mean": tpot["mean"], "e2e_mean": e2e["mean"], "e2e_p90": e2e["p90"],
           "e2e_p99": e2e["p99"]}
    return {k: float(v) for k, v in out.items() if v is not None}


@dataclass(frozen=True, kw_only=True)
class Simulated:
    stages: dict[int, dict[str, float]]  # stage index (-1: the whole run) -> metric -> ms
    preemptions: int
    prefix_hit_rate: float | None
    kv_usage_max: float
    jit_compiles: int = 0  # fused-MoE Triton compiles met (simulate --moe-jit-compile-ms)


def row_id(run: Run, stage: int) -> str:
    """A stage's bench row id (tests/benches/fitted_rows.py)."""
    return f"sim-to-real {run.folder}, stage {stage}"


def study_row_id(run: Run, stage: int) -> str:
    """A prospective, blind or offload stage's bench row id (by the study's run id: a blind
    run's campaign folder is a workload template another run already names)."""
    return f"sim-to-real study run {run.id}, stage {stage}"


def row_ids() -> list[str]:
    _, runs = load_runs()
    ids = [row_id(run, i) for run in runs for i in range(len(run.stages))]
    for kw in ({"prospective": True}, {"blind": True}, {"offload": True}):
        _, later = load_runs(**kw)
        ids += [study_row_id(run, i) for run in later for i in range(len(run.stages))]
    return ids


def run_inputs(run: Run) -> tuple[ModelSpec, EstimateInputs]:
    """The run's model and settings as `kvplan simulate` takes them."""
    model = str(REPO / run.model) if run.model.endswith(".json") else run.model
    spec = load_spec(model)
    inputs = estimate_inputs(spec, context=run.max_model_len, gpu=run.gpu,
                             tp=run.tp, engine_version=run.vllm,
                             mem_fraction=run.gpu_memory_utilization,
                             max_num_batched_tokens=run.max_num_batched_tokens,
                             max_num_seqs=run.max_num_seqs)
    if not run.cpu_offload_gb:
        return spec, inputs
    # --cpu-offload-gb (runs.json "offload", decided before the set was evaluated): vLLM 0.15.1
    # moves that many GiB of each GPU's layer weights to pinned host memory
    # (model_executor/models/utils.py maybe_offload_to_cpu, read in the 0.15.1 wheel), so the
    # weights it measures after loading, and with them the KV budget
    # (v1/worker/gpu_worker.py determine_available_memory), move by them: kvplan's weights per
    # GPU less the offloaded bytes, as --weights-gib would give them. The step time stays
    # kvplan's: the host-link reads of the offloaded weights are not modelled.
    cap = inputs.capacity
    assert cap is not None
    weights = plan_capacity(spec, cap).weights_bytes
    offloaded = int(run.cpu_offload_gb * GiB)
    return spec, replace(inputs, capacity=replace(cap, weights_bytes=weights - offloaded))


def simulate_run(run: Run, *, async_scheduling: bool | None = None,
                 api_server: bool = True, frontend: bool = False,
                 moe_jit_compile_s: float | None = None, api_output: bool = False,
                 sampling: SamplingParams | None = None, engine_core_cpu: bool | None = None,
                 charge_sampling: bool = True) -> Simulated:
    """`run` replayed; the sampler charged for `sampling`, else (`charge_sampling`) for the
    run's recorded sampling (tests.benches.row_sampling, since sampler63), else not."""
    spec, inputs = run_inputs(run)
    if sampling is None and charge_sampling:
        sampling = row_sampling(run.sampling)
    sim, _ = setup(spec, inputs, async_scheduling=async_scheduling, api_server=api_server,
                   frontend=frontend, moe_jit_compile_s=moe_jit_compile_s,
                   api_output=api_output, sampling=sampling, engine_core_cpu=engine_core_cpu)
    # One replica (dp 1), as kvplan.analysis.simulate.run.simulate runs it, keeping the
    # finished requests to split them by the stage they were sent in.
    cost = replica_step_cost(sim)
    engine = Simulator(KVPool(sim.plan.num_blocks, sim.groups, caching=sim.caching),
                       sim.scheduler, cost)
    state = engine.run(requests(run))
    whole = metrics([state])
    stages: dict[int, dict[str, float]] = {-1: _stage_figures(state.finished)}
    start = 0.0
    for index, (_, seconds) in enumerate(run.stages):
        part = [r for r in state.finished if start <= r.sent_s < start + seconds]
        stages[index] = _stage_figures(part)
        start += seconds
    return Simulated(stages=stages, preemptions=whole.preemptions,
                     prefix_hit_rate=whole.prefix_hit_rate, kv_usage_max=whole.kv_usage["max"],
                     jit_compiles=getattr(cost, "compiles", 0))


def median_error(pairs: list[tuple[float, float]]) -> float | None:
    """Median of |predicted / measured - 1| (the study's MAPE, as a median)."""
    if not pairs:
        return None
    return statistics.median(abs(p / m - 1) for m, p in pairs)


def medians_beside(runs: Iterable[tuple[Run, Simulated, Simulated]],
                   records: dict[tuple[int, int, str], dict[str, float]]
                   ) -> tuple[int, list[tuple[float | None, float | None]]]:
    """Two simulations of each run (kvplan's default, a variant) against the study's records:
    the stages simulated, and per metric of `_KEYS` both median |errors| over the stages the
    study measured (the opt-in benches' tables: api_output_runs, sampler_runs)."""
    pairs: tuple[dict[str, list[tuple[float, float]]], ...] = ({}, {})
    stages = 0
    for run, *sims in runs:
        for stage in sims[0].stages:
            stages += 1
            for key in _KEYS:
                rec = records.get((run.id, stage, key))
                if rec is None:
                    continue
                for side, sim in zip(pairs, sims, strict=True):
                    value = sim.stages[stage].get(key)
                    if value is not None:
                        side.setdefault(key, []).append((rec["measured"], value))
    return stages, [(median_error(pairs[0].get(k, [])), median_error(pairs[1].get(k, [])))
                    for k in _KEYS]


STUDY_SETS = {"study runs": {}, "prospective": {"prospective": True}, "blind": {"blind": True},
              "offload": {"offload": True}}


def print_stages_beside(title: str, variant: Callable[[Run], tuple[Simulated, Simulated]], *,
                        sets: Sequence[str] = ("study runs", "prospective", "blind"),
                        keep: Callable[[Run], bool] = lambda run: True,
                        arrow: str = " -> ", runs_column: bool = True) -> None:
    """The opt-in benches' sim-to-real table (engine_core_runs, sampler_runs, api_output_runs):
    per set of the study (`STUDY_SETS`), the stages simulated and each metric's median |error|
    with kvplan's default beside a variant; `variant(run)` gives the two simulations, `keep`
    picks the runs a stage applies to."""
    records = load_records()
    print(f"\n### {title}\n")
    head = "| set | runs | stages | " if runs_column else "| set | stages | "
    print(head + " | ".join(_KEYS) + " |")
    print("|---|---:|" + ("---:|" if runs_column else "") + "---:|" * len(_KEYS))
    for label in sets:
        _, runs = load_runs(**STUDY_SETS[label])
        chosen = [run for run in runs if keep(run)]
        stages, medians = medians_beside(((run, *variant(run)) for run in chosen), records)
        cells = ["-" if a is None or b is None else f"{a:.1%}{arrow}{b:.1%}" for a, b in medians]
        count = f"{len(chosen)} | " if runs_column else ""
        print(f"| {label} | {count}{stages} | " + " | ".join(cells) + " |")


@dataclass(frozen=True, kw_only=True)
class StageRow:
    run: Run
    stage: int  # stage index; -1 the whole run
    rate: float | None
    measured: dict[str, float]
    simulated: dict[str, float]
    others: dict[str, dict[str, float]]  # simulator -> metric -> predicted
    sim: Simulated
    # kvplan with async scheduling off (the rule's effect); None for the prospective runs.
    synchronous: dict[str, float] | None
    # kvplan without the API server's tokenizer batcher (kvplan.engines.vllm.frontend): the
    # simulator before that rule (commit 'before the batcher' in fitted_rows.SHAPED_BY).
    unbatched: dict[str, float]
    # kvplan with the API server's CPU stage (`simulate --frontend`, constants fitted on
    # prospective30's kvcached rows: kvplan.engines.vllm.frontend); opt-in, not the default.
    frontend: dict[str, float]


def stage_rows(*, prospective: bool = False, blind: bool = False, offload: bool = False
               ) -> list[StageRow]:
    """Every run's load stages (and the whole run, stage -1), measured beside simulated."""
    _, runs = load_runs(prospective=prospective, blind=blind, offload=offload)
    records = load_records()
    out = []
    later = prospective or blind or offload
    for run in runs:
        sim = simulate_run(run)
        sync = None if later else simulate_run(run, async_scheduling=False)
        bare = simulate_run(run, api_server=False)
        served = simulate_run(run, frontend=True)
        for stage, figures in sorted(sim.stages.items(), key=lambda kv: (kv[0] < 0, kv[0])):
            measured = {m: records[(run.id, stage, m)]["measured"] for m in METRICS
                        if (run.id, stage, m) in records}
            others: dict[str, dict[str, float]] = {}
            for m in METRICS:
                for name, value in records.get((run.id, stage, m), {}).items():
                    if name != "measured":
                        others.setdefault(name, {})[m] = value
            out.append(StageRow(run=run, stage=stage,
                                rate=None if stage < 0 else run.stages[stage][0],
                                measured=measured, simulated=figures, others=others, sim=sim,
                                synchronous=None if sync is None else sync.stages[stage],
                                unbatched=bare.stages[stage],
                                frontend=served.stages[stage]))
    return out


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


_KEYS = ("ttft_mean", "ttft_p90", "itl_mean", "e2e_mean", "e2e_p90")


def _figures(r: StageRow, name: str) -> dict[str, float]:
    if name == "kvplan":
        return r.simulated
    if name == "sync":
        return r.synchronous or {}
    if name == "unbatched":
        return r.unbatched
    if name == "frontend":
        return r.frontend
    return r.others.get(name, {})


def _med(name: str, metric: str, part: list[StageRow]) -> float | None:
    pairs = [(r.measured[metric], _figures(r, name).get(metric)) for r in part
             if metric in r.measured]
    return median_error([(m, p) for m, p in pairs if p is not None])


# kvplan's variants beside its default in the medians tables: the label's suffix, the figures.
_VARIANTS = ((", no tokenizer batcher", "unbatched"), (", --frontend", "frontend"))


def _med_row(label: str, name: str, part: list[StageRow],
             keys: tuple[str, ...] = _KEYS) -> str:
    """A medians row: `label`, the stages in `part`, `name`'s median error on each of `keys`."""
    return (f"| {label} | {len(part)} | "
            + " | ".join(_fmt(_med(name, k, part)) for k in keys) + " |")


def _summary(stages: list[StageRow], *, synchronous: bool) -> None:
    """Median errors of kvplan and of each of the study's simulators (kvplan on the same
    stages in brackets)."""
    print("| simulator | stages | TTFT mean | TTFT p90 | ITL mean | E2E mean | E2E p90 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(_med_row("kvplan simulate", "kvplan", stages))
    variants = (*_VARIANTS, (", synchronous", "sync")) if synchronous else _VARIANTS
    for label, name in variants:
        print(_med_row(f"kvplan{label}", name, stages))
    for name in OTHERS:
        part = [r for r in stages if name in r.others]
        if not part:
            print(f"| {name} | 0 | - | - | - | - | - |")
            continue
        cells = [f"{_fmt(_med(name, k, part))} ({_fmt(_med('kvplan', k, part))})"
                 for k in _KEYS]
        print(f"| {name} | {len(part)} | " + " | ".join(cells) + " |")


def _per_stage(stages: list[StageRow], *, synchronous: bool) -> None:
    print("| run | stage | measured TTFT / ITL / E2E ms | simulated | TTFT err | ITL err | "
          "E2E err | TTFT err, no batcher | "
          + ("TTFT err, synchronous | " if synchronous else "") + "prefix hit | campaign folder |")
    print("|---|---|---|---|---:|---:|---:|---:|" + ("---:|" if synchronous else "")
          + "---:|---|")
    for r in stages:
        m, s = r.measured, r.simulated
        err = {k: s[k] / m[k] - 1 for k in ("ttft_mean", "itl_mean", "e2e_mean")}
        hit = r.sim.prefix_hit_rate
        sync = f"{r.unbatched['ttft_mean'] / m['ttft_mean'] - 1:+.1%} | "
        if synchronous and r.synchronous is not None:
            sync += f"{r.synchronous['ttft_mean'] / m['ttft_mean'] - 1:+.1%} | "
        print(f"| {r.run.folder} | {r.stage}: {r.rate:g}/s | {m['ttft_mean']:.1f} / "
              f"{m['itl_mean']:.2f} / {m['e2e_mean']:,.0f} | {s['ttft_mean']:.1f} / "
              f"{s['itl_mean']:.2f} / {s['e2e_mean']:,.0f} | {err['ttft_mean']:+.1%} | "
              f"{err['itl_mean']:+.1%} | {err['e2e_mean']:+.1%} | {sync}"
              f"{'-' if hit is None else f'{hit:.1%}'} | {r.run.profile.split('/')[-2]} |")


def _beside_others(stages: list[StageRow]) -> None:
    """Per stage, kvplan's and every simulator's signed error on mean TTFT and mean E2E, as
    the study gives them (error_records.csv; '-' where it ran no such simulator)."""
    names = ("kvplan",) + OTHERS
    print("| run | stage | " + " | ".join(names) + " |")
    print("|---|---|" + "---:|" * len(names))
    for r in stages:
        cells = []
        for name in names:
            f = _figures(r, name)
            parts = [f"{f[k] / r.measured[k] - 1:+.0%}" if k in f and k in r.measured else "-"
                     for k in ("ttft_mean", "e2e_mean")]
            cells.append("-" if parts == ["-", "-"] else " / ".join(parts))
        print(f"| {r.run.folder} | {r.stage} | " + " | ".join(cells) + " |")


def _per_set(sets: tuple[tuple[str, list[StageRow]], ...]) -> None:
    """kvplan's median errors per set and per run (mean TTFT, mean ITL, mean E2E)."""
    keys = ("ttft_mean", "itl_mean", "e2e_mean")
    print("| set | run | stages | TTFT mean | ITL mean | E2E mean |")
    print("|---|---|---:|---:|---:|---:|")
    for name, part in sets:
        for label, sim in (("", "kvplan"), *_VARIANTS):
            print(_med_row(f"{name}{label} | all", sim, part, keys))
        for folder in dict.fromkeys(r.run.folder for r in part):
            mine = [r for r in part if r.run.folder == folder]
            print(_med_row(f"{name} | {folder}", "kvplan", mine, keys))


def print_section() -> None:
    """The study's runs as a Markdown section of examples/simulate-bench.md."""
    doc, runs = load_runs()
    rows = stage_rows()
    shaped = {row for s in SHAPED_BY for row in s.rows}
    stages = [r for r in rows if r.stage >= 0]
    print("## inference-sim's sim-to-real study (vLLM 0.15.1, H100, inference-perf)\n")
    print(f"Measured: {doc['measured']} (the study's ground truth per load stage, kept in "
          "tests/data/sim_to_real/error_records.csv for the runs below, with every other "
          "simulator's prediction). Settings and workload: each run's campaign values.yaml "
          "(tests/data/sim_to_real/runs.json). The study's traces are not public: kvplan "
          "replays the profile as BLIS does (module docstring of "
          "tests/benches/sim_to_real.py: constant arrivals per stage, a shared system prompt "
          "per group, fixed lengths, no multi-turn context). "
          f"{len(runs)} runs, {len(stages)} load stages, "
          f"{sum(1 for r in stages if row_id(r.run, r.stage) in shaped)} of them held out but "
          "shaped: no constant was fitted on them, but after they entered the bench their "
          "TTFT (about one decode step above the simulated one) led to reading vLLM's engine "
          "core and simulating its async scheduling (on by default from vLLM 0.14; "
          "tests/benches/fitted_rows.py SHAPED_BY): they are no blind test of that rule. The "
          "line 'synchronous' shows kvplan without it (with the tokenizer batcher below; the "
          "bench as first run had neither, commit 97e9e7a). Later, with the prospective and "
          "blind runs below also evaluated and "
          "their mean TTFT still below the measured, reading vLLM's API server found its "
          "tokenizer batcher: a prompt waits up to 2 ms for others before it is tokenized and "
          "handed to the engine (AsyncMicrobatchTokenizer, vLLM 0.11-0.23; "
          "kvplan.engines.vllm.frontend, from the code, nothing fitted; commit 914a7cc): "
          "every stage of the study on this page is shaped by that rule, and the line 'no "
          "tokenizer batcher' shows kvplan before it. Errors are |predicted / measured - 1|, "
          "their median over the load stages.\n")
    _summary(stages, synchronous=True)
    print("\nIn brackets: kvplan on the same stages. Vidur ran on none of these runs (the "
          "study has no Vidur profile of Llama-3.1-8B or Qwen3-14B). The issue's target: "
          "median TTFT error <= 15 %, TPOT / ITL and E2E <= 10 %. kvplan's TTFT runs from "
          "the request's sending to the first token leaving its step, with the API server's "
          "tokenizer batch wait; the client's also holds the HTTP, the tokenizer's own time, "
          "the hop to the engine core and the streaming path, which the code gives no cost "
          "for and kvplan does not model.\n")
    base = runs[0].profile.rsplit("/", 2)[0]
    print(f"Profiles: {base}/FOLDER/values.yaml (the campaign folder in the last column).\n")
    _per_stage(stages, synchronous=True)
    _, later = load_runs(prospective=True)
    ahead = [r for r in stage_rows(prospective=True) if r.stage >= 0]
    print("\n### Prospective: the study's runs added after the last rule change\n")
    print(f"{doc['prospective']} {len(later)} runs, {len(ahead)} load stages, every one held "
          "out (nothing fitted on them) and unseen when the simulator's rules up to async "
          "scheduling were written; the tokenizer batcher (commit 914a7cc) and vLLM's fused-MoE "
          "costs (commit 3df5cf3, below) were written after their TTFT was seen, so they are "
          "shaped by both: 'no tokenizer batcher' is kvplan without the first (as they were "
          "first evaluated: 22.1 % / 2.6 % / 1.8 %).\n")
    _summary(ahead, synchronous=False)
    print()
    _per_stage(ahead, synchronous=False)
    print(f"\n{doc['prospective_finding']}")
    print("\nLater (commit 914a7cc): part of the missing half step is the API server's, and "
          "its code does give one cost: the tokenizer batcher holds every prompt that finds "
          "it idle for its whole 2 ms timeout (the study's constant arrivals, 50-200 ms apart, "
          "never share a batch), so the engine sees each request 2 ms after it was sent. "
          "kvplan now simulates it; what remains (the 'TTFT err' column, largest on the Mixtral "
          "runs) is not explained by any code read here.")
    print("\nLater still (issue 30, commit 3df5cf3): what a Mixtral prefill step costs in "
          "vLLM 0.15.1's fused MoE that kvplan did not charge, read in its code "
          "(model_executor/layers/fused_moe/). bf16 experts on TP ranks run the Triton kernel "
          "(oracle/unquantized.py:50-104: FlashInfer's CUTLASS MoE only with "
          "VLLM_USE_FLASHINFER_MOE_FP16=1 and EP). Its weights cross HBM once a step, as kvplan "
          "already charged (the kernel walks an N column's row blocks together, fused_moe.py:"
          "400-409, so an expert's weight tile serves its other row blocks from L2). Not charged "
          "before: each expert's rows padded to BLOCK_SIZE_M (moe_align_block_size; 64 at these "
          "steps' sizes in get_default_config:1223-1287 and in the shipped H100 tables for "
          "E=8, N=7168 / 3584 / 2048), whose MMAs run over whole blocks (fused_moe.py:499, 529), "
          "and the activations written and read between its four kernels (TritonExperts.apply, "
          "fused_moe.py:2053-2125: the w13 output, silu_and_mul, the w2 output, moe_sum): "
          "108.6 MB a layer in a 491-token step at TP 2. kvplan now charges both "
          "(kvplan.perf.moe_kernel, vLLM only, 16-bit experts, no EP; nothing fitted): run 28's "
          "491-token step (a 451-token chunk beside 40 decodes) goes from 19.43 to 20.33 ms "
          "(the experts 14.96 -> 15.54 ms, the activation and sum kernels 0.32 ms), a 40-token "
          "decode step from 18.27 to 18.32 ms; the padding (1.19x the routed rows at 491 "
          "tokens) costs nothing there, the experts staying weight-bound (296 us of MMA against "
          "485 us of bytes a layer). The tile efficiency of the Triton GEMM at these shapes "
          "is not read from code and stays the cost model's. Every Mixtral stage on this page "
          "(prospective, blind, offload) is shaped by the rule (tests/benches/fitted_rows.py "
          "SHAPED_BY); before it, the sets' medians (TTFT / ITL / E2E) were: prospective "
          "17.8 % / 2.6 % / 1.7 %, blind 16.2 % / 1.8 % / 1.6 %, offload 22.0 % / 2.5 % / "
          "2.3 % (commit 8e52a11). The TTFT gap is still mostly there, as the ITL bound above "
          "says it must be if it is not GPU time.")
    _, frozen = load_runs(blind=True)
    blind = [r for r in stage_rows(blind=True) if r.stage >= 0]
    print("\n### Blind: the study's runs frozen before kvplan was run on them\n")
    print(f"{doc['blind']} {len(frozen)} runs, {len(blind)} load stages, first evaluated "
          "after the freeze (the 'campaign folder' column names the folder holding the run's "
          "workload template). Two rules were written after that evaluation, with this set's "
          "TTFT gap in view: the tokenizer batcher (commit 914a7cc) and vLLM's fused-MoE "
          "costs (commit 3df5cf3, above): the set is shaped by both and no blind test of "
          "either; 'no tokenizer batcher' is kvplan without the first (the set's blind "
          "figures were 19.4 % / 1.8 % / 1.6 %).\n")
    _summary(blind, synchronous=False)
    print()
    _per_stage(blind, synchronous=False)
    print("\nThe study's runs left out of the blind set, and why (runs.json "
          "\"blind_skipped\"):\n")
    print("| study runs | why left out |")
    print("|---|---|")
    for skip in doc["blind_skipped"]:
        print(f"| {skip['runs']} | {skip['why']} |")
    _, offloaded = load_runs(offload=True)
    offload = [r for r in stage_rows(offload=True) if r.stage >= 0]
    print("\n### Offload: the study's runs served with --cpu-offload-gb 4\n")
    print(f"{len(offloaded)} runs, {len(offload)} load stages (study runs "
          f"{', '.join(str(r.id) for r in offloaded)}), frozen in runs.json \"offload_runs\" "
          "(commit 674ffd2) before kvplan was run on them and evaluated once, after every rule "
          "on this page but vLLM's fused-MoE costs (commit 3df5cf3, above), which their "
          "Mixtral stages' TTFT helped lead to: those are shaped by it, the others held out "
          "and shaped by none. The campaign's cpu_offload is vLLM's weight "
          "offload (`--cpu-offload-gb 4` in each values.yaml), not a KV tier. As decided before "
          "the evaluation (runs.json \"offload\", from vLLM 0.15.1's code): kvplan's weights "
          "per GPU less 4 GiB, so a KV budget 4 GiB larger (with at most 128 requests of at "
          "most 1,001 tokens, no run's pool fills with or without them), and the step time "
          "without the flag (the host-link reads of the offloaded weights, which UVA would make "
          "in every forward pass, are not modelled; the measured ITL shows none: run 29 beside "
          "run 56, run 24 beside run 16). The study's simulators ran on these runs as on the "
          "others (no Vidur; no aiconfigurator on Mixtral).\n")
    _summary(offload, synchronous=False)
    print()
    _per_stage(offload, synchronous=False)
    print("\nAs first evaluated (commit d029df7; only the fused-MoE rule since): the "
          "Mixtral-8x7B and "
          "Llama-3.1-8B stages as their siblings without the flag (ITL and E2E within 3 %, the "
          "Mixtral TTFT 11-26 % low as on the prospective runs); the dense TP 2 and TP 4 runs "
          "(CodeLlama-34B, Llama-2-70B) 12-31 % high on ITL and E2E, their TTFT 21-41 % high. "
          "Peak KV use at most 12 % of the pool, no preemption; without the 4 GiB the stage "
          "figures are the same (checked on runs 6, 9 and 24).")
    mixtral_ttft.print_section(ahead + blind + offload, run_inputs, first_set=stages)
    tp_breakdown.print_section({r.id: r for r in load_runs()[1] + offloaded}, load_records(),
                               run_inputs)
    print("\n### kvplan per set\n")
    print("Median |predicted / measured - 1| of kvplan over each set's load stages, and per "
          "run (median over its stages). The issue's target: TTFT <= 15 %, ITL and E2E <= "
          "10 %.\n")
    _per_set((("shaped", stages),
              ("prospective, shaped by the batcher and the MoE rule", ahead),
              ("blind, shaped by the batcher and the MoE rule", blind), ("offload", offload)))
    accelmark_runs.print_per_set()
    print("\nblind2 (AccelMark, section 'Blind 2' below) publishes no mean and no E2E: its "
          "rows compare kvplan's p50 TTFT and p50 TPOT with the published p50s, per QPS level "
          "(the 'stages' column).")
    print("\n### Every stage beside the study's simulators\n")
    print("Signed error of mean TTFT / mean E2E per load stage (predicted / measured - 1), "
          "kvplan's and each simulator's the study ran on that run (error_records.csv); '-': "
          "the study has no prediction of that simulator there (Vidur: none on these runs). "
          "The prospective runs, then the blind runs, then the offload runs, last.\n")
    _beside_others(stages + ahead + blind + offload)
