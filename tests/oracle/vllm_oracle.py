"""The vLLM oracle's settings in kvplan's terms (for the opt-in comparison with vLLM itself).

`../shared/tools/vllm-oracle` starts vLLM's CPU build on a folder holding a config.json and prints
its KV sizing lines as JSON, with the settings it passed to `vllm.LLM`; `oracle_inputs` turns one
such output (and the oracle's argv) into the PlanInputs that model the same run. Used by
tests/test_vllm_oracle.py and examples/vllm_oracle.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from kvplan._util.units import GiB
from kvplan.engines.base import PlanInputs, plan_inputs

ORACLE_DATA = Path(__file__).resolve().parent.parent / "data" / "oracle"
CHUNKED_HYBRID_OFF = "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0"


def oracle_inputs(output: Mapping[str, Any], argv: Sequence[str] = (), *,
                  auto_kv_dtype: str = "bf16") -> PlanInputs:
    """vLLM 0.32 on the CPU platform (block 128, no async scheduling); the budget is
    VLLM_CPU_KVCACHE_SPACE in whole GiB; --env ..._HYBRID_KV_CACHE=0 turns the hybrid manager
    off for chunked local attention. `auto_kv_dtype`: what --kv-cache-dtype auto runs (the
    model dtype; DeepSeek-V4's fp8_ds_mla: kvplan.engines.vllm.kv_dtype)."""
    settings = output["settings"]
    kv_dtype = settings.get("kv_cache_dtype") or "auto"
    return plan_inputs(
        context=settings["max_model_len"], kv_budget_bytes=output["kv_gib"] * GiB,
        platform="cpu", engine_version="0.32",
        kv_dtype=auto_kv_dtype if kv_dtype == "auto" else kv_dtype,
        max_num_batched_tokens=settings.get("max_num_batched_tokens", 2048),
        prefix_caching=settings.get("enable_prefix_caching"),
        block_size=settings.get("block_size"),
        ssm_dtype=settings.get("mamba_ssm_cache_dtype") or "auto",
        hybrid_kv_cache_manager=False if CHUNKED_HYBRID_OFF in argv else None,
        # MLA ran on CPU_MLA (block 16): recorded with the tests/oracle/no_amx hook on an AMX
        # host, or (the DeepSeek-V2-Lite, V3, GLM-4.7-Flash and Kimi-K2.5 runs, before the
        # hook) where vLLM's logged sizes are CPU_MLA's 16-token blocks.
        cpu_amx=False)


def recorded_runs() -> Iterator[tuple[str, dict[str, Any]]]:
    """(config folder, relative to tests/data/oracle, and run) of every recorded oracle run
    (tests/data/oracle/*/results.json, and the nested deepseek-v4/<case>/results.json), each run
    its `argv` and vLLM's `output`."""
    for results in sorted(ORACLE_DATA.glob("**/results.json")):  # and deepseek-v4/<case>/
        for run in json.loads(results.read_text()):
            yield results.parent.relative_to(ORACLE_DATA).as_posix(), run


def replay(name: str, output: Mapping[str, Any], argv: Sequence[str]) -> tuple[Any, bool]:
    """kvplan's plan of one oracle run and whether it matches vLLM's exactly (tokens and
    two-decimal concurrency)."""
    from kvplan.capacity.plan import plan_capacity
    from kvplan.engines.vllm.kv_dtype import vllm_auto_kv_dtype
    from kvplan.sources.hf_config import load_config

    spec, _ = load_config(ORACLE_DATA / name / "config.json")
    auto = vllm_auto_kv_dtype(spec, "0.32")[0]
    plan = plan_capacity(spec, oracle_inputs(output, argv, auto_kv_dtype=auto))
    ok = (plan.reported_kv_cache_tokens == output["kv_cache_tokens"]
          and f"{plan.max_concurrency:.2f}" == f"{output['max_concurrency']:.2f}")
    return plan, ok


def replayed_matches() -> tuple[int, int]:
    """(runs that match exactly, runs) over the recorded runs vLLM completed."""
    oks = [replay(name, run["output"], run["argv"])[1] for name, run in recorded_runs()
           if run["output"].get("ok")]
    return sum(oks), len(oks)
