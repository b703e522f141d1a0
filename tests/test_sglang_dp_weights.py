"""Where SGLang's weights sit under --enable-dp-attention (kvplan.engines.sglang.engine
`dp_attention_weights`): attention and token embeddings whole on every GPU, the dense MLPs,
shared experts and lm_head split over the TP group, routed experts as without it."""

from __future__ import annotations

from pathlib import Path

from kvplan.capacity.weights import weights_breakdown
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from kvplan.weights.base import DpAttentionWeights
from tests.test_checkpoint_weights import MOE_CONFIG, make_folder, moe_tensors

SGLANG = DpAttentionWeights(mlp_split=True, lm_head_split=True)


def test_engines_answer_their_placement() -> None:
    assert Engine.sglang.rules.dp_attention_weights() == SGLANG
    assert Engine.vllm.rules.dp_attention_weights() == DpAttentionWeights()  # vLLM unchanged
    assert Engine.trtllm.rules.dp_attention_weights() == DpAttentionWeights()


def test_deepseek_v3_tp8_dp_attention_by_hand() -> None:
    # DeepSeek-V3's config.json: hidden 7,168, intermediate 18,432 (first_k_dense_replace 3
    # dense layers), moe_intermediate 2,048 x n_shared_experts 1 on the other 58 layers,
    # vocabulary 129,280 (a multiple of 64: no padding); fp8 e4m3 weights with float32 scales
    # per 128 x 128 block (weight_block_size), lm_head bf16 (not quantized).
    spec, _ = load_model("deepseek-v3")
    vllm = weights_breakdown(spec, tp=8, dp_attention=True)
    sglang = weights_breakdown(spec, tp=8, dp_attention=True, dp_split=SGLANG)
    # Dense MLP, one byte a weight: whole 3 x 3 x 18,432 x 7,168 = 1,189,085,184; one TP rank
    # of 8 holds 2,304 of the 18,432 rows of gate, up and down: 148,635,648.
    dense = 3 * 3 * 2304 * 7168
    shared = 58 * 3 * 256 * 7168  # 2,048 / 8 = 256 rows: 319,291,392 (whole 2,554,331,136)
    assert sglang.dense_mlp == dense + shared == 467_927_040
    assert vllm.dense_mlp == 3 * 3 * 18432 * 7168 + 58 * 3 * 2048 * 7168 == 3_743_416_320
    # lm_head bf16: 129,280 / 8 = 16,160 rows x 7,168 x 2 B (whole 1,853,358,080).
    assert sglang.lm_head == 16160 * 7168 * 2 == 231_669_760
    assert vllm.lm_head == 129280 * 7168 * 2
    # Scales, 4 B per 128 x 128 block. Dense layer whole: gate_up 288 x 56 + down 56 x 144 =
    # 24,192 blocks; per rank 36 x 56 + 56 x 18 = 3,024. Shared expert whole: 32 x 56 + 56 x 16
    # = 2,688; per rank 4 x 56 + 56 x 2 = 336.
    scales = 4 * (3 * (24192 - 3024) + 58 * (2688 - 336))
    assert scales == 799_680
    assert vllm.quantization_scales - sglang.quantization_scales == scales
    # The attention, embeddings and routed experts are the same either way.
    assert (sglang.attention, sglang.embeddings, sglang.experts) == (
        vllm.attention, vllm.embeddings, vllm.experts)
    assert sglang.embeddings == 129280 * 7168 * 2  # whole: enable_tp=not dp_attention
    # 4.90 GB a GPU fewer than the vLLM placement counted (1.04 dense + 2.24 shared experts +
    # 1.62 lm_head + 0.0008 scales).
    assert vllm.total - sglang.total == (1_040_449_536 + 2_235_039_744 + 1_621_688_320
                                         + 799_680) == 4_897_977_280


def test_checkpoint_path_keeps_lm_head_and_shared_experts_split(tmp_path: Path) -> None:
    shared = "model.layers.0.mlp.shared_experts"
    tensors = moe_tensors() | {f"{shared}.gate_proj.weight": ("BF16", [32, 64]),
                               f"{shared}.down_proj.weight": ("BF16", [64, 32])}
    spec, _ = load_model(str(make_folder(tmp_path / "moe", MOE_CONFIG, tensors)))
    tp2 = weights_breakdown(spec, tp=2)
    whole = weights_breakdown(spec, tp=2, dp_attention=True)
    sglang = weights_breakdown(spec, tp=2, dp_attention=True, dp_split=SGLANG)
    assert whole.lm_head == 128 * 64 * 2  # vocabulary 128 x hidden 64, bf16, whole
    assert sglang.lm_head == tp2.lm_head == 64 * 64 * 2  # 128 / 2 rows
    assert sglang.embeddings == whole.embeddings == 128 * 64 * 2
    assert sglang.attention == whole.attention
    assert sglang.experts == whole.experts == tp2.experts
    # The shared expert (intermediate 32): gate rows and down columns halved, 2 x 16 x 64 x 2 B.
    assert whole.dense_mlp == 2 * 32 * 64 * 2
    assert sglang.dense_mlp == tp2.dense_mlp == 2 * 16 * 64 * 2
