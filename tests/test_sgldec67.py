"""tests.benches.sgldec67: which InferenceX config each B200 FP8 DeepSeek-R1 row ran."""

from __future__ import annotations

from collections import Counter

from tests.benches import sgldec67


def test_label_by_the_two_configs_spaces() -> None:
    """Both configs ran 1,024 / 1,024 TP 8 C 16: the lower TPOT of the pair is MTP; only the MTP
    config ran C 128 there, only the plain one 8,192 / 1,024 TP 4; TP 2 is neither's."""
    pair = [13.18, 11.71]
    assert sgldec67.label((1024, 1024, 8, 16), pair, 11.71).startswith("MTP")
    assert sgldec67.label((1024, 1024, 8, 16), pair, 13.18).startswith("plain")
    assert sgldec67.label((1024, 1024, 8, 16), [13.18], 13.18).startswith("?")
    assert sgldec67.label((1024, 1024, 8, 128), [28.68], 28.68).startswith("MTP")
    assert sgldec67.label((8192, 1024, 4, 8), [15.26], 15.26).startswith("plain")
    assert sgldec67.label((1024, 1024, 2, 4), [9.0], 9.0).startswith("?")


def test_runs_split() -> None:
    """The 38 rows of 2026-03-25: 23 MTP, 14 plain, row 250 unpaired in its file."""
    split = Counter(lab.split()[0] for _, lab in sgldec67.runs())
    assert split == Counter({"MTP": 23, "plain": 14, "?": 1})
