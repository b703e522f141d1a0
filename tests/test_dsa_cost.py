"""DeepSeek's sparse attention (DSA) in the time model (kvplan.perf.attention_cost; vLLM's
FlashMLA sparse head padding, kvplan.perf.attention_kernel.sparse_head_factor): worked by hand
from DeepSeek-V3.2's config.json (tests/data/configs/deepseek-v3.2.json: hidden_size 7168, 128
heads, kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128, q_lora_rank
1536, 61 layers; index_n_heads 64, index_head_dim 128, index_topk 2048)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvplan._util.dtypes import GemmMath
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.attention_cost import FULL_ATTENTION, SparseIndexedCost, attention_cost
from kvplan.perf.attention_kernel import sparse_head_factor, sparse_slots
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.flops import MLAForm, attention_flops, indexer_flops, prefill_form
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

V32 = load_model("tests/data/configs/deepseek-v3.2.json")[0]
DENSE = replace(V32, indexer=None)  # the same MLA without the indexer: DeepSeek-V3's attention
H200 = get_gpu("H200-141GB")


def _eff(engine: str, gpu: str = "H200-141GB"):
    return engine_efficiency(engine, device_efficiency(get_gpu(gpu)))


def test_the_attention_kind_of_each_spec() -> None:
    assert attention_cost(DENSE) is FULL_ATTENTION
    cost = attention_cost(V32)
    assert isinstance(cost, SparseIndexedCost) and cost.topk == 2048
    assert prefill_form(V32, MLAForm.absorbed) is MLAForm.absorbed  # flashmla_sparse.py:960
    assert prefill_form(DENSE, MLAForm.absorbed) is MLAForm.naive


def test_indexer_costs_by_hand() -> None:
    ind = attention_cost(V32).layer_indexer(0)
    assert ind is not None
    # vLLM 0.13.0 deepseek_v2.py: q . k of 64 heads x 128 dims per (query, key) pair, 2 FLOPs
    # per multiply-add: 2 x 64 x 128.
    assert ind.pair_flops == 16_384
    # :850 the indexer cache row: 128 fp8 values + one fp32 scale per 128 values.
    assert ind.key_bytes == 132
    # :822-841 wq_b 1536 -> 64 x 128 = 12,582,912; wk 7168 -> 128 = 917,504; weights_proj
    # 7168 -> 64 = 458,752.
    assert ind.proj_params == 13_959_168
    # One decode token at 32,768 keys: 2 x 13,959,168 + 16,384 x 32,768 = 27,918,336 +
    # 536,870,912.
    assert indexer_flops(V32, 0, context=32_768) == 564_789_248
    assert indexer_flops(DENSE, 0, context=32_768) == 0


def test_main_attention_by_hand() -> None:
    # Decode at 32,768: the absorbed MQA over min(32,768, 2,048) = 2,048 latent keys:
    # q.k 2 x 128 x (512 + 64) x 2,048, p.v 2 x 128 x 512 x 2,048.
    f = attention_flops(V32, context=32_768)
    assert (f.scores, f.values) == (301_989_888, 268_435_456)
    # Dense MLA reads all 32,768: 16x the scores.
    assert attention_flops(DENSE, context=32_768).scores == 16 * 301_989_888
    # A prompt of 8,192, every token absorbed: position p (1-based) over min(p, 2,048) keys,
    # mean (2,048 x 2,049 / 2 + 6,144 x 2,048) / 8,192 = 14,681,088 / 8,192 = 1,792.125:
    # q.k 147,456 x 1,792.125, p.v 131,072 x 1,792.125.
    p = attention_flops(V32, context=8_192, phase="prefill", mla_form=MLAForm.absorbed)
    assert (p.scores, p.values) == (264_259_584, 234_897_408)


@settings(max_examples=60, deadline=None)
@given(context=st.integers(min_value=1, max_value=2_048),
       form=st.sampled_from(list(MLAForm)))
def test_up_to_topk_keys_the_main_attention_is_dense_mla(context: int, form: MLAForm) -> None:
    for phase in ("decode", "prefill"):
        assert attention_flops(V32, context=context, phase=phase, mla_form=form) == \
            attention_flops(DENSE, context=context, phase=phase, mla_form=form)


@settings(max_examples=40, deadline=None)
@given(context=st.integers(min_value=2_048, max_value=1 << 20))
def test_beyond_topk_the_main_attention_stays_at_topk_keys(context: int) -> None:
    assert attention_flops(V32, context=context) == attention_flops(DENSE, context=2_048)
    # The indexer grows with every key.
    assert indexer_flops(V32, 0, context=context + 1) - indexer_flops(V32, 0, context=context) \
        == 16_384


def test_vllm_flashmla_sparse_head_padding() -> None:
    # vllm 0.13.0 flashmla_sparse.py:722 / :930: 16-bit cache, heads per rank padded to 64 on
    # Hopper, 128 on Blackwell. 128 heads / TP 8 = 16 -> 64 (4x); TP 16: 8 -> 64 (8x); TP 1 none.
    vllm = _eff("vllm")
    assert sparse_head_factor(vllm, V32, H200, "bf16", 8) == 4.0
    assert sparse_head_factor(vllm, V32, H200, "bf16", 16) == 8.0
    assert sparse_head_factor(vllm, V32, H200, "bf16", 1) == 1.0
    assert sparse_head_factor(_eff("vllm", "B200"), V32, get_gpu("B200"), "bf16", 8) == 8.0
    # SGLang declares no padding; a model without the indexer runs no sparse kernel.
    assert sparse_head_factor(_eff("sglang"), V32, H200, "bf16", 8) == 1.0
    assert sparse_head_factor(vllm, DENSE, H200, "bf16", 8) == 1.0


def test_a_decode_steps_indexer_by_hand() -> None:
    # 64 requests at 32,768 keys on one H200 of TP 8: pairs 64 x 32,768 = 2,097,152;
    # FP8 FLOPs 2,097,152 x 16,384 = 3.44e10 at 1,979 TFLOPS x 0.60 = 28.9 us; bytes: the keys
    # 2,097,152 x 132 + the fp32 logits 2,097,152 x 4 = 285,212,672 at 4.8 TB/s x 0.90 =
    # 66.0 us (memory-bound), 61 layers. The top-k reads the logits: 8,388,608 B, 1.94 us,
    # under the H200's 4-us kernel floor (kvplan.perf.efficiency): 4 us a layer.
    st_ = step_time(V32, H200, tokens=64, context=32_768, requests=64,
                    layout=Layout(tp=8), eff=_eff("sglang"))
    bw = 4.8e12 * 0.9
    assert st_.by_op["indexer"] == pytest.approx(61 * 285_212_672 / bw)
    assert 8_388_608 / bw < 4e-6
    assert st_.by_op["indexer_topk"] == pytest.approx(61 * 4e-6)
    dense = step_time(DENSE, H200, tokens=64, context=32_768, requests=64,
                      layout=Layout(tp=8), eff=_eff("sglang"))
    assert "indexer" not in dense.by_op
    # The main attention reads 2,048 latent rows a request, not 32,768.
    assert st_.by_op["attention"] < dense.by_op["attention"] / 8


def test_mixed_step_and_step_time_agree_on_the_indexer() -> None:
    eff = _eff("vllm")
    mixed = MixedStepCost(V32, H200, layout=Layout(tp=8), eff=eff)
    assert not mixed.full_attention_only  # the main attention selects its keys
    assert mixed.indexer_layers == 61
    st_ = step_time(V32, H200, tokens=64, context=32_768, requests=64, layout=Layout(tp=8),
                    eff=eff)
    assert mixed.indexer_seconds([32_768] * 64, []) == pytest.approx(
        st_.by_op["indexer"] + st_.by_op["indexer_topk"])
    assert MixedStepCost(DENSE, H200, layout=Layout(tp=8), eff=eff).indexer_seconds(
        [32_768] * 64, []) == 0.0


def test_mixed_step_main_attention_is_dense_up_to_topk() -> None:
    # No head padding declared (the device's efficiency alone): with every decode and chunk
    # within 2,048 keys, the main attention is dense MLA's; the indexer comes on top.
    eff = device_efficiency(H200)
    sparse = MixedStepCost(V32, H200, layout=Layout(tp=8), eff=eff)
    dense = MixedStepCost(DENSE, H200, layout=Layout(tp=8), eff=eff)
    decodes = [1_000, 2_048, 17]
    # A chunk is priced in the absorbed form under DSA, the naive one dense: compare decodes.
    assert sparse.attention_seconds(decodes, []) == pytest.approx(
        dense.attention_seconds(decodes, []) + sparse.indexer_seconds(decodes, []))
    # Beyond 2,048 keys the main attention stops growing; the indexer does not.
    far = [100_000] * 4
    main_far = sparse.attention_seconds(far, []) - sparse.indexer_seconds(far, [])
    assert main_far == pytest.approx(dense.attention_seconds([2_048] * 4, []))


def test_vllm_fp8_ds_mla_mixed_batch_head_padding() -> None:
    # vllm 0.13.0 flashmla_sparse.py:56 / :663: fewer than 32 heads a rank with the fp8_ds_mla
    # cache: every token runs FlashMLA's sparse FP8 decode kernel, on Hopper two 64-row CTAs a
    # query token (FlashMLA 46d64a8 sm90/decode/sparse_fp8/splitkv_mla.cu:587, config.h:14
    # BLOCK_M = 64): 128 / 16 = 8x at TP 8; TP 16: 8 heads -> 128, 16x.
    vllm = _eff("vllm")
    assert sparse_head_factor(vllm, V32, H200, "fp8", 8) == 8.0
    assert sparse_head_factor(vllm, V32, H200, "fp8", 16) == 16.0
    # 32 heads (TP 4) and up: the separate prefill / decode path, not declared; SM 10.x fp8
    # not declared.
    assert sparse_head_factor(vllm, V32, H200, "fp8", 4) == 1.0
    assert sparse_head_factor(_eff("vllm", "B200"), V32, get_gpu("B200"), "fp8", 8) == 1.0
    assert sparse_slots(vllm, V32, H200, "fp8", 8) == 2048
    assert sparse_slots(vllm, V32, H200, "fp8", 4) is None


def test_vllm_flashmla_sparse_computes_every_index_slot() -> None:
    # vllm 0.13.0 attention/ops/flashmla.py:237 passes no valid length; FlashMLA 46d64a8
    # sm90/prefill/sparse/fwd.cu:172 loops over topk / 64 = 32 blocks for every query token,
    # the -1 slots (deepseek_v2.py:659) masked, not skipped: 2,048 keys' FLOPs at any context.
    vllm = _eff("vllm")
    assert sparse_slots(vllm, V32, H200, "bf16", 8) == 2048
    assert sparse_slots(_eff("sglang"), V32, H200, "bf16", 8) is None
    assert sparse_slots(vllm, DENSE, H200, "bf16", 8) is None
    # 64 decodes at 1,000 keys on one H200 of TP 8, one layer: FLOPs per token 64 padded heads
    # x (2 x 576 + 2 x 512) x 2,048 slots = 285,212,672; x 64 = 18,253,611,008 at 989.5 TFLOPS
    # x 0.60 = 30.7 us. Bytes: the keys seen, 64 x 1,000 x 576 x 2 B = 73,728,000 at 4.8 TB/s x
    # 0.90 = 17.1 us: compute-bound (at 1,000 keys' FLOPs, 15.0 us, it was memory-bound).
    st_ = step_time(V32, H200, tokens=64, context=1_000, requests=64, layout=Layout(tp=8),
                    eff=vllm)
    rate = H200.peak_flops(GemmMath.bf16) * vllm.attention
    assert 73_728_000 / (4.8e12 * 0.9) < 18_253_611_008 / rate
    assert st_.by_op["attention"] == pytest.approx(61 * 18_253_611_008 / rate)
    # The mixed step agrees: 2,048 pairs a decode and a prompt token.
    mixed = MixedStepCost(V32, H200, layout=Layout(tp=8), eff=vllm)
    assert mixed.slots == 2048
    at_1000 = mixed.attention_seconds([1_000] * 64, []) - mixed.indexer_seconds([1_000] * 64, [])
    assert at_1000 == pytest.approx(61 * 18_253_611_008 / rate)
    # A 128-token chunk: 128 x 2,048 pairs, not 128 x 129 / 2.
    chunk = mixed.attention_seconds([], [(0, 128)]) - mixed.indexer_seconds([], [(0, 128)])
    assert chunk == pytest.approx(61 * max(128 * 285_212_672 / rate, mixed._floor))
