"""Llama-4's chunked-local layers by vLLM release (issue 26): the hybrid KV-cache manager is on
for chunked local attention by default from 0.14.1, off in 0.13.

vLLM's envs.py sets VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE's default: "0" in 0.13.0
(envs.py:1432-1434), "1" from 0.14.1 (envs.py:1468-1470) to 0.34.0 (read in every release:
0.10.1.1 envs.py:1142, 0.10.2 :1205, 0.11.0 :1391, 0.11.2 :1378, 0.12.0 as 0.13.0; 0.15.1 :1473,
0.16.0 :1387, 0.17.1 :1444, 0.18.1 :1441, 0.19.1 :1460, 0.20.2 :1531, 0.21.0 :1540,
0.22.1 :1717, 0.23.0 :1741, 0.24.0 :1652, 0.25.1 :1689, 0.26.0 :1734, 0.27.1 :1761,
0.28.0 :1836, 0.29.0 :1835, 0.30.0 :1831, 0.31.0 :1886, 0.32.0 :1941). config/vllm.py reads it
(0.13.0 :905-925, 0.14.1 :956-976, 0.20.2 :1266-1286, 0.32.0 :2148-2168): with the variable off
and attention_chunk_size set, need_disable_hybrid_kv_cache_manager, and
v1/core/kv_cache_utils.py unify_hybrid_kv_cache_specs then turns every ChunkedLocalAttentionSpec
into a FullAttentionSpec. On, the chunked layers keep ChunkedLocalAttentionSpec
(model_executor/layers/attention/chunked_local_attention.py:122-130 in 0.14.1), whose
max_memory_usage_bytes holds cdiv(min(chunk + T, max_model_len), block) blocks (T: the tokens in
flight, kvplan.engines.vllm.in_flight).
"""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import plan_inputs
from kvplan.engines.vllm.profiles import vllm_profile

# Llama-4-Scout (model_specs/llama-4-scout.yaml, from Meta's config.json): 48 layers, every 4th
# full attention (no RoPE), the other 36 chunked local with attention_chunk_size 8,192; 8 KV
# heads x 128, bf16. At TP 1 one layer's page of 16 tokens is 2 x 8 x 128 x 2 B x 16 = 65,536 B.
# 131,072 tokens, max_num_batched_tokens 8,192, a KV budget of 20 GiB = 21,474,836,480 B.
BUDGET = 20 * GiB
CONTEXT = 131072


def _plan(version: str, **kw):
    return plan_capacity(load_spec("llama-4-scout"),
                         plan_inputs(context=CONTEXT, kv_budget_bytes=BUDGET,
                                     engine_version=version, **kw))


def test_profile_field_by_release() -> None:
    # 0.10.0 has no switch (only EAGLE turns the manager off); 0.10.1.1 adds the variable, "0"
    # (envs.py:1142), to 0.13.0.
    assert vllm_profile("0.10.0").chunked_local_hybrid
    for version in ("0.10.1.1", "0.10.2", "0.11.0", "0.12.0", "0.13.0"):
        assert not vllm_profile(version).chunked_local_hybrid, version
    for version in ("0.14.1", "0.15.1", "0.18.1", "0.19.1", "0.20.2", "0.25.1", "0.31.0",
                    "0.32.0"):
        assert vllm_profile(version).chunked_local_hybrid, version


def test_llama4_scout_hybrid_manager_off_in_0_13() -> None:
    # 0.13: one full-attention group of 48 layers, a block of 48 x 65,536 = 3,145,728 B:
    # 21,474,836,480 // 3,145,728 = 6,826 blocks; a request holds cdiv(131,072, 16) = 8,192;
    # 6,826 / 8,192 = 0.833x; 'GPU KV cache size' = 6,826 // 1 x 16 = 109,216 tokens.
    plan = _plan("0.13")
    assert [(g["kind"], g["layers"]) for g in plan.kv_cache_groups] == [("full", 48)]
    assert plan.num_blocks == 6826
    assert plan.max_concurrency == pytest.approx(6826 / 8192)
    assert plan.reported_kv_cache_tokens == 109216


@pytest.mark.parametrize("version", ["0.14.1", "0.20.2"])
def test_llama4_scout_chunked_groups_from_0_14_1(version: str) -> None:
    # 0.14.1-0.20 (hybrid manager on): 36 chunked vs 12 full layers, 36 >= 1.25 (1.5) x 12, so
    # groups of 12 (kv_cache_utils.py _get_kv_cache_groups_uniform_page_size): 3 chunked + 1
    # full, one pool block of 12 x 65,536 = 786,432 B: 21,474,836,480 // 786,432 = 27,306.
    # A request: full 8,192 blocks; each chunked group cdiv(min(8,192 + 8,192, 131,072), 16)
    # = 1,024 (one batch in flight to 0.25); 8,192 + 3 x 1,024 = 11,264 blocks.
    # 27,306 / 11,264 = 2.424x (kvplan said 0.833x before, the chunked layers as full attention).
    # 'GPU KV cache size' (to 0.20.1: blocks // groups x block): 27,306 // 4 groups x 16
    # = 109,216, the same print; 0.20.2's is int(max_concurrency x max_model_len)
    # (kv_cache_utils.py:1706): int(27,306 / 11,264 x 131,072) = 317,742.
    plan = _plan(version)
    groups = {g["kind"]: (g["groups"], g["layers"], g["pages_per_request"])
              for g in plan.kv_cache_groups}
    assert groups == {"chunked": (3, 36, 1024), "full": (1, 12, 8192)}
    assert plan.num_blocks == 27306
    assert plan.max_concurrency == pytest.approx(27306 / 11264)
    assert plan.max_requests == 2
    assert plan.reported_kv_cache_tokens == (109216 if version == "0.14.1" else 317742)


def test_llama4_scout_reported_tokens_0_21_to_0_25() -> None:
    # 0.20.2-0.25: the print is int(max_concurrency x max_model_len) (get_kv_cache_capacity):
    # int(27,306 / 11,264 x 131,072) = int(317,742.5) = 317,742 (hybrid off: 109,216).
    plan = _plan("0.25.1")
    assert plan.num_blocks == 27306
    assert plan.reported_kv_cache_tokens == 317742


@pytest.mark.parametrize("version", ["0.10.0", "0.20.2", "0.32"])
def test_llama4_scout_eagle_turns_the_manager_off(version: str) -> None:
    # An EAGLE3 drafter (use_eagle(): MTP, EAGLE, EAGLE3) with chunked local attention turns
    # the hybrid manager off in every release (0.14.1 config/vllm.py:960-966, 0.32.0
    # :2152-2158): the 48 layers and the draft's one all full attention, a block of
    # 49 x 65,536 = 3,211,264 B: 21,474,836,480 // 3,211,264 = 6,687 blocks, 8,192 a request.
    plan = _plan(version, speculative_method="eagle3", num_speculative_tokens=3)
    assert [(g["kind"], g["layers"]) for g in plan.kv_cache_groups] == [("full", 49)]
    assert plan.num_blocks == 6687
    assert plan.max_concurrency == pytest.approx(6687 / 8192)


def test_llama4_scout_eagle_with_the_manager_forced_on() -> None:
    # Explicitly on, vLLM raises from 0.13 (0.14.1 config/vllm.py:1001, 0.32.0 :2199: "Hybrid
    # KV cache manager was explicitly enabled but is not supported"); before, it overrides it.
    eagle = {"speculative_method": "eagle3", "num_speculative_tokens": 3,
             "hybrid_kv_cache_manager": True}
    with pytest.raises(InputError, match="hybrid-kv-cache-manager"):
        _plan("0.20.2", **eagle)
    assert _plan("0.12.0", **eagle).num_blocks == 6687
