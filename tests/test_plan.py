"""`kvplan plan`: the verdict, the layout, the launch command, the alternatives; plan's numbers are
`kvplan estimate`'s numbers for the chosen layout. And the engines' option vocabulary."""

from __future__ import annotations

import json
import shlex

import pytest
from typer.testing import CliRunner

from kvplan.analysis.planner import PlanRequest, plan_serving, supported_kv_dtypes
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.resolve import load_spec

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "120"})


def test_the_readme_question_is_one_command() -> None:
    # "Can I serve Llama-3.1-70B at 32k for 50 users on 4 x H100 with fp8 KV, and with what vLLM
    # flags?" On one node of 4: no (32 fit); the answer names what would.
    result = run("plan", "llama-3.1-70b", "--concurrency", "50", "--context", "32k", "--gpu",
                 "H100", "--gpus-per-node", "4", "--kv-cache-dtype", "fp8", "--format", "json")
    assert result.exit_code == 3, result.output
    data = json.loads(result.stdout)
    assert data["fits"] is False and data["command"] is None
    assert data["max_requests"] < 50
    labels = [a["label"] for a in data["alternatives"]]
    assert any("8 GPUs" in label for label in labels)
    assert any(label.startswith("max-model-len") for label in labels)
    # Two nodes of 4: it fits, with the exact vLLM command line.
    result = run("plan", "llama-3.1-70b", "-n", "50", "-c", "32k", "--gpu", "h100",
                 "--gpus-per-node", "4", "--nodes", "2", "--kv-dtype", "fp8", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) >= {"fits", "layout", "max_concurrency", "kv_dtype", "command",
                         "alternatives"}
    assert set(data["layout"]) == {"tp", "pp", "dp", "ep", "gpus", "nodes"}
    assert data["fits"] and data["kv_dtype"] == "fp8" and data["layout"]["gpus"] == 8
    args = shlex.split(data["command"])
    assert args[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B"]
    flags = dict(zip(args[3::2], args[4::2], strict=False))
    assert flags["--max-model-len"] == "32768" and flags["--kv-cache-dtype"] == "fp8"
    # --max-num-seqs is per data-parallel engine in vLLM (vllm/config/scheduler.py of 0.32.0:
    # it "applies per data-parallel rank"): 50 requests over 2 engines, 25 each.
    assert flags["--max-num-seqs"] == str(-(-50 // data["layout"]["dp"]))
    assert data["layout"]["dp"] == 2 and data["max_num_seqs"] == 25
    assert int(flags["--tensor-parallel-size"]) == data["layout"]["tp"]


def test_plan_numbers_equal_estimate_for_the_chosen_layout() -> None:
    result = run("plan", "qwen3-next-80b-a3b", "-n", "64", "-c", "64k", "--gpu", "H200",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    lay = plan["layout"]
    # The plan's EP layout (EP = TP, vLLM's --enable-expert-parallel) asked of `estimate` with the
    # same flag: vLLM keeps an int32 expert map on the GPU with the weights under EP (vLLM 0.32
    # routed_experts.py:262-268; 4 B x 512 experts x 48 MoE layers = 98,304 B for
    # Qwen3-Next-80B-A3B), so both commands must count it for their figures to agree.
    ep_flag = ["--enable-expert-parallel"] if lay["ep"] > 1 else []
    est = json.loads(run(
        "estimate", "qwen3-next-80b-a3b", "--context", "65536", "--gpu", "H200",
        "--tp", str(lay["tp"]), "--pp", str(lay["pp"]), "--kv-dtype", plan["kv_dtype"],
        "--mem-fraction", str(plan["mem_fraction"]), *ep_flag, "--format", "json").stdout)
    assert est["num_blocks"] == plan["num_blocks"]
    assert est["weights_bytes"] == plan["weights_bytes"]
    assert est["kv_budget_bytes"] == plan["kv_budget_bytes"]
    assert est["block_size"] == plan["block_size"]
    if lay["ep"] > 1:  # without the flag, the same layout lacks only the expert map
        no_ep = json.loads(run(
            "estimate", "qwen3-next-80b-a3b", "--context", "65536", "--gpu", "H200",
            "--tp", str(lay["tp"]), "--pp", str(lay["pp"]), "--kv-dtype", plan["kv_dtype"],
            "--mem-fraction", str(plan["mem_fraction"]), "--format", "json").stdout)
        assert plan["weights_bytes"] - no_ep["weights_bytes"] == 4 * 512 * 48
    # One replica's concurrency times the replicas.
    assert plan["max_concurrency"] == pytest.approx(est["max_concurrency"] * lay["dp"])


def test_fewest_gpus_wins_and_bf16_is_preferred_at_equal_gpus() -> None:
    # Llama-3.1-8B, 8 requests of 8k: one H100 holds them in bf16, so no fp8 and one GPU.
    plan = plan_serving(load_spec("llama-3.1-8b"), PlanRequest(
        concurrency=8, context=8192, gpu=get_gpu("H100-80GB")))
    assert plan.fits and plan.chosen.layout.gpus == 1 and plan.chosen.kv_dtype == "bf16"
    # vLLM's default fraction for the newest version (0.92 from 0.20: VllmBudget.default_fraction)
    assert plan.chosen.mem_fraction == 0.92


def test_no_fp8_kv_on_gpus_without_fp8() -> None:
    assert supported_kv_dtypes(Engine.vllm, get_gpu("A100-80GB")) == ("bf16",)
    result = run("plan", "llama-3.1-8b", "-n", "4", "-c", "8k", "--gpu", "A100-80GB",
                 "--kv-dtype", "fp8")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "fp8" in result.stderr


def test_mla_model_gets_dp_attention_layouts_on_sglang() -> None:
    plan = plan_serving(load_spec("deepseek-v2-lite"), PlanRequest(
        concurrency=2000, context=4096, gpu=get_gpu("H100-80GB"), engine=Engine.sglang))
    assert plan.fits
    assert "--enable-dp-attention" in plan.command or plan.chosen.layout.tp == 1


def test_plan_context_defaults_to_the_model_max() -> None:
    result = run("plan", "llama-3.1-8b", "-n", "1", "--gpu", "H100", "--format", "json")
    assert json.loads(result.stdout)["context"] == 131072


# --- the engines' vocabulary on estimate --------------------------------------------------------


def test_vllm_and_sglang_flag_names_on_estimate() -> None:
    base = json.loads(run("estimate", "llama-3.1-8b", "--context", "32768", "--tp", "2",
                          "--kv-dtype", "fp8", "--mem-fraction", "0.95", "--gpu",
                          "H100-80GB", "--format", "json").stdout)
    vllm = json.loads(run("estimate", "llama-3.1-8b", "--max-model-len", "32k",
                          "--tensor-parallel-size", "2", "--kv-cache-dtype", "fp8_e4m3",
                          "--gpu-memory-utilization", "0.95", "--gpu", "h100",
                          "--format", "json").stdout)
    sglang = json.loads(run("estimate", "llama-3.1-8b", "--context-length", "32k", "-tp", "2",
                            "--kv-cache-dtype", "fp8", "--mem-fraction-static", "0.95",
                            "--gpu", "H100", "--format", "json").stdout)
    keys = ("context", "tp", "kv_dtype", "mem_fraction", "num_blocks", "max_concurrency")
    assert [vllm[k] for k in keys] == [base[k] for k in keys] == [sglang[k] for k in keys]


def test_kv_cache_memory_is_bytes_and_max_num_seqs_caps_requests() -> None:
    # vLLM's --kv-cache-memory is in bytes: 58.11 GiB as bytes gives the same plan as
    # --kv-budget-gib 58.11.
    gib = json.loads(run("estimate", "llama-3.1-8b", "-c", "8k", "--kv-budget-gib", "58.11",
                         "--format", "json").stdout)
    raw = json.loads(run("estimate", "llama-3.1-8b", "-c", "8k", "--kv-cache-memory",
                         str(int(58.11 * 2**30)), "--max-num-seqs", "16", "--format",
                         "json").stdout)
    assert raw["num_blocks"] == gib["num_blocks"]
    assert gib["max_requests"] == 58 and raw["max_requests"] == 16


def test_vllm_cannot_run_int4_kv() -> None:
    result = run("estimate", "llama-3.1-8b", "--kv-dtype", "int4", "--gpu", "H100")
    assert result.exit_code == 2 and "cannot run KV cache dtype int4" in result.stderr
    # Sizes alone stay available as a what-if, with a one-line warning.
    result = run("estimate", "llama-3.1-8b", "--kv-dtype", "int4")
    assert result.exit_code == 0 and "warning" in result.stderr


def test_engine_vocabulary_on_sweep_and_its_dtype_warning() -> None:
    base = run("sweep", "llama-3.1-8b", "--context", "4096,32768", "--tp", "1,2",
               "--mem-fraction", "0.9", "--gpu", "H100", "--format", "json")
    vllm = run("sweep", "llama-3.1-8b", "--max-model-len", "4k,32k", "-tp", "1,2",
               "--gpu-memory-utilization", "0.9", "--gpu", "h100", "--format", "json")
    assert json.loads(base.stdout) == json.loads(vllm.stdout)
    result = run("sweep", "llama-3.1-8b", "--kv-cache-dtype", "bf16,int4", "--gpu", "H100",
                 "--format", "json")
    assert result.exit_code == 0
    assert "cannot run KV cache dtype int4" in result.stderr


def test_readme_plan_paragraph_matches_the_plan() -> None:
    """examples/plan.md's worked plan (Llama-3.1-70B, 50 x 32k on four H100s) states the numbers
    prints: the whole requests that fit and the context that serves all 50."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "examples" / "plan.md").read_text()
    fit = int(re.search(r"DOES NOT FIT \((\d+) such requests fit", text).group(1))
    longest = int(re.search(r"`--max-model-len ([\d,]+)` on the four", text).group(1)
                  .replace(",", ""))
    result = run("plan", "llama-3.1-70b", "--concurrency", "50", "--context", "32k", "--gpu",
                 "H100", "--gpus-per-node", "4", "--format", "json")
    assert result.exit_code == 3
    plan = json.loads(result.stdout)
    assert not plan["fits"] and plan["max_requests"] == fit
    assert any(f"max-model-len {longest:,}:" in a["label"] for a in plan["alternatives"])


def test_plan_evaluates_with_the_engines_default_max_num_seqs() -> None:
    """examples/plan.md: every candidate is evaluated with estimate's defaults, its --max-num-seqs
    included; the --max-num-seqs plan recommends (the target) is printed apart. gpt-oss-120b,
    4 x 32k on one H100: the plan's KV budget is estimate's at the plan's fraction with vLLM's
    default --max-num-seqs (the sampler warm-up, penalty state and CUDA graphs it sizes)."""
    plan = json.loads(run("plan", "gpt-oss-120b", "--gpu", "H100", "--concurrency", "4",
                          "--context", "32k", "--format", "json").stdout)
    default = json.loads(run("estimate", "gpt-oss-120b", "--gpu", "H100",
                             "--gpu-memory-utilization", str(plan["mem_fraction"]),
                             "--context", "32k", "--format", "json").stdout)
    assert plan["kv_budget_bytes"] == default["kv_budget_bytes"]
    assert plan["max_num_seqs"] == 4


def test_plan_times_minicpm3_over_vllms_decompressed_cache() -> None:
    # vLLM caches MiniCPM3-4B as 40 x (96 + 96) x 2 B = 15,360 B per token per layer
    # (tests/test_cache_golden.py); a decode step of 8 requests at 8,192 tokens reads at least
    # 8 x 8,192 x 15,360 B x 62 layers = 62.4 GB of it, 18.6 ms at the H100's 3.35 TB/s (the
    # latent would be 576 B: 2.3 GB).
    gpu = get_gpu("H100-80GB")
    plan = plan_serving(load_spec("minicpm3-4b"), PlanRequest(
        concurrency=8, context=8192, gpu=gpu))
    assert plan.fits and plan.chosen.kv_dtype == "bf16" and plan.chosen.layout.gpus == 1
    kv_read_ms = 8 * 8192 * 15_360 * 62 / gpu.hbm_bytes_per_s * 1e3
    assert kv_read_ms == pytest.approx(18.6, abs=0.1)
    assert plan.prediction.tpot_ms > kv_read_ms


def test_plan_times_prefill_as_the_engine_launches_it() -> None:
    # SGLang launches prefill ops eagerly from Python (kvplan.perf.costmodel.prefill_launch_s,
    # 63.2 us per op); vLLM replays them from CUDA graphs. Qwen3-8B on one H100 at a 512-token
    # context: SGLang's model code launches 435 ops per prefill step (36 layers x 12, plus
    # embedding, final norm and lm_head: kvplan.perf.costmodel.eager_prefill_ops), so its prefill
    # is vLLM's GPU time plus 435 x 63.2 us = 27.492 ms; decode, from CUDA graphs in both, agrees.
    gpu = get_gpu("H100-80GB")
    plans = {e: plan_serving(load_spec("qwen3-8b"), PlanRequest(
        concurrency=1, context=512, gpu=gpu, engine=e)) for e in (Engine.vllm, Engine.sglang)}
    sglang, vllm = plans[Engine.sglang].prediction, plans[Engine.vllm].prediction
    assert sglang.ttft_ms - vllm.ttft_ms == pytest.approx(435 * 0.0632)
    assert sglang.tpot_ms == pytest.approx(vllm.tpot_ms)
