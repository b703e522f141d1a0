"""The server environment an InferenceX row's launch script exports, where it picks a kernel
kvplan prices differently from the engine's default (marlinrow66, issue 30): the aggregated
bench (tests.benches.aiconfig_agg_runs.row_setup) replays such a row with the setting its
source states, not kvplan's default choice.

DECISION (marlinrow66, from the code): kvplan's default is RIGHT for vLLM 0.18.0 on SM 9.0 and
the scripts OVERRIDE it, so the replay passes the override (`--mxfp4-backend marlin`,
estimate_inputs' mxfp4_backend), no rule changes.

- vLLM 0.18.0 (sdist), model_executor/layers/quantization/mxfp4.py:109-170
  get_mxfp4_backend: on CUDA SM 9.0, FlashInfer's SM90 MXFP4 x BF16 only with
  VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1 (envs.py:1245-1246, default "0"); then (:165) Marlin
  where VLLM_MXFP4_USE_MARLIN is set (envs.py:1138-1139) or triton_kernels is missing, else
  Triton (:169). kvplan.engines.vllm.mxfp4_backend reads the same: Triton by default from
  0.11.1, Marlin when chosen.
- SemiAnalysisAI/InferenceX at cec542a9a (2026-03-27 08:01 UTC, "update gptoss H100 & H200 vLLM
  image to v0.18.0", #960; the commit the rows' `image=vllm/vllm-openai:v0.18.0`, measured
  2026-03-27, ran: .github/configs/nvidia-master.yaml:3224-3225 gptoss-fp4-h100-vllm and
  :3503-3504 gptoss-fp4-h200-vllm, image v0.18.0): benchmarks/single_node/gptoss_fp4_h100.sh:28
  and gptoss_fp4_h200.sh:47 `export VLLM_MXFP4_USE_MARLIN=1`; neither exports a
  VLLM_USE_FLASHINFER_MOE_MXFP4_* variable. The bench's cited InferenceX commit
  (aiconfig_harness.INFERENCEX_COMMIT, 1cb92d21, 2026-03-24, an ancestor) still names image
  v0.15.1 with the same two lines: the export is in every script from the v0.13.0 update
  (4e52ed4c6, 2026-01-02) to the v0.18.0 one.
- The H100 rows of vLLM 0.11.2 (image v0.11.2, measured 2025-12-08) ran scripts that export no
  MXFP4 variable (benchmarks/gptoss_fp4_h100_docker.sh / _slurm.sh at 4e135fd3f, 2025-12-08):
  kvplan's default (Triton from 0.11.1) is theirs; not in MARLIN_SCRIPTS. (None is replayed:
  all over the bench's CPU bound.)
- The B200 rows (vLLM 0.15.1) run FlashInfer's kernels (gptoss_fp4_b200.sh); kvplan sizes them
  with Marlin's layout already and prices the time by its own rule: not touched here.

The scripts' other serve flags (no prefix caching, --max-num-batched-tokens 8192, their
--max-model-len, --max-num-seqs C) move no row at these loads (gptosshopper62's `script`
replay equals its `marlin` one on all 108 rows) and stay at the bench's frozen defaults.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.benches import aiconfig_agg_client

MODEL = "openai/gpt-oss-120b"
# (system, vLLM release) -> the InferenceX script line that exports VLLM_MXFP4_USE_MARLIN=1 for
# the rows of that image (module docstring; InferenceX at cec542a9a).
MARLIN_SCRIPTS = {
    ("h100_sxm", "0.18.0"): "benchmarks/single_node/gptoss_fp4_h100.sh:28",
    ("h200_sxm", "0.18.0"): "benchmarks/single_node/gptoss_fp4_h200.sh:47",
}


def mxfp4_backend(row: dict[str, str]) -> str | None:
    """The MXFP4 MoE backend the row's script chose (as --mxfp4-backend), None where it chose
    none (kvplan's default for the release then stands)."""
    if (row["backend"] != "vllm" or row["model_path"] != MODEL
            or not aiconfig_agg_client.inferencex(row)):
        return None
    return "marlin" if (row["system"], row["backend_version"]) in MARLIN_SCRIPTS else None


@contextmanager
def kvplan_defaults() -> Iterator[None]:
    """Inside, the bench replays every row with every flag at kvplan's default
    (aiconfig_agg_runs.SCRIPT_ENV off: the bench before marlinrow66), as the records of
    gptosshopper62's `frozen` arm and tpslope66's default replay were made."""
    from tests.benches import aiconfig_agg_runs as agg  # it imports this module

    was = agg.SCRIPT_ENV
    agg.SCRIPT_ENV = False
    try:
        yield
    finally:
        agg.SCRIPT_ENV = was


# The record of tests.benches.marlinrow66's run (bench frozen at 8dc362ac, before any replay);
# printed after aiconfig_agg_text.GPTOSS_HOPPER_FINDING by aiconfig_agg_runs.print_harness.
FINDING = (
    "marlinrow66: since this change the page's replay of InferenceX's 108 H100 / H200 "
    "gpt-oss-120b vLLM 0.18.0 rows passes the MXFP4 MoE kernel their scripts export "
    "(VLLM_MXFP4_USE_MARLIN=1 at InferenceX cec542a9a, gptoss_fp4_h100.sh:28 / "
    "gptoss_fp4_h200.sh:47: Marlin at its padded shapes), not kvplan's default for vLLM "
    "0.18.0 on SM 9.0 (Triton: mxfp4.py:109-170, which kvplan reads right; the script "
    "overrides it): tests/benches/aiconfig_agg_env.py. SHAPED rows (gptosshopper62 and "
    "tpslope66 read them), nothing fitted: the setting is the source's. Before -> after "
    "(tests/benches/marlinrow66.py, all 108 in both; median |err| TTFT / TPOT, median ratio "
    "TTFT / TPOT, both inside): the page's fixed lengths 30.8 / 5.7 % -> 93.5 / 5.4 %, "
    "1.17 / 0.96 -> 1.94 / 1.02, 44 -> 17 (ISL 8,192: H100 0.99 -> 1.47, H200 0.94 -> 1.52; "
    "ISL 1,024: 1.45 -> 2.30, 1.50 -> 2.34); InferenceX's client workload (CLIENT_WORKLOAD "
    "on) 50.1 / 5.5 % -> 23.8 / 5.5 %, 0.50 / 0.96 -> 0.76 / 1.03, 0 -> 57 (H100 ISL 1,024 "
    "0.51 -> 0.73, 8,192 0.51 -> 0.79; H200 0.46 -> 0.69, 0.51 -> 0.85; TPOT error H100 "
    "5.4 -> 8.8 % and 2.9 -> 7.3 %, H200 5.4 -> 3.5 % and 15.1 -> 2.1 %). So the page's "
    "figures for these rows get WORSE: the fixed lengths' lockstep queue (aiconfig_agg_client's "
    "FINDING) multiplies a slower prefill, and the Triton replay's 1.17 was that queue "
    "flattering a prefill priced at half the measured; under the client's workload, the "
    "more faithful replay, the Marlin kernel the servers ran closes half the TTFT gap. The "
    "rest (ratio 0.76: tpslope66's FINDING, a fixed ~7-11 us a prompt token) is left open.")
