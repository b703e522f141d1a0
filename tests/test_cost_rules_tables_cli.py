"""--kernel-tables and --mxfp4-experts-by-width (optcli65, issue 30): the two fitted opt-in rules
of stop 64 from the command line. Each moves a command's JSON by exactly what the library gives
with the `Efficiency` field set in Python (`sm100_tables` = b200_tables(), `mxfp4_experts_shape`
= MXFP4_EXPERTS_SHAPE; the rules' own numbers are checked by hand in tests/test_sm100_tables.py
and tests/test_mxfp4_experts.py), names itself in `cost_rules`, and --kernel-tables is refused,
one line and exit 2, off a B200 or under another engine than vLLM."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan.cli.cost_opts import cost_rules
from kvplan.perf.cost_rules import NO_COST_RULES, CostRules
from tests.test_cost_rules_cli import _json, _refused


def test_off_is_no_rule() -> None:
    # Not given: the options' builder returns NO_COST_RULES itself (every output unchanged,
    # no `cost_rules` key added where none was).
    assert cost_rules(kernel_tables=False, mxfp4_experts_by_width=False) is NO_COST_RULES
    assert not CostRules(kernel_tables=False, mxfp4_experts_by_width=False).on
    assert CostRules(kernel_tables=True).on and CostRules(mxfp4_experts_by_width=True).on


# DeepSeek-V3 (block-FP8 w8a8 dense GEMMs) on B200s, TP 8, an 8,192-token prefill: compare
# prices vLLM's steps (the default engine), the prefill above vLLM's largest CUDA graph (512).
DSV3_B200 = ["compare", "deepseek-v3", "--gpu", "B200", "--tp", "8", "--context", "8192"]


def test_kernel_tables_move_compare_as_the_efficiency_field_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import kvplan.perf.efficiency as efficiency
    from kvplan.perf.sm100_tables import b200_tables

    base = _json(DSV3_B200)
    on = _json([*DSV3_B200, "--kernel-tables"])
    # The same command with no option, the device's Efficiency given sm100_tables in Python.
    orig = efficiency.device_efficiency
    monkeypatch.setattr(efficiency, "device_efficiency",
                        lambda gpu: replace(orig(gpu), sm100_tables=b200_tables()))
    by_field = _json(DSV3_B200)
    monkeypatch.undo()
    assert isinstance(base, list) and isinstance(on, list) and isinstance(by_field, list)
    assert len(on) == len(base) == len(by_field) == 6
    for b, o, f in zip(base, on, by_field, strict=True):
        # The same number both ways, and the rule moves the prefill (TTFT) of every row; the
        # decode (one token a step, graph-sized) keeps kvplan's price.
        assert o["ttft_ms"] == f["ttft_ms"] and o["tpot_ms"] == f["tpot_ms"]
        assert o["ttft_ms"] != b["ttft_ms"]
        assert o["tpot_ms"] == b["tpot_ms"]
    rec = [r for r in on[0]["cost_rules"] if r["opt_in"]]
    assert [(r["rule"], r["option"], r["value"]) for r in rec] == [
        ("sm100_tables", "--kernel-tables", "B200 vLLM 0.19.0 kernel tables")]
    assert rec[0]["source"].startswith("FITTED: aiconfigurator 095f58a51 b200_sxm vllm 0.19.0")
    assert all(not r["opt_in"] for r in base[0]["cost_rules"])


# gpt-oss-120b (MXFP4 experts) on one H100 under vLLM's Triton MoE (not Marlin), 16 requests of
# 8,192 tokens: plan's TTFT is one 8,192-token prefill at TP 1.
GPT_OSS_H100 = ["plan", "gpt-oss-120b", "--gpu", "H100", "--concurrency", "16", "--context",
                "8192"]


def test_mxfp4_experts_by_width_moves_plan_as_the_efficiency_field_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import kvplan.perf.cost_rules as cr
    from kvplan.perf.efficiency import MXFP4_EXPERTS_SHAPE, device_efficiency

    base = _json(GPT_OSS_H100)
    on = _json([*GPT_OSS_H100, "--mxfp4-experts-by-width"])
    monkeypatch.setattr(cr, "opt_in", lambda rules, gpu: replace(
        device_efficiency(gpu), mxfp4_experts_shape=MXFP4_EXPERTS_SHAPE))
    by_field = _json(GPT_OSS_H100)
    monkeypatch.undo()
    assert isinstance(base, dict) and isinstance(on, dict) and isinstance(by_field, dict)
    assert on["layout"]["tp"] == base["layout"]["tp"] == 1
    assert (on["ttft_ms"], on["tpot_ms"]) == (by_field["ttft_ms"], by_field["tpot_ms"])
    assert on["tpot_ms"] == base["tpot_ms"]
    # By hand, near: the experts compute 2 x top-4 x 3 GEMMs of 2,880 x 2,880 x 36 layers =
    # 7,166,361,600 FLOPs a token, x 8,192 tokens / 989.5e12 bf16 FLOPS = 59.33 ms at full
    # peak; rows per expert 8,192 x 4 / 128 = 256, the bf16 table's edge 0.34 without the rule,
    # the width-2,880 table's 0.41 at 256 rows with it: 59.33 x (1 / 0.34 - 1 / 0.41) = 29.79 ms
    # less. The CLI moves 29.80 ms (the 0.04 % rest not traced here, so checked to 0.1 %).
    shrinks_ms = 8192 * 2 * 4 * 3 * 2880 * 2880 * 36 / 989.5e12 * (1 / 0.34 - 1 / 0.41) * 1e3
    assert shrinks_ms == pytest.approx(29.79, abs=0.01)
    assert base["ttft_ms"] - on["ttft_ms"] == pytest.approx(shrinks_ms, rel=1e-3)
    rec = [r for r in on["cost_rules"] if r["opt_in"]]
    assert [(r["rule"], r["option"]) for r in rec] == [
        ("mxfp4_experts_shape", "--mxfp4-experts-by-width")]
    assert rec[0]["value"]["2880"][0] == [256, 0.41]
    assert rec[0]["source"].startswith("FITTED: w4a16_mxfp4 experts of gpt-oss-120b")
    # Under Marlin (--mxfp4-backend marlin) the table does not apply: nothing moves.
    marlin = [*GPT_OSS_H100, "--mxfp4-backend", "marlin"]
    assert _json([*marlin, "--mxfp4-experts-by-width"])["ttft_ms"] == _json(marlin)["ttft_ms"]


@pytest.mark.parametrize(("args", "says"), [
    (["plan", "deepseek-v3", "--gpu", "H200", "--concurrency", "8"],
     "--kernel-tables: the kernel tables are the B200's (kvplan.perf.sm100_tables); --gpu H200"),
    (["plan", "deepseek-v3", "--gpu", "B200", "--engine", "sglang", "--concurrency", "8"],
     "--kernel-tables: aiconfigurator's B200 tables timed vLLM 0.19.0's layers"),
    (["compare", "deepseek-v3", "--gpu", "H100", "--tp", "8"],
     "--kernel-tables: the kernel tables are the B200's"),
    (["simulate", "qwen3-8b", "--gpu", "H100", "--rate", "1", "--num-requests", "2"],
     "--gpu H100-80GB has none"),
    (["simulate", "qwen3-8b", "--gpu", "B200", "--engine", "trtllm", "--rate", "1",
      "--num-requests", "2"], "--engine trtllm runs others"),
])
def test_kernel_tables_refused_off_a_b200_or_off_vllm(args: list[str], says: str) -> None:
    _refused([*args, "--kernel-tables"], says)


def test_help_lines_quote_the_held_out_results() -> None:
    from kvplan.cli import cost_opts

    def help_of(opt: object) -> str:
        return opt.__metadata__[0].help  # type: ignore[attr-defined]

    kt, mx = help_of(cost_opts.KernelTablesOpt), help_of(cost_opts.Mxfp4ExpertsByWidthOpt)
    assert "OPT-IN" in kt and "FITTED" in kt and "TTFT 47.8 -> 44.6 %" in kt
    assert "OPT-IN" in mx and "FITTED" in mx and "TTFT 49.9 -> 50.3 %" in mx


def test_kernel_tables_move_simulate_as_the_efficiency_field_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Qwen3-8B (bf16: its GEMMs keep the preset's fraction) on two B200s, vLLM, one request at a
    # time of 2,048 prompt tokens: the prefill step is above vLLM's largest CUDA graph, so its
    # TP all-reduces and attention floor are the tables'; the decode steps are graph-sized.
    import kvplan.analysis.simulate.engine_setups as es
    from kvplan.perf.efficiency import device_efficiency
    from kvplan.perf.sm100_tables import b200_tables

    args = ["simulate", "qwen3-8b", "--gpu", "B200", "--tp", "2", "--concurrency", "1",
            "--num-requests", "3", "--input-len", "2048", "--output-len", "8", "-q"]
    base, on = _json(args), _json([*args, "--kernel-tables"])
    monkeypatch.setattr(es, "opt_in", lambda rules, gpu: replace(
        device_efficiency(gpu), sm100_tables=b200_tables()))
    by_field = _json(args)
    monkeypatch.undo()
    assert isinstance(base, dict) and isinstance(on, dict) and isinstance(by_field, dict)
    assert on["ttft_ms"] == by_field["ttft_ms"] and on["tpot_ms"] == by_field["tpot_ms"]
    assert on["ttft_ms"]["mean"] > base["ttft_ms"]["mean"]
    assert on["tpot_ms"]["mean"] == base["tpot_ms"]["mean"]
    assert [r["rule"] for r in on["cost_rules"]] == ["sm100_tables"]
    assert "cost_rules" not in base
