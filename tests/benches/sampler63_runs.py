"""vLLM 0.15's sampler charged by each row's recorded sampling (sampler63, issue 30): the rows
whose client's sampling is known from its harness carry it as a row setting
(tests.benches.row_sampling; the JSONs' 'amended' / runs.json 'sampling_amended' say what was
read), recorded and committed before any row below was replayed with it. The rule is
kvplan's existing sampler stage (kvplan.engines.vllm.sampler over kvplan.perf.sampler_cost:
bytes read in vLLM 0.15.0's code at the GPU's HBM rate, nothing fitted), unchanged here.

The sets, stated before the replay:
- HELD OUT (no sampler rule was written after them): the sim-to-real study's vLLM 0.15.1 runs
  (runs.json 'runs', 'prospective_runs', 'blind_runs': 18 runs, inference-perf, no sampling
  key: Qwen3-14B and Llama-3.1-8B sort the vocabulary, Mixtral samples without a sort) and
  prospective57's vLLM 0.15.1 perf-dashboard run (greedy client: argmax only). Both were
  printed once with this rule at ec7b6e3b (when it stayed opt-in), so they are held out from
  any rule but not unseen.
- SHAPED: prospective56's 26 vLLM 0.15.0 runs (the sampler was read after their concurrency-200
  TPOT miss; fitted_rows SHAPED_BY 70bdd3b0) and prospective62's 49 (its April concurrency-200
  runs motivated vllm200u63 and this task; their concurrency-10 twins were read; its January
  runs share prospective56's January configuration).
- Not entered: the aggregated bench's vLLM 0.15.1 rows (most are InferenceX's runs, whose
  client sends temperature 0.0, but which rows are InferenceX's is not recorded per row); the
  study's offload runs (checkpoints' generation configs not read); every other vLLM row is of
  a release whose sampler kvplan does not read (0.10.2, 0.11.0, 0.13.0, 0.16.0, 0.19 - 0.20).

RESULT (run after the freeze 3df275b0; median |error|, kvplan without -> with the sampler):
- HELD OUT, the study's 11 runs (30 stages; Qwen3-14B and Llama-3.1-8B, TP 1-2, the sort):
  TTFT mean 5.0 -> 7.5 %, TTFT p90 6.0 -> 5.8 %, ITL mean 3.7 -> 4.4 %, E2E mean 2.7 -> 5.3 %,
  E2E p90 2.2 -> 4.8 %: WORSE (the same as at ec7b6e3b). Its Mixtral prospective runs (3 runs,
  9 stages, no sort): 16.9 -> 16.5, 10.7 -> 10.2, 1.8 -> 1.7, 1.2 -> 1.5, 0.7 -> 0.5 %; blind
  (4 runs, 11 stages): 14.0 -> 13.6, 4.7 -> 4.6, 2.5 -> 2.7, 1.9 -> 2.2, 1.6 -> 1.7 %.
  prospective57's greedy run: TPOT mean -9.0 -> -8.5 %, TTFT mean -72.0 -> -72.0 %.
- SHAPED, prospective56 (26): TPOT mean 6.6 -> 6.6 %, TTFT mean 39.6 -> 39.3 %;
  prospective62 (49): TPOT mean 16.8 -> 12.5 %, TTFT mean 45.8 -> 46.2 % (concurrency 200,
  18 runs: TPOT 18.4 -> 9.2 %; concurrency 10, 19: 6.3 -> 8.2 %; the January concurrency-100
  runs, 12: 41.8 -> 45.8 %).
Per stage (signed, study runs 13-25, read after the medians): every Qwen3-14B TP 1 stage was
already above the measured ITL and moves further (+1.9 to +15.3 % -> +4.1 to +34.8 %, the worst
run 13's stage 1); the Llama-3.1-8B stages were below and mostly cross zero (ITL -15.0 to -1.2 %
-> -7.8 to +7.1 %), their E2E rising 2.4-8.6 points. The sampler's price cannot be told apart
from kvplan's other errors on these rows; no rate was changed after reading them.
The rule follows the code (bytes read in vLLM 0.15.0 at the HBM rate, nothing fitted) and the
held-out loss is 0.7 point of ITL and 2.6 of E2E: the bench replays charge each row's recorded
sampling since sampler63 (harness fidelity, not a default of `kvplan simulate`, whose users
keep --generation-config opt-in: the CLI cannot know what the client sends).

Run: python -m tests.benches.sampler63_runs [held-out | shaped] (held out first). Its "default"
columns are the replay without the sampler (sampler_runs.replay, simulate_run
charge_sampling=False).
"""

from __future__ import annotations

import sys

from tests.benches import sampler_runs


def main(which: tuple[str, ...]) -> None:
    if "held-out" in which:
        sampler_runs.print_set("prospective57")
        sampler_runs.print_sim_to_real()
    if "shaped" in which:
        for name in ("prospective56", "prospective62"):
            sampler_runs.print_set(name)


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or ("held-out", "shaped"))
