"""LongCat-Flash (LongcatFlashForCausalLM): two MLA attentions in every decoder layer.

vLLM 0.32 models/longcat_flash.py FlashDecoderLayer (line 249) builds `self_attn` as a
ModuleList of 2 DeepseekV2MLAAttention (lines 267-287, prefixes `layers.{i}.self_attn.0` and
`.1`), and FlashModel builds config.num_layers decoder layers (make_layers, line 396): each
attention registers its own MLA cache layer of kv_lora_rank + qk_rope_head_dim values per token
(layers/attention/mla_attention.py line 479: head_size = kv_lora_rank + qk_rope_head_dim; one
latent row, MLAAttentionSpec). kvplan reads it as 2 x num_layers layers, one attention each
(kvplan.sources.hf_renamed). Golden config: tests/data/configs/longcat-flash-chat.json
(SOURCES-longcat.md); oracle case tests/data/oracle/longcat-flash-chat.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import SpecError, UnmodelledError
from kvplan.capacity.stages import pp_layer_ranges
from kvplan.engines.base import Engine
from kvplan.kv.cache import rank_caches
from kvplan.sources.hf_config import load_config
from kvplan.weights.params import count_params

DATA = Path(__file__).parent / "data"
CONFIG = DATA / "configs" / "longcat-flash-chat.json"
HF = "https://huggingface.co/"

# LongCat-Flash-Chat: num_layers 28 -> 56 MLA caches of (kv_lora_rank 512 + qk_rope_head_dim 64)
# x 2 B (bf16) = 56 x 1,152 = 64,512 B per token (DeepSeek-V3's 61 layers hold 70,272).
GOLDEN_LONGCAT: dict[str, tuple[Path, int, str]] = {
    "longcat-flash-chat": (CONFIG, 2 * 28 * (512 + 64) * 2,
                           HF + "meituan-longcat/LongCat-Flash-Chat"),
}


def test_published_config_holds_two_latent_caches_per_decoder_layer() -> None:
    spec, _ = load_config(CONFIG)
    assert (spec.num_hidden_layers, spec.layers_per_block) == (56, 2)
    caches = rank_caches(spec, kv_dtype="bf16")
    assert caches.bytes_per_token == 64_512
    # fp8: 56 x 576 x 1 B.
    assert rank_caches(spec, kv_dtype="fp8").bytes_per_token == 32_256


def test_published_config_weights_by_hand() -> None:
    # Per decoder layer (models/longcat_flash.py FlashDecoderLayer; hidden h = 6144):
    #   2 MLA attentions, each q_a 6144 x 1536 + q_a_norm 1536 + q_b 1536 x 64 x 192
    #     + kv_a 6144 x (512 + 64) + kv_a_norm 512 + kv_b 512 x 64 x (128 + 128)
    #     + o 64 x 128 x 6144 = 90,572,800
    #   2 dense FlashMLP of 12,288: 3 x 6144 x 12,288 = 226,492,416 each
    #   MoE: 512 experts x 3 x 6144 x 2048 = 19,327,352,832; router 6144 x (512 + 256 zero
    #     experts) = 4,718,592 (LongcatRouter: n_routed_experts + zero_expert_num outputs)
    #   4 RMSNorms: 4 x 6144
    # = 19,966,226,432; x 28 = 559,054,340,096; + embed and lm_head 2 x 131,072 x 6144
    # + final norm 6144 = 560,664,958,976 (Meituan: "560B", the Hub page 562B with MTP).
    spec, _ = load_config(CONFIG)
    counts = count_params(spec)
    assert counts.layers[0].attention == counts.layers[1].attention == 90_572_800
    assert counts.layers[0].router == 4_718_592 and counts.layers[1].router == 0
    pair = counts.layers[0].total + counts.layers[1].total
    assert pair == 19_966_226_432
    total = counts.embedding + counts.lm_head + counts.final_norm + sum(
        layer.total for layer in counts.layers)
    assert total == 560_664_958_976


def test_pipeline_stages_split_whole_decoder_layers() -> None:
    # vllm/distributed/utils.py get_pp_indices over num_layers 28 decoder layers at pp 3:
    # 9, 10, 9 (the remainder to the stages before the last) -> kvplan layers 18, 20, 18.
    assert pp_layer_ranges(56, 3, 2) == [range(0, 18), range(18, 38), range(38, 56)]
    assert pp_layer_ranges(56, 3) == [range(0, 19), range(19, 38), range(38, 56)]
    with pytest.raises(Exception, match="3 stages for 2 layers"):
        pp_layer_ranges(4, 3, 2)


def test_num_hidden_layers_must_be_twice_num_layers(tmp_path: Path) -> None:
    # transformers 5.19 LongcatFlashConfig: num_hidden_layers is the property 2 x num_layers.
    config = json.loads(CONFIG.read_text())
    for value, ok in ((56, True), (28, False)):
        path = tmp_path / f"c{value}.json"
        path.write_text(json.dumps({**config, "num_hidden_layers": value}))
        if ok:
            assert load_config(path)[0].num_hidden_layers == 56
        else:
            with pytest.raises(SpecError, match="num_hidden_layers: 28: transformers"):
                load_config(path)


@pytest.mark.parametrize("version", ["0.11", "0.20", "0.31"])
def test_vllm_before_0_32_refused(version: str) -> None:
    # 0.11-0.31 models/longcat_flash.py builds FlashConfig(**hf_config.__dict__)
    # .num_hidden_layers decoder layers: a count set by the transformers install.
    from kvplan.engines.vllm.architectures import vllm_served_architecture

    spec, _ = load_config(CONFIG)
    with pytest.raises(UnmodelledError, match="from vLLM 0.32 on"):
        vllm_served_architecture(spec, version, "0.32")
    for later in ("0.32", "0.33", "0.34", None):
        assert vllm_served_architecture(spec, later, "0.32") is spec


@pytest.mark.parametrize("engine", [Engine.sglang, Engine.trtllm])
def test_other_engines_refuse_in_one_line(engine: Engine) -> None:
    spec, _ = load_config(CONFIG)
    with pytest.raises(UnmodelledError, match="2 attentions in every decoder layer") as info:
        engine.rules.served_spec(spec)
    assert "\n" not in str(info.value)
