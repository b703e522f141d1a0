"""Per-layer cache kinds and vLLM's allocator: golden numbers worked out by hand from real
configs (derivation in each comment, with the vLLM source it follows), real start-up logs, and
property tests for the invariants.

vLLM sources (0.32 unless said): v1/kv_cache_interface.py (page sizes, max_memory_usage_bytes),
v1/core/kv_cache_utils.py (groups, num_blocks, concurrency, "KV cache size: N tokens"),
platforms/interface.py _align_hybrid_block_size, model_executor/layers/mamba/mamba_utils.py.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.units import GiB, cdiv
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import plan_inputs
from kvplan.engines.vllm.architectures import arrival
from kvplan.engines.vllm.engine import vllm_stage_config
from kvplan.engines.vllm.profiles import MAMBA_PREFIX_CACHING_CLASSES
from kvplan.kv.cache import layer_caches, rank_caches, recurrent_state
from kvplan.kv.kinds import (
    ChunkedLocalCache,
    FullAttentionCache,
    RequestShape,
    SlidingWindowCache,
)
from kvplan.model.attention import LatentAttention
from kvplan.sources.resolve import load_spec

# --- recurrent state shapes ------------------------------------------------------------------


def test_granite_4_h_small_state_and_rocm_log() -> None:
    # granite-4.0-h-small: Mamba2 with 128 heads x 64, d_state 128, 1 group, conv 4, bf16.
    # conv (4 - 1, 8192 + 2 x 1 x 128 = 8448) x 2 B = 50,688; ssm (128, 64, 128) x 2 B =
    # 2,097,152; state = 2,147,840 B. Attention: 8 KV heads x (128 + 128) x 2 B = 4,096 B/token.
    # Block = 16 x cdiv(2,147,840, 16 x 4,096) = 16 x 33 = 528; padding (528 x 4096 -
    # 2,147,840) / 2,147,840 = 0.69 %. ROCm issue 5590 (vLLM 0.11, MI300X) logs "Setting attention
    # block size to 528 tokens" and "Padding mamba page size by 0.69%".
    spec = load_spec("granite-4.0-h-small")
    state = recurrent_state(spec.recurrent, tp=1, conv_dtype="bfloat16")
    assert [t.shape for t in state.tensors] == [(3, 8448), (128, 64, 128)]
    assert state.state_bytes == 2_147_840
    plan = plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=10 * GiB,
                                          engine_version="0.11", platform="rocm"))
    assert plan.block_size == 528
    assert f"{plan.state_padding_percent:.2f}" == "0.69"
    # 4 attention + 36 Mamba2 layers: groups of 4 -> 1 full group and 9 state groups.
    kinds = {g["kind"]: (g["groups"], g["layers"]) for g in plan.kv_cache_groups}
    assert kinds == {"full": (1, 4), "state": (9, 36)}
    # num_blocks = budget // (4 layers x 528 x 4096); one request: cdiv(8192, 528) = 16 pages
    # of the full group plus one page per state group (0.11: no 'align' mode).
    assert plan.num_blocks == 10 * GiB // (4 * 528 * 4096)
    assert plan.blocks_per_request == 16 + 9


def test_qwen3_next_gated_deltanet_on_cuda() -> None:
    # Qwen3-Next-80B-A3B: GDN 16 key heads x 128, 32 value heads x 128, conv 4, bf16.
    # conv (3, 2 x 16 x 128 + 32 x 128 = 8192) x 2 = 49,152; ssm (32, 128, 128) x 2 =
    # 1,048,576; state 1,097,728 B. Attention 2 KV heads x 512 x 2 = 2,048 B/token.
    # Block 16 x cdiv(1,097,728, 32,768) = 16 x 34 = 544; padding 1.49 %.
    plan = plan_capacity(load_spec("qwen3-next-80b-a3b"),
                         plan_inputs(context=32768, kv_budget_bytes=20 * GiB))
    assert plan.block_size == 544 and f"{plan.state_padding_percent:.2f}" == "1.49"
    # 12 full + 36 GDN: groups of 12; mode align (0.32: prefix caching on for hybrids) keeps 2
    # pages per GDN group (no checkpoint block: only Mamba2 has one).
    assert plan.mamba_cache_mode == "align"
    assert plan.blocks_per_request == cdiv(32768, 544) + 3 * 2
    assert plan.state_bytes_per_request == 36 * 1_097_728


def test_nemotron_h_mlp_layers_hold_nothing_and_mamba2_keeps_a_checkpoint() -> None:
    # hybrid_override_pattern of NVIDIA-Nemotron-Nano-9B-v2: 27 M (Mamba2), 4 * (attention),
    # 25 - (MLP only). The MLP-only layers own no cache at all.
    spec = load_spec("nemotron-nano-9b-v2")
    owners = [lc for lc in layer_caches(spec) if lc.caches]
    assert len(owners) == 27 + 4
    plan = plan_capacity(spec, plan_inputs(context=32768, kv_budget_bytes=20 * GiB))
    # Mamba2 in 'align' mode: 2 + 1 prefill checkpoint = 3 pages per request per group
    # (MambaMixer2.get_kv_cache_spec: num_prefill_checkpoint_blocks=1). Groups of 4: 7 state.
    state = next(g for g in plan.kv_cache_groups if g["kind"] == "state")
    assert (state["groups"], state["pages_per_request"], state["padding_layers"]) == (7, 3, 1)
    # The SSM state is float32 (vLLM's NemotronH default): (128, 80, 128) x 4 B.
    assert spec.recurrent.ssm_dtype == "float32"


def test_falcon_h1_layers_hold_attention_and_state_side_by_side() -> None:
    spec = load_spec("falcon-h1-34b")
    caches = layer_caches(spec)
    assert all(len(lc.caches) == 2 for lc in caches)  # 72 x (attention + Mamba2)
    plan = plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=10 * GiB))
    assert {g["kind"]: g["layers"] for g in plan.kv_cache_groups} == {"full": 72, "state": 72}


def test_jamba_mamba1_state() -> None:
    # AI21-Jamba-1.5-Mini: Mamba1, d_inner = 2 x 4096, d_state 16, conv 4 (no speculative rows).
    spec = load_spec("jamba-mini")
    state = recurrent_state(spec.recurrent, tp=2, conv_dtype="bfloat16")
    assert [t.shape for t in state.tensors] == [(3, 4096), (4096, 16)]


def test_mamba2_groups_replicate_when_tp_does_not_divide_them() -> None:
    # extra_groups_for_head_shards: 1 group over TP 4 -> 4 groups (one per rank), so the conv
    # dim is (8192 + 2 x 4 x 128) / 4 = 2,304.
    spec = load_spec("granite-4.0-h-small")
    state = recurrent_state(spec.recurrent, tp=4, conv_dtype="bfloat16")
    assert state.tensors[0].shape == (3, (8192 + 2 * 4 * 128) // 4)


def test_speculative_tokens_add_conv_rows_and_state_pages() -> None:
    spec = load_spec("qwen3-next-80b-a3b")
    base = plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=10 * GiB))
    mtp = plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=10 * GiB,
                                         speculative_method="mtp", num_speculative_tokens=2))
    # conv rows kernel - 1 + 2 = 5; one more state page per draft token; one MTP attention layer.
    rec = recurrent_state(spec.recurrent, tp=1, conv_dtype="bfloat16", num_spec=2)
    assert rec.tensors[0].shape == (5, 8192)
    state = next(g for g in mtp.kv_cache_groups if g["kind"] == "state")
    assert state["pages_per_request"] == 2 + 2
    assert next(g for g in mtp.kv_cache_groups if g["kind"] == "full")["layers"] == 12 + 1
    assert mtp.max_concurrency < base.max_concurrency


def test_mtp_needs_mtp_layers() -> None:
    with pytest.raises(InputError, match="no MTP layers"):
        plan_capacity(load_spec("llama-3.1-8b"), plan_inputs(
            context=8192, kv_budget_bytes=GiB, speculative_method="mtp",
            num_speculative_tokens=1))


# --- attention kinds -------------------------------------------------------------------------


def test_gpt_oss_sliding_window_keeps_in_flight_tokens() -> None:
    # gpt-oss-20b: 12 sliding (window 128) + 12 full, 8 KV heads x (64 + 64) x 2 B = 2 KiB/token.
    # vLLM 0.32 on CUDA: max_in_flight_tokens = 2 x 8192 (async scheduling), so a sliding layer
    # holds cdiv(min(127 + 16384, 131072), 16) + 1 = 1,033 blocks; 0.19 held
    # cdiv(127 + 8192, 16) + 1 = 521.
    spec = load_spec("gpt-oss-20b")
    for version, sliding in (("0.32", 1033), ("0.19", 521)):
        plan = plan_capacity(spec, plan_inputs(context=131072, kv_budget_bytes=10 * GiB,
                                              engine_version=version))
        pages = {g["kind"]: g["pages_per_request"] for g in plan.kv_cache_groups}
        assert pages == {"sliding": sliding, "full": 131072 // 16}


def test_llama4_chunked_local_attention() -> None:
    # Llama-4-Scout: attention_chunk_size 8192; every 4th layer is NoPE and global (12 of 48).
    # A chunked layer holds cdiv(min(8192 + in_flight, context), block) blocks (no +1).
    spec = load_spec("llama-4-scout")
    assert sum(c is not None for c in spec.layer_chunks) == 36
    plan = plan_capacity(spec, plan_inputs(context=131072, kv_budget_bytes=10 * GiB))
    pages = {g["kind"]: g["pages_per_request"] for g in plan.kv_cache_groups}
    assert pages == {"chunked": cdiv(8192 + 2 * 8192, 16), "full": 131072 // 16}
    # Hybrid manager off (vLLM's --disable-hybrid-kv-cache-manager): chunked layers allocate as
    # full attention, one group of all 48 layers.
    off = plan_capacity(spec, plan_inputs(context=131072, kv_budget_bytes=10 * GiB,
                                         hybrid_kv_cache_manager=False))
    assert [(g["kind"], g["layers"]) for g in off.kv_cache_groups] == [("full", 48)]
    # To 0.13 the hybrid manager was off for chunked attention by default (0.13.0 envs.py:1433,
    # VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE "0"); from 0.14.1 on ("1", envs.py:1469;
    # issue 26), so 0.19 keeps its chunked groups (one batch in flight there: cdiv(16,384, 16)).
    old = plan_capacity(spec, plan_inputs(context=131072, kv_budget_bytes=10 * GiB,
                                         engine_version="0.13"))
    assert len(old.kv_cache_groups) == 1
    mid = plan_capacity(spec, plan_inputs(context=131072, kv_budget_bytes=10 * GiB,
                                         engine_version="0.19"))
    assert {g["kind"]: g["pages_per_request"] for g in mid.kv_cache_groups} == {
        "chunked": cdiv(8192 + 8192, 16), "full": 131072 // 16}


def test_deepseek_v32_fp8_ds_mla_row_and_indexer() -> None:
    # fp8_ds_mla: 512 fp8 + 4 x 4 B scales + 64 x 2 B RoPE = 656 B; indexer 128 + 4 = 132 B;
    # 61 layers x 788 = 48,068 B/token; one uniform-type group, FlashMLA-sparse block 64, a block
    # holds every layer's two pages: 61 x 64 x 788.
    plan = plan_capacity(load_spec("deepseek-v3.2"),
                         plan_inputs(context=8192, kv_budget_bytes=10 * GiB, kv_dtype="fp8"))
    assert plan.per_gpu_bytes_per_token == 61 * (656 + 132) == 48_068
    assert plan.block_size == 64
    assert plan.num_blocks == 10 * GiB // (61 * 64 * 788)
    assert plan.blocks_per_request == 8192 // 64
    # bf16: the latent is (512 + 64) x 2 = 1,152 B, the indexer stays 132 B.
    bf16 = plan_capacity(load_spec("deepseek-v3.2"),
                         plan_inputs(context=8192, kv_budget_bytes=10 * GiB))
    assert bf16.per_gpu_bytes_per_token == 61 * (1152 + 132)


def test_kimi_linear_log_vllm_0_11() -> None:
    # vllm issue #28228 (Nov 2025, vLLM 0.11): Kimi-Linear-48B-A3B, TP 2, max_model_len 120,000,
    # "Available KV cache memory: 2.30 GiB", "Add 1 padding layers, may waste at most 5.00%",
    # "GPU KV cache size: 75,840 tokens", "Maximum concurrency for 120,000 tokens: 2.48x".
    # KDA state per rank: conv (3, 3 x 32 x 128 / 2) x 2 B = 36,864 + recurrent (16, 128, 128)
    # x 4 B (float32) = 1,085,440 B; MLA 1,152 B/token; block 64 x cdiv(1,085,440, 64 x 1,152)
    # = 960. 7 MLA + 20 KDA: groups of 7 -> 1 + 3 (one padding layer: 1/20 = 5 %).
    # The build was a 0.11.1 development one: no 0.11.0 registry lists KimiLinearForCausalLM
    # (kvplan/engines/vllm/arrivals.json; vllm PR #27809, merged 2025-10-30).
    spec = load_spec("kimi-linear-48b-a3b")
    low, high = (plan_capacity(spec, plan_inputs(
        context=120000, tp=2, kv_budget_bytes=int(g * GiB), engine_version="0.11.1",
        prefix_caching=True, max_num_batched_tokens=64000)) for g in (2.295, 2.305))
    assert low.block_size == 960
    assert sum(g["padding_layers"] for g in low.kv_cache_groups) == 1
    # The logged 2.30 GiB lies in [2.295, 2.305): 318 or 319 blocks.
    assert low.reported_kv_cache_tokens == high.reported_kv_cache_tokens == 75_840
    assert f"{low.max_concurrency:.2f}" == "2.48"


def test_reported_tokens_rule_changed_in_0_21() -> None:
    # <= 0.19: num_blocks // num_groups x block_size; >= 0.21: int(max_concurrency x
    # max_model_len). gpt-oss-20b at 131,072 tokens shows the gap the issue reports.
    spec = load_spec("gpt-oss-20b")
    inputs = plan_inputs(context=131072, kv_budget_bytes=30 * GiB)
    old = plan_capacity(spec, replace(inputs, engine_version="0.19"))
    new = plan_capacity(spec, inputs)
    assert old.reported_kv_cache_tokens == old.num_blocks // 2 * 16
    assert new.reported_kv_cache_tokens == int(new.max_concurrency * 131072)
    assert new.reported_kv_cache_tokens > old.reported_kv_cache_tokens


def test_unmodelled_engines_refuse_hybrids() -> None:
    from kvplan.engines.base import Engine, plan_inputs

    with pytest.raises(InputError, match="models for vLLM only"):
        plan_capacity(load_spec("qwen3-next-80b-a3b"),
                      plan_inputs(context=8192, kv_budget_bytes=GiB, engine=Engine.trtllm))
    # SGLang's mamba pool is modelled (kvplan.engines.sglang.pools), its Mamba-1 pool is not.
    # SGLang has no JambaForCausalLM class (kvplan/engines/sglang/arrivals.json): the pool rule
    # is checked on the spec without its architectures (MambaForCausalLM, from 0.5.20, is Mamba-1).
    sglang = plan_inputs(context=8192, kv_budget_bytes=GiB, engine=Engine.sglang)
    with pytest.raises(InputError, match="no model class for JambaForCausalLM"):
        plan_capacity(load_spec("jamba-mini"), sglang)
    with pytest.raises(InputError, match="does not model SGLang's pool for mamba1"):
        plan_capacity(replace(load_spec("jamba-mini"), architectures=()), sglang)


def test_engine_version_before_v1_is_refused() -> None:
    with pytest.raises(InputError, match="predates"):
        plan_capacity(load_spec("llama-3.1-8b"),
                      plan_inputs(context=8192, kv_budget_bytes=GiB, engine_version="0.9"))


# --- properties ------------------------------------------------------------------------------

HYBRIDS = ["qwen3-next-80b-a3b", "nemotron-nano-9b-v2", "granite-4.0-h-small", "falcon-h1-34b",
           "jamba-mini", "kimi-linear-48b-a3b", "llama-4-scout", "gpt-oss-20b", "deepseek-v3.2",
           "gemma-3n-e4b", "qwen3.5-9b"]


@given(model=st.sampled_from(HYBRIDS), context=st.integers(1, 1 << 20),
       budget_mib=st.integers(1, 200_000), platform=st.sampled_from(["cuda", "cpu"]),
       version=st.sampled_from(["0.10", "0.13", "0.19", "0.21", "0.32"]),
       prefix=st.sampled_from([None, True, False]))
def test_requests_fit_the_pool(model, context, budget_mib, platform, version, prefix) -> None:
    try:
        plan = plan_capacity(load_spec(model), plan_inputs(
            context=context, kv_budget_bytes=budget_mib << 20, platform=platform,
            engine_version=version, prefix_caching=prefix,
            cpu_amx=False if platform == "cpu" else None))
    except UnmodelledError as refused:
        # Combinations vLLM does not start (each refusal has its own test): DeepSeek's sparse
        # MLA on the CPU platform (test_vllm_mla_default_block), mxfp4 before vLLM 0.10.1
        # (test_quant_versions), an architecture before the first release that registers it
        # (test_vllm_arrivals). The property is about the answers kvplan gives.
        # Prefix caching on a class with mamba prefix caching, 0.11.2 - 0.27 (mode 'all':
        # test_vllm_profiles).
        all_mode = prefix and version in ("0.13", "0.19", "0.21") and any(
            n in MAMBA_PREFIX_CACHING_CLASSES for n in load_spec(model).architectures)
        # A recurrent hybrid on the CPU platform before 0.10.2 (hybrid manager off there:
        # test_vllm_profiles).
        cpu_off = (platform, version) == ("cpu", "0.10") and load_spec(model).recurrent
        # MLA on the CPU platform before vLLM 0.28 (test_vllm_profiles).
        cpu_off = cpu_off or (platform == "cpu" and version != "0.32" and isinstance(
            load_spec(model).attention, LatentAttention))
        assert all_mode or cpu_off or (model, platform) == ("deepseek-v3.2", "cpu") or (
            model == "gpt-oss-20b" and version == "0.10") or any(
            arrival(name, version) for name in load_spec(model).architectures), refused
        assume(False)
    # Whole requests fit the blocks; the blocks fit the budget.
    assert plan.max_requests * plan.blocks_per_request <= plan.num_blocks
    stage = plan.stages[0]
    assert plan.num_blocks * stage.page_bytes * stage.group_size <= budget_mib << 20
    # A raised block's page holds one recurrent state.
    if plan.state_bytes_per_request:
        assert plan.state_padding_percent is None or plan.state_padding_percent >= 0


@given(model=st.sampled_from(HYBRIDS), a=st.integers(1, 1 << 20), b=st.integers(1, 1 << 20))
def test_pages_grow_with_context(model, a, b) -> None:
    lo, hi = sorted((a, b))
    config = vllm_stage_config(load_spec(model), plan_inputs(context=lo))
    assert config.pages_per_request(lo) <= config.pages_per_request(hi)


@given(window=st.integers(1, 1 << 16), chunk=st.integers(1, 1 << 16),
       block=st.sampled_from([1, 16, 64, 128, 528]), in_flight=st.integers(1, 1 << 15),
       contexts=st.lists(st.integers(1, 1 << 22), min_size=1, max_size=20))
def test_rules_agree_on_ints_and_arrays(window, chunk, block, in_flight, contexts) -> None:
    # `sweep` evaluates the same functions over numpy arrays: element-wise equal to the ints.
    shape = RequestShape(in_flight_tokens=in_flight)
    arr = np.asarray(contexts, dtype=np.int64)
    for cache in (FullAttentionCache(token_bytes=7), SlidingWindowCache(token_bytes=7,
                  window=window), ChunkedLocalCache(token_bytes=7, chunk=chunk)):
        got = cache.pages_per_request(arr, block, shape)
        assert list(got) == [cache.pages_per_request(c, block, shape) for c in contexts]
        steady = cache.steady_bytes(arr, block)
        assert list(steady) == [cache.steady_bytes(c, block) for c in contexts]
        # In decode a window never holds more than the whole context.
        assert all(cache.steady_pages(c, block) <= cdiv(c, block) for c in contexts)


@given(model=st.sampled_from(HYBRIDS), context=st.integers(1, 1 << 20))
def test_sequence_bytes_on_arrays_equals_ints(model, context) -> None:
    caches = rank_caches(load_spec(model))
    arr = np.asarray([context, context + 1], dtype=np.int64)
    assert list(caches.sequence_bytes(arr, 16)) == [
        caches.sequence_bytes(context, 16), caches.sequence_bytes(context + 1, 16)]


# --- FLOPs and bytes of every kind -----------------------------------------------------------


def test_sliding_layers_attend_their_window_only() -> None:
    # Mistral-7B-v0.1: 32 layers, all sliding 4,096, 32 heads x 128. Decoding at 32,768 tokens
    # each layer scores 4,096 keys: 2 x 32 x 128 x 4,096 = 33,554,432 FLOPs for q.K and as much
    # for weights.V -- not the 8x that attending to 32,768 tokens would cost.
    from kvplan.perf.flops import attention_flops, decode_cost

    spec = load_spec("mistral-7b-v0.1")
    per_layer = attention_flops(spec, context=4096)
    assert per_layer.scores == per_layer.values == 2 * 32 * 128 * 4096
    cost = decode_cost(spec, context=32768)
    assert cost.attention_flops_per_token == 32 * per_layer.total
    # KV read: the window, 4,096 tokens x 32 layers x 8 KV heads x 256 x 2 B.
    assert cost.kv_read_bytes_per_token == 4096 * 32 * 8 * 256 * 2


def test_hybrid_decode_counts_recurrent_layers() -> None:
    # Qwen3-Next: 12 attention layers over the context, 36 Gated DeltaNet layers at a fixed
    # cost (projections + 3 x 2 x 32 x 128 x 128 for S.k, the update and S.q), and each
    # recurrent layer reads and writes its 1,097,728-byte state once per token.
    from kvplan.perf.flops import attention_flops, decode_cost, recurrent_flops_per_token
    from kvplan.weights.params import recurrent_params

    spec = load_spec("qwen3-next-80b-a3b")
    assert recurrent_flops_per_token(spec) == 2 * recurrent_params(spec) + 6 * 32 * 128 * 128
    short, long = (decode_cost(spec, context=c) for c in (1024, 2048))
    # Only the 12 attention layers grow with the context.
    growth = 12 * (attention_flops(spec, context=2048).total
                   - attention_flops(spec, context=1024).total)
    assert long.decode_flops_per_token - short.decode_flops_per_token == growth
    assert short.kv_read_bytes_per_token == 1024 * 12 * 2048 + 2 * 36 * 1_097_728


def test_qwen3_5_27b_log_vllm_0_19_h20() -> None:
    # vllm issue #40691 (vLLM 0.19.0, H20, Qwen3.5-27B, --max-model-len 32768, dummy weights):
    # "GPU KV cache size: 290,864 tokens" and "Maximum concurrency for 32,768 tokens per
    # request: 33.04x". The budget is not logged, but the two lines pin the layout: text config
    # of Qwen/Qwen3.5-27B (hidden 5120, 64 layers, every 4th full attention with 4 KV heads x
    # 256, GDN 16 key / 48 value heads x 128, conv 4, mamba_ssm_dtype float32; as quoted in a
    # public test, find_string id 55568797625). GDN state: conv (3, 10,240) x 2 B = 61,440 +
    # ssm (48, 128, 128) x 4 B = 3,145,728 -> 3,207,168 B; attention 4 x 512 x 2 = 4,096
    # B/token; block 16 x cdiv(3,207,168, 65,536) = 784. 16 full + 48 GDN -> 1 + 3 groups.
    # 0.19 prints num_blocks // 4 x 784 = 290,864 -> 371 x 4 <= num_blocks < 372 x 4, and
    # num_blocks / (cdiv(32768, 784) + 3 x 1) = num_blocks / 45 = 33.04 -> num_blocks = 1,487.
    from kvplan.sources.spec_yaml import parse_spec

    layer_types = ["recurrent", "recurrent", "recurrent", "full_attention"] * 16
    spec = parse_spec({
        "name": "Qwen3.5-27B", "source": "https://huggingface.co/Qwen/Qwen3.5-27B",
        "num_hidden_layers": 64, "hidden_size": 5120, "vocab_size": 248320,
        "layer_types": layer_types,
        "attention": {"kind": "gqa", "num_attention_heads": 24, "num_key_value_heads": 4,
                      "head_dim": 256},
        "recurrent": {"kind": "gated_delta_net", "conv_kernel": 4, "num_key_heads": 16,
                      "num_value_heads": 48, "key_head_dim": 128, "value_head_dim": 128,
                      "ssm_dtype": "float32"},
        "mlp": {"intermediate_size": 17408}}, path="qwen3.5-27b", spec_id="qwen3.5-27b")
    probe = plan_capacity(spec, plan_inputs(context=32768, kv_budget_bytes=GiB,
                                           engine_version="0.19", max_num_batched_tokens=16384))
    assert probe.block_size == 784
    block = probe.stages[0].page_bytes * probe.stages[0].group_size
    plan = plan_capacity(spec, plan_inputs(context=32768, kv_budget_bytes=1487 * block,
                                          engine_version="0.19", max_num_batched_tokens=16384))
    assert plan.num_blocks == 1487
    assert plan.reported_kv_cache_tokens == 290_864
    assert f"{plan.max_concurrency:.2f}" == "33.04"
