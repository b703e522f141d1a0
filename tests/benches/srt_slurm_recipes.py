"""The engine settings aiconfigurator's TensorRT-LLM disaggregated rows ran (trtseat58, issue 29):
NVIDIA's srt-slurm recipes (tests/data/disagg/srt_slurm_trtllm_recipes.json, with provenance).

The rows are InferenceX runs (aiconfigurator at 095f58a5, src/aiconfigurator/sdk/config_adapter/
inferencex.py: `FRAMEWORK_TO_BACKEND` "dynamo-trt" -> trtllm, `point_id` config_id:isl:osl:conc),
and that adapter writes a role's batch size as the concurrency over its workers and attention-DP
ranks (`_worker`: `batch_size = concurrency // (replicas * attention_dp)`; the prefill's 1), not
the engine's max_batch_size. InferenceX runs each DeepSeek-R1 dynamo-trt point from an srt-slurm
recipe its master config names by file (SemiAnalysisAI/InferenceX 48f302cc,
.github/configs/nvidia-master.yaml: `CONFIG_FILE=recipes/trtllm/<gpu>-<precision>/<isl>k<osl>k/
stp/ctx{x}_gen{y}_{tep|dep}{n}_batch{b}_....yaml` beside the point's conc-list), and the recipe
states each role's trtllm_config (max_batch_size, max_num_tokens, kv_cache_config, the cache
transceiver's buffer, stream_interval) and its benchmark concurrencies.

A row is matched to a recipe (`for_row`) by GPU, precision, ISL, OSL, both roles' worker counts
and layouts (tensor_parallel_size, moe_expert_parallel_size, enable_attention_dp) and its
concurrency in the recipe's list; of the recipe's versions, the one in force at the row's
`measured=` date (the latest committed on or before it). STP recipes only (no
speculative_config): the rows' TPOT is per token of a one-token decode step in kvplan. A row
with no match, or whose only matching versions postdate its measurement, gets None (`later`
says which), unless InferenceX's master config named the file on or before that date
(`NAMED_BEFORE`, trtttft61): the H100 recipes reached NVIDIA/srt-slurm on 2026-03-03, a
month after InferenceX ran them from the sa-submission-q1-2026 branch (its config names the
same files, by the same path, for the same concurrencies, on 2026-02-07), so the file's first
srt-slurm version stands in for the branch's, taken only where its decode max_batch_size is
the batch its name states (`_batch{b}_`), the one setting kvplan reads that a name carries."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from kvplan.analysis.plan_types import Layout


class _Version(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def date(self) -> str: ...


_V = TypeVar("_V", bound=_Version)
_R = TypeVar("_R")

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "disagg" / \
    "srt_slurm_trtllm_recipes.json"
SOURCE_REPO = "NVIDIA/srt-slurm"


@dataclass(frozen=True, kw_only=True)
class RoleSettings:
    """One role's trtllm_config as the recipe states it (per rank where TensorRT-LLM applies it
    per rank: max_batch_size under enable_attention_dp)."""

    workers: int
    tensor_parallel_size: int
    moe_expert_parallel_size: int
    enable_attention_dp: bool
    max_batch_size: int
    max_num_tokens: int
    free_gpu_memory_fraction: float
    max_tokens_in_buffer: int
    stream_interval: int | None = None
    # trtllm_config.<role>.kv_cache_config.dtype (trtdis64): "fp8" in all 141 versions read;
    # TensorRT-LLM's KvCacheConfig.dtype, "auto" (the checkpoint's) where unset.
    kv_cache_dtype: str | None = None


@dataclass(frozen=True, kw_only=True)
class Recipe(Generic[_R]):
    """One version of a recipe file: its key fields and each role's settings (`_R`: the
    engine's role type, RoleSettings or srt_slurm_sglang.SglangRole)."""

    path: str
    commit: str
    date: str  # the first commit holding this version
    gpu_type: str
    precision: str
    isl: int
    osl: int
    concurrencies: tuple[int, ...]
    prefill: _R
    decode: _R

    @property
    def cite(self) -> str:
        return f"{SOURCE_REPO} {self.path} at {self.commit[:8]} ({self.date})"


SrtRecipe = Recipe[RoleSettings]


def load(data: Path, role: Callable[..., _R]) -> tuple[Recipe[_R], ...]:
    """Every recipe version of a data file, each role built by `role`."""
    doc = json.loads(data.read_text())
    return tuple(Recipe(**{**r, "concurrencies": tuple(r["concurrencies"]),
                           "prefill": role(**r["prefill"]), "decode": role(**r["decode"])})
                 for r in doc["recipes"])


def matching(found: Iterable[Recipe[_R]], row: dict[str, str], backend: str, concurrency: int,
             fits: Callable[[_R, int, Layout], bool], prefill: Layout,
             decode: Layout) -> list[Recipe[_R]]:
    """The versions whose key fields are the row's and whose roles `fits` the row's worker
    counts and layouts (DeepSeek rows of `backend` only)."""
    if row["backend"] != backend or "DeepSeek" not in row["model_path"]:
        return []
    gpu = row["system"].split("_")[0]
    return [r for r in found
            if r.gpu_type == gpu and r.precision == row["precision"]
            and r.isl == int(row["isl"]) and r.osl == int(row["osl"])
            and concurrency in r.concurrencies
            and fits(r.prefill, int(row["prefill_num_workers"]), prefill)
            and fits(r.decode, int(row["decode_num_workers"]), decode)]


@cache
def recipes() -> tuple[SrtRecipe, ...]:
    return load(DATA, RoleSettings)


def by_version(path: str, commit: str) -> SrtRecipe:
    return next(r for r in recipes() if r.path == path and r.commit == commit)


def _same_layout(role: RoleSettings, workers: int, lay: Layout) -> bool:
    return (role.workers == workers and role.tensor_parallel_size == lay.tp
            and role.moe_expert_parallel_size == lay.ep
            and role.enable_attention_dp == lay.dp_attention)


def _matching(row: dict[str, str], concurrency: int, prefill: Layout,
              decode: Layout) -> list[SrtRecipe]:
    return matching(recipes(), row, "trtllm", concurrency, _same_layout, prefill, decode)


def measured_date(row: dict[str, str]) -> str:
    m = re.search(r"measured=(\d{4}-\d\d-\d\d)", row["silicon_data_source"])
    return m.group(1) if m else ""


# Recipe files InferenceX's master config named before NVIDIA/srt-slurm held them (trtttft61):
# SemiAnalysisAI/InferenceX 32a48459 (2026-02-07, "[NV] H100 FP8 Disagg DSR1 1k1k, 8k1k (STP +
# MTP) (#651)"), .github/configs/nvidia-master.yaml, dsr1-fp8-h100-dynamo-trt (image
# tensorrtllm-runtime:0.8.1.post3, the H100 rows' own), each point's CONFIG_FILE from
# ishandhanani/srt-slurm branch sa-submission-q1-2026: :1732 (conc 6), :1746 (9), :1760 (30),
# :1774 (60) the 1k1k STP tep16 files, :1953 (6), :1967 (9), :1981 (30), :1995 (154) the 8k1k.
# The branch's own copies are not stored here; their first NVIDIA/srt-slurm versions (5063eb43,
# 2026-03-03) are in the data file.
INFERENCEX_NAMING = ("SemiAnalysisAI/InferenceX", "32a48459", "2026-02-07")
NAMED_BEFORE: dict[str, str] = {
    f"recipes/trtllm/h100-fp8/{lengths}/stp/{name}_eplb0_mtp0.yaml": INFERENCEX_NAMING[2]
    for lengths, names in (
        ("1k1k", ("ctx1_gen3_tep16_batch1", "ctx1_gen3_tep16_batch2", "ctx1_gen3_tep16_batch8",
                  "ctx1_gen3_tep16_batch16")),
        ("8k1k", ("ctx1_gen3_tep16_batch1", "ctx1_gen3_tep16_batch2", "ctx1_gen3_tep16_batch8",
                  "ctx1_gen2_tep16_batch64")))
    for name in names}


def named_batch(path: str) -> int | None:
    """The decode batch a recipe file's name states (..._batch8_... -> 8), or None."""
    m = re.search(r"_batch(\d+)_", path)
    return int(m.group(1)) if m else None


def named_first(found: Sequence[SrtRecipe], when: str,
                named: dict[str, str] = NAMED_BEFORE) -> list[SrtRecipe]:
    """Of recipe versions none of which is in force on `when`: each file `named` on or before
    `when` (InferenceX ran it from a branch before NVIDIA/srt-slurm held it), its first
    version, where that version's decode max_batch_size is the batch its name states (module
    docstring); one a file, by path."""
    first: dict[str, SrtRecipe] = {}
    for r in found:
        if r.path in named and named[r.path] <= when and (
                r.path not in first or r.date < first[r.path].date):
            first[r.path] = r
    return [first[p] for p in sorted(first)
            if named_batch(p) == first[p].decode.max_batch_size]


def for_row(row: dict[str, str], concurrency: int | None, prefill: Layout,
            decode: Layout) -> SrtRecipe | None:
    """The recipe version the row ran (module docstring), or None."""
    if concurrency is None:
        return None
    found, when = _matching(row, concurrency, prefill, decode), measured_date(row)
    picked = in_force(found, when) or named_first(found, when)
    return picked[0] if len(picked) == 1 else None  # none, or two that fit: not guessed


def in_force(found: Sequence[_V], when: str) -> list[_V]:
    """Of recipe versions (`path`, `date`: the first commit holding each), each file's version
    in force on `when` (the latest dated on or before it), one a file, by path; a file whose
    every version postdates `when` is left out."""
    latest: dict[str, _V] = {}
    for r in found:
        if r.date <= when and (r.path not in latest or r.date > latest[r.path].date):
            latest[r.path] = r
    return [latest[p] for p in sorted(latest)]


def later(row: dict[str, str], concurrency: int | None, prefill: Layout,
          decode: Layout) -> SrtRecipe | None:
    """A matching recipe whose every version postdates the row's measurement (not applied)."""
    if concurrency is None or for_row(row, concurrency, prefill, decode) is not None:
        return None
    found = _matching(row, concurrency, prefill, decode)
    return min(found, key=lambda r: r.date) if len({r.path for r in found}) == 1 else None
