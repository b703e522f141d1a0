"""Weight gaps left by wgap26 (issue 26, wgap26b), each found by a vLLM 0.32 weight probe
(tests/oracle/vllm_weight_bytes.py; tests/data/oracle/weight-bytes.json) and closed after it: the
probes shaped these rules (no held-out test). Hand counts from the published configs."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan._util.units import GiB
from kvplan.capacity.stages import pp_layer_ranges, stage_weights
from kvplan.engines.base import Engine, PlanInputs
from kvplan.model.quant_config import parse_quantization_config
from kvplan.sources.resolve import load_spec

DATA = Path(__file__).resolve().parent / "data"
REAL = DATA / "blind26" / "real"
MEASURED = json.loads((DATA / "oracle" / "weight-bytes.json").read_text())["cases"]


def _stages(spec, pp: int = 1, tp: int = 1):
    inputs = PlanInputs(context=4096, pp=pp, tp=tp, engine=Engine.vllm,
                        kv_budget_bytes=10 * GiB)
    return [stage_weights(spec, inputs, r, pp_first=i == 0,
                          pp_last=r.stop == spec.num_hidden_layers)
            for i, r in enumerate(pp_layer_ranges(spec.num_hidden_layers, pp))]


def _params(b) -> int:
    return b.total - b.rope_cache - b.attention_scales


def test_command_r7b_w4a16_weight_actorder_holds_no_g_idx_by_hand() -> None:
    # Niazi/c4ai-command-r7b-12-2024-w4a16 (tests/data/blind26/real/command-r7b-12-2024-w4a16
    # .json: Cohere2, hidden 4,096, 32 layers, 32 heads of 128, 8 KV heads, intermediate
    # 14,336, vocabulary 256,000, tied; compressed-tensors pack-quantized int4, group 128,
    # symmetric, "actorder": "weight", lm_head ignored). vLLM 0.32
    # compressed_tensors_wNa16.py:103-236 (create_weights) gives each linear weight_packed
    # (out x in/8 int32), weight_scale (out x in/128 in bf16), weight_shape (2 int64) and no
    # g_idx (only "group" actorder had one, and 0.32 refuses it: compressed_tensors.py:336-344):
    #   embed_tokens 256,000 x 4,096 x 2 B                                = 2,097,152,000
    #   a layer: qkv_proj (4,096 + 2 x 1,024) x 4,096 / 2 + 6,144 x 32 x 2 =    12,976,128
    #            o_proj 4,096 x 4,096 / 2 + 4,096 x 32 x 2                 =     8,650,752
    #            gate_up 28,672 x 4,096 / 2 + 28,672 x 32 x 2              =    60,555,264
    #            down 4,096 x 14,336 / 2 + 4,096 x 112 x 2                 =    30,277,632
    #            4 weight_shape x 16 B, input_layernorm 4,096 x 2 B        =         8,256
    #            = 112,468,032, x 32                                       = 3,598,977,024
    #   final norm 4,096 x 2 B                                             =         8,192
    #   5,696,137,216 B. Before: 2 x in x 4 B of g_idx and sort indices a linear (2 x 4 x
    #   26,624 = 212,992 B a layer, 6,815,744 B in all) over, the weight_shape (2,048 B) under.
    spec = load_spec(str(REAL / "command-r7b-12-2024-w4a16.json"))
    (whole,) = _stages(spec)
    assert _params(whole) == 5_696_137_216
    assert whole.quantization_scales == 32 * (393_216 + 262_144 + 1_835_008 + 917_504 + 64)
    # "group" (and its aliases) still prices the g_idx and Marlin's sort indices, as vLLM
    # 0.10-0.31 built them (has_g_idx = actorder == ActivationOrdering.GROUP).
    config = json.loads((REAL / "command-r7b-12-2024-w4a16.json").read_text())
    qc = config["quantization_config"]
    for actorder, extra in (("weight", 0), ("static", 0), (None, 0), ("group", 8 * 4_096),
                            ("dynamic", 8 * 4_096), (True, 8 * 4_096)):
        qc["config_groups"]["group_0"]["weights"]["actorder"] = actorder
        scheme = parse_quantization_config(qc, "config.json").scheme_for(
            "model.layers.0.self_attn.o_proj")
        assert scheme.matrix_bytes(4_096, 4_096).scales == 262_144 + 16 + extra


def test_command_r7b_shrink_equals_the_probe_but_the_attention_scales() -> None:
    # The command-r7b shrink (tests/data/oracle/command-r7b: 8 layers of hidden 4,096,
    # intermediate 512, vocabulary 1,024, the w4a16 scheme above) on vLLM 0.32's CPU build
    # (weight-bytes.json `command-r7b`, PP 1, wgap26b): 207,430,288 B of parameters. kvplan
    # was 208,248,832 (+818,544: 819,200 B of g_idx and sort indices, 512 B of weight_shape
    # under). Now 207,430,144: the probe's 144 B more are each attention layer's k / v / q
    # scales (3 x 4 B) and zero points (3 x 2 B), which the quant method deletes after loading
    # (layers/quantization/kv_cache.py:105-108, compressed_tensors.py:1279), so the GPU does
    # not hold them. At PP 2 (`command-r7b-pp2`): 107,913,544 B a stage, kvplan 107,913,472
    # (72 B, 4 layers' scales; 108,322,816 before, +409,272).
    spec = load_spec(str(DATA / "oracle" / "command-r7b"))
    (whole,) = _stages(spec)
    assert _params(whole) == MEASURED["command-r7b"]["params"] - 8 * 18 == 207_430_144
    stages = _stages(spec, pp=2)
    assert [_params(b) for b in stages] == [
        s["params"] - 4 * 18 for s in MEASURED["command-r7b-pp2"]["stages"]]


def test_command_r_plus_q_k_norms_by_hand() -> None:
    # CohereForAI/c4ai-command-r-plus (tests/data/blind26/real/command-r-plus-gptq.json, a GPTQ
    # re-save of it: hidden 12,288, 64 layers, 96 heads and 8 KV heads of 128, use_qk_norm
    # true, float16). vLLM 0.32 models/commandr.py:257-263 gives each layer q_norm.weight
    # (heads of the rank, 128) and k_norm.weight (KV heads of the rank, 128; :184-199: total //
    # tp, at least one), a weight alone:
    #   TP 1: 64 x (96 + 8) x 128 x 2 B                                   = 1,703,936 B
    #   TP 8: 64 x (12 + 1) x 128 x 2 B                                   =   212,992 B
    # Before (no rule) kvplan counted none.
    from dataclasses import replace

    from kvplan.weights.breakdown import weight_breakdown
    spec = load_spec(str(REAL / "command-r-plus-gptq.json"))
    assert spec.qk_norm and spec.headwise_qk_norm and not spec.per_head_qk_norm
    off = replace(spec, headwise_qk_norm=False)
    for tp, expected in ((1, 1_703_936), (8, 212_992)):
        assert (weight_breakdown(spec, None, dtype="fp16", tp=tp).total
                - weight_breakdown(off, None, dtype="fp16", tp=tp).total) == expected
    # Cohere without use_qk_norm (CohereForAI/aya-23-8b: "use_qk_norm": false) has none.
    assert not load_spec(str(REAL / "aya-23-8b.json")).headwise_qk_norm


def test_cohere_rotary_table_has_model_max_length_rows() -> None:
    # commandr.py:202-204: max_position = config.model_max_length or max_position_embeddings.
    # c4ai-command-r-plus (model_max_length 131,072, max_position_embeddings 8,192, head_dim
    # 12,288 / 96 = 128, float16): one table of 131,072 x 128 x 2 B = 33,554,432 B (kvplan said
    # 8,192 rows, 2,097,152 B). The command-r-plus shrink's probe: 33,554,432 B of cos_sin_cache
    # (weight-bytes.json `command-r-plus`, `rotary`). CohereForAI/aya-23-8b states no
    # model_max_length: 8,192 rows.
    from kvplan.weights.breakdown import weight_breakdown
    spec = load_spec(str(REAL / "command-r-plus-gptq.json"))
    assert spec.rope_tables == (131_072,)
    assert weight_breakdown(spec, None, dtype="fp16").rope_cache == 33_554_432
    assert MEASURED["command-r-plus"]["rotary"] == 33_554_432
    aya = load_spec(str(REAL / "aya-23-8b.json"))
    assert weight_breakdown(aya, None, dtype="fp16").rope_cache == 8_192 * 128 * 2


def test_command_r_plus_shrink_equals_the_probe_on_every_stage() -> None:
    # The command-r-plus shrink (tests/data/oracle/command-r-plus: 4 layers, intermediate 256,
    # vocabulary 1,024, no quantization_config) on vLLM 0.32's CPU build: 2,718,138,368 B at
    # PP 1, 1,371,664,384 B a stage at PP 2 (embed_tokens and norm on both). kvplan was
    # 106,496 and 53,248 B under (the q / k norms); these runs shaped the rule.
    spec = load_spec(str(DATA / "oracle" / "command-r-plus"))
    (whole,) = _stages(spec)
    assert _params(whole) == MEASURED["command-r-plus"]["params"] == 2_718_138_368
    assert [_params(b) for b in _stages(spec, pp=2)] == [
        s["params"] for s in MEASURED["command-r-plus-pp2"]["stages"]] == [1_371_664_384] * 2


def _llava_over(text: Path, folder: Path) -> Path:
    """The llava-1.5-7b shrink's wrapper (tests/data/oracle/llava-1.5-7b) over a text config
    without `architectures`, as the llava-mixtral shrink is built."""
    wrapper = json.loads((DATA / "oracle" / "llava-1.5-7b" / "config.json").read_text())
    inner = json.loads(text.read_text())
    inner.pop("architectures", None)
    wrapper.update(text_config=inner, vocab_size=inner["vocab_size"],
                   torch_dtype=inner["torch_dtype"])
    path = folder / "config.json"
    path.write_text(json.dumps(wrapper))
    return path


def test_llava_over_mixtral_stages_follow_mixtral_by_hand(tmp_path: Path) -> None:
    # mistralai/Mixtral-8x7B-v0.1 (tests/data/configs/mixtral-8x7b.json: hidden 4,096, 32
    # layers, 32 heads and 8 KV heads of 128, 8 experts of 14,336, vocabulary 32,000, untied,
    # bfloat16) under LLaVA at --pp 2. llava.py:569-573 builds its language model with
    # init_vllm_registered_model over text_config; with no `architectures` there vLLM names it by
    # model_type (config/vllm.py:942-951: MixtralForCausalLM), and mixtral.py:316-336, :406-413
    # builds embed_tokens, norm and lm_head on every stage. Each stage (16 layers):
    #   a layer: q, k, v, o (4,096 + 2 x 1,024 + 4,096) x 4,096                =    41,943,040
    #            experts 8 x 3 x 4,096 x 14,336                                 = 1,409,286,144
    #            router 8 x 4,096, 2 norms x 4,096                              =        40,960
    #            = 1,451,270,144, x 16                                          = 23,220,322,304
    #   embed_tokens and lm_head 2 x 32,000 x 4,096, norm 4,096                 =   262,148,096
    #   23,482,470,400 elements x 2 B = 46,964,940,800 B on both, as bare Mixtral. Before
    # (LlavaForConditionalGeneration not in the table: the first / last split) 46,702,788,608
    # and 46,702,796,800. The llava-mixtral shrink's PP 2 probe: weight-bytes.json.
    spec = load_spec(str(_llava_over(DATA / "configs" / "mixtral-8x7b.json", tmp_path)))
    assert spec.architectures == ("LlavaForConditionalGeneration",)
    assert spec.text_architectures == ("MixtralForCausalLM",)
    assert [_params(b) for b in _stages(spec, pp=2)] == [46_964_940_800] * 2
    # A Llama text model (the llava-1.5-7b shrink's own, LlamaForCausalLM) keeps the split.
    llama = load_spec(str(DATA / "oracle" / "llava-1.5-7b"))
    assert llama.text_architectures == ("LlamaForCausalLM",)
    assert not Engine.vllm.rules.stage_outer(llama).embeddings
    # A wrapper building its decoder from its own code names no class (idefics3.py LlamaModel).
    from kvplan.sources.hf_wrappers import WRAPPERS
    assert not WRAPPERS["idefics3"].registered and not WRAPPERS["smolvlm"].registered


def test_phi3_v_second_embedding_is_named_with_its_uncounted_tower() -> None:
    # vLLM 0.32 models/phi3v.py:561-572 builds, under _mark_tower_model("image"), a
    # VocabParallelEmbedding of its own (microsoft/Phi-3.5-vision-instruct: 32,064 x 3,072 x
    # 2 B = 197,001,216 B) beside the image tower, and the LlamaForCausalLM it builds holds
    # another (:575-584). kvplan leaves the tower out of the weights (an assumption); the
    # assumption names that embedding too. Neither is built with --limit-mm-per-prompt image 0.
    spec = load_spec(str(DATA / "configs" / "phi-3.5-vision.json"))
    (tower,) = spec.assumptions
    assert "second token embedding Phi-3-V builds" in tower.why
    llava = load_spec(str(DATA / "oracle" / "llava-1.5-7b"))
    assert "second token embedding" not in llava.assumptions[0].why


def test_group_actorder_refused_from_vllm_0_30(tmp_path: Path) -> None:
    # vLLM PR #54809 removed group / dynamic activation ordering: the vllm==0.30.0 wheel's
    # compressed_tensors.py:336-344 raises ValueError ("... is no longer supported") in
    # from_config, as 0.32's does; 0.29.0's still builds weight_g_idx (has_g_idx). The
    # command-r7b w4a16 file with "actorder": "group" is refused from 0.30 in one line, exit 2,
    # and sized for 0.29 (its g_idx and sort indices priced); "weight" loads on every release.
    from typer.testing import CliRunner

    from kvplan.cli import app
    config = json.loads((REAL / "command-r7b-12-2024-w4a16.json").read_text())
    config["quantization_config"]["config_groups"]["group_0"]["weights"]["actorder"] = "group"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    runner = CliRunner()
    for version, refused in ((None, True), ("0.30.0", True), ("0.29.0", False)):
        args = ["estimate", str(path), "-c", "4096", "--gpu", "H100"]
        result = runner.invoke(app, args + ([] if version is None else
                                            ["--engine-version", version]))
        if refused:
            assert result.exit_code == 2 and result.stdout == ""
            assert "weights.actorder: vLLM" in result.stderr
            assert "0.29.0 is the last release" in result.stderr
            assert len(result.stderr.strip().splitlines()) == 1
        else:
            assert result.exit_code == 0, result.stderr
    assert runner.invoke(app, ["estimate", str(REAL / "command-r7b-12-2024-w4a16.json"),
                               "-c", "4096", "--gpu", "H100"]).exit_code == 0
