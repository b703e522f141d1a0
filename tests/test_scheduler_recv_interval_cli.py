"""`kvplan plan --disagg --scheduler-recv-interval N` (issue 29, cliopts63): SGLang's decode-side
flag, read in kvplan.engines.sglang.decode_admission ("Taking requests in", disagg63), from the
command line to the decode admission the closed-loop simulation takes, the decode launch line,
and its refusals (one line, exit 2)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from typer.testing import CliRunner

import kvplan.analysis.disagg as disagg
from kvplan.cli import app
from tests.test_disagg_sim import _fixed, _inputs

runner = CliRunner()
ARGS = ["plan", "llama-3.1-8b", "--disagg", "--engine", "sglang", "--gpu", "H100",
        "--input-len", "4k", "--output-len", "512", "--concurrency", "64", "-f", "json"]


def _planned(monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[Any, dict[str, Any]]:
    """The DisaggRequest and DisaggPlan the command made, and its JSON."""
    seen: dict[str, Any] = {}
    real = disagg.plan_disagg

    def spy(spec: Any, req: Any) -> Any:
        seen["req"], seen["plan"] = req, real(spec, req)
        return seen["plan"]

    monkeypatch.setattr(disagg, "plan_disagg", spy)
    res = runner.invoke(app, [*ARGS, *extra])
    assert res.exit_code == 0, res.output
    return seen, json.loads(res.stdout)


def test_the_interval_reaches_the_decode_admission_and_the_hand_worked_case(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen, data = _planned(monkeypatch, "--scheduler-recv-interval", "4")
    req, plan = seen["req"], seen["plan"]
    assert req.scheduler_recv_interval == 4
    adm = disagg.decode_admission_of(req, plan.decode.candidate)
    assert adm is not None and adm.recv_interval == 4
    # disagg63's hand-worked case (tests/test_disagg_sim.py test_decode_recv_interval_by_hand:
    # two users, prefill steps 0.1 s, decode steps 0.01 s, transfer 5 ms) with the admission
    # the command built: Llama-3.1-8B's H100 decode pool holds far more than two 100-token
    # prompts (+ 512 reserved each), so only the interval binds. Rid 2 is sent at 0.12 and
    # taken at the 4th decode boundary since the take at 0.11 (0.15): TTFT 0.135 s; rid 4 is
    # taken at once (idle worker), 0.105: mean 120 ms, 15 ms of it admission. Interval 1: 105.
    lengths = ((100, 2), (100, 40), (100, 2), (100, 2), (100, 2), (100, 2))
    base = replace(_inputs(fts=None), lengths=lengths)
    res = _fixed(replace(base, decode_admission=adm))
    assert res.ttft_ms == pytest.approx(120.0)
    assert res.phases is not None and res.phases.admission_ms == pytest.approx(15.0)
    once = _fixed(replace(base, decode_admission=replace(adm, recv_interval=1)))
    assert once.ttft_ms == pytest.approx(105.0)
    # The decode launch carries the flag (the prefill's does not); the note says the ratio's
    # formulas do not model the wait.
    assert data["decode"]["command"].endswith("--scheduler-recv-interval 4")
    assert "--scheduler-recv-interval" not in data["prefill"]["command"]
    assert any(n.startswith("--scheduler-recv-interval 4: on the decode launch")
               for n in data["notes"])


def test_the_default_is_sglangs_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    seen, data = _planned(monkeypatch)
    assert seen["req"].scheduler_recv_interval == 1
    adm = disagg.decode_admission_of(seen["req"], seen["plan"].decode.candidate)
    assert adm is not None and adm.recv_interval == 1
    one = runner.invoke(app, [*ARGS, "--scheduler-recv-interval", "1"])
    assert json.loads(one.stdout) == data
    assert "--scheduler-recv-interval" not in data["decode"]["command"]


@pytest.mark.parametrize(("args", "message"), [
    # SGLang's SchedulerRecvSkipper asserts not enable_dp_attention.
    (["plan", "deepseek-v3", "--disagg", "--engine", "sglang", "--gpu", "H200",
      "--input-len", "4k", "--output-len", "512", "--prefill-tp", "8", "--decode-tp", "8",
      "--decode-dp", "8", "--decode-dp-attention", "--scheduler-recv-interval", "4"],
     "--scheduler-recv-interval 4: SGLang refuses it with DP attention"),
    # vLLM's and TensorRT-LLM's decode sides have no such flag.
    ([*ARGS[:4], "vllm", *ARGS[5:], "--scheduler-recv-interval", "4"],
     "--scheduler-recv-interval 4: SGLang's decode flag"),
    ([*ARGS[:4], "trtllm", *ARGS[5:], "--scheduler-recv-interval", "2"],
     "--scheduler-recv-interval 2: SGLang's decode flag"),
    (["plan", "llama-3.1-8b", "--scheduler-recv-interval", "4"],
     "--scheduler-recv-interval: needs --disagg"),
    ([*ARGS, "--scheduler-recv-interval", "0"], "--scheduler-recv-interval"),
])
def test_refusals_are_one_line(args: list[str], message: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output
