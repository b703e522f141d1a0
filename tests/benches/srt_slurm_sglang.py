"""The engine settings aiconfigurator's SGLang disaggregated rows ran (sglseat58, issue 29):
NVIDIA's srt-slurm SGLang recipes (tests/data/disagg/srt_slurm_sglang_recipes.json, with
provenance), matched to a row as tests.benches.srt_slurm_recipes matches TensorRT-LLM's.

The rows are InferenceX runs (aiconfigurator at 095f58a5, src/aiconfigurator/sdk/config_adapter/
inferencex.py: "dynamo-sglang" -> sglang), each from the srt-slurm recipe InferenceX's master
config names by file beside its conc-list (SemiAnalysisAI/InferenceX .github/configs/
nvidia-master.yaml: `CONFIG_FILE=recipes/gb200-fp4/8k1k/max-tpt.yaml` and the like under the
dsr1-*-dynamo-sglang entries), and the adapter writes a role's batch size as the concurrency
over its workers and attention-DP ranks (`_worker`), not the engine's --max-running-requests.
The recipe states each role's sglang_config (`--max-running-requests`, `--chunked-prefill-size`,
`--max-prefill-tokens`, `--mem-fraction-static`, `--max-total-tokens`, DP attention, EP) and its
benchmark concurrencies.

A row is matched (`for_row`) by GPU, precision, ISL, OSL, both roles' worker counts and layouts
(tp-size, attention-DP size, ep-size, enable-dp-attention, as kvplan lays the row out) and its
concurrency in the recipe's list; of each matching recipe's versions the one in force at the
row's `measured=` date (srt_slurm_recipes.in_force). Two recipe files that match are taken only
where the versions in force state the same settings (a file renamed or copied: srt-slurm's
gb200-fp8 `max-tpt-2p1d.yaml` / `max-tpt.yaml`); else None, not guessed. STP recipes only (no
speculative-algorithm)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kvplan.analysis.plan_types import Layout
from tests.benches.srt_slurm_recipes import Recipe, in_force, load, matching, measured_date

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "disagg" / \
    "srt_slurm_sglang_recipes.json"


@dataclass(frozen=True, kw_only=True)
class SglangRole:
    """One role's sglang_config as the recipe states it (None: the flag not given, SGLang's
    default). The flags are per server; SGLang divides some by --dp-size under DP attention
    (`per_rank`)."""

    workers: int
    tp_size: int
    dp_size: int
    ep_size: int
    enable_dp_attention: bool
    max_running_requests: int | None
    chunked_prefill_size: int | None
    max_prefill_tokens: int | None
    mem_fraction_static: float | None
    max_total_tokens: int | None
    context_length: int | None
    cuda_graph_max_bs: int | None
    moe_a2a_backend: str | None
    # Read on DeepEP roles only (None elsewhere; sgldeepep59): --deepep-mode,
    # --moe-dense-tp-size, --enable-dp-lm-head and the role's SGLANG_MOE_NVFP4_DISPATCH.
    deepep_mode: str | None = None
    moe_dense_tp_size: int | None = None
    enable_dp_lm_head: bool | None = None
    moe_nvfp4_dispatch: bool | None = None
    # --ep-num-redundant-experts on a DeepEP role (deepepx60; 32 on each, None elsewhere): the
    # extra experts' weights (kvplan.capacity.weights.redundant_experts_held).
    ep_num_redundant_experts: int | None = None
    # --scheduler-recv-interval (disagg63): on a decode role, how often its scheduler takes new
    # requests (kvplan.engines.sglang.decode_admission.SglangDecodeAdmission.recv_interval).
    scheduler_recv_interval: int | None = None

    def deepep_settings(self) -> dict[str, object]:
        """The role's DeepEP flags as kvplan's SGLang options (kvplan.engines.sglang.deepep),
        {} on a role without --moe-a2a-backend deepep."""
        if self.moe_a2a_backend != "deepep":
            return {}
        return {"moe_a2a_backend": "deepep", "deepep_mode": self.deepep_mode or "auto",
                "moe_dense_tp_size": self.moe_dense_tp_size,
                "enable_dp_lm_head": bool(self.enable_dp_lm_head),
                "moe_nvfp4_dispatch": bool(self.moe_nvfp4_dispatch),
                "ep_num_redundant_experts": self.ep_num_redundant_experts or 0}

    def layout_key(self) -> tuple[int, int, bool, int]:
        dp = self.dp_size if self.enable_dp_attention else 1
        return self.tp_size, dp, self.enable_dp_attention, self.ep_size

    def per_rank(self, value: int | None) -> int | None:
        """A server-wide --chunked-prefill-size or --max-running-requests as each attention-DP
        rank's scheduler takes it: // --dp-size under DP attention (server_args.py
        `_handle_data_parallelism`, kvplan.engines.sglang.options.sglang_chunked_prefill_tokens;
        model_runner.py:558-565 in 0.5.8.post1, kvplan.engines.sglang.decode_admission), else
        unchanged."""
        if value is None or not self.enable_dp_attention:
            return value
        return max(1, value // self.dp_size)

    def settings(self) -> tuple[object, ...]:
        return tuple(v for k, v in vars(self).items())


SglangRecipe = Recipe[SglangRole]


@cache
def recipes() -> tuple[SglangRecipe, ...]:
    return load(DATA, SglangRole)


def by_version(path: str, commit: str) -> SglangRecipe:
    return next(r for r in recipes() if r.path == path and r.commit == commit)


def _layout_key(lay: Layout) -> tuple[int, int, bool, int]:
    return lay.tp, lay.dp if lay.dp_attention else 1, lay.dp_attention, lay.ep


def _fits(role: SglangRole, workers: int, lay: Layout) -> bool:
    return role.workers == workers and role.layout_key() == _layout_key(lay)


def _matching(row: dict[str, str], concurrency: int, prefill: Layout,
              decode: Layout) -> list[SglangRecipe]:
    return matching(recipes(), row, "sglang", concurrency, _fits, prefill, decode)


def for_row(row: dict[str, str], concurrency: int | None, prefill: Layout,
            decode: Layout) -> SglangRecipe | None:
    """The recipe version the row ran (module docstring), or None."""
    if concurrency is None:
        return None
    picked = in_force(_matching(row, concurrency, prefill, decode), measured_date(row))
    if not picked:
        return None
    if len({(r.prefill.settings(), r.decode.settings()) for r in picked}) != 1:
        return None  # two recipes in force that differ: not guessed
    return min(picked, key=lambda r: (r.date, r.path))
