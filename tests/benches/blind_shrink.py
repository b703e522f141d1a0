"""Shrink the frozen blind configs (tests/data/blind26/real/) for vLLM's CPU build (issue 26's
blind check).

    python tests/benches/blind_shrink.py ID ...   # tests/data/blind26/shrunk/<id>/config.json

What changes: fewer layers with the same layer pattern (per-layer lists and pattern strings cut
to whole periods), a 4,096-token vocabulary, small MLPs and expert counts, and no weight
quantization (the CPU build runs none of these checkpoints' schemes; quantization_config or
compressed-tensors' older compression_config); a `kv_cache_scheme` /
`kv_cache_quant_algo` that sets the KV dtype is not kept, so such a case is compared at the
model dtype and recorded as such. Every field the KV cache depends on (heads, head sizes,
windows, patterns, chunking, latent ranks, state sizes, sharing) is kept."""

from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path
from typing import Any

BLIND = Path(__file__).resolve().parents[1] / "data" / "blind26"
LAYER_KEYS = ("num_hidden_layers", "num_layers", "n_layer")
NESTED = ("text_config", "llm_config", "language_config")
# Language models two levels down (Qwen2.5-Omni's thinker_config.text_config).
NESTED2 = (("thinker_config", "text_config"),)
SMALL = {"intermediate_size": 512, "moe_intermediate_size": 256,
         "shared_expert_intermediate_size": 256, "ffn_hidden_size": 512, "n_inner": 512}
# Strings that are no layer pattern, whatever their length (a 24-character _name_or_path is not a
# pattern of a 24-layer model).
NOT_PER_LAYER = ("architectures", "model_type", "torch_dtype", "dtype", "transformers_version")
EXPERT_KEYS = ("num_experts", "n_routed_experts", "num_local_experts")
# Layer counts chosen by hand where a period is not visible in a list (implicit patterns).
LAYERS = {"command-a-03-2025": 8, "gemma-2-2b": 4, "gemma-2-27b-it": 4,
          "llama-4-maverick-instruct": 8, "deepseek-r1": 5, "qwen3-coder-next-base": 8,
          "mimo-7b-base": 4, "starcoder2-15b": 4, "qwen3-next-80b-a3b-instruct-fp8": 8,
          "llama-4-scout-instruct": 8,
          "llama-4-scout-instruct-aic-dd7f8dc": 8, "llama-4-maverick-instruct-unsloth": 8,
          # Jamba's attention layers are implicit (i % attn_layer_period == attn_layer_offset, 8 and
          # 4): 4 layers would hold none. ai21-jamba2-mini-mlx-fp16 ran at 4 before this line
          # (no attention layer; kvplan refuses that copy since), the other two keep layer 4.
          "jamba-small-v1-oxxocodes": 8, "jamba-v0.1-models123": 8,
          # Blind batch 18 (sizefix60): Llama-4's chunked / NoPE pattern (every 4th layer global)
          # and Maverick's interleaved MoE need whole periods: 8 layers, as its earlier copies.
          "llama-4-maverick-aic-64c5ddb": 8, "llama-4-scout-aic-54cb8c6": 8,
          "llama-4-scout-ktransformers-flat": 8, "llama-4-maverick-fp8-ktransformers": 8,
          # Blind batch 19 (sizefix61): one more aiconfigurator Maverick revision, as the others.
          "llama-4-maverick-aic-2b94696": 8}
# Overrides applied after the generic pass (KV sharing needs whole groups at the end).
OVERRIDES: dict[str, dict[str, Any]] = {
    "gemma-4-e2b-it": {"text_config": {"num_hidden_layers": 10, "num_kv_shared_layers": 5}},
    "gemma-4-e4b-it": {"text_config": {"num_hidden_layers": 12, "num_kv_shared_layers": 6}},
    "gemma-4-e2b": {"text_config": {"num_hidden_layers": 10, "num_kv_shared_layers": 5}},
    "gemma-4-e4b": {"text_config": {"num_hidden_layers": 12, "num_kv_shared_layers": 6}},
    # A 2-block vision tower (no cache; 32 dummy blocks only slow the CPU build's start).
    "olmocr-7b": {"vision_config": {"depth": 2}},
    "olmocr-2-7b-1025": {"vision_config": {"depth": 2}},
    # Issue 26 wrappers (branch wrappers): 2-block towers (no cache; only the start is slower).
    **{cid: {"thinker_config": {"vision_config": {"depth": 2, "fullatt_block_indexes": [1]},
                                "audio_config": {"encoder_layers": 2, "num_hidden_layers": 2}}}
       for cid in ("qwen2.5-omni-7b", "qwen2.5-omni-3b", "qwen2.5-omni-7b-awq",
                   "qwen2.5-omni-7b-gptq-int4")},
    **{cid: {"vision_config": {"num_hidden_layers": 2}}
       for cid in ("lightonocr-1b-1025", "lightonocr-2-1b-bbox-soup",
                   "llava-next-video-34b-dpo")},
    **{cid: {"vision_config": {"depth": 2}} for cid in ("glm-ocr", "glm-ocr-bf16-mlx")},
    # Blind batch 14: 2-block Qwen2-VL / Qwen2.5-VL towers (no cache; only the start is slower).
    **{cid: {"vision_config": {"depth": 2}}
       for cid in ("qwen2-vl-2b-instruct-awq-sophgo", "qwen2-vl-7b-instruct-sophgo",
                   "qwen2.5-vl-3b-instruct-sophgo", "glm-4.1v-9b-thinking-sophgo",
                   # Blind batch 15: KsanaLLM's tiny Qwen2-VL test config keeps a 32-block tower.
                   "qwen2-vl-tiny-ksanallm")},
    # Its thinker's 18-layer audio encoder cut to 2 (no cache), as the Qwen3-ASR oracle case.
    "qwen3-asr-1.7b-sophgo": {"thinker_config": {"audio_config": {"encoder_layers": 2,
                                                                  "num_hidden_layers": 2}}},
    # Its text_config states no layer count or MLP size (LlamaConfig's 32 layers and 11008 are
    # the defaults): 4 layers and a small MLP stated, the heads and hidden size left to them.
    "llava-next-video-7b-hf": {"vision_config": {"num_hidden_layers": 2},
                               "text_config": {"num_hidden_layers": 4, "intermediate_size": 512}},
    # Blind batch 19: dinoml's Emu3-Chat snapshot states no text model size (Emu3TextConfig's
    # 32 layers, 14336 MLP and 184,622 vocabulary are the defaults): stated small, as above.
    "emu3-chat-hf-dinoml-snapshot": {"text_config": {"num_hidden_layers": 4,
                                                     "intermediate_size": 512,
                                                     "vocab_size": 4096}},
    **{cid: {"encoder_config": {"num_layers": 2}}
       for cid in ("granite-speech-3.3-8b", "granite-speech-3.3-2b")},
    # Its encoder concatenates layer 3's states (cat_hidden_layers [3]): 4 blocks kept.
    "granite-speech-4.1-2b-plus": {"encoder_config": {"num_layers": 4}},
    "paddleocr-vl-1.5": {"vision_config": {"num_hidden_layers": 2}},
    "phi-4-reasoning-vision-15b": {"vision_config": {"num_hidden_layers": 2}},
    # A tiny-random test model (hidden 8, moe_intermediate 4): vLLM's CPU build finds no
    # unquantized MoE backend for it ("No Unquantized MoE backend supports the deployment
    # configuration"). Wider hidden and MLP sizes; the MLA cache fields (kv_lora_rank 2,
    # qk_rope_head_dim 2) are kept. It still does not run ("invalid weight out features 2": the
    # CPU linear kernels take no 2-wide projection); both runs are in its results.json.
    "deepseek-v2-tiny-random": {"hidden_size": 256, "moe_intermediate_size": 256,
                                "intermediate_size": 512},
    # Falcon-180B: vLLM 0.32's falcon.py sizes the MLP as 4 * hidden_size whatever
    # ffn_hidden_size says, so 4 layers at hidden 14,848 are ~18 GB of dummy weights. Hidden 1,024
    # over 16 heads keeps head_dim 64 (falcon.py: hidden_size // num_attention_heads) and the 8
    # KV heads (num_kv_heads, new_decoder_architecture): the cache per token is unchanged.
    "falcon-180b-space-copy": {"hidden_size": 1024, "num_attention_heads": 16},
    # Blind batch 9: 2-block vision towers (no cache; only the start is slower).
    **{cid: {"vision_config": {"num_hidden_layers": 2}}
       for cid in ("paddleocr-vl-90dbf489", "lightonocr-0.9b-16k-1025")},
    # Its text_config states no layer count (MistralConfig's default 32): 4 stated.
    "llava-next-video-7b-32k-hf": {"vision_config": {"num_hidden_layers": 2},
                                   "text_config": {"num_hidden_layers": 4}},
    "glm-ocr-onnx": {"vision_config": {"depth": 2}},
    # GLM-ASR's Whisper-like audio encoder (no paged cache): 2 layers (branch cohere2moe).
    "glm-asr-nano-2512": {"audio_config": {"num_hidden_layers": 2}},
    # Blind batch 10: its file states both num_layers 2 (LongCat-Flash's decoder layers, two
    # attentions each) and num_hidden_layers 4; the generic pass would set both to 4. Kept as
    # the real file states them (already small). Its experts' width cut to 256, so that the
    # generic pass's ffn_hidden_size 512 stays a multiple of it (kvplan counts the dense MLP as
    # shared experts of that width; the first run, at 2048, left kvplan no reading of 512).
    "longcat-shortcat-hf-internal": {"num_layers": 2, "num_hidden_layers": 4,
                                     "expert_ffn_hidden_size": 256},
    # Blind batch 10: 2-block vision towers (no cache; only the start is slower).
    **{cid: {"vision_config": {"num_hidden_layers": 2}}
       for cid in ("lightonocr-0.9b-32k-1025", "aya-vision-32b-unsloth")},
    "granite-speech-3.2-8b": {"encoder_config": {"num_layers": 2}},
    # A tiny-random test model (hidden 16, MLPs 64): vLLM's CPU build finds no unquantized MoE
    # backend for it (the first run, in its results.json). Wider hidden and MLP sizes, as
    # deepseek-v2-tiny-random; head_dim 64 is stated, so the cache per token is unchanged.
    "glm-4-moe-tiny-random": {"hidden_size": 256, "moe_intermediate_size": 256,
                              "intermediate_size": 512},
    # The same for this one's text model (hidden 8; head_dim 32 stated), and the vision
    # merger's output width with it.
    # Blind batch 11: a tiny-random test model (hidden 8, MLPs 64 / 32), widened before its first
    # run as the two above (the CPU build finds no MoE backend for such widths); head_dim 32 and
    # global_head_dim 64 are stated, so the cache per token is unchanged.
    "gemma-4-moe-tiny-random": {"text_config": {"hidden_size": 256, "moe_intermediate_size": 256,
                                                "intermediate_size": 512}},
    "qwen3-vl-moe-tiny-random": {"text_config": {"hidden_size": 256, "moe_intermediate_size": 256,
                                                 "intermediate_size": 512},
                                 "vision_config": {"out_hidden_size": 256}},
    # Blind batch 14's InternVL2 copies (branch remote26): 2-layer InternViT towers (no cache;
    # only the start is slower).
    **{cid: {"vision_config": {"num_hidden_layers": 2}}
       for cid in ("internvl2-2b-sophgo", "internvl2-4b-sophgo")},
}
# NemotronH's MoE layers ("E") hold no cache, and the CPU build runs no non-gated (relu^2)
# experts: they become dense MLP layers ("-"), which hold none either.
NO_CACHE_SWAPS = {"nemotron-3-nano-30b-a3b": ("hybrid_override_pattern", "E", "-"),
                  "nemotron-3-nano-30b-a3b-base": ("hybrid_override_pattern", "E", "-"),
                  "nemotron-3-super-120b-fp8": ("hybrid_override_pattern", "E", "-"),
                  "nemotron-3-nano-30b-a3b-nvfp4": ("hybrid_override_pattern", "E", "-"),
                  "nemotron-3-ultra-550b-a55b": ("layers_block_type", "moe", "mlp"),
                  "nemotron-3.5-lightning-30b-a3b-nvfp4": ("layers_block_type", "moe", "mlp"),
                  "nemotron-ultra-rl-050826": ("layers_block_type", "moe", "mlp")}


def period(seq: list[Any] | str) -> int:
    """Smallest p with seq[i] == seq[i % p] for every i (len(seq) when there is none)."""
    for p in range(1, len(seq) + 1):
        if all(seq[i] == seq[i % p] for i in range(len(seq))):
            return p
    return len(seq)


def shrink_scope(cfg: dict[str, Any], layers: int | None) -> None:
    n = next((cfg[k] for k in LAYER_KEYS if isinstance(cfg.get(k), int)), None)
    if n is None and isinstance(cfg.get("layers_block_type"), list):  # NemotronH: its length
        n = len(cfg["layers_block_type"])
    if n is not None:
        per_layer = [k for k, v in cfg.items() if isinstance(v, (list, str)) and len(v) == n
                     and n > 1 and k not in NOT_PER_LAYER and not k.startswith("_")]
        if layers is None:
            p = 1
            for k in per_layer:
                p = math.lcm(p, period(cfg[k]))
            first_dense = int(cfg.get("first_k_dense_replace") or 0)
            if p <= n // 2:
                layers = min(n, max(4, 2 * p, first_dense + 2))
            else:  # no period: the shortest prefix of at least 12 layers holding every layer type
                # (a one-layer model has no per-layer list: it keeps its layer)
                seen = max((max(list(cfg[k]).index(t) for t in set(cfg[k])) for k in per_layer),
                           default=0)
                layers = min(n, max(12, seen + 1))
        for k in LAYER_KEYS:
            if isinstance(cfg.get(k), int):
                cfg[k] = layers
        for k in per_layer:
            cfg[k] = cfg[k][:layers]
        for k in ("mlp_only_layers", "full_attn_idxs"):  # layer indices (LFM2's attention)
            if isinstance(cfg.get(k), list):
                cfg[k] = [i for i in cfg[k] if i < layers]
        if isinstance(cfg.get("max_window_layers"), int):  # a layer count too (Qwen2's)
            cfg["max_window_layers"] = min(cfg["max_window_layers"], layers)
    if isinstance(cfg.get("vocab_size"), int) and cfg["vocab_size"] > 4096:
        cfg["vocab_size"] = 4096
        for k in ("pad_token_id", "bos_token_id", "eos_token_id", "padded_vocab_size"):
            v = cfg.get(k)
            if isinstance(v, int) and v >= 4096:
                cfg[k] = 4096 if k == "padded_vocab_size" else 1
            elif isinstance(v, list):
                cfg[k] = [t if t < 4096 else 1 for t in v]
    for k, v in SMALL.items():
        if isinstance(cfg.get(k), int) and cfg[k] > v:
            cfg[k] = v
    topk = int(cfg.get("num_experts_per_tok") or cfg.get("moe_topk") or 1)
    for k in EXPERT_KEYS:
        if isinstance(cfg.get(k), int) and cfg[k] > 16:
            groups = int(cfg.get("n_group") or 1)
            cfg[k] = max(16, 2 * topk, groups * 2)
    cfg.pop("quantization_config", None)


def deep_update(target: dict[str, Any], value: dict[str, Any]) -> None:
    """`target` updated key by key, nested dicts merged (not replaced)."""
    for k, v in value.items():
        if isinstance(v, dict) and isinstance(target.get(k), dict):
            deep_update(target[k], v)
        else:
            target[k] = v


def shrink(cid: str, cfg: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(cfg)
    out.pop("quantization_config", None)
    out.pop("compression_config", None)  # compressed-tensors' older key (blind batch 15)
    scopes = [out] + [out[k] for k in NESTED if isinstance(out.get(k), dict)] + [
        out[a][b] for a, b in NESTED2
        if isinstance(out.get(a), dict) and isinstance(out[a].get(b), dict)]
    for scope in scopes:
        shrink_scope(scope, LAYERS.get(cid))
    if cid in NO_CACHE_SWAPS:
        key, old, new = NO_CACHE_SWAPS[cid]
        out[key] = (out[key].replace(old, new) if isinstance(out[key], str)
                    else [new if t == old else t for t in out[key]])
    for key, value in OVERRIDES.get(cid, {}).items():
        if isinstance(value, dict):
            deep_update(out[key], value)
            if "layer_types" in out[key]:
                out[key]["layer_types"] = out[key]["layer_types"][:out[key]["num_hidden_layers"]]
        else:
            out[key] = value
    return out


def main(ids: list[str]) -> None:
    """Shrink the frozen configs named (all when none are; the folders of those kvplan refuses
    are not kept: vLLM is not asked about them)."""
    frozen = json.loads((BLIND / "frozen.json").read_text())["configs"]
    for row in frozen:
        if ids and row["id"] not in ids:
            continue
        real = json.loads((BLIND / "real" / f"{row['id']}.json").read_text())
        folder = BLIND / "shrunk" / row["id"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(shrink(row["id"], real), indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
