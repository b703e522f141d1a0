"""vLLM 0.33 and 0.34 (kvplan.engines.vllm.alloc VLLM_PROFILES, .unsized) and the newest-read
flag of every engine (kvplan.engines.base.flag_unread_version).

Read in the wheels' sources (/tmp/vllm-src/<version>/vllm/, the .py files of each PyPI wheel):
0.33.0 split v1/core/kv_cache_utils.py into kv_cache_planning.py and kv_cache_config_builder.py
without moving a number (grouping, page unification, num_blocks = budget // the pool's block,
the concurrency print); what moves is Gated DeltaNet's prefill checkpoints in mamba cache mode
'align' on FlashInfer's GDN prefill, the 0.33 profile run's sampler warm-up and 0.34's
extensible KV cache (budgets kvplan refuses).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.vllm.alloc import vllm_batch_defaults
from kvplan.engines.vllm.profiles import DEFAULT_VLLM_VERSION, NEWEST_READ_VLLM, vllm_profile

GiB = 1 << 30


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def estimate(*args: str) -> dict:
    code, out, err = run("estimate", *args, "-f", "json")
    assert code == 0, err
    return json.loads(out)


def refused(*args: str) -> str:
    code, _, err = run(*args)
    errors = [line for line in err.splitlines() if line.startswith("kvplan: error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


def test_profiles_by_release() -> None:
    # A release takes the newest profile at or below it; no version: the default, 0.32, the
    # newest whose budget kvplan models (0.33's and 0.34's are refused below).
    assert [vllm_profile(v).version for v in ("0.32.0", "0.33", "0.33.0", "0.34.0", "0.35")] == [
        "0.32", "0.33", "0.33", "0.34", "0.34"]
    assert vllm_profile(None).version == DEFAULT_VLLM_VERSION == "0.32"
    assert NEWEST_READ_VLLM == "0.34.0"


def test_qwen3_5_gdn_prefill_checkpoint_from_0_33() -> None:
    # Qwen3.5-9B (model_specs/qwen3.5-9b.yaml): 8 full-attention layers of 4 KV heads x 256,
    # bf16: 2 x 4 x 256 x 2 = 4,096 B a token; 24 Gated DeltaNet layers whose state is conv
    # 3 x (2 x 16 x 128 + 32 x 128) bf16 = 49,152 B + ssm 32 x 128 x 128 float32 = 2,097,152 B:
    # 2,146,304 B. Prefix caching on (the hybrid default): mamba cache mode 'align'.
    # 0.32 (platforms/interface.py _align_hybrid_block_size): 16 x cdiv(2,146,304, 16 x 4,096)
    # = 16 x 33 = 528 tokens; a state takes 2 pages a request.
    # 0.33 on H100 (SM 9.0: FlashInfer's GDN prefill, 0.33.0 model_executor/layers/mamba/gdn/
    # qwen_gdn_linear_attn.py:249-250): the block is lcm(16, 64) x cdiv(2,146,304, 64 x 4,096)
    # = 64 x 9 = 576 (platforms/interface.py:1089-1094, gdn_attn.py:34) and each GDN layer's
    # spec keeps num_prefill_checkpoint_blocks=1 (qwen_gdn_linear_attn.py:746-750), so a state
    # takes 2 + 1 = 3 pages a request (kv_cache_interface.py:1138 max_memory_usage_bytes).
    # At 8,192 tokens the attention takes cdiv(8,192, 576) = 15 pages (0.32: 16 of 528).
    # 20 GiB: 21,474,836,480 // (576 x 4,096 x 8 layers a group = 18,874,368) = 1,137 blocks;
    # 3 state groups x 3 + 15 = 24 a request: 47.375 requests (0.32: // 17,301,504 = 1,241,
    # 3 x 2 + 16 = 22: 56.41).
    old = estimate("qwen3.5-9b", "-c", "8192", "--engine-version", "0.32", "--gpu", "H100",
                   "--kv-budget-gib", "20")
    new = estimate("qwen3.5-9b", "-c", "8192", "--engine-version", "0.33", "--gpu", "H100",
                   "--kv-budget-gib", "20")
    groups = {g["kind"]: g for g in new["kv_cache_groups"]}
    assert new["block_size"] == 576 and old["block_size"] == 528
    assert groups["state"]["pages_per_request"] == 3 and groups["full"]["pages_per_request"] == 15
    assert groups["full"]["page_bytes"] == 576 * 4096
    assert new["num_blocks"] == 21_474_836_480 // 18_874_368 == 1137
    assert new["max_concurrency"] == pytest.approx(1137 / 24)
    assert old["num_blocks"] == 1241
    assert old["max_concurrency"] == pytest.approx(1241 / 22)
    # 0.34 reads the same (0.34.0 qwen_gdn_linear_attn.py:321-322, :851-854).
    assert estimate("qwen3.5-9b", "-c", "8192", "--engine-version", "0.34")["block_size"] == 576


def test_gdn_checkpoint_needs_prefix_caching_and_flashinfer() -> None:
    # Without prefix caching the mode is 'none': no checkpoint, 0.32's block (16 x cdiv(
    # 2,146,304, 65,536) = 528 > the state needs only that), one state page a request.
    off = estimate("qwen3.5-9b", "-c", "8192", "--engine-version", "0.33",
                   "--no-enable-prefix-caching")
    assert off["block_size"] == 528 and off["mamba_cache_mode"] == "none"
    # SM 8.x (A100, L40S): triton's GDN prefill exports no checkpoints (qwen_gdn_linear_attn.py
    # :243-271 picks FlashInfer on SM 9.0, 10.x and 12.x only).
    a100 = estimate("qwen3.5-9b", "-c", "8192", "--engine-version", "0.33", "--gpu",
                    "A100-80GB", "--kv-budget-gib", "20")
    assert a100["block_size"] == 528
    # SM 10.x with linear_key_head_dim 128: FlashInfer only on a CUDA 13 build: refused.
    line = refused("estimate", "qwen3.5-9b", "-c", "8192", "--engine-version", "0.33",
                   "--gpu", "B200", "--kv-budget-gib", "20")
    assert "CUDA 13" in line and "--no-enable-prefix-caching" in line


@pytest.mark.parametrize(("version", "moved", "blocks"), [
    ("0.33", "sampler warm-up", 10_240),  # 0.33.0 v1/worker/gpu/model_runner.py:993
    ("0.34", "extensible KV cache", 2_560),  # 0.34.0 v1/worker/extensible_kv_cache.py:592
    ("0.35", "extensible KV cache", 2_560),  # newer than read: 0.34's rules
])
def test_budgets_of_0_33_and_0_34_are_refused(version: str, moved: str, blocks: int) -> None:
    line = refused("plan", "llama-3.1-8b", "--concurrency", "12", "--context", "32k",
                   "--gpu", "H100", "--engine-version", version)
    assert moved in line and "--kv-budget-gib" in line and "--engine-version 0.32" in line
    # A budget given: the allocator's answer (Llama-3.1-8B: 32 layers x 8 x 128 x 2 x 2 B =
    # 131,072 B a token; 0.33's block of 16: 2 MiB, 20 GiB: 10,240 blocks; 0.34's of 64
    # (CacheConfig.DEFAULT_BLOCK_SIZE, test_vllm_default_block.py): 8 MiB, 2,560 blocks; 5
    # requests of 32k either way).
    out = estimate("llama-3.1-8b", "-c", "32768", "--gpu", "H100", "--kv-budget-gib", "20",
                   "--engine-version", version)
    assert out["num_blocks"] == blocks
    assert out["max_concurrency"] == pytest.approx(5.0)
    # vLLM's CPU platform: neither change runs there (the sampler's second pass returns early
    # on CPU, 0.33.0 gpu/model_runner.py _dummy_sampler_run; the extensible KV cache is CUDA
    # and ROCm only, 0.34.0 config/vllm.py:3199): 0.32's budget, not refused.
    cpu = ("llama-3.1-8b", "-c", "4096", "--platform", "cpu", "--gpu-mem-gib", "64")
    assert (estimate(*cpu, "--engine-version", version)["kv_budget_bytes"]
            == estimate(*cpu, "--engine-version", "0.32")["kv_budget_bytes"])


@pytest.mark.parametrize("gpu", ["H100", "MI300X"])
def test_0_33_refusal_names_what_moved(gpu: str) -> None:
    # Issue 26, 0.33.0 read against 0.32.0 (kvplan.engines.vllm.unsized: the budget formula and
    # memory_profiling are unchanged): two moves kvplan cannot size, on CUDA and ROCm alike.
    # (1) v1/worker/gpu/model_runner.py:993-1014 a second sampler pass with
    # SamplingParams.for_sampler_warmup, whose fp32 copy of the logits (gpu/sample/sampler.py:242)
    # kvplan's V2 rule does not hold; (2) gpu_worker.py:519-529 the cuBLAS handles made before
    # the snapshot (:541), no longer off the budget (kvplan's 0.19-fitted constants count them).
    # No public 0.33 log.
    line = refused("estimate", "llama-3.1-8b", "-c", "8192", "--gpu", gpu,
                   "--engine-version", "0.33.0")
    for moved in ("sampler warm-up", "fp32 copy of the logits", "cuBLAS handles before the "
                  "memory snapshot", "no public 0.33 start-up log", "--kv-budget-gib",
                  "--reserve-gib"):
        assert moved in line, (moved, line)


def test_pr_57926_measurement_recorded_in_unsized(tmp_path: Path) -> None:
    # The one public before/after of 0.33's sampler warm-up pass (vllm-project/vllm PR #57926:
    # L4, Qwen2.5-0.5B-Instruct, 256 sequences, max_model_len 2,048, utilization 0.98, runner
    # V2: 1,733,440 -> 1,710,928 tokens), recorded in kvplan.engines.vllm.unsized, not fitted:
    # this pins kvplan's 0.32 answer quoted there (1,746,672 tokens: +0.76 % / +2.09 %), and
    # 0.33 on the same run is refused.
    shutil.copy(Path(__file__).parent / "data" / "configs" / "qwen2.5-0.5b.json",
                tmp_path / "config.json")
    run_args = (str(tmp_path), "--gpu", "L4", "-c", "2048", "--gpu-memory-utilization", "0.98",
                "--max-num-seqs", "256")
    tokens = estimate(*run_args, "--engine-version", "0.32")["reported_kv_cache_tokens"]
    assert tokens == 1_746_672
    assert tokens / 1_733_440 - 1 == pytest.approx(0.0076, abs=5e-5)
    assert tokens / 1_710_928 - 1 == pytest.approx(0.0209, abs=5e-5)
    assert "sampler warm-up" in refused("estimate", *run_args, "--engine-version", "0.33")


def test_default_utilization_with_the_extensible_kv_cache() -> None:
    # 0.34.0 config/cache.py:495 resolved_gpu_memory_utilization: 1.0 with the extensible KV
    # cache (CUDA and ROCm by default), 0.92 otherwise.
    from kvplan.engines.base import Engine, plan_inputs

    vllm = Engine("vllm")
    for version, platform, expected in (("0.34", "cuda", 1.0), ("0.34", "rocm", 1.0),
                                        ("0.34", "cpu", 0.92), ("0.33", "cuda", 0.92),
                                        (None, "cuda", 0.92)):
        inputs = plan_inputs(engine=vllm, engine_version=version, platform=platform,
                             total_bytes=80 * GiB, context=4096)
        assert vllm.budget.default_fraction(inputs)[0] == expected, (version, platform)


@pytest.mark.parametrize(("engine", "newer", "read", "shown"), [
    ("vllm", "0.35", "0.34.0", "vLLM"),
    ("vllm", "0.34.1", "0.34.0", "vLLM"),
    ("sglang", "0.5.24", "0.5.23", "SGLang"),
    ("trtllm", "1.3.1", "1.3.0rc10", "TensorRT-LLM"),
])
def test_newer_than_read_is_not_exact(engine: str, newer: str, read: str, shown: str) -> None:
    assumption = {"field": "engine_version", "value": f"{read} rules",
                  "why": f"kvplan has read {shown}'s code up to {read}; {newer} is newer",
                  "affects": "kv"}
    out = estimate("llama-3.1-8b", "-c", "8192", "--engine", engine, "--engine-version", newer)
    assert out["exact"] is False and out["assumptions"] == [assumption]
    code, text, err = run("estimate", "llama-3.1-8b", "-c", "8192", "--engine", engine,
                          "--engine-version", newer)
    assert code == 0 and "Assumptions" in text and f"{read} rules" in text, err
    # The newest read, and no version, are exact.
    for version in ((read,), ()):
        args = ("--engine-version", *version) if version else ()
        out = estimate("llama-3.1-8b", "-c", "8192", "--engine", engine, *args)
        # TensorRT-LLM's model registry was read at one release only: a named release adds that
        # assumption for the preset's LlamaForCausalLM (presetarch68), as for its config.json.
        others = [a for a in out["assumptions"] if a["field"] != "architectures"]
        assert others == [] and out["exact"] is (others == out["assumptions"])


def test_plan_and_simulate_carry_the_flag() -> None:
    code, out, err = run("plan", "llama-3.1-8b", "--concurrency", "4", "--context", "8k",
                         "--gpu", "H100", "--engine", "sglang", "--engine-version", "0.5.24",
                         "-f", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["exact"] is False
    assert [a["field"] for a in plan["assumptions"]] == ["engine_version"]
    code, out, err = run("simulate", "llama-3.1-8b", "--gpu", "H100", "--engine", "sglang",
                         "--engine-version", "0.5.24", "--rate", "2", "--num-requests", "10",
                         "--input-len", "256", "--output-len", "16", "-f", "json")
    assert code == 0, err
    sim = json.loads(out)
    assert sim["exact"] is False
    assert [a["field"] for a in sim["assumptions"]] == ["engine_version"]


def test_gb10_small_batch_tier_from_0_33() -> None:
    # 0.33.0 engine/arg_utils.py:2961-2963, :2983-2987: GB10 (DGX Spark, capability 12.1) "has
    # the memory but not the compute of a large discrete GPU": off the >= 70 GiB tier, so `vllm
    # serve` takes 256 requests / 2,048 tokens a step (0.32.0 :2933: 1,024 / 8,192 on its
    # 121.69 GiB). gpt-oss-20b (its config.json: 24 layers alternating sliding window 128 /
    # full, 8 KV heads x 64 x 2 x 2 B = 2,048 B a token a layer), 40 GiB, 131,072 tokens:
    # two groups of 12 layers, a block 12 x 16 x 2,048 = 393,216 B: 109,226 blocks.
    # A sliding layer holds cdiv(127 + 2 batches in flight x step, 16) + 1 pages:
    # 0.32 cdiv(127 + 16,384, 16) + 1 = 1,033; 0.33 cdiv(127 + 4,096, 16) + 1 = 265; full 8,192.
    # 0.34 at its block of 64: cdiv(4,223, 64) + 1 = 67, full 2,048; 27,306 blocks.
    def pages_at(version: str) -> dict:
        out = estimate("gpt-oss-20b", "-c", "131072", "--gpu", "GB10", "--kv-budget-gib", "40",
                       "--engine-version", version)
        return {g["kind"]: g["pages_per_request"] for g in out["kv_cache_groups"]} | {
            "blocks": out["num_blocks"]}
    pages = {v: pages_at(v) for v in ("0.32", "0.33", "0.34")}
    assert pages["0.32"] == {"sliding": 1033, "full": 8192, "blocks": 109_226}
    assert pages["0.33"] == {"sliding": 265, "full": 8192, "blocks": 109_226}
    assert pages["0.34"] == {"sliding": 67, "full": 2048, "blocks": 27_306}
    gb10 = {"total_bytes": 130_660_000_000, "is_a100": False, "capability": (12, 1)}
    assert vllm_batch_defaults(**gb10, version="0.32") == (1024, 8192)
    assert vllm_batch_defaults(**gb10, version=None) == (1024, 8192)  # the default, 0.32
    assert vllm_batch_defaults(**gb10, version="0.33") == (256, 2048)


@pytest.mark.parametrize("version", ["0.33", "0.34"])
def test_cpu_mla_fp8_refused_from_0_33(version: str) -> None:
    # 0.33.0 / 0.34.0 platforms/cpu.py:157-162: MLA with a KV cache other than auto / bfloat16 /
    # float16 raises "--kv-cache-dtype fp8 is not supported by MLA attention on CPU" (0.32.0
    # get_attn_backend_cls checks none: kvplan's 0.32 answer stands).
    args = ("estimate", "deepseek-v2-lite", "-c", "4096", "--platform", "cpu", "--gpu-mem-gib",
            "64", "--no-cpu-amx", "--kv-dtype", "fp8")
    line = refused(*args, "--engine-version", version)
    assert "not supported by MLA attention on CPU" in line and "--kv-dtype bf16" in line
    assert estimate(*args[1:], "--engine-version", "0.32")["kv_dtype"] == "fp8"
    assert estimate(*args[1:-1], "bf16", "--engine-version", version)["kv_dtype"] == "bf16"
