"""tests/benches/fp32bw63.py: the rows the B200 / B300 FP32 peak reaches, as its docstring
states them (listed before the replay), and the peak's reach by engine, release and GPU."""

from __future__ import annotations

from collections import Counter

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.router_cost import fp32_router_runs
from tests.benches import fp32bw63

M25 = "tests/data/sim_to_real/aiconfig_configs/MiniMaxAI--MiniMax-M2.5.json"


def test_the_reached_rows_are_the_stated_set() -> None:
    by = Counter((r["system"], r["backend_version"][:6]) for r in fp32bw63.reached_rows())
    # B200: 0.17.0 40, 0.19.0 206, nightly 53; B300: 0.19.0 94, nightly 16 (409).
    assert by == {("b200_sxm", "0.17.0"): 40, ("b200_sxm", "0.19.0"): 206,
                  ("b200_sxm", "nightl"): 53, ("b300_sxm", "0.19.0"): 94,
                  ("b300_sxm", "nightl"): 16}


def test_the_peak_reaches_vllm_before_032_on_b200_b300_only() -> None:
    spec = load_spec(M25)

    def runs(gpu: str, version: str) -> bool:
        g = get_gpu(gpu)
        eff = engine_efficiency("vllm", device_efficiency(g), version=version, spec=spec)
        return fp32_router_runs(spec, g, eff)

    assert runs("B200", "0.17.0") and runs("B200", "0.19.0") and runs("B300", "0.19.0")
    assert not runs("B200", "0.32.0")  # bf16x3 on the tensor cores (gate_linear.py:122-129)
    assert not runs("GB200", "0.19.0") and not runs("GB300", "0.19.0")  # no FP32 peak read
