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
from tests.benches import aiconfig_sglang_nightly as sglang_dates
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
    # Placed: the 69 rows of vLLM's 5b8c30d6 and, since sglnightly62, the 113 of SGLang's
    # builds (d3bae71e 45, 1eea7448 36, a27651d5 10, b6fe0cca 10, d7256eb6 12); the tags
    # without a commit are refused, one line each.
    assert whys[""] == 69 + 113
    assert sum(n for why, n in whys.items() if why.startswith("sglang nightly ")) == 0
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
    # The moving tag's build, placed by its image's date (sglnightly62).
    assert agg.why_not(moving) == "" and nightly.nightly_of(moving) == nightly.NIGHTLIES["1eea7448"]


def _row(backend: str = "vllm") -> dict[str, str]:
    # The cheapest placed row of `backend` (3 x concurrency x OSL decode tokens).
    placed = [r for r in _non_release() if not agg.why_not(r) and r["backend"] == backend]
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


def test_sglang_builds_take_the_bracket_of_their_date() -> None:
    # Hand-worked from the tables (aiconfig_sglang_nightly): PyPI published 0.5.8.post1 on
    # 2026-02-05 and 0.5.9 on 2026-02-23; 0.5.10's sdist holds main through 2026-04-03;
    # 0.5.10rc0 holds every 0.5.10 gate kvplan applies from main of 2026-03-31 on.
    when = sglang_dates.candidates
    assert when("2026-02-16")[0] == ("0.5.8.post1", "0.5.9", "0.5.10")
    assert when("2026-03-17")[0] == ("0.5.9", "0.5.10")
    assert when("2026-03-30")[0] == ("0.5.9", "0.5.10")  # before #21660's FP32 GLM router
    assert when("2026-03-31")[0] == ("0.5.10",)
    assert when("2026-04-02")[0] == ("0.5.10",)
    # After 2026-04-03 no release kvplan reads is shown to hold main: refused.
    assert when("2026-04-04") == ((), "")
    # Before 0.5.8's publication (the first release in the table): refused.
    assert when("2026-01-20") == ((), "")
    placed = {k: b.candidates for k, b in nightly.NIGHTLIES.items() if b.engine == "sglang"}
    assert placed == {"d3bae71e": ("0.5.8.post1", "0.5.9", "0.5.10"),
                      "1eea7448": ("0.5.9", "0.5.10"), "a27651d5": ("0.5.9", "0.5.10"),
                      "b6fe0cca": ("0.5.10",), "d7256eb6": ("0.5.10",)}
    assert nightly.NIGHTLIES["1eea7448"].simulated_as == "0.5.9"
    sglang_dates.check()


def test_sglang_date_check_catches_a_release_said_to_hold_later_main() -> None:
    saved = dict(sglang_dates.HOLDS)
    try:
        # 0.5.10 was published on 2026-04-05: it cannot hold main of 2026-04-06.
        sglang_dates.HOLDS["0.5.10"] = ("2026-04-06", "")
        with pytest.raises(AssertionError):
            sglang_dates.check()
    finally:
        sglang_dates.HOLDS.clear()
        sglang_dates.HOLDS.update(saved)


def test_sglang_refusal_names_the_rules_inside() -> None:
    row = _row("sglang")
    build = nightly.nightly_of(row)
    assert build is not None and len(build.candidates) > 1

    def at(r: dict[str, str], version: str) -> Replay:
        # Made-up replays: the bracket's last release apart from the others.
        return Replay(id=r["id"], label=agg.label(r), measured_ttft_ms=1.0,
                      measured_tpot_ms=1.0, concurrency=1, input_len=1, output_len=2,
                      ttft_ms=2.0 if version == build.candidates[-1] else 1.0, tpot_ms=1.0)
    out = nightly.replay(row, at)
    assert not out.replayed and out.cohort == sglang_dates.COHORT
    assert f"kvplan's {build.candidates[0]} and {build.candidates[-1]} rules" in out.why_not
    assert "piecewise prefill CUDA graphs on by default" in out.why_not


def test_a_candidate_that_does_not_serve_the_model_is_dropped() -> None:
    # The row was measured on the build, so the build serves its architecture: a release
    # kvplan refuses for not serving it yet is older than the build's code (sglnightly62).
    row = _row("sglang")
    build = nightly.nightly_of(row)
    assert build is not None and len(build.candidates) > 1
    oldest, kept = build.candidates[0], build.candidates[1]

    def at(r: dict[str, str], version: str) -> Replay:
        why = (f"kvplan refuses: x.json: architectures: SGLang {version} has no model class for "
               f"Foo; SGLang serves Foo from {kept}: --engine-version {kept} or newer"
               if version == oldest else "")
        return Replay(id=r["id"], label=agg.label(r), measured_ttft_ms=1.0,
                      measured_tpot_ms=1.0, concurrency=1, input_len=1, output_len=2,
                      ttft_ms=None if why else 1.0, tpot_ms=None if why else 1.0, why_not=why)
    out = nightly.replay(row, at)
    assert out.replayed and f"(as {kept})," in out.label
    # Any other refusal at the oldest candidate still sets the releases apart.

    def other(r: dict[str, str], version: str) -> Replay:
        base = at(r, kept)
        return replace(base, ttft_ms=None, tpot_ms=None, why_not="kvplan refuses: something else"
                       ) if version == oldest else base
    assert not nightly.replay(row, other).replayed
