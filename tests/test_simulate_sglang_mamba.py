"""`kvplan simulate --engine sglang` over SGLang's hybrid pool (issue 30): the full-attention
token pool beside MambaPool's recurrent-state slots (kvplan.analysis.simulate.sglang_pools,
after SGLang 0.5.6 / 0.5.8 / 0.5.9 model_runner.py, tp_worker.py, scheduler.py,
mem_cache/memory_pool.py and mem_cache/mamba_radix_cache.py)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model

runner = CliRunner()

GiB = 1 << 30


def _qwen3_next(**options: object):  # type: ignore[no-untyped-def]
    spec = load_model("qwen3-next-80b-a3b")[0]
    inputs = estimate_inputs(spec, context=2064, gpu="H200", tp=8, kv_budget_gib=40,
                             engine=Engine("sglang"), engine_version="0.5.6", **options)
    return spec, inputs


def test_qwen3_next_slots_and_running_cap_by_hand() -> None:
    """Qwen/Qwen3-Next-80B-A3B-Instruct's config.json: 48 layers, every fourth full attention
    (12; 36 Gated DeltaNet), 2 KV heads of 256; linear_num_key_heads 16,
    linear_num_value_heads 32, linear_key_head_dim = linear_value_head_dim = 128,
    linear_conv_kernel_dim 4. At TP 8 on SGLang 0.5.6:
    - configs/qwen3_next.py: mamba2_cache_params -> configs/mamba_utils.py Mamba2StateShape
      .create (0.5.6:87-122): conv_dim = 32 x 128 + 2 x 16 x 128 = 8,192, conv state
      (8,192 / 8, 4 - 1) = 3,072 bfloat16 = 6,144 B; temporal state (32 / 8, 128, 128) =
      65,536 float32 = 262,144 B; mamba_cache_per_req = 36 x 268,288 = 9,658,368 B.
    - model_runner.py handle_max_mamba_cache (0.5.6:1470-1485), rest = 40 GiB =
      42,949,672,960 B, mamba_full_memory_ratio 0.9 (0.5.4+): int(rest x 0.9 / 1.9 //
      9,658,368) = int(2,106.42) = 2,106 slots; the token pool gets rest - 2,106 x 9,658,368 =
      22,609,149,952 B over the full layers' cell, 12 x 2 (K, V) x 1 head (2 KV heads over 8
      ranks: one each) x 256 x 2 B = 12,288 B: 1,839,937 tokens.
    - init_memory_pool (0.5.6:1675-1695): max_num_reqs = min(clamp(1,839,937 / 2,064 x 512,
      2,048, 4,096) = 4,096, 2,106 // 3 = 702) = 702; tp_worker.py (0.5.6:289-297): the
      scheduler's max_running_requests = min(1,839,937 // 2, 702) = 702."""
    spec, inputs = _qwen3_next()
    sim, notes = setup(spec, inputs)
    plan = sim.plan
    assert plan.state_bytes_per_request == 9_658_368
    assert plan.max_mamba_cache_size == 2_106
    assert plan.token_capacity == 1_839_937
    assert sim.sglang is not None and sim.sglang.max_running_requests == 702
    assert sim.scheduler.max_num_seqs == 702
    assert "2,106 mamba slots, 3 per running request, max_running_requests 702" in notes[0]
    assert "radix cache on without hits" in notes[0]
    assert not sim.caching  # the mamba radix cache's hits are simulated at 0.5.7 - 0.5.12 only


def test_without_the_radix_cache_a_request_takes_one_slot() -> None:
    """--disable-radix-cache with --max-running-requests 40 (model_runner.py 0.5.6:1460-1469):
    max_mamba_cache_size = 40, ratio 1 (0.5.6:1686-1695): the cap is min(40, 40 // 1) = 40; the
    token pool gets rest - 40 x 9,658,368 = 42,563,338,240 B / 12,288 = 3,463,813 tokens."""
    spec, inputs = _qwen3_next(disable_radix_cache=True, max_num_seqs=40)
    sim, _ = setup(spec, inputs)
    assert sim.plan.max_mamba_cache_size == 40
    assert sim.plan.token_capacity == 3_463_813
    assert sim.sglang is not None and sim.sglang.max_running_requests == 40


def _run(slots: int):  # type: ignore[no-untyped-def]
    spec, inputs = _qwen3_next(max_mamba_cache_size=slots)
    sim, _ = setup(spec, inputs)
    specs = [RequestSpec(arrival_s=0.0, prompt_len=256, output_len=64) for _ in range(40)]
    return sim, simulate(sim, specs, concurrency=40, timeline=True)


def test_mamba_slots_run_out_requests_queue_and_more_slots_do_not() -> None:
    """40 requests at once, each 256 + 64 tokens: the token pool (1.8M tokens) never binds.
    --max-mamba-cache-size 30: 30 // 3 = 10 requests run at a time (SGLang admits no more:
    get_num_allocatable_reqs <= 0, batch_is_full), the other 30 wait in the queue, with no
    retraction (that is for the token pool only, check_decode_mem); 300 slots: 100 >= 40, every
    request runs at once and none waits after the first prefill."""
    few, short = _run(30)
    assert few.sglang is not None and few.sglang.max_running_requests == 10
    running = [rec.running for _, rec in short.timeline]
    assert max(running) == 10
    assert max(rec.waiting for _, rec in short.timeline) >= 30
    assert short.metrics.preemptions == 0
    many, ample = _run(300)
    assert many.sglang is not None and many.sglang.max_running_requests == 100
    assert max(rec.running for _, rec in ample.timeline) == 40
    assert ample.metrics.preemptions == 0
    # Queued behind three waves of 10, the short-slot run's mean TTFT is far longer: 4.6 x (22 x
    # before the simulator charged SGLang's eager prefill launch, 2,129 ops x 70 us = 149 ms a
    # prefill step, which the ample run's two chunks of 8,192 and 2,048 tokens pay as well).
    assert short.metrics.ttft_ms["mean"] > 4 * ample.metrics.ttft_ms["mean"]


def test_cli_simulates_the_mamba_pool_and_refuses_what_it_does_not() -> None:
    args = ["simulate", "qwen3-next-80b-a3b", "--engine", "sglang", "--engine-version", "0.5.6",
            "--gpu", "H200", "--tp", "8", "--kv-budget-gib", "40", "--max-model-len", "2064",
            "--concurrency", "8", "--num-requests", "16", "--input-len", "256",
            "--output-len", "32"]
    ok = runner.invoke(app, [*args, "--format", "json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    assert data["num_requests"] == 16 and data["max_num_seqs"] == 702
    small = runner.invoke(app, [*args, "--max-mamba-cache-size", "12", "--format", "json"])
    assert small.exit_code == 0, small.output
    assert json.loads(small.stdout)["max_num_seqs"] == 4
    hits = runner.invoke(app, [*args, "--enable-prefix-caching"])
    assert hits.exit_code == 2 and hits.stdout == ""
    assert hits.stderr.startswith("kvplan: error: --enable-prefix-caching: SGLang 0.5.6's "
                                  "mamba radix cache")
    assert hits.stderr.count("\n") == 1
    # The mamba pool's slots as JSON keys: 2,106 slots, the running requests hold one each
    # (at most the 8 of --concurrency 8).
    assert data["mamba_slots"] == 2_106
    assert 0 < data["mamba_slots_used"]["mean"] <= data["mamba_slots_used"]["max"] <= 8
    assert "swa_tokens" not in data
    # Llama-4's chunked layers in SGLang's sliding-window pool (attention_chunk_size as the
    # window, model_runner.py 0.5.9:1030): simulated since issue 30's sglswa52.
    swa = runner.invoke(app, ["simulate", "llama-4-scout", "--engine", "sglang", "--gpu",
                              "H200", "--tp", "8", "--max-model-len", "8192",
                              "--engine-version", "0.5.9",
                              "--num-requests", "4", "--rate", "1", "--format", "json"])
    assert swa.exit_code == 0, swa.output
    assert json.loads(swa.stdout)["swa_window"] == 8192
