"""Family tensors vLLM 0.32 builds that kvplan counted otherwise (issue 26, wgap26): DBRX's
LayerNorms without bias, GPT-J's / Falcon-7B's one norm per parallel block, GPT-J's and Phi-MoE's
lm_head bias, BLOOM's embedding LayerNorm, OPT's 2 offset position rows, OLMoE's q / k norms over
all heads, Hy3's q / k norms (kvplan.sources.features names the lines). Hand counts from the
published configs; the oracle shrinks' own bytes: tests/test_weights_rotary_extras.py and
tests/test_pp_stage_weights.py (weight-bytes.json). The rules were written after those probes
showed the differences: the shrinks shaped them (no held-out test)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvplan.sources.hf_config import load_config
from kvplan.sources.resolve import load_spec
from kvplan.weights.breakdown import weight_breakdown

DATA = Path(__file__).resolve().parent / "data"
CONFIGS = DATA / "configs"


def _spec(name: str, folder: Path = CONFIGS):
    return load_config(folder / f"{name}.json")[0]


def _params_bytes(spec, dtype: str = "bf16", tp: int = 1) -> int:
    b = weight_breakdown(spec, None, dtype=dtype, tp=tp)
    return b.total - b.rope_cache


def test_opt_125m_position_table_has_two_offset_rows() -> None:
    # facebook/opt-125m (tests/data/configs/opt-125m.json: hidden 768, 12 layers, ffn_dim 3,072,
    # vocab 50,272, max_position_embeddings 2,048, tied, float16). vLLM 0.32 models/opt.py:
    #   embed_tokens 50,304 (vocab padded to 64) x 768                    =  38,633,472
    #   embed_positions (2,048 + 2) x 768 (OPTLearnedPositionalEmbedding,
    #     :60-66: num_embeddings + offset 2)                              =   1,574,400
    #   a layer: q, k, v, out_proj 4 x 768^2 + 4 x 768 biases            =   2,362,368
    #            fc1 768 x 3,072 + 3,072, fc2 3,072 x 768 + 768          =   4,722,432
    #            self_attn_layer_norm, final_layer_norm 2 x 2 x 768      =       3,072
    #            = 7,087,872, x 12                                        =  85,054,464
    #   final_layer_norm 2 x 768                                          =       1,536
    #   125,263,872 elements x 2 B = 250,527,744 B (was 250,524,672: 2 x 768 x 2 B short).
    spec = _spec("opt-125m")
    assert spec.learned_position_offset and spec.max_position_embeddings == 2048
    assert _params_bytes(spec, "fp16") == 250_527_744
    assert _params_bytes(replace(spec, learned_position_offset=False), "fp16") == 250_524_672


def test_gpt_j_6b_one_layernorm_a_block_and_the_lm_head_bias() -> None:
    # EleutherAI/gpt-j-6b (tests/data/configs/gpt-j-6b.json: n_embd 4,096, 28 layers, n_inner
    # None -> 4 x 4,096, vocab 50,400, untied), at bf16. vLLM 0.32 models/gpt_j.py:
    #   wte 50,432 (padded to 64) x 4,096                                 =   206,569,472
    #   a layer: q, k, v, out_proj 4 x 4,096^2 (no bias, :76-83)         =    67,108,864
    #            fc_in 4,096 x 16,384 + 16,384, fc_out 16,384 x 4,096
    #            + 4,096                                                  =   134,238,208
    #            ln_1 alone (:167; attention and MLP read it) 2 x 4,096  =         8,192
    #            = 201,355,264, x 28                                      = 5,637,947,392
    #   ln_f 2 x 4,096                                                    =         8,192
    #   lm_head 50,432 x 4,096 + its bias 50,432 (:265-271)              =   206,619,904
    #   6,051,144,960 elements x 2 B = 12,102,289,920 B (was 12,102,647,808: a second
    #   LayerNorm a layer, 28 x 8,192 x 2 B, over; the bias, 50,432 x 2 B, under).
    spec = _spec("gpt-j-6b")
    assert spec.parallel_block_norm and spec.lm_head_bias
    assert _params_bytes(spec) == 12_102_289_920
    before = replace(spec, parallel_block_norm=False, lm_head_bias=False)
    assert _params_bytes(before) == 12_102_647_808


def test_dbrx_instruct_layernorms_hold_no_bias() -> None:
    # databricks/dbrx-instruct (tests/data/configs/dbrx-instruct.json: d_model 6,144, 40 layers,
    # 48 heads of 128, 8 KV heads, 16 experts of 10,752, vocab 100,352, untied), at bf16. vLLM
    # 0.32 models/dbrx.py:
    #   wte and lm_head 2 x 100,352 x 6,144                               =   1,233,125,376
    #   a layer: Wqkv (6,144 + 2 x 1,024) x 6,144                         =      50,331,648
    #            out_proj 6,144^2                                         =      37,748,736
    #            router 16 x 6,144                                        =          98,304
    #            experts 16 x 3 x 6,144 x 10,752                          =   3,170,893,824
    #            norm_1, norm_2 2 x 6,144 (weights: :353-356 drops the
    #              bias of every LayerNorm)                               =          12,288
    #            = 3,259,084,800, x 40                                    = 130,363,392,000
    #   norm_f 6,144 (weight alone)                                       =           6,144
    #   131,596,523,520 elements x 2 B = 263,193,047,040 B (was 995,328 B over: the biases,
    #   (40 x 12,288 + 6,144) x 2 B).
    spec = _spec("dbrx-instruct")
    assert spec.layernorm_without_bias and spec.norm_type == "layernorm"
    assert _params_bytes(spec) == 263_193_047_040
    assert _params_bytes(replace(spec, layernorm_without_bias=False)) == 263_194_042_368


@pytest.mark.parametrize("tp", [1, 2])
def test_olmoe_qk_norms_span_all_heads_on_every_rank(tp: int) -> None:
    # allenai/OLMoE-1B-7B-0924-SFT (16 layers, 16 heads and 16 KV heads of 128): olmoe.py:164-165
    # q_norm = RMSNorm(16 x 128), k_norm = RMSNorm(16 x 128), all-gathered under TP (:190-202),
    # so each rank holds both whole: 16 x (2,048 + 2,048) x 2 B = 131,072 B at TP 1 and TP 2.
    spec = _spec("olmoe-1b-7b-0924-sft")
    assert spec.replicated_qk_norm and not spec.per_head_qk_norm
    delta = (_params_bytes(spec, tp=tp)
             - _params_bytes(replace(spec, replicated_qk_norm=False), tp=tp))
    assert delta == 131_072


def test_falcon_parallel_block_norm_follows_the_config() -> None:
    # models/falcon.py:284-303: tiiuae/falcon-7b (parallel_attn true, new_decoder_architecture
    # false) builds one input_layernorm a layer; falcon-40b (new_decoder_architecture:
    # num_ln_in_parallel_attn defaults to 2) ln_attn and ln_mlp. Falcon-7B: 32 layers x 2 x 4,544
    # x 2 B = 581,632 B fewer than two LayerNorms a layer.
    seven, forty = _spec("falcon-7b"), _spec("falcon-40b")
    assert seven.parallel_block_norm and not forty.parallel_block_norm
    assert (_params_bytes(replace(seven, parallel_block_norm=False))
            - _params_bytes(seven)) == 581_632
    # The bundled spec (model_specs/falcon-7b.yaml) says the same.
    assert load_spec("falcon-7b").parallel_block_norm


@pytest.mark.parametrize(("tp", "expected"), [(1, 64_128), (2, 32_064)])
def test_phi_moe_lm_head_bias(tp: int, expected: int) -> None:
    # Phi-3.5-MoE's class (tests/data/configs/phi-moe-30-attn2.json, vocab 32,064, a multiple of
    # 64): phimoe.py:551-557 ParallelLMHead(bias=True), the bias split like the vocabulary rows
    # (layers/vocab_parallel_embedding.py:628-629): 32,064 / TP x 2 B.
    spec = _spec("phi-moe-30-attn2")
    assert spec.lm_head_bias and not spec.tie_word_embeddings
    assert (_params_bytes(spec, tp=tp)
            - _params_bytes(replace(spec, lm_head_bias=False), tp=tp)) == expected


def test_bloom_embedding_layernorm() -> None:
    # A published BLOOM-560m fine-tune (tests/data/blind26/real/
    # bloomz-560m-sft-chat-safetensors.json, hidden 1,024): bloom.py:253-255
    # word_embeddings_layernorm, weight and bias, with the embeddings: 2 x 1,024 x 2 B.
    spec = _spec("bloomz-560m-sft-chat-safetensors", DATA / "blind26" / "real")
    assert spec.embedding_layernorm
    b = weight_breakdown(spec, None, dtype="bf16")
    off = weight_breakdown(replace(spec, embedding_layernorm=False), None, dtype="bf16")
    assert b.embeddings - off.embeddings == b.total - off.total == 4_096


def test_hy3_qk_norms_from_config_qk_norm() -> None:
    # tencent/Hy3-preview (tests/data/configs/hy3-preview.json: qk_norm true, 80 layers, head_dim
    # 128): hy_v3.py:260 reads config.qk_norm (not use_qk_norm), :301-306 q_norm and k_norm of
    # head_dim in the model dtype: 80 x 2 x 128 x 2 B = 40,960 B.
    spec = _spec("hy3-preview")
    assert spec.qk_norm and spec.per_head_qk_norm
    assert (_params_bytes(spec)
            - _params_bytes(replace(spec, per_head_qk_norm=False))) == 40_960


def test_cohere_one_layernorm_a_block() -> None:
    # CohereForCausalLM (tests/data/configs/command-r-v01.json: hidden 8,192, 40 layers):
    # commandr.py:309 builds one input_layernorm (a weight, no bias) for the parallel attention
    # and MLP: 40 x 8,192 x 2 B = 655,360 B fewer than two norms a layer. Found by the
    # command-r-v01 shrink's PP 2 probe (32,768 B over on each stage: 2 layers x 8,192 x 2 B).
    spec = _spec("command-r-v01")
    assert spec.parallel_block_norm
    assert (_params_bytes(replace(spec, parallel_block_norm=False))
            - _params_bytes(spec)) == 655_360
