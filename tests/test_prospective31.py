"""The frozen prospective31 set (tests/data/sim_to_real/prospective31.json): every run names its
source, model config, GPU preset, vLLM version and measured figures, and the replay's requests
are the run's stated lengths (the full replay is tests.benches.prospective31_runs)."""

from __future__ import annotations

import functools
import json

from typer.testing import CliRunner

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.cli.app import app
from kvplan.engines.base import Engine
from kvplan.engines.vllm.alloc import vllm_batch_defaults
from tests.benches import prospective31_runs, prospective_runs
from tests.benches.engine_bench import load_logs as bench_logs

# The set's runs by id.
_runs = functools.partial(prospective_runs.runs_by_id, prospective31_runs.DATA)


def test_every_run_is_complete() -> None:
    doc = prospective_runs.load(prospective31_runs.DATA)
    assert len(doc["runs"]) == 24
    assert not prospective_runs.incomplete(doc)
    assert all(run["vllm"].count(".") == 2 for run in doc["runs"])
    # No run of this set is in prospective30 (a new page each).
    old = {r["source"] for r in prospective_runs.load()["runs"]}
    assert not old & {r["source"] for r in doc["runs"]}


def test_requests_follow_the_run() -> None:
    # gpt-oss-20b's 4K case: 500 prompts of 1,999,249 / 500 = 3,998.5 -> 3,998 tokens plus the
    # 65 tokens of the harmony chat rendering (counted by hand), 52,309 / 500 = 104.6 -> 105
    # out, all sent at t = 0 (no --request-rate).
    reqs = prospective_runs.requests(_runs()["gpustack gpt-oss-20b H100 random 4000/200"])
    assert len(reqs) == 500
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(4063, 105, 0.0)}


def test_a_run_kvplan_refuses_is_reported_not_simulated() -> None:
    # Qwen3-32B at vLLM 0.11's default max_model_len 40,960: 64 layers x 8 KV heads x 128 x
    # 2 (K, V) x 2 bytes = 256 KiB a token, so one request holds 40,960 / 16 = 2,560 blocks
    # (10 GiB), more than kvplan's pool on an 80 GB H100: the run comes back refused.
    result = prospective_runs.run_one(_runs()["gpustack Qwen3-32B H100 random 128/4"])
    assert result.refused and "2,560 blocks" in result.refused
    assert result.simulated == {} and result.measured["mean_ttft_ms"] == 21648.67


def _pool(*extra: str, context: int = 40_960) -> dict:  # type: ignore[type-arg]
    """kvplan estimate for the Qwen3-32B runs' server: bf16, one H100 80GB, vLLM 0.11.0,
    gpu_memory_utilization 0.9."""
    result = CliRunner().invoke(app, [
        "estimate", str(prospective_runs.REPO / "tests/data/configs/qwen3-32b.json"), "--gpu",
        "H100-80GB", "--engine", "vllm", "--engine-version", "0.11.0", "--mem-fraction", "0.9",
        "-c", str(context), "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_qwen3_32b_runs_cannot_have_run_at_their_line() -> None:
    # h100pool61 (prospective31.json, the source's "refused_why"): vLLM 0.11.0 refuses to start
    # unless one max_model_len request fits (v1/core/kv_cache_utils.py:706): cdiv(40,960, 16) =
    # 2,560 blocks of 64 layers x 2 x 8 heads x 128 x 2 B x 16 tokens = 4 MiB, 10 GiB in all.
    # By hand, before any profile reserve: int(85,029,615,042 B x 0.9) = 76,526,653,537;
    # - 65,534,733,312 B of weights = 10,991,920,225 B, 254,501,985 above 10 GiB.
    bare = _pool("--reserve-gib", "0")
    assert bare["blocks_per_request"] == 2_560 and bare["bytes_per_block"] == 4 << 20
    assert bare["total_bytes"] == 85_029_615_042
    assert bare["weights_bytes"] == 65_534_733_312
    assert bare["kv_budget_bytes"] == 10_991_920_225
    slack = bare["kv_budget_bytes"] - 2_560 * (4 << 20)
    assert slack == 254_501_985
    # The warm-up samples min(max_num_seqs, max_num_batched_tokens) rows (gpu_model_runner.py:
    # 2977): 1,024 for an API server on a >= 70 GiB GPU that is not an A100 (engine/
    # arg_utils.py:1605); their 151,936 bf16 logits and fp32 copy (gpu_model_runner.py:3192,
    # sampler.py:86) are 6 B a logit, 933,494,784 B, and the 8,192 x 5,120 bf16 hidden states
    # (83,886,080 B) stay alive through it (gpu_model_runner.py:3393-3397): beyond the slack
    # whichever top-k/top-p path runs, before the forward's peak and non-torch memory.
    seqs, tokens = vllm_batch_defaults(bare["total_bytes"], is_a100=False, version="0.11.0")
    assert (seqs, tokens) == (1_024, 8_192) == (seqs, bare["max_num_batched_tokens"])
    spec = load_spec(str(prospective_runs.REPO / "tests/data/configs/qwen3-32b.json"))
    assert (spec.vocab_size, spec.hidden_size) == (151_936, 5_120)
    floor = min(seqs, tokens) * spec.vocab_size * 6 + tokens * spec.hidden_size * 2
    assert floor == 933_494_784 + 83_886_080 > slack
    # kvplan's pools: the plain wheel's sort 10,991,920,225 - 5,668,549,427 = 5,323,370,798 B
    # // 4 MiB = 1,269 blocks; FlashInfer's (gpustack's 0.11.0 runtime carries it) reserve the
    # forward 1,509,949,440 + 865,357,004 beyond it + non-torch 139,586,437 = 2,514,892,881 B,
    # 8,477,027,344 B // 4 MiB = 2,021 blocks. Neither holds 2,560.
    sort, flashinfer = _pool(), _pool("--flashinfer-sampler")
    assert sort["reserve_bytes"] == 5_668_549_427 and sort["num_blocks"] == 1_269
    assert flashinfer["reserve_bytes"] == 2_514_892_881
    assert flashinfer["kv_budget_bytes"] == 8_477_027_344 and flashinfer["num_blocks"] == 2_021
    why = prospective_runs.load(prospective31_runs.DATA)["sources"][
        "gpustack-qwen3-32b-h100"]["refused_why"]
    assert "933,494,784" in why and "2,021 blocks" in why and "issue #3656" in why


def test_llm_d_benchmark_fails_this_model_at_32000_on_one_h100_as_kvplan_does() -> None:
    # llm-d-benchmark's Qwen3-32B TP 1 runs on a 79.18 GiB H100 at 0.9 (vllm_startup_logs.json
    # holds the 16,000 one; its results file's 'Failed Configurations' the 32,000 one): 4.45 GiB
    # logged = 1,139 blocks of 4 MiB (4.45 x 256), short of the 2,000 a 32,000-token request
    # needs, and vLLM failed ('No KV cache room'). kvplan (weights pinned to the logged 61.03
    # GiB) gives 1,270 blocks at 32,000: refused as well, its pool the larger of the two.
    (log,) = [row for row in bench_logs() if row["id"] == "llm-d-benchmark-qwen3-32b-tp1-16000"]
    assert (log["available_kv_cache_gib"], log["activation_peak_gib"]) == (4.45, 5.64)
    assert int(log["available_kv_cache_gib"] * (1 << 30)) // (4 << 20) == 1_139
    at_32k = _pool("--weights-gib", "61.03", context=32_000)
    assert at_32k["blocks_per_request"] == 2_000
    assert 1_139 < at_32k["num_blocks"] == 1_270 < 2_000


def test_the_32k_case_rules_out_a_pool_of_2560_blocks() -> None:
    # The page's 32K case shows no prefill chunk beside a decode (mean ITL 42.86 ms, P99 46.54;
    # the 4K / 2K cases' mixed steps are 1.4-1.5 s). vLLM 0.11 admits a waiting request when its
    # first chunk's blocks are free (scheduler.py:437, :471-483): beside one decoding request of
    # 32,000 + 8 template tokens + 77 out = 32,085 tokens (2,006 blocks) the next one's chunk is
    # the 8,191 tokens left of the 8,192 budget, cdiv(8,191, 16) = 512 blocks; the 2,560 blocks
    # that 40,960 needs to start would leave 554 free, so that prefill would have run beside it.
    run = _runs()["gpustack Qwen3-32B H100 random 32000/100"]
    (req,) = set(prospective_runs.requests(run))
    held = _pool(context=req.prompt_len + req.output_len)["blocks_per_request"]
    assert (req.prompt_len, req.output_len, held) == (32_008, 77, 2_006)
    assert 2_560 - held == 554 >= -(-(8_192 - 1) // 16) == 512
    assert run["measured"]["mean_itl_ms"] == 42.86


def test_the_runs_ran_flashinfers_sampler_so_gpt_oss_120b_starts() -> None:
    # gptosspool61 (the data file's 'amended'): the lab's runner image installs FlashInfer, so
    # vLLM 0.10.2 / 0.11.0 ran its top-k/top-p warm-up; every run says so.
    runs = _runs()
    assert all(run["flashinfer_sampler"] is True for run in runs.values())
    assert "da76887" in prospective_runs.load(prospective31_runs.DATA)["amended"]
    # gpt-oss-120b TP 1 on the H100 at 0.9, vLLM 0.10.2 (1,024 warm-up rows, 8,192 tokens), by
    # hand: int(85,029,615,042 x 0.9) = 76,526,653,537 B; weights 70,790,147,264 B; the
    # forward's peak 707,788,800 B, non-torch 139,586,437 B. The warm-up holds 0.13 GiB +
    # 1,024 x 201,088 logits x B beyond the forward: sort (B = 34.64) 6,564,662,476 B, so
    # 76,526,653,537 - 70,790,147,264 - 7,412,037,713 = -1,675,531,440 B: no pool, vLLM would
    # not start (kvplan refuses the run); FlashInfer (B = 14.37) 2,390,783,426 B, so
    # 2,498,347,610 B // 32,768 // 18 = 4,235 blocks, a 32,768-token request's 2,569 fit.
    run = runs["gpustack gpt-oss-120b H100 random 32000/100"]
    before = prospective_runs.run_one({**run, "flashinfer_sampler": None})
    assert "needs 2,569 blocks, the pool has 0" in before.refused
    spec = load_spec(str(prospective_runs.REPO / run["model"]))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=1,
                             engine=Engine.vllm, engine_version=run["vllm"],
                             mem_fraction=run["gpu_memory_utilization"], flashinfer_sampler=True)
    plan = setup(spec, inputs)[0].plan
    assert plan.num_blocks == 4_235 and plan.blocks_per_request == 2_569
