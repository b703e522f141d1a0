"""The nightly builds of aiconfigurator's aggregated rows (tests.benches.aiconfig_nightly,
issue 30): each build in the table carries its evidence, every non-release row is either placed
on a release line or refused with one line saying why, and a placed row is kept only where the
releases its code may hold agree."""

from __future__ import annotations

import collections
from dataclasses import replace

import pytest

from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_nightly as nightly
from tests.benches.disagg_rows import Replay


def _non_release() -> list[dict[str, str]]:
    return [r for r in agg.rows() if agg.release(r) is None]


def test_table_entries_carry_their_evidence() -> None:
    nightly.check()
    for build in nightly.NIGHTLIES.values():
        assert build.evidence.strip()
        assert bool(build.candidates) == bool(build.simulated_as)
    assert all(why.strip() for why in nightly.NO_COMMIT.values())


def test_check_catches_an_entry_its_evidence_does_not_name() -> None:
    # The vLLM entry's version string (…+g5b8c30d62) does not name another commit.
    wrong = replace(nightly.NIGHTLIES["5b8c30d6"], commit="5b8c30d7" + "0" * 32,
                    image="vllm/vllm-openai:nightly-5b8c30d7" + "0" * 32)
    saved = dict(nightly.NIGHTLIES)
    try:
        nightly.NIGHTLIES["5b8c30d6"] = wrong
        with pytest.raises(AssertionError):
            nightly.check()
        # A simulated-as release that is not a candidate.
        nightly.NIGHTLIES["5b8c30d6"] = replace(saved["5b8c30d6"], simulated_as="0.20.2")
        with pytest.raises(AssertionError):
            nightly.check()
    finally:
        nightly.NIGHTLIES.clear()
        nightly.NIGHTLIES.update(saved)


def test_commit_of_reads_the_tag_then_the_image() -> None:
    def row(version: str, source: str) -> dict[str, str]:
        return {"backend": "sglang", "backend_version": version, "silicon_data_source": source}
    assert nightly.commit_of(row("nightly-5b8c30d62b754b57", "")) == "5b8c30d62b754b57"
    assert nightly.commit_of(row("nightly-dev-20260402-d7256eb6", "x; lmsysorg/sglang:"
                                 "nightly-dev-20260402-d7256eb6")) == "d7256eb6"
    # The moving tag: the commit of the image the row names.
    assert nightly.commit_of(row("nightly-dev", "measured=2026-03-20; wip=False; image=lmsysorg/"
                                 "sglang:nightly-dev-cu13-20260317-1eea7448")) == "1eea7448"
    assert nightly.commit_of(row("glm5-hopper", "image=lmsysorg/sglang:glm5-hopper")) is None
    assert nightly.commit_of(row("nightly-dev", "aic_database_mode=SILICON")) is None


def test_every_non_release_row_is_placed_or_says_why() -> None:
    rows = _non_release()
    # 279: vLLM's nightly 69, SGLang's 158, TensorRT-LLM's gpt-oss-dev 52.
    assert len(rows) == 279
    for r in rows:
        commit = nightly.commit_of(r)
        if commit is None:
            assert r["backend_version"] in nightly.NO_COMMIT, r["id"]
        else:
            assert nightly.nightly_of(r) is not None, (r["id"], commit)  # no unlisted build
    whys = collections.Counter(nightly.why_not(r) for r in rows)
    # Placed: the 69 rows of vLLM's 5b8c30d6; the SGLang builds and the tags without a commit
    # are refused, one line each.
    assert whys[""] == 69
    assert sum(n for why, n in whys.items() if why.startswith("sglang nightly ")) == 113
    assert sum(n for why, n in whys.items() if why.startswith("release ")) == 97


def test_refused_tags_give_their_line() -> None:
    rows = _non_release()
    hopper = next(r for r in rows if r["backend_version"] == "glm5-hopper")
    assert agg.why_not(hopper) == f"release 'glm5-hopper': {nightly.NO_COMMIT['glm5-hopper']}"
    bare = next(r for r in rows if r["backend_version"] == "nightly-dev"
                and nightly.image_of(r) is None)
    assert agg.why_not(bare) == f"release 'nightly-dev': {nightly.NO_COMMIT['nightly-dev']}"
    moving = next(r for r in rows if r["backend_version"] == "nightly-dev"
                  and "1eea7448" in r["silicon_data_source"])
    why = agg.why_not(moving)
    assert why.startswith("sglang nightly 1eea7448 (lmsysorg/sglang:nightly-dev-cu13-20260317-"
                          "1eea7448): ")
    assert "no public record prints this build's version" in why


def _row() -> dict[str, str]:
    # The cheapest placed row (3 x concurrency x OSL decode tokens).
    placed = [r for r in _non_release() if not agg.why_not(r)]
    return min(placed, key=lambda r: (agg.stated_concurrency(r) or 0) * int(r["osl"]))


def test_releases_that_disagree_refuse_the_row() -> None:
    row = _row()

    def at(r: dict[str, str], version: str) -> Replay:
        # Made-up replays: 0.19.0 and 0.19.1 give a TTFT of 2 ms, the 0.18 releases 1 ms.
        return Replay(id=r["id"], label=agg.label(r), measured_ttft_ms=1.0,
                      measured_tpot_ms=1.0, concurrency=1, input_len=1, output_len=2,
                      ttft_ms=2.0 if version.startswith("0.19") else 1.0, tpot_ms=1.0)
    out = nightly.replay(row, at)
    assert not out.replayed and out.cohort == nightly.COHORT
    assert out.why_not == ("vllm nightly 5b8c30d6: kvplan's 0.18.0 and 0.19.0 rules give this "
                           "row different replays; the commit's side of that change is not "
                           "decidable here")

    def same(r: dict[str, str], version: str) -> Replay:
        return replace(at(r, "0.18.0"), label=agg.label(r))
    kept = nightly.replay(row, same)
    assert kept.replayed and kept.ttft_ms == 1.0 and kept.cohort == nightly.COHORT
    assert "nightly-5b8c30d62b754b57 (as 0.19.0)," in kept.label


def test_placed_row_replays_at_its_candidates() -> None:
    # The real replay of the cheapest placed row: kvplan's four candidate releases agree on it
    # (the pool differs: 0.19's non-torch memory fit; it binds at none of these loads).
    row = _row()
    out = agg.replay(row)
    assert out.replayed, out.why_not
    assert out.cohort == nightly.COHORT and "(as 0.19.0)" in out.label
    each = {agg.replay_at(row, v).ttft_ms for v in nightly.NIGHTLIES["5b8c30d6"].candidates}
    assert each == {out.ttft_ms}
