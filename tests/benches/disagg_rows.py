"""The published disaggregated serving measurements the disagg bench replays (issue 29), and the
replay: each row at its own prefill and decode workers, layouts and concurrency through
`kvplan.analysis.disagg_ratio.evaluate_xy` (at a stated concurrency: the closed-loop simulation
of both roles, kvplan.analysis.simulate.disagg_sim). The prospective rows (PROSPECTIVE_FILE)
are replayed by the same code, reported apart.

Rows: aiconfigurator's measured disaggregated rows with full worker layouts
(tests/data/disagg/SOURCES.md). A row is replayed when kvplan sizes its checkpoint and models its
engine's handover and the row states its concurrency; the others are listed with why.

- Concurrency: the db-dump rows state it (`silicon_concurrency=N` in silicon_data_source; their
  decode_batch_size is that N over the decode workers). The gtl rows do not: their
  decode_batch_size is the decode engine's max batch (aiconfigurator's generator writes it as
  `max_num_seqs`, src/aiconfigurator/generator/rule_plugin/benchmark/vllm.rule), and its
  benchmark script sweeps the concurrency over 1, 2, 8, 16, 32, 64, 128 and 0.95 / 1 / 1.05 x
  decode workers x that batch (generator/config/backend_templates/benchmark/bench_run.sh.j2),
  so which point the row is stays unknown: not replayed, not guessed.
- Layout per role: TP = tp_size x attention_dp_size (attention DP when the latter is > 1), EP
  = moe_ep_size (0 or empty: 1); except where the recipe the row ran is public (RECIPES): then
  the recipe's, which for the vLLM Kimi-K2.5 rows differs from the row's fields.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any
from unittest.mock import patch

from kvplan._util.errors import InputError, KvplanError
from kvplan.analysis.disagg import (
    DisaggRequest,
    _candidate,
    _role_request,
    handover_for,
    prefill_batching,
    role_prefill_ms,
    role_tpot_ms,
    transfer_seconds,
)
from kvplan.analysis.disagg_ratio import PrefillBatching, RatioTarget, evaluate_xy
from kvplan.analysis.inputs import EstimateInputs
from kvplan.analysis.plan_search import plan_inputs_for
from kvplan.analysis.plan_types import Candidate, Layout
from kvplan.analysis.simulate.disagg_local import LocalPrefillFlow
from kvplan.analysis.simulate.disagg_queue import QueuedTransferFlow
from kvplan.analysis.simulate.run import replica_step_cost, setup
from kvplan.engines.base import Engine
from kvplan.engines.dynamo_frontend import DYNAMO_FIRST_TOKEN_AT_PREFILL
from kvplan.engines.handover import DecodeRankState, Handover
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import KvLink, get_kv_link
from kvplan.sources.resolve import load_model
from tests.benches import deploy_flags, disagg_client, srt_slurm_recipes, srt_slurm_sglang

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "disagg"
FILES = ("aiconfigurator_silicon_refs_disagg.csv", "aiconfigurator_silicon_sample_vllm_disagg.csv")
# The PROSPECTIVE set (issue 29's honest split): every disaggregated row of aiconfigurator at
# commit 095f58a51c4ca8e61b66ec108d86f223f8d559ce that the 14 shaped vLLM Kimi-K2.5 rows and the
# vLLM gtl rows above are not: the SGLang and TensorRT-LLM rows of
# https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/aic-core/src/aiconfigurator_core/systems/silicon_sample.csv
# (1,574 ids) and
# https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/tools/accuracy_tracking/silicon_refs.csv
# (11 more ids), 1,585 rows, header kept, sorted by id. Frozen (committed) before the
# disaggregated simulator's rules were written and before kvplan's errors on them were looked
# at; evaluated once, after (tests/benches/disagg_bench.py reports them apart).
PROSPECTIVE_FILE = "aiconfigurator_prospective_disagg.csv.gz"
BAND = (0.75, 1.33)
# The commit of SGLang's decode-side admission rule (kvplan.engines.sglang.decode_admission,
# the simulation's hold before the prefill), which every replayed prospective row shaped.
ADMISSION_COMMIT = "abc0049"
DECODE_GATHER_COMMIT = "ca77c7a"  # SGLang's decode gather without DeepEP (kvplan.perf.roofline)
LOGITS_GATHER_COMMIT = "11904b0"  # SGLang's split lm_head's logits gather (roofline)
# SGLang's prefill input budget (--max-prefill-tokens: kvplan.analysis.simulate.disagg_sim).
INPUT_BUDGET_COMMIT = "80acbcc"
PREFIX = "aiconfigurator "

# (model_path, precision) -> (config kvplan sizes, KV dtype, what it is).
MODELS = {
    ("Qwen/Qwen3-32B", "fp8"): ("tests/data/configs/qwen3-32b-fp8.json", "fp8",
                                "Qwen/Qwen3-32B-FP8's config"),
    # Kimi-K2.5 is a vision wrapper kvplan refuses (KimiK25ForConditionalGeneration); the rows
    # run text prompts through its language model, a DeepseekV3ForCausalLM kvplan sizes: the
    # text_config of nvidia/Kimi-K2.5-NVFP4 with the checkpoint's quantization_config (NVFP4
    # linear layers, bf16 attention; kv_cache_scheme 8-bit float, so fp8 KV). The vision
    # tower's weights are not counted.
    ("moonshotai/Kimi-K2.5", "fp4"): ("tests/data/disagg/kimi-k2.5-nvfp4-text.json", "fp8",
                                      "the language model of nvidia/Kimi-K2.5-NVFP4"),
    ("deepseek-ai/DeepSeek-V3", "fp8"): ("tests/data/configs/deepseek-v3.json", "bf16",
                                         "deepseek-ai/DeepSeek-V3's config"),
    # DeepSeek-R1 is DeepSeek-V3's architecture and checkpoint format (its config.json has the
    # same fields and sizes); stated here with the prospective set, before it was evaluated.
    ("deepseek-ai/DeepSeek-R1", "fp8"): ("tests/data/configs/deepseek-v3.json", "bf16",
                                         "deepseek-ai/DeepSeek-V3's config (R1: same shapes)"),
    # The NVFP4 DeepSeek-R1 the SGLang fp4 rows ran (nvidia/DeepSeek-R1-0528-FP4-v2; its
    # quantization_config reconstructed from ModelOpt's DeepSeek recipe, tests/data/disagg/
    # SOURCES.md): bf16 MLA, NVFP4 (W4A4) MLP and experts, FP8 KV (kv_cache_quant_algo FP8,
    # which SGLang's --kv-cache-dtype auto follows). Added at dis29, before these rows were
    # replayed: `COHORTS`.
    ("deepseek-ai/DeepSeek-V3", "fp4"): ("tests/data/disagg/deepseek-r1-nvfp4.json", "fp8",
                                         "DeepSeek-R1 NVFP4 (ModelOpt layout)"),
    ("deepseek-ai/DeepSeek-R1", "fp4"): ("tests/data/disagg/deepseek-r1-nvfp4.json", "fp8",
                                         "DeepSeek-R1 NVFP4 (ModelOpt layout)"),
    # The llm-d study's runs (public_disagg_runs.json, logs31; stated with those rows, before
    # they were replayed): Llama-3.1-70B's config (Llama-3.3-70B's architecture) with the
    # checkpoint's compressed-tensors FP8-dynamic quantization_config; KV in bf16 (auto).
    ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "fp8"): (
        "tests/data/disagg/llama-3.3-70b-fp8-dynamic.json", "bf16",
        "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic (Llama-3.1-70B's config)"),
    # Anyscale's Ray Serve PD runs (public_disagg_runs65.json, prospdis65; stated with those
    # rows, before they were replayed): openai/gpt-oss-120b's config (MXFP4 experts, bf16
    # attention, the quantization_config's modules_to_not_convert); KV in bf16 (auto).
    ("openai/gpt-oss-120b", "mxfp4"): ("tests/data/configs/gpt-oss-120b.json", "bf16",
                                       "openai/gpt-oss-120b's config (MXFP4 experts)"),
    # The ankdeshm/dynamo_disaag_serving_gke runs (public_disagg_runs66.json, prospdis66; stated
    # with those rows, before they were replayed): Llama-3.1-70B's config with the checkpoint's
    # FP8 per-tensor quantization_config as its model card states it (reconstructed); every
    # worker ran --kv-cache-dtype fp8.
    ("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "fp8"): (
        "tests/data/disagg/llama-3.1-70b-fp8-static.json", "fp8",
        "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8 (Llama-3.1-70B's config, FP8 per-tensor)"),
}
# When each prospective row was first replayed, by its checkpoint: the rule that chose the
# prospective rows a session replays for the first time is fixed before their results are
# seen. bc0cfec (the disaggregated simulator): the FP8 DeepSeek rows; dis29 (the GEMM-type
# rule: NVFP4 at the FP4 peak): every frozen row that entry of MODELS makes replayable, i.e. all
# SGLang NVFP4 DeepSeek-R1 rows with full worker layouts and a stated concurrency (42; the
# other frozen rows lack worker counts or are TensorRT-LLM's, whose scheduler is not simulated).
COHORTS = {("deepseek-ai/DeepSeek-V3", "fp4"): "dis29", ("deepseek-ai/DeepSeek-R1", "fp4"): "dis29"}
FIRST_COHORT = "bc0cfec"
# By engine, ahead of COHORTS: trtdis54 (TensorRT-LLM's disaggregated flow,
# kvplan.engines.trtllm.disagg_flow) made every frozen TensorRT-LLM row replayable that kvplan
# sizes, whose image's TensorRT-LLM release is known (`trtllm_release`), with full worker
# layouts and a stated concurrency. The rule and this choice were committed before any of
# these rows was replayed.
BACKEND_COHORTS = {"trtllm": "trtdis54"}
# The TensorRT-LLM release each dynamo runtime image ships, by aiconfigurator's matrix at
# 095f58a5 (src/aiconfigurator/generator/facts/runtimes/dynamo.yaml: 0.8.1 and 0.8.1.post1 ->
# 1.2.0rc6.post1). The matrix lists no 0.8.1.post2 / post3; Dynamo's own support matrix
# (https://docs.nvidia.com/dynamo/getting-started/support-matrix, "Backend Dependencies":
# v0.8.1.post2 -> 1.2.0rc6.post2, v0.8.1.post3 -> 1.2.0rc6.post3, experimental TRT-LLM-container
# releases; trtdep54) does (before trtdep54 taken as 0.8.1's: the same 1.2 line, and kvplan's
# TensorRT-LLM rules differ by major.minor only, so no number moved). Neither lists 0.5.1 nor
# the 1.1.0 pre-release (1.1.0-dev.2): their rows are not replayed. A row naming
# `dynamo_version=` instead of an image states TensorRT-LLM's release as its backend_version.
DYNAMO_TRTLLM = {"0.8.1": "1.2.0rc6.post1", "0.8.1.post1": "1.2.0rc6.post1",
                 "0.8.1.post2": "1.2.0rc6.post2", "0.8.1.post3": "1.2.0rc6.post3"}
GPUS = {"h100_sxm": "H100", "h200_sxm": "H200", "b200_sxm": "B200", "gb200": "GB200",
        "gb300": "GB300"}
# The link the handover crosses: the NVL72 domain's NVLink on GB200 / GB300 (prefill and
# decode trays in one rack), InfiniBand NDR between HGX nodes; a row that states its link (a
# public run's `kv_link`, a kv_links.json name: both roles on one node, EFA) takes that.
LINKS = {"gb200": "nvlink5", "gb300": "nvlink5"}
GPUS_PER_NODE = {"gb200": 4, "gb300": 4}  # GPUs per compute tray


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """How a row's deployment really ran each role, where its launch recipe is public."""

    prefill: Layout
    decode: Layout
    prefill_eager: bool  # --enforce-eager on the prefill workers
    source: str
    prefill_max_num_batched_tokens: int | None = None  # the recipe's, where it states one


# aiconfigurator's vLLM Kimi-K2.5 GB200 configs 697 (1 prefill worker of 4 GPUs, 1 decode
# worker of 16) and 698 (1 of 4, 4 of 4) are NVIDIA's srt-slurm recipes
# `1p1d-dep4-dep16` and `1p4d-dep4-tep4`: prefill `--data-parallel-size 4
# --enable-expert-parallel --enforce-eager`, decode DEP16 (`--data-parallel-size 16`) or TEP4
# (`--tensor-parallel-size 4 --enable-expert-parallel`), decode CUDA graphs FULL_DECODE_ONLY.
# The rows write the DP ranks as tp_size (attention_dp_size 1).
_KIMI_SOURCE = ("vLLM's Kimi-K2.5 recipe, 'Disaggregated prefill/decode (GB200 / NVFP4)' "
                "(https://github.com/vllm-project/recipes, moonshotai/Kimi-K2.5.md, PR 332, "
                "2026-04-14: DEP4 prefill with --enforce-eager, DEP16 decode); the srt-slurm "
                "recipes as InferenceX checks them in (github.com/SemiAnalysisAI/InferenceX "
                "benchmarks/multi_node/srt-slurm-recipes/vllm/kimi-k2.5-fp4/1k1k/"
                "disagg-gb200-1p1d-dep4-dep16.yaml, 8k1k/disagg-gb200-1p4d-dep4-tep4.yaml)")
_DEP4 = Layout(tp=4, dp=4, ep=4, dp_attention=True, gpus_per_node=4)
RECIPES = {
    ("moonshotai/Kimi-K2.5", "gb200", "vllm", "697"): Recipe(
        prefill=_DEP4, decode=Layout(tp=16, dp=16, ep=16, dp_attention=True, gpus_per_node=4),
        prefill_eager=True, source=_KIMI_SOURCE, prefill_max_num_batched_tokens=16384),
    ("moonshotai/Kimi-K2.5", "gb200", "vllm", "698"): Recipe(
        prefill=_DEP4, decode=Layout(tp=4, ep=4, gpus_per_node=4), prefill_eager=True,
        source=_KIMI_SOURCE, prefill_max_num_batched_tokens=16384),
}


def recipe(row: dict[str, str]) -> Recipe | None:
    m = re.search(r"config_id=(\d+)", row["silicon_data_source"])
    key = (row["model_path"], row["system"], row["backend"], m.group(1) if m else "")
    return RECIPES.get(key)


@dataclass(frozen=True, kw_only=True)
class Replay:
    id: str
    label: str  # layout and load, for the table
    measured_ttft_ms: float
    measured_tpot_ms: float
    concurrency: int | None
    input_len: int
    output_len: int
    ttft_ms: float | None = None  # None: prefill saturated at the row's load
    tpot_ms: float | None = None
    prefill_ms: float | None = None  # one prompt alone on one prefill worker
    why_not: str = ""  # set when the row is not replayed
    cohort: str = FIRST_COHORT  # the session that first replayed it (`COHORTS`)

    @property
    def replayed(self) -> bool:
        return not self.why_not

    @property
    def ratios(self) -> tuple[float, float] | None:
        if self.ttft_ms is None or self.tpot_ms is None:
            return None
        return self.ttft_ms / self.measured_ttft_ms, self.tpot_ms / self.measured_tpot_ms

    @property
    def inside(self) -> bool:
        r = self.ratios
        return r is not None and all(BAND[0] <= x <= BAND[1] for x in r)


def replay_table(done: list[Replay]) -> list[str]:
    """The per-row table of replayed rows (sections 2, 3a/3b and 3j)."""
    out = ["| row | layout and load | measured TTFT / TPOT ms | kvplan TTFT / TPOT ms | "
           "ratio TTFT / TPOT | |", "|---|---|---|---|---|---|"]
    for r in done:
        assert r.tpot_ms is not None
        rt = "prefill saturated" if r.ttft_ms is None else f"{r.ttft_ms:,.1f}"
        ratio = ("- / " + f"{r.tpot_ms / r.measured_tpot_ms:.2f}" if r.ratios is None
                 else " / ".join(f"{x:.2f}" for x in r.ratios))
        out.append(f"| {r.id.removeprefix(PREFIX)} | {r.label} | {r.measured_ttft_ms:,.1f} / "
                   f"{r.measured_tpot_ms:,.2f} | {rt} / {r.tpot_ms:,.2f} | {ratio} | "
                   f"{'in' if r.inside else 'out'} |")
    return out


def rows() -> list[dict[str, str]]:
    """Every row of the CSV files, each id once (the sample repeats one of the refs)."""
    seen: dict[str, dict[str, str]] = {}
    for name in FILES:
        with (DATA / name).open() as f:
            for row in csv.DictReader(f):
                seen.setdefault(row["id"], row)
    return list(seen.values())


def prospective_rows() -> list[dict[str, str]]:
    """The frozen prospective rows (PROSPECTIVE_FILE), in file order."""
    with gzip.open(DATA / PROSPECTIVE_FILE, "rt") as f:
        return list(csv.DictReader(io.StringIO(f.read())))


def row_ids() -> list[str]:
    return [PREFIX + r["id"] for r in rows()]


def prospective_row_ids() -> list[str]:
    return [PREFIX + r["id"] for r in prospective_rows()]


def stated_concurrency(row: dict[str, str]) -> int | None:
    m = re.search(r"silicon_concurrency=(\d+)", row["silicon_data_source"])
    return int(m.group(1)) if m else None


def _int(value: str, default: int = 1) -> int:
    return int(value) if value and int(value) > 0 else default


def layout(row: dict[str, str], role: str) -> Layout:
    r = recipe(row)
    if r is not None:
        return r.prefill if role == "prefill" else r.decode
    tp, dp = _int(row[f"{role}_tp_size"]), _int(row[f"{role}_attention_dp_size"])
    return Layout(tp=tp * dp, dp=dp, dp_attention=dp > 1, ep=_int(row[f"{role}_moe_ep_size"]),
                  gpus_per_node=GPUS_PER_NODE.get(row["system"], 8))


def trtllm_release(row: dict[str, str]) -> str | None:
    """The TensorRT-LLM release a row ran (`DYNAMO_TRTLLM`), None where unknown; a row of
    another engine: its backend_version."""
    if row["backend"] != "trtllm":
        return row["backend_version"]
    m = re.search(r"tensorrtllm-runtime:(\S+)", row["silicon_data_source"])
    if m:
        return DYNAMO_TRTLLM.get(m.group(1))
    return row["backend_version"] if "dynamo_version=" in row["silicon_data_source"] else None


def _label(row: dict[str, str], conc: int | None) -> str:
    def role(r: str) -> str:
        lay = layout(row, r)
        text = f"{row[f'{r}_num_workers']}{r[0].upper()} "
        text += f"DP{lay.dp}" if lay.dp_attention else f"TP{lay.tp}"
        text += f" EP{lay.ep}" if lay.ep > 1 else ""
        eager = r == "prefill" and (rec := recipe(row)) is not None and rec.prefill_eager
        return text + (" eager" if eager else "")
    load = f"{conc} conc." if conc is not None else "conc. unstated"
    return f"{role('prefill')} : {role('decode')}, {row['isl']}/{row['osl']}, {load}"


def _request(row: dict[str, str], conc: int | None, role: str = "decode", *,
             fp4: bool = True) -> DisaggRequest:
    """`fp4` False: the card without its FP4 peak (NVFP4 priced as before bc725f6, weight-only
    bf16 math), for the counterfactual line of the bench; nothing else uses it."""
    _config, kv_dtype, _ = MODELS[(row["model_path"], row["precision"])]
    r = recipe(row)
    eager = role == "prefill" and r is not None and r.prefill_eager
    gpu = get_gpu(GPUS[row["system"]])
    if not fp4:
        gpu = replace(gpu, peak_fp4_flops_per_s=None)
    # dynpool67: the role's own launch flags where the row states them (tests.benches.
    # deploy_flags: memory fraction, block size, token budget, ...), else the engine's defaults.
    flags = deploy_flags.role_flags(row, role)
    fraction = flags.pop("mem_fraction", None)
    return DisaggRequest(
        prefill=layout(row, "prefill"), decode=layout(row, "decode"),
        input_len=int(row["isl"]), output_len=int(row["osl"]),
        gpu=gpu, link=kv_link(row),
        engine=Engine(row["backend"]), engine_version=trtllm_release(row),
        kv_dtype=kv_dtype, concurrency=conc, mem_fraction=fraction, extra={
            **({"enforce_eager": True} if eager else {}), **_trtllm_tokens(row, role),
            **flags})


def kv_link(row: dict[str, str]) -> KvLink:
    """The link a row's KV crosses: its own `kv_link` where it states one, else `LINKS`."""
    return get_kv_link(row.get("kv_link") or LINKS.get(row["system"], "ib-ndr"))


def _trtllm_tokens(row: dict[str, str], role: str) -> dict[str, int]:
    """A TensorRT-LLM row's max_num_tokens per role as aiconfigurator's generator writes it
    (generator/rule_plugin/trtllm.rule at 095f58a5: prefill ((ISL + 500) rounded up to
    tokens_per_block 32), decode (max_batch_size rounded up to 32)); it sizes the estimation
    run and, under attention DP, the MoE all-to-all workspace (kvplan.engines.trtllm.
    moe_alltoall). Other engines: nothing (their default)."""
    if row["backend"] != "trtllm":
        return {}
    tokens = int(row["isl"]) + 500 if role == "prefill" else _int(row["decode_batch_size"])
    return {"max_num_batched_tokens": -(-tokens // 32) * 32}


# The fields a row's deployment is set by (not its load): rows differing only in concurrency
# share one setup (`_setup`).
_SETUP_FIELDS = ("model_path", "precision", "system", "backend", "backend_version", "isl", "osl",
                 *(f"{r}_{f}" for r in ("prefill", "decode")
                   for f in ("num_workers", "tp_size", "pp_size", "attention_dp_size",
                             "moe_ep_size")))
# TensorRT-LLM's rows also by their engines' batch sizes and image (`_trtllm_seats`,
# `trtllm_release`): aiconfigurator's generator writes each role's max_batch_size from them.
_TRTLLM_FIELDS = ("prefill_batch_size", "decode_batch_size")


def _setup_key(row: dict[str, str]) -> tuple[tuple[str, str], ...]:
    m = re.search(r"config_id=(\d+)", row["silicon_data_source"])
    key = (*((f, row[f]) for f in _SETUP_FIELDS), ("config_id", m.group(1) if m else ""),
           *((("kv_link", row["kv_link"]),) if row.get("kv_link") else ()),
           *((f, row[f]) for f in deploy_flags.FIELDS if row.get(f)))
    if row["backend"] != "trtllm":
        return key
    return (*key, *((f, row[f]) for f in _TRTLLM_FIELDS),
            ("silicon_data_source", row["silicon_data_source"].split(";")[-1]))


def _trtllm_seats(row: dict[str, str]) -> tuple[int | None, int | None]:
    """(prompts per context step, running requests per generation rank) a TensorRT-LLM row's
    engines ran: aiconfigurator's generator (generator/rule_plugin/trtllm.rule at 095f58a5)
    writes the context server's max_batch_size as the row's prefill batch size (`prefill
    max_batch_size = (max_batch_size if max_batch_size else 1)`; every such row states 1) and
    the generation server's as its decode batch size (`decode max_batch_size`). Its
    max_num_tokens (ISL + 500, or + 1,500 in benchmark/trtllm.rule, rounded up to 32) is at
    least the prompt either way, so a step takes one whole prompt; it is passed (since
    trtdep54, `_trtllm_tokens`) for what it sizes in memory. Other engines: (None, None)."""
    if row["backend"] != "trtllm":
        return None, None
    return _int(row["prefill_batch_size"]), _int(row["decode_batch_size"])


@dataclass(frozen=True, kw_only=True)
class _Setup:
    req: DisaggRequest
    prefill: Candidate
    decode: Candidate
    handover: Handover
    prefill_ms: float
    batching: PrefillBatching | None
    tpot_ms: Callable[[int], float | None]


@contextmanager
def _no_gather(prefill: bool, decode: bool) -> Iterator[None]:
    """SGLang's prefill (`prefill` False) or decode (`decode` False) MLP layers priced as before
    6084616 / DECODE_GATHER_COMMIT (their all-to-all, or one gather all-reduce under DP
    attention: kvplan.perf.roofline), for the bench's counterfactuals only: every Efficiency
    the cost model takes is the engine's less `prefill_mlp_all_reduce` / `decode_mlp_gather`."""
    from kvplan.perf import engine_traits

    real = engine_traits.engine_efficiency

    def without(*args: Any, **kwargs: Any) -> Any:
        eff = real(*args, **kwargs)
        return replace(eff, prefill_mlp_all_reduce=eff.prefill_mlp_all_reduce and prefill,
                       decode_mlp_gather=eff.decode_mlp_gather and decode)

    with patch.object(engine_traits, "engine_efficiency", without):
        yield


@contextmanager
def _no_logits_gather() -> Iterator[None]:
    """SGLang's decode steps priced as before LOGITS_GATHER_COMMIT, and its prefill steps as
    before sgldp64 (the split lm_head on every DP rank's rows, its hidden-row and logits
    gathers not priced: kvplan.perf.roofline `_logits_gather`), for the bench's
    counterfactual only."""
    from kvplan.perf import roofline

    with patch.object(roofline, "_logits_gather", lambda *args, **kwargs: None):
        yield


# aiconfigurator's generator writes an SGLang prefill worker's --max-prefill-tokens as the
# workload's ISL + 1,500 (generator/rule_plugin/sglang.rule at 095f58a5: `agg_prefill_decode
# max_prefill_tokens = SlaConfig.isl + 1500`) and its --max-running-requests as the row's
# prefill batch size, 1 where none is given (`prefill max_batch_size = (max_batch_size if
# max_batch_size else 1)`). Whether the measured rows ran them is not recorded (3f).
GENERATOR_PREFILL_PAD = 1500


def generator_prefill(batching: PrefillBatching, *, dp_attention: bool) -> PrefillBatching:
    """A prefill rank's batching as SGLang runs it at aiconfigurator's generated prefill flags
    (GENERATOR_PREFILL_PAD), for the bench's counterfactual only. SGLang 0.5.8.post1
    managers/schedule_policy.py:715-716, 732-735 (0.5.5.post2 :584-585, 601-604): a prompt
    after the first joins the step only while its page-rounded input is below the
    --max-prefill-tokens left, so a step takes 1 + (1,500 - 1) // ISL whole prompts (ISL
    1,024: 2, 2,048 tokens; ISL 8,192: 1), and no more than the chunk (kvplan's budget
    already). --max-running-requests 1 seats one prompt a step (managers/scheduler.py:556-560
    pp_max_micro_batch_size = max_running_requests, :2016-2018 the batch full at it;
    running_bs is 0 on a prefill worker); a DP-attention worker cannot start with it
    (model_runner.py:558-566, tp_worker.py:281), so its seats stay the default. Not
    modelled: that worker's 2 metadata buffers (scheduler.py:910-912, 2 x
    max_running_requests) bounding the prompts between bootstrap and the KV sent."""
    whole = 1 + (GENERATOR_PREFILL_PAD - 1) // batching.input_len
    return replace(batching, token_budget=min(batching.token_budget, whole * batching.input_len),
                   max_seqs=batching.max_seqs if dp_attention else 1)


@cache
def _setup(key: tuple[tuple[str, str], ...], fp4: bool = True, gather: bool = True,
           decode_gather: bool = True, logits_gather: bool = True,
           generator: bool = False, sglang_recipe: tuple[str, str] | None = None,
           trt_context: tuple[str, str] | None = None, deepep: bool = True,
           trt_kv: bool = True, trt_fraction: bool = True) -> _Setup:
    """`gather` / `decode_gather` / `logits_gather` False: a setup whose times are only ever
    taken under `_no_gather` / `_no_logits_gather`. `generator`: the prefill batching at
    aiconfigurator's generated flags (`generator_prefill`). `sglang_recipe`: (path, commit) of
    the srt-slurm recipe version an SGLang row ran, whose settings both roles take
    (`sglang_recipe_settings`). `trt_context`: (path, commit) of the srt-slurm recipe version a
    TensorRT-LLM row ran, whose context server's max_batch_size / max_num_tokens set the prefill
    steps and whose roles' max_num_tokens size the memory (`_trt_recipe_tokens`). `deepep`
    False: an SGLang recipe's DeepEP roles without their DeepEP flags (`_with_role`). `trt_kv`
    False: a TensorRT-LLM recipe's roles at MODELS's KV dtype, not the recipe's
    kv_cache_config.dtype (`_trt_recipe_kv`). `trt_fraction` False: a TensorRT-LLM row's roles
    at kvplan's default free_gpu_memory_fraction, not its recipe's or the generator's
    (`_trt_fraction`)."""
    row = dict(key)
    row["silicon_data_source"] = f"config_id={row['config_id']};" + row.get(
        "silicon_data_source", "")
    spec, _ = load_model(str(ROOT / MODELS[(row["model_path"], row["precision"])][0]))
    req, p_req = _request(row, 1, fp4=fp4), _request(row, 1, "prefill", fp4=fp4)
    srt = srt_slurm_sglang.by_version(*sglang_recipe) if sglang_recipe is not None else None
    if srt is not None:
        req, p_req = _with_role(req, srt.decode, deepep), _with_role(p_req, srt.prefill, deepep)
    trt = srt_slurm_recipes.by_version(*trt_context) if trt_context is not None else None
    if trt is not None:
        req, p_req = _trt_recipe_tokens(req, trt.decode), _trt_recipe_tokens(p_req, trt.prefill)
        if trt_kv:
            req, p_req = _trt_recipe_kv(req, trt.decode), _trt_recipe_kv(p_req, trt.prefill)
    if trt_fraction and row["backend"] == "trtllm":
        req, p_req = (_trt_fraction(req, trt.decode if trt is not None else None),
                      _trt_fraction(p_req, trt.prefill if trt is not None else None))
    prefill = _candidate(spec, p_req, "prefill", req.prefill)
    decode = _candidate(spec, req, "decode", req.decode)
    p_ms = role_prefill_ms(spec, p_req, prefill)
    rec = recipe(row)
    seats, decode_seats = _trtllm_seats(row)
    p_flags, d_flags = (deploy_flags.role_flags(row, r) for r in ("prefill", "decode"))
    budget = (rec.prefill_max_num_batched_tokens if rec is not None
              else p_flags.get("max_num_batched_tokens"))
    seats = p_flags.get("max_num_seqs", seats)
    decode_seats = d_flags.get("max_num_seqs", decode_seats)
    if trt is not None:
        seats, budget = trt.prefill.max_batch_size, trt.prefill.max_num_tokens
    batching = prefill_batching(spec, p_req, prefill, decode, token_budget=budget,
                                max_seqs=seats, decode_max_seqs=decode_seats)
    if srt is not None and batching is not None:
        batching = _recipe_batching(batching, srt, req, decode)
    if generator and batching is not None:
        batching = generator_prefill(batching, dp_attention=prefill.layout.dp_attention)

    @cache
    def tpot_ms(batch: int) -> float | None:
        return role_tpot_ms(spec, req, decode, batch=batch)

    return _Setup(req=req, prefill=prefill, decode=decode,
                  handover=handover_for(spec, req, decode), prefill_ms=p_ms or math.nan,
                  batching=batching, tpot_ms=tpot_ms)


def _with_role(req: DisaggRequest, role: srt_slurm_sglang.SglangRole, deepep: bool = True
               ) -> DisaggRequest:
    """A role's request at its recipe's --mem-fraction-static, --max-running-requests (the
    pool's request slots and, on a decode server, its running cap: kvplan.engines.sglang.pools
    and decode_admission divide it by --dp-size) and --max-total-tokens (the pool's tokens),
    where the recipe sets them; else as before (SGLang's defaults, kvplan's rules). `deepep`:
    a DeepEP role's --moe-a2a-backend deepep with its --deepep-mode, --moe-dense-tp-size,
    --enable-dp-lm-head and SGLANG_MOE_NVFP4_DISPATCH (sgldeepep59, kvplan.engines.sglang.
    deepep; SglangRole.deepep_settings); False: without them, as before DEEPEP_COMMIT."""
    extra = {**req.extra, **(role.deepep_settings() if deepep else {}),
             **({"max_num_seqs": role.max_running_requests}
                if role.max_running_requests is not None else {}),
             **({"max_total_tokens": role.max_total_tokens}
                if role.max_total_tokens is not None else {})}
    fraction = role.mem_fraction_static
    return replace(req, extra=extra,
                   mem_fraction=fraction if fraction is not None else req.mem_fraction)


def _trt_recipe_tokens(req: DisaggRequest, role: srt_slurm_recipes.RoleSettings
                       ) -> DisaggRequest:
    """A TensorRT-LLM role's request at its recipe's max_num_tokens (in place of the generator's
    rounding, `_trtllm_tokens`): it sizes the estimation run and, under attention DP, the MoE
    all-to-all workspace (kvplan.engines.trtllm.moe_alltoall)."""
    return replace(req, extra={**req.extra, "max_num_batched_tokens": role.max_num_tokens})


RECIPE_KV_COMMIT = "trtdis64"  # a TensorRT-LLM recipe's kv_cache_config.dtype (`_trt_recipe_kv`)


def _trt_recipe_kv(req: DisaggRequest, role: srt_slurm_recipes.RoleSettings) -> DisaggRequest:
    """A TensorRT-LLM role's request at its recipe's KV-cache dtype (trtdis64): every matched
    srt-slurm version sets `kv_cache_config: dtype: fp8` on both roles (NVIDIA/srt-slurm
    recipes/trtllm/*, trtllm_config.prefill / decode, at each version's commit; all 141), and
    TensorRT-LLM's PyTorch backend then holds the cache at 1 byte an element
    (kvplan.engines.trtllm.kv_dtype: pyexecutor/_util.py get_cache_size_per_token,
    has_fp8_kv_cache), where MODELS keeps the FP8 DeepSeek checkpoints' `auto` (bf16: their
    config declares no kv_cache_quant_algo). It sizes each role's pool (the generation ranks'
    seats at the I + O reservation, `decode_max_seqs`), the decode step's KV reads and the
    transfer's bytes. "auto" or unset: MODELS's dtype, unchanged. Not applied: TensorRT-LLM's
    FP8 context MLA that an FP8 cache turns on (trtctx62's counterfactual; an engine rule)."""
    if role.kv_cache_dtype in (None, "auto") or role.kv_cache_dtype == req.kv_dtype:
        return req
    return replace(req, kv_dtype=role.kv_cache_dtype)


def _recipe_batching(batching: PrefillBatching, srt: srt_slurm_sglang.SglangRecipe,
                     req: DisaggRequest, decode: Candidate) -> PrefillBatching:
    """The prefill steps and the decode rank's admission at an SGLang row's recipe: each prefill
    rank's token budget its --chunked-prefill-size and its prompts a step its
    --max-running-requests (both // --dp-size under DP attention: SglangRole.per_rank), the
    input budget its --max-prefill-tokens (not divided: kvplan.engines.sglang.options
    MAX_PREFILL_TOKENS); the decode rank's admission (kvplan.engines.sglang.decode_admission)
    from the decode role's pool and --max-running-requests (prefill_batching reads the
    request it is given, the prefill's). A flag the recipe leaves unset keeps its default."""
    p = srt.prefill
    budget, seats = p.per_rank(p.chunked_prefill_size), p.per_rank(p.max_running_requests)
    out = replace(batching, token_budget=budget or batching.token_budget,
                  max_seqs=seats or batching.max_seqs,
                  input_budget=p.max_prefill_tokens or batching.input_budget)
    if batching.decode_admission is None:
        return out
    cap, lay = decode.capacity, decode.layout
    adm = req.engine.rules.kv_connector(req.connector).decode_admission(
        pool_tokens=cap.token_capacity, max_num_reqs=cap.max_running_requests or 0,
        page_tokens=cap.block_size, dp_attention=lay.dp if lay.dp_attention else 1,
        user_max_running=req.extra.get("max_num_seqs"))
    if adm is None:
        return out
    return replace(out, decode_admission=adm, decode_max_seqs=max(1, adm.max_running))


# aiconfigurator's generator at 095f58a5: backend_templates/trtllm/extra_engine_args.
# 1.2.0rc6.post1.yaml.j2:28 (and post2's) `free_gpu_memory_fraction: {{ kv_cache_config.
# free_gpu_memory_fraction | default(0.80) }}`, and its trtllm.rule sets none: 0.80 on both roles.
GENERATOR_TRT_FRACTION = 0.80


def _trt_fraction(req: DisaggRequest, role: srt_slurm_recipes.RoleSettings | None
                  ) -> DisaggRequest:
    """A TensorRT-LLM role's request at the free_gpu_memory_fraction it ran (trtctx68): its
    matched recipe's kv_cache_config.free_gpu_memory_fraction (`role`), else the generator's
    template's (GENERATOR_TRT_FRACTION: the rows replayed at the generator's settings); a
    fraction the row's own flags state (tests.benches.deploy_flags) is kept. TensorRT-LLM's pool
    is (total - weights - reserve) x that fraction (kvplan.engines.trtllm.budget)."""
    if req.mem_fraction is not None:
        return req
    fraction = role.free_gpu_memory_fraction if role is not None else GENERATOR_TRT_FRACTION
    return replace(req, mem_fraction=fraction)


def queued_flow(st: _Setup) -> QueuedTransferFlow | None:
    """The simulation's transfer queues where the row's connector bounds its transfers per rank
    (`Handover.transfer_queue`: TensorRT-LLM's cache transceiver, kvplan.engines.trtllm.
    transceiver_queue; trtctx68), with one prefill rank's pool as the replay sizes it (blocks
    of its block size) where the sender holds a prompt's KV until its send ends; else None."""
    q = st.handover.transfer_queue
    if q is None or not st.handover.transfer_polled:
        return None
    cap = st.prefill.capacity
    assert cap.block_size
    return QueuedTransferFlow(
        send_slots=q.send_slots, recv_slots=q.recv_slots,
        pool_blocks=cap.token_capacity // cap.block_size if q.sender_holds_kv else None,
        block_tokens=cap.block_size, held_extra_tokens=q.held_extra_tokens)


RECV_INTERVAL_COMMIT = "disagg63"  # the decode role's --scheduler-recv-interval (`_recipe_recv`)


def _recipe_recv(batching: PrefillBatching, srt: srt_slurm_sglang.SglangRecipe
                 ) -> PrefillBatching:
    """The decode rank's admission at the recipe's decode --scheduler-recv-interval (disagg63:
    the decode scheduler takes new requests every N decode steps, so a prompt waits for that
    before its preallocation and prefill: kvplan.engines.sglang.decode_admission, "Taking
    requests in"), where the recipe sets it on a decode role without DP attention (SGLang
    refuses it with DP attention); else unchanged."""
    d, adm = srt.decode, batching.decode_admission
    if adm is None or not d.scheduler_recv_interval or d.enable_dp_attention:
        return batching
    return replace(batching, decode_admission=replace(adm, recv_interval=d.scheduler_recv_interval))


def trt_context_recipe(row: dict[str, str]) -> srt_slurm_recipes.SrtRecipe | None:
    """The srt-slurm recipe version a TensorRT-LLM row ran (as `recipe_decode_seats` finds it),
    else None (sglseat58): its context server's max_batch_size and max_num_tokens per rank
    (kvplan.engines.trtllm.disagg_flow (a): each rank's micro-batch scheduler takes waiting
    prompts up to both) in place of the generator's one prompt a step, and both roles'
    max_num_tokens (`_trt_recipe_tokens`)."""
    if row["backend"] != "trtllm":
        return None
    return srt_slurm_recipes.for_row(row, stated_concurrency(row), layout(row, "prefill"),
                                     layout(row, "decode"))


def sglang_recipe_settings(row: dict[str, str]) -> srt_slurm_sglang.SglangRecipe | None:
    """The srt-slurm recipe version an SGLang row ran (tests.benches.srt_slurm_sglang), else
    None (sglseat58): the rows' prefill / decode batch sizes are aiconfigurator's InferenceX
    adapter's concurrency over ranks (sdk/config_adapter/inferencex.py `_worker` at 095f58a5),
    not the engine's flags, and the replay otherwise runs SGLang's defaults."""
    if row["backend"] != "sglang":
        return None
    return srt_slurm_sglang.for_row(row, stated_concurrency(row), layout(row, "prefill"),
                                    layout(row, "decode"))


def predict(row: dict[str, str], conc: int, *, fp4: bool = True, flow: bool = True,
            admission: bool = True, gather: bool = True, decode_gather: bool = True,
            logits_gather: bool = True, generator: bool = False, input_budget: bool = True,
            recipe_seats: bool = True, sglang_recipe: bool = True, recipe_context: bool = True,
            deepep: bool = True, client: bool = True,
            lengths: bool = True, routing: bool = False, recv_interval: bool = True,
            recipe_kv: bool = True, no_connector: bool = True, engine_flags: bool = True,
            recipe_fraction: bool = True, serial_transfers: bool = True
            ) -> tuple[float | None, float | None, float]:
    """(TTFT ms, TPOT ms, one prompt's prefill ms) kvplan predicts for the row at `conc`
    requests in flight (TTFT None: the prefill workers are saturated). `flow` False: the
    connector's time side left out (first token at the transfer's end, no prefill lookahead,
    least-loaded ranks: SGLang's before 63c3946), for the bench's counterfactual only.
    `admission` False: no decode-side admission before the prefill (SGLang's before
    ADMISSION_COMMIT): the decode rank's running requests bounded by requests of I + O tokens
    its KV holds, as kvplan.analysis.disagg.prefill_batching bounds them for a connector
    without one; the bench's counterfactual only. `gather` False: SGLang's prefill MLP
    layers priced as before 6084616 (`_no_gather`); `decode_gather` False: its decode MLP
    layers priced as before DECODE_GATHER_COMMIT; `logits_gather` False: its decode (prefill)
    steps without the split lm_head's gathers (`_no_logits_gather`); `generator`: the prefill at
    aiconfigurator's generated flags (`generator_prefill`); `input_budget` False: the prefill
    steps without SGLang's --max-prefill-tokens budget (before INPUT_BUDGET_COMMIT); the bench's
    counterfactuals only. `recipe_seats` False: a TensorRT-LLM row's generation ranks seated
    at its decode batch size as before trtseat58 (`recipe_decode_seats`), the bench's
    counterfactual only. `sglang_recipe` False: an SGLang row at SGLang's defaults as before
    sglseat58 (`sglang_recipe_settings`); `recipe_context` False: a TensorRT-LLM row's context
    server at one prompt a step and both roles' max_num_tokens at the generator's rounding, as
    before sglseat58 (`trt_context_recipe`); `deepep` False: an SGLang recipe's DeepEP roles
    without their DeepEP flags, as before sgldeepep59; the bench's counterfactuals only. `client`
    False: the simulation's own measurement (four rounds, the first and last not averaged), as
    before disaggwhy59 (tests.benches.disagg_client: sa-bench's rounds, its first burst averaged
    in); `routing` True: srt-slurm's Dynamo frontends' choice of worker not by load, drawn
    uniformly (frozen on at 4121cdc6, off since: its evaluation refuted it, disagg_why.py).
    `lengths` False: sa-bench's requests all at the row's ISL / OSL, not its --random-range-ratio
    0.8 draw (before rangeratio60: disagg_client.client); the bench's counterfactual only.
    `recv_interval` False: an SGLang recipe's decode --scheduler-recv-interval not applied
    (`_recipe_recv`, before disagg63); the bench's counterfactual only. `recipe_kv` False: a
    TensorRT-LLM recipe's roles at MODELS's KV dtype, not its kv_cache_config.dtype
    (`_trt_recipe_kv`, before RECIPE_KV_COMMIT); the bench's counterfactual only.
    `no_connector` False: a row whose decode workers run without a KV connector
    (`decode_kv_connector` "none": `local_flow`) replayed as if they pulled the KV, as before
    dynnocon67; the bench's counterfactual only. `engine_flags` False: a row's own per-role
    launch flags (tests.benches.deploy_flags: memory fraction, block size, token budget, ...)
    dropped, every role at kvplan's defaults, as before dynpool67; the bench's counterfactual
    only. `recipe_fraction` False: a TensorRT-LLM row's roles at kvplan's default
    free_gpu_memory_fraction (0.9), not its recipe's (or the generator's template's 0.80 where
    no recipe is matched), as before trtctx68 (`_trt_fraction`); `serial_transfers` False: the
    connector's transfers all at once and no prefill pool held until the send ends, as before
    trtctx68 (`queued_flow`); the bench's counterfactuals only."""
    if not engine_flags:
        row = deploy_flags.without_flags(row)
    with (nullcontext() if gather and decode_gather else _no_gather(gather, decode_gather),
          nullcontext() if logits_gather else _no_logits_gather()):
        return _predict(row, conc, fp4=fp4, flow=flow, admission=admission, gather=gather,
                        decode_gather=decode_gather, logits_gather=logits_gather,
                        generator=generator, input_budget=input_budget,
                        recipe_seats=recipe_seats, sglang_recipe=sglang_recipe,
                        recipe_context=recipe_context, deepep=deepep, client=client,
                        lengths=lengths, routing=routing, recv_interval=recv_interval,
                        recipe_kv=recipe_kv, no_connector=no_connector,
                        recipe_fraction=recipe_fraction, serial_transfers=serial_transfers)


def recipe_decode_seats(row: dict[str, str]) -> int | None:
    """The max_batch_size a TensorRT-LLM row's generation server ran, per rank, where its run is
    matched to an srt-slurm recipe (tests.benches.srt_slurm_recipes), else None (trtseat58).
    The row's decode batch size is not it: aiconfigurator's InferenceX adapter
    (sdk/config_adapter/inferencex.py `_worker` at 095f58a5) writes the concurrency over the
    decode workers and attention-DP ranks there. TensorRT-LLM applies max_batch_size per rank
    (tensorrt_llm/_torch/pyexecutor/executor_request_queue.py, as GitHub's index stores it at
    007a7508: `_fetch_new_requests_attention_tp` activates at most max_num_active_requests,
    `_fetch_new_requests_attention_dp` tp_size x that over the ranks, the rest left in
    `waiting_queue`; max_num_active_requests is the engine's max_batch_size, and each rank's
    capacity scheduler seats at most it), as the simulation's decode_max_seqs per rank: a
    request handed over to a full rank waits for a seat, its wait in its TTFT."""
    rec = srt_slurm_recipes.for_row(row, stated_concurrency(row), layout(row, "prefill"),
                                    layout(row, "decode"))
    return rec.decode.max_batch_size if rec is not None else None


def decode_max_seqs(row: dict[str, str], st: _Setup) -> int:
    """Running requests per decode rank the replay seats: a TensorRT-LLM row's recipe
    max_batch_size (`recipe_decode_seats`) within the pool's requests of I + O tokens, as
    kvplan.analysis.disagg.prefill_batching bounds the row's own; else the setup's."""
    assert st.batching is not None
    seats = recipe_decode_seats(row) if row["backend"] == "trtllm" else None
    if seats is None:
        return st.batching.decode_max_seqs
    return max(1, min(seats, st.decode.requests // st.req.decode.replicas))


def replay_setup(row: dict[str, str]) -> _Setup:
    """The setup the default replay runs the row at (its srt-slurm recipe's settings where
    matched: `sglang_recipe_settings`, `trt_context_recipe`), for the bench's lenses."""
    srt, trt = sglang_recipe_settings(row), trt_context_recipe(row)
    return _setup(_setup_key(row), sglang_recipe=(srt.path, srt.commit) if srt else None,
                  trt_context=(trt.path, trt.commit) if trt else None)


def _predict(row: dict[str, str], conc: int, *, fp4: bool, flow: bool, admission: bool,
             gather: bool, decode_gather: bool, logits_gather: bool, generator: bool = False,
             input_budget: bool = True, recipe_seats: bool = True, sglang_recipe: bool = True,
             recipe_context: bool = True, deepep: bool = True, client: bool = True,
             lengths: bool = True,
             routing: bool = False, recv_interval: bool = True, recipe_kv: bool = True,
             no_connector: bool = True, recipe_fraction: bool = True,
             serial_transfers: bool = True) -> tuple[float | None, float | None, float]:
    srt = sglang_recipe_settings(row) if sglang_recipe else None
    trt = trt_context_recipe(row) if recipe_context else None
    st = _setup(_setup_key(row), fp4, gather, decode_gather, logits_gather, generator,
                (srt.path, srt.commit) if srt is not None else None,
                (trt.path, trt.commit) if trt is not None else None, deepep, recipe_kv,
                recipe_fraction)
    batching = st.batching
    if recipe_seats and batching is not None:
        batching = replace(batching, decode_max_seqs=decode_max_seqs(row, st))
    if recv_interval and srt is not None and batching is not None:
        batching = _recipe_recv(batching, srt)
    if not input_budget and batching is not None:
        batching = replace(batching, input_budget=None)
    if not admission and batching is not None and batching.decode_admission is not None:
        batching = replace(batching, decode_admission=None, decode_max_seqs=max(
            1, min(batching.max_seqs, st.decode.requests // st.req.decode.replicas)))
    x, y = int(row["prefill_num_workers"]), int(row["decode_num_workers"])
    h = st.handover
    opt = evaluate_xy(RatioTarget(output_len=st.req.output_len, concurrency=conc), st.prefill,
                      st.decode, transfer_seconds(h, st.req.link), x, y,
                      prefill_ms=st.prefill_ms, decode_tpot_ms=st.tpot_ms,
                      first_token_steps=h.first_token_steps if flow else None,
                      batching=batching, prefill_flow=(flow and h.prefill_lookahead, flow),
                      transfer_polled=flow and h.transfer_polled,
                      client=disagg_client.client(row, lengths=lengths) if client else None,
                      routing=disagg_client.routing(row) if routing else None,
                      local=(local := local_flow(row, st) if no_connector else None),
                      queued=(queued_flow(st) if serial_transfers and flow and local is None
                              else None))
    if opt is None:
        n = -(-conc // y)
        return None, st.tpot_ms(-(-n // st.req.decode.replicas)), st.prefill_ms
    return opt.ttft_ms, opt.tpot_ms, st.prefill_ms


def local_flow(row: dict[str, str], st: _Setup) -> LocalPrefillFlow | None:
    """Where the row's decode workers run without a KV connector (`decode_kv_connector`
    "none", dynnocon67), the simulation's flow for it (kvplan.analysis.simulate.disagg_local)
    from the prefill connector's rule at the row's release (`KvConnector.no_decode_connector`,
    the row's `prefill_kv_hold_env_s` its environment override, e.g. vLLM's
    VLLM_NIXL_ABORT_REQUEST_TIMEOUT): the hold, one prefill rank's pool as the replay sizes it
    (blocks of its block size), and the decode worker's own prefill steps at the decode role's
    token budget, priced as `kvplan simulate` prices a mixed step on the decode role's layout
    (its MixedStepCost; a decode-only step there is the replay's TPOT, the same number at the
    same context); the client's first token where Dynamo's frontend gives it
    (kvplan.engines.dynamo_frontend DYNAMO_FIRST_TOKEN_AT_PREFILL: the rows that state no
    connector are Dynamo's); else None."""
    if row.get("decode_kv_connector", "") != "none":
        return None
    env = row.get("prefill_kv_hold_env_s", "")
    rule = st.req.engine.rules.kv_connector(st.req.connector).no_decode_connector(
        st.req.engine_version, float(env) if env else None)
    if rule is None:
        raise InputError(f"{row['backend']} {st.req.engine_version}: a decode worker without "
                         "a KV connector is not read for this release")
    d = st.decode
    inputs = plan_inputs_for(_role_request(st.req, 1), d.gpu, d.layout, d.kv_dtype,
                             d.mem_fraction, st.req.input_len + st.req.output_len)
    spec = st.req.engine.rules.served_spec(
        load_model(str(ROOT / MODELS[(row["model_path"], row["precision"])][0]))[0], inputs)
    cost = replica_step_cost(setup(spec, EstimateInputs(
        spec=spec, sizing=inputs, capacity=inputs, gpu=d.gpu, device=""))[0])
    # The running decodes at the replay's mean decode context (role_times' TPOT: I + O / 2).
    context = st.req.input_len + st.req.output_len // 2

    def decode_mixed_s(decodes: int, chunks: tuple[tuple[int, int], ...]) -> float:
        return cost.seconds(decode_contexts=[context] * decodes, chunks=list(chunks))

    cap = st.prefill.capacity
    assert cap.block_size and inputs.max_num_batched_tokens
    return LocalPrefillFlow(hold_s=rule.hold_s, pool_blocks=cap.token_capacity // cap.block_size,
                            block_tokens=cap.block_size,
                            decode_token_budget=inputs.max_num_batched_tokens,
                            decode_mixed_s=decode_mixed_s,
                            first_token_at_prefill=DYNAMO_FIRST_TOKEN_AT_PREFILL)


def _why_not(row: dict[str, str], conc: int | None, *, prospective: bool = False) -> str:
    key = (row["model_path"], row["precision"])
    if key not in MODELS or row["system"] not in GPUS:
        return f"{row['model_path']} ({row['precision']}) on {row['system']}: not sized here"
    try:
        Engine(row["backend"]).rules.kv_connector(None)
    except KvplanError:
        return f"{row['backend']}: kvplan does not model its handover yet"
    if row["backend"] != "vllm" and not prospective:
        # SGLang's and TensorRT-LLM's handovers landed after these rows were read; their time
        # side and role budgets at these layouts are not checked yet, so not replayed.
        return (f"{row['backend']}: handover modelled, its disaggregated timing not yet checked "
                "(in the prospective set, section 3)")
    rules = Engine(row["backend"]).rules
    if rules.scheduler is None and rules.kv_connector(None).context_scheduler(None) is None:
        return f"{row['backend']}: kvplan does not simulate its scheduler (prefill batching)"
    unstated = [f for r in ("prefill", "decode") for f in (f"{r}_num_workers", f"{r}_tp_size")
                if not row[f].strip()]
    if unstated:
        return f"layout not stated ({', '.join(unstated)} empty)"
    if conc is None:
        return "concurrency unstated (gtl row: decode_batch_size is the engine's max batch)"
    if trtllm_release(row) is None:
        image = row["silicon_data_source"].split(";")[-1].strip()
        return (f"{image}: the TensorRT-LLM release it ships is not stated (aiconfigurator's "
                "dynamo matrix lists none)")
    return ""


def replay(row: dict[str, str], *, prospective: bool = False, fp4: bool = True,
           flow: bool = True, admission: bool = True, gather: bool = True,
           decode_gather: bool = True, logits_gather: bool = True,
           generator: bool = False, input_budget: bool = True,
           recipe_seats: bool = True, sglang_recipe: bool = True,
           recipe_context: bool = True, deepep: bool = True, client: bool = True,
           lengths: bool = True,
           routing: bool = False, recv_interval: bool = True, recipe_kv: bool = True,
           no_connector: bool = True, engine_flags: bool = True,
           recipe_fraction: bool = True, serial_transfers: bool = True) -> Replay:
    conc = stated_concurrency(row)
    base = {"id": PREFIX + row["id"], "label": _label(row, conc),
            "measured_ttft_ms": float(row["silicon_ttft_ms"]),
            "measured_tpot_ms": float(row["silicon_tpot_ms"]), "concurrency": conc,
            "input_len": int(row["isl"]), "output_len": int(row["osl"]),
            "cohort": BACKEND_COHORTS.get(row["backend"]) or COHORTS.get(
                (row["model_path"], row["precision"]), FIRST_COHORT)}
    why = _why_not(row, conc, prospective=prospective)
    if why:
        return Replay(**base, why_not=why)
    assert conc is not None
    try:
        ttft, tpot, prefill = predict(row, conc, fp4=fp4, flow=flow, admission=admission,
                                      gather=gather, decode_gather=decode_gather,
                                      logits_gather=logits_gather, generator=generator,
                                      input_budget=input_budget, recipe_seats=recipe_seats,
                                      sglang_recipe=sglang_recipe,
                                      recipe_context=recipe_context, deepep=deepep,
                                      client=client, lengths=lengths, routing=routing,
                                      recv_interval=recv_interval, recipe_kv=recipe_kv,
                                      no_connector=no_connector, engine_flags=engine_flags,
                                      recipe_fraction=recipe_fraction,
                                      serial_transfers=serial_transfers)
    except KvplanError as e:
        return Replay(**base, why_not=f"kvplan refuses a role: {str(e).splitlines()[0]}")
    if tpot is None:
        return Replay(**base, why_not="the time model does not cover a role's layout")
    return Replay(**base, ttft_ms=ttft, tpot_ms=tpot, prefill_ms=prefill)


@cache
def _replays() -> tuple[Replay, ...]:
    return tuple(replay(r) for r in rows())


def replays() -> list[Replay]:
    return list(_replays())


@cache
def _prospective() -> tuple[Replay, ...]:
    return tuple(replay(r, prospective=True) for r in prospective_rows())


def prospective_replays() -> list[Replay]:
    """The frozen prospective rows (PROSPECTIVE_FILE) replayed, or why not."""
    return list(_prospective())


# The switches `replayed_with` takes (`predict`'s counterfactuals, each set to its non-default):
# `fp4`=False, the cards' FP4 peak removed (NVFP4 GEMMs at bf16 math, the rule before bc725f6);
# `flow`=False, without the connector's time side (63c3946); `admission`=False, without the
# decode side's admission before the prefill (ADMISSION_COMMIT); `gather`=False, SGLang's
# prefill MLP layers priced as before 6084616; `decode_gather`=False, its decode MLP layers as
# before DECODE_GATHER_COMMIT; `logits_gather`=False, its decode steps as before
# LOGITS_GATHER_COMMIT (its prefill steps as before sgldp64); `generator`=True, the prefill at
# aiconfigurator's generated SGLang flags
# (`generator_prefill`; issue 29, prefill29b: measured at ed7b9cf3 over the 92 replayed
# prospective rows, 52 of them change: both 27 -> 20, TTFT 32 -> 23, TPOT 66 -> 66 inside
# [0.75, 1.33], median TTFT ratio 0.81 -> 0.80; TP-attention prefill median TTFT ratio 0.75 ->
# 0.60 (ISL 1,024, 11 rows) and 0.51 -> 0.41 (8,192, 26), DP-attention ISL 1,024 0.78 -> 1.34
# (28; cfg483 c4096 0.32 -> 2.39), DP-attention ISL 8,192 unchanged: the flags do not close the
# gap); `input_budget`=False, the prefill steps without SGLang's --max-prefill-tokens budget
# (INPUT_BUDGET_COMMIT); `recipe_seats`=False, a TensorRT-LLM row's generation ranks at its
# decode batch size instead of its srt-slurm recipe's max_batch_size (trtseat58,
# `recipe_decode_seats`); `sglang_recipe`=False, an SGLang row at SGLang's defaults instead of
# its srt-slurm recipe's flags (sglseat58, `sglang_recipe_settings`); `recipe_context`=False, a
# TensorRT-LLM row's context server at the generator's one prompt a step and its roles'
# max_num_tokens at the generator's rounding (sglseat58, `trt_context_recipe`); `deepep`=False,
# an SGLang recipe's DeepEP roles without their DeepEP flags (sgldeepep59, `_with_role`);
# `client`=False, the simulation's own measurement instead of sa-bench's (disaggwhy59,
# disagg_client.client); `routing`=True, srt-slurm's Dynamo frontends' uniform draw of the
# worker instead of the least-loaded one (disaggwhy59, disagg_client.routing; default at
# 4121cdc6, off since); `lengths`=False, sa-bench's requests all at the row's ISL / OSL instead
# of its --random-range-ratio 0.8 draw (rangeratio60, disagg_client.client); `recv_interval`=False,
# an SGLang recipe's decode --scheduler-recv-interval not applied (disagg63, `_recipe_recv`);
# `recipe_kv`=False, a TensorRT-LLM recipe's roles at MODELS's KV dtype instead of its
# kv_cache_config.dtype (trtdis64, `_trt_recipe_kv`); `no_connector`=False, a row whose decode
# workers run without a KV connector replayed as if they pulled the KV (dynnocon67, `local_flow`;
# no prospective row states one, so it moves none of them); `recipe_fraction`=False, a
# TensorRT-LLM row's roles at kvplan's default free_gpu_memory_fraction, not its recipe's or the
# generator's (trtctx68, `_trt_fraction`); `serial_transfers`=False, the connector's transfers
# all at once, no prefill pool held until the send ends (trtctx68, `queued_flow`).
SWITCHES = ("fp4", "flow", "admission", "gather", "decode_gather", "logits_gather", "generator",
            "input_budget", "recipe_seats", "sglang_recipe", "recipe_context", "deepep", "client",
            "routing", "lengths", "recv_interval", "recipe_kv", "no_connector",
            "engine_flags", "recipe_fraction", "serial_transfers")


def replayed_with(rows: list[Replay], **switch: bool) -> list[Replay]:
    """The prospective `rows` replayed again with one or more of `predict`'s counterfactual
    switches (SWITCHES) set: the before and after the bench prints beside a rule."""
    unknown = sorted(set(switch) - set(SWITCHES))
    if unknown:
        raise TypeError(f"replayed_with: unknown switch {', '.join(unknown)}")
    by_id = {PREFIX + r["id"]: r for r in prospective_rows()}
    return [replay(by_id[r.id], prospective=True, **switch) for r in rows]


def decode_occupancy(replayed: Replay) -> tuple[float, int, float] | None:
    """(requests decoding on each decode rank by Little's law over the measured times, the
    requests a rank that kvplan's step is then timed at, kvplan's TPOT ms there) for a replayed
    row: of a request's measured TTFT + (O - 1) x TPOT in flight, the (O - 1) x TPOT share is
    spent decoding, so conc x that share over the decode ranks decode at once (the rest wait
    for or run their prefill); kvplan's simulation instead holds the requests its own TTFT
    leaves in decode. None where not replayed."""
    if not replayed.replayed or replayed.concurrency is None:
        return None
    row = {PREFIX + r["id"]: r for r in prospective_rows()}[replayed.id]
    st = replay_setup(row)
    decode_s = (replayed.output_len - 1) * replayed.measured_tpot_ms
    users = replayed.concurrency * decode_s / (replayed.measured_ttft_ms + decode_s)
    per_rank = users / int(row["decode_num_workers"]) / st.req.decode.replicas
    batch = max(1, round(per_rank))
    tpot = st.tpot_ms(batch)
    return (per_rank, batch, tpot) if tpot is not None else None


def admits_all(replayed: Replay) -> bool:
    """Whether each decode rank of the row's setup admits all the users it serves at once at
    the row's load (their prompts plus the reservation within its pool, within its slots)."""
    by_id = {PREFIX + r["id"]: r for r in prospective_rows()}
    row = by_id[replayed.id]
    st = replay_setup(row)
    adm = st.batching.decode_admission if st.batching is not None else None
    if adm is None or replayed.concurrency is None:
        return False
    users = -(-replayed.concurrency // (int(row["decode_num_workers"])
                                       * st.req.decode.replicas))
    empty = DecodeRankState(free_tokens=adm.pool_tokens, running=0, pending=0, running_tokens=0)
    return adm.admits(empty, users, replayed.input_len, replayed.output_len) == users


def prefill_capacity(replayed: Replay) -> tuple[int, int, float, int] | None:
    """(prompts per rank per step, ranks, ms, chunks) of a full prefill step in the simulation
    of a prospective row: the most prompts a prefill worker serves is ranks x prompts / ms. A
    prompt longer than the token budget runs in `chunks` steps of up to the budget each (one
    prompt a rank, `ms` their sum), as the simulation chunks it."""
    row = next(r for r in prospective_rows() if PREFIX + r["id"] == replayed.id)
    st = replay_setup(row)
    if st.batching is None:
        return None
    budget, isl = st.batching.token_budget, replayed.input_len
    lay = layout(row, "prefill")
    ranks = lay.dp if lay.dp_attention else 1
    if isl <= budget:
        n = budget // isl
        ms = st.batching.step_ms(n * isl, n)
        return (n, ranks, ms, 1) if ms is not None else None
    steps = [st.batching.step_ms(min(budget, isl - done), 1) for done in range(0, isl, budget)]
    if any(t is None for t in steps):
        return None
    return 1, ranks, sum(t for t in steps if t is not None), len(steps)
