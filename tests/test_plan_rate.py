"""`kvplan plan MODEL --rate R --slo-ttft-ms X --slo-tpot-ms Y` (issue 30, item 5): the fewest GPUs
that serve the rate within the SLOs in the simulator, and one fewer misses."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan.analysis.simulate.rate_search import fewest_gpus
from kvplan.analysis.simulate.workload import WorkloadOptions, requests_from
from kvplan.cli import app
from kvplan.sources.resolve import load_model

runner = CliRunner()
# As tests/test_simulate.py::test_fewest_gpus_for_a_rate_and_one_fewer_fails measured it:
# Llama-3.1-8B on H100s, 12 req/s of 2,000 in / 200 out (300 requests, seed 5), SLOs at p90.
ARGS = ["plan", "llama-3.1-8b", "--gpu", "H100-80GB", "-c", "4096", "--rate", "12",
        "--slo-ttft-ms", "150", "--slo-tpot-ms", "15", "--input-len", "2000",
        "--output-len", "200", "--num-requests", "300", "--seed", "5"]


def _json(*extra: str) -> tuple[int, dict]:
    r = runner.invoke(app, [*ARGS, *extra, "-f", "json"], env={"COLUMNS": "80"})
    return r.exit_code, json.loads(r.stdout)


def test_llama_8b_at_12_rps_needs_two_replicas_and_one_gpu_misses() -> None:
    code, data = _json()
    assert code == 0
    assert (data["rate"], data["gpus"], data["layout"], data["replicas"]) == (
        12.0, 2, {"tp": 1, "pp": 1, "dp_attention": False, "ep": 1}, 2)
    # A dense model: no attention-DP layout tried (tests/test_plan_rate_dp_attention.py).
    assert not any(t["dp_attention"] for t in data["trials"])
    assert data["layout_text"] == "tp 1, dp 2"
    assert data["slo"] == {"ttft_ms": 150.0, "tpot_ms": 15.0, "percentile": 90}
    best, fewer = data["best"], data["one_fewer"]
    assert best["meets"] and best["ttft_ms_p90"] <= 150 and best["tpot_ms_p90"] <= 15
    assert data["goodput"] == best["goodput"] > 0
    assert data["headroom_ms"] == {"ttft_ms": 150 - best["ttft_ms_p90"],
                                   "tpot_ms": 15 - best["tpot_ms_p90"]}
    # one GPU misses p90 TTFT
    assert fewer["gpus"] == 1 and not fewer["meets"] and fewer["ttft_ms_p90"] > 150
    # The CLI is the library's search on the same stream: the same trials, the same figures.
    spec = load_model("llama-3.1-8b")[0]
    options = WorkloadOptions(rate=12.0, num_requests=300, input_len=2000, output_len=200,
                              seed=5)
    lib = fewest_gpus(spec, lambda: requests_from(options), gpu="H100-80GB", context=4096,
                      slo_ttft_ms=150, slo_tpot_ms=15, tps=(1, 2, 4, 8), max_gpus=8)
    assert [(t["tp"], t["replicas"], t["meets"]) for t in data["trials"]] == [
        (t.tp, t.dp, t.meets) for t in lib.trials]
    assert best["ttft_ms_p90"] == lib.best.metrics.ttft_ms["p90"]  # type: ignore[union-attr]


def test_rate_plan_table_and_misses() -> None:
    r = runner.invoke(app, ARGS, env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    assert "MEETS: 2 H100-80GB GPU(s)" in r.stdout and "One fewer: 1 GPU(s)" in r.stdout
    assert all(len(line) <= 80 for line in r.stdout.splitlines())
    # SLOs no layout of one GPU meets: exit 3, one line each.
    code, data = _json("--gpus-per-node", "1")
    assert code == 3 and data["gpus"] is None and data["best"] is None
    # No SLO: refused in one line.
    r = runner.invoke(app, ARGS[:6] + ["--rate", "12"])
    assert r.exit_code == 2 and "--slo-ttft-ms" in r.output


def test_slo_without_rate_is_refused() -> None:
    r = runner.invoke(app, ["plan", "llama-3.1-8b", "--slo-ttft-ms", "150"])
    assert r.exit_code == 2 and "need --rate" in r.output


# -- where the layouts run (issue 30, item 6) ------------------------------------------------

def _search(**kw: object):  # type: ignore[no-untyped-def]
    """The search of ARGS (Llama-3.1-8B, 12 req/s, 300 requests) with its requests as a
    picklable callable, so any executor can run it."""
    from functools import partial

    spec = load_model("llama-3.1-8b")[0]
    options = WorkloadOptions(rate=12.0, num_requests=300, input_len=2000, output_len=200,
                              seed=5)
    return fewest_gpus(spec, partial(requests_from, options), gpu="H100-80GB", context=4096,
                       slo_ttft_ms=150, slo_tpot_ms=15, tps=(1, 2, 4, 8), max_gpus=8,
                       **kw)  # type: ignore[arg-type]


def test_process_pool_decides_as_the_serial_run() -> None:
    from kvplan.analysis.simulate.executor import Executor

    serial = _search()
    # Two processes: layouts 1 and 2 GPUs run at once; the answer (2 GPUs, the second
    # layout) and every trial up to it equal the serial run's, metrics included.
    pooled = _search(executor=Executor.process, jobs=2)
    assert pooled == serial
    assert serial.best is not None and serial.best.gpus == 2
    # A window wider than the layouts tried before the answer: the layouts simulated past the
    # answer are dropped, the trials are still the serial run's.
    assert _search(executor=Executor.process, jobs=3) == serial


def test_ray_executor_on_a_local_instance() -> None:
    ray = pytest.importorskip("ray", reason="ray is not installed (the kvplan[ray] extra)")
    from kvplan.analysis.simulate.executor import Executor

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        assert _search(executor=Executor.ray, jobs=1) == _search()
    finally:
        ray.shutdown()


def test_missing_ray_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    r = runner.invoke(app, [*ARGS, "--executor", "ray"])
    assert r.exit_code == 2
    assert r.output.strip().count("\n") == 0 and "kvplan[ray]" in r.output
    # --jobs / --executor without --rate: refused in one line.
    r = runner.invoke(app, ["plan", "llama-3.1-8b", "--jobs", "2"])
    assert r.exit_code == 2 and "need --rate" in r.output
