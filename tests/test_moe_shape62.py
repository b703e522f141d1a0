"""The held-out evaluation of the experts' shape table (tests/benches/moe_shape62.py): its agg
sample's stratification and its override."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kvplan.hardware.gpus import GPUS
from kvplan.perf import efficiency
from tests.benches import aiconfig_agg_runs as g
from tests.benches import moe_shape62 as m
from tests.benches.moe_gemm_bench import moe_fitted


def test_agg_sample_takes_every_ninth_of_each_cell_from_the_second_round_robin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Two cells interleaved (A: vllm/h200/1024, B: sglang/b200/8192), one dense row and one
    # row the bench does not replay in A. By hand: A's MoE rows a0..a10 (cell indices 0-10),
    # kept where i % 9 == 1: a1 and a10; B's b0..b2, kept b1. Round-robin, A first (its a0
    # comes first): round 0 a1, b1; round 1 a10.
    rows = []
    for i in range(11):
        rows.append({"id": f"a{i}", "backend": "vllm", "system": "h200_sxm", "isl": "1024",
                     "model_path": "moe", "precision": "bf16"})
        if i < 3:
            rows.append({"id": f"b{i}", "backend": "sglang", "system": "b200_sxm",
                         "isl": "8192", "model_path": "moe", "precision": "bf16"})
    rows.insert(3, {"id": "dense", "backend": "vllm", "system": "h200_sxm", "isl": "1024",
                    "model_path": "dense", "precision": "bf16"})
    rows.insert(5, {"id": "refused", "backend": "vllm", "system": "h200_sxm", "isl": "1024",
                    "model_path": "moe", "precision": "bf16"})
    monkeypatch.setattr(g, "rows", lambda: tuple(rows))
    monkeypatch.setattr(g, "why_not", lambda r: "no" if r["id"] == "refused" else "")
    monkeypatch.setattr(g, "AGG_MODELS", {("moe", "bf16"): ("moe",), ("dense", "bf16"): ("d",)})
    monkeypatch.setattr(g, "_spec", lambda c: SimpleNamespace(moe=object() if c == "moe" else None))
    assert [r["id"] for r in m.agg_sample()] == ["a1", "b1", "a10"]


def test_the_modes_set_the_shape_table_on_cuda_presets_only() -> None:
    cuda = next(g for g in GPUS.values() if g.platform == "cuda")
    other = next(g for g in GPUS.values() if g.platform != "cuda")
    with moe_fitted("shape"):
        assert efficiency.device_efficiency(cuda).moe_gemm_shape is efficiency.MOE_GEMM_SHAPE
        assert efficiency.device_efficiency(other).moe_gemm_shape is None
    # The off mode ("flat", what the default was before moedefault63): the table taken off.
    with moe_fitted("flat"):
        assert efficiency.device_efficiency(cuda).moe_gemm_shape is None
        assert efficiency.device_efficiency(other).moe_gemm_shape is None
    # restored: the default since moedefault63
    assert efficiency.device_efficiency(cuda).moe_gemm_shape is efficiency.MOE_GEMM_SHAPE
