"""A decode step replayed from a CUDA graph (kvplan.perf.graph_padding): the tokens padded to the
next captured size, the dense ops at that size, the attention core and head at the real
requests; given to vLLM's disaggregated roles (raypd66), as `kvplan simulate` steps vLLM."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan import load_spec
from kvplan.engines.base import Engine
from kvplan.engines.rules import plan_inputs
from kvplan.engines.vllm.budget import vllm_cuda_graph_sizes
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.costmodel import CostInputs, predict
from kvplan.perf.graph_padding import ATTENTION_CORE_OPS, padded_step, padded_tokens
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import _OWN_OPS

GiB = 1 << 30
# vLLM 0.11.0 for gpt-oss: [1, 2, 4] + range(8, 256, 8) + range(256, 993, 16) (the model class's
# ceiling 992 under max_num_batched_tokens 8,192; tests/test_vllm_graph_sizes.py).
SIZES_0110 = vllm_cuda_graph_sizes(max_num_seqs=1024, max_num_batched_tokens=8192,
                                   model_max_capture=992)


def test_padded_tokens_by_hand() -> None:
    # The next captured size: 3 -> 4, 5 -> 8, 41 -> 48 (multiples of 8 below 256), 48 stays,
    # 257 -> 272 (multiples of 16 from 256), 992 stays; 993 is above the largest: eager, its own.
    got = [padded_tokens(t, SIZES_0110) for t in (1, 3, 5, 41, 48, 257, 992, 993)]
    assert got == [1, 4, 8, 48, 48, 272, 992, 993]
    assert padded_tokens(41, ()) == 41  # no graphs (--enforce-eager, SGLang, TensorRT-LLM)


def test_padded_step_by_hand() -> None:
    # Timed at the padded tokens: 10 s, of which attention 2 and lm_head 1 (the core ops);
    # at the real ones attention 1.5 and lm_head 1. Padded step: 10 - (2 + 1) + (1.5 + 1) = 9.5;
    # the dense ops (experts 6, norm 1) stay at the padded size's.
    seconds, by_op = padded_step(10.0, {"experts": 6.0, "attention": 2.0, "lm_head": 1.0,
                                        "norm": 1.0},
                                 {"experts": 5.0, "attention": 1.5, "lm_head": 1.0, "norm": 1.0})
    assert seconds == pytest.approx(9.5)
    assert by_op == {"experts": 6.0, "norm": 1.0, "attention": 1.5, "lm_head": 1.0}
    # simulate's mixed step leaves out the same ops from its dense part (one list).
    assert _OWN_OPS == ATTENTION_CORE_OPS


def _gpt_oss_inputs(batch: int, sizes: tuple[int, ...]) -> tuple[object, object, CostInputs]:
    spec = load_spec("tests/data/configs/gpt-oss-120b.json")
    return spec, get_gpu("h100_sxm"), CostInputs(context=5125, batch=batch,
                                                 layout=Layout(tp=2), graph_sizes=sizes)


def test_predict_pads_the_dense_ops_only() -> None:
    # gpt-oss-120b TP 2 on an H100 at 41 requests of 5,125 tokens: the step runs the 48-token
    # graph. Its dense ops are the 48-request step's, its attention and head the 41's.
    spec, gpu, at41 = _gpt_oss_inputs(41, SIZES_0110)
    padded = predict(spec, gpu, at41)
    plain41 = predict(spec, gpu, replace(at41, graph_sizes=()))
    plain48 = predict(spec, gpu, replace(at41, batch=48, graph_sizes=()))
    assert padded.decode_ms_by_op["experts"] == pytest.approx(plain48.decode_ms_by_op["experts"])
    assert padded.decode_ms_by_op["attention"] == pytest.approx(
        plain41.decode_ms_by_op["attention"])
    core = sum(v for k, v in plain48.decode_ms_by_op.items() if k in ATTENTION_CORE_OPS)
    core41 = sum(v for k, v in plain41.decode_ms_by_op.items() if k in ATTENTION_CORE_OPS)
    assert padded.decode_step_ms == pytest.approx(plain48.decode_step_ms - core + core41)
    assert plain41.decode_step_ms < padded.decode_step_ms < plain48.decode_step_ms
    # At a captured size the step is unchanged.
    _, _, at48 = _gpt_oss_inputs(48, SIZES_0110)
    assert predict(spec, gpu, at48).decode_step_ms == pytest.approx(plain48.decode_step_ms)


def test_vllm_decode_graph_sizes() -> None:
    # `vllm serve` on an 80 GB H100 at 0.11.0: max_num_seqs 1024, max_num_batched_tokens 8192;
    # gpt-oss's class ceiling 992: 3 + 31 + (992 - 256) / 16 + 1 = 81 sizes, the last 992.
    spec = load_spec("tests/data/configs/gpt-oss-120b.json")
    rules = Engine.vllm.rules
    inputs = plan_inputs(context=5250, total_bytes=80 * GiB, engine=Engine.vllm,
                         engine_version="0.11.0", max_num_batched_tokens=8192)
    sizes = rules.decode_graph_sizes(spec, inputs)
    assert len(sizes) == 81 and sizes[-1] == 992 and sizes == SIZES_0110
    assert rules.decode_graph_sizes(spec, replace(inputs, enforce_eager=True)) == ()
    # A launch's own max_num_seqs 16: the default ceiling min(2 x 16, 512) = 32 does not apply
    # to gpt-oss (its class sets 992), so still 81; a dense model's stops at 32.
    assert rules.decode_graph_sizes(spec, replace(inputs, max_num_seqs=16)) == SIZES_0110
    dense = replace(spec, architectures=("LlamaForCausalLM",))
    assert rules.decode_graph_sizes(dense, replace(inputs, max_num_seqs=16)) == (
        1, 2, 4, 8, 16, 24, 32)
    assert Engine.sglang.rules.decode_graph_sizes(spec, inputs) == ()
    trt = replace(inputs, engine=Engine.trtllm, options=None)  # enable_padding off
    assert Engine.trtllm.rules.decode_graph_sizes(spec, trt) == ()
