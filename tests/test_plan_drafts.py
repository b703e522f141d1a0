"""`kvplan plan` prices the drafter's k tokens a step where the drafts' acceptance is given
(--spec-mean-accept-len / --spec-acceptance-rate, read as `simulate` reads them), and none
without it (kvplan.analysis.plan_search._cost_setup)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kvplan.cli import app

runner = CliRunner()
BASE = ["plan", "meta-llama/Llama-3.1-8B", "--gpu", "H100-80GB", "--engine", "vllm",
        "--concurrency", "64", "--context", "8192", "--speculative-method", "eagle",
        "--num-speculative-tokens", "3", "--format", "json"]


def _prediction(accept_len: float | None):
    from kvplan import load_spec
    from kvplan.analysis.plan_search import predict
    from kvplan.analysis.planner import PlanRequest, plan_serving
    from kvplan.hardware.gpus import get_gpu

    spec = load_spec("meta-llama/Llama-3.1-8B")
    req = PlanRequest(concurrency=64, context=8192, gpu=get_gpu("H100-80GB"),
                      extra={"speculative_method": "eagle", "num_speculative_tokens": 3},
                      spec_mean_accept_len=accept_len)
    chosen = plan_serving(spec, req).chosen
    assert chosen is not None
    return predict(spec, req, chosen)


def test_plan_prices_drafts_with_an_acceptance() -> None:
    none = _prediction(None)
    # No acceptance: no draft priced, one token a step (as before this change).
    assert none.tokens_per_step == 1 and "mtp_draft" not in none.decode_ms_by_op
    # L = 2.5 with k = 3: one rate q with q + q^2 + q^3 = 1.5 (spec_acceptance.chain_rate),
    # so 1 + q + q^2 + q^3 = 2.5 tokens a step; the step adds three draft passes.
    mean = _prediction(2.5)
    assert abs(mean.tokens_per_step - 2.5) < 1e-9
    assert mean.decode_ms_by_op["mtp_draft"] > 0
    assert mean.decode_step_ms > none.decode_step_ms
    assert abs(mean.tpot_ms - mean.decode_step_ms / 2.5) < 1e-6


def test_plan_cli_reads_the_acceptance_as_simulate() -> None:
    # --spec-acceptance-rate 0.8,0.6,0.4 (vLLM's per-position rates): L = 1 + 1.8 = 2.8, the
    # same TPOT as --spec-mean-accept-len 2.8; none given: the TPOT without drafts.
    def tpot(*extra: str) -> float:
        res = runner.invoke(app, [*BASE, *extra])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)["tpot_ms"]

    rates, mean, plain = (tpot("--spec-acceptance-rate", "0.8,0.6,0.4"),
                          tpot("--spec-mean-accept-len", "2.8"), tpot())
    assert abs(rates - mean) < 1e-6 and mean < plain


def test_plan_acceptance_needs_a_drafter() -> None:
    args = [a for a in BASE if a not in ("--speculative-method", "eagle")]
    res = runner.invoke(app, [*args, "--spec-mean-accept-len", "2.5"])
    assert res.exit_code == 2 and "needs --speculative-method" in res.stderr
    res = runner.invoke(app, [*BASE, "--spec-mean-accept-len", "2.5",
                              "--spec-acceptance-rate", "0.6"])
    assert res.exit_code == 2 and "not both" in res.stderr
