"""kvplan.perf (costmodel, roofline, op_counts, efficiency, serving): the summed-operation
roofline, layouts, MTP, and public serving numbers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan import load_spec
from kvplan._util.dtypes import GemmMath
from kvplan._util.errors import InputError
from kvplan.analysis.compare import compare_schemes
from kvplan.cli.app import app
from kvplan.hardware.gpus import get_gpu
from kvplan.model.recurrent import Mamba1
from kvplan.perf.costmodel import CostInputs, predict, tokens_per_step
from kvplan.perf.efficiency import DEFAULT_EFFICIENCY, Efficiency
from kvplan.perf.flops import MLAForm, decode_cost, recurrent_state_flops_per_token
from kvplan.perf.layout import Layout
from kvplan.perf.op_counts import (
    RECURRENT_MIXER_OPS,
    eager_prefill_ops,
    fused_shared_expert,
    recurrent_mixer_ops,
    topk_kernels,
)
from kvplan.perf.roofline import step_time
from kvplan.perf.serving import (
    prefill_launch_ms,
    serving_tpot_ms,
    serving_ttft_ms,
    sglang_chunked_prefill_tokens,
)
from kvplan.perf.weight_bytes import bytes_per_param
from kvplan.sources.hf_config import load_config
from tests.benches import cost_bench as bench

H100, H200 = get_gpu("H100-80GB"), get_gpu("H200")
IDEAL = Efficiency(hbm=1.0, fp8_gemm_hbm=1.0, gemm=1.0, attention=1.0, kernel_floor_s=0.0,
                   prefill_launch_s=0.0, layer_overhead_s=0.0)
# vLLM and TensorRT-LLM launch prefill kernels from CUDA graphs or a compiled engine: no launch
# time beyond the graph floor (4 us); SGLang launches them eagerly (the default
# prefill_launch_s, 70 us per launched op).
GRAPH_PREFILL = Efficiency(prefill_launch_s=0.0)


# ---- public measurements (not in the repository). The dense 1-GPU ones (Qwen3-8B, gpt-fast's
# Llama-2-7B) are the rows the 35 us layer overhead is fitted on (LAYER_OVERHEAD_FIT); the others
# are outside the fit, held out unless of a fitted row's configuration, some shaped by a rule
# written for them (tests/benches/fitted_rows.py SHAPED_BY, cost-bench.md) -------------------

def _serving(spec_id: str, gpu, layout: Layout, *, batch: int, isl: int, osl: int,
             disaggregated: bool = False, eager_prefill: bool = True) -> float:
    spec = load_spec(spec_id)
    decode = predict(spec, gpu, CostInputs(context=isl + osl // 2, batch=batch, layout=layout))
    if disaggregated:
        return decode.tpot_ms
    prefill = predict(spec, gpu, CostInputs(
        context=isl, layout=layout,
        efficiency=Efficiency() if eager_prefill else GRAPH_PREFILL)).ttft_ms
    return serving_tpot_ms(decode.tpot_ms, prefill, concurrency=batch, output_len=osl)


def test_dense_single_gpu_qwen3_8b_vllm() -> None:
    # https://github.com/gpustack/gpustack/blob/main/docs/performance-lab/qwen3-8b/h100-latency.md
    # vLLM 0.11, one H100 SXM, ShareGPT (23,260 in / 22,061 out over 100 prompts), concurrency 4:
    # "Mean TPOT (ms): 7.38".
    predicted = _serving("qwen3-8b", H100, Layout(), batch=4, isl=233, osl=221,
                         eager_prefill=False)
    assert 0.75 <= 7.38 / predicted <= 1.33


@pytest.mark.parametrize("concurrency,measured", [(8, 12.8), (16, 17.2), (32, 25.6), (64, 34.6)])
def test_tp8_moe_deepseek_r1_sglang(concurrency: int, measured: float) -> None:
    # https://github.com/SemiAnalysisAI/InferenceX/issues/870: DeepSeek-R1-0528 FP8, SGLang
    # 0.5.7, TP 8 on H200, 1k in / 1k out: "Mean TPOT (ms)" 12.8 / 17.2 / 25.6 / 34.6 at
    # concurrency 8 / 16 / 32 / 64.
    predicted = _serving("deepseek-v3", H200, Layout(tp=8), batch=concurrency, isl=1024,
                         osl=1024)
    assert 0.75 <= measured / predicted <= 1.33


def test_large_ep_deepseek_r1_sglang_gb200() -> None:
    # https://lmsys.org/blog/2025-09-25-gb200-part-2: 9,087 output tokens/s per GPU (BF16
    # attention, FP8 GEMMs) at 2,000-token inputs; decode with DP attention + EP 48 on 48 GB200s,
    # 768 requests per GPU (--max-running-requests 36864, --cuda-graph-bs 768 in the decode
    # command of https://github.com/sgl-project/sglang/issues/10903).
    measured = 768 / 9087 * 1e3
    predicted = _serving("deepseek-v3", get_gpu("GB200"), Layout(tp=48, ep=48, dp_attention=True),
                         batch=768, isl=2000, osl=100, disaggregated=True)
    assert 0.5 <= measured / predicted <= 2.0


@pytest.mark.parametrize("engine,concurrency,measured", [
    ("vLLM 0.11", 1, 7.28), ("vLLM 0.11", 2, 7.37), ("vLLM 0.11", 8, 7.71),
    ("SGLang 0.5.3", 4, 7.19), ("TensorRT-LLM 1.2.0rc1", 4, 7.67)])
def test_dense_single_gpu_qwen3_8b_engines(engine: str, concurrency: int,
                                           measured: float) -> None:
    # Same page as above: vLLM's "Baseline benchmark results" at BS=1/2/8 and the SGLang and
    # TensorRT-LLM engine runs at concurrency 4 ("Mean TPOT (ms)").
    predicted = _serving("qwen3-8b", H100, Layout(), batch=concurrency, isl=233, osl=221,
                         eager_prefill=engine.startswith("SGLang"))
    assert 0.75 <= measured / predicted <= 1.33, engine


def test_dense_single_gpu_qwen3_8b_fp8_sglang() -> None:
    # Same page: Qwen/Qwen3-8B-FP8 (block-scaled FP8, 128 x 128) under SGLang 0.5.3 at
    # concurrency 4, "Mean TPOT (ms): 5.65".
    fp8 = json.dumps({"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                      "weight_block_size": [128, 128]})
    spec = replace(load_spec("qwen3-8b"), quantization_json=fp8)
    decode = predict(spec, H100, CostInputs(context=233 + 221 // 2, batch=4))
    prefill = predict(spec, H100, CostInputs(context=233)).ttft_ms
    predicted = serving_tpot_ms(decode.tpot_ms, prefill, concurrency=4, output_len=221)
    assert 0.75 <= 5.65 / predicted <= 1.33


def test_dense_single_gpu_llama2_7b_gpt_fast() -> None:
    # https://github.com/pytorch-labs/gpt-fast/blob/main/README.md: Llama-2-7B "Base" on one
    # A100-80GB (power-limited to 330 W), batch 1, 5-token prompt: 104.9 tokens/s.
    predicted = _serving("llama-2-7b", get_gpu("A100-80GB"), Layout(), batch=1, isl=5, osl=200,
                         eager_prefill=False)
    assert 0.75 <= (1e3 / 104.9) / predicted <= 1.33


@pytest.mark.parametrize("concurrency,isl,osl,measured", [
    (1, 610, 422, 18.63), (16, 496, 510, 26.09), (100, 500, 505, 47.19), (1, 4194, 422, 18.80),
    (16, 3750, 521, 36.94), (64, 3981, 531, 74.95)])
def test_dense_tp8_llama_70b_sglang_a100(concurrency: int, isl: int, osl: int,
                                         measured: float) -> None:
    # https://github.com/sgl-project/sgl-cookbook/blob/main/docs/autoregressive/Llama/Llama3.1.md
    # Llama-3.1-70B, 8x A100, TP 8, SGLang 0.5.6, random 1000 or 8000 in / 1000 out (the run's
    # means, e.g. 41,941 / 4,220 tokens over 10 requests; 1,273,893 / 170,000 over 320): "Mean
    # TPOT (ms)". Held out from the layer-overhead and prefill-floor fits. The 1000-token runs at
    # concurrency 16 / 100 (39,668 / 40,805 tokens over 80 requests, 249,831 / 252,662 over
    # 500) read 1.44 / 1.55 with prefill at the graph floor: SGLang's prefills, launched
    # eagerly, stop the decoding batch for longer (examples/cost-bench.md).
    predicted = _serving("llama-3.1-70b", get_gpu("A100-80GB"), Layout(tp=8),
                         batch=concurrency, isl=isl, osl=osl)
    assert 0.75 <= measured / predicted <= 1.33


@pytest.mark.parametrize("isl,osl,measured", [(922, 7372, 10.93), (7372, 922, 12.05)])
def test_tp8_moe_deepseek_r1_sglang_concurrency_4(isl: int, osl: int, measured: float) -> None:
    # https://github.com/SemiAnalysisAI/InferenceX/issues/870, the concurrency-4 table: 1k/8k and
    # 8k/1k "Mean TPOT (ms)". Its 1k/1k row (22.73 ms, slower than the issue's own concurrency-8
    # run) is outside the band. Mean lengths at the harness's --random-range-ratio 0.8: uniform
    # from int(0.8 x 1024) = 819 to 1024, mean 921.5 -> 922; 6553..8192 -> 7372.
    predicted = _serving("deepseek-v3", H200, Layout(tp=8), batch=4, isl=isl, osl=osl)
    assert 0.75 <= measured / predicted <= 1.33


@pytest.mark.parametrize("concurrency,isl,osl,measured", [
    (1, 610, 421, 10.12), (16, 496, 509, 16.36), (1, 610, 4445, 10.23), (16, 496, 3978, 14.82),
    (64, 497, 4065, 23.66), (1, 4194, 421, 10.31), (16, 3750, 520, 16.81),
    (64, 3981, 530, 32.50)])
def test_tp8_moe_qwen3_235b_sglang_b200(concurrency: int, isl: int, osl: int,
                                        measured: float) -> None:
    # https://github.com/sgl-project/sgl-cookbook/blob/main/docs/autoregressive/Qwen/Qwen3.md
    # Qwen3-235B-A22B-Instruct-2507 (bf16), 8x B200, TP 8, SGLang 0.5.6, random 1000/1000,
    # 1000/8000 and 8000/1000 (the run's mean lengths): "Mean TPOT (ms)". Held out from the
    # layer-overhead and prefill-floor fits. Its 1k/1k concurrency-100 row is outside the band
    # (1.53 with prefill at the graph floor, 0.61 at the eager floor fitted on DeepSeek).
    predicted = _serving("qwen3-235b-a22b", get_gpu("B200"), Layout(tp=8), batch=concurrency,
                         isl=isl, osl=osl)
    assert 0.75 <= measured / predicted <= 1.33


NIM_FP8 = json.dumps({"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "static"})


@pytest.mark.parametrize("concurrency,isl,osl,measured", [
    (1, 5000, 500, 18.58), (5, 5000, 500, 21.83), (25, 5000, 500, 38.75),
    (50, 5000, 500, 59.73), (1, 500, 2000, 18.91)])
def test_dense_tp2_llama_70b_fp8_nim(concurrency: int, isl: int, osl: int,
                                     measured: float) -> None:
    # https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance: NIM 1.8.0,
    # Llama-3.3-70B-Instruct (Llama-3.1-70B's architecture), "2 x H100 80G", "fp8 TP2", AIPerf
    # 5000 / 500 and 500 / 2000 tokens: ITL (ms). Held out from the layer-overhead fit.
    spec = replace(load_spec("llama-3.1-70b"), quantization_json=NIM_FP8)
    layout = Layout(tp=2)
    decode = predict(spec, H100, CostInputs(context=isl + osl // 2, batch=concurrency,
                                            layout=layout))
    prefill = predict(spec, H100, CostInputs(context=isl, layout=layout,
                                             efficiency=GRAPH_PREFILL)).ttft_ms  # TRT-LLM
    predicted = serving_tpot_ms(decode.tpot_ms, prefill, concurrency=concurrency,
                                output_len=osl)
    assert 0.75 <= measured / predicted <= 1.33
    if isl == 5000 and concurrency == 1:
        # The same row's TTFT, 406.77 ms: a 5,000-token prefill is compute-bound.
        assert 0.75 <= 406.77 / prefill <= 1.33


def test_prefill_llama_70b_tp8_a100_long_prompt() -> None:
    # Same SGLang cookbook page: concurrency 1, random 8000 (mean 4,194 tokens), "Mean TTFT
    # (ms): 395.25". A prefill this long is compute-bound, so ttft_ms (the prefill alone) is
    # comparable; short prompts are not (their TTFT is mostly the serving path, cost-bench.md).
    spec = load_spec("llama-3.1-70b")
    predicted = predict(spec, get_gpu("A100-80GB"),
                        CostInputs(context=4194, layout=Layout(tp=8))).ttft_ms
    assert 0.75 <= 395.25 / predicted <= 1.33


def test_large_ep_deepseek_v3_sglang() -> None:
    # https://lmsys.org/blog/2025-05-05-large-scale-ep/: 22,282 output tokens/s per 8-H100 decode
    # node at 2,000-token inputs, DP attention + EP 72, 256 requests per GPU
    # (--max-running-requests 18432 over 72 GPUs, https://github.com/sgl-project/sglang/issues/6017).
    measured = 256 / (22282 / 8) * 1e3
    predicted = _serving("deepseek-v3", H100, Layout(tp=72, ep=72, dp_attention=True),
                         batch=256, isl=2000, osl=100, disaggregated=True)
    assert 0.5 <= measured / predicted <= 2.0


# ---- the model's rules ------------------------------------------------------------------------

def test_sum_of_operations_is_at_least_the_one_max_roofline() -> None:
    spec = load_spec("llama-3.1-8b")
    for batch in (1, 64, 512):
        step = step_time(spec, H100, tokens=batch, context=4096, requests=batch, eff=IDEAL)
        bound = max(step.flops / H100.peak_bf16_flops_per_s, step.bytes / H100.hbm_bytes_per_s)
        assert step.seconds >= bound * (1 - 1e-9)


def test_fp8_peak_only_for_fp8_gemms() -> None:
    # DeepSeek-V3 stores its GEMM weights in FP8 but runs attention in bf16: a long compute-bound
    # prefill's attention takes FLOPs / bf16 peak, and half that with fp8 attention.
    spec = load_spec("deepseek-v3")
    kw = {"tokens": 32768, "context": 32768, "requests": 1, "phase": "prefill", "eff": IDEAL,
          "layout": Layout(tp=8)}
    bf16 = step_time(spec, H200, **kw).by_op["attention"]
    fp8 = step_time(spec, H200, fp8_attention=True, **kw).by_op["attention"]
    assert fp8 == pytest.approx(bf16 * H200.peak_bf16_flops_per_s / H200.peak_fp8_flops_per_s)
    # A bf16 model's GEMMs never see the FP8 peak.
    dense = load_spec("llama-3.1-8b")
    kw = {"tokens": 8192, "context": 8192, "requests": 1, "phase": "prefill", "eff": IDEAL}
    mlp = step_time(dense, H100, **kw).by_op["mlp"]
    flops = 8192 * 2 * 3 * 4096 * 14336 * 32  # gate, up, down over 32 layers
    assert mlp == pytest.approx(flops / H100.peak_bf16_flops_per_s)


def test_fp8_gemms_stream_weights_at_their_own_fraction() -> None:
    # FP8 (w8a8) GEMMs at decode sizes read their weights at fp8_gemm_hbm (0.69: DeepGEMM's
    # README, the median of its M = 64/128 rows on H800, 2,299 of 3,350 GB/s), bf16 GEMMs at hbm.
    # DeepSeek-V3 at batch 1 on TP8: each dense-MLP GEMM is memory-bound, so its time scales by
    # exactly 0.90 / 0.69; the attention over the cache (not a GEMM) keeps the hbm fraction.
    spec = load_spec("deepseek-v3")
    kw = {"tokens": 1, "context": 4096, "requests": 1, "layout": Layout(tp=8)}
    slow = step_time(spec, H200, eff=Efficiency(kernel_floor_s=0.0), **kw).by_op
    fast = step_time(spec, H200, eff=Efficiency(fp8_gemm_hbm=0.90, kernel_floor_s=0.0),
                     **kw).by_op
    assert slow["mlp"] == pytest.approx(fast["mlp"] * 0.90 / 0.69)
    assert slow["experts"] == pytest.approx(fast["experts"] * 0.90 / 0.69)
    assert slow["attention"] == pytest.approx(fast["attention"])
    # A bf16 model is unaffected.
    dense = load_spec("llama-3.1-8b")
    kw = {"tokens": 1, "context": 4096, "requests": 1}
    assert step_time(dense, H100, eff=Efficiency(fp8_gemm_hbm=0.5), **kw).seconds == \
        pytest.approx(step_time(dense, H100, **kw).seconds)


def test_kernel_floor_is_per_gemm_kernel() -> None:
    # DeepSeek-V3 on TP 8 at batch 1: one layer's attention projections hold 187,107,328
    # parameters (q_a 7168 x 1536 = 11,010,048; q_a norm 1,536; q_b 1536 x 128 x 192 =
    # 37,748,736; kv_a 7168 x 576 = 4,128,768; kv_a norm 512; kv_b 512 x 128 x 256 = 16,777,216;
    # o 128 x 128 x 7168 = 117,440,512). q_a and kv_a are replicated on every rank (SGLang
    # ReplicatedLinear fused_qkv_a_proj_with_mqa), the rest split: 15.1 + 172.0 / 8 = 36.6 MB of
    # FP8 per rank, ~11 us at 0.69 x 4.8 TB/s. SGLang runs them as 5 GEMMs (fused q_a + kv_a,
    # q_b, the W_UK and W_UV bmm of the absorbed form, o_proj: models/deepseek_v2.py), each an
    # FP8 GEMM of two kernels (its activation quantization first), each under the 4 us floor, so
    # the 61 layers cost 61 x 5 x 2 x 4 us = 2.44 ms, not 61 x ~11 us.
    spec = load_spec("deepseek-v3")
    kw = {"tokens": 1, "context": 4096, "requests": 1, "layout": Layout(tp=8)}
    assert step_time(spec, H200, **kw).by_op["attention_proj"] == pytest.approx(
        61 * 5 * 2 * 4e-6)
    bytes_only = step_time(spec, H200, eff=Efficiency(kernel_floor_s=0.0), **kw)
    assert bytes_only.by_op["attention_proj"] < 61 * 5 * 2 * 4e-6
    # The naive form (no absorb bmm) is 3 GEMMs, 6 kernels.
    naive = step_time(spec, H200, mla_form=MLAForm.naive, **kw).by_op["attention_proj"]
    assert naive == pytest.approx(61 * 3 * 2 * 4e-6)
    dec = step_time(spec, H200, mla_form=MLAForm.decompressed, **kw).by_op["attention_proj"]
    assert dec >= 61 * 4 * 2 * 4e-6 * (1 - 1e-9)
    # Llama-3.1-8B on one H100: fused qkv (4096 x 6144) and o_proj (4096 x 4096) are
    # 41,943,040 bf16 parameters per layer, 84 MB: 28 us at 0.90 x 3.35 TB/s, above 2 floors,
    # so the floor changes nothing.
    dense = load_spec("llama-3.1-8b")
    kw = {"tokens": 1, "context": 4096, "requests": 1}
    assert step_time(dense, H100, **kw).by_op["attention_proj"] == pytest.approx(
        step_time(dense, H100, eff=Efficiency(kernel_floor_s=0.0), **kw).by_op["attention_proj"])
    assert step_time(dense, H100, eff=Efficiency(kernel_floor_s=0.0), **kw).by_op[
        "attention_proj"] == pytest.approx(32 * 41943040 * 2 / (0.90 * H100.hbm_bytes_per_s))


def test_replicated_fp8_projections_stay_fp8() -> None:
    # DeepSeek-V3's checkpoint stores every attention projection in block FP8
    # (quantization_config fp8, weight_block_size [128, 128]). At TP 8 the replicated q_a / kv_a
    # make this rank's attention bytes 1.75 x an even 1/8 share; the GEMMs are FP8 all the same,
    # on one rank and on eight.
    spec = load_spec("deepseek-v3")
    for tp in (1, 8):
        _, math = bytes_per_param(spec, tp)
        assert math == {"attention": GemmMath.fp8, "dense_mlp": GemmMath.fp8,
                        "experts": GemmMath.fp8, "lm_head": GemmMath.bf16}
    # A bf16 model is never FP8.
    assert set(bytes_per_param(load_spec("qwen3-8b"), 8)[1].values()) == {GemmMath.bf16}


def test_layer_overhead_is_per_layer_per_step() -> None:
    # 35 us per decoder layer per forward step: Qwen3-8B has 36 layers, so a decode step costs
    # 36 x 35 us = 1.26 ms more than without it, at any batch, and a prefill step the same.
    spec = load_spec("qwen3-8b")
    bare = Efficiency(layer_overhead_s=0.0)
    for kw in ({"tokens": 1, "context": 1024, "requests": 1},
               {"tokens": 64, "context": 1024, "requests": 64},
               {"tokens": 2048, "context": 2048, "requests": 1, "phase": "prefill"}):
        with_it = step_time(spec, H100, **kw)
        assert with_it.seconds - step_time(spec, H100, eff=bare, **kw).seconds == \
            pytest.approx(36 * 35e-6)
        assert with_it.by_op["layer_overhead"] == pytest.approx(36 * 35e-6)
    # An MTP draft token runs one layer: it adds one layer's overhead.
    ds = load_spec("deepseek-v3")
    one = predict(ds, H200, CostInputs(context=2048, layout=Layout(tp=8), draft_tokens=1))
    none = predict(ds, H200, CostInputs(context=2048, layout=Layout(tp=8), draft_tokens=1,
                                        efficiency=bare))
    assert one.decode_step_ms - none.decode_step_ms == pytest.approx((61 + 1) * 35e-3)
    with pytest.raises(InputError):
        Efficiency(layer_overhead_s=-1e-6)


def test_layer_overhead_default_is_the_bench_fit() -> None:
    # The default is the median per-layer residual of the dense single-GPU cases of
    # tests/benches/cost_bench.py (printed in cost-bench.md); it must not drift from that fit.
    assert Efficiency().layer_overhead_s == pytest.approx(bench.fitted_layer_overhead_s(),
                                                          abs=1e-6)


def test_prefill_launch_default_is_the_bench_fit() -> None:
    # The eager prefill launch time is the median, over the engine-timed SGLang prefills of
    # tests/benches/cost_bench.py, of the floor that makes each exact; it must not drift from it
    # on the model it was fitted with (bench.AS_FITTED: the experts' one fraction per format;
    # moedefault63 made the shape table the CUDA default after it, and on today's default the
    # same rows give 60.5 us, 61.1 before hopperops65 charged the norms' bytes: not refitted
    # with the flip, a decision left open).
    assert Efficiency().prefill_launch_s == pytest.approx(
        bench.fitted_prefill_launch_s(bench.AS_FITTED), abs=1e-6)
    assert bench.fitted_prefill_launch_s() == pytest.approx(60.5e-6, abs=0.1e-6)


def test_eager_prefill_ops_per_architecture() -> None:
    # Ops SGLang's model code launches in one prefill step (kvplan.perf.op_counts names the files).
    # Qwen3-8B on one GPU (models/qwen3.py): per layer input norm, qkv_proj, q_norm, k_norm,
    # rotary_emb, set_kv_buffer, attention, o_proj, post-attention norm (9), gate_up_proj,
    # SiluAndMul, down_proj (3): 36 x 12 = 432, plus embedding, final norm, lm_head: 435.
    assert eager_prefill_ops(load_spec("qwen3-8b")) == 435
    # Llama-3-8B has no q/k norm (models/llama.py): 32 x 10 + 3 = 323.
    assert eager_prefill_ops(load_spec("llama-3-8b")) == 323
    # Under TP 8 each layer adds its two all-reduces and the head its embedding all-reduce and
    # logits all-gather: Llama-3.1-70B, 80 x 12 + 5 = 965.
    assert eager_prefill_ops(load_spec("llama-3.1-70b"), Layout(tp=8)) == 965
    # Qwen3-235B-A22B, TP 8, bf16 (models/qwen3_moe.py): attention block 10 (the 9 above and
    # its all-reduce); MoE block: router GEMM, top-k, fused_moe's align + count zeroing, w13,
    # silu_and_mul, w2, moe_sum_reduce (6), the all-reduce: 9. 94 x 19 + 5 = 1,791.
    assert eager_prefill_ops(load_spec("qwen3-235b-a22b"), Layout(tp=8)) == 1791
    # DeepSeek-V3, TP 8, block FP8 (each GEMM two ops, quantization then GEMM). MLA prefill
    # (forward_mha.py forward_normal_prepare): input norm 1, fused q_a + kv_a 2, q_a norm 1,
    # q_b 2, kv_a norm, RoPE, q_pe copy, KV write 4, kv_b 2, concat_mla_k + attention 2,
    # o_proj 2, all-reduce 1, post-attention norm 1: 18. MoE (58 layers): router 1, top-k 1,
    # fused_moe 6 + 2 quantizations, shared expert 2 + 1 + 2 and its add 1, all-reduce 1: 17.
    # Dense MLP (3 layers): 2 + 1 + 2 + all-reduce: 6. 61 x 18 + 58 x 17 + 3 x 6 + 5 = 2,107.
    assert eager_prefill_ops(load_spec("deepseek-v3"), Layout(tp=8)) == 2107


# Qwen3-Next-80B-A3B as tests/data/configs/qwen3-next-80b-a3b.json gives it: hidden 2048, 48
# layers (every 4th full attention: 12; 36 Gated DeltaNet), 16 query heads of 256 and 2 KV
# heads, GDN with 16 key heads and 32 value heads of 128 and a conv kernel of 4, 512 experts
# (top 10) with one gated shared expert of 512.
QWEN3_NEXT = "qwen3-next-80b-a3b"


def test_qwen3_next_eager_prefill_ops_from_sglang_0_5_6() -> None:
    spec = load_spec(QWEN3_NEXT)
    # Gated DeltaNet mixer at TP 8 (2 key heads per rank; qwen3_next.py +
    # hybrid_linear_attn_backend.py, 0.5.6): in_proj_qkvz, in_proj_ba (2); the reshape copies of
    # q, k, v, z, b, a and the cat (7); `extend_prefix_lens > 0`, conv contiguous + kernel,
    # fused_gdn_gating, the state gather (5); chunk_gated_delta_rule: q/k/v contiguous (3),
    # two l2norms, cumsum, kkt, solve_tril x 2, w/u, h, zeros + o (10); the state scatter (1);
    # gated norm, out_proj (2): 30. With one key head per rank (TP 16) the six copies are views.
    gdn = RECURRENT_MIXER_OPS["gated_delta_net"]
    assert gdn.extend_ops(spec, tp=8, fp8=False) == 30
    assert gdn.extend_ops(spec, tp=16, fp8=False) == 24
    # Its layer: input norm + mixer + all-reduce + post-attention norm = 33.
    # Gated attention (2 heads per rank): input norm, qkv_proj, q and gate de-interleave copies
    # (2), q_norm, k_norm, RoPE, KV write, attention, sigmoid, gate product, o_proj,
    # all-reduce, post-attention norm: 14.
    # MoE: router, top-k, fused_moe (6), shared MLP (3), shared_expert_gate + sigmoid +
    # product (3), add, all-reduce: 16.
    # 36 x 33 + 12 x 14 + 48 x 16 + head 5 = 1,188 + 168 + 768 + 5 = 2,129 (was 749 with five
    # placeholder ops per GDN mixer, no norms, no gates and no shared expert).
    assert eager_prefill_ops(spec, Layout(tp=8)) == 2129


def test_mamba2_eager_prefill_ops_from_sglang_0_5_6() -> None:
    # MambaMixer2.forward (0.5.6) with the Triton conv (nemotron_h.py), 8 groups on one GPU (the
    # gated norm's forward_native path: 10 ops): in_proj, conv, B/C contiguous (2), six SSD
    # kernels, state scatter, norm (10), out_proj, the output copy: 23.
    spec = load_spec("nemotron-nano-9b-v2")
    assert spec.recurrent.n_groups == 8
    assert RECURRENT_MIXER_OPS["mamba2"].extend_ops(spec, tp=1, fp8=False) == 23
    # A kind not counted from SGLang's code keeps the five itemised kernels.
    rec = spec.recurrent
    mamba1 = Mamba1(intermediate_size=rec.intermediate_size, state_size=rec.state_size,
                    conv_kernel=rec.conv_kernel)
    assert recurrent_mixer_ops(mamba1).extend_ops(spec, tp=1, fp8=False) == 5


def test_qwen3_next_decode_reads_and_writes_each_requests_state() -> None:
    spec, b200 = load_spec(QWEN3_NEXT), get_gpu("B200")
    # Per rank at TP 8: conv state (kernel - 1) x (2 x 16 x 128 + 32 x 128) / 8 = 3 x 1,024
    # bf16 = 6,144 B; GDN state 32 / 8 x 128 x 128 in SGLang's float32 = 262,144 B. Read and
    # written once per decode step: 2 x 268,288 B per request per layer; 256 requests over 36
    # layers: 4.9 GB, memory-bound at 0.90 x 8 TB/s (above the 36 kernel floors).
    state = 2 * (3 * 1024 * 2 + 4 * 128 * 128 * 4)
    assert state == 536_576
    step = step_time(spec, b200, tokens=256, context=500, requests=256, layout=Layout(tp=8),
                     conv_dtype="bfloat16", ssm_dtype="float32")
    assert step.by_op["recurrent_state"] == pytest.approx(256 * 36 * state / (0.9 * 8e12))
    # vLLM's rule keeps the GDN state in the model dtype (bf16): half the SSM bytes.
    half = step_time(spec, b200, tokens=256, context=500, requests=256, layout=Layout(tp=8))
    assert half.by_op["recurrent_state"] == pytest.approx(
        256 * 36 * 2 * (3 * 1024 * 2 + 4 * 128 * 128 * 2) / (0.9 * 8e12))


def test_gated_delta_net_state_flops_follow_the_chunked_prefill() -> None:
    spec = load_spec(QWEN3_NEXT)
    # Recurrent form, per token: 32 value heads x 3 products x 2 x 128 x 128.
    assert recurrent_state_flops_per_token(spec) == 32 * 6 * 128 * 128 == 3_145_728
    # Chunked (C = 64): + 2 C (3 d_k + 2 d_v) per value head (K K^T, W and U, in-chunk Q K^T
    # and its product with v_new).
    assert recurrent_state_flops_per_token(spec, "prefill") == (
        3_145_728 + 32 * 2 * 64 * (3 * 128 + 2 * 128)) == 5_767_168


def test_eager_prefill_adds_its_launch_time() -> None:
    # SGLang's prefill step: the GPU time at the graph floor plus ops x prefill_launch_s
    # (63.2 us): Qwen3-8B on one H100, 435 x 63.2 us = 27.492 ms more, for a 16-token prompt and
    # for an 8,192-token one alike (the sum fitted in kvplan/perf/efficiency.py, not a max).
    spec = load_spec("qwen3-8b")
    for tokens in (16, 8192):
        kw = {"tokens": tokens, "context": tokens, "requests": 1, "phase": "prefill",
              "logits": 1}
        eager = step_time(spec, H100, **kw)
        graph = step_time(spec, H100, eff=GRAPH_PREFILL, **kw)
        assert eager.seconds - graph.seconds == pytest.approx(435 * 63.2e-6)
        assert eager.by_op["prefill_launch"] == pytest.approx(435 * 63.2e-6)
    # Decode steps replay CUDA graphs: no launch time.
    assert "prefill_launch" not in step_time(spec, H100, tokens=1, context=16,
                                             requests=1).by_op


def test_fp8_gemms_launch_their_activation_quant() -> None:
    # Block-FP8 (w8a8) GEMMs quantize their activations in a kernel of their own (SGLang
    # fp8_utils.apply_w8a8_block_fp8_linear: per_token_group_quant_fp8, then the GEMM).
    # DeepSeek-V3 on TP 8 at batch 1: each layer's MLP (3 dense layers, 3 x 7168 x 18432 / 8 =
    # 49.5 MB of FP8 per rank, 15 us at 0.69 x 4.8 TB/s; 58 shared experts, 5.5 MB) is
    # 2 GEMMs = 4 kernels, each under the 4 us floor: 61 x 4 x 4 us.
    spec = load_spec("deepseek-v3")
    kw = {"tokens": 1, "context": 4096, "requests": 1, "layout": Layout(tp=8)}
    assert step_time(spec, H200, **kw).by_op["mlp"] == pytest.approx(61 * 4 * 4e-6)
    # A bf16 MLP is 2 kernels: Llama-3.1-8B's fits above its floor anyway.
    assert step_time(load_spec("qwen3-8b"), H100, tokens=1, context=16, requests=1,
                     eff=Efficiency(hbm=1.0, kernel_floor_s=1.0)).by_op["mlp"] == \
        pytest.approx(36 * 2 * 1.0)


def test_sliding_window_layers_count_their_window() -> None:
    # Mistral-7B-v0.1 attends a 4,096-token window: decode FLOPs at 32k equal those at 4k.
    spec = load_spec("mistral-7b-v0.1")
    at_4k = decode_cost(spec, context=4096).decode_flops_per_token
    assert decode_cost(spec, context=32768).decode_flops_per_token == at_4k


def test_naive_mla_rereads_up_projected_kv() -> None:
    spec = load_spec("deepseek-v2")
    kw = {"tokens": 1, "context": 4096, "requests": 1}
    naive = step_time(spec, H100, mla_form=MLAForm.naive, **kw)
    absorbed = step_time(spec, H100, mla_form=MLAForm.absorbed, **kw)
    # Per layer the naive form writes and reads 4,096 x 128 heads x (128 + 128) bf16 values.
    extra = 2 * 4096 * 128 * 256 * 2 * spec.num_hidden_layers
    assert naive.bytes - absorbed.bytes >= extra
    assert "mla_up_proj" in naive.by_op and naive.seconds > absorbed.seconds


def test_collectives_follow_the_layout() -> None:
    spec = load_spec("deepseek-v3")
    tp8 = step_time(spec, H200, tokens=8, context=1024, requests=8, layout=Layout(tp=8))
    assert tp8.by_op["tp_all_reduce"] > 0 and "ep_all_to_all" not in tp8.by_op
    dp = step_time(spec, H200, tokens=8, context=1024, requests=8,
                   layout=Layout(tp=8, ep=8, dp_attention=True))
    assert dp.by_op.get("tp_all_reduce", 0) == 0 and dp.by_op["ep_all_to_all"] > 0
    # Beyond one node the all-to-all crosses InfiniBand and costs more per token.
    wide = step_time(spec, H200, tokens=8, context=1024, requests=8,
                     layout=Layout(tp=16, ep=16, dp_attention=True))
    assert wide.by_op["ep_all_to_all"] > dp.by_op["ep_all_to_all"]


def test_nvl72_keeps_ep48_on_nvlink() -> None:
    # A GB200 NVL72 rack is one 72-GPU NVLink domain: EP 48 dispatches over NVLink 5 (588 GB/s
    # achievable, 8 us per call), not InfiniBand. DeepSeek-V3, 8 tokens per rank, top-8 of
    # hidden 7168: each rank sends 8 x 8 x 7168 x (1 B FP8 dispatch + 2 B bf16 combine) x 47/48 =
    # 1,347,584 B, so one MoE layer costs 2 x 8 us + 1,347,584 / 588e9 s = 18.29 us, and the 58
    # MoE layers 1.061 ms.
    spec = load_spec("deepseek-v3")
    kw = {"tokens": 8, "context": 1024, "requests": 8,
          "layout": Layout(tp=48, ep=48, dp_attention=True)}
    gb200 = step_time(spec, get_gpu("GB200"), **kw).by_op["ep_all_to_all"]
    assert gb200 == pytest.approx(58 * (2 * 8e-6 + 8 * 8 * 7168 * 3 * 47 / 48 / 588e9))
    # The same 48 ranks of H100s span six HGX nodes and cross InfiniBand NDR (45 GB/s, 25 us).
    h100 = step_time(spec, H100, **kw).by_op["ep_all_to_all"]
    assert h100 == pytest.approx(58 * (2 * 25e-6 + 8 * 8 * 7168 * 3 * 47 / 48 / 45e9))


def test_mtp_tokens_per_step_and_tpot() -> None:
    assert tokens_per_step(0, 0.85) == 1
    assert tokens_per_step(2, 0.85) == pytest.approx(1 + 0.85 + 0.85**2)
    spec = load_spec("deepseek-v3")
    plain = predict(spec, H200, CostInputs(context=2048, layout=Layout(tp=8)))
    mtp = predict(spec, H200, CostInputs(context=2048, layout=Layout(tp=8), draft_tokens=1))
    assert mtp.tokens_per_step == pytest.approx(1.85)
    assert mtp.decode_step_ms > plain.decode_step_ms and mtp.tpot_ms < plain.tpot_ms


def test_cost_per_million_tokens() -> None:
    # At 3,600 USD per GPU-hour a GPU costs 1 USD per second: cost = 1e6 / (tokens/s per GPU).
    spec = load_spec("qwen3-8b")
    p = predict(spec, H100, CostInputs(context=1024, batch=32, gpu_hour_usd=3600.0))
    assert p.cost_per_million_tokens_usd == pytest.approx(1e6 / p.output_tokens_per_s_per_gpu)
    assert p.output_tokens_per_s_per_gpu == pytest.approx(32 / (p.decode_step_ms / 1e3))


def test_compare_json_keeps_the_alias_and_adds_predictions() -> None:
    rows = compare_schemes(load_spec("qwen3-8b"), context=2048, gpu=H100, batch=4).rows
    for r in rows:
        assert r.roofline_ms_per_token == r.roofline_ms_per_step
        assert r.tpot_ms is not None and r.ttft_ms is not None and r.tpot_ms > 0
        assert r.cost_per_million_tokens_usd is None
    bare = compare_schemes(load_spec("qwen3-8b"), context=2048).rows
    assert all(r.tpot_ms is None and r.roofline_ms_per_step is None for r in bare)


def test_compare_cli_options() -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["compare", "deepseek-v3", "--gpu", "H200", "--tp", "8",
                              "--dp-attention", "--ep", "8", "--mtp-tokens", "1",
                              "--gpu-hour-usd", "2.5", "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    rows = data if isinstance(data, list) else data["rows"]
    row = next(r for r in rows if r["native"])
    assert row["cost_per_million_tokens_usd"] > 0 and "ep_all_to_all" in row["decode_ms_by_op"]
    bad = runner.invoke(app, ["compare", "llama-3.1-8b", "--gpu", "H100-80GB", "--ep", "2"])
    assert bad.exit_code == 2 and "--ep" in bad.stderr


def test_efficiency_bounds_are_checked() -> None:
    with pytest.raises(InputError):
        replace(Efficiency(), hbm=1.5)


# ---- prefill batching in a fixed-concurrency serving run (serving_tpot_ms / serving_ttft_ms) --

def test_serving_tpot_alone_sees_no_other_prefill() -> None:
    # At concurrency 1 the next request starts after this one ends: no prefill runs during
    # its decode (the rule used to add 1 x prefill / output length).
    assert serving_tpot_ms(10.0, 100.0, concurrency=1, output_len=500) == 10.0


def test_serving_tpot_steady_state_without_launch_time() -> None:
    # 100 other requests, each finishing with probability 1/500 per decode step: 0.2 prompts'
    # GPU time (100 ms each) after every decode step, 10 + 0.2 x 100 = 30 ms.
    assert serving_tpot_ms(10.0, 100.0, concurrency=101, output_len=500) == pytest.approx(30.0)


def test_serving_tpot_shares_sglang_launch_time_per_step() -> None:
    # Prefill 150 ms of which 125 ms launch (SGLang, eager) and 25 ms GPU; concurrency 101,
    # output 500, 500-token prompts, 16,384-token steps (B200). Arrivals per decode step are
    # Poisson(m = 100 / 500 = 0.2); one step takes all of them (scheduler.py
    # get_new_batch_prefill), so a step follows with probability 1 - e^-0.2 = 0.181269:
    # 10 + 0.2 x 25 + 0.181269 x 125 = 37.6586 (the per-prompt rule: 10 + 100 x 150 / 500 = 40).
    steady = serving_tpot_ms(10.0, 150.0, concurrency=101, output_len=500,
                             prefill_launch_ms=125.0, prompt_len=500, chunk_tokens=16384)
    assert steady == pytest.approx(37.6586, abs=1e-4)
    # A run of 505 requests: only the 404 replacements run during others' decodes (x 0.8);
    # the first wave, 101 x 500 tokens, takes ceil(50,500 / 16,384) = 4 steps of
    # 125 + 101 x 25 / 4 = 756.25 ms, and a first-wave request waits (4 - 1) / 2 of them after
    # its first token: + (101 / 505) x 1.5 x 756.25 / 500 = 0.45375.
    # 10 + 0.8 x 27.6586 + 0.45375 = 32.5807.
    run = serving_tpot_ms(10.0, 150.0, concurrency=101, output_len=500,
                          prefill_launch_ms=125.0, prompt_len=500, chunk_tokens=16384,
                          requests=505)
    assert run == pytest.approx(32.5807, abs=1e-4)


def test_serving_ttft_first_wave_is_one_batched_step() -> None:
    # DeepSeek-R1 1k/1k at concurrency 4 on 8x H200, 40 requests (InferenceX): one prefill
    # 191 ms = 147 ms launch + 44 ms GPU (hand numbers). The first 4 prompts (4,096 tokens, under
    # the 8,192-token step) run as one step: 147 + 4 x 44 = 323 ms. A replacement shares its step
    # with Poisson(3 / 1024) others: 147 + 44 x (1 + 3/1024) = 191.1289 ms.
    # Mean: (4 x 323 + 36 x 191.1289) / 40 = 204.316 ms.
    ttft = serving_ttft_ms(191.0, concurrency=4, output_len=1024, prefill_launch_ms=147.0,
                           prompt_len=1024, requests=40, chunk_tokens=8192)
    assert ttft == pytest.approx(204.316, abs=1e-3)
    assert serving_ttft_ms(191.0, concurrency=1, output_len=1024, prefill_launch_ms=147.0,
                           prompt_len=1024, requests=10, chunk_tokens=8192) == 191.0
    with pytest.raises(InputError):
        serving_ttft_ms(191.0, concurrency=4, output_len=1024, requests=2)


def test_sglang_default_chunk_by_gpu_memory() -> None:
    # server_args.py: < 160 GiB (A100, H100, H200) 8,192 tokens per step; B200 16,384.
    assert sglang_chunked_prefill_tokens(H100) == 8192
    assert sglang_chunked_prefill_tokens(H200) == 8192
    assert sglang_chunked_prefill_tokens(get_gpu("B200")) == 16384
    # _handle_data_parallelism: under --enable-dp-attention each rank gets the default
    # // --dp-size (16,384 // 4 = 4,096 on B200; 8,192 // 8 = 1,024 on H200).
    assert sglang_chunked_prefill_tokens(get_gpu("B200"), dp_attention=4) == 4096
    assert sglang_chunked_prefill_tokens(H200, dp_attention=8) == 1024


def test_tp8_moe_qwen3_235b_sglang_b200_concurrency_100() -> None:
    # https://github.com/sgl-project/sgl-cookbook/blob/main/docs/autoregressive/Qwen/Qwen3.md
    # Qwen3-235B-A22B bf16, 8x B200, TP 8, SGLang 0.5.6, random 1000/1000, max concurrency 100,
    # 500 prompts (249,831 in / 252,162 out): "Mean TPOT (ms): 32.94". Held out. Priced one
    # prompt per step it read 0.71; with SGLang's batching of waiting prompts, in band.
    spec, gpu, layout = load_spec("qwen3-235b-a22b"), get_gpu("B200"), Layout(tp=8)
    decode = predict(spec, gpu, CostInputs(context=500 + 504 // 2, batch=100, layout=layout))
    prefill = predict(spec, gpu, CostInputs(context=500, layout=layout)).ttft_ms
    predicted = serving_tpot_ms(decode.tpot_ms, prefill, concurrency=100, output_len=504,
                                prefill_launch_ms=prefill_launch_ms(spec, layout),
                                prompt_len=500, requests=500,
                                chunk_tokens=sglang_chunked_prefill_tokens(gpu))
    assert 0.75 <= 32.94 / predicted <= 1.33


# --- TP all-reduce at decode sizes (kvplan/hardware/interconnect.py, Interconnect.all_reduce_s) ---

def test_one_shot_latency_is_the_median_of_the_published_in_graph_timings() -> None:
    from kvplan.hardware.interconnect import INTERCONNECTS

    # vLLM PR 24111, ca_1stage in CUDA graphs on H100 (ms): TP2 0.5 MB 0.007; TP4 0.5 / 1 MB
    # 0.010 / 0.015; TP6 0.5 / 1 MB 0.013 / 0.021. Less (n - 1) x bytes at 360 GB/s:
    # 5.54, 5.63, 6.26, 5.72, 6.40 us; median 5.72 us.
    b = 360e9
    fixed = [7 - 1 * 524288 / b * 1e6, 10 - 3 * 524288 / b * 1e6, 15 - 3 * 1048576 / b * 1e6,
             13 - 5 * 524288 / b * 1e6, 21 - 5 * 1048576 / b * 1e6]
    assert sorted(fixed)[2] == pytest.approx(5.718, abs=1e-3)
    assert INTERCONNECTS["nvlink4"].custom_all_reduce_latency_s == pytest.approx(5.718e-6,
                                                                               abs=1e-9)
    # Two-shot (ca_2stage): TP4 0.5 / 1 MB 0.017 / 0.018, TP6 0.015 / 0.017, less 2 (n - 1) / n
    # x bytes: 14.82, 13.63, 12.57, 12.15 us; median 13.10 us.
    two = [17 - 1.5 * 524288 / b * 1e6, 18 - 1.5 * 1048576 / b * 1e6,
           15 - 5 / 3 * 524288 / b * 1e6, 17 - 5 / 3 * 1048576 / b * 1e6]
    assert (sorted(two)[1] + sorted(two)[2]) / 2 == pytest.approx(13.10, abs=0.01)
    assert INTERCONNECTS["nvlink4"].two_shot_latency_s == pytest.approx(13.10e-6, abs=1e-8)
    # vLLM PR 37756 (B300): 16 KiB in 0.007 ms one-shot, 0.019 two-shot, less 16,384 B at
    # 588 GB/s.
    assert INTERCONNECTS["nvlink5"].custom_all_reduce_latency_s == pytest.approx(
        7e-6 - 16384 / 588e9)
    assert INTERCONNECTS["nvlink5"].two_shot_latency_s == pytest.approx(19e-6 - 16384 / 588e9)
    # No in-graph A100 table: the previous 10 us, kept (interconnect.py says so); two-shot is
    # two one-shot rounds.
    assert INTERCONNECTS["nvlink3"].custom_all_reduce_latency_s == pytest.approx(10e-6)
    assert INTERCONNECTS["nvlink3"].two_shot_latency_s is None
    a100 = INTERCONNECTS["nvlink3"]
    assert a100.all_reduce_s(8, 262144) == pytest.approx(20e-6 + 1.75 * 262144 / 240e9)
    # Links without a custom kernel run NCCL rings.
    assert INTERCONNECTS["ib-ndr"].custom_all_reduce_latency_s is None


def test_all_reduce_follows_the_custom_allreduce_dispatch() -> None:
    from kvplan.hardware.interconnect import INTERCONNECTS

    nv4 = INTERCONNECTS["nvlink4"]
    t1, t2, b = nv4.custom_all_reduce_latency_s, nv4.two_shot_latency_s, nv4.bytes_per_s
    assert t1 is not None and t2 is not None
    # Llama-70B at decode batch 1, TP 8: 8192 x 2 B = 16 KiB, one-shot: t1 + 7 x 16 KiB / B.
    assert nv4.all_reduce_s(8, 16384) == pytest.approx(t1 + 7 * 16384 / b)
    # 256 KiB at 8 ranks is not < 256 KiB: two-shot, t2 + 2 x 7/8 x 256 KiB / B.
    assert nv4.all_reduce_s(8, 262144) == pytest.approx(t2 + 1.75 * 262144 / b)
    # 4 ranks take one-shot up to 512 KiB; 2 ranks always.
    assert nv4.all_reduce_s(4, 262144) == pytest.approx(t1 + 3 * 262144 / b)
    assert nv4.all_reduce_s(2, 4 * 2**20) == pytest.approx(t1 + 4 * 2**20 / b)
    # Hand-worked against the measured engine path (vLLM PR 24111, H100, ms): TP6 at 2 MB runs
    # 2stage, measured 0.026: 13.10 + 2 x 5/6 x 2,097,152 B / 360 GB/s = 22.8 us (12 % fast).
    assert nv4.all_reduce_s(6, 2097152) * 1e6 == pytest.approx(22.81, abs=0.01)
    # TP4 at 4 MB (2stage, measured 0.043): 13.10 + 1.5 x 4,194,304 / 360e9 = 30.6 us (29 %
    # fast: those rows stream peers at ~210 GB/s).
    assert nv4.all_reduce_s(4, 4194304) * 1e6 == pytest.approx(30.58, abs=0.01)
    # Above the 8 MiB custom buffer, or 3 ranks (not a custom world size): NCCL ring.
    big = 16 * 2**20
    assert nv4.all_reduce_s(8, big) == pytest.approx(nv4.latency_s + 1.75 * big / b)
    assert nv4.all_reduce_s(3, 4096) == pytest.approx(nv4.latency_s + 4 / 3 * 4096 / b)
    assert nv4.all_reduce_s(1, 4096) == 0.0
    # PCIe presets have no custom kernel here: ring at any size.
    pcie = INTERCONNECTS["pcie5"]
    assert pcie.all_reduce_s(2, 4096) == pytest.approx(pcie.latency_s + 4096 / pcie.bytes_per_s)


def test_tp_all_reduce_of_a_decode_step_uses_the_link_rule() -> None:
    # Llama-3.1-70B on 8x A100 at batch 1: 80 layers x 2 one-shot all-reduces of 16 KiB,
    # 10 us + 7 x 16,384 B / 240 GB/s = 10.48 us each: 1.677 ms.
    spec = load_spec("llama-3.1-70b")
    a100 = get_gpu("A100-80GB")
    step = step_time(spec, a100, tokens=1, context=1024, requests=1, layout=Layout(tp=8))
    assert step.by_op["tp_all_reduce"] == pytest.approx(160 * (10e-6 + 7 * 16384 / 240e9))


def test_minimax_m2_full_width_qk_norm_reduces_over_attention_tp() -> None:
    # MiniMax-M2's q / k RMSNorm spans all heads: under attention TP the sum of squares is
    # all-reduced between two kernels (SGLang models/minimax_m2.py MiniMaxM2QKRMSNorm), four
    # kernels per layer (two copies, sum of squares, apply) and one collective.
    spec, b200 = load_spec("minimax-m2"), get_gpu("B200")
    plain = replace(spec, full_width_qk_norm=False)  # the same shapes, no full-width q/k norm
    layers = spec.num_hidden_layers

    def step(s, tp):
        return step_time(s, b200, tokens=1, context=800, requests=1, layout=Layout(tp=tp))

    assert step(spec, 8).by_op["qk_norm_all_reduce"] > 0
    assert step(spec, 1).by_op.get("qk_norm_all_reduce", 0.0) == 0.0
    assert "qk_norm_all_reduce" not in step(plain, 8).by_op
    floor = DEFAULT_EFFICIENCY.kernel_floor_s
    extra = step(spec, 1).by_op["small_kernels"] - step(plain, 1).by_op["small_kernels"]
    assert extra == pytest.approx(4 * layers * floor)
    # Eager prefill: the same four ops per layer, and the all-reduce under TP.
    assert eager_prefill_ops(spec) - eager_prefill_ops(plain) == 4 * layers
    assert (eager_prefill_ops(spec, Layout(tp=8)) - eager_prefill_ops(plain, Layout(tp=8))
            == 5 * layers)


# ---- per-device efficiencies (AMD Instinct: ROCm kernel measurements) -----------------------

def test_mi300x_efficiencies_come_from_their_sources() -> None:
    from statistics import median

    from kvplan.perf.efficiency import device_efficiency

    mi300x, mi325x, mi355x = (device_efficiency(get_gpu(n)) for n in ("MI300X", "MI325X", "MI355X"))
    # Azure ND MI300X v5 STREAM "Mul 4.26" TB/s of 5.3 (arXiv 2510.27583: BabelStream 81 %).
    assert mi300x.hbm == round(4.26 / 5.3, 2)
    # AMD max-achievable FLOPs (rocm-blogs, Table 1): "708 TFLOPs" bf16, "1273 TFLOPs" FP8 of
    # the 1,307.4 / 2,614.9 dense peaks; MI325X "843" / "1519".
    assert mi300x.gemm == round(708 / 1307.4, 2)
    assert mi300x.fp8_gemm == round(1273 / 2614.9, 2)
    assert mi325x.gemm == round(843 / 1307.4, 3) and mi325x.fp8_gemm == round(1519 / 2614.9, 3)
    # aiter a8w8_blockscale_tuned_fmoe_ds_v3.csv, cu_num 304, 16 / 32 / 64 tokens: bw (GB/s).
    assert mi300x.fp8_gemm_hbm == round(median([4102.9, 4091.86, 4002.33]) / 5300, 2)
    # The same file, cu_num 256 (MI355X), 128 tokens at inter_dim 256 and 512, of 8 TB/s.
    assert mi355x.fp8_gemm_hbm == round(median([5844.44, 6000.74]) / 8000, 2)
    # Least `us` of aiter's block-FP8 fused-MoE tables: gfx942 glm5_1 (257 experts, inter_dim
    # 256) at 1 token; gfx950 ds_v3 (257 experts, inter_dim 512) at 1 token.
    assert mi300x.moe_floor_s == pytest.approx(min(67.3825, 99.21) * 1e-6, abs=0.05e-6)
    assert mi355x.moe_floor_s == pytest.approx(min(56.8428, 77.4907) * 1e-6, abs=0.05e-6)
    assert Efficiency().moe_floor_s is None
    # Not measured on ROCm: the CUDA values.
    for eff in (mi300x, mi325x, mi355x):
        assert eff.attention == Efficiency().attention
        assert eff.kernel_floor_s == Efficiency().kernel_floor_s
        assert eff.layer_overhead_s == Efficiency().layer_overhead_s
        assert eff.prefill_launch_s == Efficiency().prefill_launch_s


def test_every_rocm_preset_has_device_efficiencies_and_cuda_ones_keep_the_defaults() -> None:
    from kvplan.hardware.gpus import GPUS
    from kvplan.perf.efficiency import (
        CUDA_EFFICIENCY,
        DEFAULT_EFFICIENCY,
        DEVICE_EFFICIENCY,
        MOE_GEMM_SHAPE,
        device_efficiency,
    )

    # CUDA: only the SM 10.x Blackwell presets have a measured fraction of their own; every
    # CUDA preset has the experts' shape table (moedefault63), no ROCm one.
    blackwell = {"B200", "GB200", "B300", "GB300"}
    assert set(DEVICE_EFFICIENCY) == {
        g.name for g in GPUS.values() if g.platform == "rocm"} | blackwell
    assert CUDA_EFFICIENCY == replace(DEFAULT_EFFICIENCY, moe_gemm_shape=MOE_GEMM_SHAPE)
    for gpu in GPUS.values():
        if gpu.platform == "cuda" and gpu.name not in blackwell:
            assert device_efficiency(gpu) is CUDA_EFFICIENCY
        expected = MOE_GEMM_SHAPE if gpu.platform == "cuda" else None
        assert device_efficiency(gpu).moe_gemm_shape is expected


def test_blackwell_fp8_gemm_fraction_comes_from_sglangs_gb200_deepgemm_benchmark() -> None:
    from kvplan.perf.efficiency import CUDA_EFFICIENCY, device_efficiency

    b200, gb200 = (device_efficiency(get_gpu(n)) for n in ("B200", "GB200"))
    # sglang PR 13528, benchmark_deepgemm_fp8_gemm_blackwell.py on GB200 (--tp-size 4):
    # DeepGEMM at M 2,048, N 24,576, K 7,168 in 260.38 us -> 2 x M x N x K / t = 2,771 TFLOPS
    # of the GB200's 5,000 dense FP8 (its M 1,024 row: 146.03 us, 2,471 TFLOPS, 0.494).
    tflops = 2 * 2048 * 24576 * 7168 / 260.38e-6 / 1e12
    assert tflops == pytest.approx(2771, abs=1)
    assert gb200.fp8_gemm == round(tflops / 5000, 2) == 0.55
    assert 2 * 1024 * 24576 * 7168 / 146.03e-6 / 1e12 / 5000 == pytest.approx(0.494, abs=5e-4)
    # The other shape of the table read (N 576, K 7,168): 58.3-65.1 us from M 8 to M 4,096, the
    # benchmark's launch floor; at M 4,096, 62.21 us is 544 TFLOPS (0.11): no FLOPs measured.
    assert 2 * 4096 * 576 * 7168 / 62.208e-6 / 1e12 == pytest.approx(544, abs=1)
    assert b200 == gb200  # carried over: no B200 measurement
    # Nothing else measured but FP8 attention: the CUDA defaults (the experts' shape table
    # with them, moedefault63), bf16 GEMMs keep `gemm`.
    assert replace(gb200, fp8_gemm=None, fp8_attention=None) == CUDA_EFFICIENCY
    for name in ("H100", "H200"):
        assert device_efficiency(get_gpu(name)) is CUDA_EFFICIENCY
    for name in ("B300", "GB300"):
        assert replace(device_efficiency(get_gpu(name)), fp8_attention=None) == CUDA_EFFICIENCY


def test_blackwell_fp8_gemms_run_at_the_measured_fraction_of_the_fp8_peak() -> None:
    from kvplan.perf.efficiency import DEFAULT_EFFICIENCY

    # DeepSeek-V3's FP8 (block-scaled) dense MLPs in one 8,192-token prefill on a GB200 at TP 8,
    # compute-bound: the 3 dense layers' 3 x 7,168 x 18,432 and the 58 MoE layers' shared
    # expert 3 x 7,168 x 2,048 parameters, 3.744e9, x 2 x 8,192 tokens / 8 ranks = 7.67e12 FLOPs
    # at 0.55 x 5,000 TFLOPS = 2.788 ms (at the default 0.70: 2.191 ms).
    spec = load_spec("deepseek-v3")
    kw = {"tokens": 8192, "context": 8192, "requests": 1, "phase": "prefill",
          "layout": Layout(tp=8)}
    gb200 = get_gpu("GB200")
    params = 3 * (3 * 7168 * 18432) + 58 * (3 * 7168 * 2048)
    mlp_flops = params * 2 * 8192 / 8
    own = step_time(spec, gb200, **kw).by_op
    assert own["mlp"] == pytest.approx(mlp_flops / (0.55 * 5000e12), rel=1e-9)
    assert own["mlp"] == pytest.approx(2.788e-3, abs=1e-6)
    default = step_time(spec, gb200, eff=DEFAULT_EFFICIENCY, **kw).by_op
    assert default["mlp"] == pytest.approx(mlp_flops / (0.70 * 5000e12), rel=1e-9)
    assert own["attention"] == default["attention"]  # bf16 attention keeps its fraction


def test_predict_uses_the_gpus_efficiencies_unless_given() -> None:
    from kvplan.perf.efficiency import DEFAULT_EFFICIENCY, MI300X_EFFICIENCY

    spec = load_spec("llama-3-8b")
    inputs = CostInputs(context=1024, batch=8)
    assert predict(spec, H100, inputs) == predict(
        spec, H100, replace(inputs, efficiency=DEFAULT_EFFICIENCY))
    mi300x = get_gpu("MI300X")
    own = predict(spec, mi300x, inputs)
    assert own == predict(spec, mi300x, replace(inputs, efficiency=MI300X_EFFICIENCY))
    # HBM 0.80 instead of 0.90: a bandwidth-bound decode step is slower.
    assert own.decode_step_ms > predict(
        spec, mi300x, replace(inputs, efficiency=DEFAULT_EFFICIENCY)).decode_step_ms


def test_fp8_gemm_fraction_prices_fp8_gemms_only() -> None:
    spec = replace(load_spec("llama-3-8b"), quantization_json=json.dumps(
        {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
         "weight_block_size": [128, 128]}))
    kw = {"tokens": 8192, "context": 8192, "requests": 1, "phase": "prefill"}
    base = Efficiency(prefill_launch_s=0.0)
    same = step_time(spec, H100, eff=replace(base, fp8_gemm=base.gemm), **kw)
    assert same.by_op == step_time(spec, H100, eff=base, **kw).by_op
    slow = step_time(spec, H100, eff=replace(base, fp8_gemm=base.gemm / 2), **kw).by_op
    assert slow["mlp"] == pytest.approx(2 * same.by_op["mlp"], rel=1e-6)  # compute-bound
    assert slow["attention"] == same.by_op["attention"]  # attention keeps its own fraction
    bf16 = step_time(load_spec("llama-3-8b"), H100, eff=replace(base, fp8_gemm=0.1), **kw)
    assert bf16.by_op == step_time(load_spec("llama-3-8b"), H100, eff=base, **kw).by_op
    with pytest.raises(InputError):
        Efficiency(fp8_gemm=1.5)


def test_mi300x_collectives_use_the_xgmi_mesh() -> None:
    from kvplan.hardware.interconnect import INTERCONNECTS, InterconnectName, default_interconnect

    assert default_interconnect("MI300X") is INTERCONNECTS["xgmi3"]
    assert default_interconnect("MI325X") is INTERCONNECTS["xgmi3"]
    assert default_interconnect("MI355X") is INTERCONNECTS["xgmi4"]
    assert default_interconnect("H100-80GB") is INTERCONNECTS["nvlink4"]
    # Azure ND MI300X v5: RCCL all-reduce bus bandwidth 313.92 GB/s at 1 GB.
    assert INTERCONNECTS["xgmi3"].bytes_per_s == 314e9
    # MI355X: 7 x 76.8 GB/s each way, at the MI300X's measured 314 / (7 x 64) fraction.
    assert INTERCONNECTS["xgmi4"].bytes_per_s == round(7 * 76.8 * 314 / (7 * 64)) * 1e9
    assert {i.value for i in InterconnectName} == set(INTERCONNECTS)


def test_compare_cli_starts_from_the_gpus_efficiencies() -> None:
    runner = CliRunner()
    args = ["compare", "llama-3-8b", "--context", "4096", "--gpu", "MI300X", "--format", "json"]
    own = json.loads(runner.invoke(app, args).stdout)
    cuda = json.loads(runner.invoke(app, [*args, "--hbm-efficiency", "0.9",
                                          "--gemm-efficiency", "0.7"]).stdout)
    assert own != cuda


def test_moe_floor_replaces_the_experts_kernel_floors_only() -> None:
    from kvplan.weights.params import count_params

    spec = load_spec("deepseek-v3")
    kw = {"tokens": 1, "context": 1024, "requests": 1, "layout": Layout(tp=8)}
    base = Efficiency()
    floored = step_time(spec, H200, eff=replace(base, moe_floor_s=100e-6), **kw).by_op
    plain = step_time(spec, H200, eff=base, **kw).by_op
    # One token's 8 experts stream ~44 MB per rank in ~13 us: the 100 us floor binds per layer.
    moe_layers = sum(1 for x in count_params(spec).layers if x.routed_experts)
    assert moe_layers == 58
    assert floored["experts"] == pytest.approx(moe_layers * 100e-6)
    assert plain["experts"] < floored["experts"]
    assert {k: v for k, v in floored.items() if k != "experts"} == \
        {k: v for k, v in plain.items() if k != "experts"}
    with pytest.raises(InputError):
        Efficiency(moe_floor_s=-1e-6)


GLM_45 = Path(__file__).resolve().parent / "data" / "configs" / "glm-4.5.json"


def test_glm4_moe_router_and_fused_shared_expert_from_sglang_0_5_6() -> None:
    # SGLang 0.5.6 layers/moe/topk.py: 160 experts in one group exceed moe_fused_gate's 32 per
    # group, so GLM-4.5 takes the torch.compile'd biased_grouped_topk_impl (~10 kernels);
    # Qwen3-MoE's topk_softmax and DeepSeek-V3's moe_fused_gate (256 experts, 8 groups) are one.
    glm, _ = load_config(GLM_45)
    assert topk_kernels(glm) == 10
    assert topk_kernels(glm, "rocm") == 1
    assert topk_kernels(load_spec("qwen3-235b-a22b")) == 1
    assert topk_kernels(load_spec("deepseek-v3")) == 1
    # models/glm4_moe.py folds the one shared expert into fused_moe on CUDA without EP.
    assert fused_shared_expert(glm, Layout(tp=8))
    assert not fused_shared_expert(glm, Layout(tp=8, ep=8))
    assert not fused_shared_expert(glm, Layout(tp=8), "rocm")
    assert not fused_shared_expert(load_spec("deepseek-v3"), Layout(tp=8))
    # Prefill: the 89 MoE layers lose the shared MLP's gate_up, act, down and add (4 ops each).
    folded = eager_prefill_ops(glm, Layout(tp=8))
    assert eager_prefill_ops(glm, Layout(tp=8), platform="rocm") - folded == 89 * 4
    # use_qk_norm (GLM-4.5 true, GLM-4.5-Air false): q_norm and k_norm, 2 ops per layer.
    assert glm.qk_norm and not load_spec("glm-4.5-air").qk_norm
    # (The per-head norm follows use_qk_norm when the spec is read: kvplan.sources.features.)
    no_qk_norm = replace(glm, qk_norm=False, per_head_qk_norm=False)
    assert folded - eager_prefill_ops(no_qk_norm, Layout(tp=8)) == 92 * 2
    # 92 attention blocks x 10 (q_norm, k_norm among them) + 3 dense MLPs x 4 + 89 MoE blocks
    # x 9 (no shared-expert ops) + 5 = 1,738.
    assert folded == 1738
    # Decode at batch 1: +9 top-k floors and -2 shared-expert GEMM floors per MoE layer (the
    # shared expert's bytes join the routed experts' op).
    b200 = get_gpu("B200")
    cuda = step_time(glm, b200, tokens=1, context=1000, requests=1, layout=Layout(tp=8))
    other = step_time(glm, replace(b200, platform="rocm"), tokens=1, context=1000, requests=1,
                      layout=Layout(tp=8), eff=DEFAULT_EFFICIENCY)
    floor = DEFAULT_EFFICIENCY.kernel_floor_s
    assert cuda.by_op["small_kernels"] - other.by_op["small_kernels"] == pytest.approx(
        89 * 9 * floor)
    assert other.by_op["mlp"] - cuda.by_op["mlp"] == pytest.approx(89 * 2 * floor)


def test_sglang_allreduce_norm_fusion_drops_the_fused_norms() -> None:
    """SGLang 0.5.6 fuses each TP all-reduce with the RMSNorm after it for GptOss / DeepseekV3
    on SM 10.x (SGLANG_ALLREDUCE_NORM_FUSION_056): 2 x layers - 1 norm floors fewer per step, and as
    many eager prefill ops; nothing changes off those GPUs, architectures or sizes."""
    from kvplan.engines.sglang.allreduce_fusion import SGLANG_ALLREDUCE_NORM_FUSION_056
    from kvplan.perf.efficiency import device_efficiency
    from kvplan.perf.engine_traits import engine_efficiency
    from kvplan.perf.roofline import step_time

    spec, b200 = load_spec("gpt-oss-120b"), get_gpu("B200")
    sglang = engine_efficiency("sglang", device_efficiency(b200), version="0.5.6")
    vllm = engine_efficiency("vllm", device_efficiency(b200))
    assert sglang.allreduce_norm_fusion is SGLANG_ALLREDUCE_NORM_FUSION_056
    assert vllm.allreduce_norm_fusion is None
    layers = spec.num_hidden_layers
    floor = sglang.kernel_floor_s
    tp8 = Layout(tp=8)

    def small(eff, gpu=b200, layout=tp8, tokens=1, model=spec) -> float:
        return step_time(model, gpu, tokens=tokens, context=500, requests=tokens,
                         layout=layout, eff=eff).by_op["small_kernels"]

    assert small(vllm) - small(sglang) == pytest.approx((2 * layers - 1) * floor)
    h100 = get_gpu("H100-80GB")
    assert (small(engine_efficiency("sglang", version="0.5.6"), h100)
            == small(engine_efficiency("vllm"), h100))
    assert small(sglang, layout=Layout(tp=1)) == small(vllm, layout=Layout(tp=1))
    assert small(sglang, tokens=4096) == small(vllm, tokens=4096)
    qwen = load_spec("qwen3-235b-a22b")
    assert small(sglang, model=qwen) == small(vllm, model=qwen)
    ds = load_spec("deepseek-v3")
    assert (small(vllm, model=ds) - small(sglang, model=ds)
            == pytest.approx((2 * ds.num_hidden_layers - 1) * floor))
    assert (eager_prefill_ops(spec, Layout(tp=8))
            - eager_prefill_ops(spec, Layout(tp=8), fused_norms=True) == 2 * layers - 1)
    assert (prefill_launch_ms(spec, Layout(tp=8), sglang, gpu=b200, tokens=332)
            < prefill_launch_ms(spec, Layout(tp=8), sglang))
