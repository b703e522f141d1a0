"""The Mixtral TTFT paragraph's bound on a longer chunk-holding step
(tests/benches/mixtral_ttft.py), worked by hand on run 28 of the sim-to-real study
(Mixtral-8x7B, TP 2, vLLM 0.15.1, H100)."""

import pytest

from tests.benches.mixtral_ttft import chunk_step_bound_s


def test_chunk_step_bound_run28_by_hand() -> None:
    # error_records.csv, run 28: mean ITL 19.40 ms at 8/s and 20.70 ms at 20/s, mean E2E 4,806
    # and 5,121 ms; kvplan 19.04 and 20.76 ms. Errors e0 = +0.36 ms, e1 = -0.06 ms; shares of
    # chunk-holding steps f = rate x ITL = 0.1552 and 0.414; running b = rate x E2E = 38.4 and
    # 102.4. KV floor: Mixtral-8x7B (config.json: 32 layers, 8 KV heads of 128) at TP 2 holds
    # 32 x 4 x 128 x 2 (K, V) x 2 bytes = 65,536 bytes a token on a GPU; at the mean context
    # 100 + 447 + 124 = 671 tokens, 43,974,656 bytes, 13.13 us at 3.35 TB/s. kvplan's decode
    # step grows 17.2 us per running request there. dX <= (-0.42 ms + 4.07 us x 64)
    # / 0.2588 = (-0.42 + 0.2605) / 0.2588 ms = -0.616 ms.
    floor = 671 * 65_536 / 3.35e12
    assert floor == pytest.approx(13.13e-6, abs=0.01e-6)
    bound = chunk_step_bound_s(itl_err_s=(0.36e-3, -0.06e-3),
                               chunk_share=(8 * 0.0194, 20 * 0.0207),
                               running=(8 * 4.806, 20 * 5.121), growth_s=17.2e-6,
                               kv_floor_s=floor)
    assert bound == pytest.approx(-0.616e-3, abs=0.002e-3)


def test_chunk_step_bound_grows_with_the_slack() -> None:
    # No slack between kvplan's growth and the floor: the bound is the ITL errors' own slope,
    # (e1 - e0) / (f1 - f0) = 0.26 ms / 0.26 = 1 ms.
    bound = chunk_step_bound_s(itl_err_s=(0.0, 0.26e-3), chunk_share=(0.1, 0.36),
                               running=(10, 50), growth_s=5e-6, kv_floor_s=5e-6)
    assert bound == pytest.approx(1e-3)
