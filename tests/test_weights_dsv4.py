"""DeepSeek-V4's weights (kvplan.weights.csa, kvplan.weights.params.csa_params), held against
bytes worked out by hand from deepseek-ai/DeepSeek-V4-Flash's config.json and against vLLM
0.32's own parameters on the oracle shrinks (tests/oracle/vllm_weight_bytes.py,
tests/data/oracle/weight-bytes.json). vLLM sources: models/deepseek_v4/ (nvidia/model.py,
attention.py, compressor.py, quant_config.py, nvidia/flashmla.py) and
rotary_embedding/deepseek_scaling_rope.py, 0.32.0."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvplan._util.errors import UnmodelledError
from kvplan.capacity.weights import weights_breakdown
from kvplan.sources.resolve import load_spec
from kvplan.weights.breakdown import weight_breakdown
from kvplan.weights.params import count_params

DATA = Path(__file__).resolve().parent / "data"
FLASH = DATA / "configs" / "dsv4" / "deepseek-v4-flash.json"
MEASURED = json.loads((DATA / "oracle" / "weight-bytes.json").read_text())["cases"]

# DeepSeek-V4-Flash, config.json: hidden H 4,096, 43 layers, 64 heads of 512 (64 RoPE),
# q_lora_rank 1,024, o_groups 8 of o_lora_rank 1,024, indexer 64 heads of 128, 256 experts of
# 2,048 (6 active, 1 shared), num_hash_layers 3, hc_mult 4, vocab 129,280, expert_dtype fp4,
# fp8 blocks [128, 128] (so e8m0 scales, one byte: quant_config.py is_scale_e8m0).
# compress_ratios: layers 0-1 window only, 21 layers of ratio 4 (2, 4, ..., 42), 20 of 128.
#
# Per layer, TP 1 (weights + scales):
#   attn_sink 64 x 4 = 256 (flashmla.py:78-85 pads to 64 heads);
#   fused_wqa_wkv (1,024 + 512) x 4,096 = 6,291,456 + 12 x 32 = 384;
#   q_norm + kv_norm (1,024 + 512) x 2 = 3,072;
#   wq_b 32,768 x 1,024, wo_a 8,192 x 4,096, wo_b 4,096 x 8,192: 3 x 33,554,432 + 3 x 2,048;
#   -> 106,958,080 + 6,528 scales.
#   Ratio-4 compressor (coff 2): ape 4 x 1,024 x 4 = 16,384, fused_wkv_wgate 2,048 x 4,096 x
#   2 = 16,777,216 (bf16), norm 1,024: 16,794,624. Ratio-128 (coff 1): 262,144 + 8,388,608 +
#   1,024 = 8,651,776. Indexer (ratio 4): wq_b 8,192 x 1,024 = 8,388,608 + 512 scales,
#   weights_proj 64 x 4,096 x 2 = 524,288, its compressor over 128: 4,096 + 4,194,304 + 256:
#   13,111,552 + 512.
#   Router 256 x 4,096 x 2 = 2,097,152; tid2eid 129,280 x 6 x 4 = 3,102,720 (layers 0-2), else
#   the score bias 256 x 4 = 1,024.
#   Experts (MXFP4): w13 4,096 x 4,096 / 2 + 4,096 x 128 scales, w2 4,096 x 2,048 / 2 + 4,096 x
#   64: 12,582,912 + 786,432 per expert, x 256.
#   Shared expert: 4,096 x 4,096 + 4,096 x 2,048 = 25,165,824 + 1,536 scales.
#   Norms 2 x 4,096 x 2 = 16,384; hyper-connections (24 x 16,384 x 2 + 48 + 6) x 4 = 3,145,944.
# Once: embed_tokens and lm_head 2 x 129,280 x 4,096 x 2, norm 8,192, hc_head (4 x 16,384 + 5)
# x 4; two float32 rotary tables of 1,048,576 x 64 x 4 (window layers: max_position_embeddings
# rows; compressed: 65,536 x 16, the YaRN factor).
# Sum: 43 x 106,964,608 + 21 x (16,794,624 + 13,112,064) + 20 x 8,651,776
#   + 43 x 2,097,152 + 3 x 3,102,720 + 40 x 1,024 + 43 x 256 x 13,369,344
#   + 43 x 25,167,360 + 43 x 3,162,328 + 2,118,123,520 + 8,192 + 262,164 + 536,870,912
#   = 156,543,260,892 B (145.79 GiB).
FLASH_TP1 = 156_543_260_892
# TP 8: heads 8 (the sink still 64), wq_b 4,096 x 1,024, wo_a 1,024 x 4,096, wo_b 4,096 x 1,024
# (256 scales each); experts of 256: 256 x (256 x 4,096 + 256 x 4,096 / 16 + 4,096 x 128 +
# 4,096 x 8); shared 512 x 4,096 + 4,096 x 256 (+ 128 + 64 scales); vocab 16,160 rows each;
# the replicated pieces (fused_wqa_wkv, compressors, indexer, routers, norms, hyper-connections,
# rotary tables) whole: 21,181,771,804 B (19.73 GiB).
FLASH_TP8 = 21_181_771_804


def test_flash_bytes_by_hand() -> None:
    spec = load_spec(str(FLASH))
    assert weights_breakdown(spec, tp=1).total == FLASH_TP1
    wb = weights_breakdown(spec, tp=8)
    assert wb.total == FLASH_TP8
    assert wb.method == "deepseek_v4_fp8 (mxfp4 experts)"
    assert wb.rope_cache == 2 * 1_048_576 * 64 * 4


def test_flash_parameters_as_the_model_card() -> None:
    # The model card: 284B parameters, 13B activated (the float32 hyper-connections and the
    # token -> expert tables of the hash layers are parameters in vLLM, the rotary tables not).
    counts = count_params(load_spec(str(FLASH)))
    assert counts.total == 284_334_567_511
    assert counts.active == 13_801_959_511


def test_flash_base_fp8_experts_take_float32_scales() -> None:
    # expert_dtype fp8 (DeepSeek-V4-Flash-Base): Fp8MoEMethod experts of 1 byte per weight and
    # float32 block scales, and the linears' scales float32 too (is_scale_e8m0 false).
    spec = load_spec(str(FLASH))
    fp4 = weights_breakdown(spec, tp=8)
    fp8 = weights_breakdown(replace(spec, attention=replace(spec.attention,
                                                            expert_dtype="fp8")), tp=8)
    per_expert = 512 * 4_096 + 4_096 * 256  # w13 + w2 weights at TP 8, one byte each
    assert fp8.experts - fp4.experts == 43 * 256 * (per_expert - per_expert // 2)
    # Scales: experts 256 x (4 x 32 + 32 x 2) float32 tiles where MXFP4 had one byte per 32;
    # the linears' 1-byte scales become 4 bytes.
    assert fp8.expert_scales == 43 * 256 * (4 * 32 + 32 * 2) * 4


@pytest.mark.parametrize("case, gap", [
    ("deepseek-v4/deepseek-v4-flash", 0),
    # The Pro shrink has 16 heads: FlashMLA pads the float32 sink to 64 heads on a GPU, the CPU
    # build does not (cpu_sparse.py get_padded_num_q_heads): 61 layers x 48 x 4 B.
    ("deepseek-v4/deepseek-v4-pro", 61 * 48 * 4),
])
def test_shrinks_equal_vllm(case: str, gap: int) -> None:
    spec = load_spec(str(DATA / "oracle" / case))
    b = weight_breakdown(spec, None, dtype="bf16")
    assert b.total - b.rope_cache - MEASURED[case]["params"] == gap
    assert b.rope_cache == MEASURED[case]["buffers"]


def test_kernel_padding_refused() -> None:
    # Pro at TP 16: 3,072 / 16 = 192 experts' columns per rank, which the MXFP4 kernels pad
    # (Marlin / TRT-LLM / DeepGEMM to 128s): refused, not guessed.
    spec = load_spec(str(DATA / "configs" / "dsv4" / "deepseek-v4-pro.json"))
    with pytest.raises(UnmodelledError, match="padding"):
        weights_breakdown(spec, tp=16)


def test_nvfp4_experts_not_counted_but_a_given_budget_still_answers() -> None:
    # nvidia/DeepSeek-V4-Flash-NVFP4 (moe_quant_algo NVFP4: vLLM's ModelOptNvFp4FusedMoE
    # experts, not read): its weights are refused in one line naming the field, and a
    # question with the budget given is answered without them (weights "not counted").
    spec = load_spec(str(DATA / "blind26" / "real" / "deepseek-v4-flash-nvfp4.json"))
    with pytest.raises(UnmodelledError, match="moe_quant_algo.*--kv-budget-gib"):
        count_params(spec)
