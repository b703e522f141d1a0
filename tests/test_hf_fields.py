"""Known families fail closed on a cache field kvplan does not read (kvplan.sources.hf_fields,
issue 26: exact or refused). Each refusal here is a config a real sibling checkpoint could carry
on which kvplan answered a number vLLM 0.32 does not give, or would have; each answer is held to
vLLM by an oracle case (tests/data/oracle/, named in the test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.cli import app
from kvplan.kv.cache import rank_caches
from kvplan.sources.hf_config import load_config
from kvplan.sources.hf_fields import FAMILY_FIELDS
from kvplan.sources.hf_fields_table import LZ

ORACLE = Path(__file__).parent / "data" / "oracle"


def _golden(name: str) -> dict:
    return json.loads((ORACLE / name / "config.json").read_text())


def _write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


# (oracle config, fields set on it, the field refused, why)
REFUSED = [
    # vLLM's llama.py reads num_key_value_heads only (LlamaConfig: default the query heads):
    # vLLM measured 16,384 tokens (32 KV heads) where kvplan read num_kv_heads 8: 65,536.
    ("llama-3.1-8b", {"num_kv_heads": 8, "num_key_value_heads": None}, "num_kv_heads"),
    # A Qwen switch llama.py never reads: kvplan's reader would drop the window on "false".
    ("llama-3.1-8b", {"use_sliding_window": False, "sliding_window": 1024},
     "use_sliding_window"),
    # MLA fields on Llama: vLLM builds LlamaAttention, kvplan would size MLA.
    ("llama-3.1-8b", {"kv_lora_rank": 512}, "kv_lora_rank"),
    # mixtral.py passes no per-layer window: layer_types is vLLM's CacheConfig business only.
    ("mixtral-8x7b", {"sliding_window": 1024,
                      "layer_types": ["sliding_attention", "full_attention"] * 2},
     "layer_types"),
    # nemotron_h.py gives every attention layer config.sliding_window; kvplan reads none.
    ("nemotron-nano-9b-v2", {"sliding_window": 1024}, "sliding_window"),
    # qwen3_next.py reads no window at all; a sliding_window there is not kvplan's to guess.
    ("qwen3-next-80b-a3b", {"sliding_window": 1024}, "sliding_window"),
    # minicpm3.py builds MLA; a CacheConfig window over MLA is not modelled.
    ("minicpm3-4b", {"sliding_window": 1024}, "sliding_window"),
    # An Eagle drafter's layer offset into layer_types (llama.py target_layer_count).
    ("llama-3.1-8b", {"target_layer_count": 2}, "target_layer_count"),
    # lfm2.py sizes attention by 2048 / 32 = 64 while vLLM pads the conv state pages by
    # config.head_dim (vLLM 0.32 at 1 GiB, 4096 tokens: 77,596 tokens, padding 1500 %, where
    # kvplan read head_dim 32 and said 155,306).
    ("lfm2-1.2b", {"head_dim": 32}, "head_dim"),
    # Mixtral, Mistral, Phi-3 read no use_sliding_window (kvplan's Qwen reading would drop the
    # window vLLM keeps on every layer).
    ("mixtral-8x7b", {"use_sliding_window": False, "sliding_window": 4096},
     "use_sliding_window"),
    ("mistral-7b-v0.1", {"use_sliding_window": False}, "use_sliding_window"),
    # MiniMaxM2Config has no window; vLLM's CacheConfig would slide every layer.
    ("minimax-m2", {"sliding_window": 1024}, "sliding_window"),
    # Zamba2Config maps head_dim onto attention_head_dim; kvplan reads attention_head_dim only.
    ("zamba2-2.7b", {"head_dim": 64}, "head_dim"),
    # Nemotron-H in transformers 5.19's own format (layers_block_type) is read as
    # NemotronHConfig reads it (tests/test_blind_refusals.py); a kind it does not take is not.
    ("nemotron-nano-9b-v2", {"layers_block_type": ["mamba", "conv"]}, "layers_block_type"),
    # GPT2Model.__init__ (vLLM 0.32 gpt2.py:201-202) asserts both attention-score options
    # false: a GPT-2 config setting either does not start (kvplan had answered a number; the
    # gpt2 oracle case with scale_attn_by_inverse_layer_idx true stops there on vLLM 0.32's CPU
    # build: AssertionError at gpt2.py:201).
    ("gpt2", {"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx"),
    ("gpt2", {"reorder_and_upcast_attn": True}, "reorder_and_upcast_attn"),
]


@pytest.mark.parametrize(("name", "changes", "field"), REFUSED,
                         ids=[f"{n}-{f}" for n, _, f in REFUSED])
def test_unread_cache_field_refused(tmp_path: Path, name: str, changes: dict,
                                    field: str) -> None:
    config = _golden(name)
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    with pytest.raises(SpecError, match=f"config.json: {field}: "):
        load_config(_write(tmp_path, config))


def test_nemotron_without_kv_heads_refused(tmp_path: Path) -> None:
    # NemotronConfig leaves num_key_value_heads null when config.json does; vLLM 0.32 then fails
    # ModelConfig's validation (transformers' default NemotronConfig, shrunk, run through the
    # oracle), so kvplan refuses rather than answering with one KV head per query head.
    config = _golden("nemotron-mini-4b-instruct")
    del config["num_key_value_heads"]
    with pytest.raises(SpecError, match="num_key_value_heads: missing"):
        load_config(_write(tmp_path, config))


def test_refusal_is_one_line_exit_2(tmp_path: Path) -> None:
    config = _golden("llama-3.1-8b")
    config["num_kv_heads"] = config.pop("num_key_value_heads")
    result = CliRunner().invoke(app, ["estimate", str(_write(tmp_path, config)),
                                      "--context", "8192"])
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "num_kv_heads" in line and "models/llama.py" in line


def test_mistral_window_left_out_is_the_class_default(tmp_path: Path) -> None:
    # MistralConfig (transformers 5.19) defaults sliding_window to 4096: a config.json without
    # the key slides every layer over 4096 tokens in vLLM (oracle case mistral-7b-no-window:
    # 85,598 tokens at 1 GiB, 8192 tokens per request, where kvplan said 65,536 before).
    config = _golden("mistral-7b-v0.1")
    config.pop("sliding_window")
    spec, warnings = load_config(_write(tmp_path, config))
    assert spec.layer_windows == (4096,) * 4
    assert any("sliding_window 4096" in w for w in warnings)
    config["sliding_window"] = None  # explicit null: no window, as MistralConfig keeps it
    assert load_config(_write(tmp_path, config))[0].layer_windows == (None,) * 4


def test_qwen2_head_size_is_hidden_over_heads(tmp_path: Path) -> None:
    # vLLM 0.32 qwen2.py Qwen2Attention: head_dim = hidden_size // num_heads = 3584 // 28 = 128,
    # whatever config.head_dim says (oracle case qwen2.5-7b-head-dim-64: 131,072 tokens, where
    # kvplan read head_dim 64 and said 262,144).
    config = _golden("qwen2.5-7b")
    config["head_dim"] = 64
    spec, _ = load_config(_write(tmp_path, config))
    assert spec.attention.head_dim == 128


def test_class_default_head_dim(tmp_path: Path) -> None:
    # SeedOssConfig defaults head_dim to 128 when config.json leaves it out (its __post_init__
    # falls back to hidden / heads only for an explicit null); 5120 / 80 would be 64.
    config = _golden("seed-oss-36b")
    config.pop("head_dim")
    assert load_config(_write(tmp_path, config))[0].attention.head_dim == 128
    config["head_dim"] = None
    assert load_config(_write(tmp_path, config))[0].attention.head_dim == 64


def test_aliases_are_never_covered() -> None:
    # The KV-head aliases vLLM's config layer reads for other families (Falcon's n_head_kv,
    # num_kv_heads) are read by no model code of these families: never on a covered list.
    # (Falcon's row, audit A-K, reads num_kv_heads as falcon.py does.)
    for family in FAMILY_FIELDS.values():
        if family.audit is LZ:
            assert not {"num_kv_heads", "n_head_kv", "hidden_size_per_head"} & set(
                family.covered)


def test_qwen3_next_class_defaults(tmp_path: Path) -> None:
    # Qwen3NextConfig (transformers 5.19): head_dim 256 (hidden 1024 / 16 heads would be 64),
    # linear_conv_kernel_dim 4, linear_key_head_dim / linear_value_head_dim 128,
    # linear_num_key_heads 16, linear_num_value_heads 32, and layer_types full on every 4th layer
    # (`bool((i + 1) % 4)` linear) when neither layer_types nor full_attention_interval is given.
    config = _golden("qwen3-next-80b-a3b")
    for key in ("head_dim", "linear_conv_kernel_dim", "linear_key_head_dim",
                "linear_value_head_dim", "linear_num_key_heads", "linear_num_value_heads",
                "full_attention_interval"):
        config.pop(key, None)
    spec, _ = load_config(_write(tmp_path, config))
    assert spec.attention.head_dim == 256
    rec = spec.recurrent
    assert (rec.conv_kernel, rec.num_key_heads, rec.num_value_heads, rec.key_head_dim,
            rec.value_head_dim) == (4, 16, 32, 128, 128)
    assert spec.layer_mixers == ("recurrent",) * 3 + ("attention",) + ("recurrent",) * 3 + (
        "attention",)


def test_wrapped_text_null_is_not_left_to_the_class(tmp_path: Path) -> None:
    # Mistral3Config builds its text_config as MistralConfig(**text_config): a sliding_window
    # left out is 4096 (oracle case mistral-small-3.1-24b-no-window: vLLM 85,598 tokens), an
    # explicit null none (mistral-small-3.1-24b, the published file).
    config = _golden("mistral-small-3.1-24b")
    assert config["text_config"]["sliding_window"] is None
    assert load_config(_write(tmp_path, config))[0].layer_windows == (None,) * 4
    del config["text_config"]["sliding_window"]
    assert load_config(_write(tmp_path, config))[0].layer_windows == (4096,) * 4


def test_llama4_text_chunk_default(tmp_path: Path) -> None:
    # Llama4TextConfig's attention_chunk_size defaults to 8192: left out, vLLM's llama4.py still
    # builds chunked local attention on the RoPE layers (no_rope_layers 1).
    config = _golden("llama-4-scout-text")
    del config["attention_chunk_size"]
    spec, _ = load_config(_write(tmp_path, config))
    # no_rope_layers [] in the file: Llama4TextConfig's every 4th layer global (i + 1) % 4 == 0.
    assert spec.layer_chunks == (8192, 8192, 8192, None) * 2


def test_the_two_audits_differences_stay_explicit() -> None:
    # kvplan.sources.hf_fields keeps the A-K and L-Z audits' five differences (its docstring);
    # each assertion here flips when one is settled, so the settling is a visible change.
    from kvplan.sources.hf_fields import check_family_fields, fill_class_defaults
    from kvplan.sources.hf_fields_table import AK

    assert FAMILY_FIELDS["gemma"].audit is AK and FAMILY_FIELDS["llama"].audit is LZ
    # Settled: the counts' other names only where the config class takes them (GPT2Config's
    # attribute_map, the remote ChatGLM config's num_layers), on either half.
    check_family_fields({"n_layer": 2, "n_head": 2}, "cfg/config.json", "gpt2")
    check_family_fields({"num_layers": 2}, "cfg/config.json", "chatglm")
    for family in ("gemma", "llama"):
        with pytest.raises(SpecError):
            check_family_fields({"n_layer": 2}, "cfg/config.json", family)
    # An uncovered cache field stated null: refused by A-K, unset for L-Z.
    check_family_fields({"kv_extra": None}, "cfg/config.json", "llama")
    with pytest.raises(SpecError):
        check_family_fields({"kv_extra": None}, "cfg/config.json", "gemma")
    # Settled: a wrapper text sub-config's stated null is kept by both (the class keeps it);
    # MTP layers are covered by both.
    warnings: list[str] = []
    filled = fill_class_defaults({"model_type": "gemma4_text", "_null_keys": ("head_dim",)},
                                 "gemma4", warnings)
    assert "head_dim" not in filled and warnings == [
        "not in config.json, taken from the gemma4 config class's defaults: "
        "num_key_value_heads 4"]
    for family in ("gemma", "llama"):
        check_family_fields({"num_nextn_predict_layers": 1}, "cfg/config.json", family)
    kept = fill_class_defaults({"model_type": "qwen3", "_null_keys": ("head_dim",)}, "qwen3",
                               warnings)
    assert "head_dim" not in kept and warnings[-1].endswith(
        "defaults as vLLM loads them: num_key_value_heads 32")
    # Another class's model_type read as the family: filled by A-K (gemma4_text), not
    # by L-Z (Qwen3VLTextConfig is not Qwen3Config).
    assert fill_class_defaults({"model_type": "qwen3_vl_text"}, "qwen3", warnings) == {
        "model_type": "qwen3_vl_text"}


def test_add_cross_attention_false_is_a_plain_decoder_on_both_halves() -> None:
    # HuggingFaceTB/SmolVLM-256M-Instruct's published text_config (llama) carries
    # add_cross_attention false, as transformers' to_dict writes it: no cache change; true is
    # refused on every audited family (vLLM's decoders build no cross-attention).
    from kvplan.sources.hf_fields import check_family_fields

    for family in ("llama", "gemma", "qwen2"):
        check_family_fields({"add_cross_attention": False}, "cfg/config.json", family)
        with pytest.raises(SpecError):
            check_family_fields({"add_cross_attention": True}, "cfg/config.json", family)


@pytest.mark.parametrize("case", ["tiny-random-gpt-bigcode", "tiny-random-gpt-bigcode-upcast"])
def test_gpt_bigcode_carries_gpt2_attention_options(case: str) -> None:
    # hf-internal-testing/tiny-random-GPTBigCodeForCausalLM's published config.json (the
    # oracle case, verbatim) carries GPT-2's reorder_and_upcast_attn and
    # scale_attn_by_inverse_layer_idx (false); the -upcast case sets both true. Neither
    # GPTBigCodeConfig nor transformers' modeling_gpt_bigcode.py, which vLLM 0.32's Transformers
    # backend builds, reads them: 5 layers x 2 x 1 KV head (multi_query) x (32 / 4 = 8) x 2 B
    # (float32 run as bfloat16) = 160 B per token either way, equal to vLLM's CPU build
    # (6,710,784 tokens at 1 GiB, 512 per request: tests/test_vllm_oracle.py).
    config = _golden(case)
    assert config["reorder_and_upcast_attn"] is config["scale_attn_by_inverse_layer_idx"]
    spec, _ = load_config(ORACLE / case / "config.json")
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 5 * 2 * 1 * 8 * 2
