"""marlinrow66: the aggregated bench replays InferenceX's Hopper gpt-oss-120b vLLM 0.18.0 rows
with the MXFP4 MoE kernel their scripts export (VLLM_MXFP4_USE_MARLIN=1:
tests.benches.aiconfig_agg_env), and no other row with it."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.benches import aiconfig_agg_env as env
from tests.benches import aiconfig_agg_runs as agg


def _rows(system: str, version: str, backend: str = "vllm") -> list[dict[str, str]]:
    return [r for r in agg.rows() if r["model_path"] == env.MODEL and r["system"] == system
            and r["backend_version"] == version and r["backend"] == backend]


def test_hopper_018_rows_run_marlin() -> None:
    # gptoss_fp4_h100.sh:28 / gptoss_fp4_h200.sh:47 at InferenceX cec542a9a (image v0.18.0).
    for system in ("h100_sxm", "h200_sxm"):
        rows = _rows(system, "0.18.0")
        assert len(rows) > 50  # 58 H100, 66 H200 in the frozen table, replayed or not
        assert {env.mxfp4_backend(r) for r in rows} == {"marlin"}


def test_other_rows_keep_the_default() -> None:
    # H100 vLLM 0.11.2 (scripts at 4e135fd3f export nothing), B200 0.15.1 (FlashInfer's
    # kernels), and every other model / engine: no override.
    assert {env.mxfp4_backend(r) for r in _rows("h100_sxm", "0.11.2")} == {None}
    assert {env.mxfp4_backend(r) for r in _rows("b200_sxm", "0.15.1")} == {None}
    got = Counter(env.mxfp4_backend(r) for r in agg.rows())
    hopper = sum(len(_rows(s, "0.18.0")) for s in ("h100_sxm", "h200_sxm"))
    assert got["marlin"] == hopper
    assert got[None] == len(agg.rows()) - hopper


def captured_inputs(row: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """The keywords row_setup hands estimate_inputs for the row (stopped there; also
    test_aiconfig_agg_scripts')."""
    seen: dict[str, object] = {}

    class Stop(Exception):
        pass

    def fake(spec: object, **kw: object) -> None:
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(agg, "estimate_inputs", fake)
    agg._setup.cache_clear()
    try:
        with pytest.raises(Stop):
            agg.row_setup(row, agg.release(row) or "")
    finally:
        agg._setup.cache_clear()
    return seen


def test_row_setup_passes_the_scripts_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    assert agg.SCRIPT_ENV is True  # on for the page
    hopper = _rows("h200_sxm", "0.18.0")[0]
    assert captured_inputs(hopper, monkeypatch)["mxfp4_backend"] == "marlin"
    assert "mxfp4_backend" not in captured_inputs(_rows("b200_sxm", "0.15.1")[0], monkeypatch)
    monkeypatch.setattr(agg, "SCRIPT_ENV", False)  # the bench before marlinrow66
    assert "mxfp4_backend" not in captured_inputs(hopper, monkeypatch)


def test_kvplan_defaults_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    # gptosshopper62's `frozen` arm and tpslope66's default replay: Triton inside, Marlin after.
    hopper = _rows("h100_sxm", "0.18.0")[0]
    with env.kvplan_defaults():
        assert "mxfp4_backend" not in captured_inputs(hopper, monkeypatch)
    assert agg.SCRIPT_ENV is True
    assert captured_inputs(hopper, monkeypatch)["mxfp4_backend"] == "marlin"
