"""The one lookup of the engines' per-release tables (kvplan._util.versions.newest_at): a release
takes the newest row at or below it, as vllm_profile, in_flight_rule and mla_block_rule read."""

from hypothesis import given
from hypothesis import strategies as st

from kvplan._util.versions import newest_at, version_key
from kvplan.engines.vllm.in_flight import in_flight_rule
from kvplan.engines.vllm.profiles import vllm_profile


def test_release_between_rows_takes_the_older_row() -> None:
    # VLLM_PROFILES has rows 0.15, 0.18, 0.19 and 0.20.2: 0.17.1 is still 0.15's, 0.18.1 is
    # 0.18's, 0.20.0 and 0.20.1 are 0.19's, 0.27.1 is 0.20.2's.
    assert vllm_profile("0.17.1").version == "0.15"
    assert vllm_profile("0.18.1").version == "0.18"
    assert vllm_profile("0.20.1").version == "0.19"
    assert vllm_profile("0.27.1").version == "0.20.2"
    # VLLM_IN_FLIGHT_RULES: 0.26.0 starts reserving the tokens in flight; 0.25.1 does not.
    assert in_flight_rule("0.25.1").reserves_in_flight is False
    assert in_flight_rule("0.26.0").reserves_in_flight is True


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 9)), min_size=1, max_size=12,
                unique=True),
       st.tuples(st.integers(0, 40), st.integers(0, 9)))
def test_newest_at_is_the_greatest_since_not_above(sinces: list[tuple[int, int]],
                                                   key: tuple[int, int]) -> None:
    rows = sorted(sinces)
    got = newest_at(rows, key, lambda row: row)
    at_or_below = [row for row in rows if row <= key]
    assert got == (max(at_or_below) if at_or_below else rows[0])


def test_version_key_orders_patch_releases() -> None:
    assert version_key("0.10.1.1") > version_key("0.10.1") > version_key("0.10")
