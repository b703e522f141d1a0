"""kvplan.analysis.inputs: the one place PlanInputs are built from what a user asked for
(`estimate`, `plan`, `sweep`, `compare`)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan.analysis.inputs import build_inputs, estimate_inputs
from kvplan.engines.base import Engine, gpu_inputs, plan_inputs
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.resolve import load_spec


def test_plan_inputs_takes_the_preset_then_the_fields_given():
    h100 = get_gpu("H100")
    inputs = build_inputs(context=8192, gpu=h100, tp=2, kv_dtype="fp8")
    # vLLM's batch defaults: 8192 tokens on a >= 70 GiB GPU that is not an A100.
    assert inputs == plan_inputs(context=8192, tp=2, kv_dtype="fp8", max_num_batched_tokens=8192,
                                **gpu_inputs(h100))
    assert inputs.total_bytes == h100.total_bytes and inputs.nvlink
    # An A100 and a small card: 2048 (vllm/engine/arg_utils.py get_batch_defaults).
    assert build_inputs(context=1, gpu=get_gpu("A100")).max_num_batched_tokens == 2048
    assert build_inputs(context=1, gpu=get_gpu("L4")).max_num_batched_tokens == 2048
    # From vLLM 0.28, >= 160 GiB devices get 16384; the version given decides.
    b200 = get_gpu("B200")
    assert build_inputs(context=1, gpu=b200).max_num_batched_tokens == 16384
    assert build_inputs(context=1, gpu=b200, engine_version="0.27").max_num_batched_tokens == 8192
    # Given fields win over the preset's; a given budget is kept.
    mine = build_inputs(context=1, gpu=h100, platform="rocm", total_bytes=None,
                       max_num_batched_tokens=1024)
    assert (mine.platform, mine.total_bytes, mine.max_num_batched_tokens) == ("rocm", None, 1024)
    # No preset: PlanInputs' own defaults.
    assert build_inputs(context=4096) == plan_inputs(context=4096)


def test_estimate_inputs_sizes_without_a_device_and_plans_with_one():
    spec = load_spec("llama-3.1-8b")
    bare = estimate_inputs(spec, context=4096)
    assert bare.capacity is None and bare.gpu is None
    assert bare.sizing == plan_inputs(context=4096)
    asked = estimate_inputs(spec, context=4096, gpu="h100", pp=2, mem_fraction=0.8,
                            weights_gib=10, expert_parallel=True, tp=2)
    assert asked.device == "H100-80GB, 79.19 GiB driver-reported"
    assert asked.capacity == replace(asked.sizing, total_bytes=asked.gpu.total_bytes, pp=2,
                                     mem_fraction=0.8, weights_bytes=10 * GiB, ep=2)
    assert asked.sizing.total_bytes is None
    budget = estimate_inputs(spec, context=4096, kv_cache_memory=2 * GiB)
    assert budget.device == "given KV budget"
    assert budget.capacity is not None and budget.capacity.kv_budget_bytes == 2 * GiB
    assert estimate_inputs(spec, context=1, gpu_mem_gib=40).device == "40 GiB device"


@pytest.mark.parametrize(("options", "message"), [
    ({"gpu": "H100", "gpu_mem_gib": 80}, "--gpu and --gpu-mem-gib: give one, not both"),
    ({"kv_cache_memory": 1, "kv_budget_gib": 1},
     "--kv-cache-memory and --kv-budget-gib: give one, not both"),
    ({"speculative_eagle_topk": 2}, "--speculative-eagle-topk / --speculative-num-draft-tokens: "
                                    "need --speculative-method"),
    ({"engine": Engine.sglang, "speculative_method": "eagle"},
     "--engine sglang --speculative-method: give --speculative-num-steps"),
    ({"disable_radix_cache": True, "prefix_caching": True},
     "--disable-radix-cache and --enable-prefix-caching: give one"),
    ({"disable_hybrid": True, "hybrid_manager": "on"},
     "--disable-hybrid-kv-cache-manager contradicts --hybrid-kv-cache-manager on"),
    ({"vision_tower": "27"}, "--vision-tower: expected LAYERS,HIDDEN"),
])
def test_estimate_inputs_refuses_contradictions(options, message):
    with pytest.raises(InputError, match=re.escape(message)):
        estimate_inputs(load_spec("llama-3.1-8b"), context=4096, **options)
