"""config.json fields -> the spec's attention and MLP sections, family by family
(``model_type``): llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2,
gemma3 / gemma3_text, deepseek_v2, deepseek_v3, kimi_k2, minicpm3, falcon, gpt2, gpt_neox, opt,
phi3, granite, and the hybrid families of kvplan.sources.hf_hybrid. MLA is recognised by its
fields (``kv_lora_rank``), never by the name. Other model types are read best-effort from the
standard fields, each assumption recorded on the reader (``ConfigReader.assumed``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_LAYERS, checked_int
from kvplan.model.spec import FULL, SLIDING
from kvplan.sources.hf_hybrid import HYBRID_MODEL_TYPES
from kvplan.sources.hf_layer_shapes import (
    LAYER_TYPE_FIELDS,
    layer_type_windows,
    sliding_layer_shape,
)
from kvplan.sources.hf_layer_windows import LAYER_WINDOW_LISTS, layer_window_list
from kvplan.sources.hf_reader import MISSING, ConfigReader
from kvplan.sources.hf_text import TEXT_FAMILIES

_LLAMA_LIKE = {"llama", "mistral", "mixtral", "granite", "phi3", "gpt_oss", "minimax_m2",
               "glm4_moe", "gemma3n", "ernie4_5"}
# mimo (MiMoForCausalLM): vLLM 0.32 models/mimo.py is models/qwen2.py (Qwen2Attention, q/k/v
# biased) plus MTP layers outside num_hidden_layers; its remote MiMoConfig subclasses Qwen2Config
# (sliding_window only with use_sliding_window).
_QWEN = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "mimo"}
_GEMMA = {"gemma", "gemma2", "gemma3", "gemma3_text"}
MLA_FAMILY = {"deepseek_v2", "deepseek_v3", "kimi_k2", "minicpm3", "deepseek_v32",
              "glm_moe_dsa", "glm4_moe_lite", "longcat_flash"}
LAYERNORM_FAMILY = {"falcon", "gpt2", "gpt_bigcode", "gpt_neox", "opt", "gptj", "stablelm",
                    "dbrx"} | {name for name, family in TEXT_FAMILIES.items() if family.layernorm}
# GPT-2's field names (n_layer, n_head, n_embd, n_inner, n_positions), learned positions.
# gpt_bigcode (SantaCoder, StarCoder): vLLM 0.32 serves it with the Transformers backend
# (registry.py _TRANSFORMERS_SUPPORTED_MODELS), whose Attention takes num_kv_heads from the
# config's num_key_value_heads, which transformers' GPTBigCodeConfig.__post_init__ sets to
# `1 if self.multi_query else self.n_head` (multi_query defaulting to True).
GPT2_STYLE = {"gpt2", "gpt_bigcode"}
# GPT-J: GPT-2's field names with rotary positions; vLLM 0.32 models/gpt_j.py GPTJAttention:
# one KV head per query head (QKVParallelLinear without a KV-head count) of hidden_size /
# num_attention_heads, no q/k/v or out bias; fc_in / fc_out with bias.
GPT2_NAMES = GPT2_STYLE | {"gptj"}
# Families whose vLLM model code takes the head size as hidden_size / num_attention_heads and
# never reads config.head_dim (0.32): olmoe.py OlmoeAttention, stablelm.py StablelmAttention,
# gpt_j.py GPTJAttention, granitemoe.py GraniteMoeAttention, lfm2_moe.py Lfm2MoeAttention,
# internlm2.py InternLM2Attention, olmo_hybrid.py OlmoHybridAttention, dbrx.py DbrxAttention,
# qwen2.py Qwen2Attention (also mimo.py's), qwen2_moe.py Qwen2MoeAttention (issue 26: a head_dim
# beside them was read, doubling the cache of a head_dim 64 variant of Qwen2.5-7B).
_HEAD_DIM_FROM_HIDDEN = {"olmoe", "stablelm", "gptj", "granitemoe", "lfm2_moe", "internlm2",
                         "olmo_hybrid", "dbrx", "qwen2", "qwen2_moe", "mimo"} | {
    name for name, family in TEXT_FAMILIES.items() if family.head_dim == "hidden"}
# Llama-like families whose KV heads are config.num_key_value_heads (default: the query heads,
# as their config classes set it) and head size config.head_dim, else hidden_size /
# num_attention_heads, with no sliding layer unless layer_types says so (vLLM 0.32 models/):
# - olmoe.py (OlmoeConfig), stablelm.py (StableLmConfig; `use_qkv_bias` for the q/k/v biases);
# - granitemoe.py and apertus.py (a window only on layer_types' sliding_attention layers:
#   granite.py granite_layer_attn_params, ApertusAttention);
# - ernie45_moe.py Ernie4_5_MoeAttention (head_dim or hidden / heads);
# - dbrx.py DbrxAttention (its own field names, mapped by hf_config._dbrx_fields);
# - internlm2.py (wqkv / wo without bias); exaone.py ExaoneBlockAttention (EXAONE 3 / 3.5;
#   layers from the remote ExaoneConfig's num_layers);
# - seed_oss, olmo (OLMo v1) and hunyuan_v1_dense, served by the Transformers backend
#   (models/transformers/base.py: the config's num_key_value_heads and head_dim). Their
#   transformers config classes add no layer_types, and transformers' HunYuanDenseV1 shares no
#   KV across layers, so a config's use_cla / cla_share_factor changes nothing in vLLM.
# - exaone_moe.py ExaoneMoeAttention (getattr(config, "head_dim", None) or hidden / heads) and
#   plamo3.py Plamo3AttentionMixer (config.head_dim), each window from a per-layer list
#   (kvplan.sources.hf_layer_windows).
_LLAMA_LIKE_MORE = {"olmoe", "stablelm", "granitemoe", "apertus", "seed_oss", "ernie4_5_moe",
                    "olmo", "hunyuan_v1_dense", "internlm2", "exaone", "dbrx"} | set(
    TEXT_FAMILIES) | LAYER_WINDOW_LISTS
# Two-matrix MLPs (up and down, no gate): apertus.py ApertusMLP (xIELU).
NON_GATED_MLP = {"apertus"} | {
    name for name, family in TEXT_FAMILIES.items() if not family.gated_mlp}
# Families whose transformers config class turns an integer sliding_window_pattern into
# layer_types (layer i slides unless (i + 1) % pattern == 0) when layer_types is absent:
# (default sliding_window, default pattern, tokens vLLM adds to the window).
# - cohere2: Cohere2Config (transformers 5.19 configuration_cohere2.py: sliding_window 4096,
#   pattern 4); vLLM 0.32 models/commandr.py CohereAttention passes `config.sliding_window + 1`
#   as the layer's window ("cohere swa layer sees [pos - sliding_window, pos]"), which
#   SlidingWindowSpec keeps.
# - exaone4: Exaone4Config (sliding_window 4096, pattern 4); vLLM models/exaone4.py takes
#   config.sliding_window on the layers layer_types marks sliding.
PATTERN_FAMILIES: dict[str, tuple[int, int, int]] = {"cohere2": (4096, 4, 1),
                                                     "exaone4": (4096, 4, 0)}
# Attention-only families read field by field beside the Llama-like ones: cohere (Command R,
# v1: vLLM's commandr.py gives it no sliding layer), chatglm (GLM-4 / ChatGLM: vLLM
# models/chatglm.py).
# glm4 (GLM-4-0414: vLLM models/glm4.py Glm4Attention takes no sliding window).
_OTHER_ATTENTION = {"cohere", "chatglm", "glm4"}
# Gemma-4 (text model "gemma4_text"): sliding layers of head_dim x num_key_value_heads, global
# layers of their own shape (gemma4_attention).
_GEMMA4 = {"gemma4"}
# Served by vLLM's Transformers backend (0.32 models/transformers/base.py: a layer whose
# config.layer_types entry is "sliding_attention" gets config.sliding_window), with layer_types
# as their transformers config classes build them when config.json leaves them out.
_BACKEND_LAYER_TYPES = {"olmo3", "smollm3"}
# Unknown model types (read best-effort) whose sliding_window, without layer_types, holds on
# every layer: starcoder2, served by vLLM 0.32's Transformers backend (models/transformers/
# base.py gives a per-layer window only from layer_types; every other Attention takes the
# cache config's window, ModelConfig.get_sliding_window); held by oracle case starcoder2-3b.
_EVERY_LAYER_WINDOW = {"starcoder2"}
KNOWN_MODEL_TYPES = frozenset(_LLAMA_LIKE | _LLAMA_LIKE_MORE | _QWEN | _GEMMA | MLA_FAMILY
                              | LAYERNORM_FAMILY
                              | HYBRID_MODEL_TYPES | set(PATTERN_FAMILIES) | _OTHER_ATTENTION
                              | _GEMMA4 | _BACKEND_LAYER_TYPES | set(LAYER_TYPE_FIELDS)
                              | {"deepseek_v4"})  # its attention: kvplan.sources.hf_dsv4

def head_attention(c: ConfigReader, heads: int, hidden: int, layers: int, *,
                   windows: bool = True) -> dict:
    """The attention section of a model with attention heads (MHA, GQA, MQA): heads, KV heads,
    head_dim and biases by family; with ``windows``, its sliding-window fields too."""
    mt = c.model_type
    head_dim = None if mt == "chatglm" or mt in _HEAD_DIM_FROM_HIDDEN else c.int("head_dim")
    if mt in _HEAD_DIM_FROM_HIDDEN and c.has("head_dim") and hidden % heads == 0 and (
            c.int("head_dim") != hidden // heads):
        c.warn(f"head_dim {c.int('head_dim')} ignored: vLLM's {mt} code takes hidden_size / "
               f"num_attention_heads = {hidden // heads}")
    if head_dim is None:
        if hidden % heads:
            raise SpecError(c.path, "head_dim",
                            f"missing, and hidden_size {hidden} is not a multiple of "
                            f"num_attention_heads {heads}")
        head_dim = hidden // heads
        if mt not in KNOWN_MODEL_TYPES:
            c.assume("head_dim", f"{head_dim} (hidden_size / num_attention_heads)",
                     "absent; vLLM's get_head_size falls back to this quotient")

    if mt == "falcon":
        if c.bool("new_decoder_architecture", False):
            kv = c.int("num_kv_heads", "n_head_kv") or heads
        elif c.bool("multi_query", True):
            kv = 1
        else:
            kv = heads
    elif mt == "gpt_bigcode":
        kv = 1 if c.bool("multi_query", True) else heads
        if not c.has("multi_query"):
            c.warn("multi_query absent: GPTBigCodeConfig default true (one KV head)")
    elif mt in ("gpt2", "opt", "gpt_neox", "gptj") or (
            mt in TEXT_FAMILIES and TEXT_FAMILIES[mt].mha):
        kv = heads
    elif mt == "chatglm":
        # vLLM models/chatglm.py GLMAttention: multi_query_group_num KV heads when
        # multi_query_attention, else one per query head; head size hidden_size / heads (its
        # kv_channels is not read for the cache).
        kv = (c.int("multi_query_group_num", required="multi_query_group_num")
              if c.bool("multi_query_attention", False) else heads)
    elif mt not in KNOWN_MODEL_TYPES:
        kv = _unknown_kv_heads(c, heads)
    else:
        kv = c.int("num_key_value_heads", "num_kv_heads", "n_head_kv")
        if kv is None and mt == "exaone4":
            kv = 32  # Exaone4Config's default num_key_value_heads
            c.warn("num_key_value_heads absent: Exaone4Config default 32")
        if kv is None:
            kv = heads
    if heads % kv:
        raise SpecError(c.path, "num_key_value_heads",
                        f"{kv} does not divide num_attention_heads ({heads})")
    kind = "mha" if kv == heads else "mqa" if kv == 1 else "gqa"

    # Biases: qwen2 always biases q/k/v (not o); llama-style `attention_bias` covers q/k/v and o.
    if mt in ("qwen2", "qwen2_moe", "mimo"):
        qkv_bias, o_bias = True, False
    elif mt in GPT2_STYLE:
        qkv_bias = o_bias = True
    elif mt == "gpt_neox":
        qkv_bias = o_bias = c.bool("attention_bias", True)
    elif mt == "opt":
        qkv_bias = o_bias = c.bool("enable_bias", True)
    elif mt == "falcon":
        qkv_bias = o_bias = c.bool("bias", False)
    elif mt in ("phi3", "gptj"):
        qkv_bias = o_bias = False  # no bias on q/k/v nor on the output projection
    elif mt == "internlm2":
        qkv_bias = o_bias = False  # internlm2.py: wqkv and wo bias=False whatever `bias` says
    elif mt == "exaone":
        qkv_bias = o_bias = c.bool("attention_bias", False) or c.bool("bias", False)
    elif mt == "PanguEmbedded":
        # vLLM 0.32 models/openpangu.py:853-858 (OpenPanguDecoderLayer): o_proj's bias is
        # `attention_bias or bias` (the remote class's bias defaults true: kvplan.sources.
        # hf_defaults), q/k/v's is the config's qkv_bias where it has one (null: none), else
        # the same.
        o_bias = c.bool("attention_bias", False) or c.bool("bias", False)
        qkv_bias = c.bool("qkv_bias", False) if "qkv_bias" in c.data else o_bias
    elif mt == "stablelm":
        qkv_bias, o_bias = c.bool("use_qkv_bias", False), False  # stablelm.py: o_proj bias=False
    elif mt == "seed_oss":
        # vLLM 0.32 serves SeedOssForCausalLM with its Transformers backend (registry.py:726):
        # transformers 5.19 models/seed_oss/modeling_seed_oss.py:169-180 q/k/v bias
        # attention_bias, o_proj bias attention_out_bias (SeedOssConfig: true, false,
        # configuration_seed_oss.py:79-80); vLLM's own seed_oss.py (0.10.2-0.31) builds
        # qkv_proj bias=True and o_proj bias=False whatever the config says. Found by the
        # seed-oss-36b shrink's weight probe (sizefix58): kvplan counted o_proj's bias, 4 layers
        # x 5,120 x 2 B = 40,960 B over.
        qkv_bias, o_bias = c.bool("attention_bias", True), c.bool("attention_out_bias", False)
    elif mt in ("glm4", "glm4_moe"):
        # glm4.py, glm4_moe.py:272-278: o_proj bias=False whatever attention_bias says
        qkv_bias, o_bias = c.bool("attention_bias", False), False
    elif mt == "chatglm":
        o_bias = c.bool("add_bias_linear", False)
        qkv_bias = o_bias or c.bool("add_qkv_bias", False)
    elif mt in TEXT_FAMILIES and TEXT_FAMILIES[mt].attention_bias is not None:
        qkv_bias = o_bias = bool(TEXT_FAMILIES[mt].attention_bias)
    else:
        if not c.has("attention_bias") and mt not in KNOWN_MODEL_TYPES:
            c.assume("attention_bias", "false (no attention biases)",
                     "absent; biases change weights only", affects="weights")
        qkv_bias = o_bias = c.bool("attention_bias", False)

    att: dict[str, Any] = {
        "kind": kind,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": head_dim,
        "attention_bias": qkv_bias,
        "o_proj_bias": o_bias,
    }
    if windows:
        att.update(_windows(c, layers))
    return att


def _unknown_kv_heads(c: ConfigReader, heads: int) -> int:
    """KV heads of an unknown model_type under any name vLLM's get_total_num_kv_heads reads
    (0.32 transformers_utils/model_arch_config_convertor.py: n_head_kv, num_kv_heads,
    num_key_value_heads, multi_query_group_num, num_attention_groups, the first present); two
    names that disagree are refused, since the model's own code decides which it uses."""
    names = ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
             "num_attention_groups")
    found = {k: c.int(k) for k in names if c.has(k)}
    if len(set(found.values())) > 1:
        first, second = list(found)[:2]
        raise SpecError(c.path, second, f"{found[second]} disagrees with {first} "
                                        f"({found[first]}); refused rather than guessed")
    if found:
        return next(iter(found.values()))
    c.assume("num_key_value_heads", f"{heads} (= num_attention_heads)",
             "absent; vLLM's get_total_num_kv_heads falls back to the query heads (MHA)")
    return heads


def _windows(c: ConfigReader, layers: int) -> dict:
    """Sliding-window fields: sliding_window plus sliding_window_pattern or layer_types."""
    mt = c.model_type
    if mt in _EVERY_LAYER_WINDOW and not isinstance(c.data.get("layer_types"), list):
        window = c.data.get("sliding_window")
        if window is None:
            return {}
        window = checked_int(window, path=c.path, field="sliding_window")
        c.warn(f"sliding_window {window} applied to every layer (no layer_types or pattern given)")
        return {"sliding_window": window}
    if mt not in KNOWN_MODEL_TYPES:
        return _unknown_windows(c, layers)
    if mt in PATTERN_FAMILIES:
        return _pattern_windows(c, layers)
    # (_OTHER_ATTENTION: vLLM's commandr.py (v1), chatglm.py and glm4.py pass no per-layer
    # window, so a config's sliding_window reaches every layer through CacheConfig when
    # layer_types is absent or all sliding: the generic rule below; issue 26.)
    if mt == "gpt_oss":
        return _gpt_oss_windows(c, layers)
    if mt in _GEMMA4:
        return _gemma4_windows(c, layers)
    if mt in LAYER_TYPE_FIELDS:
        return layer_type_windows(c, layers)
    if mt in LAYER_WINDOW_LISTS:
        return layer_window_list(c, layers)
    if mt in _BACKEND_LAYER_TYPES:
        return _backend_windows(c, layers)
    window = c.data.get("sliding_window")
    if window == 0 and not isinstance(window, bool):
        # vLLM 0.32 config/model.py: "Some checkpoints set sliding_window to 0 to indicate that
        # sliding window is disabled" (Qwen2MoeConfig stores 0 when use_sliding_window is off).
        window = None
    if mt == "gemma2" and window is None:
        window = 4096  # Gemma2Config default
        c.warn("sliding_window absent: Gemma2Config default 4096")
    if window is not None:
        window = checked_int(window, path=c.path, field="sliding_window")
    # (The families of kvplan.sources.hf_text have config classes that keep sliding_window
    # whatever use_sliding_window says, and vLLM's CacheConfig takes it as it is.)
    if mt in _QWEN:
        return _qwen_windows(c, window, layers)
    if "use_sliding_window" in c.data and mt not in TEXT_FAMILIES:
        # sliding_window is only honoured with use_sliding_window, and then only by the layers
        # from max_window_layers on (transformers: i >= max_window_layers slides).
        if not c.bool("use_sliding_window", False):
            return {}
        if window is None:
            return {}
        if not isinstance(c.data.get("layer_types"), list):
            first_full = c.int_or("max_window_layers", layers)
            types = [SLIDING if i >= first_full else FULL for i in range(layers)]
            return _from_layer_types(c, window, types, layers)
    if window is None:
        return {}
    window = checked_int(window, path=c.path, field="sliding_window")
    types = c.data.get("layer_types")
    if isinstance(types, list):
        return _from_layer_types(c, window, types, layers)
    if mt == "gemma2":
        return {"sliding_window": window, "sliding_window_pattern": 2}
    if mt in ("gemma3", "gemma3_text"):
        pattern = c.int("sliding_window_pattern", "_sliding_window_pattern") or 6
        return {"sliding_window": window, "sliding_window_pattern": pattern}
    if mt not in ("mistral", "mixtral"):
        c.warn(f"sliding_window {window} applied to every layer (no layer_types or pattern given)")
    return {"sliding_window": window}


def _gpt_oss_windows(c: ConfigReader, layers: int) -> dict:
    """gpt-oss as vLLM 0.32 models/gpt_oss.py OAIAttention places its windows: `sliding_window
    if layer_idx % 2 == 0`, whatever layer_types says; the odd layers pass none and take
    CacheConfig's window, kept only when layer_types is absent or all sliding
    (engine/arg_utils.py). GptOssConfig builds layer_types (alternating) when absent, so odd
    layers slide only when a config's layer_types is all sliding."""
    window = c.data.get("sliding_window")
    if window is None:
        return {}
    window = checked_int(window, path=c.path, field="sliding_window")
    types = c.data.get("layer_types")
    if isinstance(types, list) and len(types) != layers:
        raise SpecError(c.path, "layer_types",
                        f"expected {layers} entries (one per layer), got {len(types)}")
    if isinstance(types, list) and types and all(t == SLIDING for t in types):
        return {"sliding_window": window}
    return _from_layer_types(c, window, [SLIDING if i % 2 == 0 else FULL
                                         for i in range(layers)], layers)


# Qwen families whose vLLM 0.32 model is models/qwen2.py's Qwen2Model (Qwen2, Qwen3, MiMo):
# Qwen2Model.__init__ asserts that layer_types mixing sliding and full layers come with
# max_window_layers == num_hidden_layers ("Sliding window for some but all layers is not
# supported").
_QWEN2_MODEL = {"qwen2", "qwen3", "mimo"}


def _qwen_windows(c: ConfigReader, window: int | None, layers: int) -> dict:
    """The Qwen families' windows as vLLM 0.32 sizes them. Their model code (qwen2.py, qwen3.py,
    mimo.py, qwen2_moe.py, qwen3_moe.py) passes no per-layer window: a layer slides only
    through CacheConfig's window, kept only when layer_types is absent or all sliding
    (engine/arg_utils.py create_engine_config). The config classes (transformers 5.19) keep
    sliding_window only with use_sliding_window and build layer_types: Qwen2Config / Qwen3Config
    slide layer i >= max_window_layers (default 28), Qwen2MoeConfig the even layers below it
    ((i + 1) % 2 and i < max_window_layers), Qwen3MoeConfig builds none (every layer slides)."""
    mt = c.model_type
    if not c.bool("use_sliding_window", False) or window is None:
        return {}
    types = c.data.get("layer_types")
    first_full = c.int_or("max_window_layers", 28)
    if not isinstance(types, list):
        if mt == "qwen3_moe":
            return {"sliding_window": window}
        if mt == "qwen2_moe":
            types = [SLIDING if (i + 1) % 2 and i < first_full else FULL for i in range(layers)]
        else:
            types = [SLIDING if i >= first_full else FULL for i in range(layers)]
    shape = _from_layer_types(c, window, types, layers)
    if "layer_types" not in shape:
        return shape  # every layer slides, or none
    if mt in _QWEN2_MODEL and first_full != layers:
        raise SpecError(c.path, "max_window_layers",
                        f"{first_full} of {layers} layers: sliding window on some layers only, "
                        "which vLLM's qwen2.py refuses to load (max_window_layers must equal "
                        "num_hidden_layers); refused")
    c.warn("use_sliding_window with sliding and full layers: vLLM's model code passes no "
           "per-layer window and its CacheConfig keeps none, so no layer slides")
    return {}


def _backend_windows(c: ConfigReader, layers: int) -> dict:
    """Olmo3 and SmolLM3 (transformers 5.19): Olmo3Config builds layer_types as three sliding
    to one full ((i + 1) % 4) with sliding_window 4096 by default; SmolLM3Config makes a layer
    sliding only with use_sliding_window, a sliding_window and no RoPE on it (no_rope_layers[i]
    == 0; default every no_rope_layer_interval-th layer, 4)."""
    types = c.data.get("layer_types")
    if c.model_type == "olmo3":
        window = c.data.get("sliding_window", 4096)
        if not isinstance(types, list):
            types = [FULL if (i + 1) % 4 == 0 else SLIDING for i in range(layers)]
    else:
        window = c.data.get("sliding_window")
        if not isinstance(types, list):
            interval = c.int_or("no_rope_layer_interval", 4, minimum=1)
            has_rope = c.int_list("no_rope_layers") or [
                int((i + 1) % interval != 0) for i in range(layers)]
            if len(has_rope) != layers:
                raise SpecError(c.path, "no_rope_layers", f"expected {layers} entries")
            slide = c.bool("use_sliding_window", False) and window is not None
            types = [SLIDING if slide and not rope else FULL for rope in has_rope]
    if window is None:
        if SLIDING in types:
            raise SpecError(c.path, "sliding_window", "missing: layer_types has sliding layers")
        return {}
    return _from_layer_types(c, checked_int(window, path=c.path, field="sliding_window"),
                             types, layers)


def _gemma4_windows(c: ConfigReader, layers: int) -> dict:
    """Gemma-4's layer_types as Gemma4TextConfig builds them (transformers 5.19
    configuration_gemma4.py: when absent, five sliding to one full, `(i + 1) % 6`; the last layer
    forced to full attention either way), its sliding_window default 512."""
    if c.data.get("use_bidirectional_attention") == "all":
        raise SpecError(c.path, "use_bidirectional_attention", "'all' (an encoder's "
                                                               "bidirectional attention) is not "
                                                               "a decoder kvplan sizes")
    window = c.data.get("sliding_window")
    if window is None:
        window = 512
        c.warn("sliding_window absent: Gemma4TextConfig default 512")
    window = checked_int(window, path=c.path, field="sliding_window")
    types = c.data.get("layer_types")
    if not isinstance(types, list):
        types = [SLIDING if (i + 1) % 6 else FULL for i in range(layers)]
    types = list(types)
    if types and types[-1] != FULL:
        c.warn("layer_types: the last layer is full attention (Gemma4TextConfig forces it)")
        types[-1] = FULL
    return _from_layer_types(c, window, types, layers)


def gemma4_global_shape(c: ConfigReader, att: dict) -> dict | None:
    """Gemma-4's global layers: head_dim = global_head_dim (default 512), and KV heads =
    num_global_key_value_heads when attention_k_eq_v (Gemma4TextConfig.__post_init__ builds
    per_layer_config so; vLLM 0.32 models/gemma4.py Gemma4DecoderLayer reads
    `config.per_layer_config[layer_idx].head_dim / .num_key_value_heads`)."""
    if c.data.get("per_layer_config") is not None:
        raise SpecError(c.path, "per_layer_config", "given explicitly: not read by kvplan; "
                                                    "refused rather than guessed")
    head_dim = c.int("global_head_dim")
    if head_dim is None:
        head_dim = 512
        c.warn("global_head_dim absent: Gemma4TextConfig default 512")
    kv = att["num_key_value_heads"]
    if c.bool("attention_k_eq_v", False) and c.has("num_global_key_value_heads"):
        kv = c.int("num_global_key_value_heads")
    if "layer_types" not in att:
        # No sliding layer: every layer is global.
        heads = att["num_attention_heads"]
        att.update(num_key_value_heads=kv, head_dim=head_dim,
                   kind="mha" if kv == heads else "mqa" if kv == 1 else "gqa")
        return None
    return {"num_key_value_heads": kv, "head_dim": head_dim}


def layer_type_shapes(c: ConfigReader, attention: dict) -> None:
    """Each layer type's own attention shape, added to the attention section in place where the
    family's config gives one (kvplan.sources.hf_layer_shapes; Gemma-4's global layers)."""
    if c.model_type in _GEMMA4:
        global_shape = gemma4_global_shape(c, attention)
        if global_shape is not None:
            attention["full_layers"] = global_shape
    elif c.model_type in LAYER_TYPE_FIELDS:
        sliding_layer_shape(c, attention)


def _pattern_windows(c: ConfigReader, layers: int) -> dict:
    """Cohere2 and Exaone4 (PATTERN_FAMILIES): layer_types when given, else from the integer
    sliding_window_pattern (default 4) as their config classes build it; the window as vLLM's
    model code passes it (Cohere2: one token wider)."""
    default_window, default_pattern, widen = PATTERN_FAMILIES[c.model_type]
    window = c.data.get("sliding_window", default_window)
    if window is None:
        if c.model_type == "cohere2":
            raise SpecError(c.path, "sliding_window", "null: vLLM's commandr.py adds one to it "
                                                      "for the sliding layers and cannot load "
                                                      "this config")
        return {}  # exaone4.py: no window on any layer
    window = checked_int(window, path=c.path, field="sliding_window")
    if "sliding_window" not in c.data:
        c.warn(f"sliding_window absent: the {c.model_type} config class's default "
               f"{default_window}")
    types = c.data.get("layer_types")
    if not isinstance(types, list):
        pattern = c.data.get("sliding_window_pattern", default_pattern)
        pattern = checked_int(pattern, path=c.path, field="sliding_window_pattern")
        types = [FULL if (i + 1) % pattern == 0 else SLIDING for i in range(layers)]
    if widen:
        c.warn(f"sliding layers hold sliding_window + {widen} = {window + widen} tokens, as "
               f"vLLM's model code sizes them (a layer sees [pos - {window}, pos])")
    return _from_layer_types(c, window + widen, types, layers)


def _unknown_windows(c: ConfigReader, layers: int) -> dict:
    """An unknown model_type's sliding layers, as vLLM's models/llama.py finds them (0.32:
    `layer_types[i] == "sliding_attention"` takes config.sliding_window, every other layer is
    full attention). A window without layer_types says nothing of which layers slide (Mistral
    slides everywhere, Cohere2 three layers in four): refused, as is use_sliding_window on."""
    window = c.data.get("sliding_window")
    types = c.data.get("layer_types")
    if c.has("use_sliding_window"):
        if c.bool("use_sliding_window", False):
            raise SpecError(c.path, "use_sliding_window", "true on a model_type kvplan does not "
                                                          "know: which layers slide is the "
                                                          "model's own rule; refused")
        if window is not None:
            c.assume("sliding_window", "unused", "use_sliding_window is false")
        window = None
    if window is None:
        if isinstance(types, list) and "sliding_attention" in types:
            raise SpecError(c.path, "sliding_window", "missing: layer_types has "
                                                      "sliding_attention layers")
        return {}
    window = checked_int(window, path=c.path, field="sliding_window")
    if not isinstance(types, list):
        raise SpecError(c.path, "sliding_window", f"{window} given without layer_types: which "
                                                  f"layers slide is {c.model_type}'s own rule, "
                                                  "which kvplan does not know; refused")
    c.assume("layer_types", "sliding_attention layers take sliding_window",
             "as vLLM's models/llama.py reads layer_types")
    return _from_layer_types(c, window, types, layers)


def _from_layer_types(c: ConfigReader, window: int, types: list, layers: int) -> dict:
    if len(types) != layers:
        raise SpecError(c.path, "layer_types",
                        f"expected {layers} entries (one per layer), got {len(types)}")
    norm = []
    for t in types:
        if t not in (SLIDING, FULL):
            raise SpecError(c.path, "layer_types", f"layer type {t!r} declares a cache kvplan "
                                                   f"does not model for {c.model_type}")
        norm.append(t)
    if SLIDING not in norm:
        return {}
    if FULL not in norm:
        return {"sliding_window": window}
    return {"sliding_window": window, "layer_types": norm}


def mla_attention(c: ConfigReader, heads: int, hidden: int) -> dict:
    """The attention section of a multi-head latent attention model (a config with
    kv_lora_rank): DeepSeek-V2/V3 and their peers."""
    v_head_dim = c.int("v_head_dim")
    if v_head_dim is None:
        if hidden % heads:
            raise SpecError(c.path, "v_head_dim", MISSING)
        v_head_dim = hidden // heads
        c.warn(f"v_head_dim absent: hidden_size / num_attention_heads = {v_head_dim}"
               + (" (as MiniCPM3 derives it)" if c.model_type == "minicpm3" else " (assumed)"))
    att: dict[str, Any] = {
        "kind": "mla",
        "num_attention_heads": heads,
        "kv_lora_rank": c.int("kv_lora_rank", required="kv_lora_rank"),
        "qk_rope_head_dim": c.int("qk_rope_head_dim", required="qk_rope_head_dim"),
        "qk_nope_head_dim": c.int("qk_nope_head_dim", required="qk_nope_head_dim"),
        "v_head_dim": v_head_dim,
        "q_lora_rank": c.int("q_lora_rank"),
    }
    if c.bool("attention_bias", False):
        att["attention_bias"] = True
    if c.model_type not in KNOWN_MODEL_TYPES:
        c.assume("attention", "MLA: one latent row of kv_lora_rank + qk_rope_head_dim per "
                              "token", "kv_lora_rank given; vLLM sizes its MLA families so")
    if c.has("sliding_window"):
        c.warn("sliding_window ignored for MLA")
    return att


def gemma3_rope_tables(c: ConfigReader, max_pos: int) -> list[int]:
    """vLLM's rotary tables for Gemma-3 (vllm/model_executor/models/gemma3.py Gemma3Attention):
    sliding layers use rope_local_base_freq with no scaling (max_position_embeddings rows), global
    layers the config's rope_scaling; a linear one makes LinearScalingRotaryEmbedding
    (rotary_embedding/linear_scaling_rope.py) build max_position_embeddings x factor rows."""
    scaling = c.data.get("rope_scaling")
    rows = max_pos
    if isinstance(scaling, Mapping) and (scaling.get("rope_type") or scaling.get("type")) == (
            "linear"):
        factor = scaling.get("factor")
        if isinstance(factor, (int, float)) and not isinstance(factor, bool) and factor >= 1:
            rows = int(max_pos * factor)
    return [max_pos, rows]


def mtp_layers(c: ConfigReader) -> int:
    """Multi-token-prediction layers vLLM loads as the MTP drafter: num_nextn_predict_layers
    (DeepSeek, GLM-4.5; qwen3_next_mtp defaults it to 1), mtp_num_hidden_layers (Qwen3.5)."""
    value = c.data.get("num_nextn_predict_layers")
    if value is None:
        value = c.data.get("mtp_num_hidden_layers")
    if value is None and c.model_type == "qwen3_next":
        value = 1
    if value is None:
        return 0
    return checked_int(value, path=c.path, field="num_nextn_predict_layers", minimum=0,
                       maximum=MAX_LAYERS)
