"""The vllm200u63 forensic's arithmetic (tests/benches/vllm200u63.py), by hand."""

from __future__ import annotations

import pytest

from kvplan.engines.vllm.sampler import SamplingParams, VllmSampler
from tests.benches import vllm200u63 as v

QWEN3 = VllmSampler(params=SamplingParams(temperature=0.6, top_p=0.95, top_k=20),
                    version="0.15.0")


def test_gap_by_hand() -> None:
    # Qwen3-8B's April rows: measured 3.65 / 10.08 ms, kvplan 3.65 / 5.22 ms. At 200 kvplan
    # misses 10.08 - 5.22 = 4.86 ms, at 10 it misses 0: 4.86 ms a step over the 190 requests
    # added, 4.86e3 / 190 = 25.58 us a request.
    g = v.Gap("x", 3.65, 10.08, 3.65, 5.22)
    assert g.missing_ms == pytest.approx(4.86)
    assert g.per_request_us == pytest.approx(25.579, abs=1e-3)
    # A miss at 10 too (kvplan 0.5 ms slow there) is taken off: (10 - 5) - (4 - 4.5) = 5.5.
    assert v.Gap("y", 4.0, 10.0, 4.5, 5.0).missing_ms == pytest.approx(5.5)


def test_mask_bytes_by_hand() -> None:
    # From 128 rows (CUB's segmented sort): the index fill 8 + 6 passes of 28 = 176; top-k's
    # compare 5 and masked_fill_ 9 = 14; top-p's softmax 16, cumsum 8, compare 5, masked_fill_
    # 9, the scatter's clone 8 and scatter 16 = 62. 176 + 14 + 62 = 252 bytes an element.
    assert v.mask_bytes_per_element(QWEN3, 200, 151936) == 252
    # Up to 127 rows the full sort: 8 + 4 + 4 x 24 + 8 + 16 + 24 = 156, + 14 + 62 = 232.
    assert v.mask_bytes_per_element(QWEN3, 64, 131072) == 232


def test_mask_price_by_hand() -> None:
    # 200 x 151,936 x 252 B = 7.6574 GB at H100's 3.35 TB/s x 0.9 (kvplan's hbm efficiency):
    # 2.540 ms (every pass far above the 4 us floor).
    assert v.mask_price_s(QWEN3, 200, 151936, "H100-80GB") == pytest.approx(
        200 * 151936 * 252 / (3.35e12 * 0.9), rel=1e-9)


def test_logits_gather_by_hand() -> None:
    # 200 rows x 151,936 (a multiple of 64) x 2 B = 60.77 MB; 7/8 of it over H100's NVLink
    # preset, 360 GB/s, after 10 us: 10 + 147.7 = 157.7 us.
    assert v.logits_gather_s(151936, 200, 8, "H100-80GB") == pytest.approx(
        10e-6 + 7 / 8 * 200 * 151936 * 2 / 360e9, rel=1e-9)


def test_implied_factor_by_hand() -> None:
    # 1.84 ms left over a 2.54 ms price: 1 + 1.84 / 2.54 = 1.7244.
    assert v.implied_factor(1.84, 2.54) == pytest.approx(1.72441, abs=1e-5)
