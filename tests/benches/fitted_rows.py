"""The bench rows each fitted constant was fitted on (collected from kvplan), and the bench
metadata: the rules shaped by held-out rows, the last rule change per bench.

Issue 25 ("honest figures"): every fitted constant declares the rows it was fitted on beside its
value and source, as a `kvplan._util.fitted.Fitted` record in the module that holds it
(`<CONSTANT>_FIT`). FITTED collects those records from the modules in FITTED_MODULES, keyed by
their dotted name; tests/test_fitted_rows.py checks each record against its live constant and
that no module outside FITTED_MODULES declares one.

Row ids: the `id` of a log in tests/data/engine_logs/*.json, or a cost-bench case's label.
`fitted_on=()`: fitted on data that is no bench row (the source says which).

The benches (tests/benches/honest.py) count a row as held out only when it is in no record's
`fitted_on` and shares no fitted row's (model, GPU, TP, EP) configuration.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from kvplan._util.fitted import Fitted

# The modules that declare fitted constants (kvplan's rules; imported here, not registered at
# kvplan's import).
FITTED_MODULES = (
    "kvplan.engines.vllm.budget",
    "kvplan.engines.sglang.budget",
    "kvplan.engines.trtllm.budget",
    "kvplan.perf.efficiency",
    "kvplan.engines.vllm.frontend",
    "kvplan.engines.vllm.engine_core",
    "kvplan.engines.sglang.frontend",
    "kvplan.engines.moe_shape",
)


def collect_fitted() -> dict[str, Fitted]:
    """Every `Fitted` record at module level in FITTED_MODULES, by dotted name, in declaration
    order."""
    found: dict[str, Fitted] = {}
    for name in FITTED_MODULES:
        module = importlib.import_module(name)
        found.update((f"{name}.{attr}", value) for attr, value in vars(module).items()
                     if isinstance(value, Fitted))
    return found


FITTED: dict[str, Fitted] = collect_fitted()


@dataclass(frozen=True, kw_only=True)
class Shaped:
    """A rule written after these rows were in a bench, to fix them: the commit message says
    which rows it moved (the rows were in the bench at that commit: `git merge-base
    --is-ancestor`). Such rows stay out of the fit but are no test of the rule."""

    commit: str
    rule: str
    rows: tuple[str, ...]


# The AccelMark (blind2) runs and prospective30's gpustack runs, whose misses were read before
# the API-server stage was written (tests/data/sim_to_real/runs.json, prospective30.json).
_ACCELMARK_RUNS = (
    "a100-80gb-vllm0.20.1-suite_A", "a100-80gb-vllm0.20.1-suite_C-bf16",
    "a100-80gb-vllm0.20.1-suite_D", "a100-80gb-vllm0.20.1-suite_F",
    "rtx-5090-vllm0.19.1-suite_A", "rtx-5090-vllm0.19.1-suite_C-bf16",
    "rtx-5090-vllm0.19.1-suite_D", "rtx-5090-vllm0.19.1-suite_F")
_GPUSTACK_RUNS = tuple(f"gpustack Qwen3-14B H100 random {case}"
                       for case in ("32000/100", "4000/200", "2000/100", "128/4"))

# The sgl-cookbook GLM-4.6 page's rows: two rules were written for them (below).
_GLM_46_SGLANG_COOKBOOK = tuple(
    f"GLM-4.6 bf16 TP8, SGLang 0.5.6.post1, {run}" for run in (
        "1k/1k, conc. 1", "1k/1k, conc. 16", "1k/1k, conc. 100",
        "1k/8k, conc. 1", "1k/8k, conc. 16", "1k/8k, conc. 64",
        "8k/1k, conc. 1", "8k/1k, conc. 16", "8k/1k, conc. 64",
        "random 1000/1000", "random 1000/8000", "random 8000/1000"))


# aiconfigurator's vLLM Kimi-K2.5 disaggregated rows (tests/benches/disagg_rows.py), read before
# the two rules below were written.
_AIC_KIMI_VLLM = tuple(
    f"aiconfigurator kimik2_5_gb200_vllm_fp4_disagg_{run}" for run in (
        "1024x1024_c1024_cfg697", "1024x1024_c256_cfg697", "1024x1024_c512_cfg697",
        "1024x1024_c128_cfg698", "1024x1024_c8_cfg698", "8192x1024_c32_cfg698",
        "1024x1024_c4_cfg698", "1024x1024_c64_cfg698", "1024x1024_c32_cfg698",
        "1024x1024_c16_cfg698", "8192x1024_c8_cfg698", "8192x1024_c16_cfg698",
        "8192x1024_c4_cfg698", "8192x1024_c128_cfg698"))


# The 50 prospective SGLang FP8 DeepSeek-R1 rows (tests/benches/disagg_rows.py, cohort bc0cfec)
# first replayed after the disaggregated simulator: their misses were read before the GEMM-type
# rule below was written.
_AIC_PROSPECTIVE_BC0CFEC = tuple(f"aiconfigurator {run}" for run in (
        "dsr1_b200_sglang_fp8_disagg_1024x1024_c4_cfg455",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c1024_cfg655",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c128_cfg457",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c128_cfg639",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c160_cfg641",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c256_cfg459",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c288_cfg641",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c288_cfg649",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c32_cfg455",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c4_cfg455",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c512_cfg654",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c64_cfg453",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c64_cfg455",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c2048_cfg523",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c4096_cfg236",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c4096_cfg508",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c4096_cfg523",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c6144_cfg523",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c1024_cfg253",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c1024_cfg533",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c16_cfg536",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c2048_cfg253",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c2048_cfg533",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c4_cfg536",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c512_cfg253",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c512_cfg533",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c6144_cfg253",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c6144_cfg533",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c8_cfg536",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c1024_cfg528",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c16_cfg517",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c2048_cfg528",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c32_cfg517",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c4096_cfg526",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c4096_cfg528",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c4_cfg517",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c6144_cfg528",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c7168_cfg526",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c7680_cfg526",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c8_cfg517",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c1024_cfg505",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c128_cfg505",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c256_cfg505",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c4_cfg519",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c512_cfg505",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c8_cfg519",
        "dsr1_h200_sglang_fp8_disagg_8192x1024_c128_cfg434",
        "dsr1_h200_sglang_fp8_disagg_8192x1024_c256_cfg434",
        "dsr1_h200_sglang_fp8_disagg_8192x1024_c64_cfg434",
))


# The 42 prospective SGLang NVFP4 DeepSeek-R1 rows (tests/benches/disagg_rows.py, cohort dis29),
# first replayed after the GEMM-type rule (bc725f6); with the 50 FP8 rows above, every replayed
# prospective SGLang row: their TTFT (below the measured on 53 of the 56 under 1,024 in flight,
# median 0.46x) was read
# before SGLang's disaggregated time side (63c3946) was written.
_AIC_PROSPECTIVE_DIS29 = tuple(f"aiconfigurator {run}" for run in (
        "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527",
        "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg532",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c1024_cfg538",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c128_cfg530",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c16_cfg535",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c2048_cfg538",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c4_cfg535",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c64_cfg530",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c64_cfg535",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c8_cfg535",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c12000_cfg259",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c32_cfg252",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c32_cfg486",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c4096_cfg483",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c4_cfg486",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c512_cfg483",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c64_cfg252",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c8192_cfg259",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c8192_cfg483",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c8_cfg252",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c8_cfg486",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c1024_cfg254",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c2048_cfg254",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c2048_cfg489",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c32_cfg255",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c4_cfg481",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c64_cfg255",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c8192_cfg254",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c8_cfg481",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c2048_cfg576",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c32_cfg571",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c4096_cfg576",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c4_cfg571",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c512_cfg576",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c8192_cfg576",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c8_cfg571",
        "dsr1_gb300_sglang_fp4_disagg_8192x1024_c2048_cfg575",
        "dsr1_gb300_sglang_fp4_disagg_8192x1024_c32_cfg569",
        "dsr1_gb300_sglang_fp4_disagg_8192x1024_c4_cfg569",
        "dsr1_gb300_sglang_fp4_disagg_8192x1024_c64_cfg569",
        "dsr1_gb300_sglang_fp4_disagg_8192x1024_c8_cfg569",
))


# The prospective SGLang DeepSeek-R1 rows whose prefill workers run DP attention (both cohorts,
# tests/benches/disagg_rows.py): their saturated prefill rates (Little's law over the measured
# times) were read before SGLang's per-rank chunked prefill size under DP attention was written.
_AIC_SGLANG_DP_PREFILL = tuple(f"aiconfigurator {run}" for run in (
        "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527",
        "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg532",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c1024_cfg538",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c128_cfg530",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c2048_cfg538",
        "dsr1_b200_sglang_fp4_disagg_8192x1024_c64_cfg530",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c1024_cfg655",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c128_cfg457",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c128_cfg639",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c160_cfg641",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c256_cfg459",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c288_cfg641",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c288_cfg649",
        "dsr1_b200_sglang_fp8_disagg_8192x1024_c512_cfg654",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c12000_cfg259",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c32_cfg252",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c4096_cfg483",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c512_cfg483",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c64_cfg252",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c8192_cfg259",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c8192_cfg483",
        "dsr1_gb200_sglang_fp4_disagg_1024x1024_c8_cfg252",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c1024_cfg254",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c2048_cfg254",
        "dsr1_gb200_sglang_fp4_disagg_8192x1024_c8192_cfg254",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c2048_cfg523",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c4096_cfg236",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c4096_cfg508",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c4096_cfg523",
        "dsr1_gb200_sglang_fp8_disagg_1024x1024_c6144_cfg523",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c1024_cfg253",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c1024_cfg533",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c2048_cfg253",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c2048_cfg533",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c512_cfg253",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c512_cfg533",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c6144_cfg253",
        "dsr1_gb200_sglang_fp8_disagg_8192x1024_c6144_cfg533",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c2048_cfg576",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c4096_cfg576",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c512_cfg576",
        "dsr1_gb300_sglang_fp4_disagg_1024x1024_c8192_cfg576",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c1024_cfg528",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c2048_cfg528",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c4096_cfg526",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c4096_cfg528",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c6144_cfg528",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c7168_cfg526",
        "dsr1_gb300_sglang_fp8_disagg_1024x1024_c7680_cfg526",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c1024_cfg505",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c128_cfg505",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c256_cfg505",
        "dsr1_gb300_sglang_fp8_disagg_8192x1024_c512_cfg505",
))

# The sim-to-real study's Mixtral stages (prospective 28, 30, 31; blind 49, 50, 51, 56; offload
# 9, 10, 11, 29), whose TTFT led to reading vLLM's fused MoE (issue 30).
_SIM_TO_REAL_MIXTRAL = tuple(
    f"sim-to-real study run {run}, stage {i}" for run, n in (
        (28, 2), (30, 2), (31, 2), (49, 2), (50, 2), (51, 1), (56, 2), (9, 2), (10, 2), (11, 1),
        (29, 2)) for i in range(n))


# Every load stage of the sim-to-real study in the simulate bench (tests/benches/sim_to_real.py
# row ids): the 11 runs' 19 (by campaign folder), the prospective runs 28, 30, 31 and the blind
# runs 49, 50, 51, 56 (by the study's run id). The offload runs (runs.json "offload_runs",
# evaluated after every rule here but the fused-MoE one) are in no other record.
_SIM_TO_REAL_ALL = (
    *(f"sim-to-real {folder}, stage {i}" for folder, n in (
        ("13-qwen3-14b-tp1-general-1", 2), ("14-qwen3-14b-tp1-codegen-1", 2),
        ("15-qwen3-14b-tp1-roleplay-1", 1), ("16-llama-3-1-8b-tp1-general-1", 2),
        ("18-llama-3-1-8b-tp1-codegen-1", 2), ("19-llama-3-1-8b-tp1-roleplay-1", 1),
        ("22-llama-3-1-8b-tp1-general-1", 2), ("23-llama-3-1-8b-tp1-general-1", 2),
        ("25-llama-3-1-8b-tp1-general-1", 2), ("26-llama-3-1-8b-tp2-general-2", 2),
        ("46-llama-3-1-8b-tp1-reasoning-1", 1)) for i in range(n)),
    *(f"sim-to-real study run {run}, stage {i}" for run, n in (
        (28, 2), (30, 2), (31, 2), (49, 2), (50, 2), (51, 1), (56, 2)) for i in range(n)),
)


# The rows whose prediction moved when the GPU presets took the driver-reported totals public logs
# print (gpusmi, cb2d7c4: H100-NVL 93.09 GiB, GB300 276.50, MI355X 287.98, ...): the H100 NVL
# start-up log's miss prompted the search; the others move with it. aiconfigurator's 48 GB300
# TensorRT-LLM capacity points were known to over-predict at the nominal 288 GiB.
_GB300_TRTLLM_POINTS = tuple(
    f"aiconfigurator-gb300-{model}-tp{tp}-isl{isl}-osl{osl}-f{fraction}"
    for model in ("qwen3-32b-fp8", "llama-3.1-8b") for fraction in (0.8, 0.9)
    for tp in (1, 2, 4) for isl in (2048, 4096) for osl in (2048, 4096))
_PRESET_TOTALS = ("index-67592774702", "kimi-k2.5-8xmi355x", "qwen2.5-0.5b-h100nvl-shared",
                  "glm-5-fp8-8xmi355x", "qwen3-0.6b-mi355x-rocm-shim", *_GB300_TRTLLM_POINTS)


# prospective53's five DeepSeek-V3.2 runs on gpustack's H200 (tests/benches/prospective53_runs.py):
# they shaped both sparse-attention rules (dsa53, dsa53b).
_GPUSTACK_V32_RUNS = tuple(f"gpustack DeepSeek-V3.2 H200 TP8 random {case}" for case in (
    "32000/100", "4000/200", "2000/100", "128/4", "1000/2000"))


# The vLLM 0.11.0 runs whose server installed FlashInfer, their sampler recorded after their
# evaluation (gpustackfi61): prospective53's DeepSeek-R1-0528 / GLM-4.6 runs and prospective54's
# CloudRift GLM-4.6 runs (prospective30's gpustack rows are _GPUSTACK_RUNS above).
_FLASHINFER_AMENDED = (
    *(f"gpustack {model} H200 TP8 random {case}" for model in ("DeepSeek-R1-0528", "GLM-4.6")
      for case in ("32000/100", "4000/200", "2000/100", "128/4")),
    *(f"cloudrift GLM-4.6 H200 TP8 chat random 1000/1000 conc {conc}" for conc in (1, 512)),
    *_GPUSTACK_RUNS)


# AccelMark's blind2 runs (tests/benches/accelmark_runs.py, every QPS level of each): their A100
# TPOT, short by 1.2-1.6x, led to reading vLLM's attention backend and FlashAttention 2's kernel.
_ACCELMARK_BLIND2 = tuple(
    f"{gpu}-suite_{suite}" for gpu in ("a100-80gb-vllm0.20.1", "rtx-5090-vllm0.19.1")
    for suite in ("A", "C-bf16", "D", "F"))


# The 10 prospective TensorRT-LLM rows (tests/benches/disagg_trtllm.py, cohort trtdis54) whose
# first (blind) evaluation was read before trtgap54's polled transfer was written.
_AIC_PROSPECTIVE_TRTDIS54 = tuple(f"aiconfigurator {run}" for run in (
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c1_cfg662",
    *(f"dsr1_h200_trtllm_fp8_disagg_1024x1024_c{c}_cfg303" for c in (36, 72, 144, 288, 576)),
    "dsr1_h200_trtllm_fp8_disagg_8192x1024_c160_cfg305",
    "dsr1_h200_trtllm_fp8_disagg_8192x1024_c28_cfg297",
    "dsr1_h200_trtllm_fp8_disagg_8192x1024_c48_cfg301",
    "dsr1_h200_trtllm_fp8_disagg_8192x1024_c48_cfg347"))


# The 21 prospective TensorRT-LLM rows (tests/benches/disagg_trtllm.py, 3j) that trtseat58's
# recipe seats moved: their measured seated counts (tests.benches.disagg_trtllm_seats) were read
# before the srt-slurm recipes were looked for.
_AIC_PROSPECTIVE_TRTSEAT58 = tuple(f"aiconfigurator dsr1_{run}" for run in (
    "b200_trtllm_fp4_disagg_1024x1024_c180_cfg320", "b200_trtllm_fp4_disagg_1024x1024_c450_cfg335",
    "b200_trtllm_fp4_disagg_8192x1024_c100_cfg320", "gb200_trtllm_fp4_disagg_1024x1024_c192_cfg388",
    "gb200_trtllm_fp4_disagg_1024x8192_c135_cfg374", "gb200_trtllm_fp4_disagg_8192x1024_c76_cfg388",
    "gb200_trtllm_fp8_disagg_1024x1024_c27_cfg386", "gb200_trtllm_fp8_disagg_1024x8192_c36_cfg378",
    "gb200_trtllm_fp8_disagg_8192x1024_c18_cfg386", "gb200_trtllm_fp8_disagg_8192x1024_c63_cfg386",
    "gb200_trtllm_fp8_disagg_8192x1024_c6_cfg386", "gb300_trtllm_fp4_disagg_1024x1024_c192_cfg417",
    "gb300_trtllm_fp4_disagg_1024x8192_c245_cfg404", "gb300_trtllm_fp4_disagg_8192x1024_c12_cfg417",
    "gb300_trtllm_fp4_disagg_8192x1024_c30_cfg437", "gb300_trtllm_fp4_disagg_8192x1024_c72_cfg385",
    "gb300_trtllm_fp8_disagg_1024x1024_c24_cfg392", "gb300_trtllm_fp8_disagg_1024x1024_c84_cfg392",
    "gb300_trtllm_fp8_disagg_1024x8192_c36_cfg392", "gb300_trtllm_fp8_disagg_8192x1024_c24_cfg392",
    "gb300_trtllm_fp8_disagg_8192x1024_c36_cfg392"))


# The 40 prospective SGLang rows (disagg-bench section 3) whose replay sglseat58's srt-slurm
# recipe flags moved: every replayed SGLang row was read before (sections 3a-3i), and the lead
# (trtseat58's S / users-per-rank lens, median 0.91) came from their measured times. The two
# rows the recipe made replayable (gb200 fp8 cfg502 c4 / c8: prefill --mem-fraction-static 0.95
# where kvplan's default fraction held no KV) had not been evaluated: first evaluation, not here.
# The SGLang rows whose srt-slurm recipe runs --moe-a2a-backend deepep (sgldeepep59): read in
# 3k (sglseat58 named the flag as read and not fed), their DeepEP roles priced as DeepEP after.
_AIC_PROSPECTIVE_SGLDEEPEP59 = tuple(f"aiconfigurator dsr1_{run}" for run in (
    "gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c4096_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c512_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c8192_cfg483",
    "gb200_sglang_fp4_disagg_8192x1024_c2048_cfg489",
    "gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c2048_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c4096_cfg508",
    "gb200_sglang_fp8_disagg_1024x1024_c4096_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c6144_cfg523",
    "gb200_sglang_fp8_disagg_8192x1024_c1024_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c2048_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c512_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c6144_cfg533",
    "gb300_sglang_fp4_disagg_1024x1024_c2048_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c4096_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c512_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c8192_cfg576",
    "gb300_sglang_fp4_disagg_8192x1024_c2048_cfg575",
    "gb300_sglang_fp8_disagg_1024x1024_c1024_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c2048_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c4096_cfg526",
    "gb300_sglang_fp8_disagg_1024x1024_c4096_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c6144_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c7168_cfg526",
    "gb300_sglang_fp8_disagg_1024x1024_c7680_cfg526",
    "gb300_sglang_fp8_disagg_8192x1024_c1024_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c128_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c256_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c512_cfg505"))

_AIC_PROSPECTIVE_SGLSEAT58 = tuple(f"aiconfigurator dsr1_{run}" for run in (
    "gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c32_cfg486",
    "gb200_sglang_fp4_disagg_1024x1024_c4096_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c512_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c8192_cfg483",
    "gb200_sglang_fp4_disagg_8192x1024_c2048_cfg489",
    "gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c2048_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c4096_cfg508",
    "gb200_sglang_fp8_disagg_1024x1024_c4096_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c6144_cfg523",
    "gb200_sglang_fp8_disagg_8192x1024_c1024_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c2048_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c512_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c6144_cfg533",
    "gb300_sglang_fp4_disagg_1024x1024_c2048_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c32_cfg571",
    "gb300_sglang_fp4_disagg_1024x1024_c4096_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c512_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c8192_cfg576",
    "gb300_sglang_fp4_disagg_8192x1024_c2048_cfg575",
    "gb300_sglang_fp8_disagg_1024x1024_c1024_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c16_cfg517",
    "gb300_sglang_fp8_disagg_1024x1024_c2048_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c32_cfg517",
    "gb300_sglang_fp8_disagg_1024x1024_c4096_cfg526",
    "gb300_sglang_fp8_disagg_1024x1024_c4096_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c6144_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c7168_cfg526",
    "gb300_sglang_fp8_disagg_1024x1024_c7680_cfg526",
    "gb300_sglang_fp8_disagg_1024x1024_c8_cfg517",
    "gb300_sglang_fp8_disagg_8192x1024_c1024_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c128_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c256_cfg505", "gb300_sglang_fp8_disagg_8192x1024_c4_cfg519",
    "gb300_sglang_fp8_disagg_8192x1024_c512_cfg505", "gb300_sglang_fp8_disagg_8192x1024_c8_cfg519",
    "h200_sglang_fp8_disagg_8192x1024_c128_cfg434", "h200_sglang_fp8_disagg_8192x1024_c256_cfg434",
    "h200_sglang_fp8_disagg_8192x1024_c64_cfg434"))


# The 8 prospective TensorRT-LLM H100 rows (3j) that trtttft61's recipe provenance moved: their
# measured TTFT (500-900 decode steps, falling as users are added) was read, and the recipes
# InferenceX named for them looked for, before the rule (srt_slurm_recipes.NAMED_BEFORE).
_AIC_PROSPECTIVE_TRTTTFT61 = tuple(f"aiconfigurator dsr1_h100_trtllm_fp8_disagg_{run}" for run in (
    "1024x1024_c6_cfg494", "1024x1024_c9_cfg494", "1024x1024_c30_cfg494",
    "1024x1024_c60_cfg494", "8192x1024_c6_cfg494", "8192x1024_c9_cfg494",
    "8192x1024_c30_cfg494", "8192x1024_c154_cfg503"))


# The 84 prospective TensorRT-LLM rows (3j) whose replay sglseat58's context-server recipe
# settings changed: the lead (trtseat58's, the context servers binding cfg346 / cfg315 / cfg412
# first) came from their replays, read before the rule.
_AIC_PROSPECTIVE_TRTCTX58 = tuple(f"aiconfigurator dsr1_{run}" for run in (
    "b200_trtllm_fp4_disagg_1024x1024_c10_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c15_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c180_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c2192_cfg346",
    "b200_trtllm_fp4_disagg_1024x1024_c25_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c4096_cfg309",
    "b200_trtllm_fp4_disagg_1024x1024_c450_cfg335",
    "b200_trtllm_fp4_disagg_1024x1024_c45_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c90_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c100_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c10_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c15_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c25_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c370_cfg315",
    "b200_trtllm_fp4_disagg_8192x1024_c50_cfg320",
    "b200_trtllm_fp8_disagg_1024x1024_c1920_cfg564",
    "b200_trtllm_fp8_disagg_1024x1024_c4096_cfg549",
    "gb200_trtllm_fp4_disagg_1024x1024_c12_cfg388",
    "gb200_trtllm_fp4_disagg_1024x1024_c192_cfg388",
    "gb200_trtllm_fp4_disagg_1024x1024_c24_cfg388",
    "gb200_trtllm_fp4_disagg_1024x1024_c48_cfg388",
    "gb200_trtllm_fp4_disagg_1024x1024_c6144_cfg411",
    "gb200_trtllm_fp4_disagg_1024x1024_c96_cfg388",
    "gb200_trtllm_fp4_disagg_1024x8192_c135_cfg374",
    "gb200_trtllm_fp4_disagg_1024x8192_c2048_cfg239",
    "gb200_trtllm_fp4_disagg_1024x8192_c4096_cfg239",
    "gb200_trtllm_fp4_disagg_1024x8192_c60_cfg374",
    "gb200_trtllm_fp4_disagg_1024x8192_c7_cfg423",
    "gb200_trtllm_fp4_disagg_1024x8192_c8192_cfg239",
    "gb200_trtllm_fp4_disagg_8192x1024_c12_cfg388",
    "gb200_trtllm_fp4_disagg_8192x1024_c4096_cfg362",
    "gb200_trtllm_fp4_disagg_8192x1024_c44_cfg388",
    "gb200_trtllm_fp4_disagg_8192x1024_c76_cfg388",
    "gb200_trtllm_fp8_disagg_1024x1024_c256_cfg375",
    "gb200_trtllm_fp8_disagg_1024x1024_c27_cfg386",
    "gb200_trtllm_fp8_disagg_1024x1024_c6144_cfg416",
    "gb200_trtllm_fp8_disagg_1024x8192_c2048_cfg375",
    "gb200_trtllm_fp8_disagg_1024x8192_c36_cfg378",
    "gb200_trtllm_fp8_disagg_1024x8192_c8192_cfg435",
    "gb200_trtllm_fp8_disagg_8192x1024_c18_cfg386",
    "gb200_trtllm_fp8_disagg_8192x1024_c63_cfg386",
    "gb300_trtllm_fp4_disagg_1024x1024_c12_cfg417",
    "gb300_trtllm_fp4_disagg_1024x1024_c192_cfg417",
    "gb300_trtllm_fp4_disagg_1024x1024_c48_cfg417",
    "gb300_trtllm_fp4_disagg_1024x1024_c8192_cfg387",
    "gb300_trtllm_fp4_disagg_1024x1024_c96_cfg417",
    "gb300_trtllm_fp4_disagg_1024x8192_c1024_cfg373",
    "gb300_trtllm_fp4_disagg_1024x8192_c245_cfg404",
    "gb300_trtllm_fp4_disagg_1024x8192_c4096_cfg373",
    "gb300_trtllm_fp4_disagg_1024x8192_c60_cfg421",
    "gb300_trtllm_fp4_disagg_1024x8192_c7_cfg404",
    "gb300_trtllm_fp4_disagg_1024x8192_c8192_cfg373",
    "gb300_trtllm_fp4_disagg_8192x1024_c12_cfg417",
    "gb300_trtllm_fp4_disagg_8192x1024_c15_cfg437",
    "gb300_trtllm_fp4_disagg_8192x1024_c30_cfg437",
    "gb300_trtllm_fp4_disagg_8192x1024_c3228_cfg412",
    "gb300_trtllm_fp4_disagg_8192x1024_c5_cfg437",
    "gb300_trtllm_fp4_disagg_8192x1024_c72_cfg385",
    "gb300_trtllm_fp8_disagg_1024x1024_c12288_cfg418",
    "gb300_trtllm_fp8_disagg_1024x1024_c24_cfg392",
    "gb300_trtllm_fp8_disagg_1024x1024_c84_cfg392",
    "gb300_trtllm_fp8_disagg_1024x8192_c1024_cfg462",
    "gb300_trtllm_fp8_disagg_1024x8192_c36_cfg392",
    "gb300_trtllm_fp8_disagg_1024x8192_c4096_cfg488",
    "gb300_trtllm_fp8_disagg_1024x8192_c8192_cfg488",
    "gb300_trtllm_fp8_disagg_8192x1024_c24_cfg392",
    "gb300_trtllm_fp8_disagg_8192x1024_c36_cfg392",
    "gb300_trtllm_fp8_disagg_8192x1024_c512_cfg436",
    "h200_trtllm_fp8_disagg_1024x1024_c1152_cfg321",
    "h200_trtllm_fp8_disagg_1024x1024_c144_cfg590",
    "h200_trtllm_fp8_disagg_1024x1024_c1536_cfg336",
    "h200_trtllm_fp8_disagg_1024x1024_c288_cfg590",
    "h200_trtllm_fp8_disagg_1024x1024_c3584_cfg328",
    "h200_trtllm_fp8_disagg_1024x1024_c36_cfg590",
    "h200_trtllm_fp8_disagg_1024x1024_c576_cfg590",
    "h200_trtllm_fp8_disagg_1024x1024_c72_cfg590",
    "h200_trtllm_fp8_disagg_8192x1024_c128_cfg675",
    "h200_trtllm_fp8_disagg_8192x1024_c160_cfg305",
    "h200_trtllm_fp8_disagg_8192x1024_c192_cfg674",
    "h200_trtllm_fp8_disagg_8192x1024_c28_cfg297",
    "h200_trtllm_fp8_disagg_8192x1024_c48_cfg301",
    "h200_trtllm_fp8_disagg_8192x1024_c48_cfg347",
    "h200_trtllm_fp8_disagg_8192x1024_c512_cfg673",
    "h200_trtllm_fp8_disagg_8192x1024_c768_cfg679"))


# aiconfigurator's aggregated vLLM rows stated as attention DP (tests/benches/aiconfig_agg_runs.py,
# cohort aggdp55: TP 4 x DP 4 EP 16, 61 rows, and TP 2 x DP 2 EP 4, 36), read after their first
# evaluation (the 16-GPU rows' TTFT 5.46x the measured): every one is an InferenceX single-node
# run whose layout aiconfigurator's adapter restated (tests.benches.aiconfig_agg_dp.as_run).
# Every replayed prospective SGLang / TensorRT-LLM row of disagg-bench sections 3a-3k and 3j
# (217 at 113e3005): disaggwhy59's forensic (tests/benches/disagg_forensic.py) classified all of
# them before sa-bench's measurement and srt-slurm's frontend routing were read and written.
_AIC_PROSPECTIVE_WHY59 = tuple(f"aiconfigurator dsr1_{run}" for run in (
    "b200_sglang_fp4_disagg_1024x1024_c512_cfg527",
    "b200_sglang_fp4_disagg_1024x1024_c512_cfg532",
    "b200_sglang_fp4_disagg_8192x1024_c1024_cfg538",
    "b200_sglang_fp4_disagg_8192x1024_c128_cfg530",
    "b200_sglang_fp4_disagg_8192x1024_c16_cfg535",
    "b200_sglang_fp4_disagg_8192x1024_c2048_cfg538",
    "b200_sglang_fp4_disagg_8192x1024_c4_cfg535",
    "b200_sglang_fp4_disagg_8192x1024_c64_cfg530",
    "b200_sglang_fp4_disagg_8192x1024_c64_cfg535",
    "b200_sglang_fp4_disagg_8192x1024_c8_cfg535",
    "b200_sglang_fp8_disagg_1024x1024_c4_cfg455",
    "b200_sglang_fp8_disagg_8192x1024_c1024_cfg655",
    "b200_sglang_fp8_disagg_8192x1024_c128_cfg457",
    "b200_sglang_fp8_disagg_8192x1024_c128_cfg639",
    "b200_sglang_fp8_disagg_8192x1024_c160_cfg641",
    "b200_sglang_fp8_disagg_8192x1024_c256_cfg459",
    "b200_sglang_fp8_disagg_8192x1024_c288_cfg641",
    "b200_sglang_fp8_disagg_8192x1024_c288_cfg649",
    "b200_sglang_fp8_disagg_8192x1024_c32_cfg455",
    "b200_sglang_fp8_disagg_8192x1024_c4_cfg455",
    "b200_sglang_fp8_disagg_8192x1024_c512_cfg654",
    "b200_sglang_fp8_disagg_8192x1024_c64_cfg453",
    "b200_sglang_fp8_disagg_8192x1024_c64_cfg455",
    "b200_trtllm_fp4_disagg_1024x1024_c10_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c15_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c180_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c2192_cfg346",
    "b200_trtllm_fp4_disagg_1024x1024_c25_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c4096_cfg309",
    "b200_trtllm_fp4_disagg_1024x1024_c450_cfg335",
    "b200_trtllm_fp4_disagg_1024x1024_c45_cfg320",
    "b200_trtllm_fp4_disagg_1024x1024_c90_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c100_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c10_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c15_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c25_cfg320",
    "b200_trtllm_fp4_disagg_8192x1024_c370_cfg315",
    "b200_trtllm_fp4_disagg_8192x1024_c50_cfg320",
    "b200_trtllm_fp8_disagg_1024x1024_c1920_cfg564",
    "b200_trtllm_fp8_disagg_1024x1024_c4096_cfg549",
    "b200_trtllm_fp8_disagg_8192x1024_c128_cfg549",
    "b200_trtllm_fp8_disagg_8192x1024_c128_cfg553",
    "b200_trtllm_fp8_disagg_8192x1024_c128_cfg566",
    "b200_trtllm_fp8_disagg_8192x1024_c128_cfg661",
    "b200_trtllm_fp8_disagg_8192x1024_c128_cfg666",
    "b200_trtllm_fp8_disagg_8192x1024_c128_cfg670",
    "b200_trtllm_fp8_disagg_8192x1024_c1_cfg556",
    "b200_trtllm_fp8_disagg_8192x1024_c1_cfg662",
    "b200_trtllm_fp8_disagg_8192x1024_c256_cfg549",
    "b200_trtllm_fp8_disagg_8192x1024_c256_cfg666",
    "b200_trtllm_fp8_disagg_8192x1024_c32_cfg553",
    "b200_trtllm_fp8_disagg_8192x1024_c32_cfg661",
    "b200_trtllm_fp8_disagg_8192x1024_c640_cfg555",
    "b200_trtllm_fp8_disagg_8192x1024_c640_cfg667",
    "b200_trtllm_fp8_disagg_8192x1024_c96_cfg554",
    "b200_trtllm_fp8_disagg_8192x1024_c96_cfg669",
    "gb200_sglang_fp4_disagg_1024x1024_c12000_cfg259",
    "gb200_sglang_fp4_disagg_1024x1024_c2048_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c32_cfg252",
    "gb200_sglang_fp4_disagg_1024x1024_c32_cfg486",
    "gb200_sglang_fp4_disagg_1024x1024_c4096_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c4_cfg486",
    "gb200_sglang_fp4_disagg_1024x1024_c512_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c64_cfg252",
    "gb200_sglang_fp4_disagg_1024x1024_c8192_cfg259",
    "gb200_sglang_fp4_disagg_1024x1024_c8192_cfg483",
    "gb200_sglang_fp4_disagg_1024x1024_c8_cfg252",
    "gb200_sglang_fp4_disagg_1024x1024_c8_cfg486",
    "gb200_sglang_fp4_disagg_8192x1024_c1024_cfg254",
    "gb200_sglang_fp4_disagg_8192x1024_c2048_cfg254",
    "gb200_sglang_fp4_disagg_8192x1024_c2048_cfg489",
    "gb200_sglang_fp4_disagg_8192x1024_c32_cfg255",
    "gb200_sglang_fp4_disagg_8192x1024_c4_cfg481",
    "gb200_sglang_fp4_disagg_8192x1024_c64_cfg255",
    "gb200_sglang_fp4_disagg_8192x1024_c8192_cfg254",
    "gb200_sglang_fp4_disagg_8192x1024_c8_cfg481",
    "gb200_sglang_fp8_disagg_1024x1024_c1024_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c2048_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c4096_cfg236",
    "gb200_sglang_fp8_disagg_1024x1024_c4096_cfg508",
    "gb200_sglang_fp8_disagg_1024x1024_c4096_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c4_cfg502",
    "gb200_sglang_fp8_disagg_1024x1024_c6144_cfg523",
    "gb200_sglang_fp8_disagg_1024x1024_c8_cfg502",
    "gb200_sglang_fp8_disagg_8192x1024_c1024_cfg253",
    "gb200_sglang_fp8_disagg_8192x1024_c1024_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c16_cfg536",
    "gb200_sglang_fp8_disagg_8192x1024_c2048_cfg253",
    "gb200_sglang_fp8_disagg_8192x1024_c2048_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c4_cfg536",
    "gb200_sglang_fp8_disagg_8192x1024_c512_cfg253",
    "gb200_sglang_fp8_disagg_8192x1024_c512_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c6144_cfg253",
    "gb200_sglang_fp8_disagg_8192x1024_c6144_cfg533",
    "gb200_sglang_fp8_disagg_8192x1024_c8_cfg536",
    "gb200_trtllm_fp4_disagg_1024x1024_c12_cfg388",
    "gb200_trtllm_fp4_disagg_1024x1024_c192_cfg388",
    "gb200_trtllm_fp4_disagg_1024x1024_c24_cfg388",
    "gb200_trtllm_fp4_disagg_1024x1024_c48_cfg388",
    "gb200_trtllm_fp4_disagg_1024x1024_c6144_cfg411",
    "gb200_trtllm_fp4_disagg_1024x1024_c96_cfg388",
    "gb200_trtllm_fp4_disagg_1024x8192_c135_cfg374",
    "gb200_trtllm_fp4_disagg_1024x8192_c2048_cfg239",
    "gb200_trtllm_fp4_disagg_1024x8192_c4096_cfg239",
    "gb200_trtllm_fp4_disagg_1024x8192_c60_cfg374",
    "gb200_trtllm_fp4_disagg_1024x8192_c7_cfg423",
    "gb200_trtllm_fp4_disagg_1024x8192_c8192_cfg239",
    "gb200_trtllm_fp4_disagg_8192x1024_c12_cfg388",
    "gb200_trtllm_fp4_disagg_8192x1024_c4096_cfg362",
    "gb200_trtllm_fp4_disagg_8192x1024_c44_cfg388",
    "gb200_trtllm_fp4_disagg_8192x1024_c76_cfg388",
    "gb200_trtllm_fp8_disagg_1024x1024_c256_cfg375",
    "gb200_trtllm_fp8_disagg_1024x1024_c27_cfg386",
    "gb200_trtllm_fp8_disagg_1024x1024_c3_cfg386",
    "gb200_trtllm_fp8_disagg_1024x1024_c6144_cfg416",
    "gb200_trtllm_fp8_disagg_1024x8192_c2048_cfg375",
    "gb200_trtllm_fp8_disagg_1024x8192_c36_cfg378",
    "gb200_trtllm_fp8_disagg_1024x8192_c4_cfg378",
    "gb200_trtllm_fp8_disagg_1024x8192_c8192_cfg435",
    "gb200_trtllm_fp8_disagg_8192x1024_c18_cfg386",
    "gb200_trtllm_fp8_disagg_8192x1024_c63_cfg386",
    "gb200_trtllm_fp8_disagg_8192x1024_c6_cfg386",
    "gb300_sglang_fp4_disagg_1024x1024_c2048_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c32_cfg571",
    "gb300_sglang_fp4_disagg_1024x1024_c4096_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c4_cfg571",
    "gb300_sglang_fp4_disagg_1024x1024_c512_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c8192_cfg576",
    "gb300_sglang_fp4_disagg_1024x1024_c8_cfg571",
    "gb300_sglang_fp4_disagg_8192x1024_c2048_cfg575",
    "gb300_sglang_fp4_disagg_8192x1024_c32_cfg569",
    "gb300_sglang_fp4_disagg_8192x1024_c4_cfg569",
    "gb300_sglang_fp4_disagg_8192x1024_c64_cfg569",
    "gb300_sglang_fp4_disagg_8192x1024_c8_cfg569",
    "gb300_sglang_fp8_disagg_1024x1024_c1024_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c16_cfg517",
    "gb300_sglang_fp8_disagg_1024x1024_c2048_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c32_cfg517",
    "gb300_sglang_fp8_disagg_1024x1024_c4096_cfg526",
    "gb300_sglang_fp8_disagg_1024x1024_c4096_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c4_cfg517",
    "gb300_sglang_fp8_disagg_1024x1024_c6144_cfg528",
    "gb300_sglang_fp8_disagg_1024x1024_c7168_cfg526",
    "gb300_sglang_fp8_disagg_1024x1024_c7680_cfg526",
    "gb300_sglang_fp8_disagg_1024x1024_c8_cfg517",
    "gb300_sglang_fp8_disagg_8192x1024_c1024_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c128_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c256_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c4_cfg519",
    "gb300_sglang_fp8_disagg_8192x1024_c512_cfg505",
    "gb300_sglang_fp8_disagg_8192x1024_c8_cfg519",
    "gb300_trtllm_fp4_disagg_1024x1024_c12_cfg417",
    "gb300_trtllm_fp4_disagg_1024x1024_c192_cfg417",
    "gb300_trtllm_fp4_disagg_1024x1024_c48_cfg417",
    "gb300_trtllm_fp4_disagg_1024x1024_c8192_cfg387",
    "gb300_trtllm_fp4_disagg_1024x1024_c96_cfg417",
    "gb300_trtllm_fp4_disagg_1024x8192_c1024_cfg373",
    "gb300_trtllm_fp4_disagg_1024x8192_c245_cfg404",
    "gb300_trtllm_fp4_disagg_1024x8192_c4096_cfg373",
    "gb300_trtllm_fp4_disagg_1024x8192_c60_cfg421",
    "gb300_trtllm_fp4_disagg_1024x8192_c7_cfg404",
    "gb300_trtllm_fp4_disagg_1024x8192_c8192_cfg373",
    "gb300_trtllm_fp4_disagg_8192x1024_c12_cfg417",
    "gb300_trtllm_fp4_disagg_8192x1024_c15_cfg437",
    "gb300_trtllm_fp4_disagg_8192x1024_c30_cfg437",
    "gb300_trtllm_fp4_disagg_8192x1024_c3228_cfg412",
    "gb300_trtllm_fp4_disagg_8192x1024_c5_cfg437",
    "gb300_trtllm_fp4_disagg_8192x1024_c72_cfg385",
    "gb300_trtllm_fp8_disagg_1024x1024_c12288_cfg418",
    "gb300_trtllm_fp8_disagg_1024x1024_c24_cfg392",
    "gb300_trtllm_fp8_disagg_1024x1024_c4_cfg392",
    "gb300_trtllm_fp8_disagg_1024x1024_c84_cfg392",
    "gb300_trtllm_fp8_disagg_1024x8192_c1024_cfg462",
    "gb300_trtllm_fp8_disagg_1024x8192_c36_cfg392",
    "gb300_trtllm_fp8_disagg_1024x8192_c4096_cfg488",
    "gb300_trtllm_fp8_disagg_1024x8192_c4_cfg392",
    "gb300_trtllm_fp8_disagg_1024x8192_c8192_cfg488",
    "gb300_trtllm_fp8_disagg_8192x1024_c24_cfg392",
    "gb300_trtllm_fp8_disagg_8192x1024_c36_cfg392",
    "gb300_trtllm_fp8_disagg_8192x1024_c4_cfg392",
    "gb300_trtllm_fp8_disagg_8192x1024_c512_cfg436",
    "h100_trtllm_fp8_disagg_1024x1024_c30_cfg494",
    "h100_trtllm_fp8_disagg_1024x1024_c60_cfg494",
    "h100_trtllm_fp8_disagg_1024x1024_c6_cfg494",
    "h100_trtllm_fp8_disagg_1024x1024_c9_cfg494",
    "h100_trtllm_fp8_disagg_8192x1024_c154_cfg503",
    "h100_trtllm_fp8_disagg_8192x1024_c30_cfg494",
    "h100_trtllm_fp8_disagg_8192x1024_c6_cfg494",
    "h100_trtllm_fp8_disagg_8192x1024_c9_cfg494",
    "h200_sglang_fp8_disagg_8192x1024_c128_cfg434",
    "h200_sglang_fp8_disagg_8192x1024_c256_cfg434",
    "h200_sglang_fp8_disagg_8192x1024_c64_cfg434",
    "h200_trtllm_fp8_disagg_1024x1024_c1152_cfg321",
    "h200_trtllm_fp8_disagg_1024x1024_c144_cfg303",
    "h200_trtllm_fp8_disagg_1024x1024_c144_cfg590",
    "h200_trtllm_fp8_disagg_1024x1024_c1536_cfg336",
    "h200_trtllm_fp8_disagg_1024x1024_c288_cfg303",
    "h200_trtllm_fp8_disagg_1024x1024_c288_cfg590",
    "h200_trtllm_fp8_disagg_1024x1024_c3584_cfg328",
    "h200_trtllm_fp8_disagg_1024x1024_c36_cfg303",
    "h200_trtllm_fp8_disagg_1024x1024_c36_cfg590",
    "h200_trtllm_fp8_disagg_1024x1024_c576_cfg303",
    "h200_trtllm_fp8_disagg_1024x1024_c576_cfg590",
    "h200_trtllm_fp8_disagg_1024x1024_c72_cfg303",
    "h200_trtllm_fp8_disagg_1024x1024_c72_cfg590",
    "h200_trtllm_fp8_disagg_8192x1024_c128_cfg291",
    "h200_trtllm_fp8_disagg_8192x1024_c128_cfg675",
    "h200_trtllm_fp8_disagg_8192x1024_c160_cfg305",
    "h200_trtllm_fp8_disagg_8192x1024_c192_cfg325",
    "h200_trtllm_fp8_disagg_8192x1024_c192_cfg674",
    "h200_trtllm_fp8_disagg_8192x1024_c28_cfg297",
    "h200_trtllm_fp8_disagg_8192x1024_c48_cfg301",
    "h200_trtllm_fp8_disagg_8192x1024_c48_cfg347",
    "h200_trtllm_fp8_disagg_8192x1024_c512_cfg334",
    "h200_trtllm_fp8_disagg_8192x1024_c512_cfg673",
    "h200_trtllm_fp8_disagg_8192x1024_c768_cfg294",
    "h200_trtllm_fp8_disagg_8192x1024_c768_cfg679",
))

# The TensorRT-LLM rows the lead named for rangeratio60 (disagg-bench 3j / 3m: gb200 cfg388 and
# gb300 cfg417 overshooting TTFT at 1.40-1.51 with sa-bench's measurement), every row of those
# two configurations: their misses made the session read sa-bench's --random-range-ratio.
# The SGLang rows whose srt-slurm recipe sets --scheduler-recv-interval 10 on a TP decode role
# (disagg63; tests/benches/disagg_miss63.py), read before its rule.
_AIC_PROSPECTIVE_RECV63 = tuple(f"aiconfigurator dsr1_{run}" for run in (
    *(f"gb200_sglang_fp4_disagg_1024x1024_c{c}_cfg486" for c in (4, 8, 32)),
    *(f"gb200_sglang_fp4_disagg_8192x1024_c{c}_cfg481" for c in (4, 8)),
    *(f"gb200_sglang_fp8_disagg_1024x1024_c{c}_cfg502" for c in (4, 8)),
    *(f"gb200_sglang_fp8_disagg_8192x1024_c{c}_cfg536" for c in (4, 8, 16)),
    *(f"gb300_sglang_fp4_disagg_1024x1024_c{c}_cfg571" for c in (4, 8, 32)),
    *(f"gb300_sglang_fp4_disagg_8192x1024_c{c}_cfg569" for c in (4, 8, 32, 64))))
_AIC_PROSPECTIVE_RANGE60 = tuple(f"aiconfigurator dsr1_{run}" for run in (
    *(f"gb200_trtllm_fp4_disagg_1024x1024_c{c}_cfg388" for c in (12, 24, 48, 96, 192)),
    *(f"gb200_trtllm_fp4_disagg_8192x1024_c{c}_cfg388" for c in (12, 44, 76)),
    *(f"gb300_trtllm_fp4_disagg_1024x1024_c{c}_cfg417" for c in (12, 48, 96, 192)),
    "gb300_trtllm_fp4_disagg_8192x1024_c12_cfg417"))

# The recipe-matched FP8 TensorRT-LLM rows above 1,024 users (disagg-bench 3j) whose Little's-law
# split (tests/benches/trtdis64.py) was read before trtdis64's rule: kvplan's generation ranks
# seated fewer than the measured (gb200 fp8 cfg435 c8192: its bf16 pool 161 of 256 seats).
_AIC_PROSPECTIVE_TRTDIS64 = tuple(f"aiconfigurator dsr1_{run}" for run in (
    "b200_trtllm_fp8_disagg_1024x1024_c1920_cfg564",
    "b200_trtllm_fp8_disagg_1024x1024_c4096_cfg549",
    "gb200_trtllm_fp8_disagg_1024x1024_c6144_cfg416",
    "gb200_trtllm_fp8_disagg_1024x8192_c2048_cfg375",
    "gb200_trtllm_fp8_disagg_1024x8192_c8192_cfg435",
    "gb300_trtllm_fp8_disagg_1024x1024_c12288_cfg418",
    *(f"gb300_trtllm_fp8_disagg_1024x8192_c{c}_cfg488" for c in (4096, 8192)),
    "h200_trtllm_fp8_disagg_1024x1024_c1152_cfg321",
    "h200_trtllm_fp8_disagg_1024x1024_c1536_cfg336",
    "h200_trtllm_fp8_disagg_1024x1024_c3584_cfg328"))

_AIC_AGG_VLLM_DP = tuple(f"aiconfigurator {run}" for run in (
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x1024_c16_tp4_ep4_1317",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x1024_c32_tp4_ep4_1295",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x1024_c4_tp4_ep4_1294",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x1024_c64_tp4_ep4_1313",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x1024_c8_tp4_ep4_1296",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x8192_c16_tp4_ep4_1298",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x8192_c32_tp4_ep4_1318",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x8192_c4_tp4_ep4_1304",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x8192_c64_tp4_ep4_1308",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x8192_c8_tp4_ep4_1309",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_8192x1024_c16_tp4_ep4_1306",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_8192x1024_c32_tp4_ep4_1291",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_8192x1024_c4_tp4_ep4_1301",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_8192x1024_c64_tp4_ep4_1290",
    "2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_8192x1024_c8_tp4_ep4_1303",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c128_tp2_ep2_1401",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c16_tp2_ep2_1387",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c16_tp4_ep4_1397",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c256_tp2_ep2_1390",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c32_tp2_ep2_1384",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c32_tp4_ep4_1393",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c4_tp2_ep2_1389",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c64_tp2_ep2_1395",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c64_tp4_ep4_1392",
    "2026_04_06_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c8_tp2_ep2_1399",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c16_tp4_ep4_1377",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c32_tp4_ep4_1342",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c4_tp4_ep4_1357",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c64_tp4_ep4_1327",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c8_tp4_ep4_1344",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x8192_c16_tp4_ep4_1325",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x8192_c32_tp4_ep4_1354",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x8192_c4_tp4_ep4_1338",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x8192_c64_tp4_ep4_1339",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x8192_c8_tp4_ep4_1360",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_8192x1024_c16_tp4_ep4_1358",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_8192x1024_c32_tp4_ep4_1322",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_8192x1024_c4_tp4_ep4_1323",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_8192x1024_c64_tp4_ep4_1359",
    "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_8192x1024_c8_tp4_ep4_1383",
    "kimik2_5_b200_vllm_fp4_agg_1024x1024_c16_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x1024_c32_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x1024_c4_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x1024_c64_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x1024_c8_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x8192_c16_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x8192_c32_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x8192_c4_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x8192_c64_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_1024x8192_c8_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_8192x1024_c16_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_8192x1024_c32_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_8192x1024_c4_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_8192x1024_c64_cfg635",
    "kimik2_5_b200_vllm_fp4_agg_8192x1024_c8_cfg635",
    "minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c1024_cfg707",
    "minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c128_cfg703",
    "minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c128_cfg706",
    "minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c256_cfg706",
    "minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c256_cfg707",
    "minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c32_cfg703",
    "minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c512_cfg707",
    "minimaxm2_5_b200_vllm_fp4_agg_1024x1024_c64_cfg703",
    "minimaxm2_5_b200_vllm_fp4_agg_8192x1024_c128_cfg706",
    "minimaxm2_5_b200_vllm_fp4_agg_8192x1024_c256_cfg706",
    "minimaxm2_5_b200_vllm_fp4_agg_8192x1024_c512_cfg706",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c128_cfg690",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c16_cfg690",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c16_cfg691",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c256_cfg690",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c256_cfg691",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c32_cfg690",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c32_cfg691",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c4_cfg690",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c512_cfg690",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c512_cfg691",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c64_cfg690",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c64_cfg691",
    "minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c8_cfg690",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c1024_cfg727",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c128_cfg726",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c128_cfg729",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c2048_cfg727",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c256_cfg726",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c256_cfg727",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c32_cfg729",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c512_cfg727",
    "minimaxm2_5_b300_vllm_fp4_agg_1024x1024_c64_cfg729",
    "minimaxm2_5_b300_vllm_fp4_agg_8192x1024_c128_cfg726",
    "minimaxm2_5_b300_vllm_fp4_agg_8192x1024_c256_cfg726",
    "minimaxm2_5_b300_vllm_fp4_agg_8192x1024_c512_cfg726",
    "minimaxm2_5_b300_vllm_fp4_agg_8192x1024_c512_cfg727",
    "minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c1024_cfg735",
    "minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c1024_cfg827",
    "minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c256_cfg734",
    "minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c512_cfg734",
    "minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c512_cfg735",
))

# aiconfigurator's aggregated TensorRT-LLM attention-DP rows the frozen bench replays (cohort
# aggdp55, tests/benches/aiconfig_agg_dp.py), read before the balance rule below was written.
# prospective62's Scicom April vLLM 0.15.0 runs at concurrency 200 (vllmhost62 read them: the
# --frontend overshoot of their TTFT led to its measured loop).
_PROSPECTIVE62_APRIL_CONC200 = tuple(
    f"scicom vLLM {model} H100 TP8 random {isl}/128 conc 200 ({500 if isl > 1000 else 1000} "
    "prompts)"
    for model, lengths in (("Llama-3.1-70B", (127, 511, 2047, 4095)),
                           ("Qwen3-8B", (128, 512, 2048, 4096)),
                           ("Qwen3-14B", (128, 512, 2048, 4096)),
                           ("Qwen3-32B", (128, 512, 2048, 4096)),
                           ("gpt-oss-120b", (128, 512)))
    for isl in lengths)
# prospective62's Scicom vLLM 0.15.0 runs (the April sweeps at concurrency 10 and 200, read in
# vllm200u63, and the January lengths), every one with its recorded `sampling` (sampler63).
_PROSPECTIVE62_SCICOM_VLLM = tuple(
    r["id"] for r in json.loads((Path(__file__).resolve().parents[1] / "data" / "sim_to_real"
                                 / "prospective62.json").read_text())["runs"]
    if "sampling" in r)
_AIC_AGG_TRT_DP = tuple(f"aiconfigurator 2026_03_25_{run}" for run in (
    "deepseek_r1_b200_sxm_trtllm_fp4_agg_1024x1024_c128_tp8_0_ep8_0_1085",
    "deepseek_r1_b200_sxm_trtllm_fp4_agg_1024x1024_c64_tp8_0_ep8_0_976",
    "deepseek_r1_b200_sxm_trtllm_fp4_agg_8192x1024_c128_tp8_0_ep8_0_1089",
    "deepseek_r1_b200_sxm_trtllm_fp4_agg_8192x1024_c128_tp8_0_ep8_0_987",
    "deepseek_r1_b200_sxm_trtllm_fp4_agg_8192x1024_c64_tp8_0_ep8_0_981",
    "gpt_oss_120b_b200_sxm_trtllm_fp4_agg_1024x1024_c64_tp4_0_ep4_0_1007"))
def _listed_rows(name: str) -> tuple[str, ...]:
    """The bench row ids a file of tests/data/sim_to_real/ lists, one a line ('#': a comment),
    with the bench's "aiconfigurator " prefix."""
    path = Path(__file__).resolve().parents[1] / "data" / "sim_to_real" / name
    return tuple(f"aiconfigurator {line}" for line in path.read_text().splitlines()
                 if line.strip() and not line.startswith("#"))


# The 142 TensorRT-LLM aggregated rows with EP = TP under TP attention (tests/benches/
# aiconfig_agg_runs.py; tests.benches.aiconfig_agg_trtep), replayed and read before trta2a56's
# all-to-all rule was written.
_AIC_AGG_TRT_TP_EP = _listed_rows("aiconfig_agg_trta2a56_rows.txt")
# SGLang nightly d3bae71e's 39 aggregated rows, refused at cohort sglnightly62's first evaluation
# (tests.benches.aiconfig_sglang_nightly) and replayed after the rule below was written.
_AIC_AGG_SGLANG_NIGHTLY = _listed_rows("aiconfig_agg_sglnightly62_rows.txt")

# The 493 TensorRT-LLM aggregated rows replayed at stop 56's end, read (TTFT median ratio 0.616,
# median |error| 55.8 %) before trtprefill57's eager-prefill rule was written.
_AIC_AGG_TRT_ALL = _listed_rows("aiconfig_agg_trtprefill57_rows.txt")
# The 108 InferenceX H100 / H200 gpt-oss-120b vLLM 0.18.0 aggregated rows, read before
# gptosshopper62's forced-Marlin rule and in tpslope66's pool before its padded-shape rule; the
# page replays them with the scripts' Marlin since marlinrow66 (tests.benches.aiconfig_agg_env).
_AIC_AGG_GPTOSS_HOPPER = _listed_rows("aiconfig_agg_gptoss_hopper_rows.txt")


# prospective56's Scicom vLLM 0.15.0 runs (tests/data/sim_to_real/prospective56.json), whose
# first evaluation (TPOT short at concurrency 100-200 on the small models, TTFT short growing
# with concurrency) led to reading vLLM's per-step output path and writing the API server's
# output stage (`simulate --api-output`, kvplan.engines.vllm.frontend ApiOutputCost).
_PROSPECTIVE56_SCICOM_VLLM = tuple(
    f"scicom vLLM {model} H100 TP8 random {isl}/128 conc {c} (1000 prompts)"
    for model, isl, concs in (("Llama-3.1-70B", 1023, (10, 25, 50, 100, 200)),
                              ("Qwen3-14B", 1024, (10, 25, 50, 100, 200)),
                              ("Qwen3-32B", 1024, (10, 25, 50, 200)),
                              ("Qwen3-8B", 1024, (10, 25, 50, 100, 200)),
                              ("gpt-oss-120b", 1024, (10, 25, 50, 200)))
    for c in concs) + tuple(
    f"scicom vLLM Qwen3-32B {gpu} TP8 random 1024/128 conc 100 (100 prompts)"
    for gpu in ("B200", "H100", "H200"))


# prospective57's runs (tests/data/sim_to_real/prospective57.json): the Anyscale vLLM 0.11.0 runs'
# TPOT, an almost constant 1.7-2.4 ms a step above kvplan's from concurrency 4 to 64 (synchronous
# scheduling), led to reading vLLM's engine core and writing its host stage
# (`simulate --engine-core-cpu`, kvplan.engines.vllm.engine_core EngineCoreCost); the whole set
# is counted as shaping it (the perf-dashboard run's figures were read with the rest).
# prospective59's nine DeepSeek-V3.1 runs on 8 x MI300X (SGLang 0.5.7): their TPOT, 20-54 % fast
# at the first evaluation, led to reading SGLang's gfx942 MLA decode (tests/benches/
# mi300x_forensic.py) and to the rule below.
_PROSPECTIVE59_DEEPSEEK = tuple(
    f"sgl-cookbook DeepSeek-V3.1 MI300X TP8 random {case} conc {c}"
    for case, cs in (("1000/1000", (1, 16, 100)), ("1000/8000", (1, 16, 64)),
                     ("8000/1000", (1, 16, 64))) for c in cs)

_PROSPECTIVE57_ALL = (
    *(f"anyscale Ray Serve vLLM gpt-oss-120b H100 TP8 1 replica 5000/250 conc {c} "
      f"({5 * c} prompts)" for c in (4, 8, 16, 32, 48, 64)),
    *(f"anyscale Ray Serve vLLM gpt-oss-120b H100 TP2 1 replica {isl}/250 conc 32 (160 prompts)"
      for isl in (5000, 1, 50000)),
    "anyscale Ray Serve vLLM gpt-oss-120b H100 TP4 1 replica 8000/1000 conc 64 (320 prompts)",
    "vllm perf-dashboard gpt-oss-120b H200 TP8 1024/1024 conc 64 (640 prompts) "
    "--async-scheduling")

# prospective60's sixteen gpt-oss rows (gpustack's A100 80GB pages, vLLM 0.11.0, default and tuned
# launch lines): their first evaluation (tests/benches/prospective60_runs.py FIRST_ROWS) led to
# reading what vLLM 0.11.0 runs for gpt-oss on SM 8.0 (issue 30, gptossa100).
_PROSPECTIVE60_GPT_OSS = tuple(
    f"gpustack {model} A100 vLLM {flags}random {case}"
    for model, flags in (("gpt-oss-20b", ""), ("gpt-oss-20b", "--async-scheduling "),
                         ("gpt-oss-120b", ""),
                         ("gpt-oss-120b", "--async-scheduling --max-num-batched-tokens 4096 "))
    for case in ("32000/100", "4000/200", "2000/100", "128/4"))


# The concurrency-1 vLLM rows whose TTFT (1.4-3.8x the simulated, TPOT within -7 .. +17 %) led
# lonepf60 to read vLLM's per-prompt-token host work and its MoE router's dtype
# (tests/benches/lone_prefill.py).
_LONE_PREFILL_READ = (
    "cloudrift GLM-4.6 H200 TP8 chat random 1000/1000 conc 1",
    *(f"Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 {case} chat conc 1 ({n} prompts)"
      for case, n in (("test_01 10240/256", 320), ("test_02 194560/1024", 100),
                      ("test_04 70000/1500", 300), ("test_05 1024/512", 1000))),
)

# prospdis66's fifteen points (section 4c of the disagg bench, "run id @ concurrency"): their
# first evaluation led to prospdis67's forensic and dynnocon67's rule (SHAPED_BY).
_PROSPDIS66_POINTS = tuple(
    f"{run}-{case} @ {c}"
    for run, case, cs in (
        ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4", "3000x150-doc09", (32,)),
        ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4", "3000x150-doc13", (16, 32)),
        ("dynamo-b200-llama70b-fp8-p4xtp1-d1xtp4", "8000x150-doc13", (16, 32)),
        ("dynamo-b200-llama70b-fp8-p3xtp1-d1xtp1", "3000x150-doc11", (16, 32)),
        ("dynamo-2xb200-llama70b-fp8-p3xtp4-d1xtp4", "26000x984-doc14", (16, 32)),
        ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8", "3000x999-doc15", (16, 32)),
        ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8", "8000x999-doc15", (16, 32)),
        ("dynamo-2xb200-dsr1-fp8-p1xtp8ep8-d1xtp8ep8", "16000x999-doc15", (16, 32)))
    for c in cs)

SHAPED_BY: tuple[Shaped, ...] = (
    Shaped(commit="6ef65a3b",
           rule="vLLM's Triton MXFP4 MoE kernel (Hopper from 0.11.1) sized with Marlin's "
                "padding (kvplan/model/quant_formats.py _MXFP4_PADDING), not its create_weights "
                "layout: this log (0.19.0, H100, TP 2, 'Using TRITON Mxfp4 MoE backend') "
                "loads 7.01 GiB, Marlin's layout +1.2 %, the create_weights layout -6.6 %; its "
                "weights stay pinned in the engine bench, so its budget does not move",
           rows=("openai-gpt-oss-20b--h100-80gb--tp2pp1dp1--8192",)),
    Shaped(commit="297958c",
           rule="vLLM's FlashAttention 2 query tiles (SM 8.x / 12.x, 16-bit cache): a decode "
                "token beside a prefill chunk computes a 64-row tile per query head, in a "
                "decode-only step ceil(g / 64) x 64 rows per KV head (flash_api.cpp "
                "mha_varlen_fwd seqlenq_ngroups_swapped, the split-KV kernel's kBlockM 64), "
                "read after these runs' A100 TPOT came out 1.2-1.6x short of the measured",
           rows=_ACCELMARK_BLIND2),
    Shaped(commit="cb2d7c4",
           rule="the GPU presets' device totals as the driver reports them (kvplan/hardware/"
                "gpus.json reported_total, each cited: H100-NVL 93.09 GiB from PyTorch / OpenCL "
                "logs, GB300 276.50 from torchtitan logs, MI325X 255.98, MI355X 287.98; "
                "H100-PCIe, H800 and H20 nvidia-smi's MiB), looked for after the H100 NVL "
                "start-up log came out +7.4 % on the 94 GiB datasheet figure (+3.2 % since)",
           rows=_PRESET_TOTALS),
    Shaped(commit="bc725f6",
           rule="the type a quantized GEMM runs at, by format and card (GemmMath, GPU.runs): "
                "W4A4 NVFP4 at the dense FP4 peak on Blackwell, W8A8 FP8 at FP8, weight-only "
                "formats at bf16, read from the engines' quantization layers after these rows' "
                "misses were seen (NVFP4 had been priced at bf16 math; the FP8 rows move not "
                "at all, already at the FP8 peak)",
           rows=(*_AIC_KIMI_VLLM, *_AIC_PROSPECTIVE_BC0CFEC)),
    Shaped(commit="38d75c1",
           rule="vLLM NIXL's decode side of TTFT (the transfer ends on a decode step's "
                "boundary, then 1.5 steps to the first token), read from vLLM's scheduler "
                "after these rows' TTFT came out far below the measured",
           rows=(*_AIC_KIMI_VLLM, "aiconfigurator "
                 "qwen3_32b_qwen3_32b_h100_sxm_vllm_disagg_4000x1000_c_tp_epnone_2")),
    Shaped(commit="ff02f27",
           rule="vLLM runs EP's all-to-all only with data-parallel attention (TP-attention EP "
                "reduces in the TP all-reduce), read from vLLM's FusedMoEParallelConfig after "
                "these rows' TPOT came out 1.2-1.33x the measured",
           rows=_AIC_KIMI_VLLM),
    Shaped(commit="ce9cfae",
           rule="an --enforce-eager prefill pays the per-op launch time (SGLang's op count and "
                "fitted 70 us per op standing in for vLLM's), and the bench replays these rows "
                "at their public recipes' layouts (DEP4 eager prefill, DEP16 / TEP4 decode), "
                "read after their TTFT came out 0.16-0.31x the measured",
           rows=_AIC_KIMI_VLLM),
    Shaped(commit="06dbf93",
           rule="the disaggregated TTFT / TPOT at a stated concurrency from a closed-loop "
                "two-role simulation (kvplan.analysis.simulate.disagg_sim: prompts batched per "
                "prefill step to the engine's token budget, the Kimi recipes' "
                "max_num_batched_tokens 16,384, the handover on simulated decode step "
                "boundaries; arrivals at one instant share a step, bc0cfec), written after "
                "these rows' M/D/1 TTFT came out 0.52-0.69x the measured at c16-c128",
           rows=_AIC_KIMI_VLLM),
    Shaped(commit="4da0407",
           rule="SGLang's --chunked-prefill-size under DP attention is per rank, the default "
                "// --dp-size (server_args.py _handle_data_parallelism, after "
                "_handle_gpu_memory_settings: GB200 DP4 16,384 -> 4,096 tokens a step, DP8 "
                "2,048), read after these rows' prefill workers came out serving 1.0-2.6x the "
                "measured saturated prompt rate (kvplan.perf.serving, disagg.prefill_batching)",
           rows=_AIC_SGLANG_DP_PREFILL),
    Shaped(commit="63c3946",
           rule="SGLang's disaggregated time side (kvplan.engines.sglang.connectors): the first "
                "token one decode step after the boundary that sees the KV (the overlap decode "
                "loop streams the prebuilt batch's token next iteration), the prefill's overlap "
                "loop forming step k + 1 as step k starts, the prefill's DP rank "
                "bootstrap_room % dp_size (uniform random), read from SGLang 0.5.5.post2 / "
                "0.5.8.post1 after these rows' TTFT came out below the measured on 53 of the "
                "56 under 1,024 in flight (median 0.46x)",
           rows=(*_AIC_PROSPECTIVE_BC0CFEC, *_AIC_PROSPECTIVE_DIS29)),
    Shaped(commit="80acbcc",
           rule="SGLang's prefill input budget (kvplan.analysis.simulate.disagg_sim, "
                "kvplan.engines.sglang.options.MAX_PREFILL_TOKENS): a prompt after the first of "
                "a prefill step joins only while its tokens are below what is left of "
                "--max-prefill-tokens (16,384, not divided by --dp-size), so a TP-attention "
                "prefill on a card of 160 GiB or more (chunk 16,384) takes one 8,192-token prompt "
                "a step, not two, and 15 of 1,024, not 16; read from SGLang 0.5.5.post2 / 0.5.8 / "
                "0.5.8.post1 (managers/schedule_policy.py PrefillAdder.add_one_req) after these "
                "rows' TTFT under load came out below the measured (issue 29, pdload53: median "
                "ratio 0.51 on the TP-attention prefill rows at ISL 8,192)",
           rows=(*_AIC_PROSPECTIVE_BC0CFEC, *_AIC_PROSPECTIVE_DIS29)),
    Shaped(commit="abc0049",
           rule="SGLang's decode-side admission (kvplan.engines.sglang.decode_admission): a "
                "prompt joins the prefill queue once the decode rank preallocates it "
                "(pop_preallocated: FIFO, a request slot, prompt + 512 reserved tokens free "
                "beyond 512 per held request), the simulation holding it until then, read from "
                "SGLang 0.5.5.post2 / 0.5.8.post1 after these rows' TTFT came out far below "
                "the measured at high concurrency (cfg527: 835 vs 7,816 ms)",
           rows=(*_AIC_PROSPECTIVE_BC0CFEC, *_AIC_PROSPECTIVE_DIS29)),
    Shaped(commit="6084616",
           rule="SGLang's prefill without DeepEP (--moe-a2a-backend none, its default): under DP "
                "attention each MLP layer gathers every rank's tokens by an all-reduce of their "
                "sum (SUM_LEN) and all-reduces the output, with no all-to-all; TP-attention EP "
                "no all-to-all either (kvplan.perf.roofline), read from SGLang 0.5.8.post1 "
                "after these rows' prefill workers came out serving a median 1.4x the measured "
                "saturated prompt rate (cfg527 3.7x); decode steps unchanged",
           rows=(*_AIC_PROSPECTIVE_BC0CFEC, *_AIC_PROSPECTIVE_DIS29)),
    Shaped(commit="ca77c7a",
           rule="SGLang's decode without DeepEP (--moe-a2a-backend none, its default): under DP "
                "attention each MLP layer gathers every rank's tokens by an all-gather padded "
                "to the most a rank holds (MAX_LEN) and reduce-scatters the output, with no "
                "all-to-all; TP-attention EP no all-to-all either (kvplan.perf.roofline), read "
                "from SGLang 0.5.5.post2 / 0.5.8.post1 after these rows' TPOT came out below "
                "the measured at high concurrency (cfg526 c7680: 0.36x)",
           rows=(*_AIC_PROSPECTIVE_BC0CFEC, *_AIC_PROSPECTIVE_DIS29)),
    Shaped(commit="f25f433",
           rule="SGLang's dense MLPs, shared experts and lm_head under DP attention split over "
                "the TP group in the time model as in its weights (EngineRules."
                "dp_attention_weights, SGLang 0.5.4 models/deepseek_v2.py:391-424, :601-615, "
                ":2862-2868; kvplan.perf.roofline): a rank streams 1 / tp of them and runs them "
                "on every DP rank's gathered tokens, written after these rows were read (the "
                "capacity side's rule, sgldpw, applied to the step time)",
           rows=(*_AIC_PROSPECTIVE_BC0CFEC, *_AIC_PROSPECTIVE_DIS29)),
    Shaped(commit="11904b0",
           rule="SGLang's split lm_head under DP attention (no --enable-dp-lm-head, its "
                "default): a decode step gathers every DP rank's hidden rows (an all-reduce at "
                "SUM_LEN), all-gathers the bf16 logits of the vocabulary shards over the TP "
                "group and copies them to row order (kvplan.perf.roofline `_logits_gather`), "
                "read from SGLang 0.5.5.post2 / 0.5.8.post1 (layers/logits_processor.py) after "
                "the wide DP32 rows' TPOT came out above the measured at high load (cfg483 "
                "c8192: 1.51x)",
           rows=(*_AIC_PROSPECTIVE_BC0CFEC, *_AIC_PROSPECTIVE_DIS29)),
    Shaped(commit="76916cb",
           rule="B200 / GB200 FP8 (w8a8) GEMMs at 0.55 of the FP8 peak (kvplan.perf.efficiency "
                "DEVICE_EFFICIENCY: SGLang's GB200 DeepGEMM benchmark, sglang PR 13528, 2,771 of "
                "5,000 TFLOPS; not fitted), looked for after these TP-attention ISL 8,192 rows at "
                "4 in flight came out with TTFT 0.58-0.60x the measured (the FP4 rows at 4 in "
                "flight 1.00-1.14x): it moves their prefill by 1-2 %",
           rows=tuple(f"aiconfigurator {run}" for run in (
               "dsr1_b200_sglang_fp8_disagg_8192x1024_c4_cfg455",
               "dsr1_gb200_sglang_fp8_disagg_8192x1024_c4_cfg536",
               "dsr1_gb300_sglang_fp8_disagg_8192x1024_c4_cfg519"))),
    Shaped(commit="a571d7e",
           rule="Llama-4's vision model (bf16 weights, vLLM's encoder profile) and quantization "
                "ignore lists under a multimodal wrapper's language_model. prefix (issue #26's "
                "Llama-4-Scout FP8 TP 2 miss)",
           rows=(
        "inference-sim-17-llama-4-scout-17b-16e-tp2-general-lite-2-1",)),
    Shaped(commit="1ac927c",
           rule="vLLM's fused-MoE buffers by release (freed before the sampler warm-up to 0.13, "
                "kept from 0.14; with EP not split over TP)",
           rows=(
        "index-38962983769",)),
    Shaped(commit="1ac927c",
           rule="issue #26's misses: the fused-MoE caches freed before the sampler to 0.13, the "
                "non-torch figure held beyond the largest measured TP (the dense TP 4 log's "
                "quoted miss was in view; no rule moves it)",
           rows=(
        "index-54698501030-deepseek",
        "index-54698501030-llama",)),
    Shaped(commit="4201d1b",
           rule='vLLM V1 sampler by top-k/top-p path (PyTorch sort 34.64 B per logit before 0.17)',
           rows=(
        "vllm-gce-readme",
        "demo_env_l4-vllm",
        "index-34681159919",)),
    Shaped(commit="b3a3321",
           rule="vLLM's multimodal encoder profile in the reserve (mm_encoder)",
           rows=(
        "google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192",
        "index-51781852921",
        "google-gemma-3-12b-it--h100-80gb--tp1pp1dp1--8192",)),
    Shaped(commit="ab109d0",
           rule='vLLM model runner V2 penalty state counted from 0.27',
           rows=(
        "index-69421856836",)),
    Shaped(commit="d5c63ef",
           rule='vLLM model runner V2 dummy sampler and CUDA-graph estimate',
           rows=(
        "index-61918553602",
        "index-61815222665",
        "index-67109588529",)),
    Shaped(commit="3bd4ba2",
           rule='TensorRT-LLM decode CUDA graphs priced; MoE extra per TP rank + EP step',
           rows=(
        "zufayu-b200-dsr1-fp4-tp8-ep1-1.2.0rc6.post2-fp4_throughput_chat_ep1_c64",
        "zufayu-b300-gptoss120b-tp1-ep1-1.3.0rc10-fwbringup-fp4_throughput_chat_ep1_c1",
        "zufayu-b300-gptoss120b-tp1-ep1-1.3.0rc10-fwbringup-fp4_throughput_chat_ep1_c16",
        "zufayu-b300-gptoss120b-tp1-ep1-1.3.0rc10-fwbringup-fp4_throughput_chat_ep1_c64",
        "zufayu-b300-dsr1-fp4-tp2-ep1-1.3.0rc10-fp4_throughput_chat_ep1_c1",
        "zufayu-b200-dsr1-fp4-tp4-ep4-1.3.0rc10-fp4_throughput_chat_ep4_c64",)),
    Shaped(commit="a0bff23",
           rule="GLM-4.5/4.6's SGLang router and shared expert",
           rows=_GLM_46_SGLANG_COOKBOOK),
    Shaped(commit="6eedbe4",
           rule="SGLang 0.5.6's fused all-reduce + RMSNorm",
           rows=(
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 1",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 16",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 100",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 1",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 16",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/8k, conc. 64",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 1",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 16",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 8k/1k, conc. 64",
        "gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT, conc. 1",
        "gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT, conc. 100",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 1000/1000",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 1000/8000",
        "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, random 8000/1000",
        "gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT",)),
    Shaped(commit="37e807c",
           rule="GLM-4.5's q/k RMSNorm in the eager prefill",
           rows=_GLM_46_SGLANG_COOKBOOK),
    Shaped(commit="0d4004c",
           rule="aiter's fused-MoE least time per call on ROCm",
           rows=(
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 1",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 16",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 100",
        "DeepSeek-V3 FP8 TP8, SGLang ROCm (Feb 2025), bench_one_batch, batch 4",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, random 1000/1000",)),
    Shaped(commit="f715c1e",
           rule='per-device efficiencies for AMD Instinct, the xGMI mesh',
           rows=(
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 1",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 16",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 100",
        "DeepSeek-V3 FP8 TP8, SGLang ROCm (Feb 2025), bench_one_batch, batch 4",
        "Llama-3-8B bf16, SGLang ROCm (Oct 2024), bench_latency, batch 32",
        "Llama-3-8B bf16, SGLang ROCm (Oct 2024), 32 x 256",
        "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, random 1000/1000",)),
    Shaped(commit="d71a63e",
           rule="MiniMax-M2's full-width q/k RMSNorm under attention TP",
           rows=(
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 1k/1k, conc. 1",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 1k/1k, conc. 16",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 1k/1k, conc. 100",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 8k/1k, conc. 1",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 8k/1k, conc. 16",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, 8k/1k, conc. 64",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, 1k/1k, conc. 1",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, 1k/1k, conc. 16",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, 1k/1k, conc. 100",
        "MiniMax-M2.5 FP8 TP4, vLLM 0.12.0, 2k/512, conc. 1",
        "MiniMax-M2.5 FP8 TP4, vLLM 0.12.0, 2k/512, conc. 8",
        "MiniMax-M2.5 FP8 TP4, vLLM 0.12.0, 2k/512, conc. 16",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, random 1000/1000",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, random 8000/1000",
        "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, random 1000/1000",)),
    Shaped(commit="63b9f8f",
           rule="recurrent layers' real work (Qwen3-Next's eager ops, state traffic)",
           rows=(
        "Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT, conc. 1",
        "Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT, conc. 100",
        "Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT",)),
    Shaped(commit="f8fac66",
           rule="TP all-reduce by the engines' custom one-shot / two-shot dispatch",
           rows=(
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 1000 in, conc. 1",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 1000 in, conc. 16",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 1000 in, conc. 100",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 8000 in, conc. 1",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 8000 in, conc. 16",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 8000 in, conc. 64",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 5000/500, conc. 1",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 5000/500, conc. 5",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 5000/500, conc. 25",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 5000/500, conc. 50",
        "Llama-3.3-70B fp8 TP2, NIM 1.8.0, 500/2000, conc. 1",)),
    Shaped(commit="8e5e849",
           rule="SGLang's prefill batching in serving TPOT / TTFT",
           rows=(
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 1000 in, conc. 16",
        "Llama-3.1-70B bf16 TP8, SGLang 0.5.6, 8000 in, conc. 16",
        "Qwen3-235B-A22B bf16 TP8, SGLang 0.5.6, 1k/1k, conc. 100",)),
    Shaped(commit="6a963b5",
           rule="vLLM's async scheduling in the simulator (an arrival waits one more step; on "
                "by default from 0.14): read from vLLM's engine core after these runs' client "
                "TTFT came out about one decode step above the simulated one",
           rows=(
        "sim-to-real 13-qwen3-14b-tp1-general-1, stage 0",
        "sim-to-real 13-qwen3-14b-tp1-general-1, stage 1",
        "sim-to-real 14-qwen3-14b-tp1-codegen-1, stage 0",
        "sim-to-real 14-qwen3-14b-tp1-codegen-1, stage 1",
        "sim-to-real 15-qwen3-14b-tp1-roleplay-1, stage 0",
        "sim-to-real 16-llama-3-1-8b-tp1-general-1, stage 0",
        "sim-to-real 16-llama-3-1-8b-tp1-general-1, stage 1",
        "sim-to-real 18-llama-3-1-8b-tp1-codegen-1, stage 0",
        "sim-to-real 18-llama-3-1-8b-tp1-codegen-1, stage 1",
        "sim-to-real 19-llama-3-1-8b-tp1-roleplay-1, stage 0",
        "sim-to-real 22-llama-3-1-8b-tp1-general-1, stage 0",
        "sim-to-real 22-llama-3-1-8b-tp1-general-1, stage 1",
        "sim-to-real 23-llama-3-1-8b-tp1-general-1, stage 0",
        "sim-to-real 23-llama-3-1-8b-tp1-general-1, stage 1",
        "sim-to-real 25-llama-3-1-8b-tp1-general-1, stage 0",
        "sim-to-real 25-llama-3-1-8b-tp1-general-1, stage 1",
        "sim-to-real 26-llama-3-1-8b-tp2-general-2, stage 0",
        "sim-to-real 26-llama-3-1-8b-tp2-general-2, stage 1",
        "sim-to-real 46-llama-3-1-8b-tp1-reasoning-1, stage 0",
    )),
    Shaped(commit="914a7cc",
           rule="vLLM's API-server tokenizer batcher before the engine (AsyncMicrobatchTokenizer: "
                "a prompt waits up to 2 ms for others, 0.11-0.23; kvplan.engines.vllm.frontend, "
                "read from the code, nothing fitted): read after the study's stages' mean TTFT "
                "stayed below the measured (prospective 22.1 %, blind 19.4 % as first "
                "evaluated, shaped 8.6 %); every stage of the study is shaped by it",
           rows=_SIM_TO_REAL_ALL),
    Shaped(commit="321c880",
           rule="vLLM's API server as a serial per-request CPU stage plus a fixed latency "
                "(`simulate --frontend`, opt-in; kvplan.engines.vllm.frontend ApiServerCost: "
                "its shape read in vLLM's API server, its two constants fitted on kvcached's "
                "rate-inf and rate-16 seed-42 rows): written after AccelMark's lowest-QPS TTFT "
                "came out short by a near-constant time per host and gpustack's 1,000 chat "
                "requests at once were served at 44 req/s against kvplan's 185; those rows "
                "shaped the stage's shape, none set a constant",
           rows=(*_ACCELMARK_RUNS, *_GPUSTACK_RUNS)),
    Shaped(commit="3df5cf3",
           rule="vLLM's Triton fused MoE on 16-bit experts (kvplan.perf.moe_kernel, read in "
                "vLLM 0.15.1's fused_moe.py: each expert's rows padded to BLOCK_SIZE_M, the "
                "activations written and read between its four kernels; nothing fitted): read "
                "after every Mixtral stage of the sim-to-real study came out 11-26 % low on TTFT "
                "(medians before: prospective 17.8 %, blind 16.2 %, offload 22.0 %)",
           rows=_SIM_TO_REAL_MIXTRAL),
    Shaped(commit="d9ac0f2",
           rule="vLLM's Triton fused-MoE JIT compiles (`simulate --moe-jit-compile-ms`, opt-in, "
                "no default: kvplan.engines.vllm.moe_jit, the keys read in vLLM 0.15.1's "
                "fused_moe.py and Triton 3.5.1's specialization; no compile time published, "
                "none set): written after these stages' TTFT stayed 14-21 % low with their ITL "
                "within 3 % (medians: prospective 16.2 %, blind 14.0 %, offload 21.2 %)",
           rows=_SIM_TO_REAL_MIXTRAL),
    Shaped(commit="47fc144",
           rule="DeepSeek's sparse attention (DSA) in the time model (kvplan.perf.attention_cost, "
                "read in vLLM 0.13.0 deepseek_v2.py / flashmla_sparse.py; nothing fitted): the "
                "lightning indexer's replicated projections, FP8 q.k logits over every key seen "
                "and top-k; the main MLA attention over min(seen, index_topk) keys, absorbed in "
                "prefill too; vLLM's FlashMLA sparse kernel on a 16-bit cache computing the "
                "rank's heads padded to 64 (Hopper) / 128 (Blackwell); read after these rows "
                "priced DeepSeek-V3.2 a little cheaper than DeepSeek-R1 on the same host (32K "
                "mean ITL 167.3 against 183.1 ms) where it measured 477.7 against 362.2 ms",
           rows=_GPUSTACK_V32_RUNS),
    Shaped(commit="a7928a7",
           rule="vLLM 0.13's FlashMLA sparse kernels compute every one of the index_topk slots "
                "(the -1 ones masked, not skipped: FlashMLA 46d64a8 sm90/prefill/sparse/"
                "fwd.cu:172), index_topk keys' FLOPs a token at any context; the fp8_ds_mla "
                "cache below 32 heads a rank runs the sparse FP8 decode kernel, heads padded "
                "to 128 on Hopper (nothing fitted): read after dsa53 left these rows 1.2-4.4x "
                "under their measured ITL with a host factor of about 2 shared with R1. After "
                "it the V3.2 / R1 ratio of kvplan's figures on the same host overshoots the "
                "measured one (TPOT 32000/100 1.62 vs 1.29, 4000/200 1.85 vs 1.38, 2000/100 "
                "2.27 vs 1.50, 128/4 2.88 vs 2.22; dsa53 alone: 1.60 / 1.63 / 1.65 / 1.14)",
           rows=_GPUSTACK_V32_RUNS),
    Shaped(commit="dc15ac9",
           rule="TensorRT-LLM's generation server polls the KV transfer "
                "(kvplan.engines.trtllm.disagg_flow (b), Handover.transfer_polled): a request "
                "is taken in at a decode step boundary, its transfer started there "
                "(py_executor.py _prepare_disagg_gen_init -> request_and_receive_async) and "
                "seen done at a later boundary (_check_disagg_gen_transfer_status, "
                "non-blocking), an idle server blocking for it; read after these rows' first "
                "(blind) evaluation left TTFT 0 of 10 inside (median ratio 0.28); about one "
                "decode step, the median unchanged",
           rows=_AIC_PROSPECTIVE_TRTDIS54),
    Shaped(commit="306a8a89",
           rule="TensorRT-LLM disaggregated rows' generation ranks seated at the decode "
                "max_batch_size of the NVIDIA/srt-slurm recipe each InferenceX run is matched "
                "to (tests.benches.srt_slurm_recipes, disagg_rows.recipe_decode_seats; per "
                "rank, executor_request_queue.py), not at the row's decode batch size "
                "(aiconfigurator's InferenceX adapter's C over the ranks); read after the "
                "rows' measured seated counts sat at 32 / 64 where their users a rank were "
                "more; 21 rows move, 3j both inside 9 -> 24 of 123, median TTFT ratio 0.33 -> "
                "0.68",
           rows=_AIC_PROSPECTIVE_TRTSEAT58),
    Shaped(commit="b52ea450",
           rule="SGLang disaggregated rows at the flags of the NVIDIA/srt-slurm recipe each "
                "InferenceX run is matched to (tests.benches.srt_slurm_sglang, "
                "disagg_rows.sglang_recipe_settings): both roles' --mem-fraction-static, "
                "--max-running-requests, --max-total-tokens, the prefill's "
                "--chunked-prefill-size and --max-running-requests per DP rank and its "
                "--max-prefill-tokens, the decode admission at its own --max-running-requests; "
                "read after trtseat58's lens put the rows' S / users-per-rank at median 0.91; "
                "40 rows move, section 3's SGLang rows both inside 24 -> 32 of 92 (+2 first "
                "evaluated, both inside)",
           rows=_AIC_PROSPECTIVE_SGLSEAT58),
    Shaped(commit="97d4ed27",
           rule="SGLang's --moe-a2a-backend deepep priced as DeepEP (kvplan.engines.sglang."
                "deepep: normal-mode prefill, one FP8 copy a token per rank holding one of its "
                "experts, bf16 combine; low-latency decode, one FP8 / NVFP4 message per (token, "
                "expert), bf16 combine; over the EP link in place of SGLang's gathers) with the "
                "DeepEP roles' --moe-dense-tp-size 1 and --enable-dp-lm-head (dense MLPs, "
                "shared experts, lm_head whole on each DP rank), fed from the srt-slurm recipes "
                "(disagg_rows._with_role); read after sglseat58 listed the flag as read and not "
                "fed (3k); 30 rows move, all faster: the 30 DeepEP rows both inside 16 -> 9, "
                "median TTFT / TPOT ratio 0.96 / 0.99 -> 0.65 / 0.81; section 3's SGLang rows "
                "both inside 34 -> 27 of 94",
           rows=_AIC_PROSPECTIVE_SGLDEEPEP59),
    Shaped(commit="3cc77652",
           rule="SGLang's DeepEP dispatch and combine timed by DeepEP's measured kernels "
                "(kvplan.engines.sglang.deepep_speed: aiconfigurator 095f58a51's GB200 / GB300 "
                "wideep_deepep_ll / _normal tables, EP 4 on one tray, a call's time at 1 token "
                "plus its logical bytes at the bandwidth between 1 and 1,024 / 16,384 tokens) "
                "in place of NVLink 5's 720 GB/s and an estimated 8 us; read after 97d4ed27 "
                "moved these rows faster than measured; the 30 DeepEP rows both inside 9 -> 15, "
                "median TTFT / TPOT ratio 0.65 / 0.81 -> 0.81 / 0.87; section 3's SGLang rows "
                "both inside 27 -> 33 of 94",
           rows=_AIC_PROSPECTIVE_SGLDEEPEP59),
    Shaped(commit="723ed03b",
           rule="SGLang --ep-num-redundant-experts: (n + r) / ep routed experts a rank "
                "(kvplan.capacity.weights.redundant_experts_held; R1 at EP 32 + 32: 9 not 8, "
                "2.38 GiB a rank out of the KV pool), the srt-slurm DeepEP roles' 32 fed; read "
                "because these rows' recipes set it (3l listed it as read and not fed); the 30 "
                "DeepEP rows both inside 17 -> 17, TTFT inside 21 -> 23, median TTFT / TPOT "
                "ratio 0.84 / 0.87 -> 0.86 / 0.87; section 3's SGLang rows both 42 -> 42 of 94",
           rows=_AIC_PROSPECTIVE_SGLDEEPEP59),
    Shaped(commit="07479aa1",
           rule="TensorRT-LLM disaggregated rows' context servers at the prefill "
                "max_batch_size / max_num_tokens per rank of the NVIDIA/srt-slurm recipe each "
                "run is matched to (disagg_rows.trt_context_recipe; 2-8 prompts, 8,320-16,896 "
                "tokens a step where the generator's flags took one prompt), both roles' "
                "max_num_tokens from it; read after trtseat58 found the context servers "
                "binding first; 3j both inside 24 -> 24 of 123, TTFT 27 -> 28, TPOT 88 -> 94, "
                "median TTFT ratio 0.68 -> 0.80",
           rows=_AIC_PROSPECTIVE_TRTCTX58),
    Shaped(commit="404cf02c",
           rule="TensorRT-LLM rows at the srt-slurm recipe InferenceX named before NVIDIA/"
                "srt-slurm held it (tests.benches.srt_slurm_recipes.NAMED_BEFORE: InferenceX "
                "32a48459, 2026-02-07, the H100 STP files from the sa-submission-q1-2026 "
                "branch), its first srt-slurm version where its decode max_batch_size is its "
                "name's batch: the H100 rows' generation servers seat 1-64 a server below their "
                "users, the wait in TTFT; read after the rows' TTFT (500-900 decode steps) was "
                "read; 8 rows move",
           rows=_AIC_PROSPECTIVE_TRTTTFT61),
    Shaped(commit="4121cdc6",
           rule="the disaggregated rows replayed as their client measured them and their "
                "frontend routed them: sa-bench's measured run (srt-slurm bench.sh: k x C "
                "requests, k 5 / 8 / 10 by date, every one averaged, each user's first sent at "
                "once: kvplan.analysis.simulate.bench_client) and srt-slurm's Dynamo frontends "
                "behind nginx choosing each role's worker not by load (round-robin per frontend: "
                "kvplan.engines.dynamo_frontend, drawn uniformly), where the simulation "
                "averaged rounds 1-2 of 4 and handed to the least-loaded worker; read after "
                "disaggwhy59's forensic of these rows. Both on as frozen: 3a / 3b / 3j both "
                "inside 12 / 22 / 24 -> 16 / 24 / 28; the frontend's draw then turned off (it "
                "put gb300 fp8 cfg392 c4 at 24-43x the measured TTFT): the client alone, the "
                "default since, 18 / 26 / 28, chosen after these figures were seen",
           rows=_AIC_PROSPECTIVE_WHY59),
    Shaped(commit="0a047bfb",
           rule="the disaggregated rows' requests at sa-bench's own lengths: "
                "--random-range-ratio 0.8 (bench.sh RANDOM_RANGE_RATIO), each prompt and "
                "output drawn uniform in [int(0.8 L), L] from numpy's legacy state at seed 0 in "
                "send order (kvplan.analysis.simulate.range_ratio, bench_client `lengths`), "
                "where every request ran at L; read after the lead named 3j's cfg388 / cfg417 "
                "rows (TTFT 1.40-1.51). Frozen before any row was replayed with it; first "
                "evaluation: 3a / 3b / 3j both inside 19 / 23 / 28 -> 17 / 17 / 36 of 42 / 52 / "
                "123, median TTFT ratio 0.81 / 0.86 / 0.88 -> 0.74 / 0.77 / 0.76",
           rows=_AIC_PROSPECTIVE_RANGE60),
    Shaped(commit="3b43e0fd",
           rule="a recipe-matched TensorRT-LLM row's roles at the srt-slurm recipe's "
                "kv_cache_config.dtype (fp8 on both roles in all 141 versions; "
                "disagg_rows._trt_recipe_kv), where the replay kept the FP8 DeepSeek "
                "checkpoints' bf16 KV; read after trtdis64's Little's-law split of the 3j rows "
                "above 1,024 users (gb200 fp8 cfg435 c8192: kvplan's pool 161 of 256 seats, the "
                "measured 251 seated). Frozen before any row was replayed with it; it moves the "
                "64 matched FP8 rows only (tests/benches/trtdis64.py RESULT)",
           rows=_AIC_PROSPECTIVE_TRTDIS64),
    Shaped(commit="36468964",
           rule="SGLang 0.5.10 on replays prefill steps from piecewise CUDA graphs by default "
                "(server_args.py:637 disable_piecewise_cuda_graph = False; "
                "kvplan.engines.sglang.prefill_graph): a captured step pays the launch time "
                "only for the ops outside the graphs (MiniMax-M2 TP 2: 257, not 1,617; the "
                "70 us constant unchanged, nothing fitted), read after prospective54's "
                "MiniMax-M2.7 TTFT came out 141.4 against 50.3 ms at concurrency 1. After it: "
                "conc. 1 TTFT 46.23 ms (-8.1 %), TPOT 9.01 (unmoved); conc. 100 TPOT 49.48 -> "
                "35.41 ms (measured 35.75), mean TTFT 227.18 -> 99.81 ms (measured 247.94), "
                "median 171.28 -> 76.08 ms (measured 92.05)",
           rows=tuple(f"sgl-cookbook MiniMax-M2.7 GB300 TP2 random 1000/1000 conc {c}"
                      for c in (1, 100))),
    Shaped(commit="b8b24713",
           rule="aiconfigurator's InferenceX single-node vLLM rows replayed at the layout the "
                "run launched, not the one the row states (tests.benches.aiconfig_agg_dp.as_run: "
                "InferenceX's database fills a single-node run's GPUs as tp x ep, "
                "InferenceX-app benchmark-mapper.ts:150-158, and aiconfigurator's vLLM adapter "
                "makes that attention DP = GPUs / tp, MoE EP = GPUs, inferencex.py:139-159 at "
                "095f58a5; the scripts ran `vllm serve --tensor-parallel-size t` on t GPUs, "
                "EP = TP where --enable-expert-parallel is passed, none for Kimi-K2.5 NVFP4 "
                "B200, TP 1 x DP t for the dp-attn configs 707 / 727), read after the stated "
                "TP 4 x DP 4 EP 16 rows' TTFT came out 5.46x the measured (51 replayed; TPOT "
                "1.10): after it 0.76 / 1.07; the TP 2 x DP 2 EP 4 rows (16) 0.88 / 0.86 -> "
                "0.65 / 1.13",
           rows=_AIC_AGG_VLLM_DP),
    Shaped(commit="c7cccdf",
           rule="TensorRT-LLM's attention-DP balance of context requests (attention_dp_config "
                "enable_balance, timeout_iters, batching_wait_iters; py_executor.py _schedule / "
                "_balance_adp_requests: a context request runs when every rank has one or the "
                "wait counter reaches timeout_iters or a rank has no generation request), off "
                "by default as in the engine, so the frozen replay does not move; written after "
                "these rows' first evaluation (aggdp55: TTFT median ratio 21.91, the 1,024-token "
                "rows 0.28-0.52) and read with InferenceX's scripts, which turn it on "
                "(tests/benches/aiconfig_agg_dp_script.py, the counterfactual that uses it)",
           rows=_AIC_AGG_TRT_DP),
    Shaped(commit="72dfef14",
           rule="vLLM's API server loop takes each engine step's outputs after the step "
                "(`simulate --api-output`, opt-in: the default replay does not move): "
                "17.0 us per request given a token, measured with vLLM's own classes on one "
                "CPU (tests/benches/api_output_cost.py), written after these rows' first "
                "evaluation (TPOT -18 to -48 % at concurrency 100-200 on Qwen3-8B, Qwen3-14B, "
                "gpt-oss-120b; TTFT -36 to -85 %); with it (and 2b25c6c8) no run's TPOT moves "
                "and no TTFT by more than 0.1 point (tests/benches/api_output_runs.py)",
           rows=_PROSPECTIVE56_SCICOM_VLLM),
    Shaped(commit="70bdd3b0",
           rule="vLLM 0.15's native sampler charged in each step (`simulate "
                "--generation-config`, opt-in: the default replay does not move; "
                "kvplan.engines.vllm.sampler, kvplan.perf.sampler_cost): its kernels' bytes over "
                "every scheduled request's [rows, vocab] logits (a full-vocabulary radix sort "
                "where top_p < 1) at the HBM rate, nothing fitted; read after these rows' "
                "TPOT miss at concurrency 200 followed the vocabulary (tests/benches/"
                "sampler_runs.py: with it TPOT mean median |error| 6.6 -> 6.6 %, Qwen3-8B at "
                "200 -27.8 -> -10.7 %, at 10 +2.1 -> +6.3 %)",
           rows=_PROSPECTIVE56_SCICOM_VLLM),
    Shaped(commit="2b25c6c8",
           rule="`simulate --api-output`: a request's ingestion waits only for the output work "
                "that reached the API server loop before it (frontend.ServerQueue.leave_s), "
                "written after these stages' first evaluation with the stage, where an "
                "open-loop arrival waited behind the outputs of the step it arrived in and "
                "so one step too many (median |error| of the study runs' mean TTFT 5.0 % "
                "without the stage, 22.5 % with it; 4.3 % after the fix)",
           rows=_SIM_TO_REAL_ALL),
    Shaped(commit="bcea93d",
           rule="TensorRT-LLM's fused MoE runs no EP all-to-all without attention DP "
                "(CutlassFusedMoE.select_alltoall_method_type: NotEnabled where dp_size == 1, "
                "the 1.2 line; enable_alltoall required enable_attention_dp in 1.0 / 1.1), its "
                "experts' outputs reduced in the TP all-reduce: Efficiency."
                "ep_all_to_all_needs_dp for TensorRT-LLM (kvplan.engines.trtllm.engine "
                "cost_traits), read after these rows' replay (TPOT inside 71, median ratio "
                "1.308) charged the all-to-all; after it TPOT inside 100 (1.157), TTFT inside "
                "40 -> 20 (median 1.341 -> 0.522)",
           rows=_AIC_AGG_TRT_TP_EP),
    Shaped(commit="08aee189",
           rule="TensorRT-LLM's PyTorch backend replays CUDA graphs for generation-only steps "
                "only (_torch/pyexecutor/model_engine.py _maybe_get_cuda_graph; no "
                "torch.compile or piecewise prefill graphs by default, 1.0 - 1.2): a step with "
                "a context request launches every op from Python, each at the fitted "
                "prefill_launch_s (70 us, SGLang's fit, not refitted), the ops counted from "
                "TensorRT-LLM's model code (kvplan.perf.trtllm_ops; CostTraits."
                "prefill_op_count), read after these rows' TTFT (median ratio 0.616, median "
                "|error| 55.8 %) showed the gap",
           rows=_AIC_AGG_TRT_ALL),
    Shaped(commit="2d9ccc00",
           rule="vLLM's engine-core host work per step (`simulate --engine-core-cpu`, frozen "
                "opt-in, the default after its held-out evaluation; "
                "kvplan.engines.vllm.engine_core): 71.1 us + "
                "11.98 us per scheduled request, measured with vLLM 0.32's own Scheduler and "
                "shm MessageQueue on one CPU (tests/benches/engine_core_cost.py, no serving "
                "row), after the GPU step without async scheduling, the longer of the two with "
                "it; written after these rows' TPOT sat 1.7-2.4 ms a step above kvplan's "
                "(vLLM 0.11.0, synchronous); with it their TPOT mean median |error| 26.5 -> "
                "23.1 %, TTFT 72.0 -> 72.0 % (tests/benches/engine_core_runs.py)",
           rows=_PROSPECTIVE57_ALL),
    Shaped(commit="8da032bf",
           rule="SGLang's absorbed-MLA decode on gfx942 (MI300X / MI325X) launches 18 kernels a "
                "layer kvplan did not count, from 0.5.7, where aiter runs (16 or 128 heads a "
                "rank, DeepseekV2/V3 with rope_scaling): the YaRN RoPE as PyTorch ops on HIP, "
                "the FP8 W_UK / W_UV cast + scale before a bf16 bmm, q / k torch.cat "
                "(kvplan.engines.sglang.mla_decode), each at the 4 us floor, read after these "
                "rows' TPOT came out 20-54 % fast; with it their TPOT mean median |error| "
                "43.7 -> 28.5 %, E2E mean 44.1 -> 29.3 %, TTFT mean 56.0 -> 55.0 % "
                "(tests/benches/prospective59_runs.py, tests/benches/mi300x_forensic.py)",
           rows=_PROSPECTIVE59_DEEPSEEK),
    Shaped(commit="a412b355",
           rule="SGLang 0.5.7 runs DeepSeek-V3's one shared expert inside the fused MoE on "
                "ROCm gfx942 / gfx950 (models/deepseek_v2.py determine_num_fused_shared_"
                "experts; kvplan.engines.sglang.shared_fusion): the shared MLP's 4 kernels a "
                "MoE layer go from the decode step, 6 ops from the eager prefill's count, its "
                "bytes join the experts' op (a412b355, 73b5bdae); read while decomposing these "
                "rows' decode step (task mi300x67). It moves them the other way (faster): "
                "TPOT mean median |error| 28.5 -> 31.5 %, E2E mean 29.5 -> 31.6 %, TTFT mean "
                "49.0 -> 53.1 % (tests/benches/prospective59_runs.py, mi300x_forensic.py)",
           rows=_PROSPECTIVE59_DEEPSEEK),
    Shaped(commit="a52829a4",
           rule="vLLM's Marlin fused MoE for MXFP4 experts priced (kvplan.engines.vllm."
                "moe_kernel VLLM_MARLIN_MXFP4_MOE: block by the mean rows per expert, "
                "fused_marlin_moe.py:99-103, padded rows and activations as Triton's), read "
                "after these gpt-oss A100 vLLM 0.11.0 rows' TPOT came out 4-87 % fast "
                "(prospective60's first evaluation)",
           rows=_PROSPECTIVE60_GPT_OSS),
    Shaped(commit="f8be70f3",
           rule="vLLM runs Triton unified attention, not FlashAttention 2, for a model with "
                "attention sinks on SM 8.x / 12.x (kvplan.engines.vllm.attention_backend "
                "TRITON_UNIFIED_ATTENTION: a gpt-oss decode 2x its exact FLOPs, not 64x), read "
                "after the same rows",
           rows=_PROSPECTIVE60_GPT_OSS),
    Shaped(commit="a013bb35",
           rule="vLLM to 0.15.1 admits a waiting request on its first chunk's blocks, not "
                "when its whole prompt fits (kvplan.engines.vllm.admission; the simulator's "
                "SchedulerConfig.full_isl_admission), read after the gpt-oss-120b rows' "
                "measured ITL (median 24 ms, mean 233 ms at 32000/100) showed decode spans "
                "holding far more prefill chunks than the replay's two requests at a time",
           rows=_PROSPECTIVE60_GPT_OSS),
    Shaped(commit="9a8d3183",
           rule="vLLM 0.11.0's Triton unified attention runs a decode-only call of at most 128 "
                "programs as its split-KV 3D kernel over 16 segments plus a reduce kernel "
                "(kvplan.perf.split_decode: float32 partials written and read back, one more "
                "kernel a layer), read after these rows (gptoss61's forensic)",
           rows=_PROSPECTIVE60_GPT_OSS),
    Shaped(commit="5e7e9cdb",
           rule="Not a rule, a recorded setting: the lab's vLLM 0.11.0 runs ran FlashInfer's "
                "top-k/top-p sampler warm-up (gpustack's runner image installs FlashInfer; "
                "prospective60.json 'amended', run_one's flashinfer_sampler), read after the "
                "gpt-oss-120b 32000/100 rows' measured TPOT and output rate implied about four "
                "32k requests in the pool where the replay held three (gptosspool61)",
           rows=_PROSPECTIVE60_GPT_OSS),
    Shaped(commit="93d058ba",
           rule="Not a rule, a recorded setting: these vLLM 0.11.0 runs ran FlashInfer's "
                "top-k/top-p sampler warm-up (gpustack's runner image and the official "
                "vllm/vllm-openai v0.11.0 image install FlashInfer; the data files' 'amended', "
                "run_one's flashinfer_sampler), recorded from the servers' install after the "
                "rows were evaluated (gpustackfi61), so they are no test of it",
           rows=_FLASHINFER_AMENDED),
    Shaped(commit="a8ca5e54",
           rule="Not a rule, a recorded setting: Anyscale's vLLM 0.11.0 runs ran FlashInfer's "
                "top-k/top-p sampler warm-up (their SETUP.md lists flashinfer-python "
                "0.2.14.post1; prospective57.json 'amended', run_one's flashinfer_sampler), "
                "recorded from the servers' install after the rows were evaluated "
                "(gpustackfi61), so they are no test of it",
           rows=_PROSPECTIVE57_ALL[:-1]),
    Shaped(commit="7cd05393",
           rule="Not a rule, a recorded setting: llm-d-benchmark's Mistral-Small-3.2-24B run, "
                "the one its doc states as vllm/vllm-openai:v0.11.0 (an image that installs "
                "FlashInfer), ran FlashInfer's top-k/top-p warm-up (the log's "
                "flashinfer_sampler), recorded after its budget came out -8.2 % with the sort "
                "(gpustackfi61): +0.8 % with it, no test of it",
           rows=("llm-d-benchmark-mistral-small-3-2-24b-tp1-16000",)),
    Shaped(commit="47066847",
           rule="The prompt's host work per token before its first step (opt-in, not a "
                "default; kvplan.engines.vllm.frontend.VLLM_PROMPT_HOST_COST): vLLM's "
                "tokenizer, prefix-cache block hashes and msgpack timed through vLLM's own code "
                "on one CPU, 2.32 us a prompt token (tests/benches/prompt_host_cost.py, no "
                "serving row), read after these rows' lone-prompt TTFT",
           rows=_LONE_PREFILL_READ),
    Shaped(commit="64300fdb",
           rule="MiniMax-M2's and GLM-4-MoE's router as vLLM runs it, an FP32 GEMM on CUDA "
                "cores (bench-only tests/benches/lone_prefill.Fp32Router: 2 x experts x hidden "
                "FLOPs a token a MoE layer at the FP32 peak x 0.7), read after these rows' "
                "lone-prompt TTFT",
           rows=_LONE_PREFILL_READ),
    Shaped(commit="63b9be7c",
           rule="The FP32 router GEMM as kvplan's default (fp32router61: kvplan.engines."
                "router_gemm, kvplan.perf.router_cost): each engine's float32 routers read per "
                "release in its model code, priced at the card's FP32 peak x 0.7; the bench-only "
                "rule above made one, read after these rows' lone-prompt TTFT",
           rows=_LONE_PREFILL_READ),
    Shaped(commit="99022c71",
           rule="A nightly build's candidate release that kvplan refuses for not serving the "
                "row's architecture yet is dropped: the row ran on the build "
                "(tests.benches.aiconfig_nightly.replay, sglnightly62), written after these "
                "SGLang nightly d3bae71e rows were refused at 0.5.8.post1",
           rows=_AIC_AGG_SGLANG_NIGHTLY),
    Shaped(commit="bc794cd5",
           rule="Not a rule, a recorded setting: Scicom's January Qwen3-32B vLLM TP 8 length "
                "runs are replayed after their server's earlier lengths, its prefix cache kept "
                "(tests/benches/scicom_vllm_jan_server.py; prospective62.json 'amended'), read "
                "from the harness (benchmaq 7367420, one server a GPU, no cache flag or reset) "
                "after these rows' first evaluation (kvplan slow on all 12; janwarm62)",
           rows=tuple(f"scicom vLLM Qwen3-32B {gpu} TP8 random {n}/128 conc 100 (100 prompts)"
                      for gpu in ("B200", "H100", "H200") for n in (2048, 4096, 8192, 15000))),
    Shaped(commit="153bb2ff",
           rule="NVLink 5's bandwidth 720 -> 588 GB/s (kvplan/hardware/interconnects.json), "
                "measured: the median bus bandwidth of aiconfigurator's 8-rank B200 all-reduces "
                "of 16 MiB-1 GiB (tests.benches.b200vllm63); read after these B200 rows' warm "
                "replay ran 28-42 % fast on TTFT where their H100 / H200 twins ran 8-20 % fast "
                "(b200vllm63; the aggregated B200 / B300 vLLM rows judged it, held out)",
           rows=tuple(f"scicom vLLM Qwen3-32B B200 TP8 random {n}/128 conc 100 (100 prompts)"
                      for n in (1024, 2048, 4096, 8192, 15000))),
    Shaped(commit="63daad97",
           rule="vLLM's `simulate --frontend` as the API server's one loop (opt-in: the default "
                "replay does not move): the work per request measured with vLLM's own code on "
                "one CPU (97.8 us + 2.168 us a prompt token, tests/benches/api_ingest_cost.py) "
                "in place of the 11.85 ms fit, --api-output's stage on the same FIFO, the "
                "latency refitted on kvcached's rate-16 row (25.55 ms); written after these "
                "rows' first evaluation, where --frontend overshot the 128-token runs' mean "
                "TTFT by +178 to +670 % (the fit's 84 requests/s ceiling under the 133 served)",
           rows=_PROSPECTIVE62_APRIL_CONC200),
    Shaped(commit="3df275b0",
           rule="the bench replays (prospective_runs.run_one, sim_to_real.simulate_run) charge "
                "vLLM 0.15's sampler for each row's recorded sampling (tests.benches."
                "row_sampling: the client's keys, else the checkpoint's generation_config), "
                "recorded from the harnesses before any replay; written after prospective62's "
                "April concurrency-200 TPOT miss led vllm200u63 to the sampler (with it that "
                "set's TPOT mean median |error| 16.8 -> 12.5 %, at 200 18.4 -> 9.2 %, at 10 "
                "6.3 -> 8.2 %; tests/benches/sampler63_runs.py)",
           rows=_PROSPECTIVE56_SCICOM_VLLM + _PROSPECTIVE62_SCICOM_VLLM),
    Shaped(commit="f704b035",
           rule="SGLang's decode --scheduler-recv-interval in the disaggregated replay "
                "(kvplan.engines.sglang.decode_admission, 'Taking requests in': new requests "
                "taken every N decode steps, before the preallocation that gates the prefill), "
                "the srt-slurm low-latency TP recipes' 10 fed (disagg_rows._recipe_recv); "
                "written after disagg63's table of these rows' TTFT at <= 16 users was read, "
                "frozen before any replay with it: the 17 rows both inside 6 -> 7, TTFT inside "
                "7 -> 11, median TTFT ratio 0.68 -> 0.84, TPOT unchanged",
           rows=_AIC_PROSPECTIVE_RECV63),
    Shaped(commit="bfe50803",
           rule="vLLM's forced MXFP4 kernel (--mxfp4-backend marlin, as VLLM_MXFP4_USE_MARLIN=1) "
                "reaches the time model (VllmMoeKernels.mxfp4_chosen), written after these "
                "rows' errors were printed (gptosshopper62); on the page since marlinrow66 "
                "passes the scripts' Marlin (tests.benches.aiconfig_agg_env)",
           rows=_AIC_AGG_GPTOSS_HOPPER),
    Shaped(commit="f2738442",
           rule="vLLM's Marlin MXFP4 MoE at its padded shapes (tpslope66), written after these "
                "rows were read in its pool under the client workload, Triton and Marlin; on "
                "the page since marlinrow66",
           rows=_AIC_AGG_GPTOSS_HOPPER),
    Shaped(commit="3c96e0c4",
           rule="decode workers without a KV connector (kvplan.analysis.simulate.disagg_local: "
                "the decode prefills every prompt, its steps MixedStepCost's; vLLM 0.20 NIXL "
                "holds a finished prompt's blocks VLLM_NIXL_ABORT_REQUEST_TIMEOUT = 480 s, "
                "KvConnector.no_decode_connector; FCFS admission on the whole prompt; the first "
                "token at the prefill's return), genai-perf's warm-up + measured requests as one "
                "closed loop, and the data file's decode connector corrected to none: read "
                "after prospdis67's forensic of these points (section 4c's first evaluation, "
                "0 of 15 both): TTFT inside 0 -> 3 of 15, both 0 -> 2, median TTFT ratio "
                "0.09 -> 0.35, TPOT 0.80 -> 1.25",
           rows=_PROSPDIS66_POINTS),
    Shaped(commit="cd63c330",
           rule="each role of a disaggregated row at its deployment's own launch flags "
                "(tests/benches/deploy_flags.py: --gpu-memory-utilization, --block-size, "
                "--max-num-batched-tokens, --no-enable-prefix-caching per role, read from the "
                "publisher's YAMLs into public_disagg_runs66.json): written after section 4c's "
                "first evaluation, prospdis67's forensic and dynnocon67's replay of these "
                "points: both inside 2 -> 2 of 15, TTFT 3 -> 4, TPOT 9 -> 8, median TTFT "
                "ratio 0.35 -> 0.52, TPOT 1.25 -> 1.27",
           rows=_PROSPDIS66_POINTS),
    Shaped(commit="de3a6eac",
           rule="SGLang's DeepSeek shared experts on a second CUDA stream in a captured decode "
                "step (kvplan.engines.sglang.shared_stream; flashinfer_trtllm on SM 10.x keeps "
                "them out of the fused MoE), read after kvplan's decode step on these plain "
                "InferenceX B200 FP8 TP 8 rows (1,024 / 1,024 at 4 / 16 / 64 users) came out "
                "1.8-2.0 ms above the measured TPOT (tests.benches.sgldec67)",
           rows=tuple(f"aiconfigurator 2026_03_25_deepseek_r1_b200_sxm_sglang_fp8_agg_1024x1024_"
                      f"c{c}_tp8_0_ep1_0_{n}" for c, n in ((4, 284), (16, 263), (64, 288)))),
    Shaped(commit="912e2e62",
           rule="SGLang's all-reduce + RMSNorm fusion on SM 9.0 from 0.5.7 and DeepSeek-V3's "
                "shared expert inside fused_moe on CUDA at EP 1 (kvplan.engines.sglang."
                "allreduce_fusion, .shared_fusion), read after sgldec67's decomposition of "
                "these InferenceX H200 FP8 TP 8 rows (1,024 / 1,024 at 4 / 16 / 64 users: "
                "kvplan's decode step +2.0 / +3.2 / +0.6 ms above the measured TPOT; "
                "tests.benches.sglh200_68)",
           rows=tuple(f"aiconfigurator 2026_03_25_deepseek_r1_h200_sxm_sglang_fp8_agg_1024x1024_"
                      f"c{c}_tp8_0_ep1_0_{n}" for c, n in ((4, 289), (16, 285), (64, 256)))),
    Shaped(commit="b1ce8404",
           rule="vLLM's API-server stage with its measured parts only (no fitted latency) as "
                "`vllm serve`'s default (frontdef67, kvplan.engines.vllm.frontend "
                "VLLM_API_LOOP_MEASURED): proposed after the study's +94 % with --frontend's "
                "fitted latency was read; the decision rule frozen (4112a8d6) before any row "
                "was replayed with it (tests/benches/frontdef67.py)",
           rows=_SIM_TO_REAL_ALL),
)


# The simulate bench's replay of SGLang bench_serving random runs at the lengths each run drew
# (tests.benches.simulate_bench.bench_serving_random), written after every such row's TPOT had
# been read (at concurrency 64-100 0.45-0.70 of the measured): no blind test of the replay.
# Not a cost-model rule (the cost bench's predictions of these rows do not move), so apart from
# SHAPED_BY: only simulate-bench.md's split reads it ("held out, shaped the replay").
_SGLANG_BENCH_RANDOM = (
    *(f"Llama-3.1-70B bf16 TP8, SGLang 0.5.6, {isl} in, conc. {c}"
      for isl, cs in (("1000", (1, 16, 100)), ("8000", (1, 16, 64))) for c in cs),
    *(f"{model}, {name}, conc. {c}"
      for model in ("Qwen3-235B-A22B bf16 TP8, SGLang 0.5.6", "DeepSeek-R1 FP8 TP8, SGLang "
                    "0.5.6.post1", "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1",
                    "Qwen3-Coder-Next bf16 TP2, SGLang 0.5.8")
      for name, cs in (("1k/1k", (1, 16, 100)), ("1k/8k", (1, 16, 64)), ("8k/1k", (1, 16, 64)))
      for c in cs),
    *(f"MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, {name}, conc. {c}"
      for name, cs in (("1k/1k", (1, 16, 100)), ("8k/1k", (1, 16, 64))) for c in cs),
    *(f"MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, 1k/1k, conc. {c}" for c in (1, 16, 100)),
    *(f"Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. {c}" for c in (1, 16, 100)),
)
SIM_REPLAY_SHAPED: tuple[Shaped, ...] = (
    Shaped(commit="17439c3",
           rule="SGLang bench_serving random runs replayed at the lengths the run drew (seed 1, "
                "range ratio 0.0: SGLang 0.5.6 bench_serving.py 1227-1236), not at their mean "
                "lengths, written after these rows' TPOT at concurrency 64-100 came out "
                "0.45-0.70 of the measured",
           rows=_SGLANG_BENCH_RANDOM),
)


# The SGLang simulator's prefill step with the cost model's eager launch time (kvplan.perf.
# mixed_step `eager_prefill`; commit f56b322), applied after these rows' measured TTFT (100-150 ms
# at concurrency 1-4 above the simulated) and DeepSeek-R1's P95 ITL at concurrency 100 had been
# read on simulate-bench.md: the rows that led to it. Not a cost-model rule (the cost bench
# already charged the launch: its predictions do not move), so apart from SHAPED_BY: only
# simulate-bench.md's split reads it ("held out, shaped the eager launch", before the replay's).
_SGLANG_TTFT_READ = (
    *(f"Llama-3.1-70B bf16 TP8, SGLang 0.5.6, {isl} in, conc. 1" for isl in ("1000", "8000")),
    *(f"DeepSeek-R1 FP8 TP8, SGLang 0.5.7, {name}, conc. 4" for name in ("1k/1k", "1k/8k",
                                                                         "8k/1k")),
    *(f"{model}, {name}, conc. 1"
      for model in ("Qwen3-235B-A22B bf16 TP8, SGLang 0.5.6", "DeepSeek-R1 FP8 TP8, SGLang "
                    "0.5.6.post1", "GLM-4.6 bf16 TP8, SGLang 0.5.6.post1",
                    "Qwen3-Coder-Next bf16 TP2, SGLang 0.5.8")
      for name in ("1k/1k", "1k/8k", "8k/1k")),
    "Qwen3-Next-80B-A3B bf16 TP8, SGLang 0.5.6, ShareGPT, conc. 1",
    "gpt-oss-120b TP8, SGLang 0.5.6, ShareGPT, conc. 1",
    *(f"MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.8, {name}, conc. 1" for name in ("1k/1k", "8k/1k")),
    "MiniMax-M2.5 FP8 TP8 EP8, SGLang 0.5.9, 1k/1k, conc. 1",
    "Kimi-K2 FP8 TP8, SGLang 0.5.7 ROCm, 1k/1k, conc. 1",
    "DeepSeek-R1 FP8 TP8, SGLang 0.5.6.post1, 1k/1k, conc. 100",
)
SIM_LAUNCH_SHAPED: tuple[Shaped, ...] = (
    Shaped(commit="f56b322",
           rule="SGLang's prefill steps in `simulate --engine sglang` pay the cost model's eager "
                "launch time (ops x 70 us, fitted on engine-timed prefills; SGLang 0.5.6 / 0.5.9 "
                "capture decode CUDA graphs only, piecewise graphs off), read after these rows' "
                "TTFT came out 100-150 ms short at concurrency 1-4",
           rows=_SGLANG_TTFT_READ),
)


# SGLang's --scheduler-recv-interval in the simulator (commit 20138f6e) was written after the
# SGLang DeepSeek aggregated rows' TTFT under InferenceX's workload had been read: its record is
# tests.benches.aiconfig_sglang_flags.recv_shaped() (its rows are chosen there; not a cost-model
# rule, and no frozen replay moves with it, the interval's default being 1).


@dataclass(frozen=True, kw_only=True)
class RuleChange:
    """The last commit, before issue 25's restructure, that changed a rule the bench's rows are
    predicted by (the first-parent commit on main that last touched `paths`), and its commit
    time: rows committed after it are prospective (no rule saw them)."""

    commit: str
    time: str
    paths: str


LAST_RULE_CHANGE = {
    # The last first-parent commit on main touching these paths before the startup26 rows
    # (45ef050: the checkpoint's declared KV dtype read in one place; after d5c65ab, budget-logs'
    # Llama-4 vision rules, came the KV-dtype-auto, refusal and connector changes of 12-03). A
    # commit that only names rows in a `Fitted` record's fitted_on changes no rule.
    # Rule commits landed after the startup26 / startsgl rows (stop 39's merges: hf_quant_config
    # reading, the KV dtype default across commands and per engine, the maximum context, the
    # prefill-step defaults asked of the engine): none was written after looking at those rows,
    # and examples/engine-bench.md came out byte-identical after each merge, so no row's
    # prediction moved; the commit stays the one before the rows. The one row a later change
    # was written for (the H100 NVL log, gpusmi's preset totals) is SHAPED_BY.
    # mi300x60's SGLang gfx942 MLA decode kernels (8da032bf: a CostTraits field, kvplan/engines/
    # sglang/mla_decode.py) price time only: examples/engine-bench.md came out byte-identical.
    "engine": RuleChange(commit="45ef05084e90", time="2026-12-03T07:27:33+00:00",
                         paths="kvplan/engines/, kvplan/weights/, kvplan/model/"),
    # disagg-rows' vLLM EP and --enforce-eager prefill rules (ff02f27, ce9cfae on its branch),
    # landed by this merge. Then bwfp853's B200 / GB200 FP8 GEMM fraction (76916cb,
    # kvplan/perf/efficiency.py), which moves the B200 / GB200 FP8 rows of cost-bench.md (no row
    # had been added since ef67085: none was prospective before it either).
    # mi300x60's SGLang gfx942 MLA decode kernels (8da032bf: kvplan/perf/roofline.py,
    # attention_kernel.py, efficiency.py, engine_traits.py): examples/cost-bench.md came out
    # byte-identical (its MI300X rows: Kimi-K2 at 8 heads a rank runs triton, DeepSeek-V3's Feb
    # 2025 row is priced with vLLM's traits); prospective59's 9 DeepSeek-V3.1 rows shaped it
    # (SHAPED_BY); no frozen row not yet replayed became replayable with it.
    # fp32router61's FP32 router GEMM (63b9be7c: kvplan/perf/router_cost.py, roofline.py,
    # efficiency.py, engine_traits.py, kvplan/engines/router_gemm.py and each engine's table,
    # gpus.json's FP32 peaks): moves cost-bench.md's three MiniMax-M2.5 SGLang 0.5.9 H100 rows
    # (held out; the rule was read after the lone-prompt rows in SHAPED_BY).
    # Stop 61: mlaproj62's MLA down-projections run whole on every TP rank (a088725f:
    # kvplan/perf/flops.py, roofline.py) and the PREFILL_LAUNCH_FIT refit on its named rows after
    # it (c0381f09, efficiency.py): cost-bench.md's serving TTFT in band 21 -> 20 of 27. The same
    # stop's other kvplan/perf/ commits price what no cost-bench row runs (specdec62 / sglspec62's
    # speculative decoding steps) or are byte-identical (simspeed62's step memo); gptossgraph62's
    # Marlin option on the InferenceX gpt-oss H100 cases is a harness setting, not a rule.
    # Stop 62: moedefault63 made the routed experts' shape table (MOE_GEMM_SHAPE, fitted on
    # kernel tables, no bench row) the default of every CUDA device (31973db4: kvplan/perf/
    # efficiency.py, cost_rules.py); it moves cost-bench.md's MoE rows on CUDA GPUs. Its
    # held-out evaluation (moeshape62) read no cost-bench row; PREFILL_LAUNCH_FIT was not
    # refitted with it (its 4 DeepSeek rows would give 61.1 us: cost_bench.AS_FITTED).
    # Then stop 62's other rules that reach cost-bench.md: nvlink5's measured bandwidth
    # (b200vllm63, 153bb2ff: kvplan/hardware/interconnects.json), the B200 / B300 FP32 peaks
    # (fp32bw63, 43467a54: gpus.json) and the logits all-gather under plain TP
    # (logitsgather63, b26e18c1: kvplan/perf/step_comm.py, roofline.py, mixed_step.py), the
    # last; benchspeed63's memos are byte-identical. No cost-bench row was added after any.
    # Stop 63: sgldp64's SGLang DP-attention logits gather in prefill and the simulator's
    # SUM_LEN gathers (d54ded84: kvplan/perf/roofline.py, mixed_step.py, step_comm.py) left
    # examples/cost-bench.md byte-identical (no cost-bench row runs SGLang's split lm_head under
    # attention DP): the commit stays.
    # Stop 66: mi300x67's SGLang shared-expert fusion for DeepSeek-V3 on ROCm (a412b355:
    # kvplan/perf/roofline.py, shared_fusion.py, efficiency.py, engine_traits.py; kvplan/engines/
    # sglang/shared_fusion.py) left examples/cost-bench.md byte-identical (no cost-bench row runs
    # SGLang 0.5.7+ with DeepSeek-V3's 256 experts on an AMD GPU): the commit stays.
    # capest67 (6d25807b: kvplan/perf/costmodel.py CostInputs.captured_tokens, EngineRules.
    # captured_decode_tokens) prices SGLang's captured decode step in the cost model as
    # `simulate` does: the 9 DeepSeek-R1 B200 SGLang rows of cost-bench moved (SHAPED_BY an
    # earlier rule, 6eedbe4), so it is the cost bench's last rule change (the lead's merge
    # commit may stand for it on main).
    # mtpcap68 (2ca3d03c: kvplan/perf/costmodel.py CostInputs.graphs, mixed_step.py; kvplan/
    # engines/decode_graphs.py) counts SGLang's captured steps in requests and captures its
    # speculative verify and draft steps: examples/cost-bench.md byte-identical (no cost-bench
    # row has draft tokens): the commit stays.
    "cost": RuleChange(commit="6d25807b7b7a", time="2026-12-07T16:38:17+00:00",
                       paths="kvplan/perf/ (was kvplan/costmodel.py, kvplan/flops.py)"),
    # disagg-sim's closed-loop disaggregated simulation (issue 29), the last commit on its branch
    # that touched kvplan/ (the merge that lands it replaces it): the disagg bench's prospective
    # rows (tests/data/disagg/aiconfigurator_prospective_disagg.csv.gz) were frozen before it,
    # at c72d9db, and first evaluated after it.
    # dis29's GEMM-type rule (bc725f6: GemmMath, GPU.runs / peak_flops, NVFP4 at the FP4
    # peak), the last commit on its branch that touched kvplan/: the 42 SGLang NVFP4 rows of the
    # frozen prospective set (cohort dis29, tests/benches/disagg_rows.py COHORTS) were first
    # evaluated after it; the 50 FP8 rows evaluated after bc0cfec shaped it (SHAPED_BY).
    # disagg29's SGLang DP-attention chunk rule (4da0407, kvplan/perf/serving.py and
    # kvplan/analysis/disagg.py), the last commit on its branch that touched kvplan/: every
    # replayed prospective row with a DP-attention prefill shaped it (SHAPED_BY); no disagg row
    # has been added since.
    # gpusmi's preset totals (cb2d7c4, kvplan/hardware/gpus.json: GB300 276.50 GiB among them),
    # the last commit on its branch that touched these paths: examples/disagg-bench.md came out
    # byte-identical after it (no disagg row's prediction moved).
    # sgldisagg's SGLang disaggregated time side (63c3946: kvplan/engines/sglang/connectors.py,
    # kvplan/analysis/simulate/disagg_sim.py), the last commit on its branch that touched these
    # paths: every replayed prospective SGLang row shaped it (SHAPED_BY); no frozen row not yet
    # replayed became replayable with it.
    # sgldecode's SGLang decode-side admission (abc0049, then 40fd318: the simulation's
    # arrival order; kvplan/engines/sglang/decode_admission.py, kvplan/analysis/simulate/
    # disagg_sim.py, kvplan/analysis/disagg*.py, the connectors), the last commit on its branch
    # that touched these paths: every replayed prospective SGLang row shaped it (SHAPED_BY); no
    # frozen row not yet replayed became replayable with it.
    # disagg29's SGLang prefill gather (6084616: kvplan/perf/roofline.py, efficiency.py,
    # engine_traits.py, kvplan/engines/base.py CostTraits): every replayed prospective SGLang row
    # shaped it (SHAPED_BY); examples/cost-bench.md, disagg.md and mla-claims.md came out
    # byte-identical after it; no frozen row not yet replayed became replayable with it.
    # disagg29's SGLang decode gather (ca77c7a: kvplan/perf/roofline.py, efficiency.py,
    # engine_traits.py, CostTraits, kvplan/engines/sglang/engine.py): every replayed prospective
    # SGLang row shaped it (SHAPED_BY); no frozen row not yet replayed became replayable with it.
    # sgltime's SGLang DP-attention weight placement in the time model (f25f433:
    # kvplan/perf/roofline.py, efficiency.py, engine_traits.py): every replayed prospective
    # SGLang row shaped it (SHAPED_BY); no frozen row not yet replayed became replayable with it.
    # tpot29's SGLang logits gather under DP attention (11904b0: kvplan/perf/roofline.py): every
    # replayed prospective SGLang row shaped it (SHAPED_BY); no frozen row not yet replayed
    # became replayable with it.
    # mixjit53's fused-MoE JIT stall (d9ac0f2: kvplan/analysis/simulate/moe_jit.py, run.py) is
    # opt-in with no default compile time: no default prediction moves, no rule change here.
    # bwfp853's B200 / GB200 FP8 GEMM fraction (76916cb: kvplan/perf/efficiency.py), measured
    # on no bench row: the 3 FP8 rows that led to it shaped it (SHAPED_BY); no frozen row not
    # yet replayed became replayable with it.
    # pdload53's SGLang prefill input budget (80acbcc: kvplan/analysis/simulate/disagg_sim.py,
    # kvplan/analysis/disagg*.py, kvplan/engines/sglang/options.py): every replayed prospective
    # SGLang row shaped it (SHAPED_BY); no frozen row not yet replayed became replayable with it.
    # disagg63's SGLang decode --scheduler-recv-interval (f704b035: kvplan/engines/sglang/
    # decode_admission.py, kvplan/analysis/simulate/disagg_sim.py, kvplan/engines/handover.py):
    # the default interval 1 moves no prediction; the 17 rows whose recipes set 10 shaped it
    # (SHAPED_BY); no frozen row not yet replayed became replayable with it.
    "disagg": RuleChange(commit="80acbcc9d017", time="2026-12-05T07:06:41+00:00",
                         paths="kvplan/analysis/disagg*.py, kvplan/analysis/simulate/"
                               "disagg_sim.py, kvplan/perf/, kvplan/hardware/gpus.json, "
                               "kvplan/model/quant*.py, kvplan/engines/*/connectors.py, "
                               "kvplan/engines/sglang/decode_admission.py, "
                               "kvplan/engines/sglang/options.py"),
}
