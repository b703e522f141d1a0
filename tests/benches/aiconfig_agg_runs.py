"""aiconfigurator's measured AGGREGATED serving rows (issue 30), frozen before kvplan was run on
any of them (tests/data/sim_to_real/aiconfigurator_agg.csv.gz, its selection rule in
tests/data/sim_to_real/SOURCES.md), replayed in `kvplan simulate`'s machinery.

Each vLLM / SGLang row: the engine `estimate` sizes for the row's checkpoint (disagg_rows.MODELS,
plus the configs aiconfigurator bundles at the same commit: AGG_MODELS), GPU, TP / EP layout
and engine release, set up as `kvplan simulate` does (kvplan.analysis.simulate.run.setup, every
engine flag at its default as kvplan reads it), fed a closed loop at the row's concurrency
(`silicon_concurrency=N`) of requests at the row's fixed ISL / OSL: ROUNDS requests per user
(WORK_BOUND caps the rows replayed), the first `concurrency` sent (each user's first: the
start-up burst) and the last `concurrency` sent (the drain) not measured; the mean TTFT (sent
-> first token) and TPOT ((finish - first) / (O - 1)) of the rest, as disagg_sim measures a
benchmark's steady state. Assumed, not stated by the rows: --max-model-len ISL + OSL + 1,500
(aiconfigurator's generator, rule_plugin/vllm.rule at 095f58a5: `agg max_seq_len =
isl + osl + 1500`); every other flag the engine's default (whether the rows ran the generator's
flags is not recorded, as for the disaggregated rows); since marlinrow66 (`SCRIPT_ENV`) the
MXFP4 MoE kernel an InferenceX row's script exports (tests.benches.aiconfig_agg_env: Marlin on
the Hopper gpt-oss vLLM 0.18.0 rows), a setting the source states. Read later (aggvllmttft55,
tests.benches.aiconfig_harness): most rows are InferenceX's runs, the engine's own server at
flags each InferenceX script states, not the generator's; the bench's assumptions stay frozen
but that MXFP4 kernel (marlinrow66) and, since aggflags67 (`SCRIPT_FLAGS`), every flag kvplan
reads as the row's InferenceX launch script sets it (tests.benches.aiconfig_agg_scripts: its
table of the scripts' flags at the rows' commits; a `wip=True` row's script is not known and
keeps the defaults).
aggwork64 wrote InferenceX's client workload as its code runs it (tests.benches.aiconfig_agg_client:
10 x C requests, lengths uniform in [0.8, 1] x ISL / OSL, every request measured; SGLang's
--ignore-eos), a harness fix, not a kvplan rule, behind `CLIENT_WORKLOAD`. It is OFF for this
page: on aggwork64's 120-row subset (tests.benches.aggwork64_eval) it took 44 -> 148 s of CPU
(x 3.4) and the InferenceX rows hold 86 % of the replayable rows' C x OSL, so the section would
take about 3x its time, past CI's 90-minute limit. The page's figures are therefore the fixed-
length replay's, which the client did NOT run: its lockstep queue flatters them (the subset's
before -> after is printed with the section, aiconfig_agg_client.FINDING). Since clientsec66 a
pre-chosen half of that subset is replayed both ways in a subsection after the summary table
(tests.benches.aiconfig_agg_client_rows, 67 s more CPU), the faithful figure beside these.

A row is counted with why where kvplan does not replay it: TensorRT-LLM (its aggregated
scheduler is not simulated: `why_not` asks the engine's rules, so once `simulate --engine
trtllm` exists its rows replay through the same code), a checkpoint not sized here, a nightly
or special build kvplan cannot place on a release line (tests.benches.aiconfig_nightly: the
builds it places are replayed at each release whose rules their code may hold, and kept where
those agree; cohort nightly55, 10.8 s of CPU for its 62 rows' four replays each), an EP that is
neither 1 nor the TP degree whose MoE TP x EP is not the TP, kvplan's refusal. Attention-DP rows
(attention_dp_size > 1) replay through `simulate --dp-attention` since aggdp55
(tests.benches.aiconfig_agg_dp: the layout, the cohort), but an MoE TP x EP hybrid under
attention DP.

The rows of a MoE TP x EP layout (1 < EP < TP, moe_tp x ep = TP: SGLang --ep-size below --tp,
TensorRT-LLM moe_expert_parallel_size below the TP), refused for their layout alone until stop
55, replay since moehybrid55 (kvplan.weights.expert_layout, kvplan.engines.moe_layout) as a
cohort of their own (`HYBRID_COHORT`, `cohort_lines`), the rows and the bench's assumptions as
frozen. Read after its first evaluation, most of them are TP m, EP m runs written with
tp_size m x m (`tp_times_ep`, HYBRID_FINDING): refused since. Run time (moehybrid55): 65 s of
CPU for the cohort's 221 rows at the first evaluation (103 replayed), 9 s since (21 replayed;
one process on a shared 2-core host).

The checkpoints added at aggmore54 (AGG_MODELS, `COHORTS`: Qwen3.5-397B-A17B FP8 and NVFP4,
MiniMax-M2.5 NVFP4, Kimi-K2.5 INT4) were stated and committed before any of their rows was
replayed; their rows are a cohort of their own (`cohort_lines`). Run time (aggmore54): 502 s of
CPU for the cohort's 520 rows (320 replayable; two shards of 253 and 249 s in parallel), the
most a row 23 s; the Qwen3.5-397B FP8 rows (hybrid pool) 436 s of it.

Run: python -m tests.benches.aiconfig_agg_runs (the section of examples/simulate-bench.md).
A counterfactual read after the evaluation (the engine flags aiconfigurator's generator writes,
not the frozen defaults): tests.benches.aiconfig_agg_flags (aggflags54), printed after this
section; `python -m tests.benches.aiconfig_agg_flags` prints both.
Run time (aggflags67): the scripts' flags make the replay cheaper, not dearer: on
aggflags67_eval's 96-row subset 45.9 s of CPU at the defaults -> 21.4 s with the flags (one
process each on the loaded shared 2-core host: TensorRT-LLM's 8,192-token prompts, starved
while decodes ran at the default max_num_tokens 8,192, fit the scripts' C + ISL + 64); its
client-workload subset 14.1 -> 7.7 s (one process, the first arm warming the caches).
Run time (trt10, stop 55): 57 s of CPU for the 319 TensorRT-LLM 1.0 / 1.1 rows it made
replayable (one process on the shared 2-core host; the most a row 2.7 s, DeepSeek-R1 8,192 /
1,024 at concurrency 32); the counterfactual (aiconfig_agg_flags) replays them again, 43 s more.
Run time (aggmeas54): 424 s of CPU for the 706 replayable rows (two shards of 222 and 203 s in
parallel on a shared 2-core host); the gpt-oss rows' hybrid pool takes the most a token.
Run time (aggdp55): the 169 attention-DP rows (73 replayed, their ranks stepped one by one in
lockstep) add 44 s of CPU (one process), the most a row 7 s (TensorRT-LLM DeepSeek-R1 DP 8,
8,192 / 1,024 at concurrency 128); the whole section then took 773 s of CPU (two processes,
1,534 s wall on a loaded shared 2-core host).
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kvplan._util.errors import KvplanError
from kvplan._util.versions import version_key
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.executor import Executor, map_ordered
from kvplan.analysis.simulate.run import SimSetup, setup
from kvplan.analysis.simulate.sglang_scheduler import SglangOptionsSim
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmOptionsSim
from kvplan.engines.base import Engine
from kvplan.engines.trtllm.dp_balance import AdpBalance
from kvplan.model.spec import ModelSpec
from kvplan.sources.resolve import load_model
from tests.benches import (
    aiconfig_agg_client,
    aiconfig_agg_configs,
    aiconfig_agg_dp,
    aiconfig_agg_env,
    aiconfig_agg_scripts,
    aiconfig_agg_trtep,
    aiconfig_harness,
    aiconfig_nightly,
    aiconfig_sglang_nightly,
    disagg_rows,
)
from tests.benches.aiconfig_agg_loop import ROUNDS, row_run, steady
from tests.benches.aiconfig_agg_text import (
    AGGMORE_FINDING,
    FINDING,
    GPTOSS_HOPPER_FINDING,
    HYBRID_FINDING,
    TRTLLM_EP_FINDING,
    TRTLLM_FINDING,
    TRTLLM_LINES_FIRST,
    TRTLLM_PREFILL_FINDING,
    TRTLLM_SINCE,
)
from tests.benches.disagg_rows import BAND, PREFIX, Replay, stated_concurrency
from tests.benches.fitted_rows import SHAPED_BY

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "sim_to_real" / "aiconfigurator_agg.csv.gz"
CONFIGS = "tests/data/sim_to_real/aiconfig_configs"
COHORT = "aggmeas54"  # the session that first replayed these rows
# The bench's CPU bound: a row whose ROUNDS x concurrency x OSL decode tokens pass it is not
# replayed (the simulator takes some 10-40 us of CPU a decode token; a hybrid pool, gpt-oss's,
# the most); set before any row was replayed, from the rows' loads alone.
WORK_BOUND = 1 << 19
# aggwork64's client workload (tests.benches.aiconfig_agg_client) on the page's replay: off, for
# CI's time (module docstring); tests.benches.aggwork64_eval replays its subset with it on.
CLIENT_WORKLOAD = False
# marlinrow66: the MXFP4 MoE backend an InferenceX row's script exports (aiconfig_agg_env:
# VLLM_MXFP4_USE_MARLIN=1 on the Hopper gpt-oss vLLM 0.18.0 rows), passed to the row's setup.
# On for the page; False replays every flag at kvplan's default (the bench before marlinrow66).
SCRIPT_ENV = True
# aggflags67: the flags an InferenceX row's launch script passes that kvplan reads
# (aiconfig_agg_scripts.script_options), passed with SCRIPT_ENV. False: the bench before it.
SCRIPT_FLAGS = True
# The generator's max_seq_len pad (rule_plugin/vllm.rule at 095f58a5), as --max-model-len.
CONTEXT_PAD = 1500

# (model_path, precision) -> (config, KV dtype (None: the engine's default), what it is): the
# disaggregated rows' map, plus aiconfigurator's own bundled config.json of the checkpoint the
# row names (aic-core/src/aiconfigurator_core/model_configs/ at 095f58a5, copied verbatim into
# CONFIGS). Stated before any row was replayed. The checkpoints added at aggmore54 (`COHORTS`:
# stated and committed before any of their rows was replayed) follow; the ones still not sized
# say why in NOT_SIZED.
AGG_MODELS = {
    **disagg_rows.MODELS,
    # MiniMaxAI/MiniMax-M2.5: MiniMax-M2's shapes (tests/data/configs/minimax-m2.json, the
    # same fields less some defaults), the checkpoint's block-FP8 quantization_config.
    ("MiniMaxAI/MiniMax-M2.5", "fp8"): (f"{CONFIGS}/MiniMaxAI--MiniMax-M2.5.json", None,
                                        "MiniMaxAI/MiniMax-M2.5 (block FP8)"),
    ("openai/gpt-oss-120b", "fp4"): ("tests/data/configs/gpt-oss-120b.json", None,
                                     "openai/gpt-oss-120b (MXFP4 experts)"),
    ("Qwen/Qwen3-235B-A22B-FP8", "fp8"): (f"{CONFIGS}/Qwen--Qwen3-235B-A22B-FP8.json", None,
                                          "Qwen/Qwen3-235B-A22B-FP8 (block FP8)"),
    ("Qwen/Qwen3.5-397B-A17B", "bf16"): (f"{CONFIGS}/Qwen--Qwen3.5-397B-A17B.json", None,
                                         "Qwen/Qwen3.5-397B-A17B (bf16; its text model)"),
    ("zhipuai/GLM-5", "fp8"): (f"{CONFIGS}/zai-org--GLM-5-FP8.json", None,
                               "zai-org/GLM-5-FP8 (block FP8)"),
    # aggmore54 (issue 30), every KV dtype the engine's default as kvplan reads it:
    # Qwen/Qwen3.5-397B-A17B-FP8 at HF revision ea5b4f81 (the bf16 config above, field for
    # field, plus its quantization_config: fp8, weight_block_size [128, 128], dynamic
    # activations, 372 modules_to_not_convert: the GDN conv1d / in_proj_a / in_proj_b, the
    # routers and shared-expert gates, embeddings, lm_head, the vision tower, MTP).
    ("Qwen/Qwen3.5-397B-A17B", "fp8"): (f"{CONFIGS}/Qwen--Qwen3.5-397B-A17B-FP8.json", None,
                                        "Qwen/Qwen3.5-397B-A17B-FP8 (block FP8)"),
    # nvidia/MiniMax-M2.5-NVFP4 (aiconfigurator's bundled config.json: ModelOpt NVFP4, group
    # 16, attention and routers bf16, kv_cache_scheme 8-bit float).
    ("MiniMaxAI/MiniMax-M2.5", "fp4"): (f"{CONFIGS}/nvidia--MiniMax-M2.5-NVFP4.json", None,
                                        "nvidia/MiniMax-M2.5-NVFP4 (ModelOpt NVFP4)"),
    # moonshotai/Kimi-K2.5 itself (aiconfigurator's bundled config.json): the wrapper whose
    # text_config carries the compressed-tensors pack-quantized INT4 (W4A16, group 32,
    # symmetric) routed experts; attention, shared experts, the dense MLP and lm_head bf16.
    ("moonshotai/Kimi-K2.5", "int4"): (f"{CONFIGS}/moonshotai--Kimi-K2.5.json", None,
                                       "moonshotai/Kimi-K2.5 (INT4 W4A16 experts)"),
    # nvidia/Qwen3.5-397B-A17B-NVFP4 (aiconfigurator's bundled config.json: ModelOpt NVFP4,
    # GDN, shared experts and lm_head bf16, kv_cache_scheme 8-bit float).
    ("Qwen/Qwen3.5-397B-A17B", "fp4"): (f"{CONFIGS}/nvidia--Qwen3.5-397B-A17B-NVFP4.json",
                                        None, "nvidia/Qwen3.5-397B-A17B-NVFP4 (ModelOpt NVFP4)"),
}
# The session that first replayed a checkpoint's rows, where it is not COHORT.
COHORTS = dict.fromkeys((
    ("Qwen/Qwen3.5-397B-A17B", "fp8"), ("MiniMaxAI/MiniMax-M2.5", "fp4"),
    ("moonshotai/Kimi-K2.5", "int4"), ("Qwen/Qwen3.5-397B-A17B", "fp4")), "aggmore54")
# TensorRT-LLM's rows of the 1.0 and 1.1 lines (1.0.0rc3, 1.1.0rc2.post2), refused by `simulate
# --engine trtllm` until trt10 (stop 55) read those lines (kvplan.analysis.simulate.
# trtllm_lines): a cohort of their own, first replayed at stop 55.
TRTLLM_LINES_COHORT = "trt10"

# The rows of a MoE TP x EP layout (1 < EP < TP, moe_tp x ep = TP), first replayed at stop 55
# (moehybrid55) once kvplan sized and timed the layout (kvplan.weights.expert_layout), the rows
# and the bench's assumptions as frozen: a cohort of their own (`cohort_lines`).
HYBRID_COHORT = "moehybrid55"
# The checkpoints the rows name that stay unsized (aggmore54), and why: never a guessed format.
NOT_SIZED = {
    ("meta-llama/Llama-3.1-8B-Instruct", "fp8"): (
        "a bf16 checkpoint quantized at start-up, by flags the rows do not record"),
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "fp8"): (
        "its hf_quant_config.json (KV cache algorithm) not found in the stores"),
    ("zhipuai/GLM-5", "fp4"): "not added: every row runs a nightly release",
    ("nvidia/DeepSeek-R1-NVFP4", "fp4"): "its hf_quant_config.json not found in the stores",
    ("nvidia/DeepSeek-V3.1-NVFP4", "fp4"): "not added: all its rows are over WORK_BOUND",
    ("nvidia/Qwen3-32B-NVFP4", "fp4"): "not added: all its rows are over WORK_BOUND",
    ("openai/gpt-oss-120b", "fp8"): "no fp8 checkpoint of it is published (MXFP4 experts)",
}
GPUS = {**disagg_rows.GPUS, "b300_sxm": "B300"}
_RELEASE = re.compile(r"\d+\.\d+\.\d+(\.post\d+|rc\d+(\.post\d+)?)?")


@cache
def rows() -> tuple[dict[str, str], ...]:
    """The frozen rows, in file order (sorted by id)."""
    with gzip.open(FILE, "rt") as f:
        return tuple(csv.DictReader(io.StringIO(f.read())))


@cache
def _by_id() -> dict[str, dict[str, str]]:
    return {PREFIX + r["id"]: r for r in rows()}


def row_of(replayed: Replay) -> dict[str, str]:
    return _by_id()[replayed.id]


def release(row: dict[str, str]) -> str | None:
    """The engine release the row ran: its backend_version where it is one (x.y.z, a post or
    rc tag), None for a nightly or dev tag."""
    v = row["backend_version"].strip()
    return v if _RELEASE.fullmatch(v) else None


def layout(row: dict[str, str]) -> tuple[int, int, int, int]:
    """(TP, attention DP, MoE TP, EP) as the row states them, empty or 0 read as 1."""
    def n(field: str) -> int:
        return disagg_rows._int(row[field].strip() or "0")
    return n("tp_size"), n("attention_dp_size"), n("moe_tp_size"), n("moe_ep_size")



def label(row: dict[str, str]) -> str:
    tp, dp, _, ep = layout(row)
    text = f"DP{dp} x TP{tp}" if dp > 1 else f"TP{tp}"
    text += f" EP{ep}" if ep > 1 else ""
    text += aiconfig_agg_dp.as_run_note(row, layout(row))
    return (f"{row['backend']} {row['backend_version']}, {row['model_path']} "
            f"{row['precision']}, {row['system']}, {text}, {row['isl']}/{row['osl']}, "
            f"conc. {stated_concurrency(row)}")


def cohort_of(row: dict[str, str]) -> str:
    """The session that first replayed the row: aggdp55's for an attention-DP layout
    (tests.benches.aiconfig_agg_dp); HYBRID_COHORT for a MoE TP x EP layout (EP above 1 and
    below the TP, no attention DP) that passes every check before the layout's (the 221 rows
    that `why_not` refused for their layout alone until stop 55: only the written-as check,
    `tp_times_ep`, and the CPU bound come after it); trt10's for TensorRT-LLM's 1.0 and 1.1
    lines; else its checkpoint's (COHORTS, COHORT)."""
    tp, dp, moe_tp, ep = layout(row)
    if dp > 1:
        return aiconfig_agg_dp.COHORT
    if 1 < ep < tp:
        why = why_not(row)
        if not why or why.startswith((f"{ROUNDS} x concurrency", f"TP {moe_tp} x EP {ep} ")):
            return HYBRID_COHORT
    version = release(row)
    if row["backend"] == "trtllm" and version is not None and version_key(version) < (1, 2):
        return TRTLLM_LINES_COHORT
    return COHORTS.get((row["model_path"], row["precision"]), COHORT)


def why_not(row: dict[str, str]) -> str:
    """Why kvplan does not replay the row ("" where it does)."""
    engine = Engine(row["backend"])
    if engine.rules.scheduler is None:
        # The hook for `simulate --engine trtllm`: once the engine has a scheduler, its rows
        # replay through this same code.
        return f"{engine.rules.display_name}: its aggregated scheduler is not simulated"
    key = (row["model_path"], row["precision"])
    if key not in AGG_MODELS:
        why = NOT_SIZED.get(key)
        return (f"{row['model_path']} ({row['precision']}): checkpoint not sized here"
                + (f" ({why})" if why else ""))
    if row["system"] not in GPUS:
        return f"{row['system']}: no GPU preset"
    if release(row) is None and (why := aiconfig_nightly.why_not(row)):
        return why
    try:
        tp, dp, moe_tp, ep = aiconfig_agg_dp.as_run(row, layout(row))  # vllmdpep56
    except KvplanError as e:
        return str(e)
    if int(row["pp_size"]) > 1:
        return "pipeline parallel: not simulated"
    if dp > 1:  # attention DP (aggdp55: tests.benches.aiconfig_agg_dp; written-as, trtdp56)
        why = (aiconfig_agg_dp.dp_times_ep(row, layout, _same_measurement()[(
            row["silicon_ttft_ms"], row["silicon_tpot_ms"])], _LAYOUT_ID)
            or aiconfig_agg_dp.why_not(row["backend"], tp, dp, moe_tp, ep))
        if why:
            return why
    elif ep not in (1, tp) and moe_tp * ep != tp:
        # MoE TP x EP (moehybrid55) replays where moe_tp x ep is the TP, as the engines build it.
        return f"EP {ep} with MoE TP {moe_tp} under TP {tp}: moe_tp x ep is not the TP"
    if dp <= 1 and 1 < ep < tp and tp_times_ep(row):
        return (f"TP {moe_tp} x EP {ep} written as tp_size {tp} (its id, a row of the same "
                "measurement or InferenceX's config names that layout): not MoE TP x EP")
    conc = stated_concurrency(row) or 0
    if ROUNDS * conc * int(row["osl"]) > WORK_BOUND:
        return (f"{ROUNDS} x concurrency x OSL over the bench's CPU bound ({WORK_BOUND:,} "
                "decode tokens)")
    return ""


# (backend, release, model, GPU, precision) -> the (TP, EP) layouts InferenceX's config lists
# for rows of a MoE TP x EP layout that no twin row names (sglmoe56, read after moehybrid55's
# evaluation): dsr1-fp4-b300-sglang (.github/configs/nvidia-master.yaml:1675-1693 at 9ebeafb4e,
# added on the rows' date, 2026-04-17: lmsysorg/sglang:v0.5.10.post1-cu130, tp 4 ep 4, tp 8 ep 8).
INFERENCEX_TP_EP = {("sglang", "0.5.10.post1", "deepseek-ai/DeepSeek-V3", "b300_sxm", "fp4"):
                    ((4, 4), (8, 8))}
_LAYOUT_ID = re.compile(r"_tp(\d+)(?:_0)?_ep(\d+)(?:_0)?_\d+$")


@cache
def _same_measurement() -> dict[tuple[str, str], tuple[dict[str, str], ...]]:
    """(measured TTFT, measured TPOT) as written -> the rows that state them."""
    out: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in rows():
        out.setdefault((r["silicon_ttft_ms"], r["silicon_tpot_ms"]), []).append(r)
    return {k: tuple(v) for k, v in out.items()}


def tp_times_ep(row: dict[str, str]) -> bool:
    """Whether a MoE TP x EP row (TP t, MoE TP m, EP e, m x e = t) is a TP m EP e run written
    with tp_size m x e (moehybrid55, read after the cohort's first evaluation): its id names
    `tp{m}_ep{e}`, or a row of the same measured TTFT and TPOT (to the last digit written: the
    same run exported twice) names it in its id or states TP m, EP e. E.g. SGLang 0.5.9
    DeepSeek-R1 NVFP4 B200 1024/1024 at 128 users: 759.947... / 25.288... ms in
    ..._c128_tp4_ep4_1035 (tp_size 16, MoE TP 4, EP 4) and ..._c128_tp4_0_ep4_0_291 (TP 4,
    EP 4). Or (sglmoe56) InferenceX's config for the row's runs lists TP m EP m and no MoE TP x
    EP layout (INFERENCEX_TP_EP)."""
    tp, _, moe_tp, ep = layout(row)
    config = INFERENCEX_TP_EP.get((row["backend"], row["backend_version"], row["model_path"],
                                   row["system"], row["precision"]), ())
    if moe_tp == ep and (moe_tp, ep) in config:
        return True
    same = _same_measurement()[(row["silicon_ttft_ms"], row["silicon_tpot_ms"])]
    for r in same:
        named = _LAYOUT_ID.search(r["id"])
        if named is not None and (int(named.group(1)), int(named.group(2))) == (moe_tp, ep):
            return True
        if r is not row and layout(r)[0] == moe_tp and layout(r)[3] == ep:
            return True
    return False


@cache
def _spec(config: str) -> ModelSpec:
    spec, _ = load_model(str(ROOT / config))
    return spec


@cache
def _setup(model: str, precision: str, system: str, backend: str, version: str, tp: int,
           ep: int, context: int, dp: int = 1, frontend: bool = False,
           ignore_eos: bool = False, mxfp4_backend: str | None = None,
           script: tuple[tuple[str, object], ...] = ()) -> SimSetup:
    """`dp` > 1: that many attention-DP ranks of `tp` GPUs (tests.benches.aiconfig_agg_dp);
    `frontend`: with the API server's fitted CPU stage (`simulate --frontend`); `ignore_eos`:
    SGLang's requests sent with ignore_eos (aiconfig_agg_client.ignore_eos); `mxfp4_backend`:
    the script's MXFP4 MoE kernel (--mxfp4-backend; aiconfig_agg_env), None: kvplan's default;
    `script`: the options the row's InferenceX script sets (aiconfig_agg_scripts.script_options,
    aggflags67), () none."""
    config, kv_dtype, _ = AGG_MODELS[(model, precision)]
    opts = dict(script)
    kv_dtype = opts.pop("kv_dtype", kv_dtype)
    context = int(opts.pop("context", context))  # type: ignore[call-overload]
    mxfp4_backend = opts.pop("mxfp4_backend", mxfp4_backend)
    sglang = {k: opts.pop(k) for k in ("chunked_prefill_size", "max_prefill_tokens",
                                       "scheduler_recv_interval") if k in opts}
    if backend == "sglang" and opts.get("prefix_caching") is False:
        opts.pop("prefix_caching")
        opts["disable_radix_cache"] = True
    balance = opts.pop("adp_balance", False)
    waits = {k: opts.pop(f"adp_{k}") for k in ("timeout_iters", "batching_wait_iters")
             if f"adp_{k}" in opts}
    trtllm = (TrtllmOptionsSim(adp_balance=AdpBalance(**waits))  # type: ignore[arg-type]
              if balance and dp > 1 else None)
    spec = _spec(config)
    rank = (aiconfig_agg_dp.rank_layout(backend, tp, dp, 1, ep) if dp > 1 else None)
    inputs = estimate_inputs(spec, context=context, kv_dtype=kv_dtype, engine=Engine(backend),
                             gpu=GPUS[system], tp=tp if rank is None else rank.tp,
                             engine_version=version,
                             **({"ep": ep} if rank is None else {"ep": rank.ep,
                                                                "dp_attention": rank.dp_attention}),
                             **({} if mxfp4_backend is None else {"mxfp4_backend": mxfp4_backend}),
                             **opts)
    sim, _ = setup(spec, inputs, dp=dp, dp_attention=dp > 1, frontend=frontend,
                   max_num_seqs=opts.get("max_num_seqs"),  # type: ignore[arg-type]
                   sglang=SglangOptionsSim(ignore_eos=ignore_eos, **sglang)  # type: ignore[arg-type]
                   if ignore_eos or sglang else None, trtllm=trtllm)
    return sim


def row_setup(row: dict[str, str], version: str, *, frontend: bool = False) -> SimSetup:
    """The bench's engine for the row: its checkpoint, GPU and layout, `version`'s rules, a
    max model length of ISL + OSL + CONTEXT_PAD (module docstring), the MXFP4 MoE kernel the
    row's script exports where SCRIPT_ENV (aiconfig_agg_env)."""
    tp, dp, _, ep = aiconfig_agg_dp.as_run(row, layout(row))  # the layout as run (vllmdpep56)
    return _setup(row["model_path"], row["precision"], row["system"], row["backend"], version,
                  tp, ep, int(row["isl"]) + int(row["osl"]) + CONTEXT_PAD, dp, frontend,
                  aiconfig_agg_client.ignore_eos(row),
                  aiconfig_agg_env.mxfp4_backend(row) if SCRIPT_ENV else None,
                  tuple(sorted(aiconfig_agg_scripts.script_options(row).items()))
                  if SCRIPT_ENV and SCRIPT_FLAGS else ())


def replay(row: dict[str, str]) -> Replay:
    """The row replayed at its release; a nightly build's (aiconfig_nightly) at each release
    kvplan reads that its code may hold, kept where they agree."""
    if release(row) is None and not why_not(row):
        return aiconfig_nightly.replay(row, replay_at)
    return replay_at(row, release(row) or "")


def replay_at(row: dict[str, str], version: str) -> Replay:
    """The row replayed with `version`'s rules (the release the row states, or one a nightly
    build's code may hold)."""
    return replay_on(row, lambda: row_setup(row, version), cohort_of(row))


def replay_on(row: dict[str, str], sim: Callable[[], SimSetup], cohort: str) -> Replay:
    """The row's Replay (for `cohort`): why_not's reason, or the closed loop (row_run) on the
    engine `sim` sets up, or kvplan's refusal."""
    conc = stated_concurrency(row)
    assert conc is not None  # the selection rule keeps only rows that state it
    base = {"id": PREFIX + row["id"], "label": label(row),
            "measured_ttft_ms": float(row["silicon_ttft_ms"]),
            "measured_tpot_ms": float(row["silicon_tpot_ms"]), "concurrency": conc,
            "input_len": int(row["isl"]), "output_len": int(row["osl"]), "cohort": cohort}
    # mtprows67: a row two InferenceX configs could have produced, or a speculative-decoding
    # config's (tests.benches.aiconfig_agg_configs), is refused, counted with the others.
    why = why_not(row) or aiconfig_agg_configs.why_refused(row)
    if why:
        return Replay(**base, why_not=why)
    try:
        # CLIENT_WORKLOAD: the row's client's workload and statistic (aiconfig_agg_client,
        # aggwork64); off on the page (module docstring: CI's time).
        if CLIENT_WORKLOAD:
            result = row_run(row, sim(), aiconfig_agg_client.requests(row))
        else:
            result = row_run(row, sim())
    except KvplanError as e:
        return Replay(**base, why_not=f"kvplan refuses: {str(e).splitlines()[0]}")
    if CLIENT_WORKLOAD:
        ttft, tpot, _ = aiconfig_agg_client.measure(row, list(result.finished))
    else:
        ttft, tpot, _ = steady(list(result.finished), conc)
    return Replay(**base, ttft_ms=ttft, tpot_ms=tpot)


@dataclass(frozen=True, kw_only=True)
class Bench:
    replays: tuple[Replay, ...]
    seconds: float  # the replay's wall time


@cache
def bench() -> Bench:
    start = time.perf_counter()
    out = tuple(replay_all(replay, rows()))
    return Bench(replays=out, seconds=time.perf_counter() - start)


def replay_all(fn: Callable[[dict[str, str]], Replay], part: Iterable[dict[str, str]]
               ) -> Iterator[Replay]:
    """fn over the rows, in order, in a pool of one process per CPU (the simulate search's
    executor: results in the order given, so the page does not depend on the machine)."""
    return map_ordered(fn, part, executor=Executor.process, jobs=os.cpu_count() or 1)


# DeepSeek-R1 is DeepSeek-V3's architecture (disagg_rows.MODELS): one model for the hosts.
_SAME_MODEL = {"deepseek-ai/DeepSeek-R1": "deepseek-ai/DeepSeek-V3"}


def _host(row: dict[str, str]) -> tuple[str, str, str]:
    return row["backend"], _SAME_MODEL.get(row["model_path"], row["model_path"]), row["system"]


@cache
def shaped_hosts() -> dict[tuple[str, str, str], tuple[str, ...]]:
    """(backend, model, system) -> the SHAPED_BY commits whose rows include one of
    aiconfigurator's disaggregated rows on that host (the same publisher's rows; any
    precision)."""
    by_id = {PREFIX + r["id"]: r for r in (*disagg_rows.rows(), *disagg_rows.prospective_rows())}
    hosts: dict[tuple[str, str, str], list[str]] = {}
    for s in SHAPED_BY:
        for rid in s.rows:
            if rid in by_id:
                commits = hosts.setdefault(_host(by_id[rid]), [])
                if s.commit not in commits:
                    commits.append(s.commit)
    return {k: tuple(v) for k, v in hosts.items()}


# SHAPED_BY entries marlinrow66 added (its gpt-oss Hopper rows named shaped by gptosshopper62's
# and tpslope66's rules): pools drawn before them (aggwork64_eval's subset, tpslope66's pool)
# stay the ones their records were made on by leaving these out (`shaped_rows(without=...)`).
NAMED_BY_MARLINROW66 = frozenset({"bfe50803", "f2738442"})
# Every SHAPED_BY entry naming aggregated rows written after aggwork64_eval's subset was drawn
# (marlinrow66's, then sgldec67's de3a6eac: three SGLang B200 rows; sglh200_68's 912e2e62: three
# SGLang H200 rows): the subset and clientsec66's half of it stay as drawn
# (tests/test_aiconfig_agg_client_rows.py pins them; a later entry naming a row of the pool
# fails it until it is added here).
NAMED_AFTER_AGGWORK64 = NAMED_BY_MARLINROW66 | {"de3a6eac", "912e2e62"}


@cache
def shaped_rows(without: frozenset[str] = frozenset()) -> dict[str, tuple[str, ...]]:
    """Row id -> the SHAPED_BY commits that name the aggregated row (read before a rule
    written for it: trta2a56's TensorRT-LLM EP rows, tests.benches.aiconfig_agg_trtep), the
    entries of the commits in `without` left out (a pool drawn before they were named)."""
    ids = {PREFIX + r["id"] for r in rows()}
    out: dict[str, list[str]] = {}
    for s in SHAPED_BY:
        if s.commit in without:
            continue
        for rid in set(s.rows) & ids:
            out.setdefault(rid, []).append(s.commit)
    return {k: tuple(v) for k, v in out.items()}


def split_of(replayed: Replay) -> str:
    if replayed.id in shaped_rows():
        return f"shaped by {', '.join(shaped_rows()[replayed.id])}"
    if _host(row_of(replayed)) in shaped_hosts():
        return "held out, host of shaped disagg rows"
    return "held out"


def _inside(x: float) -> bool:
    return BAND[0] <= x <= BAND[1]


def summary(part: list[Replay]) -> tuple[int, int, int, int, str, str, str, str]:
    """(rows replayed, TTFT inside the band, TPOT inside, both inside, median |TTFT error|,
    median |TPOT error|, median TTFT ratio, median TPOT ratio) over the replayed rows of
    `part`."""
    done = [r.ratios for r in part if r.ratios is not None]
    if not done:
        return 0, 0, 0, 0, "-", "-", "-", "-"
    return (len(done), sum(_inside(a) for a, _ in done), sum(_inside(b) for _, b in done),
            sum(_inside(a) and _inside(b) for a, b in done),
            f"{statistics.median(abs(a - 1) for a, _ in done):.1%}",
            f"{statistics.median(abs(b - 1) for _, b in done):.1%}",
            f"{statistics.median(a for a, _ in done):.2f}",
            f"{statistics.median(b for _, b in done):.2f}")


def _line(name: str, part: list[Replay]) -> str:
    n, a, b, both, *medians = summary(part)
    return (f"| {name} | {len(part):,} | {n:,} | {a:,} | {b:,} | {both:,} | "
            + " | ".join(medians) + " |")


def cohort_lines(part: list[Replay]) -> list[str]:
    """The table's lines by cohort (the session that first replayed the rows: COHORT, then
    `COHORTS`', then the later ones: trt10, moehybrid55, the nightly builds' where `part` has
    them, aiconfig_nightly.COHORT), each later cohort also by backend and by checkpoint; then
    aggdp55's (tests.benches.aiconfig_agg_dp.cohort_lines)."""
    later = sorted({*COHORTS.values(), TRTLLM_LINES_COHORT, HYBRID_COHORT,
                    *(r.cohort for r in part)} - {COHORT, aiconfig_agg_dp.COHORT})
    lines = [_line(f"cohort {c}" + (" (first replayed at stop 55: MoE TP x EP)"
                                    if c == HYBRID_COHORT else ""),
                   [r for r in part if r.cohort == c]) for c in (COHORT, *later)]
    for c in later:
        mine = [r for r in part if r.cohort == c]
        for backend in sorted({row_of(r)["backend"] for r in mine}):
            lines.append(_line(f"cohort {c}: backend {backend}",
                               [r for r in mine if row_of(r)["backend"] == backend]))
        for key in sorted({(row_of(r)["model_path"], row_of(r)["precision"]) for r in mine}):
            lines.append(_line(f"cohort {c}: {key[0]} {key[1]}", [
                r for r in mine if (row_of(r)["model_path"], row_of(r)["precision"]) == key]))
    return lines + aiconfig_agg_dp.cohort_lines(part, row_of, layout, _line)


def _row_line(r: Replay) -> str:
    """A replayed row's line of the section's per-row table."""
    a, t = r.ratios or (float("nan"), float("nan"))
    return (f"| {r.id.removeprefix(PREFIX)} | {r.label} | {r.measured_ttft_ms:,.1f} / "
            f"{r.measured_tpot_ms:.2f} | {r.ttft_ms:,.1f} / {r.tpot_ms:.2f} | {a:.2f} | "
            f"{t:.2f} | {split_of(r)} |")


def print_section() -> None:
    """The frozen aggregated rows as a Markdown section of examples/simulate-bench.md."""
    # Imported here: aiconfig_agg_client_rows imports this module (its section, clientsec66).
    from tests.benches import aiconfig_agg_client_rows as client_rows

    part = list(bench().replays)
    done = [r for r in part if r.replayed]
    print("\n## aiconfigurator's measured aggregated rows (held out)\n")
    print(f"{len(part):,} rows of aiconfigurator's measured aggregated serving data (one engine "
          "each, TP / EP layout, fixed ISL / OSL, a stated concurrency, measured TTFT and TPOT; "
          "tests/data/sim_to_real/aiconfigurator_agg.csv.gz, frozen with its selection rule "
          "(tests/data/sim_to_real/SOURCES.md) before kvplan was run on any of them), each "
          "replayed once by tests/benches/aiconfig_agg_runs.py in `kvplan simulate`'s machinery "
          f"as a closed loop at the row's concurrency ({ROUNDS} requests per user; each user's "
          f"first and last not measured; rows past {WORK_BOUND:,} decode tokens not replayed, "
          "the bench's CPU bound), at the fixed ISL / OSL, which InferenceX's client did not run "
          "(its lengths are uniform in [0.8, 1] x ISL / OSL, 10 x C requests, every one measured: "
          "tests/benches/aiconfig_agg_client.py, off here for CI's time; the fixed lengths keep "
          "the users in lockstep and flatter kvplan's TTFT: " + client_rows.headline()
          + "; the subsection after this table), an InferenceX row with every flag kvplan "
          "reads as the row's launch script sets it (since aggflags67: KV dtype, memory "
          "fraction, max running requests, token budgets, block size, prefix caching, max "
          "model length, SGLang's --scheduler-recv-interval, TensorRT-LLM's CUDA-graph batch "
          "and padding, the MXFP4 MoE kernel the Hopper gpt-oss scripts export; "
          "tests/benches/aiconfig_agg_scripts.py, aiconfig_agg_env.py), every other row and "
          "flag at the engine's default, --max-model-len ISL + OSL + 1,500 where no script "
          "sets one (aiconfigurator's generator). "
          f"Replayed: {len(done):,}. Inside means "
          f"predicted / measured within [{BAND[0]}, {BAND[1]}]; the medians are of |predicted / "
          "measured - 1| over the replayed rows.\n")
    shaped = sorted({c for commits in shaped_rows().values() for c in commits})
    print("Held out: no constant was fitted on these rows and no rule written on them but "
          f"where the split column says `shaped by` ({', '.join(shaped)}: rows read before "
          "that rule was written, SHAPED_BY; no test of it). The same "
          "publisher's DISAGGREGATED rows shaped rules (tests/benches/fitted_rows.py SHAPED_BY: "
          + "; ".join(f"{backend} {model} on {system}: {', '.join(c)}" for (backend, model,
                      system), c in sorted(shaped_hosts().items()))
          + "; DeepSeek-R1 counted as DeepSeek-V3, its architecture), so an aggregated row of "
          "the same engine, model and GPU shares its host and software with shaped rows: the "
          "split column says which.\n")
    print("| rows | frozen | replayed | TTFT inside | TPOT inside | both inside | "
          "median TTFT err | median TPOT err | median TTFT ratio | median TPOT ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(_line("all", part))
    for split in sorted({split_of(r) for r in done}):
        print(_line(f"split: {split}", [r for r in done if split_of(r) == split]))
    for field, name in (("backend", "backend"), ("system", "GPU"), ("model_path", "model")):
        for value in sorted({row_of(r)[field] for r in part}):
            print(_line(f"{name} {value}", [r for r in part if row_of(r)[field] == value]))
    for line in cohort_lines(part):
        print(line)
    client_rows.print_section()
    print("\n### Every row at the fixed lengths: not replayed, and each row replayed\n")
    print("Not replayed, and why:\n")
    print("| why | rows |")
    print("|---|---:|")
    whys: dict[str, int] = {}
    for r in part:
        if not r.replayed:
            # One line per refusal, its lengths and counts written N.
            key = (re.sub(r"\d[\d,]*", "N", r.why_not) if r.why_not.startswith("kvplan")
                   else r.why_not)
            whys[key] = whys.get(key, 0) + 1
    for why, n in sorted(whys.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"| {why} | {n:,} |")
    print("\n| row | layout and load | measured TTFT / TPOT ms | kvplan | TTFT ratio | "
          "TPOT ratio | split |")
    print("|---|---|---|---|---:|---:|---|")
    for r in done:
        print(_row_line(r))
    if FINDING:
        print(f"\n{FINDING}")
    print(f"\n{AGGMORE_FINDING}")
    print(f"\n{aiconfig_nightly.FINDING}")
    print(f"\n{aiconfig_sglang_nightly.FINDING}\n\n{aiconfig_sglang_nightly.SINCE}")
    print(f"\n{HYBRID_FINDING}")
    print(f"\n{TRTLLM_FINDING}")
    print(f"\n{TRTLLM_SINCE}")
    print(f"\n{TRTLLM_LINES_FIRST}")
    aiconfig_agg_trtep.print_split(_representative)
    print(f"\n{TRTLLM_EP_FINDING}\n\n{TRTLLM_PREFILL_FINDING}")
    print(f"\n{aiconfig_agg_dp.FINDING}\n\n{aiconfig_agg_dp.AS_RUN_FINDING}"
          f"\n\n{aiconfig_agg_dp.TRTDP_FINDING}")
    print_harness(part)


def print_harness(part: list[Replay]) -> None:
    """How the rows were measured (tests.benches.aiconfig_harness): the figures above by the
    provenance each row's silicon_data_source states, and measured - kvplan TTFT at low load."""
    h = aiconfig_harness
    print(f"\n{h.HARNESS}\n")
    print("| rows | frozen | replayed | TTFT inside | TPOT inside | both inside | "
          "median TTFT err | median TPOT err | median TTFT ratio | median TPOT ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    groups: dict[tuple[str, str], list[Replay]] = {}
    for r in part:
        groups.setdefault((h.provenance(row_of(r)), row_of(r)["backend"]), []).append(r)
    for (prov, backend), mine in sorted(groups.items()):
        print(_line(f"provenance {prov}: backend {backend}", mine))
    print(f"\nmeasured - kvplan TTFT (ms) at concurrency <= {h.LOW_LOAD}, by provenance, "
          "backend and prompt length:\n")
    print("| rows | n | median | lower quartile | upper quartile |")
    print("|---|---:|---:|---:|---:|")
    for (prov, backend), mine in sorted(groups.items()):
        print(h.offset_line(f"{prov}: {backend}", mine))
        for isl in sorted({r.input_len for r in mine}):
            print(h.offset_line(f"{prov}: {backend}, ISL {isl:,}",
                                [r for r in mine if r.input_len == isl]))
    print(f"\n{h.FINDING}")
    print(f"\n{aiconfig_agg_client.FINDING}")
    print(f"\n{GPTOSS_HOPPER_FINDING}\n\n{aiconfig_agg_env.FINDING}")
    print(f"\n{aiconfig_agg_scripts.FINDING}")
    print(f"\n{aiconfig_agg_configs.FINDING}")


def _representative() -> SimSetup:
    """The setup of aiconfig_agg_trtep's representative row (its prefill split), a 1,024 / 128
    row's."""
    t = aiconfig_agg_trtep
    return _setup(t.MODEL, t.PRECISION, t.SYSTEM, "trtllm", t.VERSION, t.TP, t.EP,
                  t.PROMPT + 128 + CONTEXT_PAD)


if __name__ == "__main__":
    if sys.argv[1:]:  # one part alone (--nightly, --dp, --trt-ep): aiconfig_agg_parts
        from tests.benches import aiconfig_agg_parts

        aiconfig_agg_parts.main(sys.argv[1:])
    else:
        print_section()
