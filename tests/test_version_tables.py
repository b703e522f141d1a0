"""The one lookup of the engines' per-release tables (kvplan._util.versions.newest_at): a release
takes the newest row at or below it, as vllm_profile, in_flight_rule and mla_block_rule read."""

from hypothesis import given
from hypothesis import strategies as st

from kvplan._util.versions import newest_at, version_key
from kvplan.engines.vllm.alloc import vllm_profile
from kvplan.engines.vllm.in_flight import in_flight_rule


def test_release_between_rows_takes_the_older_row() -> None:
    # VLLM_PROFILES has rows 0.14, 0.19 and 0.21: 0.18.1 is still 0.14's, 0.20.2 is 0.19's.
    assert vllm_profile("0.18.1").version == "0.14"
    assert vllm_profile("0.20.2").version == "0.19"
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
