"""The aggregated rows (tests.benches.aiconfig_agg_runs) whose backend_version is not a release
(issue 30, nightly55): which engine build each ran, and which release's rules kvplan may
simulate it with.

A nightly image is built from one commit of the engine's main branch. kvplan selects its rules
by release (--engine-version), so a nightly row is replayed only where the release line of its
commit is known from a public record and every release kvplan reads on that line gives the row
the same replay: then no version-gated rule kvplan applies to the row can fall on the wrong side
of the commit. Where kvplan's releases disagree on a row, the row is refused naming them (which
side of that rule's change the commit is on is not decidable here); a build whose release line
no record gives is refused with what is known of it. Never a guess from the image's date alone:
SGLang's nightlies (sglnightly62) are placed by their build date against the releases' PyPI
publication and the contents of their sdists (tests.benches.aiconfig_sglang_nightly).

The engines' repositories could not be read with git here (vllm-project/vllm 1.12 GB and
sgl-project/sglang 1.22 GB snapshots, over the 500 MB fetch limit), so the evidence is the
build's own version string where a public record prints it (setuptools-scm's `git describe`
form, `X.Y.ZrcN.devM+gHASH`: M commits past the nearest tag reachable from the commit).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from kvplan._util.versions import version_key
from tests.benches import aiconfig_sglang_nightly as sglang_dates
from tests.benches.disagg_rows import Replay

COHORT = "nightly55"  # the session that first replayed these rows


@dataclass(frozen=True, kw_only=True)
class Nightly:
    """One engine build named by a commit: the releases kvplan reads whose rules its code may
    hold (`candidates`, oldest first; () where no record places it), the release line it is
    simulated as, and the evidence (or, with no candidates, why it is refused)."""

    engine: str
    commit: str  # as long as the image tag spells it
    image: str
    evidence: str
    candidates: tuple[str, ...] = ()
    simulated_as: str = ""  # the release whose line holds the code ("" where refused)
    cohort: str = COHORT  # the session that first replayed its rows
    inside: str = ""  # the rules kvplan gates inside its bracket, named in a refusal


# vLLM tags main with vX.Y.1rc0 where the X.Y.0 release branch is cut (its nightlies print
# X.Y.1rc1.devN after the cut; public build notes quote 0.18.1rc1.dev20 for a Dockerfile pinned
# to b3e846017 and 0.19.1rc1.dev46+gc5e3454e5, none 0.19.0rc1.devN), so a nightly's describe
# names the release branch cut it follows and, the next cut's tag being nearer when reachable
# (main is linear), the one it precedes.
_VLLM_5B8C = Nightly(
    engine="vllm", commit="5b8c30d62b754b575e043ce2fc0dcbf8a64f6306",
    image="vllm/vllm-openai:nightly-5b8c30d62b754b575e043ce2fc0dcbf8a64f6306",
    evidence=(
        "a deployment built from this image prints vLLM 0.18.1rc1.dev220+g5b8c30d62 "
        "(github.com/JimChen-g/cofounder-os README, 3.1): 220 commits of main past tag "
        "v0.18.1rc0 (the 0.18 release branch cut) and not past v0.19.1rc0 (the 0.19 cut), so "
        "its code holds 0.18.0's and is held by 0.19.0's; kvplan's 0.18.0, 0.18.1, 0.19.0 and "
        "0.19.1 rules must agree on the row (the 0.19 rules kvplan gates on: the non-torch "
        "memory fit of 0.19.0 logs, budget.py VLLM_NON_TORCH_GIB; the MLA block rule, "
        "block_size.py; profiles.py _V0_19)"),
    candidates=("0.18.0", "0.18.1", "0.19.0", "0.19.1"), simulated_as="0.19.0")

_SGLANG_REPO = ("sgl-project/sglang's history is not readable here (its 1.22 GB snapshot is "
                "over the fetch limit) and no public record prints this build's version")


def _sglang(commit: str, image: str, note: str = "") -> Nightly:
    """An SGLang nightly lmsysorg/sglang:nightly-dev[-cu13]-YYYYMMDD-<commit>, built from main
    on that date, placed between releases by tests.benches.aiconfig_sglang_nightly (sglnightly62):
    replayed at each release of its bracket, simulated as the oldest; refused where no release
    is shown to hold main of that date."""
    day = re.search(r"-(\d{4})(\d\d)(\d\d)-", image)
    assert day is not None, image
    found, why = sglang_dates.candidates("-".join(day.groups()))
    if not found:
        return Nightly(engine="sglang", commit=commit, image=image, evidence=_SGLANG_REPO + note)
    return Nightly(engine="sglang", commit=commit, image=image, evidence=why + note,
                   candidates=found, simulated_as=found[0], cohort=sglang_dates.COHORT,
                   inside=sglang_dates.inside(found))


# SGLang images lmsysorg/sglang:nightly-dev[-cu13]-YYYYMMDD-<8 hex>: built from that commit of
# main (`_sglang`). a27651d5's rows (GLM-5 NVFP4) are not sized (aiconfig_agg_runs.NOT_SIZED).
NIGHTLIES: dict[str, Nightly] = {n.commit[:8]: n for n in (
    _VLLM_5B8C,
    _sglang("d3bae71e", "lmsysorg/sglang:nightly-dev-20260216-d3bae71e"),
    _sglang("1eea7448", "lmsysorg/sglang:nightly-dev-cu13-20260317-1eea7448"),
    _sglang("a27651d5", "lmsysorg/sglang:nightly-dev-cu13-20260328-a27651d5"),
    _sglang("b6fe0cca", "lmsysorg/sglang:nightly-dev-cu13-20260401-b6fe0cca",
            " (a commit of main: SGLang CI's scheduled run at b6fe0cca9901, 2026-04-01 00:34 "
            "UTC)"),
    _sglang("d7256eb6", "lmsysorg/sglang:nightly-dev-20260402-d7256eb6",
            " (a commit of main, d7256eb69, sglang PR #21667, 2026-04-01 17:12 -0700)"),
)}

# Tags that name no commit, and rows whose silicon_data_source names no image with one: why
# each stays refused.
NO_COMMIT: dict[str, str] = {
    "glm5-hopper": (
        "image lmsysorg/sglang:glm5-hopper: a model-specific image (GLM-5's deployment guide: "
        "'For Hopper GPU'), no commit or version in its tag or the row, and no public record "
        "maps it to one"),
    "gpt-oss-dev": (
        "image nvcr.io/nvidia/tensorrt-llm/release:gpt-oss-dev: gpt-oss's day-0 image, built "
        "on TensorRT-LLM's pre-day-0 dev branch (its GPT-OSS deployment guide), no commit or "
        "version in its tag or the row"),
    "nightly-dev": (
        "moving tag nightly-dev with no image named in the row (silicon_data_source: "
        "aic_database_mode=SILICON only): no commit or build date to place it"),
}

_IMAGE = re.compile(r"(?:image=)?((?:nvcr\.io[/#]\S+|lmsysorg/sglang|vllm/vllm-openai):[^;\s]+)")
_COMMIT = re.compile(r"nightly-(?:dev-(?:cu\d+-)?\d{8}-)?([0-9a-f]{8,40})$")


def image_of(row: dict[str, str]) -> str | None:
    """The image the row's silicon_data_source names (`image=X`, or X alone at its end)."""
    found = _IMAGE.search(row["silicon_data_source"])
    return found.group(1) if found else None


def commit_of(row: dict[str, str]) -> str | None:
    """The commit the row's build is named by: its backend_version's hex tail, else its image
    tag's (a moving `nightly-dev` row names its image)."""
    for text in (row["backend_version"].strip(), (image_of(row) or "").rsplit(":", 1)[-1]):
        found = _COMMIT.search(text)
        if found:
            return found.group(1)
    return None


def nightly_of(row: dict[str, str]) -> Nightly | None:
    """The row's build where its commit is in NIGHTLIES (None: no commit, or not listed)."""
    commit = commit_of(row)
    return None if commit is None else NIGHTLIES.get(commit[:8])


def why_not(row: dict[str, str]) -> str:
    """Why a non-release row is not replayed at a release kvplan reads ("" where its build is
    placed on a release line, `candidates`)."""
    build = nightly_of(row)
    tag = row["backend_version"].strip()
    if build is None:
        commit = commit_of(row)
        if commit is not None:
            return f"{row['backend']} build {commit}: not placed on a release line"
        return f"release {tag!r}: {NO_COMMIT.get(tag, 'no commit or image in the row')}"
    if not build.candidates:
        return f"{build.engine} nightly {build.commit} ({build.image}): {build.evidence}"
    return ""


def replay(row: dict[str, str], at: Callable[[dict[str, str], str], Replay]) -> Replay:
    """The row replayed (`at(row, release)`) at every release kvplan reads that its build's
    code may hold: their common replay, labelled with the release line it is simulated as, or
    a refusal naming two releases whose rules disagree on the row."""
    build = nightly_of(row)
    assert build is not None and build.candidates  # why_not(row) == ""
    every = [(v, at(row, v)) for v in build.candidates]
    # sglnightly62 (written after the cohort's first evaluation): the row was measured on the
    # build, so the build serves its architecture; a candidate kvplan refuses for not serving
    # it yet (kvplan.engines.arrivals.refuse_unregistered) is older than the build's code.
    done = [(v, r) for v, r in every if not _NOT_YET_SERVED.search(r.why_not)] or every
    first = done[0][1]
    apart = [v for v, r in done[1:]
             if (r.ttft_ms, r.tpot_ms, r.why_not) != (first.ttft_ms, first.tpot_ms, first.why_not)]
    if apart:
        return replace(first, cohort=build.cohort, ttft_ms=None, tpot_ms=None, why_not=(
            f"{build.engine} nightly {build.commit[:8]}: kvplan's {done[0][0]} and "
            f"{apart[0]} rules give this row different replays; the commit's side of that "
            "change is not decidable here"
            + (f" (the rules kvplan gates inside: {build.inside})" if build.inside else "")))
    simulated = build.simulated_as if len(done) == len(every) else done[0][0]
    return replace(first, cohort=build.cohort, label=first.label.replace(
        row["backend_version"], f"{row['backend_version']} (as {simulated})", 1))


# kvplan's refusal of an architecture a release does not serve yet (arrivals.py
# refuse_unregistered: "<engine> serves <name> from <release>: --engine-version <release> or
# newer").
_NOT_YET_SERVED = re.compile(r"^kvplan refuses: .* serves \S+ from (\S+): --engine-version "
                             r"\1 or newer")


def check() -> None:
    """Each build's table entry against its evidence: the image names the commit; a placed
    build quotes a version string whose +g hash starts its commit, its candidates are in
    release order and the release it is simulated as is one of them. AssertionError if not."""
    for build in NIGHTLIES.values():
        assert build.evidence and build.commit[:8] in build.image, build.commit
        if not build.candidates:
            assert not build.simulated_as, build.commit
            continue
        assert build.simulated_as in build.candidates, build.commit
        keys = [version_key(v) for v in build.candidates]
        assert keys == sorted(keys) and len(set(build.candidates)) == len(keys), build.commit
        if build.engine == "sglang":  # placed by dates (aiconfig_sglang_nightly)
            day = re.search(r"-(\d{4})(\d\d)(\d\d)-", build.image)
            assert day is not None, build.commit
            assert sglang_dates.candidates("-".join(day.groups()))[0] == build.candidates, (
                build.commit)
            continue
        described = re.search(r"\d+\.\d+\.\d+rc\d+\.dev\d+\+g([0-9a-f]+)", build.evidence)
        assert described is not None and build.commit.startswith(described.group(1)), (
            build.commit)


# The cohort's one evaluation (nightly55, 2026-12-05), before any rule or constant was changed
# after seeing it; read after it, no rule or constant changed.
FINDING = (
    "Cohort nightly55 (first replayed at stop 55: nightly images): the 279 frozen rows whose "
    "backend_version is not a release, placed by the commit their image names "
    "(tests/benches/aiconfig_nightly.py: the build, its evidence and the releases it may "
    "take the rules of). vLLM's nightly 5b8c30d6 (vllm/vllm-openai:nightly-5b8c30d6..., 69 "
    "rows, MiniMax-M2.5) prints 0.18.1rc1.dev220+g5b8c30d62 in a public build record: past "
    "the 0.18 release branch cut and before the 0.19 one, so its rows are replayed at kvplan's "
    "0.18.0, 0.18.1, 0.19.0 and 0.19.1 rules and kept only where all four agree (they did on "
    "all 62 within the bench's CPU bound; the pool differs, 0.19's non-torch memory fit, but "
    "binds on none). The SGLang builds (lmsysorg/sglang nightly-dev images of commits "
    "d3bae71e, 1eea7448, a27651d5, b6fe0cca, d7256eb6; 113 rows, 86 of them under the moving "
    "tag nightly-dev, their image in silicon_data_source) stay refused: no release line is "
    "known for them (sgl-project/sglang's history was not readable here and no public record "
    "prints their versions). Refused with no commit: glm5-hopper (30), TensorRT-LLM's "
    "gpt-oss-dev (52) and the 15 nightly-dev rows naming no image. The cohort's one "
    "evaluation, before any change: 62 replayed (39 distinct measurements: 23 stated twice "
    "under two ids in aiconfigurator's file), all held out; TTFT inside 10, TPOT inside "
    "62, both 10; median |TTFT err| 43.7 %, |TPOT err| 12.5 %; median ratios 0.56 / 1.10 "
    "(B200 NVFP4, 46 rows: 0.55 / 1.08; B300 FP8, 16 rows: 0.71 / 1.14). Read after it (no "
    "rule or constant changed): TPOT is inside on every row, as on most release rows; TTFT "
    "comes out low as on the release rows' vLLM replays (the earlier cohorts' vLLM TTFT "
    "medians 0.69 and 0.72), lower still here. The placed rows were counted frozen in their "
    "checkpoint's cohort before (MiniMax-M2.5 NVFP4: 46 of aggmore54's 520; FP8: 16 of "
    "aggmeas54's); they are this cohort's now.")
