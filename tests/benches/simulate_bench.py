"""`kvplan simulate` against published vLLM serving runs (issue 30): each run of the cost bench
(tests/benches/cost_cases.py, every row with its URL) that served vLLM under a client load with
its settings published (concurrency, lengths, requests), replayed in the simulator as a closed
loop (`vllm bench serve --max-concurrency C --num-prompts N`), the simulated mean TPOT (and,
where the run printed one, mean TTFT) beside the measured one.

Run: python -m tests.benches.simulate_bench > examples/simulate-bench.md

Nothing in the simulator is fitted: the step time is kvplan.perf.mixed_step over the cost
model's efficiencies, whose two fitted constants name their rows (tests/benches/fitted_rows.py);
a row is marked "fitted" when one of them names it, "same configuration" when it shares a
fitted row's model, GPU and TP, "shaped" when a cost-model rule was written with it in view
(tests/benches/fitted_rows.py SHAPED_BY), else "held out". The simulator's TPOT is the cost
model's decode step plus what the schedule adds (the prefills run inside decode steps, queueing
at the concurrency); its TTFT holds the API server's tokenizer batch wait (vLLM 0.11-0.23,
kvplan.engines.vllm.frontend; not for AccelMark's in-process engine) but no HTTP, tokenisation
or streaming time.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.sglang_pools import swa_releases_text
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine
from tests.benches import (
    accelmark_runs,
    aiconfig_agg_dp_script,
    aiconfig_agg_flags,
    aiconfig_agg_runs,
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective53b_runs,
    prospective54_runs,
    prospective56_runs,
    prospective57_runs,
    prospective58_runs,
    prospective59_runs,
    prospective60_runs,
    prospective61_runs,
    prospective62_runs,
    prospective63_runs,
    prospective64_runs,
    prospective65_runs,
    prospective66_runs,
    prospective_runs,
    sim_to_real,
)
from tests.benches.cost_bench import TTFT_CASES, case_spec
from tests.benches.cost_cases import CASES, Case
from tests.benches.fitted_rows import FITTED, SHAPED_BY, SIM_LAUNCH_SHAPED, SIM_REPLAY_SHAPED
from tests.benches.prospective_runs import bench_serving_random  # SGLang 0.5.6's draw


@dataclass(frozen=True, kw_only=True)
class Row:
    label: str
    split: str
    measured_tpot_ms: float
    simulated_tpot_ms: float | None
    measured_ttft_ms: float | None
    simulated_ttft_ms: float | None
    preemptions: int
    url: str
    refused: str = ""  # why kvplan does not simulate the run (its plan refuses it)
    # With the API server's CPU stage (`simulate --frontend`; vLLM only): mean TPOT, mean TTFT.
    served: tuple[float, float] | None = None


def _fitted_labels() -> frozenset[str]:
    return frozenset(label for f in FITTED.values() for label in f.fitted_on)


def _split(case: Case, fitted: frozenset[str]) -> str:
    if case.label in fitted:
        return "fitted"
    configs = {(c.model, c.gpu, c.layout.tp) for c in CASES if c.label in fitted}
    if (case.model, case.gpu, case.layout.tp) in configs:
        return "same configuration"
    if any(case.label in shaped.rows for shaped in SHAPED_BY):
        return "held out, shaped a cost-model rule"
    if any(case.label in shaped.rows for shaped in SIM_LAUNCH_SHAPED):
        return "held out, shaped the eager launch"
    if any(case.label in shaped.rows for shaped in SIM_REPLAY_SHAPED):
        return "held out, shaped the replay"
    return "held out"


def _version(label: str, engine: str = "vLLM") -> str | None:
    found = re.search(engine + r" (\d+\.\d+(?:\.\d+)?)", label)
    return found.group(1) if found else None


def vllm_serving_cases() -> list[Case]:
    """vLLM runs under a serving client (not engine-timed, no expert or DP attention layouts
    the simulator does not take) with a published request count."""
    return [c for c in CASES if "vLLM" in c.label and not c.engine_timed
            and c.requests is not None and c.layout.ep == 1 and not c.layout.dp_attention]


def sglang_serving_cases() -> list[Case]:
    """SGLang runs under a serving client with a published request count, as for vLLM
    (`rows("sglang")`: SGLang's scheduler, kvplan.analysis.simulate.sglang_scheduler)."""
    return [c for c in CASES if "SGLang" in c.label and not c.engine_timed
            and c.requests is not None and c.layout.ep == 1 and not c.layout.dp_attention
            and not c.disaggregated]


def trtllm_serving_cases() -> list[Case]:
    """TensorRT-LLM runs under a serving client with a published request count, as for vLLM
    (`rows("trtllm")`: its PyTorch executor's scheduler, kvplan.analysis.simulate.
    trtllm_scheduler)."""
    return [c for c in CASES if "TensorRT-LLM" in c.label and not c.engine_timed
            and c.requests is not None and c.layout.ep == 1 and not c.layout.dp_attention
            and not c.disaggregated]


# The name each engine's rows carry their release under.
_ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}


def run_case(case: Case, engine: str = "vllm", *, frontend: bool = False
             ) -> tuple[float, float, int]:
    spec = case_spec(case)
    context = case.input_len + case.output_len + 16
    if case.bench_random is not None:  # the longest request the run could draw
        context = sum(case.bench_random) + 16
    inputs = estimate_inputs(spec, context=context, gpu=case.gpu, tp=case.layout.tp,
                             engine=Engine(engine),
                             engine_version=_version(case.label, _ENGINE_NAMES[engine]))
    # AccelMark's runner drives an in-process engine (no API server, no tokenizer batcher).
    sim, _ = setup(spec, inputs, api_server="AccelMark" not in case.label, frontend=frontend)
    assert case.requests is not None
    # A bench_serving random run replays its own drawn lengths: at the mean lengths every
    # request of a closed loop starts, decodes and ends in step, so the prefills run in waves
    # before the first tokens and none falls inside a request's decode (its TPOT); with the
    # drawn lengths they spread out and interrupt the running decodes as in the real run.
    specs = (bench_serving_random(case.requests, *case.bench_random)
             if case.bench_random is not None else
             [RequestSpec(arrival_s=0.0, prompt_len=case.input_len, output_len=case.output_len)
              for _ in range(case.requests)])
    m = simulate(sim, specs, concurrency=case.batch * (case.layout.tp if case.layout.dp_attention
                                                       else 1)).metrics
    assert m.tpot_ms["mean"] is not None and m.ttft_ms["mean"] is not None
    return m.tpot_ms["mean"], m.ttft_ms["mean"], m.preemptions


def rows(engine: str = "vllm") -> list[Row]:
    fitted = _fitted_labels()
    ttft = {c.label: c for c in TTFT_CASES}
    out = []
    cases = {"vllm": vllm_serving_cases, "sglang": sglang_serving_cases,
             "trtllm": trtllm_serving_cases}[engine]()
    name = _ENGINE_NAMES[engine]
    for case in cases:
        try:
            tpot, first, preempted = run_case(case, engine)
        except KvplanError as exc:
            out.append(Row(label=case.label, split=_split(case, fitted),
                           measured_tpot_ms=case.measured_tpot_ms, simulated_tpot_ms=None,
                           measured_ttft_ms=None, simulated_ttft_ms=None, preemptions=0,
                           url=case.url, refused=str(exc)))
            continue
        # A TTFT measured in the same run (the cost bench keeps them apart, by its own label):
        # same model, GPU, TP, engine version, concurrency and prompt length.
        match = next((t for label, t in ttft.items()
                      if label.split(",")[0] == case.label.split(",")[0]
                      and _version(label, name) == _version(case.label, name)
                      and (t.model, t.gpu, t.layout.tp) == (case.model, case.gpu, case.layout.tp)
                      and t.concurrency == case.batch and t.prompt_len == case.input_len),
                     None)
        served = run_case(case, engine, frontend=True)[:2] if engine == "vllm" else None
        out.append(Row(label=case.label, split=_split(case, fitted),
                       measured_tpot_ms=case.measured_tpot_ms, simulated_tpot_ms=tpot,
                       measured_ttft_ms=None if match is None else match.measured_ttft_ms,
                       simulated_ttft_ms=first, preemptions=preempted, url=case.url,
                       served=served))
    return out


def _median_error(values: list[tuple[float, float]]) -> str:  # type: ignore[type-arg]
    if not values:
        return "-"
    return f"{statistics.median(abs(s / m - 1) for m, s in values):.1%} ({len(values)} runs)"


def tpot_ttft_errors(part: list[Row]) -> tuple[str, str]:
    """The median |simulated / measured - 1| of mean TPOT and of mean TTFT over `part`'s
    simulated rows (TTFT: those that measured one)."""
    tpot = [(r.measured_tpot_ms, r.simulated_tpot_ms) for r in part
            if r.simulated_tpot_ms is not None]
    ttft = [(r.measured_ttft_ms, r.simulated_ttft_ms) for r in part
            if r.measured_ttft_ms is not None and r.simulated_ttft_ms is not None]
    return _median_error(tpot), _median_error(ttft)


def _print_runs(table: list[Row]) -> None:
    for split in ("held out", "held out, shaped a cost-model rule",
                  "held out, shaped the eager launch", "held out, shaped the replay",
                  "same configuration", "fitted"):
        part = [r for r in table if r.split == split]
        if split in ("held out, shaped the replay", "held out, shaped the eager launch"
                     ) and not part:
            continue  # only the SGLang section has these (simulator rules, not the cost model)
        tpot_error, ttft_error = tpot_ttft_errors(part)
        print(f"- {split}: median |simulated / measured - 1| of mean TPOT {tpot_error}, of "
              f"mean TTFT {ttft_error}")
        served = [r for r in part if r.served is not None]
        if served:
            tpot = [(r.measured_tpot_ms, r.served[0]) for r in served if r.served]
            ttft = [(r.measured_ttft_ms, r.served[1]) for r in served
                    if r.served and r.measured_ttft_ms is not None]
            print(f"- {split}, --frontend: median |simulated / measured - 1| of mean TPOT "
                  f"{_median_error(tpot)}, of mean TTFT {_median_error(ttft)}")
    print()
    print("| run | split | measured TPOT ms | simulated TPOT ms | simulated / measured | "
          "measured TTFT ms | simulated TTFT ms | preemptions | source |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in table:
        ttft = "-" if r.measured_ttft_ms is None else f"{r.measured_ttft_ms:,.1f}"
        if r.simulated_tpot_ms is None or r.simulated_ttft_ms is None:
            print(f"| {r.label} | {r.split} | {r.measured_tpot_ms:.2f} | not simulated: "
                  f"{r.refused} | - | {ttft} | - | - | {r.url} |")
            continue
        print(f"| {r.label} | {r.split} | {r.measured_tpot_ms:.2f} | "
              f"{r.simulated_tpot_ms:.2f} | {r.simulated_tpot_ms / r.measured_tpot_ms:.2f} | "
              f"{ttft} | {r.simulated_ttft_ms:,.1f} | {r.preemptions:,} | {r.url} |")


def main() -> None:
    table = rows()
    print("# `kvplan simulate` against published vLLM, SGLang and TensorRT-LLM serving runs\n")
    print("Generated by `python -m tests.benches.simulate_bench > examples/simulate-bench.md` "
          "(issue 30; tests/test_examples.py holds it current). Do not edit by hand. Sixteen "
          "sets of runs: the sim-to-real study's (an open-loop request rate in load stages, "
          "each stage's TTFT, ITL and E2E measured, beside the study's own simulators on the "
          "same runs; its prospective and blind runs apart), AccelMark's published online "
          "results (blind2: Poisson load per QPS level, p50 TTFT and TPOT), prospective30 "
          "(public `vllm bench serve` runs frozen before kvplan was run on them: mean TTFT, "
          "TPOT and ITL, its medians apart), prospective31 (a second such set, frozen the same "
          "way: mean and median TTFT and TPOT, mean ITL), prospective52 (a third, of other "
          "publishers' `sglang.bench_serving` runs: the same figures and E2E), prospective53 "
          "(a fourth, gpustack's H200 pages: prospective31's figures), prospective53b (a fifth, "
          "other publishers' `vllm bench serve` runs: the same figures), prospective54 (a "
          "sixth, other publishers' `vllm bench serve` and `sglang.bench_serving` runs: the "
          "same figures), prospective56 (a seventh, Scicom's committed logs of both clients "
          "and a vLLM PR's runs: the same figures and E2E), prospective57 (an eighth, "
          "Anyscale's Ray Serve LLM runs and the vLLM perf-dashboard's run of gpt-oss-120b: "
          "the same figures and E2E), prospective58 (a ninth, Wentao274's vLLM 0.20 runs of "
          "MiniMax-M2.5 on 8 x H100 with expert parallel: the same figures), prospective59 (a "
          "tenth, SGLang cookbook runs of DeepSeek-V3.1 and Llama-4-Maverick on 8 x MI300X: "
          "the same figures and E2E), prospective60 (an eleventh, gpustack's A100 80GB pages "
          "and its TensorRT-LLM and SGLang rows on H100 / H200: prospective31's figures), "
          "prospective61 (a twelfth, the rows prospective56 and 58 left for their caps: "
          "Scicom's SGLang runs at 2,048-8,192 input tokens and Wentao274's MiniMax-M2.5 "
          "length cases at concurrency 64 / 128: the same figures, E2E for SGLang), "
          "prospective62 (a thirteenth, more of the rows prospective56 and 61 left for their "
          "caps: Scicom's vLLM runs at 128-15,000 input tokens on H100, H200 and B200 and "
          "Wentao274's MiniMax-M2.5 length cases at concurrency 32: the same figures, E2E for "
          "Scicom), prospective63 (a fourteenth, the rest of Scicom's April H100 vLLM sweeps "
          "prospective62 left for its cap: concurrency 25, 50 and 100 at 128-4,096 input "
          "tokens: the same figures and E2E), prospective64 (a fifteenth, a new "
          "publisher's SGLang cookbook re-benches of Qwen3.5-9B / 27B and Qwen3.6-35B-A3B on "
          "one H100, H200, B200 or B300 at concurrency 1,024 and 4,096: P50 TTFT and TPOT "
          "only, compared P50 to P50), prospective65 (a sixteenth, the same cookbook's "
          "Qwen3.5 MoE cells, 35B-A3B / 122B-A10B / 397B-A17B on H200, B200 or B300 at TP 1 to "
          "8 and concurrency 1,024 and 4,096: P50 TTFT and TPOT, and a vLLM PR's base run of "
          "Qwen3-30B-A3B on one H100: mean TTFT and TPOT), prospective66 (a seventeenth, "
          "kubesimplify's vLLM 0.27.1 runs of Qwen3-235B-A22B-Instruct-2507-FP8 at TP 4 on 4 x "
          "RTX PRO 6000 over PCIe at concurrency 1 and 32, a stand-in config: mean TTFT, TPOT, "
          "ITL and E2E), "
          "aiconfigurator's measured "
          "aggregated rows (held out, frozen before kvplan was run on them: TTFT and TPOT at a "
          "stated concurrency; all of them at fixed lengths, which InferenceX's client did not "
          "run and which flatter kvplan's TTFT, and a pre-chosen subset also under the "
          "client's own workload, the faithful figure: both side by side in that section's "
          "first paragraph and its subsection 'The same rows under the client's workload'), "
          "then the cost "
          "bench's vLLM runs, "
          "its SGLang runs and its TensorRT-LLM run at a fixed concurrency (TPOT).\n")
    print("The API server's CPU stage, `kvplan simulate --frontend` (opt-in; "
          "kvplan.engines.vllm.frontend VLLM_API_LOOP_COST): the server's one asyncio loop "
          "(one API process unless --api-server-count or DP says otherwise, vLLM 0.15.0 "
          "entrypoints/cli/serve.py) taking each request (the body parsed, its sampling "
          "parameters, the prompt tokenized, the engine request built and sent: 97.8 us + "
          "2.168 us per prompt token, measured with vLLM's own code on one CPU, "
          "tests/benches/api_ingest_cost.py) in front of the tokenizer batcher, and each "
          "step's outputs on the same FIFO (--api-output's measured stage; from vLLM 0.17 "
          "with the detokenizer's whole-prompt prime at a request's first token, 0.931 us "
          "per prompt token, measured with the same vocabulary, "
          "tests/benches/detok_prime_cost.py, frontdec66), plus a fixed "
          "per-request latency outside that queue (25.55 ms, fitted by "
          "tests/benches/frontend_fit.py on one row: prospective30's kvcached rate-16 seed-42 "
          "row, one H100 host, vLLM 0.19.0; tests/benches/fitted_rows.py collects the "
          "records). It replaced (vllmhost62, 63daad97) a fit of 11.85 ms per request and "
          "18.18 ms on kvcached's rate-inf and rate-16 rows, whose serial 11.85 ms capped "
          "ingestion at 84 requests/s, under the 133 a second Scicom's Qwen3-8B served at "
          "concurrency 200 (prospective62's concurrency-200 rows shaped the change: "
          "SHAPED_BY); the measured loop leaves kvcached's rate-inf row at 708 ms (826 ms "
          "with the prime, fitted before it) against 2,996 ms measured. AccelMark's runs and "
          "gpustack's rows shaped the first stage "
          "(SHAPED_BY); every other row is held out. Every set shows its medians with it (the "
          "'--frontend' lines) beside kvplan's default. Since frontdef67 (b1ce8404) that "
          "default, for a `vllm serve` run at one replica without attention DP or "
          "speculative decoding, is the same loop with its measured parts only and no "
          "latency (VLLM_API_LOOP_MEASURED: nothing fitted; made the default by a rule "
          "frozen before its evaluation, tests/benches/frontdef67.py: held-out median of "
          "the 13 sets' median |mean TTFT error| 30.0 -> 29.9 %, the study's main stages 6.5 -> "
          "7.1 %, no held-out set worse by more than 5 points); the fitted latency, which "
          "belongs to one host, stays opt-in (--frontend).\n")
    print("vLLM's engine-core host work (kvplan.engines.vllm.engine_core; on by default, "
          "`--no-engine-core-cpu` turns it off): 71.1 us + 11.98 us per scheduled request a "
          "step, measured with vLLM's own Scheduler and shm MessageQueue on one CPU "
          "(tests/benches/engine_core_cost.py; no serving row fitted, not a serving host's "
          "CPU), after the GPU step without async scheduling (vLLM before 0.14, or "
          "--no-async-scheduling), the longer of the two with it. prospective57's runs shaped "
          "it (SHAPED_BY); frozen opt-in, it was made the default after its first evaluation "
          "on the held-out sets (tests/benches/engine_core_runs.py: every synchronous set's "
          "medians fell, the async sets did not move), so every figure below includes it.\n")
    sim_to_real.print_section()
    accelmark_runs.print_section()
    prospective_runs.print_section()
    prospective31_runs.print_section()
    prospective52_runs.print_section()
    prospective53_runs.print_section()
    prospective53b_runs.print_section()
    prospective54_runs.print_section()
    prospective56_runs.print_section()
    prospective57_runs.print_section()
    prospective58_runs.print_section()
    prospective59_runs.print_section()
    prospective60_runs.print_section()
    prospective61_runs.print_section()
    prospective62_runs.print_section()
    prospective63_runs.print_section()
    prospective64_runs.print_section()
    prospective65_runs.print_section()
    prospective66_runs.print_section()
    aiconfig_agg_runs.print_section()
    aiconfig_agg_flags.print_section()  # the counterfactual, after the frozen evaluation
    aiconfig_agg_dp_script.print_section()  # TensorRT-LLM attention DP at its scripts' flags
    print("\n## The cost bench's vLLM serving runs (fixed concurrency)\n")
    print("Each run of the cost bench (tests/benches/cost_cases.py) that served "
          "vLLM to a client at a fixed concurrency with its request count published, replayed "
          "in `kvplan simulate`'s scheduler (vLLM 0.32 V1 rules; the pool from the run's "
          "GPU, TP and vLLM version as `estimate` sizes it) as a closed loop with every "
          "request at the run's mean lengths. Nothing is fitted to these rows; the split "
          "names the rows the cost model's two fitted constants were fitted on.\n")
    _print_runs(table)
    print_sglang_section()


def print_sglang_section() -> None:
    """The page's last section: the cost bench's SGLang runs."""
    print("\n## The cost bench's SGLang serving runs (fixed concurrency)\n")
    print("Each run of the cost bench that served SGLang (`python -m sglang.bench_serving` or "
          "the same client shape) to a client at a fixed concurrency with its request count "
          "published (layout EP 1 as the cost bench records it, no DP attention, no "
          "disaggregation), replayed in `kvplan "
          "simulate --engine sglang`'s scheduler (prefill first, new-token-ratio admission "
          "and retraction, radix cache, overlap scheduling; the token pool as `estimate` "
          "sizes it for the run's GPU, TP and SGLang version) as a closed loop at the run's "
          "mean lengths, except the SGLang cookbook's `--dataset-name random` runs: those "
          "replay the lengths the run drew (bench_serving's defaults, seed 1 and range ratio "
          "0.0: prompts uniform over 1..input, outputs over 0..output, SGLang 0.5.6 "
          "bench_serving.py 1227-1236; the draw gives the pages' input totals to the token). "
          "At the mean lengths every request of the loop started, decoded and ended in step, "
          "so the prefills ran in waves before the first tokens and none fell inside a "
          "request's TPOT; bench_serving's TPOT, (latency - TTFT) / (output - 1) per request "
          "(bench_serving.py 1712-1713), holds every prefill step (prefill first, no mixed "
          "chunk) run while the request decodes. That replay was written after these rows' "
          "TPOT at concurrency 64-100 had been read (0.45-0.70 of the measured): its rows "
          "are no blind test of it, the held-out ones among them now 'held out, shaped the "
          "replay' (tests/benches/fitted_rows.py SIM_REPLAY_SHAPED, commit 17439c3; not a "
          "cost-model rule, so not SHAPED_BY). At the mean lengths (before it) the medians "
          "were: held out 8.8 % TPOT (18 runs), 72.3 % TTFT (6); held out, shaped a "
          "cost-model rule 22.9 % (39), 81.1 % (13). The decode CUDA graphs cover these "
          "batches (cuda_graph_max_bs 512 at TP 8 on 80-GiB and larger GPUs, server_args.py "
          "776-803), but a prefill (extend) batch runs eagerly (SGLang 0.5.6 / 0.5.9 "
          "cuda_graph_runner.py:272 / 276 captures decode batches only, server_args.py:508 / "
          "604 enable_piecewise_cuda_graph False): each simulated prefill step pays the cost "
          "model's eager launch time, the ops SGLang's model code launches x 70 us (fitted on "
          "cost-bench.md's engine-timed prefills, none of these rows; 1,986 ops, 139 ms, for "
          "DeepSeek-R1 at TP 8 on B200), as the cost bench's prefill already did. Before the "
          "simulator charged it (commit f56b322) the TTFT at concurrency 1-4 came out 100-150 "
          "ms short and the TPOT at 64-100 short; the rows whose TTFT (and DeepSeek-R1 "
          "0.5.6.post1's P95 ITL at 100) had been read are 'held out, shaped the eager "
          "launch' (tests/benches/fitted_rows.py SIM_LAUNCH_SHAPED) unless a cost-model rule "
          "already took them. Before it the medians (TPOT, TTFT) were: held out 4.8 % (7), -; "
          "shaped a cost-model rule 16.5 % (41), 82.1 % (14); shaped the eager launch 12.7 % "
          "(9), 78.2 % (9); shaped the replay 22.5 % (11), -; fitted 1.0 % (2), 22.8 % (1). "
          "Nothing else on the request's path adds a time the code gives: bench_serving's TTFT "
          "is the first streamed chunk with text (bench_serving.py 578-586), --stream-interval "
          "1 streams the first token with the prefill's result (server_args.py:289, "
          "scheduler_output_processor_mixin.py 808-817), the scheduler polls without sleeping "
          "(sleep_on_idle False, server_args.py:299; scheduler.py:1077 zmq.NOBLOCK), and no "
          "tokenizer batch waits (enable_dynamic_batch_tokenizer False, server_args.py:542). "
          "The same splits as above. A hybrid recurrent model (Qwen3-Next, "
          "Qwen3-Coder-Next) runs its full-attention token pool with the mamba pool's slots "
          "capping the running requests (max_mamba_cache_size // 3, "
          "kvplan.analysis.simulate.sglang_pools; the mamba radix cache's prefix hits are "
          "simulated at 0.5.7 - 0.5.12, none on these rows' random prompts, and not at 0.5.6): "
          "its 11 rows "
          "were first simulated after their measured TPOTs were on this page, so they are "
          "held out, read after the figures were published, and no rule was written from them "
          "(the Qwen3-Next rows' 'shaped a cost-model rule' is the cost model's earlier "
          "recurrent-layer rule, SHAPED_BY; the Qwen3-Coder-Next random rows carry the "
          "drawn-length replay's record like every cookbook random row, though they had no "
          "simulated figure when it was written). SGLang's sliding-window pool (gpt-oss from "
          "0.5.8, Llama-4's chunked layers; kvplan.analysis.simulate.sglang_swa) is simulated "
          f"at {swa_releases_text()} (with it on or off) and refused at the releases whose "
          "eviction of out-of-window tokens is not read; no row above runs it. Any other pool "
          "that is not one plain token pool is refused, not guessed.\n")
    _print_runs(rows("sglang"))
    print_trtllm_section()


def print_trtllm_section() -> None:
    """The cost bench's TensorRT-LLM runs (issue 30, trtagg54)."""
    print("\n## The cost bench's TensorRT-LLM serving runs (fixed concurrency)\n")
    print("Each run of the cost bench that served TensorRT-LLM at a fixed concurrency with its "
          "request count published, replayed as the vLLM runs are in `kvplan simulate "
          "--engine trtllm`'s scheduler (the PyTorch executor of the 1.2 line: capacity "
          "GUARANTEED_NO_EVICT, max_num_tokens 8,192, max_batch_size 2,048, no chunked "
          "prefill, block reuse, the overlap scheduler; kvplan.analysis.simulate."
          "trtllm_scheduler). The scheduler was written from the engine's source before this "
          "row was run on it and no rule or constant of it comes from the row; the row is one "
          "the cost model's per-layer overhead was fitted on (the split), so it checks the "
          "scheduler on a real run, not the step time. The cost bench has no held-out "
          "TensorRT-LLM serving row.\n")
    _print_runs(rows("trtllm"))


if __name__ == "__main__":
    main()
