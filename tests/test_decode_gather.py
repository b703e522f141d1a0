"""SGLang's decode step without DeepEP: under DP attention its MLP layers gather every rank's
tokens by an all-gather, padded to the most a rank holds (MAX_LEN), and reduce-scatter the
output, with no all-to-all; with TP attention EP's partial sums join the TP all-reduce
(kvplan.perf.roofline, module docstring; Efficiency.decode_mlp_gather, set by
CostTraits.decode_mlp_gather).

Read in SGLang 0.5.8.post1 (0.5.5.post2 the same code): server_args.py:472 (`moe_a2a_backend`
defaults to "none"; 0.5.5.post2 :400), layers/dp_attention.py:61-73 (`get_dp_padding_mode`: a
batch with no extend takes MAX_LEN when 2 x the summed tokens exceed the most a rank holds x the
DP size, i.e. the ranks about even) and :76-82 (`get_default_mode_in_cuda_graph`: MAX_LEN),
:478-495 (`_dp_gather_via_all_gather`: attention TP 1, one all_gather_into_tensor of the TP
group), :552-561 (`dp_reduce_scatter_tensor`: TP size = DP size, one reduce_scatter_tensor),
layers/communicator.py:282-298 (`_compute_mlp_mode`: FULL, gathered, for a sparse layer without
an a2a backend or the flashinfer-cutlass FP4 all-gather, and for a dense one unless
--moe-dense-tp-size 1), :566-576 (`should_use_reduce_scatter`: MAX_LEN) and :920-936
(`_scatter_hidden_states` -> `dp_reduce_scatter_tensor`), models/deepseek_v2.py:681-686 and
:2403 (the MoE's all-reduce skipped under `use_reduce_scatter`). aiconfigurator's generator
(ai-dynamo/aiconfigurator 095f58a5, generator/config/backend_templates/sglang/cli_args.0.5.8.j2)
writes no --moe-a2a-backend, so its SGLang rows ran this default."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time

B200 = get_gpu("B200")


def _decode(engine: str, layout: Layout, requests: int, gpu=B200):
    spec = load_spec("deepseek-v3")
    return step_time(spec, gpu, tokens=requests, context=2048, requests=requests,
                     layout=layout, eff=engine_efficiency(engine))


def test_sglang_dep8_decode_gathers_by_all_gather_and_reduce_scatter() -> None:
    # DeepSeek-V3 (61 layers, each with an MLP: 3 dense, 58 MoE; hidden 7,168) on SGLang's B200
    # DEP8 decode worker at 64 requests a rank (cfg527's decode: 512 users over 8 ranks). The
    # gathered buffer: 8 ranks x 64 tokens = 512 rows x 7,168 x 2 B (bf16) = 7,340,032 B. NCCL's
    # ring on NVLink 5 (interconnects.json: 588 GB/s, 8 us), each half of an all-reduce:
    # 8 us + 7/8 x 7,340,032 / 588e9 s = 8 + 10.923 = 18.923 us. One all-gather in and one
    # reduce-scatter out a layer, 61 layers: 61 x 18.923 us = 1.154 ms each, 2.309 ms a step.
    step = _decode("sglang", Layout(tp=8, ep=8, dp_attention=True), requests=64)
    half = 8e-6 + 7 / 8 * 512 * 7168 * 2 / 588e9
    assert step.by_op["dp_gather_all_gather"] == pytest.approx(61 * half)
    assert step.by_op["dp_gather_reduce_scatter"] == pytest.approx(61 * half)
    assert step.by_op["dp_gather_all_gather"] == pytest.approx(1.154e-3, abs=1e-6)
    # No all-to-all, which cost 58 MoE layers x (2 x 8 us + 64 x top-8 x 7,168 x (1 B FP8
    # dispatch + 2 B bf16 combine) x 7/8 / 588e9 s) = 58 x 32.384 us = 1.878 ms before.
    assert "ep_all_to_all" not in step.by_op and "dp_gather_all_reduce" not in step.by_op
    vllm = _decode("vllm", Layout(tp=8, ep=8, dp_attention=True), requests=64)
    assert vllm.by_op["ep_all_to_all"] == pytest.approx(
        58 * (2 * 8e-6 + 64 * 8 * 7168 * 3 * 7 / 8 / 588e9))
    assert "dp_gather_all_gather" not in vllm.by_op


def test_sglang_dp32_on_nvl72_gathers_every_rank() -> None:
    # GB200 DP32 EP32 (one NVL72 domain: NVLink 5, 588 GB/s, 8 us), 128 requests a rank
    # (cfg523 at 4,096 users): 32 x 128 = 4,096 rows x 7,168 x 2 B = 58,720,256 B;
    # 8 us + 31/32 x 58,720,256 / 588e9 s = 8 + 96.744 = 104.744 us a half, 61 x 2 halves:
    # 12.779 ms a step.
    step = _decode("sglang", Layout(tp=32, ep=32, dp_attention=True), requests=128,
                   gpu=get_gpu("GB200"))
    half = 8e-6 + 31 / 32 * 4096 * 7168 * 2 / 588e9
    assert step.by_op["dp_gather_all_gather"] + step.by_op["dp_gather_reduce_scatter"] == (
        pytest.approx(122 * half))
    assert 122 * half == pytest.approx(12.779e-3, abs=1e-6)


def test_sglang_dp_attention_without_ep_gathers_dense_layers_too() -> None:
    # DP8 attention, TP-8 experts: the same gather on all 61 layers (the 3 dense ones too, their
    # MLP FULL), in place of kvplan's one all-reduce on the 58 MoE layers before.
    step = _decode("sglang", Layout(tp=8, dp_attention=True), requests=64)
    assert step.by_op["dp_gather_all_gather"] == pytest.approx(
        61 * (8e-6 + 7 / 8 * 512 * 7168 * 2 / 588e9))
    assert "dp_gather_scatter" not in step.by_op


def test_sglang_tp_attention_ep_decode_has_no_all_to_all() -> None:
    # TP 8 attention with EP 8 (cfg455's layout): every rank holds every token; the experts'
    # partial sums join the TP all-reduce after the layer, already counted: 2 a layer.
    step = _decode("sglang", Layout(tp=8, ep=8), requests=16)
    assert "ep_all_to_all" not in step.by_op and "dp_gather_all_gather" not in step.by_op
    assert step.by_op["tp_all_reduce"] > 0


def test_trtllm_tp_attention_ep_has_no_all_to_all() -> None:
    # TensorRT-LLM (1.2 line, _torch/modules/fused_moe/fused_moe_cutlass.py
    # `select_alltoall_method_type`): NotEnabled where mapping.dp_size == 1 ("If no attention
    # DP, no need to use AlltoAll"); fused_moe/interface.py `reducescatter_or_allreduce` then
    # all-reduces the experts' output over the TP group, kvplan's TP all-reduce after the layer
    # (unchanged). TP 8 EP 8 on B200 at 16 requests drops, on each of the 58 MoE layers, the
    # all-to-all it was charged before: 2 x 8 us + 16 tokens x top-8 x 7,168 x (1 B FP8
    # dispatch + 2 B bf16 combine) x 7/8 / 588e9 s = 16 + 4.096 = 20.096 us; 58 x = 1.166 ms.
    eff = engine_efficiency("trtllm")
    assert eff.ep_all_to_all_needs_dp
    tep = step_time(load_spec("deepseek-v3"), B200, tokens=16, context=2048, requests=16,
                    layout=Layout(tp=8, ep=8), eff=eff)
    before = step_time(load_spec("deepseek-v3"), B200, tokens=16, context=2048, requests=16,
                       layout=Layout(tp=8, ep=8), eff=replace(eff, ep_all_to_all_needs_dp=False))
    a2a = 58 * (2 * 8e-6 + 16 * 8 * 7168 * 3 * 7 / 8 / 588e9)
    assert a2a == pytest.approx(1.1656e-3, abs=1e-6)
    assert "ep_all_to_all" not in tep.by_op and before.by_op["ep_all_to_all"] == pytest.approx(a2a)
    assert before.seconds - tep.seconds == pytest.approx(a2a)
    assert tep.by_op["tp_all_reduce"] == pytest.approx(before.by_op["tp_all_reduce"])
    assert tep.by_op["tp_all_reduce"] > 0
    # Under attention DP (DEP8) it still runs one (NVLinkOneSided on Blackwell).
    dep = _decode("trtllm", Layout(tp=8, ep=8, dp_attention=True), requests=16)
    assert dep.by_op["ep_all_to_all"] == pytest.approx(a2a)
