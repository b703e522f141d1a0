"""SGLang's prefill (extend) step without DeepEP: its MLP layers gather every DP rank's tokens by
an all-reduce and all-reduce their output, with no all-to-all (kvplan.perf.roofline, module
docstring; Efficiency.prefill_mlp_all_reduce, set by CostTraits.prefill_mlp_all_reduce).

Read in SGLang 0.5.8.post1: server_args.py:472 (`moe_a2a_backend` defaults to "none"),
layers/dp_attention.py:61-65 (`get_dp_padding_mode`: an extend batch takes SUM_LEN) and
:443-475 (`_dp_gather_via_all_reduce`: a zeroed buffer of the summed tokens, each rank its
slice, `tensor_model_parallel_all_reduce`), layers/communicator.py:754-795
(`_gather_hidden_states_and_residual` -> `dp_gather_partial`) and :282-298 (`_compute_mlp_mode`:
a dense layer's MLP is FULL, gathered, unless --moe-dense-tp-size 1), models/deepseek_v2.py:681-686
(`DeepseekV2MoE.forward_normal`: `tensor_model_parallel_all_reduce(final_hidden_states)` when
tp_size > 1 and not reduce-scattering, which only MAX_LEN does, communicator.py:931)."""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time

B200 = get_gpu("B200")
DEP4 = Layout(tp=4, ep=4, dp_attention=True)


def _prefill(engine: str, layout: Layout, tokens: int, prompts: int, context: int = 1024):
    spec = load_spec("deepseek-v3")
    return step_time(spec, B200, tokens=tokens, context=context, requests=prompts,
                     phase="prefill", logits=prompts, layout=layout,
                     eff=engine_efficiency(engine))


def test_sglang_dep4_prefill_gathers_by_two_all_reduces_a_layer() -> None:
    # DeepSeek-V3: 61 layers, each with an MLP (3 dense, 58 MoE), hidden 7,168. A full
    # step of SGLang's B200 DEP4 prefill worker: 4 prompts of 1,024 tokens on each of the 4
    # ranks (the chunk 16,384 // 4 = 4,096). The gathered buffer holds every rank's tokens:
    # S = 4 x 4,096 = 16,384 rows x 7,168 x 2 B (bf16) = 234,881,024 B, over the 8 MiB custom
    # all-reduce: NCCL's ring on NVLink 5 (interconnects.json: 588 GB/s, 8 us):
    # 8 us + 2 x 3/4 x 234,881,024 / 588e9 s = 8 + 599.186 = 607.186 us. Two per layer (the
    # gather, the output's), 61 layers: 122 x 607.186 us = 74.077 ms, and no all-to-all.
    step = _prefill("sglang", DEP4, tokens=4096, prompts=4)
    one = 8e-6 + 2 * 3 / 4 * 16384 * 7168 * 2 / 588e9
    assert step.by_op["dp_gather_all_reduce"] == pytest.approx(122 * one)
    assert step.by_op["dp_gather_all_reduce"] == pytest.approx(74.077e-3, abs=1e-6)
    assert "ep_all_to_all" not in step.by_op
    # One 1,024-token prompt: the lockstep ranks timed as if each held as many (the busiest),
    # S = 4,096 rows: 58,720,256 B, 8 + 149.797 us each, 122 x 157.797 us = 19.251 ms.
    alone = _prefill("sglang", DEP4, tokens=1024, prompts=1)
    assert alone.by_op["dp_gather_all_reduce"] == pytest.approx(
        122 * (8e-6 + 1.5 * 4096 * 7168 * 2 / 588e9))


def test_the_rule_is_sglangs_prefill_only() -> None:
    # vLLM's DP-attention EP keeps its all-to-all: 58 MoE layers x (2 x 8 us + 4,096 tokens x
    # top-8 x 7,168 x (1 B FP8 dispatch + 2 B bf16 combine) x 3/4 / 588e9 s).
    vllm = _prefill("vllm", DEP4, tokens=4096, prompts=4)
    assert "dp_gather_all_reduce" not in vllm.by_op
    assert vllm.by_op["ep_all_to_all"] == pytest.approx(
        58 * (2 * 8e-6 + 4096 * 8 * 7168 * 3 * 3 / 4 / 588e9))
    # SGLang's decode steps (CUDA graphs, MAX_LEN) gather otherwise: all-gather and
    # reduce-scatter, no all-reduce (tests/test_decode_gather.py).
    spec = load_spec("deepseek-v3")
    decode = step_time(spec, B200, tokens=64, context=2048, requests=64, layout=DEP4,
                       eff=engine_efficiency("sglang"))
    assert "ep_all_to_all" not in decode.by_op and "dp_gather_all_reduce" not in decode.by_op


def test_sglang_tp_attention_ep_prefill_has_no_all_to_all() -> None:
    # TP 8 attention with EP 8: every rank holds every token; the experts' partial sums join the
    # TP all-reduce after the layer (deepseek_v2.py:681-686), already counted: 2 a layer.
    step = _prefill("sglang", Layout(tp=8, ep=8), tokens=2048, prompts=2)
    assert "ep_all_to_all" not in step.by_op and "dp_gather_all_reduce" not in step.by_op
    assert step.by_op["tp_all_reduce"] > 0
    # TensorRT-LLM's fused MoE neither (CutlassFusedMoE.select_alltoall_method_type, 1.2 line:
    # NotEnabled where dp_size == 1; tests/test_decode_gather.py); under DP attention it runs one.
    trtllm = _prefill("trtllm", Layout(tp=8, ep=8), tokens=2048, prompts=2)
    assert "ep_all_to_all" not in trtllm.by_op
    assert trtllm.by_op["tp_all_reduce"] == pytest.approx(step.by_op["tp_all_reduce"])
    dep = _prefill("trtllm", Layout(tp=8, ep=8, dp_attention=True), tokens=2048, prompts=2)
    assert dep.by_op["ep_all_to_all"] > 0
