"""`kvplan plan` (issue 27): estimate's defaults, the margin and BORDERLINE, several GPU types
and prices, answers when nothing fits, option parity with estimate, scenario files."""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import KvplanError, UnmodelledError
from kvplan.analysis.estimate_run import run_estimate
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.plan_search import _tp_degrees, evaluate
from kvplan.analysis.plan_types import Layout, PlanRequest
from kvplan.cli import app
from kvplan.engines.accuracy import measured_error
from kvplan.engines.base import Engine
from kvplan.engines.kv_dtype import supported_kv_dtypes
from kvplan.hardware.gpus import GPUS, get_gpu
from kvplan.sources.resolve import bundled_spec_ids, load_spec

ROOT = Path(__file__).resolve().parents[1]
GiB = 1 << 30
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "120"})


def plan_json(*args: str) -> tuple[int, dict]:
    result = run("plan", *args, "--format", "json")
    assert result.exit_code in (0, 3), result.output
    return result.exit_code, json.loads(result.stdout)


@cache
def _spec(name: str):
    return load_spec(name)


# --- 2. one set of defaults ---------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_plan_and_estimate_agree_on_max_concurrency(data) -> None:
    """Over bundled models and GPU presets: the candidate plan evaluates for a layout, KV dtype,
    fraction and --max-num-seqs has estimate's max_concurrency, KV budget and requests for the
    same options (both refuse alike)."""
    name = data.draw(st.sampled_from(bundled_spec_ids()), label="model")
    gpu = data.draw(st.sampled_from(sorted(GPUS)), label="gpu")
    engine = data.draw(st.sampled_from(list(Engine)), label="engine")
    spec = _spec(name)
    preset = get_gpu(gpu)
    tp = data.draw(st.sampled_from(_tp_degrees(spec, 8)), label="tp")
    kv = data.draw(st.sampled_from(supported_kv_dtypes(engine, preset)), label="kv")
    fraction = data.draw(st.sampled_from([None, 0.8, 0.95]), label="fraction")
    seqs = data.draw(st.sampled_from([None, 1, 64]), label="max_num_seqs")
    context = data.draw(st.sampled_from([4096, 32768]), label="context")
    req = PlanRequest(concurrency=1, context=context, gpu=preset, engine=engine,
                      max_num_seqs=seqs)
    try:
        cand = evaluate(spec, req, preset, Layout(tp=tp), kv, fraction, context)
        refused = None
    except UnmodelledError as exc:  # what kvplan cannot model: refused, not skipped (issue 32)
        cand, refused = None, str(exc)
    try:
        est = run_estimate(estimate_inputs(spec, context=context, kv_dtype=kv, engine=engine,
                                           gpu=gpu, tp=tp, mem_fraction=fraction,
                                           max_num_seqs=seqs)).plan
    except KvplanError as exc:
        est = None
        if refused is not None:
            assert str(exc) == refused  # the same refusal, word for word
    else:
        assert refused is None, refused
    if cand is None or est is None:
        assert cand is None and est is None
        return
    assert cand.max_concurrency == est.max_concurrency
    assert cand.capacity.kv_budget_bytes == est.kv_budget_bytes
    assert cand.requests == est.max_requests
    assert cand.mem_fraction == est.mem_fraction


def test_default_fraction_is_the_engine_versions() -> None:
    # vLLM's gpu_memory_utilization default: 0.9 to 0.19, 0.92 from 0.20 (VllmBudget), the one
    # `kvplan estimate` takes: plan's first fraction is it, not a 0.9 of its own.
    _, new = plan_json("llama-3.1-8b", "-n", "8", "-c", "8k", "--gpu", "H100")
    _, old = plan_json("llama-3.1-8b", "-n", "8", "-c", "8k", "--gpu", "H100",
                       "--engine-version", "0.19")
    assert new["mem_fraction"] == 0.92 and old["mem_fraction"] == 0.9


@pytest.mark.parametrize("version", ["0.19", "0.32"])
def test_one_default_fraction_for_plan_estimate_compare_and_sweep(version: str) -> None:
    """The engine's default fraction for its version (VllmBudget.default_fraction) is the one
    plan, estimate, compare and sweep take: Llama-3.1-8B, 8k on one H100."""
    from kvplan.analysis.compare import compare_schemes

    version_args = ("--engine-version", version)
    _, plan = plan_json("llama-3.1-8b", "-n", "8", "-c", "8k", "--gpu", "H100", *version_args)
    est = json.loads(run("estimate", "llama-3.1-8b", "-c", "8k", "--gpu", "H100", *version_args,
                         "--format", "json").stdout)
    sweep = json.loads(run("sweep", "llama-3.1-8b", "--context", "8192", "--gpu", "H100",
                           "--format", "json").stdout)[0]
    expected = 0.9 if version == "0.19" else 0.92
    assert plan["mem_fraction"] == est["mem_fraction"] == expected
    assert plan["kv_budget_bytes"] == est["kv_budget_bytes"]
    # compare and sweep follow the newest vLLM modelled (they take no --engine-version).
    comparison = compare_schemes(_spec("llama-3.1-8b"), context=8192, gpu=get_gpu("H100"))
    assert comparison.mem_fraction == sweep["mem_fraction"] == 0.92


def test_alternatives_are_not_capped_by_the_target() -> None:
    # Llama-3.1-8B, one request of 8k on an H100: the layout holds far more than one; the
    # half-context alternative says how many (at vLLM's default --max-num-seqs), not "1".
    _, plan = plan_json("llama-3.1-8b", "-n", "1", "-c", "8k", "--gpu", "H100")
    assert plan["max_requests"] > 1 and plan["max_num_seqs"] == 1
    shorter = [a for a in plan["alternatives"] if a["label"].startswith("max-model-len 4k")]
    assert shorter and shorter[0]["requests"] > plan["max_requests"]


def test_explicit_max_num_seqs_caps_as_in_estimate() -> None:
    _, plan = plan_json("llama-3.1-8b", "-n", "4", "-c", "8k", "--gpu", "H100",
                        "--max-num-seqs", "4")
    est = json.loads(run("estimate", "llama-3.1-8b", "-c", "8k", "--gpu", "H100",
                         "--mem-fraction", str(plan["mem_fraction"]), "--max-num-seqs", "4",
                         "--format", "json").stdout)
    assert plan["max_requests"] == est["max_requests"] == 4
    assert plan["kv_budget_bytes"] == est["kv_budget_bytes"]


def test_plan_default_batched_tokens_follow_the_engine_version() -> None:
    # vLLM's max_num_batched_tokens default depends on the version (vllm_batch_defaults): the
    # plan's budget equals estimate's at each version.
    for version in ("0.10", "0.19"):
        _, plan = plan_json("qwen3-8b", "-n", "1", "-c", "8k", "--gpu", "H100",
                            "--engine-version", version)
        est = json.loads(run("estimate", "qwen3-8b", "-c", "8k", "--gpu", "H100",
                             "--engine-version", version, "--mem-fraction",
                             str(plan["mem_fraction"]), "--format", "json").stdout)
        assert plan["kv_budget_bytes"] == est["kv_budget_bytes"], version


# --- 3. the margin ------------------------------------------------------------------------------


def test_gpt_oss_120b_on_one_h100_shows_its_margin() -> None:
    code, plan = plan_json("gpt-oss-120b", "--gpu", "H100", "--gpus-per-node", "1",
                           "--context", "128k", "--concurrency", "1")
    assert plan["verdict"] in ("FITS", "BORDERLINE", "DOES NOT FIT")
    assert isinstance(plan["margin_bytes"], int) and isinstance(plan["margin_requests"], int)
    err = plan["expected_error"]
    assert err == {**measured_error(Engine.vllm).to_dict(), "band_bytes": err["band_bytes"]}
    table = run("plan", "gpt-oss-120b", "--gpu", "H100", "--gpus-per-node", "1", "--context",
                "128k", "--concurrency", "1").stdout
    assert "margin" in table and "kvplan's error" in table


def test_llm_d_profile_of_gpt_oss_120b_with_its_inputs() -> None:
    """llm-d-benchmark's vLLM 0.11 profile of gpt-oss-120b on one H100 (config_explorer results:
    weights 64.38 GiB, activation 7.38, non-torch 0.13, 'only 3.33 GiB for KV cache',
    max-model-len 16,000, --block-size 128): 64.38 + 7.38 + 0.13 + 3.33 = 75.22 GiB = 0.95 x
    79.18, so that run's fraction was 0.95, not the 0.9 its table states. With its weights and
    that fraction kvplan gives 3.95 GiB (examples/plan.md: 0.62 GiB over the log, outside the
    vLLM band);
    kvplan's own weights (65.93 GiB, the Marlin MXFP4 path, its rotary table in float32 as
    vLLM's gpt_oss.py builds it) at vLLM 0.11's 0.9 default give -1.56 (vllm#23278 logged
    -2.14 at 0.10's rules on one H100)."""
    base = ("estimate", "gpt-oss-120b", "--gpu", "H100", "--context", "16000",
            "--engine-version", "0.11", "--block-size", "128", "--format", "json")
    llm_d = json.loads(run(*base, "--mem-fraction", "0.95", "--weights-gib", "64.38").stdout)
    assert round(llm_d["kv_budget_bytes"] / GiB, 2) == 3.95
    ours = json.loads(run(*base).stdout)
    assert round(ours["kv_budget_bytes"] / GiB, 2) == -1.56
    guide = (ROOT / "examples" / "plan.md").read_text().replace("\n", " ")
    assert "kvplan gives 3.95 GiB" in guide


def _weights_for_margin(margin_gib: float) -> tuple[list[str], dict]:
    """Llama-3.1-8B, 4 x 32k on one H100 at 0.92: the --weights-gib that leaves `margin_gib`
    of KV over the target's need."""
    args = ["llama-3.1-8b", "-n", "4", "-c", "32k", "--gpu", "H100", "--gpus-per-node", "1",
            "--mem-fraction", "0.92", "--kv-dtype", "bf16"]
    _, plan = plan_json(*args)
    weights = (plan["weights_bytes"] + plan["margin_bytes"] - margin_gib * GiB) / GiB
    return [*args, "--weights-gib", f"{weights:.6f}"], plan


def test_margin_inside_the_error_is_borderline_on_both_sides() -> None:
    band = measured_error(Engine.vllm).bytes / GiB  # about 0.25 GiB at this budget
    for margin_gib, fits in ((band / 3, True), (-band / 3, False)):
        args, _ = _weights_for_margin(margin_gib)
        result = run("plan", *args, "--format", "json")
        assert result.exit_code == 0, result.output  # BORDERLINE exits 0
        plan = json.loads(result.stdout)
        assert plan["verdict"] == "BORDERLINE" and plan["fits"] is fits
        assert abs(plan["margin_bytes"] / GiB - margin_gib) < 0.01
        assert "inside kvplan's measured error" in plan["reason"]
        assert plan["command"] is not None
    # Outside the band: FITS (exit 0) and DOES NOT FIT (exit 3).
    args, _ = _weights_for_margin(3 * band)
    assert run("plan", *args).exit_code == 0
    args, _ = _weights_for_margin(-3 * band)
    result = run("plan", *args, "--format", "json")
    assert result.exit_code == 3 and json.loads(result.stdout)["verdict"] == "DOES NOT FIT"


def test_margin_is_the_budget_less_the_targets_kv() -> None:
    # Llama-3.1-8B, bf16: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B per token
    # at TP 1 (1/tp of it per GPU); a 32,768-token request is 2,048 blocks of 16 tokens, so the
    # margin per GPU is the KV budget less (requests per replica) x 2,048 x 16 x 131,072 / tp.
    _, plan = plan_json("llama-3.1-8b", "-n", "20", "-c", "32k", "--gpu", "H100", "--kv-dtype",
                        "bf16", "--gpus-per-node", "8")
    replicas = plan["layout"]["dp"]
    per = -(-20 // replicas)
    need = per * 2048 * 16 * 131_072 // plan["layout"]["tp"]
    assert plan["margin_bytes"] == plan["kv_budget_bytes"] - need
    assert plan["margin_requests"] == plan["max_requests"] - 20


# --- 4. option parity ---------------------------------------------------------------------------


def test_mtp_draft_weights_count_in_plan_and_estimate() -> None:
    # DeepSeek-V3 with --speculative-method mtp: vLLM loads the MTP layer (deepseek_mtp.py): a
    # whole MoE decoder layer, eh_proj (2 x 7,168 x 7,168 x 2 B = 205,520,896 B, whole on every
    # rank) and shared_head.head (129,280 rows padded to 64 = 129,280, / 8 ranks = 16,160 x 7,168
    # x 2 B = 231,669,760 B); the routed experts at TP 8: 256 x 3 x 7,168 x 256 x 1 B (fp8) =
    # 1,409,286,144 B. Its embedding is the target's (eagle.py shares it).
    base = ("estimate", "deepseek-v3", "--gpu", "H200", "--tp", "8", "--context", "8k",
            "--format", "json")
    plain = json.loads(run(*base).stdout)
    mtp = json.loads(run(*base, "--speculative-method", "mtp").stdout)
    draft = mtp["weights_breakdown"]["mtp"]
    assert plain["weights_breakdown"]["mtp"] == 0
    assert draft > 205_520_896 + 231_669_760 + 1_409_286_144
    assert draft < 205_520_896 + 231_669_760 + 1_409_286_144 + 60 * 2**20  # MLA, norms, scales
    assert mtp["weights_bytes"] > plain["weights_bytes"] + draft  # + the draft's scales
    _, plan = plan_json("deepseek-v3", "-n", "8", "-c", "8k", "--gpu", "H200",
                        "--speculative-method", "mtp", "--kv-dtype", "fp8")
    _, plain_plan = plan_json("deepseek-v3", "-n", "8", "-c", "8k", "--gpu", "H200",
                              "--kv-dtype", "fp8")
    assert plan["weights_bytes"] > plain_plan["weights_bytes"] + draft * 0.9


def test_weights_reserve_device_and_dtype_options_as_in_estimate() -> None:
    code, plan = plan_json("llama-3.1-8b", "-n", "4", "-c", "8k", "--gpu-mem-gib", "40",
                           "--weights-gib", "15", "--reserve-gib", "3", "--kv-dtype", "bf16",
                           "--mem-fraction", "0.9", "--dtype", "float16")
    assert code == 0 and plan["weights_bytes"] == 15 * GiB and plan["kv_dtype"] == "bf16"
    est = json.loads(run("estimate", "llama-3.1-8b", "-c", "8k", "--gpu-mem-gib", "40",
                         "--weights-gib", "15", "--reserve-gib", "3", "--mem-fraction", "0.9",
                         "--dtype", "float16", "--format", "json").stdout)
    assert plan["kv_budget_bytes"] == est["kv_budget_bytes"]
    assert plan["tpot_ms"] is None  # a device known by its size: no time model
    result = run("plan", "llama-3.1-8b", "--gpu", "H100", "--gpu-mem-gib", "40")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1


def test_quantization_option_reaches_the_weights() -> None:
    # vLLM 0.27.1 is the last release with bitsandbytes (kvplan.engines.vllm.quant_methods).
    _, plain = plan_json("llama-3.1-8b", "-n", "1", "-c", "4k", "--gpu", "L4",
                         "--engine-version", "0.27.1")
    _, nf4 = plan_json("llama-3.1-8b", "-n", "1", "-c", "4k", "--gpu", "L4",
                       "--quantization", "bitsandbytes", "--engine-version", "0.27.1")
    assert nf4["weights_bytes"] < plain["weights_bytes"] / 2


# --- 5. several GPU types and prices -------------------------------------------------------------


def test_cheapest_layout_across_gpu_types() -> None:
    code, plan = plan_json("qwen3-next-80b-a3b", "--concurrency", "100", "--context", "64k",
                           "--gpu", "H100,H200,B200", "--price", "H100=2.5", "--price",
                           "H200=3.5", "--price", "B200=5")
    assert code == 0 and "by cost per hour" in plan["ranking"]
    prices = {"H100-80GB": 2.5, "H200": 3.5, "B200": 5.0}
    assert plan["cost_per_hour_usd"] == prices[plan["gpu"]] * plan["layout"]["gpus"]
    others = [a for a in plan["alternatives"] if a["gpu"] != plan["gpu"] and a["command"]]
    assert {a["gpu"] for a in others} == set(prices) - {plan["gpu"]}
    for a in others:
        assert a["cost_per_hour_usd"] == prices[a["gpu"]] * a["gpus"]
        assert a["cost_per_hour_usd"] >= plan["cost_per_hour_usd"]
    assert plan["usd_per_million_output_tokens"] is not None
    # Without prices: ranked by GPU count, and said so.
    _, free = plan_json("qwen3-next-80b-a3b", "--concurrency", "100", "--context", "64k",
                        "--gpu", "H100,H200,B200")
    assert "GPU count" in free["ranking"] and free["cost_per_hour_usd"] is None
    assert all(a["layout"]["gpus"] >= free["layout"]["gpus"] for a in free["alternatives"]
               if a["command"] and a["gpu"] != free["gpu"])


def test_prices_file_and_missing_price(tmp_path) -> None:
    f = tmp_path / "prices.yaml"
    f.write_text("H100: 2.5\nH200: 3.5\n")
    code, plan = plan_json("llama-3.1-8b", "-n", "8", "-c", "8k", "--gpu", "H100,H200",
                           "--prices", str(f))
    assert code == 0 and plan["cost_per_hour_usd"] == 2.5
    result = run("plan", "llama-3.1-8b", "--gpu", "H100,H200", "--price", "H100=2")
    assert result.exit_code == 2 and "no price for H200" in result.stderr
    result = run("plan", "llama-3.1-8b", "--price", "H100")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1


# --- 6. no-fit answers --------------------------------------------------------------------------


def test_no_fit_lists_a_layout_that_serves() -> None:
    code, plan = plan_json("deepseek-v3", "--gpu", "L4", "--gpus-per-node", "1", "--nodes",
                           "1", "--context", "128k", "--concurrency", "100")
    assert code == 3 and plan["verdict"] == "DOES NOT FIT"
    serving = [a for a in plan["alternatives"] if a["fits"]]
    assert serving and all(a["requests"] >= 100 and a["command"] for a in serving)
    assert plan["no_alternative_reason"] is None


def test_no_fit_more_gpus_per_node() -> None:
    # Llama-3.1-70B at 32k for 50 on one GPU per node, one node: the answer names the smallest
    # H100 layout that serves (more GPUs per node or more nodes).
    code, plan = plan_json("llama-3.1-70b", "-n", "50", "-c", "32k", "--gpu", "H100",
                           "--gpus-per-node", "1", "--nodes", "1")
    assert code == 3
    more = [a for a in plan["alternatives"] if a["fits"] and a["gpu"] == "H100-80GB"
            and a["context"] == 32768]
    assert more and more[0]["requests"] >= 50


def test_nothing_holds_it_says_so() -> None:
    code, plan = plan_json("deepseek-v3", "--gpu", "L4", "--context", "128k",
                           "--concurrency", "100000")
    assert code == 3 and not any(a["fits"] for a in plan["alternatives"])
    assert "nothing in the GPU list can hold" in plan["no_alternative_reason"]


def test_search_is_bounded_whatever_the_node_size() -> None:
    start = time.monotonic()
    result = run("plan", "llama-3.1-8b", "-n", "1", "-c", "4k", "--gpu", "H100",
                 "--gpus-per-node", str(10**9), "--nodes", str(10**9))
    assert result.exit_code in (0, 3)
    assert time.monotonic() - start < 60


# --- 7. scenario files --------------------------------------------------------------------------


def test_scenario_example_runs_and_flags_override() -> None:
    example = ROOT / "examples" / "plan-scenario.yaml"
    code, plan = plan_json("--scenario", str(example))
    assert code == 0 and plan["model"] == "qwen3-next-80b-a3b" and plan["concurrency"] == 100
    assert plan["cost_per_hour_usd"] is not None
    code, small = plan_json("--scenario", str(example), "--concurrency", "10", "--gpu", "H100")
    assert small["concurrency"] == 10 and small["gpu"] == "H100-80GB"


@pytest.mark.parametrize(("text", "field"), [
    ("model: llama-3.1-8b\nbogus: 1\n", "bogus"),
    ("model: llama-3.1-8b\nconcurrency: 0\n", "concurrency"),
    ("model: llama-3.1-8b\ncontext: 12q\n", "context"),
    ("model: llama-3.1-8b\nengine_version: 0.11\n", "engine_version"),
    ("model: llama-3.1-8b\nprices: {Z9: 3}\n", "prices"),
    ("model: llama-3.1-8b\nengine: tgi\n", "engine"),
    ("model: llama-3.1-8b\nkv_dtype: fp7\n", "kv_dtype"),
    ("- a list\n", None),
])
def test_bad_scenario_field_is_one_line_naming_file_and_field(tmp_path, text, field) -> None:
    f = tmp_path / "q.yaml"
    f.write_text(text)
    result = run("plan", "--scenario", str(f))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "q.yaml" in result.stderr
    if field is not None:
        assert f"q.yaml: {field}:" in result.stderr
    assert result.stdout == ""


def test_qwen_style_mtp_shares_the_head_and_splits_fc() -> None:
    # Qwen3-Next-80B-A3B (hidden 2,048, 512 experts of 512, vocab 151,936) at TP 4, bf16: the
    # MTP layer's routed experts are 512 x 3 x 2,048 x 128 x 2 B = 805,306,368 B, its fc a
    # ColumnParallelLinear of 512 x 4,096 x 2 B = 4,194,304 B (qwen3_next_mtp.py), and no lm
    # head of its own: one would add 151,936 / 4 x 2,048 x 2 B = 155,582,464 B.
    out = json.loads(run("estimate", "qwen3-next-80b-a3b", "--gpu", "H200", "--tp", "4",
                         "--context", "8k", "--speculative-method", "mtp", "--format",
                         "json").stdout)
    draft = out["weights_breakdown"]["mtp"]
    assert 805_306_368 + 4_194_304 < draft < 805_306_368 + 4_194_304 + 60 * 2**20
    assert draft < 805_306_368 + 155_582_464


def test_plan_json_says_which_mxfp4_kernel_the_weights_assumed() -> None:
    """gpt-oss-20b (MXFP4 experts) on an H100 with vLLM's newest release: vLLM runs the Triton
    MoE kernel on Hopper from 0.11.1 (kvplan.engines.vllm.mxfp4_backend), and plan's JSON says so
    in `weights_notes`, as estimate's weights breakdown does; --mxfp4-backend marlin says Marlin."""
    config = str(Path(__file__).parent / "data" / "configs" / "gpt-oss-20b.json")
    _, plan = plan_json(config, "--gpu", "h100-80gb")
    assert plan["quantization"].startswith("mxfp4")
    assert any("triton MoE kernel" in note for note in plan["weights_notes"])
    _, marlin = plan_json(config, "--gpu", "h100-80gb", "--mxfp4-backend", "marlin")
    assert any("marlin moe kernel" in note.lower() for note in marlin["weights_notes"])
    llama = Path(__file__).parents[1] / "model_specs" / "llama-3.1-8b.yaml"
    _, dense = plan_json(str(llama), "--gpu", "h100-80gb")
    assert dense["quantization"] == "none" and dense["weights_notes"] == []
