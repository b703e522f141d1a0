"""FLOP counts worked by hand from real configs (2 FLOPs per multiply-add, matmuls only)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvplan import load_spec
from kvplan._util.dtypes import get_dtype
from kvplan.perf.flops import (
    MLAForm,
    absorbed_crossover_context,
    attention_flops,
    decode_cost,
    mla_cache_elements,
)
from kvplan.weights.params import count_params


def test_mha_layer_llama2_7b() -> None:
    # h 4096, 32 heads x 128, MHA; decode at L = 1024.
    f = attention_flops(load_spec("llama-2-7b"), context=1024)
    assert f.q_proj == 2 * 4096 * 4096  # 33,554,432
    assert f.kv_proj == 2 * 4096 * 32 * (128 + 128)  # 67,108,864
    assert f.scores == 2 * 32 * 128 * 1024  # 8,388,608
    assert f.values == 2 * 32 * 128 * 1024
    assert f.o_proj == 2 * 4096 * 4096
    assert f.total == 150_994_944


def test_gqa_layer_llama3_8b() -> None:
    # Same as above but 8 KV heads: the K/V projections shrink 4x, attention does not.
    f = attention_flops(load_spec("llama-3-8b"), context=1024)
    assert f.kv_proj == 2 * 4096 * 8 * 256  # 16,777,216
    assert f.scores == f.values == 8_388_608
    assert f.total == 100_663_296


def test_mla_layer_deepseek_v2_absorbed_and_naive() -> None:
    # h 5120, 128 heads, d_c 512, d_h^R 64, nope 128, v 128, q_lora_rank 1536; L = 1024.
    spec = load_spec("deepseek-v2")
    a = attention_flops(spec, context=1024, mla_form=MLAForm.absorbed)
    n = attention_flops(spec, context=1024, mla_form=MLAForm.naive)
    # Query through the low-rank path: 2·5120·1536 + 2·1536·128·(128 + 64)
    assert a.q_proj == n.q_proj == 15_728_640 + 75_497_472
    # Down-projection to the latent plus the shared RoPE key: 2·5120·(512 + 64)
    assert a.kv_proj == n.kv_proj == 5_898_240
    assert a.o_proj == n.o_proj == 2 * 128 * 128 * 5120  # 167,772,160
    # Absorbed: q_nope·W_UK (2·128·128·512) and W_UV after attention (2·128·512·128) ...
    assert a.absorb == 33_554_432
    # ... and attention over the 576-wide latent (scores) and the 512-wide latent (values).
    assert a.scores == 2 * 128 * 576 * 1024
    assert a.values == 2 * 128 * 512 * 1024
    assert a.kv_up_proj == 0
    # Naive: up-project all 1,024 cached latents to K_nope and V for 128 heads, every step,
    assert n.kv_up_proj == 2 * 512 * 128 * (128 + 128) * 1024  # 34,359,738,368
    # then attend with 192-wide keys and 128-wide values.
    assert n.scores == 2 * 128 * 192 * 1024
    assert n.values == 2 * 128 * 128 * 1024
    assert n.absorb == 0


def test_mla_decompressed_cache() -> None:
    spec = load_spec("deepseek-v2")
    d = attention_flops(spec, context=1024, mla_form=MLAForm.decompressed)
    # The new token is up-projected once, then cached per head.
    assert d.kv_proj == 5_898_240 + 2 * 512 * 128 * 256
    assert d.kv_up_proj == 0
    assert mla_cache_elements(spec.attention, MLAForm.decompressed) == 128 * (128 + 64 + 128)
    assert mla_cache_elements(spec.attention, MLAForm.absorbed) == 576


def test_absorbed_crossover_is_computed() -> None:
    spec = load_spec("deepseek-v2")
    crossover = absorbed_crossover_context(spec)
    # At L = 1 the absorbed fix-ups (33.6M) plus latent attention cost more than naive's single
    # up-projection (33.6M) plus narrow attention; from L = 2 naive pays two up-projections.
    assert crossover == 2
    for ctx in (crossover, crossover + 1, 4096):
        assert (attention_flops(spec, context=ctx, mla_form=MLAForm.absorbed).total
                < attention_flops(spec, context=ctx, mla_form=MLAForm.naive).total)
    assert (attention_flops(spec, context=crossover - 1, mla_form=MLAForm.absorbed).total
            >= attention_flops(spec, context=crossover - 1, mla_form=MLAForm.naive).total)
    assert absorbed_crossover_context(load_spec("llama-3-8b")) is None


def test_prefill_counts_causal_half() -> None:
    spec = load_spec("llama-3-8b")
    f = attention_flops(spec, context=1023, phase="prefill")
    assert f.scores == 2 * 32 * 128 * 512  # (1023 + 1) / 2 keys on average


def test_decode_cost_weights_and_kv() -> None:
    spec = load_spec("llama-3-8b")
    cost = decode_cost(spec, context=8192, batch=4, hbm_bytes_per_s=3_350 * 10**9,
                       peak_flops_per_s=989_500 * 10**9)
    assert cost.kv_read_bytes_per_token == 8192 * 131_072  # 1 GiB per request per step
    # bf16 weights: every parameter once per step, except the (untied) input embedding, of
    # which a decode step only gathers `batch` rows.
    params = count_params(spec).total - 128_256 * 4096
    assert cost.weight_read_bytes_per_step == 2 * params
    assert cost.bytes_per_step == cost.weight_read_bytes_per_step + 4 * 8192 * 131_072
    assert cost.step_seconds == pytest.approx(cost.bytes_per_step / 3.35e12)  # memory-bound
    assert cost.arithmetic_intensity == pytest.approx(4 * cost.decode_flops_per_token
                                                      / cost.bytes_per_step)


@given(ctx=st.integers(1, 1 << 18), model=st.sampled_from(
    ["llama-3-8b", "deepseek-v2", "falcon-7b", "gpt2", "minicpm3-4b"]),
    form=st.sampled_from(list(MLAForm)))
def test_attention_flops_linear_in_context(ctx, model, form) -> None:
    spec = load_spec(model)

    def total(c: int) -> int:
        return attention_flops(spec, context=c, mla_form=form).total

    step = total(ctx + 1) - total(ctx)
    assert step > 0
    assert total(ctx + 2) - total(ctx + 1) == step
    assert total(2 * ctx) - total(ctx) == step * ctx


def test_decode_cost_mla_down_projections_whole_on_every_rank() -> None:
    # DeepSeek-V3 (config.json: hidden_size 7168, q_lora_rank 1536, kv_lora_rank 512,
    # qk_rope_head_dim 64, 61 layers). q_a_proj (7168 -> 1536) and kv_a_proj_with_mqa
    # (7168 -> 512 + 64) are replicated on every TP rank in vLLM, SGLang and TensorRT-LLM
    # (AttentionFlops.projections_on_rank cites each): per token and layer
    # 2 x 7168 x 1536 + 2 x 7168 x 576 = 22,020,096 + 8,257,536 = 30,277,632 FLOPs, and
    # 7168 x (1536 + 576) = 15,138,816 weights, that a rank of TP 8 runs and reads whole.
    spec = load_spec("deepseek-v3")
    replicated_flops, replicated_params = 30_277_632, 15_138_816
    assert attention_flops(spec, context=1024).replicated == replicated_flops
    one = decode_cost(spec, context=1024, batch=1, tp=1)
    eight = decode_cost(spec, context=1024, batch=1, tp=8)
    # Split ideally except the replicated part: (total - R) / 8 + R, R over 61 layers.
    r = 61 * replicated_flops
    assert eight.attention_flops_per_token == (one.attention_flops_per_token + 7 * r) // 8
    assert eight.decode_flops_per_token == (one.decode_flops_per_token + 7 * r) // 8
    # Weights: the replicated projections' bytes whole on every rank, the rest / 8.
    rb = get_dtype(spec.weight_dtype).bytes_for(61 * replicated_params)
    assert eight.weight_read_bytes_per_step == (one.weight_read_bytes_per_step - rb) // 8 + rb
    # Head attention has nothing replicated: Llama-3-8B splits exactly as before.
    llama = load_spec("llama-3-8b")
    assert attention_flops(llama, context=1024).replicated == 0
    assert (decode_cost(llama, context=1024, tp=8).weight_read_bytes_per_step
            == decode_cost(llama, context=1024, tp=1).weight_read_bytes_per_step // 8)
