"""The frozen prospective30 set (tests/data/sim_to_real/prospective30.json): every run names its
source, model config, GPU preset, vLLM version and measured figures, and the replay's requests
are the run's stated lengths (no simulation here: tests.benches.prospective_runs does that)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.hardware.gpus import get_gpu
from tests.benches import prospective_runs

ROOT = Path(__file__).resolve().parents[1]


def test_every_run_is_complete() -> None:
    doc = prospective_runs.load()
    assert len(doc["runs"]) >= 10
    for run in doc["runs"]:
        assert run["source"] in doc["sources"], run["id"]
        assert doc["sources"][run["source"]]["url"].startswith("https://github.com/")
        assert (ROOT / run["model"]).is_file(), run["id"]
        assert get_gpu(run["gpu"]).name, run["id"]
        assert run["vllm"].count(".") == 2, run["id"]
        for key in ("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms", "mean_itl_ms"):
            assert run["measured"][key] > 0, (run["id"], key)


def test_requests_follow_the_run() -> None:
    doc = prospective_runs.load()
    by_id = {r["id"]: r for r in doc["runs"]}
    # gpustack's 4K case: 500 prompts of 1,997,942 / 500 = 3,996 tokens + Qwen3's 8-token chat
    # template, 200 out, all sent at t = 0 (no --request-rate).
    reqs = prospective_runs.requests(by_id["gpustack Qwen3-14B H100 random 4000/200"])
    assert len(reqs) == 500
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(4004, 200, 0.0)}
    # kvcached's rate-16 run: 500 Poisson arrivals, mean gap about 1/16 s.
    reqs = prospective_runs.requests(by_id["kvcached-h100 Qwen3-0.6B rate 16 seed 42"])
    assert len(reqs) == 500 and reqs[0].arrival_s == 0.0
    assert 0.8 < reqs[-1].arrival_s / (499 / 16) < 1.2
    assert {(r.prompt_len, r.output_len) for r in reqs} == {(512, 128)}


def test_gpustack_32k_step_by_hand() -> None:
    # Issue 30 (branch gpustack31): the gpustack Qwen3-14B H100 rows run at about half kvplan's
    # speed. The replay's engine is vLLM 0.11.0's `vllm serve` on an H100 (read in the 0.11.0
    # wheel): UsageContext.OPENAI_API_SERVER (vllm/entrypoints/cli/serve.py:87), whose >= 70 GiB
    # non-A100 defaults are max_num_batched_tokens 8192 and max_num_seqs 1024
    # (vllm/engine/arg_utils.py:1605-1614, :1669-1671 with chunked prefill on, :1547-1548), and
    # no per-request chunk cap (vllm/config/scheduler.py:59 long_prefill_token_threshold 0;
    # vllm/v1/core/sched/scheduler.py:424-427 caps only when it is > 0).
    run = next(r for r in prospective_runs.load()["runs"]
               if r["id"] == "gpustack Qwen3-14B H100 random 32000/100")
    spec = load_spec(str(ROOT / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine_version=run["vllm"],
                             mem_fraction=run["gpu_memory_utilization"])
    sim, _ = setup(spec, inputs)
    assert (sim.scheduler.max_num_batched_tokens, sim.scheduler.max_num_seqs) == (8192, 1024)
    # One step of the 32K case: the third 8,192-token chunk of a prompt (positions 16,384 ..
    # 24,575), no decode beside it. Qwen3-14B (config: hidden 5120, 40 layers, 40 query heads,
    # 8 KV heads, head_dim 128, intermediate 17408). Attention: each position p attends p + 1
    # keys, 8,192 x (16,385 + 24,576) / 2 = 167,776,256 pairs per head per layer, 4 x 128
    # FLOPs each (q.K and p.V), 40 heads, 40 layers = 1.37442e14 FLOPs at 989.5 TFLOPS x 0.60
    # (kvplan.perf.efficiency `attention`; the H100 keeps exact pairs: no varlen kernel is
    # declared for SM 9.x) = 231.5 ms.
    pairs = 8192 * (16385 + 24576) // 2
    assert pairs == 167_776_256
    attention_s = 40 * 4 * 128 * 40 * pairs / (989.5e12 * 0.60)
    assert sim.cost.attention_seconds([], [(16384, 8192)]) == pytest.approx(attention_s,
                                                                            rel=1e-9)
    # Projections and MLP: (2 x 5120 x 5120 + 2 x 5120 x 1024 + 3 x 5120 x 17408) = 330,301,440
    # weights per layer x 40 = 13,212,057,600, 2 FLOPs per weight per token, 8,192 tokens at
    # 989.5 TFLOPS x 0.70 (`gemm`) = 312.5 ms; the rest of the dense part (the lm_head's one row,
    # 1.56 GB at 3.35 TB/s x 0.90 = 0.52 ms; 40 layers x 35 us of fitted layer overhead =
    # 1.4 ms; activations) adds under 1 %; since hopperops65 the two norms a layer move their
    # whole rows (kvplan.perf.norm_traffic): 8,192 x 5,120 x 2 B x 4 = 335,544,320 B each, 79.5
    # of them (layer 0's input norm half) at 3.35e12 x 0.9 B/s = 8.846 ms, less 80 floors
    # already counted (0.32 ms): 8.53 ms more.
    weights = 40 * (2 * 5120 * 5120 + 2 * 5120 * 1024 + 3 * 5120 * 17408)
    assert weights == 13_212_057_600
    gemm_s = 2 * 8192 * weights / (989.5e12 * 0.70)
    norms_s = 79.5 * 335_544_320 / (3.35e12 * 0.9) - 80 * 4e-6
    assert norms_s == pytest.approx(8.526e-3, rel=1e-3)
    dense_s = sim.cost.dense_seconds(8192, 1)
    assert gemm_s + norms_s + 40 * 35e-6 < dense_s < gemm_s * 1.01 + norms_s
    # The step: 547 ms by kvplan, 555 with the norms' 8.5 ms (hopperops65); gpustack's
    # published p99 ITL in this case (the longest steps) is 1,101 ms: the step, not the chunk,
    # is where the two part (prospective_runs.SETTLED).
    step = sim.cost.seconds(decode_contexts=[], chunks=[(16384, 8192)])
    assert step == pytest.approx(0.547 + norms_s, abs=0.001)


def test_the_gpustack_runs_ran_flashinfers_sampler() -> None:
    # gpustackfi61 (the data file's 'amended'): gpustack's runner image installs FlashInfer, so
    # vLLM 0.11.0 ran its top-k/top-p warm-up (topk_topp_sampler.py:37-57); only the gpustack
    # runs say so (the kvcached runs are 0.19.0, whose default is the Triton path).
    doc = prospective_runs.load()
    assert "da76887" in doc["amended"]
    for run in doc["runs"]:
        assert run.get("flashinfer_sampler") is (True if run["id"].startswith("gpustack")
                                                 else None), run["id"]
    # The Qwen3-14B 32K run's pool, by hand. The warm-up samples 1,024 rows of 151,936 logits
    # (an API server's max_num_seqs on an H100); it holds 0.13 GiB (139,586,437 B) + 1,024 x
    # 151,936 x B, beyond the forward's 1,107,296,256 B: the sort (B = 34.64) 5,389,376,553 B,
    # FlashInfer's (B = 14.37) 2,235,720,008 B. So FlashInfer's pool is larger by 1,024 x
    # 151,936 x 20.27 = 3,153,656,545 B (+1 B of the two roundings): 41,311,003,310 B //
    # (16 tokens x 40 layers x 2 x 8 heads x 128 x 2 B = 2,621,440 B) = 15,758 blocks with the
    # sort, 44,464,659,856 B // 2,621,440 = 16,961 with FlashInfer.
    run = next(r for r in doc["runs"] if r["id"] == "gpustack Qwen3-14B H100 random 32000/100")
    spec = load_spec(str(ROOT / run["model"]))
    plans = []
    for flashinfer in (None, True):
        inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=1,
                                 engine_version=run["vllm"],
                                 mem_fraction=run["gpu_memory_utilization"],
                                 flashinfer_sampler=flashinfer)
        plans.append(setup(spec, inputs)[0].plan)
    sort, light = plans
    assert sort.reserve_bytes - light.reserve_bytes == 3_153_656_546
    assert (sort.kv_budget_bytes, light.kv_budget_bytes) == (41_311_003_310, 44_464_659_856)
    assert (sort.num_blocks, light.num_blocks) == (15_758, 16_961)
