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

Run: python -m tests.benches.sampler63_runs [held-out | shaped] (held out first).
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
