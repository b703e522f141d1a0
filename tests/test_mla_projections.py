"""MLA's down-projections (q_a_proj, kv_a_proj_with_mqa) run whole on every attention-TP rank,
q_b / kv_b / o_proj split (kvplan.perf.flops.AttentionFlops.projections_on_rank, read in
vLLM's, SGLang's and TensorRT-LLM's MLA modules): DeepSeek-V3 at TP 8 by hand."""

from __future__ import annotations

import pytest

from kvplan.hardware.gpus import get_gpu
from kvplan.perf.flops import MLAForm, attention_flops
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_model

# DeepSeek-V3 (config.json): hidden 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512,
# qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128. One token, one layer:
#   q_a   2 x 7168 x 1536           = 22,020,096   (replicated)
#   kv_a  2 x 7168 x (512 + 64)     =  8,257,536   (replicated)
#   q_b   2 x 1536 x 128 x 192      = 75,497,472   (column-split)
#   o     2 x 128 x 128 x 7168      = 234,881,024  (row-split)
#   absorbed decode adds W_UK and W_UV: 2 x 128 x 128 x 512 x 2 = 33,554,432 (split by heads)
REPLICATED = 22_020_096 + 8_257_536  # 30,277,632
SPLIT_NAIVE = 75_497_472 + 234_881_024  # 310,378,496: the prefill (naive) form
ABSORB = 33_554_432


def test_deepseek_v3_projections_on_a_tp8_rank() -> None:
    spec, _ = load_model("deepseek-v3")
    pre = attention_flops(spec, context=8192, phase="prefill", mla_form=MLAForm.naive)
    assert pre.replicated == REPLICATED
    assert pre.projections == REPLICATED + SPLIT_NAIVE  # 340,656,128
    # 310,378,496 / 8 + 30,277,632 = 38,797,312 + 30,277,632 = 69,074,944 (was 42,582,016)
    assert pre.projections_on_rank(8) == 69_074_944
    assert pre.projections_on_rank(1) == pre.projections
    dec = attention_flops(spec, context=4096, mla_form=MLAForm.absorbed)
    # (310,378,496 + 33,554,432) / 8 + 30,277,632 = 42,991,616 + 30,277,632 = 73,269,248
    assert dec.projections_on_rank(8) == 73_269_248


def test_head_attention_splits_every_projection() -> None:
    spec, _ = load_model("Qwen/Qwen3-8B")
    f = attention_flops(spec, context=1024)
    assert f.replicated == 0
    assert f.projections_on_rank(4) == pytest.approx(f.projections / 4)


def test_step_time_charges_the_replicated_part_whole() -> None:
    # An 8,192-token DeepSeek-V3 prefill on H200 is compute-bound in its projections at TP 1 and
    # TP 8 alike, so their times are in the ratio of the FLOPs a rank runs:
    # 69,074,944 / 340,656,128 = 0.20277 (dividing everything by 8 would give 0.125).
    spec, _ = load_model("deepseek-v3")
    gpu = get_gpu("H200")
    kw = {"tokens": 8192, "context": 8192, "requests": 1, "phase": "prefill"}
    one = step_time(spec, gpu, layout=Layout(tp=1), **kw).by_op["attention_proj"]
    eight = step_time(spec, gpu, layout=Layout(tp=8), **kw).by_op["attention_proj"]
    assert eight / one == pytest.approx(69_074_944 / 340_656_128, rel=1e-9)
