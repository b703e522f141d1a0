"""The support table (kvplan/sources/support.json) against vLLM's registry and kvplan itself.

(a) every architecture of the registry file (vLLM 0.34's `registry.py`) has exactly one entry;
(b) every *exact* entry's golden config.json (a real one, tests/data/) gives the per-token KV
    bytes derived here by hand from vLLM 0.32's model code, and names a vLLM-oracle case where
    vLLM's CPU build runs the family (tests/data/oracle/<case>, replayed by test_vllm_oracle.py);
(c) every *refused* and *not a decoder* entry is refused by kvplan (exit 2, one line, the
    entry's reason), and no golden config of an exact entry is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.kv.cache import rank_caches
from kvplan.sources.hf_config import load_config
from kvplan.sources.support import (
    EXACT,
    GOLDEN_CONFIG_KINDS,
    NOT_A_DECODER,
    REFUSED,
    STATUSES,
    golden_config_kinds,
    support_table,
    vllm_registry,
)
from tests.support_refusal import estimate_refusal
from tests.test_dsv4_wire import GOLDEN_DSV4
from tests.test_longcat import GOLDEN_LONGCAT
from tests.test_support_hybrid import GOLDEN as HYBRID_GOLDEN
from tests.test_support_layer_shapes import GOLDEN_SHAPES
from tests.test_support_layer_windows import GOLDEN_WINDOWS
from tests.test_support_mm import GOLDEN_MM
from tests.test_support_newrows import GOLDEN_NEW, NO_ORACLE
from tests.test_support_text import TEXT_GOLDEN

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
ORACLE = DATA / "oracle"

# Golden configs: id -> (file, KV bytes per token at bf16 over all layers of one rank at TP 1,
# the model's Hub page). K and V: 2 x KV heads x head_dim x 2 B per attention layer
# (vLLM 0.32 v1/kv_cache_interface.py AttentionSpec.page_size_bytes / block_size); MLA: one
# latent of kv_lora_rank + qk_rope_head_dim per layer (MLAAttentionSpec); a layer that shares
# another's cache or holds no attention adds nothing per token.
HF = "https://huggingface.co/"
GOLDEN: dict[str, tuple[Path, int, str]] = {
    # models/llama.py LlamaAttention: 32 layers x 2 x 8 KV heads x 128 x 2 B.
    "llama-3.1-8b": (CONFIGS / "llama-3.1-8b.json", 32 * 2 * 8 * 128 * 2,
                     HF + "meta-llama/Llama-3.1-8B"),
    # models/llama.py (MistralForCausalLM maps to it): 32 x 2 x 8 x 128 x 2 B.
    "mistral-7b-v0.1": (CONFIGS / "mistral-7b-v0.1.json", 32 * 2 * 8 * 128 * 2,
                        HF + "mistralai/Mistral-7B-v0.1"),
    # models/mixtral.py MixtralAttention: 32 x 2 x 8 x 128 x 2 B (experts hold no cache).
    "mixtral-8x7b": (CONFIGS / "mixtral-8x7b.json", 32 * 2 * 8 * 128 * 2,
                     HF + "mistralai/Mixtral-8x7B-v0.1"),
    # models/qwen2.py Qwen2Attention: 28 layers x 2 x 4 KV heads x (3584 / 28 = 128) x 2 B.
    "qwen2.5-7b": (CONFIGS / "qwen2.5-7b.json", 28 * 2 * 4 * 128 * 2, HF + "Qwen/Qwen2.5-7B"),
    # models/qwen2_moe.py Qwen2MoeAttention: head_dim = hidden_size / num_attention_heads =
    # 3584 / 28 = 128, num_key_value_heads 4 (GQA); the experts size no cache:
    # 28 x 2 x 4 x 128 x 2 B.
    "qwen2-57b-a14b": (CONFIGS / "qwen2-57b-a14b.json", 28 * 2 * 4 * 128 * 2,
                       HF + "Qwen/Qwen2-57B-A14B"),
    # models/qwen3.py Qwen3Attention (head_dim from config): 36 x 2 x 8 x 128 x 2 B.
    "qwen3-8b": (CONFIGS / "qwen3-8b.json", 36 * 2 * 8 * 128 * 2, HF + "Qwen/Qwen3-8B"),
    # models/qwen3_moe.py: 48 x 2 x 4 x 128 x 2 B.
    "qwen3-30b-a3b": (CONFIGS / "qwen3-30b-a3b.json", 48 * 2 * 4 * 128 * 2,
                      HF + "Qwen/Qwen3-30B-A3B"),
    # models/gemma.py GemmaAttention (head_dim 256 from config): 28 x 2 x 16 x 256 x 2 B.
    "gemma-7b": (CONFIGS / "gemma-7b.json", 28 * 2 * 16 * 256 * 2, HF + "google/gemma-7b"),
    # models/gemma2.py: 42 x 2 x 8 x 256 x 2 B (the sliding half is still one page a token).
    "gemma-2-9b": (CONFIGS / "gemma-2-9b.json", 42 * 2 * 8 * 256 * 2, HF + "google/gemma-2-9b"),
    # The Gemma2ForCausalLM row's golden: google/gemma-2-9b-it's published file (issue 26's
    # seventh verbatim pass), the same fields as gemma-2-9b.json but torch_dtype bfloat16:
    # models/gemma2.py Gemma2Attention, 42 x 2 x 8 x 256 x 2 B.
    "gemma-2-9b-it": (CONFIGS / "gemma-2-9b-it.json", 42 * 2 * 8 * 256 * 2,
                      HF + "google/gemma-2-9b-it"),
    # models/gemma3.py, text-only class; Gemma-3-27B's text config shrunk to 12 layers (same
    # 5 sliding : 1 global pattern, 16 KV heads, head_dim 128): 12 x 2 x 16 x 128 x 2 B.
    "gemma-3-27b-text": (ORACLE / "gemma-3-27b" / "config.json", 12 * 2 * 16 * 128 * 2,
                         HF + "google/gemma-3-27b-it"),
    # The Gemma3ForCausalLM row's golden (issue 26's seventh verbatim pass): a published
    # text-only checkpoint of the class, Creekside/gemma-3 (a third party's; Gemma-3-4B's text
    # shape). models/gemma3.py Gemma3Attention: every one of the 34 layers holds K and V, the 29
    # sliding ones (sliding_window 1024, every 6th layer global) one page a token too; 4 KV
    # heads of head_dim 256: 34 x 2 x 4 x 256 x 2 B.
    "gemma-3-4b-text-creekside": (CONFIGS / "gemma-3-4b-text-creekside.json",
                                  34 * 2 * 4 * 256 * 2, HF + "Creekside/gemma-3"),
    # models/gemma3_mm.py over gemma3.py: 62 x 2 x 16 x 128 x 2 B.
    "gemma-3-27b": (CONFIGS / "gemma-3-27b.json", 62 * 2 * 16 * 128 * 2,
                    HF + "google/gemma-3-27b-it"),
    # The Gemma3ForConditionalGeneration row's golden (issue 26's ninth verbatim pass): the
    # published config.json of mlx-community/gemma-3-4b-it-bf16 (an MLX bf16 re-release of
    # google/gemma-3-4b-it, no quantization block; 970 B as its Hub tree page states). Its
    # text_config names only hidden 2560, 34 layers and sliding_window 1024: transformers'
    # Gemma3TextConfig supplies num_key_value_heads 4, head_dim 256 and sliding_window_pattern 6
    # (every 6th layer global, 29 sliding). models/gemma3_mm.py over gemma3.py Gemma3Attention:
    # every layer holds K and V, a sliding one one page a token too: 34 x 2 x 4 x 256 x 2 B.
    "gemma-3-4b-it-bf16-mlx": (CONFIGS / "gemma-3-4b-it-bf16-mlx.json", 34 * 2 * 4 * 256 * 2,
                               HF + "mlx-community/gemma-3-4b-it-bf16"),
    # models/gemma3n.py: the last 15 of 35 layers reuse earlier layers' KV
    # (num_kv_shared_layers): 20 x 2 x 2 x 256 x 2 B.
    "gemma-3n-e4b": (CONFIGS / "gemma-3n-e4b.json", (35 - 15) * 2 * 2 * 256 * 2,
                     HF + "google/gemma-3n-E4B-it"),
    # The Gemma3nForConditionalGeneration row's golden (issue 26's ninth verbatim pass): a whole
    # published Gemma-3n-E2B-it config.json, unsloth's re-release by its `unsloth_fixed` flag, as
    # the checkpoint folder github.com/ernestlsy/3n-server gemma-3n-e2b-it/ holds it (commit
    # 0f49b40, 4,299 B). models/gemma3n.py Gemma3nAttention: 8 heads, 2 KV heads of head_dim
    # 256; the last num_kv_shared_layers 10 of 30 layers reuse layer 19's (full) or 18's
    # (sliding) KV (kv_sharing_target_layer_name, offset 1 / 2 before the first shared layer)
    # and allocate none: 20 x 2 x 2 x 256 x 2 B.
    "gemma-3n-e2b-it-3n-server": (CONFIGS / "gemma-3n-e2b-it-3n-server.json",
                                  (30 - 10) * 2 * 2 * 256 * 2, HF + "unsloth/gemma-3n-E2B-it"),
    # models/deepseek_v2.py MLA: 27 x (512 + 64) x 2 B.
    "deepseek-v2-lite": (CONFIGS / "deepseek-v2-lite.json", 27 * (512 + 64) * 2,
                         HF + "deepseek-ai/DeepSeek-V2-Lite"),
    # models/deepseek_v2.py (DeepseekV3ForCausalLM) MLA: 61 x (512 + 64) x 2 B.
    "deepseek-v3": (CONFIGS / "deepseek-v3.json", 61 * (512 + 64) * 2,
                    HF + "deepseek-ai/DeepSeek-V3"),
    # DeepseekV32: MLA latent plus the indexer's key cache per layer, index_head_dim 128 fp8
    # bytes + a 4-byte float32 scale per 128 (models/deepseek_v2.py Indexer,
    # DeepseekV32IndexerCache: head_dim + head_dim // quant_block_size * 4):
    # 61 x ((512 + 64) x 2 + 128 + 4).
    "deepseek-v3.2": (CONFIGS / "deepseek-v3.2.json", 61 * ((512 + 64) * 2 + 128 + 4),
                      HF + "deepseek-ai/DeepSeek-V3.2-Exp"),
    # GlmMoeDsaForCausalLM (GLM-5.1): on CUDA vLLM builds DeepSeek-V3.2's model for it
    # (models/deepseek_v32/__init__.py -> nvidia/model.py; attention.py DeepseekV32Indexer
    # k_cache: index_head_dim 128 + 128 // 128 x 4 = 132 uint8 per token, every layer, no
    # index_topk_freq / index_topk_pattern): 78 layers x ((512 + 64) x 2 + 132) = 78 x 1,284
    # = 100,152 B per token (the fp8 row, by GPU: tests/test_kv_auto_vllm_dsa.py).
    "glm-5.1": (CONFIGS / "glm-5.1.json", 78 * ((512 + 64) * 2 + 128 + 4),
                HF + "zai-org/GLM-5.1"),
    # models/minicpm3.py MLA: 62 x (256 + 32) x 2 B. The published file names no model_type
    # (remote code; read as minicpm3 by its architecture, kvplan.sources.hf_reader).
    "minicpm3-4b": (CONFIGS / "minicpm3-4b.json", 62 * (256 + 32) * 2,
                    HF + "openbmb/MiniCPM3-4B"),
    # The MiniCPM3ForCausalLM row's golden (issue 26's ninth verbatim pass): openbmb's own
    # published MiniCPM3-4B-GPTQ-Int4 file (2,918 B, 97 lines, as its Hub blame page at 4fc73a8
    # states), the 4B's fields with model_type minicpm3 and a GPTQ int4 quantization_config
    # (weights only; the cache is the model dtype's, float16 here, 2 B like bf16). The same
    # cache as above: 62 x (256 + 32) x 2 B.
    "minicpm3-4b-gptq-int4": (CONFIGS / "minicpm3-4b-gptq-int4.json", 62 * (256 + 32) * 2,
                              HF + "openbmb/MiniCPM3-4B-GPTQ-Int4"),
    # models/falcon.py, multi_query: 1 KV head of 4544 / 71 = 64: 32 x 2 x 1 x 64 x 2 B.
    "falcon-7b-instruct": (CONFIGS / "falcon-7b-instruct.json", 32 * 2 * 1 * 64 * 2,
                           HF + "tiiuae/falcon-7b-instruct"),
    # models/gpt2.py (MHA, 12 heads x 64 = 768): 12 x 2 x 768 x 2 B.
    "gpt2": (CONFIGS / "gpt2.json", 12 * 2 * 768 * 2, HF + "openai-community/gpt2"),
    # GPT-NeoX (Transformers backend in 0.32; MHA 16 x 64 = 1024): 24 x 2 x 1024 x 2 B.
    "pythia-410m": (CONFIGS / "pythia-410m.json", 24 * 2 * 1024 * 2,
                    HF + "EleutherAI/pythia-410m"),
    # models/opt.py (MHA 12 x 64 = 768): 12 x 2 x 768 x 2 B.
    "opt-125m": (CONFIGS / "opt-125m.json", 12 * 2 * 768 * 2, HF + "facebook/opt-125m"),
    # models/phi3.py (llama.py): 32 x 2 x 32 (MHA) x (3072 / 32 = 96) x 2 B.
    "phi-3-mini-4k": (CONFIGS / "phi-3-mini-4k.json", 32 * 2 * 32 * 96 * 2,
                      HF + "microsoft/Phi-3-mini-4k-instruct"),
    # models/granite.py: 40 x 2 x 8 x (2048 / 32 = 64) x 2 B.
    "granite-3.0-2b": (CONFIGS / "granite-3.0-2b.json", 40 * 2 * 8 * 64 * 2,
                       HF + "ibm-granite/granite-3.0-2b-base"),
    # models/nemotron_h.py: attention at the 6 '*' of hybrid_override_pattern (layers 7, 16,
    # 25, 34, 43, 52 of 62), 8 KV heads of head_dim 128: 6 x 2 x 8 x 128 x 2 B. The published
    # NVIDIA-Nemotron-Nano-12B-v2 file (no verbatim copy of the 9B-v2 one was found; that
    # partial file, nemotron-nano-9b-v2.json, stays for the tests that name it).
    "nemotron-nano-12b-v2": (CONFIGS / "nemotron-nano-12b-v2.json", 6 * 2 * 8 * 128 * 2,
                             HF + "nvidia/NVIDIA-Nemotron-Nano-12B-v2"),
    # models/granitemoehybrid.py: 4 "attention" of 40 layer_types (layers 5, 15, 25, 35), 8 KV
    # heads of hidden_size / num_attention_heads = 2048 / 32 = 64: 4 x 2 x 8 x 64 x 2 B. The
    # published base checkpoint's file (the instruct one, granite-4.0-h-micro.json, is rebuilt
    # and differs only in vocab_size).
    "granite-4.0-h-micro-base": (CONFIGS / "granite-4.0-h-micro-base.json", 4 * 2 * 8 * 64 * 2,
                                 HF + "ibm-granite/granite-4.0-h-micro-base"),
    # models/falcon_h1.py: attention beside Mamba2 in all 72 layers: 72 x 2 x 4 x 128 x 2 B.
    "falcon-h1-34b": (CONFIGS / "falcon-h1-34b.json", 72 * 2 * 4 * 128 * 2,
                      HF + "tiiuae/Falcon-H1-34B-Instruct"),
    # models/jamba.py: attention where i % attn_layer_period 8 == attn_layer_offset 4, i.e.
    # layers 4, 12, 20, 28 of 32; 8 KV heads of 4096 / 32 = 128: 4 x 2 x 8 x 128 x 2 B (float16 in
    # this file, 2 B as bf16). A third party's fine-tune of Jamba-v0.1 (the published file, issue
    # 26's sixth verbatim pass); AI21-Jamba-1.5-Mini's shape (jamba-mini.json) is the same.
    "jamba-v0.1-claude-chat": (CONFIGS / "jamba-v0.1-claude-chat.json", 4 * 2 * 8 * 128 * 2,
                               HF + "Norquinal/Jamba-v0.1-Claude-Chat"),
    # models/qwen3_next.py: full_attention_interval 4 -> 12 of 48: 12 x 2 x 2 x 256 x 2 B.
    "qwen3-next-80b-a3b": (CONFIGS / "qwen3-next-80b-a3b.json", 12 * 2 * 2 * 256 * 2,
                           HF + "Qwen/Qwen3-Next-80B-A3B-Instruct"),
    # models/qwen3_5.py: 8 full_attention of 32 layer_types: 8 x 2 x 4 x 256 x 2 B.
    "qwen3.5-9b": (CONFIGS / "qwen3.5-9b.json", 8 * 2 * 4 * 256 * 2, HF + "Qwen/Qwen3.5-9B"),
    # models/qwen3_5.py (MoE): 10 full_attention of 40: 10 x 2 x 2 x 256 x 2 B.
    "qwen3.6-35b-a3b": (CONFIGS / "qwen3.6-35b-a3b.json", 10 * 2 * 2 * 256 * 2,
                        HF + "Qwen/Qwen3.6-35B-A3B"),
    # models/kimi_linear.py: MLA in the 7 full_attn_layers: 7 x (512 + 64) x 2 B.
    "kimi-linear-48b-a3b": (CONFIGS / "kimi-linear-48b-a3b.json", 7 * (512 + 64) * 2,
                            HF + "moonshotai/Kimi-Linear-48B-A3B-Instruct"),
    # models/llama4.py: 48 x 2 x 8 x 128 x 2 B (chunked layers: one page a token too). The
    # row's golden is unsloth's re-upload of the Instruct checkpoint, a verbatim published
    # config.json (no_rope_layers written out as [1, 1, 1, 0] x 12, the list Llama4TextConfig
    # fills in for []); llama-4-scout.json, assembled for Meta's own file, is kept beside it.
    "llama-4-scout-unsloth": (CONFIGS / "llama-4-scout-unsloth.json", 48 * 2 * 8 * 128 * 2,
                              HF + "unsloth/Llama-4-Scout-17B-16E-Instruct"),
    "llama-4-scout": (CONFIGS / "llama-4-scout.json", 48 * 2 * 8 * 128 * 2,
                      HF + "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
    # models/lfm2.py: 6 full_attention of 16 layer_types (full_attn_idxs null), 8 KV heads of
    # hidden_size / num_attention_heads = 2048 / 32 = 64: 6 x 2 x 8 x 64 x 2 B (float16 here,
    # 2 B too). A third party's fine-tune of LiquidAI/LFM2.5-1.2B-Thinking, the one verbatim
    # Lfm2ForCausalLM file found (LFM2-1.2B's own, lfm2-1.2b.json, is a corrected copy).
    "lfm2.5-1.2b-distilled-claude-4.6": (
        CONFIGS / "lfm2.5-1.2b-distilled-claude-4.6.json", 6 * 2 * 8 * 64 * 2,
        HF + "FlameF0X/LFM2.5-1.2B-Distilled-Claude-4.6"),
    # models/gpt_oss.py: 24 x 2 x 8 x 64 x 2 B.
    "gpt-oss-20b": (CONFIGS / "gpt-oss-20b.json", 24 * 2 * 8 * 64 * 2,
                    HF + "openai/gpt-oss-20b"),
    # models/minimax_m2.py: 62 x 2 x 8 x 128 x 2 B.
    "minimax-m2": (CONFIGS / "minimax-m2.json", 62 * 2 * 8 * 128 * 2,
                   HF + "MiniMaxAI/MiniMax-M2"),
    # models/glm4_moe.py: 46 x 2 x 8 x 128 x 2 B (the MTP layer is not in num_hidden_layers).
    "glm-4.5-air": (CONFIGS / "glm-4.5-air.json", 46 * 2 * 8 * 128 * 2,
                    HF + "zai-org/GLM-4.5-Air"),
    # The same architecture rows, other real configs:
    # Kimi-K2 (DeepseekV3ForCausalLM, model_type kimi_k2), MLA: 61 x (512 + 64) x 2 B.
    "kimi-k2": (CONFIGS / "kimi-k2.json", 61 * (512 + 64) * 2, HF + "moonshotai/Kimi-K2-Instruct"),
    # Falcon-40B (new_decoder_architecture, n_head_kv 8, 8192 / 128 = 64): 60 x 2 x 8 x 64 x 2 B.
    "falcon-40b": (CONFIGS / "falcon-40b.json", 60 * 2 * 8 * 64 * 2, HF + "tiiuae/falcon-40b"),
    # Rows added with the support table (sources: tests/data/configs/SOURCES-attention.md).
    # PhiForCausalLM: vLLM 0.32 serves it with the Transformers backend (registry.py
    # _TRANSFORMERS_SUPPORTED_MODELS); transformers' PhiAttention: 32 KV heads (MHA) of
    # 2560 / 32 = 80: 32 x 2 x 32 x 80 x 2 B.
    "phi-2": (CONFIGS / "phi-2.json", 32 * 2 * 32 * 80 * 2, HF + "microsoft/phi-2"),
    # The PhiForCausalLM row's golden (issue 26's seventh verbatim pass): NingLab/eCeLLM-S, a
    # published fine-tune of microsoft/phi-2 (its file keeps phi-2's fields, auto_map and
    # float16): models/phi.py, 32 x 2 x 32 (MHA) x (2560 / 32 = 80) x 2 B.
    "phi-2-ecellm-s": (CONFIGS / "phi-2-ecellm-s.json", 32 * 2 * 32 * 80 * 2,
                       HF + "NingLab/eCeLLM-S"),
    # Starcoder2ForCausalLM (Transformers backend): 30 x 2 x 2 x (3072 / 24 = 128) x 2 B; every
    # layer slides over 4,096 tokens (one page a token all the same).
    "starcoder2-3b": (CONFIGS / "starcoder2-3b.json", 30 * 2 * 2 * 128 * 2,
                      HF + "bigcode/starcoder2-3b"),
    # models/qwen2_5_vl.py over qwen2.py (text_config): 28 x 2 x 4 x (3584 / 28 = 128) x 2 B.
    "qwen2.5-vl-7b": (CONFIGS / "qwen2.5-vl-7b.json", 28 * 2 * 4 * 128 * 2,
                      HF + "Qwen/Qwen2.5-VL-7B-Instruct"),
    # models/mistral3.py over llama.py (text_config, head_dim 128): 40 x 2 x 8 x 128 x 2 B.
    "mistral-small-3.1-24b": (CONFIGS / "mistral-small-3.1-24b.json", 40 * 2 * 8 * 128 * 2,
                              HF + "mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
    # models/olmo2.py: 32 x 2 x 32 (MHA) x 128 x 2 B.
    "olmo-2-1124-7b": (CONFIGS / "olmo-2-1124-7b.json", 32 * 2 * 32 * 128 * 2,
                       HF + "allenai/OLMo-2-1124-7B"),
    # models/commandr.py CohereAttention: 40 x 2 x 64 (MHA) x (8192 / 64 = 128) x 2 B.
    "command-r-v01": (CONFIGS / "command-r-v01.json", 40 * 2 * 64 * 128 * 2,
                      HF + "CohereLabs/c4ai-command-r-v01"),
    # SmolLM3ForCausalLM (Transformers backend): 36 x 2 x 4 x (2048 / 16 = 128) x 2 B; its NoPE
    # layers (no_rope_layers) change positions, not the cache.
    "smollm3-3b": (CONFIGS / "smollm3-3b.json", 36 * 2 * 4 * 128 * 2,
                   HF + "HuggingFaceTB/SmolLM3-3B"),
    # models/qwen3_vl.py over qwen3.py (text_config, head_dim 128): 36 x 2 x 8 x 128 x 2 B.
    "qwen3-vl-4b": (CONFIGS / "qwen3-vl-4b.json", 36 * 2 * 8 * 128 * 2,
                    HF + "Qwen/Qwen3-VL-4B-Thinking"),
    # Rows made exact with issue 26's readers: the vLLM-oracle configs themselves, SHRUNK (fewer
    # layers, same layer pattern) and REBUILT from the published files rather than downloaded
    # (zamba2-2.7b and gemma-4-31b are not published files at all: built from transformers'
    # defaults / a quoted geometry); provenance in tests/data/oracle/SOURCES-coverage.md. Each
    # equals vLLM 0.32 in its recorded oracle run; tests/test_config_coverage.py derives the
    # published layer counts by hand.
    # models/commandr.py CohereAttention (Cohere2): 8 layers (6 sliding over 4096 + 1 = 4097
    # tokens, 2 full) x 2 x 8 KV heads x 128 x 2 B (a sliding layer: one page a token too).
    "command-r7b": (ORACLE / "command-r7b" / "config.json", 8 * 2 * 8 * 128 * 2,
                    HF + "CohereLabs/c4ai-command-r7b-12-2024"),
    # models/chatglm.py GLMAttention: multi_query_group_num 2 KV heads of hidden_size /
    # num_attention_heads = 4096 / 32 = 128; 4 layers: 4 x 2 x 2 x 128 x 2 B.
    "glm-4-9b": (ORACLE / "glm-4-9b" / "config.json", 4 * 2 * 2 * 128 * 2,
                 HF + "THUDM/glm-4-9b-chat"),
    # models/exaone4.py Exaone4Attention: num_key_value_heads 8 of head_dim 64 (2048 / 32), every
    # layer full (layer_types all full_attention, sliding_window null): 30 x 2 x 8 x 64 x 2 B.
    # The published EXAONE-4.0-1.2B file (SOURCES-coverage.md); the 32B's sliding "LLLG" layout
    # is held to vLLM by the oracle case exaone-4.0-32b and tests/test_config_coverage.py.
    "exaone-4.0-1.2b": (CONFIGS / "exaone-4.0-1.2b.json", 30 * 2 * 8 * 64 * 2,
                        HF + "LGAI-EXAONE/EXAONE-4.0-1.2B"),
    # Olmo3ForCausalLM (Transformers backend, models/transformers/base.py; layer_types three
    # sliding to one full, window 4096): 12 layers x 2 x 12 (MHA) x (768 / 12 = 64) x 2 B. A
    # third party's Olmo 3 checkpoint, its file published whole (no allenai Olmo 3 file found);
    # the 7B's shape stays held by the oracle case olmo3-7b (tests/test_config_coverage.py).
    "olmo3-190m-zh-continue": (CONFIGS / "olmo3-190m-zh-continue.json", 12 * 2 * 12 * 64 * 2,
                               HF + "complexly/olmo3-190m-zh-continue"),
    # models/ernie45.py (LlamaForCausalLM): 8 layers x 2 x 2 KV heads x 128 x 2 B.
    "ernie-4.5-0.3b": (ORACLE / "ernie-4.5-0.3b" / "config.json", 8 * 2 * 2 * 128 * 2,
                       HF + "baidu/ERNIE-4.5-0.3B-PT"),
    # models/glm4.py Glm4Attention (no sliding window): 8 layers x 2 x 2 x 128 x 2 B.
    "glm-4-9b-0414": (ORACLE / "glm-4-9b-0414" / "config.json", 8 * 2 * 2 * 128 * 2,
                      HF + "THUDM/GLM-4-9B-0414"),
    # models/mamba.py (Mamba and FalconMamba) and models/mamba2.py: attention-free, nothing per
    # token; the per-request state is derived by hand in tests/test_config_coverage.py
    # (test_mamba_2_8b_pure_mamba1_state, test_falcon_mamba_7b,
    # test_mamba_codestral_pure_mamba2_state) and below (test_mamba_states_by_hand).
    "mamba-2.8b": (ORACLE / "mamba-2.8b" / "config.json", 0,
                   HF + "state-spaces/mamba-2.8b-hf"),
    "falcon-mamba-7b": (ORACLE / "falcon-mamba-7b" / "config.json", 0,
                        HF + "tiiuae/falcon-mamba-7b"),
    "mamba-codestral-7b": (ORACLE / "mamba-codestral-7b" / "config.json", 0,
                           HF + "mistralai/Mamba-Codestral-7B-v0.1"),
    # The Mamba2ForCausalLM row's golden (issue 26's seventh verbatim pass): Molbap/code2, Hugging
    # Face's published transformers conversion of Mamba-Codestral-7B (the same 64 Mamba-2 layers:
    # no attention, no per-token cache; its per-request state is the shrink's above, 16 x).
    "mamba-codestral-7b-hf-molbap": (CONFIGS / "mamba-codestral-7b-hf-molbap.json", 0,
                                     HF + "Molbap/code2"),
    # models/zamba2.py: one Attention per hybrid layer (shared weights, own KV), 32 KV heads of
    # 2 x 2560 / 32 = 160; 2 hybrid layers of 12: 2 x 2 x 32 x 160 x 2 B.
    "zamba2-2.7b": (ORACLE / "zamba2-2.7b" / "config.json", 2 * 2 * 32 * 160 * 2,
                    HF + "Zyphra/Zamba2-2.7B"),
    # models/gemma4.py: 12 layers, full at i % 6 == 5; 10 sliding x 2 x 16 x 256 x 2 B + 2
    # global (attention_k_eq_v: num_global_key_value_heads 4 of global_head_dim 512)
    # x 2 x 4 x 512 x 2 B.
    "gemma-4-31b": (ORACLE / "gemma-4-31b" / "config.json",
                    10 * 2 * 16 * 256 * 2 + 2 * 2 * 4 * 512 * 2, HF + "google/gemma-4-31B"),
    # GPTBigCode (Transformers backend in 0.32): GPTBigCodeConfig.__post_init__ sets
    # num_key_value_heads = 1 when multi_query (true here), head size 2048 / 16 = 128:
    # 24 x 2 x 1 x 128 x 2 B.
    "santacoder": (CONFIGS / "santacoder.json", 24 * 2 * 1 * 128 * 2,
                   HF + "bigcode/gpt_bigcode-santacoder"),
    # models/nemotron_nas.py DeciLMDecoderLayer: 49 of 80 block_configs have attention (31
    # no_op), each num_attention_heads 64 // n_heads_in_group 8 = 8 KV heads of 8192 / 64 = 128:
    # 49 x 2 x 8 x 128 x 2 B.
    "nemotron-super-49b": (CONFIGS / "nemotron-super-49b.json", 49 * 2 * 8 * 128 * 2,
                           HF + "nvidia/Llama-3_3-Nemotron-Super-49B-v1"),
    # Ultra: 64 of 162 blocks with attention, 128 // 16 = 8 KV heads of 16384 / 128 = 128:
    # 64 x 2 x 8 x 128 x 2 B.
    "nemotron-ultra-253b": (CONFIGS / "nemotron-ultra-253b.json", 64 * 2 * 8 * 128 * 2,
                            HF + "nvidia/Llama-3_1-Nemotron-Ultra-253B-v1"),
    # models/gpt_j.py GPTJAttention: 16 KV heads (one per query head) of 4096 / 16 = 256:
    # 28 x 2 x 16 x 256 x 2 B.
    "gpt-j-6b": (CONFIGS / "gpt-j-6b.json", 28 * 2 * 16 * 256 * 2, HF + "EleutherAI/gpt-j-6b"),
    # models/olmoe.py OlmoeAttention: num_key_value_heads 16 of 2048 / 16 = 128:
    # 16 x 2 x 16 x 128 x 2 B (the 64 experts hold no cache). The SFT checkpoint of
    # OLMoE-1B-7B-0924: the same class and shape, its file published whole.
    "olmoe-1b-7b-0924-sft": (CONFIGS / "olmoe-1b-7b-0924-sft.json", 16 * 2 * 16 * 128 * 2,
                             HF + "allenai/OLMoE-1B-7B-0924-SFT"),
    # models/stablelm.py StablelmAttention: num_key_value_heads 32 of 2048 / 32 = 64:
    # 24 x 2 x 32 x 64 x 2 B (partial_rotary_factor changes positions, not the cache).
    "stablelm-2-zephyr-1.6b": (CONFIGS / "stablelm-2-zephyr-1.6b.json", 24 * 2 * 32 * 64 * 2,
                               HF + "stabilityai/stablelm-2-zephyr-1_6b"),
    # models/apertus.py ApertusAttention: 8 KV heads of 4096 / 32 = 128: 32 x 2 x 8 x 128 x 2 B.
    "apertus-8b": (CONFIGS / "apertus-8b.json", 32 * 2 * 8 * 128 * 2,
                   HF + "swiss-ai/Apertus-8B-Instruct-2509"),
    # models/granitemoe.py GraniteMoeAttention: 8 KV heads of 1536 / 24 = 64 (the base
    # checkpoint's file; the Instruct one differs only in vocab_size): 32 x 2 x 8 x 64 x 2 B.
    "granite-3.1-3b-a800m": (CONFIGS / "granite-3.1-3b-a800m.json", 32 * 2 * 8 * 64 * 2,
                             HF + "ibm-granite/granite-3.1-3b-a800m-base"),
    # SeedOssForCausalLM (Transformers backend): 8 KV heads of head_dim 128:
    # 64 x 2 x 8 x 128 x 2 B.
    "seed-oss-36b": (CONFIGS / "seed-oss-36b.json", 64 * 2 * 8 * 128 * 2,
                     HF + "ByteDance-Seed/Seed-OSS-36B-Instruct"),
    # The row's golden since the seventh verbatim pass: the published config.json of
    # darkc0de/4.3test2 (a third party's duplicate of a Hermes-4.3-36B re-save, a fine-tune of
    # Seed-OSS-36B-Base), SeedOssForCausalLM with the same cache fields: head_dim 128 explicit,
    # 8 KV heads, 64 layers (registry.py maps it to the Transformers backend,
    # models/transformers; transformers' SeedOssAttention):
    # 64 x 2 x 8 x 128 x 2 B.
    "hermes-4.3-36b-4.3test2": (CONFIGS / "hermes-4.3-36b-4.3test2.json", 64 * 2 * 8 * 128 * 2,
                                HF + "darkc0de/4.3test2"),
    # models/ernie45_moe.py Ernie4_5_MoeAttention: 4 KV heads of head_dim 128 (the file, like the
    # published one, has no head_dim: `head_dim or hidden_size // num_heads` = 2560 // 20):
    # 28 x 2 x 4 x 128 x 2 B.
    "ernie-4.5-21b-a3b": (CONFIGS / "ernie-4.5-21b-a3b.json", 28 * 2 * 4 * 128 * 2,
                          HF + "baidu/ERNIE-4.5-21B-A3B-PT"),
    # models/lfm2_moe.py: 6 full_attention of 24 layer_types, num_key_value_heads 8 of
    # 2048 / 32 = 64 (head_dim is never read): 6 x 2 x 8 x 64 x 2 B.
    "lfm2-8b-a1b": (CONFIGS / "lfm2-8b-a1b.json", 6 * 2 * 8 * 64 * 2, HF + "LiquidAI/LFM2-8B-A1B"),
    # OlmoForCausalLM (Transformers backend): 16 KV heads of 2048 / 16 = 128:
    # 16 x 2 x 16 x 128 x 2 B.
    "olmo-1b-hf": (CONFIGS / "olmo-1b-hf.json", 16 * 2 * 16 * 128 * 2, HF + "allenai/OLMo-1B-hf"),
    # HunYuanDenseV1ForCausalLM (Transformers backend, models/transformers/base.py over
    # transformers' modeling_hunyuan_v1_dense.py): tencent/Hunyuan-7B-Instruct's published file,
    # num_key_value_heads 8 of head_dim 128, no cross-layer sharing in transformers'
    # HunYuanDenseV1 (use_cla false here anyway): 32 x 2 x 8 x 128 x 2 B.
    "hunyuan-7b-instruct": (CONFIGS / "hunyuan-7b-instruct.json", 32 * 2 * 8 * 128 * 2,
                            HF + "tencent/Hunyuan-7B-Instruct"),
    # models/internlm2.py InternLM2Attention: 8 KV heads of 2048 / 16 = 128:
    # 24 x 2 x 8 x 128 x 2 B.
    "internlm2-chat-1.8b": (CONFIGS / "internlm2-chat-1.8b.json", 24 * 2 * 8 * 128 * 2,
                            HF + "internlm/internlm2-chat-1_8b"),
    # The InternLM2ForCausalLM row's golden (issue 26's seventh verbatim pass): InternLM's own
    # published internlm2-chat-7b-sft file. models/internlm2.py InternLM2Attention: 8 KV heads
    # of 4096 / 32 = 128: 32 x 2 x 8 x 128 x 2 B.
    "internlm2-chat-7b-sft": (CONFIGS / "internlm2-chat-7b-sft.json", 32 * 2 * 8 * 128 * 2,
                              HF + "internlm/internlm2-chat-7b-sft"),
    # models/exaone.py ExaoneBlockAttention: 32 layers (num_layers), 8 KV heads of
    # 4096 / 32 = 128: 32 x 2 x 8 x 128 x 2 B.
    "exaone-3.0-7.8b": (CONFIGS / "exaone-3.0-7.8b.json", 32 * 2 * 8 * 128 * 2,
                        HF + "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct"),
}
# The text-only rows of kvplan.sources.hf_text's family table (tests/test_support_text.py).
GOLDEN.update(TEXT_GOLDEN)
# Rows made exact in tests/test_support_hybrid.py (hybrids and the rows beside them).
GOLDEN.update(HYBRID_GOLDEN)
# Multimodal wrappers' golden configs live in their own file (tests/test_support_mm.py).
GOLDEN.update(GOLDEN_MM)
# Rows made exact once a published config was found (tests/test_support_newrows.py).
GOLDEN.update(GOLDEN_NEW)
# Rows made exact by reading shapes per layer type (tests/test_support_layer_shapes.py).
GOLDEN.update(GOLDEN_SHAPES)
# Rows made exact by reading per-layer windows from a list (tests/test_support_layer_windows.py).
GOLDEN.update(GOLDEN_WINDOWS)
# LongCat-Flash: two MLA attentions per decoder layer (tests/test_longcat.py).
GOLDEN.update(GOLDEN_LONGCAT)
# DeepSeek-V4: no whole bytes per token (None); its pages by hand in tests/test_dsv4.py.
GOLDEN.update(GOLDEN_DSV4)  # type: ignore[arg-type]
# Golden configs that are not an exact row's own (other configs of an exact architecture).
EXTRA_GOLDEN = ("kimi-k2", "falcon-40b", "nemotron-ultra-253b", "llama-4-scout", "gemma-7b",
                "gemma-2-9b", "gemma-3-27b-text", "internlm2-chat-1.8b", "deepseek-moe-16b",
                "mamba-codestral-7b", "phi-2", "llama-7b-hf-decapoda", "seed-oss-36b",
                "gemma-3-27b", "gemma-3n-e4b", "minicpm3-4b")

TABLE = support_table()
EXACT_ROWS = [row for row in TABLE.values() if row.status == EXACT]
REFUSED_ROWS = [row for row in TABLE.values() if row.status != EXACT]


def test_every_registry_architecture_has_one_entry() -> None:
    registry = set(vllm_registry()["architectures"])
    assert len(registry) > 300  # vLLM 0.34's registry: 426 architectures
    assert sorted(registry - set(TABLE)) == []  # no architecture left without a status
    # no entry for an architecture vLLM lacks, but those an earlier registry listed (their row
    # answers for the releases that served them)
    assert sorted(set(TABLE) - registry) == sorted(
        name for name, row in TABLE.items() if row.removed_after)


def test_entries_are_well_formed() -> None:
    for row in TABLE.values():
        assert row.status in STATUSES, row
        if row.status == EXACT:
            assert row.golden in GOLDEN and row.reason is None, row
            assert row.golden_config in GOLDEN_CONFIG_KINDS, row
        else:
            assert row.reason and "\n" not in row.reason and row.golden is None, row
            assert row.golden_config is None, row
        # What vLLM refuses to build under an exact architecture (blind check batch 4): a field
        # or a config class, each with a one-line reason; a refused row's reason covers all.
        for _, why in row.refused_with + row.refused_model_types:
            assert row.status == EXACT and why and "\n" not in why, row
        if row.oracle is not None:
            assert (ORACLE / row.oracle / "results.json").is_file(), row


def test_golden_config_kinds_are_described_once() -> None:
    # support.json describes each kind of golden config; the code's list is the same, in order.
    assert tuple(golden_config_kinds()) == GOLDEN_CONFIG_KINDS


def test_pooling_groups_are_not_decoders() -> None:
    for row in TABLE.values():
        if row.category in ("embedding", "late-interaction", "reward", "token-classification",
                            "cross-encoder"):
            assert row.status == NOT_A_DECODER, row


@pytest.mark.parametrize("golden", sorted(GOLDEN))
def test_golden_configs_equal_the_hand_derived_bytes(golden: str) -> None:
    path, token_bytes, _url = GOLDEN[golden]
    spec, _ = load_config(path)
    assert _kv_size(spec) == token_bytes
    if golden in GOLDEN_SHAPES or golden in GOLDEN_WINDOWS:
        # Shapes or windows read per layer (tests/test_support_layer_shapes.py,
        # tests/test_support_layer_windows.py): read whole, nothing assumed.
        assert spec.exact


# The rows of the multimodal wrappers (tests/test_support_mm.py), of the published configs found
# later (tests/test_support_newrows.py) and of the per-layer-type shapes
# (tests/test_support_layer_shapes.py): each is exact with a vLLM-oracle case whose shrunk copy
# (fewer layers, a wrapper's tower small) keeps every field the KV cache reads, but NO_ORACLE's
# goldens (vLLM's CPU build stops on them).
ORACLE_CASE_GOLDEN = sorted({*GOLDEN_MM, *GOLDEN_NEW, *GOLDEN_SHAPES})


@pytest.mark.parametrize("golden", ORACLE_CASE_GOLDEN)
def test_rows_are_exact_with_an_oracle_case(golden: str) -> None:
    architecture = json.loads(GOLDEN[golden][0].read_text())["architectures"][0]
    row = TABLE[architecture]
    assert row.status == EXACT and row.golden == golden
    if golden in NO_ORACLE:
        assert row.oracle is None
        return
    assert row.oracle is not None and (ORACLE / row.oracle / "results.json").is_file()
    shrunk = json.loads((ORACLE / row.oracle / "config.json").read_text())
    assert shrunk["architectures"] == [architecture]


def _kv_size(spec) -> int | None:
    """Bytes per token at bf16 over one rank's layers; None where the caches have none
    (DeepSeek-V4's compressed rows: tests/test_dsv4.py sizes their pages by hand)."""
    caches = rank_caches(spec, kv_dtype="bf16")
    return caches.bytes_per_token if caches.per_token else None


def test_every_golden_config_backs_an_exact_row() -> None:
    # Each exact row names a golden config of its own architecture, and no golden config is idle.
    for row in EXACT_ROWS:
        config = json.loads(GOLDEN[row.golden][0].read_text())
        assert row.architecture in config["architectures"], row
    used = {row.golden for row in EXACT_ROWS} | set(EXTRA_GOLDEN)
    assert used == set(GOLDEN)
    for name in EXTRA_GOLDEN:
        names = json.loads(GOLDEN[name][0].read_text())["architectures"]
        assert TABLE[names[0]].status == EXACT


@pytest.mark.parametrize("row", EXACT_ROWS, ids=lambda row: row.architecture)
def test_exact_rows_are_read_by_name_under_every_model_type(row, tmp_path: Path) -> None:
    # An exact row's golden config reads with nothing assumed about the cache or the weights'
    # layout (only weight fields the file leaves out may be), and each other model_type the row
    # lists reads it the same: phi, olmo2 and starcoder2 once went through the unknown-type
    # path (exact false, a Llama-style weight guess), gpt-sw3 (GPT2Config) and shieldgemma2
    # (Gemma-3's layout) still did.
    path = GOLDEN[row.golden][0]
    config = json.loads(path.read_text())
    spec, _ = load_config(path)
    assert "model_type" not in {a.field for a in spec.assumptions}, row
    token_bytes = _kv_size(spec)
    for model_type in set(row.model_types) - {config.get("model_type")}:
        other = tmp_path / model_type
        other.mkdir()
        (other / "config.json").write_text(json.dumps({**config, "model_type": model_type}))
        spec_as, _ = load_config(other / "config.json")
        assert spec_as.exact == spec.exact, (row.architecture, model_type)
        assert _kv_size(spec_as) == token_bytes


def test_golden_layer_counts_are_the_configs() -> None:
    # The derivations above count attention layers by hand; hold the counts to the files.
    def text(name: str) -> dict:
        data = json.loads((CONFIGS / f"{name}.json").read_text())
        return data.get("text_config", data)

    assert text("nemotron-nano-12b-v2")["hybrid_override_pattern"].count("*") == 6
    assert text("granite-4.0-h-micro-base")["layer_types"].count("attention") == 4
    assert text("qwen3.5-9b")["layer_types"].count("full_attention") == 8
    assert text("qwen3.6-35b-a3b")["layer_types"].count("full_attention") == 10
    assert len(text("kimi-linear-48b-a3b")["linear_attn_config"]["full_attn_layers"]) == 7
    assert len(text("lfm2-1.2b")["full_attn_idxs"]) == 6
    assert text("lfm2.5-1.2b-distilled-claude-4.6")["layer_types"].count("full_attention") == 6
    jamba = text("jamba-mini")
    assert sum(i % jamba["attn_layer_period"] == jamba["attn_layer_offset"]
               for i in range(jamba["num_hidden_layers"])) == 4


def test_gemma3_mlx_bf16_layer_pattern_by_hand() -> None:
    # mlx-community/gemma-3-4b-it-bf16's text_config states no sliding_window_pattern nor
    # layer_types: Gemma3TextConfig's default 6 makes layer i global where (i + 1) % 6 == 0
    # (layers 5, 11, 17, 23, 29 of 34), the other 29 slide over its sliding_window 1024
    # (models/gemma3.py: Attention per_layer_sliding_window for sliding_attention only).
    spec, _ = load_config(CONFIGS / "gemma-3-4b-it-bf16-mlx.json")
    assert spec.layer_windows == tuple(None if (i + 1) % 6 == 0 else 1024 for i in range(34))
    assert spec.exact and not spec.assumptions


def test_gemma3n_e2b_layers_by_hand() -> None:
    # The published E2B file: 30 layer_types, (4 sliding + 1 full) x 6; the last 10 layers
    # (num_kv_shared_layers) hold no KV of their own, so 20 layers do: 16 sliding over 512
    # tokens and 4 full (models/gemma3n.py; vLLM's sliding spec pages a sliding layer per token
    # all the same).
    config = json.loads((CONFIGS / "gemma-3n-e2b-it-3n-server.json").read_text())["text_config"]
    assert config["layer_types"] == (["sliding_attention"] * 4 + ["full_attention"]) * 6
    spec, _ = load_config(CONFIGS / "gemma-3n-e2b-it-3n-server.json")
    assert (spec.num_hidden_layers, spec.num_kv_shared_layers) == (30, 10)
    own = spec.layer_windows[:20]
    assert (own.count(512), own.count(None)) == (16, 4)


def test_minicpm3_gptq_file_is_served_decompressed_by_hand() -> None:
    # openbmb/MiniCPM3-4B-GPTQ-Int4 states head_dim 96 and v_head_dim 64 (the rebuilt 4B file
    # leaves v_head_dim to hidden / heads = 2560 / 40 = 64). vLLM's models/minicpm3.py caches the
    # up-projected heads through the plain Attention layer: 40 KV heads of qk_nope 64 + qk_rope 32
    # = 96 for K and V (V padded from 64): 62 x 40 x (96 + 96) x 2 B = 952,320 B a token; GPTQ
    # quantizes the weights only (tests/test_cache_golden.py holds the same for the 4B file).
    from kvplan.capacity.plan import plan_capacity
    from kvplan.engines.base import PlanInputs

    spec, warnings = load_config(CONFIGS / "minicpm3-4b-gptq-int4.json")
    assert spec.attention.v_head_dim == 64 and not any("v_head_dim" in w for w in warnings)
    assert any("gptq" in w for w in warnings)
    plan = plan_capacity(spec, PlanInputs(context=8192, kv_budget_bytes=1 << 30))
    assert plan.per_gpu_bytes_per_token == 62 * 40 * (96 + 96) * 2


def test_lfm2_state_by_hand() -> None:
    # models/lfm2.py ShortConv: 10 conv layers x (conv_L_cache 3 - 1) x 2048 channels x 2 B
    # (conv_dim 2048; bfloat16 in lfm2-1.2b.json, float16 in the golden, 2 B either way).
    for name in ("lfm2-1.2b", "lfm2.5-1.2b-distilled-claude-4.6"):
        spec, _ = load_config(CONFIGS / f"{name}.json")
        assert rank_caches(spec, kv_dtype="bf16").state_bytes == 10 * (3 - 1) * 2048 * 2


def test_lfm2_moe_state_by_hand() -> None:
    # models/lfm2_moe.py get_mamba_state_shape_from_config: short_conv_state_shape with
    # intermediate_size = hidden_size; 18 conv layers x (conv_L_cache 3 - 1) x 2048 x 2 B.
    spec, _ = load_config(CONFIGS / "lfm2-8b-a1b.json")
    assert rank_caches(spec, kv_dtype="bf16").state_bytes == 18 * (3 - 1) * 2048 * 2


def test_nemotron_nano_12b_v2_state_by_hand() -> None:
    # The NemotronH golden's per-request state: its 28 'M' layers are Mamba-2 (models/
    # nemotron_h.py, mamba_utils.py mamba2_state_shape): conv (conv_kernel 4 - 1,
    # mamba_num_heads 128 x mamba_head_dim 80 + 2 x n_groups 8 x ssm_state_size 128) at the
    # model's 2 B, ssm (128, 80, 128) at float32 (models/config.py NemotronHForCausalLMConfig
    # DEFAULT_MAMBA_SSM_CACHE_DTYPE, the file naming no mamba_ssm_cache_dtype).
    spec, _ = load_config(CONFIGS / "nemotron-nano-12b-v2.json")
    assert rank_caches(spec, kv_dtype="bf16").state_bytes == 28 * (
        3 * (128 * 80 + 2 * 8 * 128) * 2 + 128 * 80 * 128 * 4)


def test_mamba_states_by_hand() -> None:
    # The attention-free golden configs hold their state per request, not per token. At bf16
    # (vLLM 0.32 on a GPU, --mamba-ssm-cache-dtype auto: the model dtype) conv and SSM state
    # are 2 B an element; the CPU platform's float32 SSM is test_config_coverage's.
    # mamba.py mamba1_state_shape: conv (conv_kernel - 1, intermediate), ssm (intermediate,
    # state_size); mamba2.py mamba2_state_shape: conv
    # (conv_kernel - 1, intermediate + 2 x n_groups x state), ssm (heads, head_dim, state).
    def state(name: str) -> int:
        spec, _ = load_config(GOLDEN[name][0])
        return rank_caches(spec, kv_dtype="bf16").state_bytes

    per_layer = {name: state(name) // 4 for name in ("mamba-2.8b", "falcon-mamba-7b",
                                                     "mamba-codestral-7b")}
    # The published file the Mamba2 row now rests on: 64 such layers.
    assert state("mamba-codestral-7b-hf-molbap") == 64 * per_layer["mamba-codestral-7b"]
    assert per_layer == {"mamba-2.8b": (3 * 5120 + 5120 * 16) * 2,
                         "falcon-mamba-7b": (3 * 8192 + 8192 * 16) * 2,
                         "mamba-codestral-7b": (3 * (8192 + 2 * 8 * 128) + 128 * 64 * 128) * 2}


def test_nemotron_nas_block_configs_by_hand(tmp_path: Path) -> None:
    # The published Super-49B blocks: 31 no_op attention layers hold no cache and 0 ffn no_op;
    # Ultra-253B: 98 no_op attention and 81 no_op ffn (layers with neither are empty).
    def counts(name: str) -> tuple[int, int]:
        spec, _ = load_config(CONFIGS / f"{name}.json")
        n = spec.num_hidden_layers
        return (sum(spec.has_attention(i) for i in range(n)),
                sum(spec.has_mlp(i) for i in range(n)))

    assert counts("nemotron-super-49b") == (49, 80)
    assert counts("nemotron-ultra-253b") == (64, 162 - 81)
    # KV heads varying by block (n_heads_in_group 8 and 16 of 64 heads: 8 and 4 KV heads):
    # each layer its own, models/nemotron_nas.py `num_attention_heads // n_heads_in_group`.
    config = json.loads((CONFIGS / "nemotron-super-49b.json").read_text())
    config["block_configs"][1]["attention"]["n_heads_in_group"] = 16
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == (
        48 * 2 * 8 * 128 * 2 + 1 * 2 * 4 * 128 * 2)
    # A block vLLM's nemotron_nas.py would build as plain attention although it says otherwise
    # (replace_with_linear): refused, one line.
    config["block_configs"][2]["attention"]["replace_with_linear"] = True
    line = estimate_refusal(tmp_path, config)
    assert "block_configs[2].attention.replace_with_linear" in line


@pytest.mark.parametrize(("golden", "published_b"), [
    # Parameter counts in billions as the model cards and names publish them: the weights read
    # from the same configs (MLP widths per block for Nemotron-NAS, moe_* fields for ERNIE).
    ("gpt-j-6b", 6.05), ("olmoe-1b-7b-0924-sft", 6.9), ("stablelm-2-zephyr-1.6b", 1.64),
    ("apertus-8b", 8.05), ("granite-3.1-3b-a800m", 3.3), ("seed-oss-36b", 36.15),
    ("nemotron-super-49b", 49.9), ("nemotron-ultra-253b", 253.4), ("ernie-4.5-21b-a3b", 21.8),
    ("lfm2-8b-a1b", 8.3), ("olmo-1b-hf", 1.18), ("exaone-3.0-7.8b", 7.8),
])
def test_new_golden_configs_weigh_their_published_size(golden: str, published_b: float) -> None:
    from kvplan.weights.params import count_params

    spec, _ = load_config(GOLDEN[golden][0])
    assert abs(count_params(spec).total / 1e9 - published_b) / published_b < 0.02


def test_gpt_bigcode_without_multi_query_is_mha(tmp_path: Path) -> None:
    # GPTBigCodeConfig: num_key_value_heads = n_head when multi_query is false.
    config = json.loads((CONFIGS / "santacoder.json").read_text())
    config["multi_query"] = False
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec, _ = load_config(path)
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 24 * 2 * 16 * 128 * 2


def _with_architecture(architecture: str, tmp_path: Path) -> Path:
    # A real config (Llama-3.1-8B) that names another architecture, as a fine-tune would.
    config = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    config["architectures"] = [architecture]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize("row", REFUSED_ROWS, ids=[r.architecture for r in REFUSED_ROWS])
def test_refused_rows_are_refused_with_their_reason(row, tmp_path: Path) -> None:
    path = _with_architecture(row.architecture, tmp_path)
    result = CliRunner().invoke(app, ["estimate", str(path), "--context", "8192"])
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert row.architecture in line and row.reason in line
    assert ("not a decoder" if row.status == NOT_A_DECODER else "refused") in line


def test_stored_configs_follow_the_table() -> None:
    # Every config.json kept in tests/data whose architecture the registry lists: an exact row
    # loads; any other is refused with its row's reason (santacoder.json: GPTBigCode).
    refused = []
    for path in sorted([*CONFIGS.glob("*.json"), *(CONFIGS / "refused").glob("*.json"),
                        *ORACLE.glob("*/config.json")]):
        names = json.loads(path.read_text()).get("architectures") or []
        rows = [TABLE[n] for n in names if n in TABLE]
        if not rows:
            continue
        if rows[0].status == EXACT:
            load_config(path)
            continue
        result = CliRunner().invoke(app, ["estimate", str(path), "--context", "2048"])
        assert result.exit_code == 2 and rows[0].reason in result.stderr, path
        refused.append(path.name)
    # santacoder.json (GPTBigCode) was the refused example until multi_query was read.
    assert "santacoder.json" not in refused


def test_statuses_count() -> None:
    counts = {s: sum(r.status == s for r in TABLE.values()) for s in STATUSES}
    assert counts[EXACT] == len(EXACT_ROWS) >= 30
    assert counts[REFUSED] + counts[NOT_A_DECODER] == len(REFUSED_ROWS)


def test_models_md_is_current() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "tests.benches.models_table"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    assert out == (root / "examples" / "models.md").read_text()


def test_models_command_filters_and_formats() -> None:
    runner = CliRunner()
    exact = runner.invoke(app, ["models", "--status", "exact", "--format", "json"])
    assert exact.exit_code == 0, exact.output
    rows = json.loads(exact.stdout)
    assert {r["architecture"] for r in rows} == {r.architecture for r in EXACT_ROWS}
    assert all(r["golden"] in GOLDEN and r["reason"] is None for r in rows)
    found = runner.invoke(app, ["models", "cohere2", "--status", "refused", "--format", "json"])
    names = {r["architecture"] for r in json.loads(found.stdout)}
    assert "Cohere2VisionForConditionalGeneration" in names and "Cohere2ForCausalLM" not in names
    assert names and all("cohere2" in n.lower() or "cohere2" in str(
        r) for n, r in zip(names, json.loads(found.stdout), strict=True))
    pooling = runner.invoke(app, ["models", "--status", "not-a-decoder", "--format", "csv"])
    assert pooling.exit_code == 0 and "BertModel" in pooling.stdout
    table = runner.invoke(app, ["models", "Qwen3ForCausalLM"], env={"COLUMNS": "80"})
    assert table.exit_code == 0
    assert all(len(line) <= 80 for line in table.stdout.splitlines())
    nothing = runner.invoke(app, ["models", "no-such-architecture", "--format", "json"])
    assert nothing.exit_code == 0 and json.loads(nothing.stdout) == []
    bad = runner.invoke(app, ["models", "--status", "maybe"])
    assert bad.exit_code == 2 and len(bad.stderr.splitlines()) == 1


def test_models_command_shows_an_exact_rows_refusals() -> None:
    # ChatGLMModel is exact, but a config of it stating vision_config is refused (vLLM 0.32's
    # models/chatglm.py raises for it): `kvplan models` says so in JSON and in the table.
    runner = CliRunner()
    out = runner.invoke(app, ["models", "ChatGLMModel", "--format", "json"])
    assert out.exit_code == 0, out.output
    (row,) = [r for r in json.loads(out.stdout) if r["architecture"] == "ChatGLMModel"]
    assert row["status"] == "exact"
    assert [w["when"] for w in row["refused_where"]] == ["vision_config is stated"]
    assert "GLM4VForCausalLM" in row["refused_where"][0]["reason"]
    qwen = runner.invoke(app, ["models", "Qwen3_5ForConditionalGeneration", "--format", "json"])
    (q,) = [r for r in json.loads(qwen.stdout)
            if r["architecture"] == "Qwen3_5ForConditionalGeneration"]
    assert [w["when"] for w in q["refused_where"]] == ["model_type is qwen3_5_text"]
    table = runner.invoke(app, ["models", "ChatGLMModel", "--format", "markdown"])
    assert "refused where vision_config is stated" in table.stdout


@pytest.mark.parametrize("page", ["README.md", "examples/overview.md"])
def test_readme_counts_are_the_tables(page: str) -> None:
    import re

    text = " ".join((Path(__file__).resolve().parent.parent / page).read_text().split())
    found = re.search(r"(\d+) of (\d+) are \*exact\*.*?(\d+) are \*refused\*.*?(\d+) are "
                      r"pooling models", text)
    assert found, "README: the 'Which models' counts"
    counts = {s: sum(r.status == s for r in TABLE.values()) for s in STATUSES}
    assert tuple(map(int, found.groups())) == (counts[EXACT], len(TABLE), counts[REFUSED],
                                               counts[NOT_A_DECODER])
    verbatim = re.search(r"(\d+) of them verbatim copies of published files", text)
    assert verbatim, "README: the count of verbatim golden configs"
    assert int(verbatim.group(1)) == sum(r.golden_config == "verbatim" for r in TABLE.values())
