"""The prospective31 set (issue 30): public `vllm bench serve` runs frozen before kvplan was run
on them, replayed in `kvplan simulate` with prospective30's machinery (tests.benches.
prospective_runs: the same requests, engine sizing and scheduler set-up; a run's
--async-scheduling as its server was started).

The runs, their settings, what each source does not state (and the replay assumes) and their
measured figures are in tests/data/sim_to_real/prospective31.json, committed (f58677aa, branch
prosp31) before any of them was simulated, on ed7b9cf3 (the last rule change before it:
f25f4334). No rule or constant was changed after seeing them. None of their (model, GPU, TP)
is a cost-model row that a fitted constant names or a rule was shaped by
(tests/benches/fitted_rows.py); for the --frontend stage (fitted on prospective30's kvcached
rows) they are held out too.

Run: python -m tests.benches.prospective31_runs (the section of examples/simulate-bench.md).
"""

from __future__ import annotations

from pathlib import Path

from tests.benches.prospective_runs import open_section, print_results

DATA = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / "prospective31.json"
# The workload shapes every source ran (the run id's last word).
CASES = ("32000/100", "4000/200", "2000/100", "128/4")

# Read after the set was first evaluated (no rule or constant changed; the figures are the
# published ones and kvplan's as printed above; kvplan's sizing from `kvplan estimate`).
FINDING = (
    "What dominates the misses (read after the first evaluation; no rule was changed). "
    "(1) Refusals, 8 of 24: kvplan says vLLM would not start two of the configurations on an "
    "80 GB H100, yet both ran. Qwen3-32B (vLLM 0.11, TP 1): 61.03 GiB of weights and a 5.28 "
    "GiB reserve leave a 4.96 GiB KV budget where one 40,960-token request needs 10.00 GiB; "
    "gpt-oss-120b (0.10.2, TP 1, --max-model-len 32768): 65.93 GiB of weights and a 6.90 GiB "
    "reserve leave -1.56 GiB. Either kvplan's non-KV memory is too high for these two models "
    "or the lab's 'NVIDIA H100' is not the 80 GB SXM part the set assumed (the page does not "
    "say; a 94 GB H100 NVL would hold both); the frozen assumption stays. For Qwen3-32B it is "
    "neither (h100pool61, read later; no rule changed; prospective31.json's 'refused_why'): "
    "vLLM 0.11.0's own 1,024-row sampler warm-up leaves no start at 40,960 on an 80 GB H100 "
    "(its bf16 logits and fp32 copy, 933 MB, exceed the 255 MB above 10 GiB), llm-d-benchmark's "
    "logs of this model on one H100 at 0.9 give 4.45 GiB (kvplan 4.96) and fail at 32,000, and "
    "the 32K case's ITLs (mean 42.86 ms, P99 46.54) show no prefill beside a decode, which a "
    "pool of 2,560 blocks or more (a 94 GB part included) would have caused: the server ran a "
    "shorter max_model_len than the printed line. (2) Every simulated "
    "run is too fast, TTFT and TPOT by about the same factor within a run (gpt-oss-20b 32K: "
    "-56.5 % and -56.5 %): with every request sent at once, the whole timeline is compressed. "
    "The mean ITL is the step time while 8,192-token prefill chunks run beside the decodes: "
    "measured 248 ms (gpt-oss-20b, 32K), 229 ms (gpt-oss-120b TP 2) and 303 ms (GLM-4.5-Air "
    "TP 4) against kvplan's 104, 88 and 96 ms, so the engine's mixed step on this host is 2.4x "
    "to 3.2x slower than kvplan's cost model prices it. prospective30's Qwen3-14B page from "
    "the same lab was short by the same sign (0.51-0.57x); one host-wide factor (the GPU "
    "part, its clocks or power cap, the build) or a cost model optimistic for long mixed "
    "prefill steps of these MoE and long-context shapes would each fit, and these rows cannot "
    "tell them apart. --async-scheduling moves kvplan's figures by at most 0.1 % and the "
    "measured long-prompt ones by 0.2-2.9 %. (3) The 128-token / 4-token rows add the API "
    "server's ingestion, as in "
    "prospective30: 1,000 chat requests at once were served at 213 (gpt-oss-20b), 239 "
    "(gpt-oss-120b TP 2) and 48 (GLM-4.5-Air) requests/s; kvplan's engine alone is 68-94 % "
    "short on TTFT, and --frontend (its fitted 84 requests/s ceiling, one other host) "
    "overshoots the gpt-oss rows (+88 % to +114 %) while lifting GLM from -93.8 % to -63.9 %. "
    "Read later (gptosspool61, prospective31.json's 'amended', no rule changed): the lab's "
    "runner image installs FlashInfer, so these vLLM releases ran FlashInfer's top-k/top-p "
    "warm-up, not the sort; the runs now say so, and the gpt-oss-120b TP 1 runs start (4,235 "
    "blocks where the sort left none) and are replayed; Qwen3-32B stays refused (2,021 "
    "blocks). The figures above are the first evaluation's record.")



def print_section() -> None:
    """The prospective31 set as a Markdown section of examples/simulate-bench.md."""
    doc, part = open_section(DATA, "Prospective 31: a second set of public `vllm bench serve` "
                                   "runs frozen before kvplan was run on them")
    print(f"{len(part)} runs, each evaluated once with no change to any rule, their FlashInfer "
          "sampler recorded later (the data file's 'amended') "
          "(tests/benches/prospective31_runs.py replays them with prospective30's machinery; "
          "every request of a run sent at t = 0, as the client did). Errors are predicted / "
          "measured - 1; the medians are of their absolute values, this set alone, over the "
          "runs kvplan simulated. The issue's target: TTFT <= 15 %, TPOT / ITL <= 10 %; no E2E "
          "was printed by these runs. Every run is held out (for the cost model and for the "
          "--frontend stage alike).\n")
    print_results("prospective31", doc, part, FINDING, cases=CASES)

if __name__ == "__main__":
    print_section()
