"""Pipeline stages as vLLM 0.32 builds them (issue 26, pp26): the weights outside the decoder
layers each stage holds (EngineRules.stage_outer; kvplan.engines.vllm.stage_weights: Gemma-4
builds its embeddings, per-layer embeddings, final norm and tied head on every stage, Qwen3-MoE
its embeddings, final norm and lm_head), and the classes vLLM refuses to split (no SupportsPP:
vllm_registry.json `supports_pp`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan import load_spec
from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan.capacity.plan import plan_capacity
from kvplan.capacity.stages import pp_layer_ranges, stage_weights
from kvplan.cli import app
from kvplan.engines.base import Engine, PlanInputs
from kvplan.sources.support import vllm_registry
from kvplan.weights.base import StageOuter

DATA = Path(__file__).resolve().parent / "data"
REAL = DATA / "blind26" / "real"
ROOT = Path(__file__).resolve().parent.parent


def _stages(spec, engine: Engine = Engine.vllm):
    inputs = PlanInputs(context=4096, pp=2, engine=engine, kv_budget_bytes=10 * GiB)
    ranges = pp_layer_ranges(spec.num_hidden_layers, 2)
    return [stage_weights(spec, inputs, r, pp_first=i == 0,
                          pp_last=r.stop == spec.num_hidden_layers)
            for i, r in enumerate(ranges)]


def test_e2b_every_stage_holds_the_embeddings_and_head_by_hand() -> None:
    # google/gemma-4-E2B (tests/data/blind26/real/gemma-4-e2b.json; the hand count of the whole
    # model: tests/test_weights_gemma4.py) at --pp 2: layers 0-17 and 18-34
    # (vllm/distributed/utils.py get_pp_indices). vLLM 0.32 models/gemma4.py:1007-1087 builds on
    # BOTH stages, in elements:
    #   embed_tokens 262,144 x 1,536                                        =   402,653,184
    #   embed_tokens_per_layer 262,144 x 8,960                             = 2,348,810,240
    #   per_layer_model_projection 8,960 x 1,536 + its norm 256            =    13,762,816
    #   final norm 1,536; lm_head tied to that stage's embed_tokens (:1454): 0
    #   outer                                                              = 2,765,227,776
    # stage 1 (layers 18-34, all KV-shared: q + o + q_norm, double-wide MLP):
    #   13 sliding x ((2,048 + 2,048) x 1,536 + 256)                       =    81,792,256
    #   4 full (19, 24, 29, 34) x ((4,096 + 4,096) x 1,536 + 512)          =    50,333,696
    #   17 x 56,623,104 MLP + 17 x 794,112 (norms, per-layer gate / proj)  =   976,092,672
    #   3,873,446,400 elements = 7,746,892,800 B at bf16
    # stage 0 (layers 0-17: 12 sliding and 3 full own, 3 sliding shared):
    #   84,940,800 + 42,470,400 + 3 x 6,291,712                            =   146,286,336
    #   15 x 28,311,552 + 3 x 56,623,104 MLP + 18 x 794,112                =   608,836,608
    #   3,520,350,720 elements = 7,040,701,440 B
    # Before (the first / last split of models/llama.py) stage 1 held 3,021,746,688 B: a tied
    # lm_head copy (805,306,368 B) but no per-layer embeddings; stage 0 no final norm (3,072 B).
    # The towers (951,459,352 B) and rotary tables (201,326,592 B) are on both stages either way.
    spec = load_spec(str(REAL / "gemma-4-e2b.json"))
    first, last = _stages(spec)
    assert [b.total - b.vision - b.rope_cache - b.attention_scales for b in (first, last)] == [
        7_040_701_440, 7_746_892_800]
    assert first.embeddings == last.embeddings == 2 * (402_653_184 + 2_348_810_240 + 13_762_560)
    assert first.lm_head == last.lm_head == 0
    assert first.vision == last.vision == 951_459_352


def test_e4b_it_plan_holds_the_embeddings_on_both_stages() -> None:
    # google/gemma-4-E4B-it (gemma-4-e4b-it.json): hidden 2,560, 42 layers of per-layer width
    # 256, vocabulary 262,144 for both tables: embed_tokens 671,088,640 + embed_tokens_per_layer
    # 262,144 x 10,752 = 2,818,572,288 + per_layer_model_projection 10,752 x 2,560 = 27,525,120
    # elements = 7,034,372,096 B on each stage at --pp 2 (stage 1, layers 21-41, has layers
    # 21-23 of its own cache, so vLLM runs it; KV-shared from 24).
    spec = load_spec(str(REAL / "gemma-4-e4b-it.json"))
    plan = plan_capacity(spec, PlanInputs(context=4096, pp=2, kv_budget_bytes=10 * GiB))
    embeddings = [s.weights_breakdown.embeddings for s in plan.stages]
    assert embeddings == [7_034_372_096, 7_034_372_096]
    assert [s.weights_breakdown.lm_head for s in plan.stages] == [0, 0]


def test_other_models_and_engines_keep_the_first_last_split() -> None:
    # models/llama.py:377-397: embed_tokens on the first stage (and the last, tied), the norm on
    # the last, PPMissingLayer elsewhere. Llama-3.1-8B's untied lm_head: 128,256 x 4,096 x 2 B.
    llama = load_spec("llama-3.1-8b")
    first, last = _stages(llama)
    assert (first.embeddings, first.lm_head) == (1_050_673_152, 0)
    assert (last.embeddings, last.lm_head) == (0, 1_050_673_152)
    assert Engine.vllm.rules.stage_outer(llama) == StageOuter()
    gemma4 = load_spec(str(REAL / "gemma-4-e2b.json"))
    assert Engine.vllm.rules.stage_outer(gemma4) == StageOuter(embeddings=True, head=True)
    for engine in (Engine.sglang, Engine.trtllm):  # not read for them
        assert engine.rules.stage_outer(gemma4) == StageOuter()
    assert StageOuter().holds(first=True, last=False) == (True, False)
    assert StageOuter(embeddings=True, head=True).holds(first=False, last=False) == (True, True)


def test_mixtral_every_stage_holds_the_embeddings_and_head_by_hand() -> None:
    # mistralai/Mixtral-8x7B-v0.1 (tests/data/configs/mixtral-8x7b.json: 32 layers of hidden
    # 4,096, 32 heads / 8 KV heads of 128, 8 experts of 14,336, vocabulary 32,000, untied, bf16)
    # at --pp 2: layers 0-15 and 16-31. vLLM 0.32 models/mixtral.py:316-336 builds embed_tokens
    # and the final norm, :406-413 the lm_head, on every stage. In elements, per layer:
    #   attention (4,096 + 1,024 + 1,024) x 4,096 + 4,096 x 4,096        =    41,943,040
    #   experts 8 x 3 x 14,336 x 4,096 + router 8 x 4,096                  = 1,409,318,912
    #   two norms 2 x 4,096                                                =         8,192
    #   16 layers                                                          = 23,220,322,304
    #   embed_tokens 32,000 x 4,096 + lm_head 32,000 x 4,096 + norm 4,096  =   262,148,096
    #   23,482,470,400 elements = 46,964,940,800 B at bf16, on each stage.
    # Before (the first / last split) each held 46,702,788,608 B: 262,144,000 B (a table) and
    # the final norm's 8,192 B less on stage 0, the embeddings' 262,144,000 B less on stage 1.
    spec = load_spec(str(DATA / "configs" / "mixtral-8x7b.json"))
    stages = _stages(spec)
    assert [b.total - b.rope_cache - b.attention_scales for b in stages] == [
        46_964_940_800, 46_964_940_800]
    assert [(b.embeddings, b.lm_head) for b in stages] == [(262_144_000, 262_144_000)] * 2


def test_qwen3_5_every_stage_holds_the_embeddings_alone_by_hand() -> None:
    # Qwen/Qwen3.5-27B (tests/data/configs/qwen3.5-27b.json: Qwen3_5ForConditionalGeneration,
    # 64 layers of hidden 5,120, vocabulary 248,320, tie_word_embeddings false) at --pp 2:
    # vLLM 0.32 models/qwen3_5.py:522-524 builds Qwen3_5ForCausalLM, whose Qwen3_5Model makes
    # embed_tokens on every stage (:251-254) but the final norm (:275-278) and the lm_head
    # (:346-356) on the last alone, PPMissingLayer elsewhere. embed_tokens 248,320 x 5,120 x
    # 2 B = 2,542,796,800 B on both stages (before: on stage 0 alone); the untied lm_head, the
    # same size, and the final norm's 5,120 x 2 = 10,240 B on stage 1 alone.
    spec = load_spec(str(DATA / "configs" / "qwen3.5-27b.json"))
    assert Engine.vllm.rules.stage_outer(spec) == StageOuter(embeddings=True)
    first, last = _stages(spec)
    assert (first.embeddings, first.lm_head) == (2_542_796_800, 0)
    assert (last.embeddings, last.lm_head) == (2_542_796_800, 2_542_796_800)
    assert last.norms - first.norms == 10_240  # 32 layers on each; the final norm on stage 1


def test_qwen3_next_every_stage_holds_the_embeddings_and_lm_head_by_hand() -> None:
    # Qwen/Qwen3-Next-80B-A3B (tests/data/configs/qwen3-next-80b-a3b.json: 48 layers of hidden
    # 2,048, vocabulary 151,936, untied, bf16) at --pp 2: vLLM 0.32 models/qwen3_next.py builds
    # embed_tokens (:660-663) and the lm_head (:851-855) on every stage, the final norm
    # (:684-687) on the last alone. 151,936 x 2,048 x 2 B = 622,329,856 B for each table on
    # both stages (before: the embeddings on stage 0, the lm_head on stage 1); the final norm
    # 2,048 x 2 = 4,096 B on stage 1 alone (24 layers on each).
    spec = load_spec(str(DATA / "configs" / "qwen3-next-80b-a3b.json"))
    assert Engine.vllm.rules.stage_outer(spec) == StageOuter(embeddings=True, lm_head=True)
    first, last = _stages(spec)
    assert [(b.embeddings, b.lm_head) for b in (first, last)] == [(622_329_856, 622_329_856)] * 2
    assert last.norms - first.norms == 4_096
    assert last.total - first.total == 4_096


def _estimate(*args: str):
    return CliRunner().invoke(app, ["estimate", *args, "--kv-budget-gib", "10"])


@pytest.mark.parametrize(("model", "name"), [
    # models/gemma3n_mm.py:575-577, models/gemma3n.py:1102: no SupportsPP.
    (str(ROOT / "model_specs" / "gemma-3n-e4b.yaml"), "Gemma3nForConditionalGeneration"),
    (str(DATA / "oracle" / "gemma-3n-e4b-text"), "Gemma3nForCausalLM"),
    # models/mamba2.py: Mamba2ForCausalLM(nn.Module, HasInnerState, IsAttentionFree, ...)
    (str(DATA / "configs" / "mamba-codestral-7b.json"), "Mamba2ForCausalLM"),
])
def test_a_class_without_supports_pp_is_refused_at_pp_2(model: str, name: str) -> None:
    # vllm/config/model.py:1556-1563: "Pipeline parallelism is not supported for this model.
    # Supported models implement the `SupportsPP` interface."
    result = _estimate(model, "--pp", "2")
    assert result.exit_code == 2, result.output
    lines = [x for x in result.stderr.splitlines() if "warning" not in x]
    assert len(lines) == 1 and name in lines[0] and "SupportsPP" in lines[0], result.stderr
    assert _estimate(model).exit_code == 0  # --pp 1 is planned as before


def test_supports_pp_is_vllm_032s_own_flag() -> None:
    # vllm_registry.json: `supports_pp` from _ModelInfo.from_model_cls (vLLM 0.32.0's CPU build,
    # tests/benches/vllm_registry_dump.py), on each class it inspected.
    rows = vllm_registry()["architectures"]
    assert [rows[n]["supports_pp"] for n in (
        "Gemma3nForCausalLM", "Gemma3nForConditionalGeneration", "Mamba2ForCausalLM")] == [
        False, False, False]
    assert [rows[n]["supports_pp"] for n in (
        "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration", "LlamaForCausalLM",
        "Gemma3ForConditionalGeneration")] == [True, True, True, True]
    inspected = [r for r in rows.values() if r["read"] == "inspected 0.32.0"
                 and "inspect_error" not in r]
    assert all(isinstance(r["supports_pp"], bool) for r in inspected)
    # A Gemma-3 (SupportsPP) is planned at --pp 2.
    spec = load_spec(str(DATA / "oracle" / "gemma-3-27b"))
    assert len(plan_capacity(spec, PlanInputs(context=4096, pp=2,
                                              kv_budget_bytes=10 * GiB)).stages) == 2
    with pytest.raises(InputError, match="SupportsPP"):
        plan_capacity(load_spec(str(DATA / "oracle" / "gemma-3n-e4b-text")),
                      PlanInputs(context=4096, pp=2, kv_budget_bytes=10 * GiB))


# Buffers vLLM holds on each stage that kvplan does not count: the Gemma families' bf16
# `normalizer` scalar (2 B; Gemma-4's layer scalars too: 18 B), MiniCPM3's longrope short / long
# table pair (kvplan.weights.base.rope_cache_elements counts one).
PP_BUFFER_GAPS = {"gemma-2-9b-pp2": -2, "gemma-7b-pp2": -2, "gemma-3-27b-pp2": -2,
                  "gemma-4-e2b-text-pp2": -18, "minicpm3-4b-pp2": -2_097_152}


@pytest.mark.parametrize(("case", "config"), [
    ("gemma-4-e2b-text-pp2", "gemma-4-e2b-text-pp2"),
    # models/qwen3_moe.py:468-479, 580-587: embed_tokens, norm and the untied lm_head on every
    # stage of the qwen3-30b-a3b shrink (4 layers of hidden 2,048, vocabulary 1,024): 96,556,032
    # B each; the first / last split gave 92,357,632 and 92,361,728 (no head on stage 0, no
    # embeddings on stage 1: 4,194,304 B each, and the final norm's 4,096).
    ("qwen3-30b-a3b-pp2", "qwen3-30b-a3b"),
    # mixtral.py:316-336, 406-413 on the mixtral-8x7b shrink (4 layers of hidden 4,096,
    # vocabulary 1,024, untied): 285,384,704 B on each stage, lm_head, embed_tokens and norm on
    # both; the first / last split gave 276,987,904 and 276,996,096 (8,388,608 B a table).
    ("mixtral-8x7b-pp2", "mixtral-8x7b"),
    # gemma3.py:300-313, 392-399 on the gemma-3-27b shrink (12 layers of hidden 1,024,
    # vocabulary 1,024, tied): 162,583,552 B each, embed_tokens and norm on both; the first /
    # last split gave 162,581,504 (no final norm, 2,048 B) and 162,583,552.
    ("gemma-3-27b-pp2", "gemma-3-27b"),
    # granitemoehybrid.py:343-368, 668-675 on the granite-4.0-h-micro-base shrink (20 layers of
    # hidden 2,048, vocabulary 4,096, tied): 566,000,640 B each; the first / last split gave
    # 565,996,544 (no final norm, 4,096 B) and 566,000,640.
    ("granite-4.0-h-micro-base-pp2", "granite-4.0-h-micro-base"),
    # nemotron_h.py:585-621, 844-849 on the nemotron-nano-9b-v2 shrink (10 layers of hidden
    # 1,024, vocabulary 4,096, untied): 193,763,328 B each, embed_tokens, norm_f and lm_head on
    # both; the first / last split gave 185,372,672 and 185,374,720 (8,388,608 B a table).
    ("nemotron-nano-9b-v2-pp2", "nemotron-nano-9b-v2"),
    # stablelm.py:226-240, 292-299 on the stablelm-2-zephyr-1.6b shrink (4 layers of hidden
    # 2,048, vocabulary 1,024, untied): 88,145,920 B each; the first / last split gave
    # 83,943,424 and 83,951,616 (4,194,304 B a table, the final LayerNorm's 8,192).
    ("stablelm-2-zephyr-1.6b-pp2", "stablelm-2-zephyr-1.6b"),
    # qwen3_5.py:251-254 (embed_tokens on every stage), :275-278 and :346-356 (the final norm
    # and the untied lm_head on the last alone) on the qwen3.5-9b-text shrink (8 layers of
    # hidden 1,024, vocabulary 2,048): 159,992,128 and 164,188,480 B; the first / last split
    # gave 159,992,128 and 159,994,176 (no embed_tokens, 4,194,304 B, on stage 1).
    ("qwen3.5-9b-text-pp2", "qwen3.5-9b-text"),
    # granitemoe.py:333-345, 410-417 on the granite-3.1-3b-a800m shrink (4 layers of hidden
    # 1,536, vocabulary 1,024, tied): 47,250,432 B each, embed_tokens and norm on both; the
    # first / last split gave 47,247,360 (no final norm, 3,072 B) and 47,250,432.
    ("granite-3.1-3b-a800m-pp2", "granite-3.1-3b-a800m"),
    # gemma.py:274-285, 358-365 on the gemma-7b shrink (4 layers of hidden 3,072, vocabulary
    # 1,024, tied): 217,085,952 B each, embed_tokens and norm on both; the first / last split
    # gave 217,079,808 (no final norm, 6,144 B) and 217,085,952 (a tied lm_head copy).
    ("gemma-7b-pp2", "gemma-7b"),
    # jamba.py:314-341, 426-430 on the jamba-mini shrink (16 layers of hidden 1,024, vocabulary
    # 4,096, untied): 381,691,840 B each, embed_tokens, final_layernorm and lm_head on both; the
    # first / last split gave 373,301,184 and 373,303,232 (8,388,608 B a table).
    ("jamba-mini-pp2", "jamba-mini"),
    # qwen2_moe.py:372-388, 462-469 on the qwen2-57b-a14b shrink (4 layers of hidden 3,584,
    # vocabulary 1,024, untied): 157,076,480 B each, embed_tokens, norm and lm_head on both;
    # the first / last split gave 149,729,280 and 149,736,448 (7,340,032 B a table).
    ("qwen2-57b-a14b-pp2", "qwen2-57b-a14b"),
    # gpt2.py:204-216 (wte, wpe, ln_f on every stage), :279-286 (the lm_head tied to the stage's
    # wte) on the gpt2 shrink (4 layers of hidden 768, vocabulary 1,024, 1,024 positions):
    # 31,500,288 B each; the first / last split gave 31,497,216 (no ln_f, 3,072 B) and
    # 29,927,424 (no wpe, 1,572,864 B, a tied lm_head copy in place of wte).
    ("gpt2-pp2", "gpt2"),
    # qwen3_next.py:660-663, 851-855 (embed_tokens, lm_head on every stage), :684-687 (the
    # final norm on the last) on the qwen3-next-80b-a3b shrink (8 layers of hidden 1,024,
    # vocabulary 2,048, untied): 168,421,696 and 168,423,744 B; the first / last split gave
    # 164,227,392 and 164,229,440 (4,194,304 B a table).
    ("qwen3-next-80b-a3b-pp2", "qwen3-next-80b-a3b"),
    # lfm2_moe.py:427 (embed_tokens on every stage), :456-459 and :583-592 (embedding_norm and
    # the tied lm_head on the last alone) on the lfm2-8b-a1b shrink (8 layers of hidden 2,048,
    # vocabulary 1,024): 163,713,344 and 176,365,952 B, embed_tokens on both, embedding_norm on
    # stage 1. The first / last split gave the same totals (its tied lm_head copy on stage 1 is
    # the embeddings' size); the embeddings-only rule changes them for an untied Qwen3.5.
    ("lfm2-8b-a1b-pp2", "lfm2-8b-a1b"),
    # gpt_oss.py:487-500, 1459-1463: embedding, norm and the untied lm_head on every stage of
    # the gpt-oss-20b shrink (6 layers of hidden 1,024, vocabulary 4,096, bf16, no
    # quantization_config): 149,047,704 B each; the first / last split gave 140,657,048 and
    # 140,659,096.
    ("gpt-oss-20b-pp2", "gpt-oss-20b"),
    # gemma2.py:259-270: embed_tokens and norm on every stage, no lm_head (the logits read the
    # stage's embed_tokens) on the gemma-2-9b shrink (4 layers of hidden 3,584, vocabulary
    # 1,024): 194,575,360 B each; the first / last split gave 194,568,192 (no final norm, 7,168
    # B) and 194,575,360 (a tied lm_head copy in place of the embeddings).
    ("gemma-2-9b-pp2", "gemma-2-9b"),
    # Recorded on branch pp26b with kvplan off by its PP 1 gap on each stage, equal since wgap26
    # (each family's own tensors: kvplan.sources.features, tests/test_weights_family_gaps.py):
    # DBRX 453,144,576 B a stage (was 61,440 over: LayerNorm biases dbrx.py:353-356 drops),
    # Falcon-7B 837,604,608 (36,352 over: one LayerNorm per parallel block), GPT-J 302,059,520
    # (30,720 over: the same, less its lm_head bias), OLMoE 100,765,696 (16,384 under: q / k
    # norms over all heads), BLOOM 52,490,240 (4,096 under: word_embeddings_layernorm), OPT
    # 15,763,456 (3,072 under: 2 offset position rows), Phi-MoE 235,071,488 (2,048 under: the
    # lm_head bias), Hy3 339,387,424 / 347,382,848 (1,024 under: q / k norms from config qk_norm).
    ("dbrx-instruct-pp2", "dbrx-instruct"), ("falcon-7b-pp2", "falcon-7b"),
    ("gpt-j-6b-pp2", "gpt-j-6b"), ("olmoe-1b-7b-0924-sft-pp2", "olmoe-1b-7b-0924-sft"),
    ("bloomz-560m-pp2", "bloomz-560m"), ("opt-125m-pp2", "opt-125m"),
    ("phi-3.5-moe-pp2", "phi-3.5-moe"), ("hy3-preview-pp2", "hy3-preview"),
    # The wgap26 scan's rules, predicted before the runs (held out): mamba.py:116, :134,
    # :191-197 on the mamba-2.8b shrink (4 layers of hidden 2,560, vocabulary 1,024, tied):
    # 170,552,320 B each, embeddings and norm_f on both; the first / last split gave 170,547,200
    # (no norm_f) and 170,552,320.
    ("mamba-2.8b-pp2", "mamba-2.8b"),
    # chatglm.py:330-335, :284-289, :344-349 on the glm-4-9b shrink (ChatGLMModel, 4 layers of
    # hidden 4,096, vocabulary 1,024, untied): 184,608,768 B each, embedding, final_layernorm and
    # output_layer on both; the first / last split gave 176,211,968 and 176,220,160.
    ("glm-4-9b-pp2", "glm-4-9b"),
    # minicpm3.py:207, :224 (MiniCPM3Model / ForCausalLM subclass minicpm.py's, :415-421,
    # :598-605) on the minicpm3-4b shrink (4 layers, vocabulary 1,024, tied): 67,204,096 B each,
    # embed_tokens and norm on both; the first / last split gave 67,198,976 (no norm) and
    # 67,204,096.
    ("minicpm3-4b-pp2", "minicpm3-4b"),
    # commandr.py:351-363 on the command-r-v01 shrink (4 layers of hidden 8,192, tied, fp16):
    # 1,115,734,016 B each, embed_tokens and norm on both (the rule held out); kvplan's
    # prediction was 32,768 B over on each, two norms a layer where CohereDecoderLayer builds
    # one (commandr.py:309): that run shaped the Cohere parallel_block_norm rule.
    ("command-r-v01-pp2", "command-r-v01"),
    # glm4v.py:379 (GLM4VModel is ChatGLMModel) on the glm-4v-9b shrink, no tower built:
    # 184,608,768 B each; mamba.py on the falcon-mamba-7b shrink (untied): 438,558,720 B each,
    # embeddings, norm_f and lm_head on both (the first / last split: 430,161,920 / 430,170,112).
    ("glm-4v-9b-pp2", "glm-4v-9b"), ("falcon-mamba-7b-pp2", "falcon-mamba-7b"),
    # wgap26b: the command-r-plus shrink (use_qk_norm; the q / k norms shaped by these runs):
    # 1,371,664,384 B each. LLaVA over the mixtral-8x7b shrink, no tower built: embed_tokens,
    # norm and lm_head of the MixtralForCausalLM it builds on both, 285,384,704 B each, as
    # predicted before the run (the stage rule by ModelSpec.text_architectures; held out); the
    # first / last split gave 276,987,904 / 276,996,096.
    ("command-r-plus-pp2", "command-r-plus"), ("llava-mixtral-pp2", "llava-mixtral"),
])
def test_every_stage_equals_vllm_on_the_pp2_shrinks(case: str, config: str) -> None:
    # tests/data/oracle/gemma-4-e2b-text-pp2 (gemma-4-e2b-text without KV sharing: 10 layers of
    # hidden 1,536, per-layer width 256 over 262,144 rows, vocabulary 4,096, tied) started at
    # pipeline_parallel_size 2 on vLLM 0.32's CPU build (weight-bytes.json, measured 2026-12-04
    # with tests/oracle/vllm_weight_bytes.py, WEIGHT_BYTES_PP=2): each stage's worker holds
    # 1,479,102,976 B of parameters, embed_tokens, embed_tokens_per_layer,
    # per_layer_model_projection, per_layer_projection_norm and norm among them on both. The
    # first / last split gave 1,479,099,904 B (no final norm) and 129,060,864 B (5 layers, the
    # final norm and a tied lm_head copy of 12,582,912 B instead of the embeddings).
    measured = json.loads((DATA / "oracle" / "weight-bytes.json").read_text())["cases"][
        case]["stages"]
    spec = load_spec(str(DATA / "oracle" / config))
    stages = _stages(spec)
    assert [b.total - b.rope_cache - b.attention_scales for b in stages] == [
        s["params"] for s in measured]
    # Each stage's buffers: its rotary tables and its attention layers' four float32 scales
    # (16 B a layer, sizefix58), but for what kvplan does not count (`PP_BUFFER_GAPS`).
    assert [b.rope_cache + b.attention_scales - s["buffers"] for b, s in zip(
        stages, measured, strict=True)] == [PP_BUFFER_GAPS.get(case, 0)] * len(measured)
    # The token embeddings on both stages; the head's tensors too where the rule says so.
    assert all(any("emb" in n or n.endswith("wte.weight") for n in s["outer"])
               for s in measured)
    if Engine.vllm.rules.stage_outer(spec).head:
        assert measured[0]["outer"] == measured[1]["outer"]


def test_cohere_builds_its_embeddings_and_norm_on_every_stage() -> None:
    # commandr.py:351-363 (embed_tokens, norm; no lm_head: the logits read the stage's
    # embed_tokens, :460-468), the wgap26 scan's rule, predicted before the run: the command-r7b
    # shrink (8 layers of hidden 4,096, tied, int4 layers) at PP 2 holds embed_tokens and norm on
    # both stages, 107,913,544 B each. kvplan gives both stages the same bytes, 108,322,816 (the
    # first / last split gave 108,347,392 on stage 0 before the Cohere one-norm rule: no norm,
    # 8,192 B); its 409,272 B over on each, alike, were in its pricing of the int4 layers, not
    # the stage rule (442,040 before that rule: 2 more norms of 4,096 x 2 B a layer). Since
    # wgap26b (actorder "weight" holds no g_idx, weight_shape counted:
    # tests/test_weights_family_gaps_b.py) 107,913,472 B, 72 B under: 4 layers' attention
    # k / v / q scales and zero points, which vLLM deletes after loading.
    measured = json.loads((DATA / "oracle" / "weight-bytes.json").read_text())["cases"][
        "command-r7b-pp2"]["stages"]
    assert [s["outer"] for s in measured] == [["model.embed_tokens.weight",
                                               "model.norm.weight"]] * 2
    stages = _stages(load_spec(str(DATA / "oracle" / "command-r7b")))
    assert [b.total - b.rope_cache - b.attention_scales for b in stages] == [107_913_472] * 2
    assert [s["params"] for s in measured] == [107_913_472 + 4 * 18] * 2


@pytest.mark.parametrize(("model", "pp", "refused"), [
    # The qwen3-vl-30b-a3b shrink (4 layers, deepstack_visual_indexes [1, 2, 3]) at PP 2: stage
    # 1 starts at layer 2 < 3, and vLLM 0.32's CPU build stopped in Qwen3VLMoeForConditional-
    # Generation.__init__ (models/qwen3_vl_moe.py:293-300, AssertionError "start_layer should be
    # greater than or equal to len(deepstack_visual_indexes)"; wgap26's PP 2 probe, 2026-12-04).
    (str(DATA / "oracle" / "qwen3-vl-30b-a3b"), 2, True),
    # Qwen/Qwen3-VL-30B-A3B (48 layers, 3 deepstack indexes): 48 // 16 = 3 layers on the first
    # stage of 16, allowed; 17 stages: 48 // 17 = 2 (remainder 14, not 16): refused.
    (str(DATA / "configs" / "mm" / "qwen3-vl-30b-a3b.json"), 16, False),
    (str(DATA / "configs" / "mm" / "qwen3-vl-30b-a3b.json"), 17, True),
])
def test_qwen3_vl_stages_start_after_the_deepstack_layers(model: str, pp: int,
                                                          refused: bool) -> None:
    spec = load_spec(model)
    inputs = PlanInputs(context=4096, pp=pp, kv_budget_bytes=10 * GiB)
    if refused:
        with pytest.raises(InputError, match="deepstack_visual_indexes"):
            plan_capacity(spec, inputs)
    else:
        assert len(plan_capacity(spec, inputs).stages) == pp
