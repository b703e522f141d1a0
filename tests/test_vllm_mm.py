"""vLLM's multimodal encoder profile (kvplan.engines.vllm.mm), against numbers worked out by hand
from real configs and the vLLM source it follows (gpu_model_runner.py profile_run,
multimodal/encoder_budget.py, models/qwen3_vl.py, models/siglip.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.engines.base import Engine, plan_inputs
from kvplan.engines.vllm.budget import VllmBudget
from kvplan.engines.vllm.mm import (
    encoder_profiler,
    mm_items_per_batch,
    parse_mm_limits,
    vllm_encoder_profile,
)
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.hf_config import load_config
from kvplan.sources.resolve import load_spec

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"
GiB = 1 << 30


def qwen35_9b():
    return load_config(CONFIGS / "qwen3.5-9b.json")[0]


def test_qwen35_vision_config_is_read() -> None:
    # Qwen3.5-9B's vision_config: depth 27, hidden 1152, intermediate 4304, 16 heads, patch 16,
    # 2 x 2 merge, temporal patch 2, out_hidden_size 4096 (the language model's hidden), no
    # deepstack layers; the bundled spec carries the same section.
    vit = qwen35_9b().qwen_vit
    assert vit is not None and load_spec("qwen3.5-9b").qwen_vit == vit
    assert (vit.depth, vit.hidden_size, vit.intermediate_size, vit.num_heads) == (27, 1152, 4304,
                                                                                  16)
    assert (vit.merge_unit, vit.pixels_per_patch, vit.out_hidden_size) == (32, 1536, 4096)
    assert vit.deepstack_layers == 0
    # Qwen3.5-27B: the same tower, merged into a 5120-wide language model.
    assert load_config(CONFIGS / "qwen3.5-27b.json")[0].qwen_vit.out_hidden_size == 5120
    # Qwen3.6-35B-A3B's published config.json: the same tower, merged into a 2048-wide MoE.
    assert load_config(CONFIGS / "qwen3.6-35b-a3b.json")[0].qwen_vit.out_hidden_size == 2048
    # Text models and configs without a vision_config get none.
    assert load_config(CONFIGS / "qwen3-8b.json")[0].qwen_vit is None
    assert load_config(CONFIGS / "qwen3.6-35b-a3b-text.json")[0].qwen_vit is None


def test_qwen35_largest_items() -> None:
    # Image: preprocessor max_pixels 16,777,216 (4096 x 4096) // (16 x 2)^2 = 16,384 tokens,
    # x 2^2 = 65,536 patches. Video: two frames of 25,165,824 / 2 px, one temporal patch:
    # 12,582,912 // 1,024 = 12,288 tokens, 49,152 patches.
    image, video = encoder_profiler(qwen35_9b()).modalities()
    assert (image.name, image.tokens_per_item, image.patches_per_item) == ("image", 16_384,
                                                                           65_536)
    assert (video.name, video.tokens_per_item, video.patches_per_item) == ("video", 12_288,
                                                                           49_152)


def test_qwen35_encoder_peak_by_hand() -> None:
    # One image (8,192 batched tokens: budget max(8,192, 16,384) = 16,384 // 16,384 = 1 item).
    # Per patch, in bf16: pixels 3 x 2 x 16^2 = 1,536 + position embeddings 1,152 + rotary
    # cos/sin 72 (head_dim 1152 / 16) + the block's widest point, the attention output
    # projection: 3h + 8h = 11 x 1,152 = 12,672 (the MLP's 2h + 2I = 10,912 is narrower):
    # 15,432 elements x 2 B = 30,864 B; x 65,536 patches = 2,022,703,104 B (1.88 GiB).
    # Outputs kept: 16,384 x 4,096 x 2 B = 134,217,728 B. TP 2: 3h + 8h / 2 = 8,064 ->
    # 10,824 x 2 x 65,536 = 1,418,723,328 B.
    spec = qwen35_9b()
    kw = {"max_num_batched_tokens": 8192, "max_num_seqs": 256, "max_model_len": 262_144,
          "limits": {}, "element_bytes": 2}
    one = vllm_encoder_profile(spec, tp=1, **kw)
    assert (one.modality, one.items, one.budget_tokens, one.patches) == ("image", 1, 16_384,
                                                                        65_536)
    assert one.peak_bytes == 2_022_703_104
    assert one.output_bytes == 134_217_728
    assert vllm_encoder_profile(spec, tp=2, **kw).peak_bytes == 1_418_723_328


def test_gemma3_siglip_profile_by_hand() -> None:
    # gemma-3-27b (SigLIP: hidden 1152, MLP 4304, image 896, patch 14; 256 tokens per image):
    # budget max(8,192, 256) = 8,192 // 256 = 32 items (1,024 requests x min(999, 8,192 // 256)
    # allow more): 32 x (896 / 14)^2 = 131,072 patches. Per patch: pixels 3 x 14^2 = 588 + the
    # MLP's 2h + 2I = 10,912 (the attention's 3h + 4h = 8,064 is narrower) = 11,500 x 2 B =
    # 23,000 B -> 3,014,656,000 B (2.81 GiB). Outputs: 32 x 256 x 5,376 x 2 B = 88,080,384 B.
    spec = load_spec("gemma-3-27b")
    p = vllm_encoder_profile(spec, max_num_batched_tokens=8192, max_num_seqs=1024,
                             max_model_len=8192, limits={}, tp=1, element_bytes=2)
    assert (p.items, p.tokens_per_item, p.patches) == (32, 256, 131_072)
    assert p.peak_bytes == 3_014_656_000 and p.output_bytes == 88_080_384


def test_items_per_batch_rule() -> None:
    # MultiModalBudget._get_max_items: max(1, min(budget // T, max_num_seqs x max(1, min(limit,
    # max_model_len // T)))), budget = max(max_num_batched_tokens, T).
    assert mm_items_per_batch(tokens_per_item=256, max_num_batched_tokens=8192, max_num_seqs=4,
                              max_model_len=8192, limit=2) == (8, 8192)
    assert mm_items_per_batch(tokens_per_item=16_384, max_num_batched_tokens=2048,
                              max_num_seqs=256, max_model_len=4096, limit=999) == (1, 16_384)
    assert mm_items_per_batch(tokens_per_item=1000, max_num_batched_tokens=8192,
                              max_num_seqs=1, max_model_len=500, limit=999) == (1, 8192)
    # A real log (index file id 56336202239; Qwen3-VL-8B, a 2026 vLLM dev build, offline LLM
    # with max_num_seqs 5, limit_mm_per_prompt {'image': 1}, mm_processor_kwargs max_pixels
    # 1,003,520): "Encoder cache will be initialized with a budget of 8192 tokens, and profiled
    # with 5 image items". 1,003,520 // 32^2 = 980 tokens per image: 8,192 // 980 = 8 fit the
    # budget, but 5 requests x min(1, 4,096 // 980) = 5 bound it.
    assert mm_items_per_batch(tokens_per_item=980, max_num_batched_tokens=8192, max_num_seqs=5,
                              max_model_len=4096, limit=1) == (5, 8192)


def test_items_rule_against_vllm_budgets_of_qwen2_vl() -> None:
    # vLLM 0.32's own MultiModalBudget on the Qwen2.5-VL-7B and olmOCR (Qwen2-VL) oracle shrinks
    # with the published preprocessor_config.json (tests/oracle/vllm_mm_budget.py, recorded in
    # tests/data/oracle/mm-budget.json; the CPU worker never runs profile_run, so it logs no
    # "Encoder cache will be initialized" line). By hand from models/qwen2_vl.py (0.32): the
    # largest image is max_pixels 12,845,056 // 28^2 = 16,384 tokens (3,584 x 3,584 px,
    # get_image_size_with_most_features :1079); the dummy video repeats that frame, as many
    # frames as keep ceil(frames / 2) x 16,384 <= max_model_len (frames padded to the temporal
    # patch, :1031; _get_max_video_frames :1141 from 1 frame; at most 14, :120, :1164; one video,
    # encoder_budget.py:93). max_model_len 8,192 or 16,384: 1 or 2 frames, one temporal patch,
    # 16,384 tokens, a tie won by the later name (get_modality_with_max_tokens :184): video;
    # 32,768: 4 frames, 32,768 tokens; 128,000: 14 frames, 7 x 16,384 = 114,688 tokens.
    # Items and budget: mm.py's rule (MultiModalBudget._get_max_items :142) on those tokens.
    # This checks the rule and the recorded tokens; kvplan does not model the Qwen2-VL tower's
    # profile yet (hf_wrappers.py unprofiled_tower_assumption).
    video_tokens = {8192: 16_384, 16_384: 16_384, 32_768: 32_768, 128_000: 114_688}
    data = json.loads((Path(__file__).resolve().parent / "data" / "oracle"
                       / "mm-budget.json").read_text())
    seen = 0
    for cases in data["cases"].values():
        for case in cases:
            assert case["tokens_per_item"] == {"image": 16_384,
                                               "video": video_tokens[case["max_model_len"]]}
            assert case["modality"] == "video"
            items, budget = mm_items_per_batch(
                tokens_per_item=case["tokens_per_item"]["video"],
                max_num_batched_tokens=case["max_num_batched_tokens"],
                max_num_seqs=case["max_num_seqs"], max_model_len=case["max_model_len"],
                limit=999)
            assert (items, budget) == (case["items"], case["budget_tokens"])
            seen += 1
    assert seen == 9


def test_limits_choose_the_profiled_modality() -> None:
    # image=0 leaves the video (12,288 tokens: budget max(8,192, 12,288), one item, 49,152
    # patches); both 0: no encoder profile (compute_mm_encoder_budget returns 0, 0).
    spec = qwen35_9b()
    kw = {"max_num_batched_tokens": 8192, "max_num_seqs": 256, "max_model_len": 32_768,
          "tp": 1, "element_bytes": 2}
    video = vllm_encoder_profile(spec, limits={"image": 0}, **kw)
    assert (video.modality, video.items, video.budget_tokens, video.patches) == (
        "video", 1, 12_288, 49_152)
    assert vllm_encoder_profile(spec, limits={"image": 0, "video": 0}, **kw) is None
    assert vllm_encoder_profile(load_spec("llama-3.1-8b"), limits={}, **kw) is None


def _reserve(spec, **kw):
    inputs = plan_inputs(context=kw.pop("context", 8192), engine=Engine.vllm, **kw)
    return VllmBudget().reserve(spec, inputs).to_dict()


def test_reserve_takes_the_larger_phase() -> None:
    # Qwen3.5-9B on an L40S, 0.19.0, the offline defaults (256 requests, 8,192 tokens): the
    # language model's peak is the sampler's (0.13 GiB + 256 x 248,320 x 14.37 B = 0.98 GiB);
    # the encoder's 2,022,703,104 B is larger than it plus the 0.125 GiB of outputs, so the
    # three parts sum to the encoder's peak exactly.
    parts = _reserve(qwen35_9b(), total_bytes=get_gpu("L40S").total_bytes,
                     engine_version="0.19.0", max_num_seqs=256, context=262_144)
    peak = parts["activation"]["bytes"] + parts["sampler"]["bytes"]
    assert peak + parts["mm_encoder"]["bytes"] == 2_022_703_104
    assert "1 image item(s) of 16,384 tokens" in parts["mm_encoder"]["rule"]
    # Gemma-3-27B at 1,024 requests: the sampler (3.72 GiB) stays the peak; the part is the
    # outputs held through it, 88,080,384 B.
    gemma = _reserve(load_spec("gemma-3-27b"), total_bytes=get_gpu("H100-80GB").total_bytes,
                     engine_version="0.19.0", max_num_seqs=1024)
    assert gemma["mm_encoder"]["bytes"] == 88_080_384
    # Off with --skip-mm-profiling or every limit 0.
    for kw in ({"skip_mm_profiling": True},
               {"limit_mm_per_prompt": (("image", 0), ("video", 0))}):
        assert "mm_encoder" not in _reserve(qwen35_9b(), engine_version="0.19.0", **kw)


@pytest.mark.parametrize(("version", "profiled"), [("0.24.0", True), ("0.26.0", False),
                                                   ("0.27.0", True), ("0.32.0", True)])
def test_model_runner_v2_profiles_the_encoder_from_0_27(version, profiled) -> None:
    # Gemma-3-27B is dense and not hybrid: model runner V1 to 0.24, V2 from 0.25, whose
    # profile_run runs the encoder only from 0.27 (gpu/mm/encoder_runner.py).
    parts = _reserve(load_spec("gemma-3-27b"), total_bytes=get_gpu("H100-80GB").total_bytes,
                     engine_version=version, max_num_seqs=1024)
    assert ("mm_encoder" in parts) is profiled


def test_parse_limits() -> None:
    assert parse_mm_limits("image=0,video=0") == (("image", 0), ("video", 0))
    assert parse_mm_limits('{"image": 2, "video": {"count": 0}}') == (("image", 2),
                                                                       ("video", 0))
    for bad in ("image", "image=-1", "image=x", '{"image": true}', "{nope", "[1]"):
        with pytest.raises(InputError):
            parse_mm_limits(bad)


def test_cli_limit_and_bad_value() -> None:
    from kvplan.cli import app

    runner = CliRunner()
    base = ["estimate", "qwen3.5-9b", "--gpu", "L40S", "--engine-version", "0.19.0",
            "--context", "32768", "--format", "json"]
    with_mm = json.loads(runner.invoke(app, base).stdout)
    without = json.loads(runner.invoke(app, [*base, "--limit-mm-per-prompt",
                                             "image=0,video=0"]).stdout)
    assert "mm_encoder" in with_mm["reserve_breakdown"]
    assert "mm_encoder" not in without["reserve_breakdown"]
    # Both limits 0: no encoder profile, and no tower either (qwen3_5.py:513 builds it under
    # _mark_tower_model, kvplan.engines.vllm.towers): its 912,610,784 B of weights go too.
    assert with_mm["weights_breakdown"]["vision"] == 912_610_784
    assert without["weights_breakdown"]["vision"] == 0
    assert without["kv_budget_bytes"] - with_mm["kv_budget_bytes"] == \
        with_mm["reserve_breakdown"]["mm_encoder"]["bytes"] + 912_610_784
    bad = runner.invoke(app, [*base, "--limit-mm-per-prompt", "image=lots"])
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "--limit-mm-per-prompt" in bad.stderr


def test_unread_towers_add_nothing_and_say_so() -> None:
    # Mistral-Small-3.1's Pixtral tower is not described: no encoder part, and the import says
    # the profile is missing from the reserve. Qwen2.5-VL's tower is weighed but not profiled:
    # its assumption says so (and goes where vLLM profiles no encoder,
    # tests/test_vllm_towers_unbuilt.py), with no warning, which would be false for a server
    # started with --limit-mm-per-prompt 0. Gemma-3-27B's, Llama-4's and Qwen3.5's towers are
    # read and profiled: neither.
    _, warnings = load_config(CONFIGS / "mistral-small-3.1-24b.json")
    assert any("encoder profile is not in its reserve" in w for w in warnings)
    spec, warnings = load_config(CONFIGS / "qwen2.5-vl-7b.json")
    assert spec.qwen_vit is None and spec.vision is None and spec.qwen2_vit is not None
    assert not any("encoder profile" in w for w in warnings)
    assert [a.value for a in spec.assumptions] == ["encoder profile not in the reserve"]
    for name in ("gemma-3-27b", "qwen3.5-9b", "llama-4-scout"):
        assert not any("encoder profile" in w for w in load_config(CONFIGS / f"{name}.json")[1])


def test_qwen_vit_section_is_validated() -> None:
    from kvplan._util.errors import SpecError
    from kvplan.sources.hf_config import spec_mapping_from_config
    from kvplan.sources.spec_yaml import parse_spec

    mapping, _ = spec_mapping_from_config(json.loads((CONFIGS / "qwen3.5-9b.json").read_text()),
                                          path="qwen3.5-9b.json")
    assert parse_spec(mapping, path="x.yaml", spec_id="x").qwen_vit == qwen35_9b().qwen_vit
    for change, field in (({"num_heads": 7}, "num_heads"), ({"kind": "qwen2_vl"}, "kind"),
                          ({"windows": 1}, "windows"), ({"depth": 0}, "depth")):
        bad = dict(mapping, qwen_vit={**mapping["qwen_vit"], **change})
        with pytest.raises(SpecError, match=field):
            parse_spec(bad, path="x.yaml", spec_id="x")


def test_encoder_data_parallel_mode() -> None:
    # --mm-encoder-tp-mode data at TP 2: Qwen3.5's one image goes whole to one rank, at full
    # width: the TP-1 peak, 2,022,703,104 B (1,418,723,328 split over two ranks). Gemma-3's
    # SigLIP does not support it (config/model.py falls back to weights): unchanged.
    kw = {"max_num_batched_tokens": 8192, "max_num_seqs": 256, "max_model_len": 32_768,
          "limits": {}, "tp": 2, "element_bytes": 2}
    assert vllm_encoder_profile(qwen35_9b(), encoder_data_parallel=True,
                                **kw).peak_bytes == 2_022_703_104
    gemma = load_spec("gemma-3-27b")
    assert vllm_encoder_profile(gemma, encoder_data_parallel=True, **kw) == \
        vllm_encoder_profile(gemma, **kw)


def test_qwen3_vl_deepstack_features() -> None:
    # Qwen3-VL-8B-Instruct's vision_config (a public copy: index file id 60468266955): the same
    # tower as Qwen3.5's plus deepstack_visual_indexes [8, 16, 24]. Their merged features stay
    # alive through the last blocks: 3 x 4,096 / 2^2 = 3,072 more elements per patch, 18,504 in
    # all x 2 B x 65,536 = 2,425,356,288 B; the outputs carry them too: 16,384 x 4,096 x (1 + 3)
    # x 2 B = 536,870,912 B.
    from kvplan.engines.vllm.mm import QwenViTProfiler
    from kvplan.model.spec import QwenViTSpec

    vit = QwenViTSpec(kind="qwen3_vl", depth=27, hidden_size=1152, intermediate_size=4304,
                      num_heads=16, patch_size=16, spatial_merge_size=2, temporal_patch_size=2,
                      out_hidden_size=4096, deepstack_layers=3)
    p = QwenViTProfiler(vit)
    assert p.per_patch_elements(1) == 18_504
    assert p.peak_bytes(65_536, tp=1, element_bytes=2) == 2_425_356_288
    assert p.output_bytes(16_384, element_bytes=2) == 536_870_912


def test_llama4_vision_profile_by_hand() -> None:
    # Llama-4-Scout's vision_config (tests/data/configs/llama-4-scout.json: hidden 1408, MLP
    # 5632, image 336, patch 14, pixel_shuffle_ratio 0.5; text hidden 5120), vLLM 0.15.1
    # mllama4.py. The largest image is 16 x 1 tiles + 1 global tile = 17 tiles of
    # (336 / 14)^2 = 576 patches + 1 CLS = 577 positions; 576 / (1 / 0.5^2) = 144 tokens a tile:
    # 17 x 144 = 2,448 tokens an image.
    # max_num_batched_tokens 2,048 (the inference-sim run): budget max(2,048, 2,448) = 2,448,
    # 2,448 // 2,448 = 1 image (128 requests x min(999, 4,096 // 2,448 = 1) allow more):
    # 17 x 577 = 9,809 positions. Per position at TP 2: pixels 3 x 14^2 = 588 + the rotary's
    # 2h + 13h / 2 = 2,816 + 9,152 = 11,968 (the MLP's 2h + 2 x 5,632 / 2 = 8,448 is narrower)
    # = 12,556 x 2 B = 25,112 B -> 246,323,608 B. Outputs: 2,448 x 5,120 x 2 B = 25,067,520 B.
    spec = load_spec("llama-4-scout")
    p = vllm_encoder_profile(spec, max_num_batched_tokens=2048, max_num_seqs=128,
                             max_model_len=4096, limits={}, tp=2, element_bytes=2)
    assert (p.modality, p.items, p.tokens_per_item, p.budget_tokens, p.patches) == (
        "image", 1, 2448, 2448, 9809)
    assert p.peak_bytes == 246_323_608 and p.output_bytes == 25_067_520
    # max_num_batched_tokens 8,192, TP 4 (the llm-d-planner 0.19.0 log): 8,192 // 2,448 = 3
    # images, 51 tiles, 29,427 positions; per position 588 + max(2,816 + 13 x 1,408 // 4 =
    # 7,392, 2,816 + 2 x 5,632 // 4 = 5,632) = 7,980 x 2 B -> 469,654,920 B; outputs
    # 3 x 2,448 x 5,120 x 2 B = 75,202,560 B.
    p = vllm_encoder_profile(spec, max_num_batched_tokens=8192, max_num_seqs=1024,
                             max_model_len=8192, limits={}, tp=4, element_bytes=2)
    assert (p.items, p.patches) == (3, 29_427)
    assert p.peak_bytes == 469_654_920 and p.output_bytes == 75_202_560
    # --mm-encoder-tp-mode data at TP 4: the 51 tiles split evenly, ceil(51 / 4) = 13 tiles on
    # the busiest rank, 13 x 577 = 7,501 positions at full width: 588 + max(2h + 13h,
    # 2h + 2I) = 588 + 2,816 + 18,304 = 21,708 x 2 B -> 325,663,416 B.
    p = vllm_encoder_profile(spec, max_num_batched_tokens=8192, max_num_seqs=1024,
                             max_model_len=8192, limits={}, tp=4, element_bytes=2,
                             encoder_data_parallel=True)
    assert p.peak_bytes == 325_663_416
    # image=0: no profile, as vLLM ("Encoder cache will not be initialized").
    assert vllm_encoder_profile(spec, max_num_batched_tokens=8192, max_num_seqs=1024,
                                max_model_len=8192, limits={"image": 0}, tp=4,
                                element_bytes=2) is None


def test_llama4_vision_config_is_read() -> None:
    spec, _ = load_config(CONFIGS / "llama-4-scout.json")
    v = spec.vision
    assert v is not None and v.kind == "llama4" and v.projector == "llama4"
    assert (v.hidden_size, v.intermediate_size, v.num_hidden_layers, v.num_attention_heads,
            v.image_size, v.patch_size, v.patches_per_token, v.projector_input_dim,
            v.projector_output_dim, v.vision_output_dim, v.max_tiles) == (
        1408, 5632, 34, 16, 336, 14, 4, 4096, 4096, 4096, 16)
    assert v.tokens_per_tile == 144
    # The bundled spec carries the same tower.
    assert load_spec("llama-4-scout").vision == v
    from kvplan._util.errors import SpecError
    from kvplan.sources.hf_config import spec_mapping_from_config

    config = json.loads((CONFIGS / "llama-4-scout.json").read_text())
    for change, field in (({"pixel_shuffle_ratio": 0.3}, "pixel_shuffle_ratio"),
                          ({"multi_modal_projector_bias": True}, "multi_modal_projector_bias")):
        bad = dict(config, vision_config={**config["vision_config"], **change})
        with pytest.raises(SpecError, match=field):
            spec_mapping_from_config(bad, path="x.json")
