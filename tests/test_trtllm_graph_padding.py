"""TensorRT-LLM's generation-only steps padded to the next captured CUDA-graph batch size with
cuda_graph_config.enable_padding on (kvplan.engines.trtllm.engine `decode_graph_sizes`,
CUDAGraphRunner._get_padded_batch), a step with a context request never (MixedStepCost
`graph_mixed` False), priced by kvplan.perf.graph_padding's rule as vLLM's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kvplan import load_spec
from kvplan.engines.base import Engine, PlanInputs
from kvplan.engines.rules import plan_inputs
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.mixed_step import MixedStepCost

GiB = 1 << 30
FULL = "tests/data/configs/llama-3.1-8b.json"


def _inputs(**opts: Any) -> PlanInputs:
    return plan_inputs(context=2048, total_bytes=80 * GiB, engine=Engine.trtllm,
                       engine_version="1.2.0", **opts)


def test_trtllm_decode_graph_sizes_by_hand() -> None:
    spec = load_spec("tests/data/configs/gpt-oss-120b.json")
    rules = Engine.trtllm.rules
    # enable_padding off (the default): no padding, whatever the batch.
    assert rules.decode_graph_sizes(spec, _inputs()) == ()
    assert rules.decode_graph_sizes(spec, _inputs(cuda_graph_max_batch_size=64)) == ()
    # On, max_batch_size 64: [1, 2, 4] + 8, 16, ..., 128 cut at 64, 64 kept: 3 + 8 = 11 sizes.
    on64 = _inputs(cuda_graph_max_batch_size=64, cuda_graph_padding=True)
    assert rules.decode_graph_sizes(spec, on64) == (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64)
    # Eager: no graphs.
    assert rules.decode_graph_sizes(spec, replace(on64, enforce_eager=True)) == ()
    # On, max_batch_size 256: 1, 2, 4, 8..128 by 8, 256 (20 sizes); the engine's max_batch_size
    # 100 (max_num_seqs) drops every size above it (the runner pads no batch past it):
    # 1, 2, 4, 8..96 by 8 = 3 + 12 = 15 sizes.
    on256 = _inputs(cuda_graph_max_batch_size=256, cuda_graph_padding=True)
    assert len(rules.decode_graph_sizes(spec, on256)) == 20
    cut = rules.decode_graph_sizes(spec, replace(on256, max_num_seqs=100))
    assert cut == (1, 2, 4, *range(8, 97, 8))


def test_generation_only_padded_mixed_not() -> None:
    # Graph sizes (1, 2, 4, 8). TensorRT-LLM (graph_mixed False): 3 decodes run the dense ops
    # at 4 rows (the head at 3); 3 decodes + a 2-token chunk (5 tokens) run at 5, not 8.
    # vLLM's rule (graph_mixed True) pads that mixed step to 8.
    spec = load_spec("tests/data/configs/gpt-oss-120b.json")
    gpu = get_gpu("H100-80GB")
    trt = MixedStepCost(spec, gpu, graph_sizes=(1, 2, 4, 8), graph_mixed=False)
    vllm = MixedStepCost(spec, gpu, graph_sizes=(1, 2, 4, 8))
    plain = MixedStepCost(spec, gpu)
    dec = [100, 200, 300]
    chunk = [(0, 2)]
    head3 = plain.head_seconds(3)
    at4 = plain.dense_seconds(4, 3) - plain.head_seconds(3)  # dense part at 4 rows, head at 3
    assert trt.dense_seconds(3, 3) == pytest.approx(at4 + head3)
    pure = trt.seconds(decode_contexts=dec, chunks=[])
    assert pure == pytest.approx(vllm.seconds(decode_contexts=dec, chunks=[]))
    assert pure == pytest.approx(plain.seconds(decode_contexts=dec, chunks=[])
                                 - plain.dense_seconds(3, 3) + at4 + head3)
    assert pure > plain.seconds(decode_contexts=dec, chunks=[])
    mixed = trt.seconds(decode_contexts=dec, chunks=chunk)
    assert mixed == pytest.approx(plain.seconds(decode_contexts=dec, chunks=chunk))
    assert vllm.seconds(decode_contexts=dec, chunks=chunk) > mixed
    # seconds_from_sums (a model with full attention in every layer) follows the same rule.
    # One size, 2,048: 3 decodes run the dense ops at 2,048 rows (compute-bound there, so
    # slower than at 3 on an 8B model, where 3 and 4 rows both read the weights alike).
    full = load_spec(FULL)
    trt_full = MixedStepCost(full, gpu, graph_sizes=(2048,), graph_mixed=False)
    plain_full = MixedStepCost(full, gpu)
    assert trt_full.seconds_from_sums(3, 600, chunk) == pytest.approx(
        plain_full.seconds_from_sums(3, 600, chunk))
    padded = trt_full.seconds_from_sums(3, 600, [])
    assert padded == pytest.approx(plain_full.seconds_from_sums(3, 600, [])
                                   - plain_full.dense_seconds(3, 3)
                                   + plain_full.dense_seconds(2048, 3))
    assert padded > plain_full.seconds_from_sums(3, 600, [])
    # A stage or a drafter of the same engine keeps the rule.
    assert not trt.for_stage(range(2), head=True).graph_mixed
    assert not trt.for_spec(spec).graph_mixed


def test_trtllm_mtp_graph_sizes_in_tokens() -> None:
    # MTP k = 3: each captured batch size b holds b x (1 + 3) tokens (CUDAGraphRunner.capture:
    # num_tokens_for_capture = batch_size x token_per_request), the padding's unit. Sizes
    # (1, 2, 4, 8, ..., 64) -> (4, 8, 16, 32, ..., 256).
    from kvplan.perf.graph_padding import padded_tokens

    spec = load_spec("tests/data/configs/gpt-oss-120b.json")
    on64 = _inputs(cuda_graph_max_batch_size=64, cuda_graph_padding=True)
    mtp = replace(on64, speculative_method="mtp", num_speculative_tokens=3)
    sizes = Engine.trtllm.rules.decode_graph_sizes(spec, mtp)
    assert sizes == (4, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256)
    # A verify step of 5 requests (20 tokens) replays the graph of 8 requests: 32 tokens (in
    # requests it would have been padded to the size 24, a graph of 24 requests).
    assert padded_tokens(5 * 4, sizes) == 32
    assert padded_tokens(5 * 4, Engine.trtllm.rules.decode_graph_sizes(spec, on64)) == 24
