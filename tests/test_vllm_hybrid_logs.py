"""Real vLLM start-up logs of hybrid models, replayed through kvplan (issue #11's done-when).

`tests/data/engine_logs/vllm_hybrid_logs.json` holds 24 logs collected from GitHub issues, PRs and
one blog post (each with its URL and the quoted lines). A log with enough to replay names its
config (tests/data/configs/<config>.json, sources in SOURCES-hybrids.md) and a `replay` block with
the settings the log shows (version, TP, kv dtype, prefix caching, max_num_batched_tokens,
speculative decoding) and how it is replayed:

- ``budget``: the log prints "Available KV cache memory: B GiB" with two decimals, so the budget
  lies in [B - 0.005, B + 0.005) GiB; kvplan's num_blocks over that band must include a count
  that prints the logged "GPU KV cache size: N tokens" and "Maximum concurrency ...: X.XXx".
- ``pair``: no budget is printed, but the token line and the concurrency line together pin
  num_blocks; some num_blocks must print both figures exactly (the band of counts that print
  X.XXx is num_blocks / blocks_per_request in [X - 0.005, X + 0.005)).
- ``fails``: vLLM refused to start because one max_model_len request does not fit the logged
  budget; kvplan must find zero whole requests.

Logs that cannot be replayed carry a `skip_reason` (also in their notes) and are skipped with it.
vLLM rules followed: v1/core/kv_cache_utils.py (groups, num_blocks = budget // the group block,
get_max_concurrency_for_kv_cache_config, the token line: num_blocks // groups x block <= 0.19,
int(concurrency x max_model_len) >= 0.21), v1/kv_cache_interface.py (MambaSpec pages: 1 + spec
tokens in mode 'none', 2 + spec tokens in 'align'), platforms/interface.py
_align_hybrid_block_size.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kvplan._util.units import GiB
from kvplan.capacity.plan import CapacityPlan, plan_capacity
from kvplan.engines.base import PlanInputs
from kvplan.model.spec import ModelSpec
from kvplan.sources.hf_config import load_config

DATA = Path(__file__).parent / "data"
LOGS = json.loads((DATA / "engine_logs" / "vllm_hybrid_logs.json").read_text())
PRINT_HALF_STEP = 0.005  # "%.2f": a printed value stands for [v - 0.005, v + 0.005)


def inputs_for(log: dict[str, Any], kv_budget_bytes: int) -> PlanInputs:
    r = log["replay"]
    return PlanInputs(
        context=log["max_model_len"] or r["context"], kv_budget_bytes=kv_budget_bytes,
        tp=r["tp"], kv_dtype=r["kv_dtype"], engine_version=r["engine_version"],
        prefix_caching=r["prefix_caching"], max_num_batched_tokens=r["max_num_batched_tokens"],
        max_num_seqs=r.get("max_num_seqs"), speculative_method=r.get("speculative_method"),
        num_speculative_tokens=r.get("num_speculative_tokens", 0))


def block_bytes(spec: ModelSpec, log: dict[str, Any]) -> int:
    """One pool block: the largest group's pages (num_blocks = budget // this)."""
    stage = plan_capacity(spec, inputs_for(log, GiB)).stages[0]
    return stage.page_bytes * stage.group_size


def prints_logged(plan: CapacityPlan, log: dict[str, Any]) -> bool:
    return (plan.reported_kv_cache_tokens == log["gpu_kv_cache_tokens"]
            and f"{plan.max_concurrency:.2f}" == f"{log['max_concurrency']:.2f}")


def matching_blocks(spec: ModelSpec, log: dict[str, Any], candidates: range) -> list[int]:
    block = block_bytes(spec, log)
    return [n for n in candidates
            if prints_logged(plan_capacity(spec, inputs_for(log, n * block)), log)]


def case_id(log: dict[str, Any]) -> str:
    tail = log["url"].rstrip("/").split("/")
    return f"{tail[-3]}-{tail[-1]}" if "github.com" in log["url"] else tail[-1]


def check_layout(plan: CapacityPlan, log: dict[str, Any]) -> None:
    r = log["replay"]
    if "padding_layers" in r:  # "Add N padding layers, may waste at most x% KV cache memory"
        assert sum(g["padding_layers"] for g in plan.kv_cache_groups) == r["padding_layers"]
    if "block_size_text" in r:  # the block size the thread states
        assert plan.block_size == r["block_size_text"]


def check_stated_budget(spec: ModelSpec, log: dict[str, Any], hits: list[int]) -> None:
    """A budget the thread states in prose (not a log line) must give one of the counts that
    print the logged lines."""
    gib = log["replay"].get("available_kv_cache_gib_text")
    if gib is not None:
        bands = {plan_capacity(spec, inputs_for(log, int((gib + d) * GiB))).num_blocks
                 for d in (-PRINT_HALF_STEP, 0.0, PRINT_HALF_STEP)}
        assert bands & set(hits)


@pytest.mark.parametrize("log", LOGS, ids=[case_id(e) for e in LOGS])
def test_replay(log: dict[str, Any]) -> None:
    if log["replay"] is None:
        pytest.skip(log["skip_reason"])
    spec, _ = load_config(DATA / "configs" / f"{log['config']}.json")
    how = log["replay"]["by"]
    if how == "fails":
        plan = plan_capacity(spec, inputs_for(log, int(log["available_kv_cache_gib"] * GiB)))
        assert plan.max_requests == 0 and plan.max_concurrency < 1
        return
    if how == "budget":
        gib = log["available_kv_cache_gib"]
        low, high = (plan_capacity(spec, inputs_for(log, int((gib + d) * GiB)))
                     for d in (-PRINT_HALF_STEP, PRINT_HALF_STEP))
        # The logged token count lies in kvplan's band for the printed budget ...
        assert low.reported_kv_cache_tokens <= log["gpu_kv_cache_tokens"]
        assert log["gpu_kv_cache_tokens"] <= high.reported_kv_cache_tokens
        # ... and some num_blocks in the band prints both lines exactly.
        hits = matching_blocks(spec, log, range(low.num_blocks, high.num_blocks + 1))
    else:
        per_request = plan_capacity(spec, inputs_for(log, GiB)).blocks_per_request
        x = log["max_concurrency"]
        hits = matching_blocks(spec, log, range(
            math.floor((x - PRINT_HALF_STEP) * per_request),
            math.ceil((x + PRINT_HALF_STEP) * per_request) + 1))
    assert hits, "no num_blocks prints the logged token and concurrency lines"
    check_layout(plan_capacity(spec, inputs_for(log, hits[0] * block_bytes(spec, log))), log)
    check_stated_budget(spec, log, hits)


def test_every_log_is_replayed_or_says_why() -> None:
    replayed = [e for e in LOGS if e["replay"] is not None]
    for e in LOGS:
        assert e["url"]
        if e["replay"] is None:
            assert e["skip_reason"] and e["skip_reason"][1:] in e["notes"]
        else:
            assert (DATA / "configs" / f"{e['config']}.json").exists()
    assert len(replayed) == 10


def test_qwen3_6_35b_a3b_prefix_caching_align_by_hand() -> None:
    # club-3090 #652 (vLLM 0.24.0, RTX 5090, Qwen3.6-35B-A3B NVFP4, --kv-cache-dtype fp8,
    # --enable-prefix-caching, max_model_len 131,072): "Available KV cache memory: 6.01 GiB",
    # "GPU KV cache size: 569,878 tokens", "Maximum concurrency ...: 4.35x". By hand:
    # GDN state: conv (3, 2 x 16 x 128 + 32 x 128 = 8,192) x 2 B = 49,152 + ssm (32, 128, 128)
    # x 4 B (mamba_ssm_dtype float32) = 2,097,152 -> 2,146,304 B. Attention fp8: 2 KV heads x
    # (256 + 256) x 1 B = 1,024 B/token; block 16 x cdiv(2,146,304, 16 x 1,024) = 16 x 131 =
    # 2,096 (page 2,146,304: no padding). 30 GDN + 10 full -> groups of 10: 3 state + 1 full;
    # a pool block = 10 x 2,146,304 = 21,463,040 B; 6.01 GiB // that = 300 blocks.
    # Prefix caching on -> mamba cache mode 'align' (vLLM >= 0.19): 2 state pages per request
    # per state group (MambaSpec.max_memory_usage_bytes), so a request takes
    # cdiv(131,072, 2,096) = 63 + 3 x 2 = 69 blocks: 300 / 69 = 4.3478 -> "4.35x";
    # int(4.3478 x 131,072) = 569,878. In mode 'none' it would be 300 / 66 = 4.55x.
    spec, _ = load_config(DATA / "configs" / "qwen3.6-35b-a3b.json")
    inputs = PlanInputs(context=131072, kv_budget_bytes=int(6.01 * GiB), kv_dtype="fp8",
                        engine_version="0.24", prefix_caching=True)
    plan = plan_capacity(spec, inputs)
    assert plan.block_size == 2096 and plan.state_padding_percent is None
    assert plan.mamba_cache_mode == "align"
    assert plan.num_blocks == 300 and plan.blocks_per_request == 69
    assert plan.reported_kv_cache_tokens == 569_878
    # 0.17.1 sets 'align' itself with --enable-prefix-caching (model_executor/models/
    # config.py:376-391, "all" only for classes with mamba prefix caching, from 0.15.1
    # :332-347), the same 69 blocks; vllm-ascend PR #7103's "--mamba-cache-mode align" beside
    # it is that platform's advice, not 0.17's default.
    old = plan_capacity(spec, PlanInputs(context=131072, kv_budget_bytes=int(6.01 * GiB),
                                         kv_dtype="fp8", engine_version="0.17",
                                         prefix_caching=True))
    assert old.mamba_cache_mode == "align" and old.blocks_per_request == 69


def test_qwen3_6_27b_mtp_align_by_hand() -> None:
    # club-3090 #295 (Qwen3.6-27B AutoRound int4, TP 2, --kv-cache-dtype fp8_e5m2,
    # --enable-prefix-caching, MTP with 3 speculative tokens, max_model_len 262,144):
    # "GPU KV cache size: 620,944 tokens", "Maximum concurrency ...: 2.37x". Per rank:
    # attention 2 KV heads x (256 + 256) x 1 B = 1,024 B/token; GDN state: conv (3 + 3 draft
    # rows, (2 x 16 x 128 + 48 x 128) / 2 = 5,120) x 2 B = 61,440 + ssm (24, 128, 128) x 4 B =
    # 1,572,864 -> 1,634,304 B; block 16 x cdiv(1,634,304, 16,384) = 1,600, padding
    # (1,638,400 - 1,634,304) / 1,634,304 = 0.25 %. 16 full + 1 MTP layer = 17 full, 48 GDN:
    # groups of 17 -> 1 full + 3 state groups (3 padding layers). A request: cdiv(262,144,
    # 1,600) = 164 + 3 x (2 + 3 spec) = 179 blocks; 424 blocks / 179 = 2.3687 -> "2.37x",
    # int(2.3687 x 262,144) = 620,944 (#294, one block more: 425 -> 622,408).
    spec, _ = load_config(DATA / "configs" / "qwen3.5-27b.json")
    probe = PlanInputs(context=262144, kv_budget_bytes=GiB, tp=2, kv_dtype="fp8",
                       engine_version="0.22", prefix_caching=True,
                       speculative_method="mtp", num_speculative_tokens=3)
    plan = plan_capacity(spec, probe)
    assert plan.block_size == 1600 and f"{plan.state_padding_percent:.2f}" == "0.25"
    assert plan.blocks_per_request == 179
    assert sum(g["padding_layers"] for g in plan.kv_cache_groups) == 3
    block = plan.stages[0].page_bytes * plan.stages[0].group_size
    assert block == 17 * 1_638_400
    for blocks, tokens in ((424, 620_944), (425, 622_408)):
        at = plan_capacity(spec, replace(probe, kv_budget_bytes=blocks * block))
        assert (at.num_blocks, at.reported_kv_cache_tokens) == (blocks, tokens)
        assert f"{at.max_concurrency:.2f}" == "2.37"
