"""The prospective57 set (issue 30): public `vllm bench serve` runs of gpt-oss-120b from two
publishers new to kvplan's benches, frozen before kvplan was run on them, replayed with
prospective30's machinery (tests.benches.prospective_runs.run_one: the engine `estimate` sizes for
the run's model, GPU, TP, vLLM release, max_model_len and memory fraction; a closed loop at the
client's --max-concurrency, every request at the run's fixed lengths, all sent at t = 0).

The runs, their settings, what each source does not state (and the replay assumes), each run's
URL and measured figures are in tests/data/sim_to_real/prospective57.json, committed (7ead0892,
branch prosp57, base a86cb96f) before any of them was simulated. The set was replayed once, at
7ead0892, with no change to any rule or constant: FIRST_EVALUATION and FIRST_ROWS are that
evaluation, typed in as the record; every other figure of the section is computed by the replay,
so the page follows later rule changes while the record stays. No row is fitted; the set shaped
one rule since, vLLM's engine-core host work (ENGINE_CORE; tests/benches/fitted_rows.py
SHAPED_BY 2d9ccc00).

Run: python -m tests.benches.prospective57_runs (the section of examples/simulate-bench.md).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from kvplan import load_spec
from kvplan._util.units import GiB
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from tests.benches.dashboard_log57 import log_note
from tests.benches.prospective_runs import (
    PAIRS,
    PAIRS52,
    REPO,
    Result,
    _err,
    medians_line,
    open_section,
    print_first_rows,
    print_medians_head,
    print_run_table,
    print_sources,
    publisher,
    runs_by_id,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective57.json"
FREEZE = "7ead0892"  # the data file's commit; the first evaluation ran on it

# The set's first evaluation, at 7ead0892 (no kvplan code changed on the branch), as printed then.
FIRST_EVALUATION = (
    "first evaluated at 7ead0892, the freeze's commit (no kvplan code changed on the branch), "
    "11 of 11 runs simulated, none refused: median |error| TTFT mean / median 72.0 / 81.3 %, "
    "TPOT mean / median 26.5 / 25.4 %, ITL 26.5 %; with --frontend TTFT mean 55.0 %, TPOT mean "
    "29.9 %; the one run that saved E2E (vLLM perf-dashboard, H200): E2E mean / median -12.0 / "
    "-11.7 %")

# The first evaluation per run (7ead0892): mean TTFT and mean TPOT error, predicted / measured - 1.
FIRST_ROWS = {
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP8 1 replica 5000/250 conc 4 (20 prompts)":
        (-0.766, -0.325),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP8 1 replica 5000/250 conc 8 (40 prompts)":
        (-0.663, -0.278),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP8 1 replica 5000/250 conc 16 (80 prompts)":
        (-0.700, -0.265),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP8 1 replica 5000/250 conc 32 (160 prompts)":
        (-0.740, -0.245),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP8 1 replica 5000/250 conc 48 (240 prompts)":
        (-0.709, -0.154),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP8 1 replica 5000/250 conc 64 (320 prompts)":
        (-0.658, -0.134),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP2 1 replica 5000/250 conc 32 (160 prompts)":
        (-0.799, -0.332),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP2 1 replica 1/250 conc 32 (160 prompts)":
        (-0.839, -0.179),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP2 1 replica 50000/250 conc 32 (160 prompts)":
        (-0.674, -0.554),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP4 1 replica 8000/1000 conc 64 (320 prompts)":
        (-0.789, -0.339),
    "vllm perf-dashboard gpt-oss-120b H200 TP8 1024/1024 conc 64 (640 prompts) "
    "--async-scheduling": (-0.720, -0.090),
}


# The perf-dashboard run's KV pool as its committed server log prints it (benchmark/results/
# server.log at a106355: "Available KV cache memory: 115.89 GiB", "GPU KV cache size: 13,502,608
# tokens"; the server's non-default args include max_num_seqs 64). Measured, not kvplan's.
LOGGED_KV_GIB = 115.89
LOGGED_KV_TOKENS = 13_502_608
DASHBOARD = ("vllm perf-dashboard gpt-oss-120b H200 TP8 1024/1024 conc 64 (640 prompts) "
             "--async-scheduling")


# vLLM 0.15's sampler (`simulate --generation-config`, opt-in; rule frozen at 70bdd3b0 before
# this set was replayed with it): tests/benches/sampler_runs.py.
SAMPLER = (
    "vLLM 0.15's sampler (`kvplan simulate --generation-config`, opt-in, tests/benches/"
    "sampler_runs.py; its rule frozen at 70bdd3b0 before this set was replayed with it): it "
    "is read for vLLM 0.15 only, so it applies to the perf-dashboard run alone, whose client "
    "sends temperature 0 (benchmark/lib/backend_request_func.py): greedy, the logits cast to "
    "float32 and an argmax, 10 bytes an element of 64 x 201,088. Its mean TPOT error moves "
    "-9.0 -> -8.5 % (TTFT -72.0 % unchanged); Anyscale's vLLM 0.11.0 runs are left out.")

# vLLM's engine-core host work (kvplan.engines.vllm.engine_core; tests/benches/engine_core_runs.py),
# written after this set's first evaluation: its figures at the freeze, off -> on, typed in.
ENGINE_CORE = (
    "vLLM's engine-core host work (kvplan.engines.vllm.engine_core: 71.1 us + 11.98 us per "
    "scheduled request a step, measured with vLLM's own Scheduler and shm MessageQueue on one "
    "CPU, no serving row), after the GPU step without async scheduling: this set's Anyscale "
    "runs (vLLM 0.11.0, synchronous), whose TPOT sat an almost constant 1.7-2.4 ms a step above "
    "kvplan's from concurrency 4 to 64, led to it (SHAPED_BY 2d9ccc00), so they are no test of "
    "it. Frozen opt-in at 2d9ccc00, off -> on: TPOT mean median |error| 26.5 -> 23.1 % (the TP8 "
    "sweep -32.5 -> -30.5 % at concurrency 4, -13.4 -> -6.7 % at 64), TTFT 72.0 -> 72.0 %; the "
    "perf-dashboard run (async scheduling) does not move. It was made the default after the "
    "held-out sets improved or did not move (tests/benches/engine_core_runs.py), so the tables "
    "above include it. It adds 0.12 ms a step at concurrency 4 and 0.84 ms at 64: most of the "
    "constant gap is still unexplained (not in it: the worker's input preparation, the "
    "sampler's host side, Ray's executor, which Ray Serve runs).")


def kv_pool(run: dict, max_num_seqs: int | None) -> tuple[float, int]:  # type: ignore[type-arg]
    """kvplan's KV budget (GiB) and reported KV tokens for `run` as the replay sizes it, with
    `max_num_seqs` (None: vLLM's default as kvplan reads it)."""
    spec = load_spec(str(REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine=Engine.vllm, engine_version=run["vllm"],
                             mem_fraction=run.get("gpu_memory_utilization"),
                             max_num_seqs=max_num_seqs,
                             # run.sh:142 VLLM_MXFP4_USE_MARLIN=1 (vLLM 0.15.1's Hopper default
                             # is Triton: kvplan.engines.vllm.mxfp4_backend; sized alike)
                             mxfp4_backend="marlin")
    plan = setup(spec, inputs)[0].plan
    return plan.kv_budget_bytes / GiB, plan.reported_kv_cache_tokens


def kv_note() -> str:
    """The perf-dashboard run's logged KV pool against kvplan's (read after the first evaluation;
    the replay does not pass max_num_seqs, and at 64 requests of 2,048 tokens no pool binds)."""
    run = runs_by_id(DATA)[DASHBOARD]
    default_gib, default_tokens = kv_pool(run, None)
    stated_gib, stated_tokens = kv_pool(run, 64)
    return ("KV pool check (read after the first evaluation; no rule changed): the perf-dashboard "
            f"server logged {LOGGED_KV_GIB:.2f} GiB of KV cache per GPU and {LOGGED_KV_TOKENS:,} "
            f"tokens; kvplan sizes {default_gib:.2f} GiB / {default_tokens:,} tokens "
            f"({default_tokens / LOGGED_KV_TOKENS - 1:+.1%}) as the replay runs it (vLLM's "
            f"default max_num_seqs) and {stated_gib:.2f} GiB / {stated_tokens:,} tokens "
            f"({stated_tokens / LOGGED_KV_TOKENS - 1:+.1%}) with the server's max_num_seqs 64. "
            f"The replayed run needs at most {run['workload']['max_concurrency']} x "
            f"{run['workload']['input_len'] + run['workload']['output_len']:,} tokens, so the "
            "difference does not reach its figures.")


def _sweep(part: list[Result]) -> list[Result]:
    """Anyscale's single-replica TP8 5,000 / 250 runs, by concurrency."""
    return sorted((r for r in part if " TP8 1 replica 5000/250 " in r.run_id and not r.refused),
                  key=lambda r: r.measured["total_input_tokens"])


def finding(part: list[Result]) -> str:
    """What the replay shows, computed from the results (no figure typed in)."""
    done = [r for r in part if not r.refused]
    low = sum(_err(r, *PAIRS[0]) < 0 for r in done)
    gaps = [r.measured["mean_ttft_ms"] - r.simulated["ttft_ms.mean"] for r in _sweep(part)]
    sweep = _sweep(part)
    tpot = [r.measured["mean_tpot_ms"] - r.simulated["tpot_ms.mean"] for r in sweep]
    text = (f"What the replay shows (computed; no rule was changed). (1) TTFT: kvplan's mean TTFT "
            f"is below the measured on {low} of {len(done)} runs.")
    if sweep:
        text += (f" On Anyscale's TP8 sweep (5,000-token prompts, concurrency 4 to 64) the "
                 f"measured mean exceeds kvplan's by {min(gaps):,.0f} to {max(gaps):,.0f} ms; "
                 f"at the lowest concurrency, where requests barely queue, the gap is "
                 f"{gaps[0]:,.0f} ms ({gaps[0] / sweep[0].measured['mean_ttft_ms']:.0%} of the "
                 f"measured): time outside the engine's steps, on a serving path kvplan does not "
                 f"model (the engine runs in a Ray Serve replica behind Ray Serve's OpenAI "
                 f"ingress, not behind vLLM's API server, whose stage --frontend simulates). (2) "
                 f"TPOT: on the same sweep kvplan's mean TPOT error "
                 f"goes from {_err(sweep[0], *PAIRS[2]):+.1%} at the lowest concurrency to "
                 f"{_err(sweep[-1], *PAIRS[2]):+.1%} at the highest; in time, the measured "
                 f"mean exceeds kvplan's by {min(tpot):.2f} to {max(tpot):.2f} ms a token across "
                 f"the sweep.")
    tiny = [r for r in done if " 1/250 " in r.run_id]
    if tiny:
        gap = tiny[0].measured["mean_ttft_ms"] - tiny[0].simulated["ttft_ms.mean"]
        text += (f" On TTFT again, the TP2 run of 1-token prompts (no prefill work) measures "
                 f"{tiny[0].measured['mean_ttft_ms']:.1f} ms of mean TTFT against kvplan's "
                 f"{tiny[0].simulated['ttft_ms.mean']:.1f}: {gap:.1f} ms a request on this "
                 f"serving path that no engine step explains.")
    dash = [r for r in done if "perf-dashboard" in r.run_id]
    if dash:
        text += (f" (3) The vLLM perf-dashboard run (vLLM 0.15.1 behind its own API server, H200 "
                 f"TP8, 1,024 / 1,024 at concurrency 64): TPOT {_err(dash[0], *PAIRS[2]):+.1%}, "
                 f"E2E {_err(dash[0], 'mean_e2e_ms', 'e2e_ms', 'mean'):+.1%}, TTFT "
                 f"{_err(dash[0], *PAIRS[0]):+.1%}.")
    return text


# Recorded after the set's evaluations (branch gpustackfi61, the data file's 'amended'; no rule
# changed, fitted_rows.py SHAPED_BY a8ca5e54). The runner's output before it (ebdc3c18) and after
# it is the same: the larger pool never binds (TP 2 50000/250 at 32: 107,757 -> 121,910 blocks).
AMENDED = (
    "Read later (gpustackfi61, prospective57.json's 'amended'): Anyscale's stack installs "
    "flashinfer-python 0.2.14.post1 beside vLLM 0.11.0, so the ten Anyscale runs ran "
    "FlashInfer's top-k/top-p warm-up, not the sort (a larger pool); they say so now and are no "
    "test of that setting. No figure below moved: the pool bound none of these runs either "
    "way.")


def print_section() -> None:
    """The prospective57 set as a Markdown section of examples/simulate-bench.md."""
    doc, part = open_section(DATA, "Prospective 57: Anyscale's Ray Serve LLM runs and the vLLM "
                                   "perf-dashboard's run of gpt-oss-120b, frozen before kvplan "
                                   "was run on them")
    refused = [r for r in part if r.refused]
    with_e2e = [r for r in part if "mean_e2e_ms" in r.measured]
    print(f"{len(part)} runs, each evaluated once with no change to any rule ({FIRST_EVALUATION}) "
          "(tests/benches/prospective57_runs.py replays them with prospective30's machinery: a "
          "closed loop at the client's --max-concurrency, every request at the run's fixed "
          "lengths). Errors are predicted / measured - 1; the medians are of their absolute "
          f"values, this set alone, over the runs kvplan simulated ({len(part) - len(refused)} "
          f"of {len(part)}; "
          + (f"{len(refused)} refused, each with its reason in the tables" if refused
             else "none refused") + "). The "
          "issue's target: TTFT <= 15 %, TPOT / ITL and E2E <= 10 %. No constant was fitted on a "
          "vLLM gpt-oss-120b row; the set shaped one rule since its first evaluation, vLLM's "
          "engine-core host work (tests/benches/fitted_rows.py SHAPED_BY; the last paragraph), "
          "so it is no test of that rule; the --frontend stage was fitted on another host's "
          "vLLM API server, and Anyscale's runs are served by Ray Serve's ingress, so its line "
          "there measures a serving path it was not written for. The runs of one layout at "
          "several concurrencies share a configuration. Only one model (gpt-oss-120b, MXFP4) "
          "and two publishers met the selection rule in this search; the 'skipped' list says "
          f"what else was read. {AMENDED}\n")
    print_medians_head()
    print(medians_line("prospective57", part))
    print(medians_line("prospective57, with --frontend", part, served=True))
    for name in dict.fromkeys(publisher(doc, r) for r in part):
        print(medians_line(f"prospective57, publisher {name}",
                           [r for r in part if publisher(doc, r) == name]))
    for source in dict.fromkeys(r.source for r in part):
        print(medians_line(f"prospective57, {source}", [r for r in part if r.source == source]))
    print_run_table([r for r in part if r not in with_e2e])
    print("\nThe run that saved E2E (the perf-dashboard's; Anyscale's saved results carry none):\n")
    print_medians_head(e2e=True)
    print(medians_line("prospective57, runs with E2E", with_e2e, pairs=PAIRS52))
    print_run_table(with_e2e, e2e=True)
    print_first_rows(part, FREEZE, FIRST_ROWS)
    done = [r for r in part if not r.refused]
    if done:
        ratio = statistics.median(r.measured["mean_ttft_ms"] / r.simulated["ttft_ms.mean"]
                                  for r in done)
        print(f"\nMedian measured / simulated mean TTFT over the simulated runs: {ratio:.2f}x.")
    print(f"\n{finding(part)}")
    print(f"\n{kv_note()}")
    dash = [r for r in done if r.run_id == DASHBOARD]
    if dash:
        # The server log's steps beside kvplan's (tests.benches.dashboard_log57; gptoss58).
        print("\n" + log_note(runs_by_id(DATA)[DASHBOARD], dash[0].measured["mean_ttft_ms"],
                              dash[0].simulated["ttft_ms.mean"]))
    print(f"\n{SAMPLER}")
    print(f"\n{ENGINE_CORE}")
    print_sources(doc, "prospective57.json")


if __name__ == "__main__":
    print_section()
