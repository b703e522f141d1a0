"""The time model's opt-in rules and SGLang's DeepEP from the command line (cli60): each option
moves TTFT / TPOT by what a hand computation from the model's config gives, the JSON names the
rules on (`cost_rules`), and bad input is one line, exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.perf.cost_rules import CostRules
from kvplan.perf.efficiency import FP8_DENSE_GEMM, MOE_GEMM, Efficiency
from kvplan.perf.vllm_ungraphed import VLLM_UNGRAPHED_LAUNCH_S

runner = CliRunner()

# Mixtral-8x7B (bundled spec; config.json: hidden 4,096, moe intermediate 14,336, 8 experts,
# top-2, 32 layers) planned for 64 requests of 8,192 tokens on H100s: vLLM TP 2 with EP 2.
PLAN = ["plan", "mixtral-8x7b", "--gpu", "H100", "--concurrency", "64", "--context", "8192"]


def _json(args: list[str]) -> dict:
    r = runner.invoke(app, [*args, "--format", "json"], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _refused(args: list[str], says: str) -> None:
    r = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and says in err, err


@pytest.fixture(scope="module")
def mixtral_default() -> dict:
    return _json(PLAN)


# Mixtral's prefill by hand (the plan's TTFT is one 8,192-token prefill): its routed experts
# compute 2 FLOPs x top-2 x 3 GEMMs (gate, up, down) x 4,096 x 14,336 x 32 layers =
# 22,548,578,304 FLOPs a token; EP 2 gives each rank half: 8,192 x 22,548,578,304 / 2 =
# 9.2359e13 FLOPs, compute-bound in every price below. Rows per expert: 8,192 tokens x top-2 /
# 8 experts = 2,048, the shape table's 0.59 point (MOE_GEMM_SHAPE_BF16, below the dense 0.70):
# the H100's default since moedefault63.
RANK_FLOPS = 8192 * (2 * 2 * 3 * 4096 * 14336 * 32) / 2
H100_BF16 = 989.5e12  # dense bf16 FLOPS (gpus.json)


def test_moe_gemm_efficiency_moves_plan_ttft_by_hand(mixtral_default: dict) -> None:
    # --moe-gemm-efficiency fitted: 0.33 (MOE_GEMM_FIT) in place of the default table's 0.59
    # (the one fraction per format takes the table off): the prefill grows by
    # 9.2359e13 / 989.5e12 x (1 / 0.33 - 1 / 0.59) = 124.644 ms; the decode (TPOT) streams
    # weights, memory-bound either way: unchanged.
    on = _json([*PLAN, "--moe-gemm-efficiency", "fitted"])
    assert on["layout"] == mixtral_default["layout"] == {
        "tp": 2, "pp": 1, "dp": 1, "ep": 2, "gpus": 2, "nodes": 1}
    grows_ms = RANK_FLOPS / H100_BF16 * (1 / MOE_GEMM - 1 / 0.59) * 1e3
    assert grows_ms == pytest.approx(124.644, abs=1e-3)
    assert on["ttft_ms"] - mixtral_default["ttft_ms"] == pytest.approx(grows_ms, rel=1e-9)
    assert on["tpot_ms"] == mixtral_default["tpot_ms"]
    assert [r["rule"] for r in on["cost_rules"]] == ["moe_gemm"]
    assert on["cost_rules"][0]["value"] == 0.33
    assert on["cost_rules"][0]["source"].startswith("FITTED: bf16 experts, 369 cases")
    # A number given is that fraction, and its source says so.
    given = _json([*PLAN, "--moe-gemm-efficiency", "0.5"])
    assert given["ttft_ms"] - mixtral_default["ttft_ms"] == pytest.approx(
        RANK_FLOPS / H100_BF16 * (1 / 0.5 - 1 / 0.59) * 1e3, rel=1e-9)
    assert given["cost_rules"][0]["source"] == "given"


def test_the_default_json_names_the_shape_table(mixtral_default: dict) -> None:
    # No option given: the JSON names the default experts' table (not opt-in), on the H100.
    [rule] = mixtral_default["cost_rules"]
    assert rule["rule"] == "moe_gemm_shape" and rule["opt_in"] is False
    assert rule["default_on"] == ["H100-80GB"] and rule["value"]["bf16"][2] == [2048, 0.59]
    assert rule["source"].startswith("FITTED: bf16 experts, 183 cases")
    # A dense model: no MoE layer, no record (its output unchanged).
    dense = _json(["plan", "qwen3-8b", "--gpu", "H100", "--concurrency", "4"])
    assert "cost_rules" not in dense


def test_no_moe_gemm_by_rows_moves_plan_ttft_by_hand(mixtral_default: dict) -> None:
    # --no-moe-gemm-by-rows: the table off, the experts at the dense 0.70 (no one fraction
    # given; vLLM's bf16 Triton MoE has no fitted fraction): the same FLOPs as above shrink by
    # 9.2359e13 / 989.5e12 x (1 / 0.59 - 1 / 0.70) = 24.860 ms.
    off = _json([*PLAN, "--no-moe-gemm-by-rows"])
    shrinks_ms = RANK_FLOPS / H100_BF16 * (1 / 0.59 - 1 / 0.70) * 1e3
    assert shrinks_ms == pytest.approx(24.860, abs=1e-3)
    assert mixtral_default["ttft_ms"] - off["ttft_ms"] == pytest.approx(shrinks_ms, rel=1e-9)
    assert off["tpot_ms"] == mixtral_default["tpot_ms"]
    assert [(r["rule"], r["option"], r["opt_in"]) for r in off["cost_rules"]] == [
        ("moe_gemm_shape", "--no-moe-gemm-by-rows", True)]
    # --moe-gemm-by-rows, the alias kept: the default on a CUDA preset, the same numbers.
    on = _json([*PLAN, "--moe-gemm-by-rows"])
    assert (on["ttft_ms"], on["tpot_ms"]) == (mixtral_default["ttft_ms"],
                                              mixtral_default["tpot_ms"])
    assert on["cost_rules"][0]["rule"] == "moe_gemm_shape"
    assert on["cost_rules"][0]["value"]["bf16"][2] == [2048, 0.59]
    assert on["cost_rules"][0]["rule"] == "moe_gemm_shape"
    assert on["cost_rules"][0]["value"]["bf16"][2] == [2048, 0.59]


def test_ungraphed_launch_moves_simulated_ttft_by_hand() -> None:
    # One request at a time (closed loop of 1) of 1,024 prompt tokens on Qwen3-8B, vLLM on an
    # H100: the prefill step (1,024 tokens) is above vLLM's largest CUDA graph (min(2 x
    # max_num_seqs, 512) = 512), each decode step (1 token) inside one. The ungraphed step
    # launches (kvplan.perf.vllm_ungraphed) per layer: input norm, qkv_proj, q_norm, k_norm,
    # rotary, KV write, attention, o_proj, post-attention norm, gate_up_proj, SiluAndMul,
    # down_proj = 12 kernels (TP 1: no all-reduce), x 36 layers + embedding, final norm and
    # lm_head = 435; at 4.4 us each (`derived`) the prefill, so TTFT and E2E, grow by
    # 435 x 4.4 us = 1.914 ms, at 10 us by 4.35 ms; TPOT is the graphed decode's: unchanged.
    # The engine alone (--no-frontend: frontdef67's default API stage off), the step by hand.
    args = ["simulate", "qwen3-8b", "--gpu", "H100", "--concurrency", "1", "--num-requests",
            "3", "--input-len", "1024", "--output-len", "8", "-q", "--no-frontend"]
    base = _json(args)
    on = _json([*args, "--ungraphed-launch-us", "derived"])
    ten = _json([*args, "--ungraphed-launch-us", "10"])
    assert VLLM_UNGRAPHED_LAUNCH_S == pytest.approx(4.4e-6)
    for got, per_launch_ms in ((on, 4.4e-3), (ten, 10e-3)):
        assert got["ttft_ms"]["mean"] - base["ttft_ms"]["mean"] == pytest.approx(
            435 * per_launch_ms, rel=1e-9)
        assert got["e2e_ms"]["mean"] - base["e2e_ms"]["mean"] == pytest.approx(
            435 * per_launch_ms, rel=1e-9)
        assert got["tpot_ms"]["mean"] == base["tpot_ms"]["mean"]
    assert on["cost_rules"] == [{
        "rule": "ungraphed_launch_s", "option": "--ungraphed-launch-us",
        "value": VLLM_UNGRAPHED_LAUNCH_S, "source": on["cost_rules"][0]["source"],
        "opt_in": True}]
    assert on["cost_rules"][0]["source"].startswith("DERIVED, not fitted: vLLM PR #20059")
    assert ten["cost_rules"][0]["source"] == "given"
    assert "cost_rules" not in base


def test_fp8_dense_gemm_sets_the_fraction_and_the_json_says_so() -> None:
    rules = CostRules(fp8_dense_gemm=FP8_DENSE_GEMM)
    assert rules.apply(Efficiency()).fp8_dense_gemm == 0.48
    # DeepSeek-V3 (FP8 block-quantized) on H200s: the dense (attention, shared) w8a8 GEMMs of
    # the prefill at 0.48 of the FP8 peak instead of 0.70: TTFT grows, TPOT (memory-bound) not.
    args = ["plan", "deepseek-v3", "--gpu", "H200", "--concurrency", "64", "--context", "8192"]
    base, on = _json(args), _json([*args, "--fp8-dense-gemm-efficiency", "fitted"])
    assert on["ttft_ms"] > base["ttft_ms"] and on["tpot_ms"] == base["tpot_ms"]
    assert [r["rule"] for r in on["cost_rules"] if r["opt_in"]] == ["fp8_dense_gemm"]
    # DeepSeek-V3's experts on the H200: the default shape table, named in both.
    assert [r["rule"] for r in base["cost_rules"]] == ["moe_gemm_shape"]


def test_compare_takes_the_rules_on_every_row() -> None:
    args = ["compare", "mixtral-8x7b", "--gpu", "H100", "--tp", "2", "--context", "8192"]
    base, on = _json(args), _json([*args, "--moe-gemm-efficiency", "fitted"])
    assert all([c["rule"] for c in r["cost_rules"]] == ["moe_gemm"] for r in on)
    assert all([c["rule"] for c in r["cost_rules"]] == ["moe_gemm_shape"] for r in base)
    native = [r for r in on if r["native"]][0]
    assert native["ttft_ms"] > [r for r in base if r["native"]][0]["ttft_ms"]


@pytest.mark.parametrize(("args", "says"), [
    (["--moe-gemm-efficiency", "1.5"], "--moe-gemm-efficiency: expected fitted or a number"),
    (["--moe-gemm-efficiency", "fit"], "--moe-gemm-efficiency: expected fitted or a number"),
    (["--fp8-dense-gemm-efficiency", "0"], "expected fitted or a number in (0, 1]"),
    (["--ungraphed-launch-us", "-1"], "--ungraphed-launch-us: expected derived or a number"),
    (["--moe-gemm-by-rows", "--moe-gemm-efficiency", "fitted"],
     "--moe-gemm-by-rows and --moe-gemm-efficiency / --fp8-moe-gemm-efficiency: give one"),
    (["--engine", "sglang", "--ungraphed-launch-us", "derived"],
     "--ungraphed-launch-us: vLLM's price"),
    (["--gpu", "H200", "--gemm-by-shape"], "--gemm-by-shape: the measured table is the "
                                           "H100-80GB's"),
])
def test_bad_cost_rule_is_one_line_exit_2(args: list[str], says: str) -> None:
    gpu = [] if "--gpu" in args else ["--gpu", "H100"]
    _refused(["simulate", "qwen3-8b", *gpu, "--rate", "1", "--num-requests", "2", *args], says)


def test_where_a_rule_is_not_priced_it_is_refused() -> None:
    # plan without --rate and compare time no vLLM step above its graphs (the simulator does).
    _refused([*PLAN, "--ungraphed-launch-us", "derived"],
             "--ungraphed-launch-us: only the simulator's vLLM steps")
    # estimate times only the offload tiers' recompute.
    _refused(["estimate", "mixtral-8x7b", "--gpu", "H100", "--moe-gemm-by-rows"],
             "--moe-gemm-by-rows: estimate prices time only for the offload tiers")


def test_estimate_prices_the_offload_recompute_with_the_rules() -> None:
    args = ["estimate", "mixtral-8x7b", "--gpu", "H100", "--tp", "2", "--context", "8192",
            "--kv-offloading-size", "100", "--prefix-hit-rate", "0.5"]
    base, on = _json(args), _json([*args, "--moe-gemm-efficiency", "fitted"])
    key = "offload"
    assert on[key]["recompute_ms"] > base[key]["recompute_ms"] > 0
    assert [r["rule"] for r in on["cost_rules"]] == ["moe_gemm"]
    assert [(r["rule"], r["opt_in"]) for r in base["cost_rules"]] == [("moe_gemm_shape", False)]


# --- SGLang's --moe-a2a-backend -----------------------------------------------------------

DSV3 = ["plan", "deepseek-v3", "--engine", "sglang", "--gpu", "H200", "--concurrency", "64",
        "--context", "8192"]


def test_plan_prices_deepep_and_its_launch_line_says_it() -> None:
    base = _json(DSV3)
    on = _json([*DSV3, "--moe-a2a-backend", "deepep", "--moe-dense-tp-size", "1",
                "--deepep-mode", "low_latency", "--enable-dp-lm-head"])
    # The one layout DeepEP runs under (DP attention, EP = TP: kvplan.engines.sglang.deepep).
    assert on["layout"] == {"tp": 8, "pp": 1, "dp": 8, "ep": 8, "gpus": 8, "nodes": 1}
    assert on["ttft_ms"] != base["ttft_ms"] and on["tpot_ms"] != base["tpot_ms"]
    # --moe-dense-tp-size 1 keeps the dense MLPs and shared experts whole on every rank.
    assert on["weights_bytes"] > base["weights_bytes"]
    line = on["command"]
    for flag in ("--moe-a2a-backend deepep --deepep-mode low_latency",
                 "--moe-dense-tp-size 1", "--enable-dp-lm-head"):
        assert flag in line
    assert "--moe-a2a-backend" not in base["command"]


def test_engine_arg_takes_moe_a2a_backend_from_sglang_flag_table() -> None:
    from kvplan.engines.base import Engine

    flags = {f.flag: f for f in Engine.sglang.engine_flags.flags}
    assert flags["--moe-a2a-backend"].choices == ("none", "deepep")
    assert flags["--moe-a2a-backend"].kvplan_option == "--moe-a2a-backend"
    # Parsed as SGLang's flag (not "not a SGLang flag"), then refused by the layout rule:
    # SGLang's DP-attention ranks, which DeepEP needs, are not simulated.
    args = ["simulate", "deepseek-v2-lite", "--engine", "sglang", "--gpu", "H100", "--tp", "2",
            "--ep", "2", "--rate", "1", "--num-requests", "2",
            "--engine-arg=--moe-a2a-backend=deepep", "--engine-arg=--moe-dense-tp-size=1"]
    _refused(args, "--moe-a2a-backend deepep: priced under --enable-dp-attention only")
    _refused([*args[:-2], "--engine-arg=--moe-a2a-backend=mooncake"],
             "--moe-a2a-backend expects one of none, deepep")
    # kvplan's own option and the flag setting it two ways: one line.
    _refused([*args[:-1], "--moe-a2a-backend", "none"],
             "kvplan's own option already set")


@pytest.mark.parametrize(("args", "says"), [
    # A dense model: no MoE layer dispatches (SGLang starts with it all the same).
    (["estimate", "qwen3-8b", "--engine", "sglang", "--gpu", "H100", "--tp", "2",
      "--enable-expert-parallel", "--dp-attention", "--moe-a2a-backend", "deepep",
      "--moe-dense-tp-size", "1"], "qwen3-8b has no routed experts"),
    # EP 1: one rank, no all-to-all.
    (["estimate", "deepseek-v2-lite", "--engine", "sglang", "--gpu", "H100",
      "--dp-attention", "--moe-a2a-backend", "deepep", "--moe-dense-tp-size", "1"],
     "--moe-a2a-backend deepep: EP 1"),
    # Another engine's flag.
    (["estimate", "deepseek-v2-lite", "--gpu", "H100", "--moe-a2a-backend", "deepep"],
     "--moe-a2a-backend: an SGLang flag (--engine sglang), not vllm's"),
    (["estimate", "deepseek-v2-lite", "--engine", "sglang", "--gpu", "H100",
      "--moe-a2a-backend", "nccl"], "--moe-a2a-backend: expected one of none, deepep"),
    ([*DSV3, "--disagg", "--moe-a2a-backend", "deepep"],
     "--moe-a2a-backend: not taken with --disagg"),
])
def test_moe_a2a_refused_in_one_line(args: list[str], says: str) -> None:
    _refused(args, says)


def test_disagg_prefill_role_takes_the_rules(mixtral_default: dict) -> None:
    # The prefill role (TP 2, EP 1: --prefill-tp 2 names no EP, where plan's search above chose
    # EP 2) prefills the same 8,192 tokens: its prefill grows by the same hand-computed
    # 124.644 ms as plan's TTFT (the experts' FLOPs a rank are the same at EP 1 and EP 2, and
    # so are the rows per expert, 2,048: MoE TP splits each expert's width, not its rows). The
    # two prefills themselves differ since vLLM's FlashInfer CUTLASS MoE (flashmoe60) moves a
    # rank's own (token, expert) pairs, all of them at EP 1, half at EP 2.
    args = ["plan", "mixtral-8x7b", "--disagg", "--prefill-tp", "2", "--decode-tp", "2",
            "--input-len", "8k", "--output-len", "256", "-n", "16", "--gpu", "H100"]
    base, on = _json(args), _json([*args, "--moe-gemm-efficiency", "fitted"])
    assert on["prefill"]["prefill_ms"] - base["prefill"]["prefill_ms"] == pytest.approx(
        RANK_FLOPS / H100_BF16 * (1 / MOE_GEMM - 1 / 0.59) * 1e3, rel=1e-9)
    assert on["prefill"]["layout"]["tp"] == 2 and on["prefill"]["layout"]["ep"] == 1
    assert [r["rule"] for r in on["cost_rules"]] == ["moe_gemm"]
    assert [r["rule"] for r in base["cost_rules"]] == ["moe_gemm_shape"]


def test_plan_rate_simulates_with_the_rules() -> None:
    args = ["plan", "llama-3.1-8b", "--gpu", "H100", "-c", "4096", "--rate", "4",
            "--slo-ttft-ms", "150", "--slo-tpot-ms", "30", "--input-len", "2000",
            "--output-len", "50", "--num-requests", "40", "--jobs", "1"]
    base, on = _json(args), _json([*args, "--ungraphed-launch-us", "derived"])
    # Every 2,000-token prefill is above vLLM's largest graph: each pays 323 launches
    # (32 layers x 10 kernels, Llama has no q/k norms, + 3) x 4.4 us = 1.42 ms, and the
    # queue behind it more.
    assert on["best"]["ttft_ms_p90"] - base["best"]["ttft_ms_p90"] >= 323 * 4.4e-3
    assert [r["rule"] for r in on["cost_rules"]] == ["ungraphed_launch_s"]
    assert "cost_rules" not in base


def test_help_lines_quote_the_constants_the_rules_apply() -> None:
    # The options' help is written without importing the perf modules (estimate's start-up):
    # each number it quotes must be the constant `fitted` / `derived` then applies.
    from kvplan.cli import cost_opts
    from kvplan.perf.efficiency import FP8_MOE_GEMM

    def help_of(opt: object) -> str:
        return opt.__metadata__[0].help  # type: ignore[attr-defined]

    assert f"fitted: {MOE_GEMM:.2f}," in help_of(cost_opts.MoeGemmOpt)
    assert f"fitted: {FP8_MOE_GEMM:.2f}," in help_of(cost_opts.Fp8MoeGemmOpt)
    assert f"fitted: {FP8_DENSE_GEMM:.2f}," in help_of(cost_opts.Fp8DenseGemmOpt)
    assert f"derived: {VLLM_UNGRAPHED_LAUNCH_S * 1e6:.1f}," in help_of(
        cost_opts.UngraphedLaunchOpt)


def test_the_shape_table_is_the_cuda_presets_default_and_not_amds() -> None:
    from kvplan.hardware.gpus import get_gpu
    from kvplan.perf.efficiency import MOE_GEMM_SHAPE, device_efficiency

    h100, b200, mi300x = get_gpu("H100"), get_gpu("B200"), get_gpu("MI300X")
    assert device_efficiency(h100).moe_gemm_shape is MOE_GEMM_SHAPE
    assert device_efficiency(b200).moe_gemm_shape is MOE_GEMM_SHAPE
    assert device_efficiency(b200).fp8_gemm == 0.55  # its own fields kept
    assert device_efficiency(mi300x).moe_gemm_shape is None  # fitted on H100 kernels only
    # Off, or a one fraction per format given: the table goes; asked for: set, AMD too.
    assert CostRules(moe_gemm_by_rows=False).apply(device_efficiency(h100)).moe_gemm_shape is None
    assert CostRules(moe_gemm=0.33).apply(device_efficiency(h100)).moe_gemm_shape is None
    assert CostRules(moe_gemm_by_rows=True).apply(
        device_efficiency(mi300x)).moe_gemm_shape is MOE_GEMM_SHAPE
    # The default's record: where it applies (a MoE model on a CUDA device) only.
    none = CostRules()
    assert none.records((mi300x,), moe=True) == [] and none.records((h100,), moe=False) == []
    [rec] = none.records((h100, mi300x), moe=True)
    assert rec["opt_in"] is False and rec["default_on"] == ["H100-80GB"]
    # --moe-gemm-by-rows on an AMD preset is opt-in there.
    [rec] = CostRules(moe_gemm_by_rows=True).records((mi300x,), moe=True)
    assert rec["opt_in"] is True and "default_on" not in rec
