"""Weights as the engines hold them (kvplan.weights.breakdown) and as checkpoints store them
(kvplan.sources.checkpoint).

Golden numbers are derived by hand in the comments; the engine-log cases compare against vLLM's
"Model loading took X GiB" lines (per GPU), each with its URL.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvplan._util.errors import SpecError
from kvplan._util.units import GiB
from kvplan.model.quant import Unquantized
from kvplan.model.quant_config import bitsandbytes_config, parse_quantization_config
from kvplan.model.quant_formats import (
    Bnb4bit,
    Bnb8bit,
    Fp8Block,
    Fp8PerChannel,
    Fp8PerTensor,
    IntGrouped,
    MixedPrecisionKernel,
    Mxfp4,
    Mxfp4Backend,
    Nvfp4,
)
from kvplan.sources.checkpoint import categorise, read_checkpoint
from kvplan.sources.hf_config import load_config
from kvplan.sources.resolve import bundled_spec_ids, load_spec
from kvplan.weights.base import (
    engine_dtype,
    engine_dtype_note,
    rope_cache_bytes,
    rope_cache_elements,
)
from kvplan.weights.breakdown import weight_breakdown
from kvplan.weights.gemma_blocks import layer_tensors
from kvplan.weights.params import count_params, recurrent_float32_params
from kvplan.weights.routers import router_bytes

CONFIGS = Path(__file__).parent / "data" / "configs"


def _qc(model: str) -> dict[str, Any]:
    return json.loads((CONFIGS / f"{model}.json").read_text())["quantization_config"]


# --- gpt-oss-120b, mxfp4 experts, vLLM Marlin MoE on an H100 ------------------------------------
# https://github.com/vllm-project/vllm/issues/23278: "Model loading took 65.9651 GiB" (TP1, the
# log warns "Weight-only FP4 compression will be used leveraging the Marlin kernel").
# Shapes: hidden 2880, 36 layers, 128 experts of width 2880, 64 q heads / 8 KV heads of 64.
# Experts (Marlin pads I to 128 -> 2944 and H to 256 -> 3072, mxfp4.py create_weights):
#   per expert: w13 2*2944 x 3072 and w2 3072 x 2944 -> 27,131,904 elements;
#   4-bit: 13,565,952 B; e8m0 scale per 32: 847,872 B; bf16 biases (5888 + 3072) x 2 = 17,920 B.
#   x 128 x 36: weights 62,511,906,816 + biases 82,575,360 = 62,594,482,176; scales 3,906,994,176.
# Attention (bf16): (4096 + 512 + 512) x 2880 + 2880 x 4096 = 26,542,080 + biases 8000
#   -> 53,100,160 B x 36 = 1,911,605,760; attention sinks (models/gpt_oss.py:130-132, one bf16
#   logit per q head: ModelSpec.attention_sinks, wgaps2) 64 x 2 x 36 = 4,608 -> 1,911,610,368.
# Embeddings and lm_head (bf16, untied): 201,088 x 2880 x 2 = 1,158,266,880 B each.
# Routers 36 x 2880 x 128 x 2 = 26,542,080 and their bias (models/gpt_oss.py:383-389, GateLinear
# bias=True) 36 x 128 x 2 = 9,216; norms (36 x 2 + 1) x 2880 x 2 = 420,480.
# Rotary table (YaRN, 4096 x 32 = 131,072 rows of head_dim 64, float32: models/gpt_oss.py:110-113
# get_rope(..., dtype=torch.float32), since 0.10.1): 33,554,432 (rope_cache; 16,777,216 in bf16).
# Total 70,790,146,688 B = 65.9284 GiB (log 65.9651: -0.06 %; -0.08 % with a bf16 table).
GPT_OSS_120B_BYTES = 70_790_146_688


def test_gpt_oss_120b_mxfp4_marlin_h100() -> None:
    quant = parse_quantization_config(_qc("gpt-oss-120b"), "gpt-oss-120b.json")
    b = weight_breakdown(load_spec("gpt-oss-120b"), quant, dtype=engine_dtype(None))
    assert b.quantization_scales == 3_906_994_176
    assert b.experts == 62_594_482_176 + 26_542_080 + 9_216
    assert b.attention == 1_911_610_368
    assert b.rope_cache == 33_554_432
    assert b.embeddings == b.lm_head == 1_158_266_880
    assert b.total == GPT_OSS_120B_BYTES
    assert abs(b.total / GiB / 65.9651 - 1) < 0.005


def test_gpt_oss_counted_in_fp32_was_the_bug() -> None:
    # The issue's symptom: 435 GiB of fp32. With the engines' dtype rule and mxfp4 it is 66 GiB.
    spec = load_spec("gpt-oss-120b")
    assert spec.weight_dtype == "fp32"
    assert weight_breakdown(spec, None, dtype="fp32").total / GiB > 400


# --- gpt-oss-20b, A100 (Marlin), vLLM 0.19 -----------------------------------------------------
# https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/ : "Model loading took 13.72 GiB memory".
# Same per-expert bytes as above x 32 experts x 24 layers: 10,418,651,136 of 4-bit weights,
# 13,762,560 of biases, 651,165,696 of scales; attention 53,100,160 x 24; embeddings + lm_head
# 2,316,533,760; router biases 24 x 32 x 2 = 1,536; rotary table 33,554,432 (float32, above);
# attention sinks 24 x 64 x 2 = 3,072 (wgaps2) -> 14,712,781,952 B = 13.7023 GiB (-0.13 %; -0.24 %
# with a bf16 table).


def test_gpt_oss_20b_mxfp4_a100() -> None:
    quant = parse_quantization_config(_qc("gpt-oss-20b"), "gpt-oss-20b.json")
    b = weight_breakdown(load_spec("gpt-oss-20b"), quant, dtype="bf16")
    assert b.total == 14_712_781_952
    assert abs(b.total / GiB / 13.72 - 1) < 0.005


def test_mxfp4_backend_padding() -> None:
    # Marlin pads 2880 to 2944 (intermediate, x128) by 3072 (hidden, x256); the SM90 FlashInfer
    # kernel to 2944 x 2944 (x128 both). Triton is sized as Marlin (its swizzled layout not read;
    # the measured stand-in: tests/test_vllm_mxfp4_backend.py).
    plain = Mxfp4(backend=Mxfp4Backend.flashinfer_sm90, expert_bias=False
                  ).experts_bytes(1, 2880, 2880, True)
    assert plain.weight == 3 * 2944 * 2944 // 2
    assert plain.scales == 3 * 2944 * 2944 // 32
    marlin = Mxfp4(backend=Mxfp4Backend.marlin, expert_bias=False).experts_bytes(1, 2880, 2880,
                                                                                 True)
    assert marlin.weight == 3 * 2944 * 3072 // 2
    assert Mxfp4(backend=Mxfp4Backend.triton, expert_bias=False).experts_bytes(
        1, 2880, 2880, True) == marlin


# --- bitsandbytes 4-bit (fp4), Llama-3-8B, vLLM 0.5.x ------------------------------------------
# https://github.com/vllm-project/vllm/pull/7320 (PrunaAI/Einstein-v6.1-Llama3-8B-bnb-4bit-smashed,
# a Llama-3-8B fine-tune): "Loading model weights took 5.6168 GB" -- vLLM 0.5 printed bytes / 2**30
# with a "GB" label. Linear weights per layer: 4096 x (4096 + 1024 + 1024 + 4096) + 3 x 4096 x
# 14336 = 218,103,808 -> x 32 = 6,979,321,856 params: 4-bit 3,489,660,928 B + fp32 absmax per 64:
# 436,207,616 B (no double quantization; with it the total would be 5.31 GiB, -5.4 %).
# bf16 embeddings + lm_head 2 x 128,256 x 4096 x 2 = 2,101,346,304; norms 532,480; rotary table
# 8192 x 128 x 2 = 2,097,152. Total 6,029,844,480 B = 5.6158 GiB (-0.02 %).


def test_bnb_fp4_llama3_8b() -> None:
    quant = parse_quantization_config(
        {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "fp4",
         "bnb_4bit_use_double_quant": False}, "config.json")
    b = weight_breakdown(load_spec("llama-3-8b"), quant, dtype="bf16")
    assert b.quantization_scales == 436_207_616
    assert b.total == 6_029_844_480
    assert abs(b.total / GiB / 5.6168 - 1) < 0.005


# --- GPTQ on Hopper: Machete keeps what Marlin frees, Llama-3.1-8B, vLLM 0.19 --------------------
# vllm/model_executor/kernels/linear/mixed_precision/machete.py process_weights_after_loading
# repacks qweight and scales only; gptq_marlin.py allocated g_idx (int32 per input) and qzeros
# (packed int32) regardless of desc_act / sym, and Marlin would replace both with empty tensors.
# 6,979,321,856 linear params, 4-bit, group 128, fp16 scales: weight 3,489,660,928 B; scales
# params / 128 x 2 = 109,051,904; qzeros params / 128 / 8 x 4 = 27,262,976; g_idx per fused matrix
# (qkv, o, gate_up in 4096; down in 14336) 26,624 x 4 x 32 layers = 3,407,872. fp16 embeddings +
# lm_head 2,101,346,304; norms 532,480; rotary table 33,554,432. Total 5,764,816,896 B =
# 5.3689 GiB; the H100 log ("Using MacheteLinearKernel for GPTQMarlinLinearMethod", "Model loading
# took 5.38 GiB", tests/data/weights/logs.json) -0.21 % (Marlin's layout: 5.3403, -0.74 %).


def test_gptq_machete_keeps_g_idx_and_qzeros() -> None:
    qc = {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}
    spec = load_spec("llama-3.1-8b")
    machete = weight_breakdown(spec, parse_quantization_config(
        qc, "config.json", mp_kernel=MixedPrecisionKernel.machete), dtype="fp16")
    marlin = weight_breakdown(spec, parse_quantization_config(qc, "config.json"), dtype="fp16")
    assert machete.quantization_scales == 139_722_752
    assert machete.total == 5_764_816_896
    assert marlin.quantization_scales == 109_051_904
    assert abs(machete.total / GiB / 5.38 - 1) < 0.003
    # AWQ's zero points become -scales x zp in the compute dtype under Machete (2 B per group
    # and output instead of 4 packed bits); MoE experts keep the fused Marlin layout.
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
    scheme = parse_quantization_config(awq, "c", mp_kernel=MixedPrecisionKernel.machete
                                       ).scheme_for("model.layers.0.mlp.down_proj")
    assert scheme is not None
    assert scheme.matrix_bytes(4096, 128).scales == 4096 * 2 + 4096 * 2
    assert scheme.experts_bytes(2, 128, 128, True) == parse_quantization_config(
        awq, "c").scheme_for("model.layers.0.mlp.down_proj").experts_bytes(2, 128, 128, True)


# --- bitsandbytes chosen at load time, Llama-3.1-8B, vLLM 0.5.4 -----------------------------------
# vllm/model_executor/model_loader/bitsandbytes_loader.py quantizes every linear weight of a 16-bit
# checkpoint with quantize_4bit(w, compress_statistics=True, quant_type="nf4"): NF4 with double
# quantization. The 6,979,321,856 linear params (see above): 4-bit 3,489,660,928 B; uint8 absmax
# per 64: 109,051,904 B; fp32 absmax per 256 blocks: 1,703,936 B; per quantized matrix an fp32
# offset and a 256-entry fp32 code book, 1,028 B x 128 (kvplan's 4 fused matrices x 32 layers;
# vLLM keeps one state per checkpoint shard, 7 x 32: 98,688 B more, 0.002 %) = 131,584 B.
# Scales 110,887,424 B. bf16 embeddings + lm_head 2,101,346,304; norms 532,480; rotary table
# 131,072 x 128 x 2 = 33,554,432. Total 5,735,981,568 B = 5.3420 GiB; the log (file id 5655614781
# in tests/data/weights/logs.json): "Loading model weights took 5.3421 GB" (bytes / 2**30).
# Without double quantization it would be 5.6450 GiB (+5.7 %).


def test_bnb_at_load_time_is_nf4_double_quant() -> None:
    b = weight_breakdown(load_spec("llama-3.1-8b"), bitsandbytes_config(), dtype="bf16")
    assert b.quantization_scales == 110_887_424
    assert b.total == 5_735_981_568
    assert abs(b.total / GiB / 5.3421 - 1) < 0.001


def test_bnb_at_load_time() -> None:
    q = bitsandbytes_config()
    scheme = q.scheme_for("model.layers.0.mlp.gate_proj")
    assert isinstance(scheme, Bnb4bit) and scheme.quant_type == "nf4"
    assert q.scheme_for("lm_head") is None
    assert isinstance(bitsandbytes_config(bits=8).scheme_for("model.layers.0.mlp.down_proj"),
                      Bnb8bit)



# --- vLLM's rotary cos/sin table --------------------------------------------------------------
# vllm/model_executor/layers/rotary_embedding/base.py: RotaryEmbedding keeps a cos_sin_cache buffer
# of (max_position_embeddings, rotary_dim) in the model dtype, one per rope configuration
# (get_rope's _ROPE_DICT), on every rank and stage with attention layers. By hand from
# meta-llama/Llama-3.1-8B's config.json (max_position_embeddings 131072, 4096 / 32 heads = head_dim
# 128): 131,072 x 128 = 16,777,216 elements, 32 MiB in bf16, 64 MiB in fp32. vLLM 0.19 on an
# H100 logs 14.99 GiB (bf16) and 29.98 GiB (fp32) for Llama-3.1-8B-Instruct: the parameters alone
# are 14.958 / 29.915 GiB, the table is the rest (tests/data/weights/logs.json).


def test_rope_table_llama31_8b() -> None:
    spec = load_spec("llama-3.1-8b")
    assert rope_cache_elements(spec) == 131_072 * 128 == 16_777_216
    plain = 2 * count_params(spec).total  # 128,256 is a multiple of 64: no vocabulary padding
    assert weight_breakdown(spec, None, dtype="bf16").total == plain + 33_554_432
    assert weight_breakdown(spec, None, dtype="fp32").total == 2 * plain + 67_108_864
    # Replicated, not split: every TP rank and every pipeline stage holds the whole table.
    tp4 = weight_breakdown(spec, None, dtype="bf16", tp=4)
    stage = weight_breakdown(spec, None, dtype="bf16", layers=range(8, 16), first=False,
                             last=False)
    assert tp4.rope_cache == stage.rope_cache == 33_554_432
    assert tp4.attention == 32 * (4096 * (1024 + 256 + 256) + 1024 * 4096) * 2
    assert stage.attention == 8 * (4096 * 6144 + 4096 * 4096) * 2


def test_rope_table_by_attention_kind() -> None:
    # Llama-4-Scout states max_position_embeddings 10,485,760: a 2.5 GiB table per GPU.
    assert rope_cache_elements(load_spec("llama-4-scout")) * 2 == int(2.5 * GiB)
    # MLA rotates qk_rope_head_dim only (DeepSeek-V2-Lite: 163,840 x 64).
    assert rope_cache_elements(load_spec("deepseek-v2-lite")) == 163_840 * 64
    # Learned positions (gpt2): no table.
    assert rope_cache_elements(load_spec("gpt2")) == 0

# --- DeepSeek-V3, fp8 128x128 blocks -----------------------------------------------------------
# Every linear is fp8 with one fp32 scale per 128x128 tile. An expert (moe_intermediate 2048,
# hidden 7168): w13 4096 x 7168 -> 32 x 56 tiles, w2 7168 x 2048 -> 56 x 16 tiles: 2688 scales =
# 10,752 B next to 44,040,192 B of fp8. 58 MoE layers x 256 experts: 653,908,770,816 B of fp8
# experts (+ bf16 routers 58 x 7168 x 256 x 2 and their float32 e_score_correction_bias,
# 58 x 256 x 4: models/deepseek_v2.py:320-332) and 159,645,696 B of their scales.


def test_deepseek_v3_fp8_block() -> None:
    quant = parse_quantization_config(_qc("deepseek-v3"), "deepseek-v3.json")
    scheme = quant.scheme_for("model.layers.5.mlp.experts.0.gate_proj")
    assert isinstance(scheme, Fp8Block)
    one = scheme.experts_bytes(1, 7168, 2048, True)
    assert one.weight == 3 * 7168 * 2048 == 44_040_192
    assert one.scales == (32 * 56 + 56 * 16) * 4 == 10_752
    b = weight_breakdown(load_spec("deepseek-v3"), quant, dtype="bf16")
    assert (b.experts - 58 * 7168 * 256 * 2 - 58 * 256 * 4 == 58 * 256 * 44_040_192
            == 653_908_770_816)
    # Embeddings and lm_head stay bf16 (not LinearBase in vLLM): 129,280 x 7168 x 2 each.
    assert b.embeddings == b.lm_head == 129_280 * 7168 * 2
    tp8 = weight_breakdown(load_spec("deepseek-v3"), quant, dtype="bf16", tp=8)
    assert 78 * GiB < tp8.total < 81 * GiB  # about 79.5 GiB per GPU at TP8


def test_minimax_ignore_list() -> None:
    quant = parse_quantization_config(_qc("minimax-m2"), "minimax-m2.json")
    assert quant.scheme_for("model.layers.0.block_sparse_moe.gate") is None
    assert isinstance(quant.scheme_for("model.layers.0.mlp.gate_proj"), Fp8Block)


# --- GPTQ and AWQ, by hand on one 4096 x 4096 matrix, 4-bit, group 128 --------------------------
# packed weight 4096 x 4096 / 2 = 8,388,608 B; 32 groups x 4096 outputs of fp16 scales = 262,144 B;
# AWQ zero points 32 x 4096 x 4 bits = 65,536 B; symmetric GPTQ has none after Marlin repacking;
# desc_act keeps g_idx and its sort indices: 2 x 4096 x 4 = 32,768 B.


def test_awq_gptq_matrix() -> None:
    awq = parse_quantization_config({"quant_method": "awq", "bits": 4, "group_size": 128,
                                     "zero_point": True}, "c.json")
    m = awq.scheme_for("model.layers.0.self_attn.q_proj").matrix_bytes(4096, 4096)
    assert (m.weight, m.scales) == (8_388_608, 262_144 + 65_536)
    gptq = parse_quantization_config({"quant_method": "gptq", "bits": 4, "group_size": 128,
                                      "desc_act": True, "sym": True}, "c.json")
    m = gptq.scheme_for("model.layers.0.self_attn.q_proj").matrix_bytes(4096, 4096)
    assert (m.weight, m.scales) == (8_388_608, 262_144 + 32_768)
    assert gptq.scheme_for("lm_head") is None
    assert parse_quantization_config({"quant_method": "gptq", "lm_head": True},
                                     "c.json").scheme_for("lm_head") is not None


def test_compressed_tensors_groups_and_ignore() -> None:
    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized",
          "config_groups": {
              "group_0": {"targets": ["re:.*mlp.experts.*"],
                          "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                                      "group_size": 32, "symmetric": True}},
              "group_1": {"targets": ["Linear"],
                          "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
          "ignore": ["lm_head", "re:.*self_attn.*"]}
    q = parse_quantization_config(qc, "kimi.json")
    experts = q.scheme_for("model.layers.3.mlp.experts.0.gate_proj")
    assert isinstance(experts, IntGrouped) and experts.group_size == 32
    assert isinstance(q.scheme_for("model.layers.3.mlp.shared_experts.gate_proj"), Fp8PerChannel)
    assert q.scheme_for("model.layers.3.self_attn.q_proj") is None
    nvfp4 = parse_quantization_config({"quant_method": "compressed-tensors", "config_groups": {
        "g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float",
                                                 "strategy": "tensor_group", "group_size": 16}}}},
        "c.json")
    assert isinstance(nvfp4.scheme_for("model.layers.0.mlp.down_proj"), Nvfp4)


def test_nvfp4_modelopt() -> None:
    q = parse_quantization_config({"quant_method": "modelopt", "quant_algo": "NVFP4",
                                   "exclude_modules": ["lm_head"]}, "c.json")
    m = q.scheme_for("model.layers.0.mlp.down_proj").matrix_bytes(4096, 14336)
    # 4096 x 14336 / 2 bytes; fp8 scales 4096 rows x 896 columns (already multiples of 128 / 4),
    # plus the fp32 global weight scale and input scale.
    assert m.weight == 4096 * 14336 // 2
    assert m.scales == 4096 * 896 + 8
    fp8 = parse_quantization_config({"quantization": {"quant_algo": "FP8"}}, "hf_quant.json")
    assert isinstance(fp8.scheme_for("model.layers.0.mlp.down_proj"), Fp8PerTensor)


def test_unknown_method_is_one_line() -> None:
    with pytest.raises(SpecError) as err:
        parse_quantization_config({"quant_method": "hqq"}, "x/config.json")
    assert str(err.value).startswith("x/config.json: quantization_config.quant_method: 'hqq'")
    assert "\n" not in str(err.value)
    with pytest.raises(SpecError, match="weight_block_size"):
        parse_quantization_config({"quant_method": "fp8", "weight_block_size": [128]}, "c.json")


@pytest.mark.parametrize(("torch_dtype", "expected", "noted"), [
    (None, "bf16", True), ("float32", "bf16", True), ("bfloat16", "bf16", False),
    ("float16", "fp16", False), ("fp32", "bf16", True), ("float8", "bf16", True),
])
def test_engine_dtype(torch_dtype: str | None, expected: str, noted: bool) -> None:
    assert engine_dtype(torch_dtype) == expected
    assert (engine_dtype_note(torch_dtype) is not None) is noted


def test_gemma2_float32_config_loads_bf16() -> None:
    # gemma-2-9b's config says float32; vLLM/SGLang load bf16: half the bytes.
    spec = load_spec("gemma-2-9b")
    bf16 = weight_breakdown(spec, None, dtype=engine_dtype("float32"))
    assert 2 * bf16.total == weight_breakdown(spec, None, dtype="fp32").total


@pytest.mark.parametrize("spec_id", bundled_spec_ids())
def test_unquantized_matches_param_count(spec_id: str) -> None:
    # With no quantization the layout is the parameter count in the compute dtype, except for
    # vLLM's vocabulary padding to a multiple of 64 (gpt2's 50,257 -> 50,304; minicpm3's 73,448
    # -> 73,472) and the rotary cos/sin table it builds (`rope_cache_bytes`). A vision tower
    # (spec.vision, spec.qwen_vit) is not in the text model's parameter count; it is the
    # "vision" group. A router vLLM holds in float32 and its float32 score bias
    # (kvplan.weights.routers) add their bytes beyond 2 per parameter, in each MoE layer; so do
    # the recurrent mixers' float32 parameters (A, A_log: recurrent_float32_params), 2 B more
    # each, in each recurrent layer; and Gemma-3n's float32 AltUp scale.
    spec = load_spec(spec_id)
    b = weight_breakdown(spec, None, dtype="bf16")
    padded = -(-spec.vocab_size // 64) * 64
    heads = 1 if spec.tie_word_embeddings else 2
    routers = sum(router_bytes(spec, 16) - 2 * layer.router
                  for layer in count_params(spec).layers if layer.router)
    fp32 = 2 * recurrent_float32_params(spec) * sum(
        spec.has_recurrent(i) for i in range(spec.num_hidden_layers))
    # Gemma-3n's float32 AltUp correct_output_scale (kvplan.weights.gemma_blocks), 2 B more each.
    fp32 += 2 * sum(x.rows for i in range(spec.num_hidden_layers)
                    for x in layer_tensors(spec, i) if x.float32)
    assert b.total - b.vision == 2 * count_params(spec).total + 2 * heads * (
        padded - spec.vocab_size) * spec.hidden_size + rope_cache_bytes(spec, 16) + routers + fp32
    assert (b.vision > 0) == (spec.vision is not None or spec.qwen_vit is not None)
    assert weight_breakdown(spec, None, dtype="bf16", vision=False).vision == 0


# --- Qwen3.5-9B's vision transformer, vLLM 0.32 qwen3_vl.py ------------------------------------
# vision_config (tests/data/configs/qwen3.5-9b.json): depth 27, hidden 1152, intermediate 4304,
# 16 heads, patch 16, temporal patch 2, merge 2, out_hidden 4096, 2,304 position embeddings, no
# deepstack. Per block: qkv 1152 x 3456 + 3456 = 3,984,768; proj 1152 x 1152 + 1152 =
# 1,328,256; linear_fc1 1152 x 4304 + 4304 = 4,962,512; linear_fc2 4304 x 1152 + 1152 =
# 4,959,360; norm1 + norm2 2 x 2,304 -> 15,239,504 x 27 = 411,466,608. Patch Conv3d 1152 x 3 x 2
# x 16 x 16 + 1152 = 1,770,624; pos_embed 2,304 x 1152 = 2,654,208; merger LayerNorm 2,304,
# linear_fc1 4608 x 4608 + 4608 = 21,238,272, linear_fc2 4608 x 4096 + 4096 = 18,878,464 ->
# 40,119,040. 456,010,480 params x 2 B = 912,020,960 B, + the blocks' rotary table 8,192 x (72 /
# 2) x 2 B = 589,824 -> 912,610,784 B (0.85 GiB) per GPU at TP 1. vLLM 0.19 logs "Model loading
# took 17.66 GiB" for Qwen3.5-9B on an L40S (tests/data/engine_logs/vllm_startup_logs.json, file
# id 51781852921); kvplan's total moves from 16.55 to 17.40 GiB with the tower (-1.5 %).
def test_qwen35_vision_transformer_weights() -> None:
    spec = load_spec("qwen3.5-9b")
    b = weight_breakdown(spec, None, dtype="bf16")
    assert b.vision == 912_610_784
    # At TP 2 the blocks' and mergers' linears split (biases of row-parallel layers stay whole).
    half = weight_breakdown(spec, None, dtype="bf16", tp=2).vision
    per_block_tp2 = 2 * (1152 * 1728 + 576 * 1152 + 1152 * 2152 + 2152 * 1152
                         + 1728 + 1152 + 2152 + 1152 + 4 * 1152)
    merger_tp2 = 2 * (2304 + 2304 * 4608 + 4096 * 2304 + 2304 + 4096)
    fixed = 2 * (1_770_624 + 2_654_208) + 589_824
    assert half == fixed + 27 * per_block_tp2 + merger_tp2


# --- Gemma-3-27B's SigLIP tower and rotary tables, vLLM 0.19 ------------------------------------
# vision_config (tests/data/configs/gemma-3-27b.json): hidden 1152, intermediate 4304, 27 layers,
# image 896, patch 14, vision_use_head false; vLLM siglip.py + gemma3_mm.py
# (kvplan.weights.breakdown._vision_tower). Per encoder layer: qkv 1152 x 3456 + 3456 bias =
# 3,984,768; out_proj 1152 x 1152 + 1152 = 1,328,256; fc1 1152 x 4304 + 4304 = 4,962,512;
# fc2 4304 x 1152 + 1152 = 4,959,360; two LayerNorms 2 x 2,304 -> 15,239,504 x 27 = 411,466,608.
# Patch Conv2d 1152 x 3 x 14 x 14 + 1152 = 678,528; 4,096 positions x 1152 = 4,718,592;
# post_layernorm 2,304; projector 1152 x 5376 = 6,193,152 + its RMSNorm 1,152.
# 423,060,336 params x 2 B + position_ids 4,096 x 8 B = 846,153,440 B. Rotary tables:
# (131,072 + 131,072 x 8) rows x 128 x 2 B = 301,989,888 B. The text decoder's pre/post-feedforward
# norms and per-head q/k norms (vLLM gemma3.py:149-150, 241-250; wgaps2): 62 layers x (2 x 5,376 +
# 2 x 128) x 2 B = 1,364,992 B more than before (55,165,470,944).
# Text model 2 x 27,008,663,808 = 54,017,327,616 B. Total 55,165,470,944 B = 51.377 GiB; vLLM
# 0.19.0 on an H100 logged "Model loading took 51.45 GiB" (tests/data/weights/logs.json): -0.14 %
# (was -2.16 % without the tower and with one unscaled rotary table).


def test_gemma3_vision_tower_and_rope_tables() -> None:
    spec = load_spec("gemma-3-27b")
    b = weight_breakdown(spec, None, dtype="bf16")
    assert b.vision == 846_153_440
    assert b.rope_cache == 301_989_888
    assert b.total == 55_166_835_936
    assert abs(b.total / GiB / 51.45 - 1) < 0.002
    # The config.json path builds the same spec fields.
    from_config = load_spec(str(Path(__file__).parent / "data" / "configs" / "gemma-3-27b.json"))
    assert from_config.vision == spec.vision and from_config.rope_tables == spec.rope_tables


# --- properties ---------------------------------------------------------------------------------

dims = st.integers(min_value=1, max_value=8192)


@given(out=dims, inp=dims, group=st.sampled_from([-1, 32, 64, 128]), zp=st.booleans(),
       act=st.booleans())
def test_int_bytes_monotone_in_bits(out: int, inp: int, group: int, zp: bool, act: bool) -> None:
    sizes = [IntGrouped(bits=b, group_size=group, zero_points=zp, act_order=act)
             .matrix_bytes(out, inp).total for b in (2, 3, 4, 8)]
    assert sizes == sorted(sizes)
    assert sizes[-1] <= Unquantized(bits=16).matrix_bytes(out, inp).total + \
        IntGrouped(bits=8, group_size=group, zero_points=zp, act_order=act).matrix_bytes(
            out, inp).scales + 4 * out * 2


@given(out=dims, inp=dims)
def test_scales_never_negative(out: int, inp: int) -> None:
    for scheme in (Unquantized(), Fp8PerTensor(), Fp8PerChannel(), Fp8Block(), Mxfp4(),
                   Nvfp4(), IntGrouped(), Bnb4bit(), Bnb4bit(double_quant=True), Bnb8bit()):
        m = scheme.matrix_bytes(out, inp)
        assert m.scales >= 0 and m.weight > 0


@given(spec_id=st.sampled_from(["deepseek-v3", "gpt-oss-20b", "qwen3-next-80b-a3b", "llama-3-8b",
                                "granite-4.0-h-small", "minicpm3-4b"]),
       method=st.sampled_from(["fp8", "awq", "gptq", "bnb", "mxfp4", "ct"]),
       tp=st.sampled_from([1, 2, 4, 8]))
def test_breakdown_sums_to_total(spec_id: str, method: str, tp: int) -> None:
    qc: dict[str, Any] = {
        "fp8": {"quant_method": "fp8", "weight_block_size": [128, 128]},
        "awq": {"quant_method": "awq", "bits": 4, "group_size": 128},
        "gptq": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": True},
        "bnb": {"quant_method": "bitsandbytes", "load_in_4bit": True},
        "mxfp4": {"quant_method": "mxfp4"},
        "ct": {"quant_method": "compressed-tensors", "config_groups": {"g": {
            "targets": ["Linear"], "weights": {"num_bits": 4, "type": "float",
                                               "group_size": 16}}}},
    }[method]
    spec = load_spec(spec_id)
    b = weight_breakdown(spec, parse_quantization_config(qc, "c.json"), dtype="bf16", tp=tp)
    parts = b.as_dict()
    total = parts.pop("total")
    assert total == sum(parts.values()) == b.total
    assert all(v >= 0 for v in parts.values())
    assert b.total <= weight_breakdown(spec, None, dtype="bf16", tp=tp).total * 1.1


# --- checkpoint headers ---------------------------------------------------------------------------

_BITS = {"BF16": 16, "F16": 16, "F32": 32, "F8_E4M3": 8, "U8": 8, "I32": 32}


def _write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]],
                       metadata: dict[str, str] | None = None) -> int:
    """A real safetensors file: header + zero-filled data. Returns the data bytes."""
    header: dict[str, Any] = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = 1
        for d in shape:
            n *= d
        size = n * _BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))
    return offset


TINY = {
    "model.embed_tokens.weight": ("BF16", [64, 16]),
    "model.layers.0.self_attn.q_proj.weight": ("F8_E4M3", [16, 16]),
    "model.layers.0.self_attn.q_proj.weight_scale_inv": ("F32", [1, 1]),
    "model.layers.0.mlp.experts.0.gate_proj.weight": ("F8_E4M3", [32, 16]),
    "model.layers.0.mlp.gate.weight": ("BF16", [4, 16]),
    "model.layers.0.mlp.shared_experts.up_proj.weight": ("BF16", [8, 16]),
    "model.layers.0.input_layernorm.weight": ("BF16", [16]),
    "model.layers.1.eh_proj.weight": ("BF16", [16, 32]),
    "visual.blocks.0.attn.qkv.weight": ("BF16", [48, 16]),
    "lm_head.weight": ("BF16", [64, 16]),
}


def test_read_single_file(tmp_path: Path) -> None:
    data = _write_safetensors(tmp_path / "model.safetensors", TINY)
    (tmp_path / "config.json").write_text(json.dumps({"num_hidden_layers": 1}))
    ckpt = read_checkpoint(tmp_path)
    assert ckpt.total_bytes == data
    b = ckpt.breakdown
    assert b["embeddings"] == 64 * 16 * 2
    assert b["attention"] == 16 * 16
    assert b["quantization_scales"] == 4
    assert b["experts"] == 32 * 16 + 4 * 16 * 2  # routed expert + router
    assert b["dense_mlp"] == 8 * 16 * 2
    assert b["mtp"] == 16 * 32 * 2  # layer 1 >= num_hidden_layers 1
    assert b["vision"] == 48 * 16 * 2
    assert b["lm_head"] == 64 * 16 * 2
    assert b["other"] == 16 * 2
    assert ckpt.dtypes["F8_E4M3"] == 16 * 16 + 32 * 16


def test_read_sharded_index(tmp_path: Path) -> None:
    names = list(TINY)
    first = {k: TINY[k] for k in names[:5]}
    second = {k: TINY[k] for k in names[5:]}
    total = _write_safetensors(tmp_path / "model-00001-of-00002.safetensors", first)
    total += _write_safetensors(tmp_path / "model-00002-of-00002.safetensors", second)
    weight_map = dict.fromkeys(first, "model-00001-of-00002.safetensors")
    weight_map |= dict.fromkeys(second, "model-00002-of-00002.safetensors")
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": total}, "weight_map": weight_map}))
    ckpt = read_checkpoint(tmp_path)
    assert ckpt.total_bytes == total
    assert len(ckpt.files) == 2 and len(ckpt.tensors) == len(TINY)


def test_index_names_missing_tensor(tmp_path: Path) -> None:
    _write_safetensors(tmp_path / "a.safetensors", {"x.weight": ("BF16", [2])})
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"x.weight": "a.safetensors", "y.weight": "a.safetensors"}}))
    with pytest.raises(SpecError, match="a.safetensors: y.weight: listed in"):
        read_checkpoint(tmp_path)


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no model.safetensors.index.json"):
        read_checkpoint(tmp_path)
    short = tmp_path / "short.safetensors"
    short.write_bytes(b"\x01")
    with pytest.raises(SpecError, match="short.safetensors: not a safetensors file"):
        read_checkpoint(tmp_path)
    short.write_bytes(struct.pack("<Q", 200 * 1024 * 1024) + b"{}")
    with pytest.raises(SpecError, match="over the 104,857,600-byte limit"):
        read_checkpoint(tmp_path)
    short.write_bytes(struct.pack("<Q", 4) + b"nope")
    with pytest.raises(SpecError, match="not valid JSON"):
        read_checkpoint(tmp_path)
    raw = json.dumps({"t": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 6]}}).encode()
    short.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(8))
    with pytest.raises(SpecError, match="short.safetensors: t: data_offsets span 6 bytes"):
        read_checkpoint(tmp_path)
    raw = json.dumps({"t": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}).encode()
    short.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(2))
    with pytest.raises(SpecError, match="past the end of the file"):
        read_checkpoint(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "model.safetensors")
    with pytest.raises(SpecError, match="not a regular file"):
        read_checkpoint(tmp_path)


def test_checkpoint_fixture_gpt_oss_layout() -> None:
    # tests/data/weights/gpt-oss-tiny: headers in gpt-oss's own tensor names (mxfp4 experts as
    # U8 *_blocks with *_scales), data truncated to zeros.
    ckpt = read_checkpoint(Path(__file__).parent / "data" / "weights" / "gpt-oss-tiny")
    b = ckpt.breakdown
    assert b["experts"] > 0 and b["quantization_scales"] > 0
    # blocks 2 x (64 x 32 + 32 x 32) / 2, bf16 expert biases 2 x (64 + 32) x 2, router 2 x 32 x 2
    # and its bias 2 x 2; the e8m0 scales 2 x (64 + 32) are counted apart.
    assert b["experts"] == 3072 + 384 + 128 + 4
    assert b["quantization_scales"] == 192


@pytest.mark.parametrize(("name", "group"), [
    ("model.layers.0.mlp.experts.gate_up_proj_blocks", "experts"),
    ("model.layers.0.mlp.experts.gate_up_proj_scales", "quantization_scales"),
    ("model.layers.3.self_attn.kv_b_proj.weight_scale_inv", "quantization_scales"),
    ("model.layers.0.self_attn.q_proj.qzeros", "quantization_scales"),
    ("model.layers.0.mlp.down_proj.weight.absmax", "quantization_scales"),
    ("model.layers.0.mlp.down_proj.weight.quant_state.bitsandbytes__nf4", "quantization_scales"),
    ("model.layers.0.mixer.in_proj.weight", "attention"),
    ("model.layers.2.feed_forward.experts.down_proj", "experts"),
    ("model.layers.0.mlp.shared_expert.up_proj.weight", "dense_mlp"),
    ("model.norm.weight", "other"),
    ("model.mtp.layers.0.eh_proj.weight", "mtp"),
    ("model.vision_tower.blocks.0.attn.weight", "vision"),
])
def test_categorise(name: str, group: str) -> None:
    assert categorise(name) == group


def test_weights_bench_md_is_current() -> None:
    # examples/weights-bench.md is what tests/benches/weights_bench.py prints today.
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "tests.benches.weights_bench"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    assert out == (root / "examples" / "weights-bench.md").read_text()


def test_llama4_vision_tower_weights_by_hand() -> None:
    # Llama-4-Scout's vision model and projector in bf16 (vLLM 0.15.1 / 0.19.0 mllama4.py: built
    # with quant_config=None, split over TP), hidden h 1,408, MLP I 5,632, 34 blocks, 3 x 14^2 =
    # 588 pixels a patch, 576 patches + CLS; adapter 5,632 -> 4,096 -> 4,096; projector 4,096 ->
    # 5,120. At TP 4: patch embedding 352 x 588 = 206,976; replicated class + positions + two
    # LayerNorms 1,408 x (1 + 577 + 4) = 819,456; a block: qkv 1,056 x 1,408 + o 1,408 x 352 +
    # fc1 1,408 x 1,408 + fc2 1,408 x 1,408 = 5,947,392, biases 1,056 + 1,408 + 1,408 + 1,408 =
    # 5,280, LayerNorms 5,632: 5,958,304 x 34 = 202,582,336; adapter 1,024 x 5,632 + 4,096 x
    # 1,024 = 9,961,472; projector 1,280 x 4,096 = 5,242,880. Sum 218,813,120 x 2 B =
    # 437,626,240 B (0.41 GiB). The llm-d-planner 0.19.0 log of Scout at TP 4 (tests/data/weights/
    # logs.json) logs 53.12 GiB: without the tower kvplan had 52.69 GiB (-0.81 %), with it 53.10.
    spec = load_spec("llama-4-scout")
    assert weight_breakdown(spec, None, dtype="bf16", tp=4).vision == 437_626_240
    # TP 2: 206,976 x 2 + 819,456 + 11,908,160 x 34 + 19,922,944 + 10,485,760 = 436,519,552
    # elements, 873,039,104 B. An FP8 checkpoint leaves the tower in bf16 (quant_config=None).
    assert weight_breakdown(spec, None, dtype="bf16", tp=2).vision == 873_039_104
    fp8 = load_config(CONFIGS / "llama-4-scout-fp8-dynamic.json")[0]
    quant = parse_quantization_config(fp8.quantization_config, "x")
    assert weight_breakdown(fp8, quant, dtype="bf16", tp=2).vision == 873_039_104


def test_wrapper_prefixed_ignore_list() -> None:
    # RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic ignores
    # "language_model.model.layers.N.self_attn.{q,k,v,o}_proj": vLLM builds the text model under
    # "language_model." (mllama4.py maybe_prefix(prefix, "language_model")), so the attention
    # stays bf16. At TP 2 a layer's qkv is (20 + 2 x 4) heads x 128 = 3,584 rows x 5,120 and o
    # 5,120 x 2,560: 31,457,280 parameters x 2 B = 62,914,560 B, x 48 layers = 3,019,898,880 B
    # (FP8 would be half, plus scales). The experts stay FP8 (not ignored).
    spec = load_config(CONFIGS / "llama-4-scout-fp8-dynamic.json")[0]
    quant = parse_quantization_config(spec.quantization_config, "x")
    b = weight_breakdown(spec, quant, dtype="bf16", tp=2)
    assert b.attention == 3_019_898_880
    assert quant.scheme_for("model.layers.0.self_attn.q_proj") is None
    assert quant.scheme_for("model.layers.0.feed_forward.experts.0.gate_proj") is not None
    # The vision tower's own names do not leak onto the text model's: an ignore list naming
    # only "vision_model.model.layers.0.self_attn.q_proj" leaves the text layer quantized.
    from kvplan.model.quant_config import _name_matches

    assert not _name_matches("vision_model.model.layers.0.self_attn.q_proj",
                             "model.layers.0.self_attn.q_proj")
    assert _name_matches("model.language_model.layers.3.mlp", "model.layers.3.mlp.down_proj")
    assert _name_matches("language_model.lm_head", "lm_head")
