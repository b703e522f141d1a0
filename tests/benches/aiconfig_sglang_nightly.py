"""Where SGLang's nightly images of aiconfigurator's aggregated rows lie between releases (issue
30, sglnightly62): the rule that places a nightly built from main on date D, and its evidence.

No public record prints these builds' versions, and sgl-project/sglang's history (a 1.22 GB
snapshot) is over the fetch limit, so a build is placed by dates and by release contents:

- Below: the newest release kvplan reads (kvplan.engines.sglang arrivals.json) that PyPI
  published before D. SGLang cuts each release from main (a release branch takes cherry-picks of
  main commits: "Cherry-pick of commit <main sha> to release/v0.5.14", sgl-project/sglang PR
  #29221), so a release published before D holds no code that main did not have at D.
- Above: the oldest release kvplan reads whose published files hold main's code of D, shown by
  features main merged after D being in the release's sdist (`HOLDS`). A release published
  after D is not enough: its branch may have been cut before D.
- A pre-release published before D whose sdist already holds every kvplan rule gated at the
  next release (`RC_HOLDS`) lifts the lower bound to that release: the rules kvplan applies are
  then the same on both sides.

The build is replayed at every release kvplan reads between the two bounds (`candidates`) and
kept only where they agree (tests.benches.aiconfig_nightly.replay); a disagreement refuses the
row naming the rules kvplan gates inside the bracket (`INSIDE`).

Run: python -m tests.benches.aiconfig_agg_parts --sglnightly (the cohort's lines of
examples/simulate-bench.md; 75 s of CPU, 4.5 minutes wall on the loaded shared 2-core host at
sglnightly62, for the 103 rows' one to three replays each).
"""

from __future__ import annotations

from kvplan._util.versions import release_post_key
from kvplan.engines.sglang import architectures

COHORT = "sglnightly62"  # the session that first replayed these rows

# PyPI's upload time of each release's first file (https://pypi.org/pypi/sglang/json, read
# 2026-12-06), the releases around the nightlies' dates.
PUBLISHED = {
    "0.5.8": "2026-01-23", "0.5.8.post1": "2026-02-05", "0.5.9": "2026-02-23",
    "0.5.10rc0": "2026-03-27", "0.5.10": "2026-04-05", "0.5.10.post1": "2026-04-08",
}

# Release -> (the newest main date its sdist is shown to hold, the evidence). 0.5.10's sdist
# (PyPI, sglang-0.5.10.tar.gz) holds three features merged on main on 2026-04-02/03 (their
# commits and dates in SGLang's CI regression report of the window cffc95edf..990c7590b):
# PR #16711's --stream-response-default-include-usage (de9859073, 2026-04-03 21:36 -0700;
# server_args.py), PR #19163's transformers backend rework (34ddf135f, 2026-04-02 16:02 -0700;
# models/transformers.py 1,632 lines, 289 in 0.5.10rc0) and PR #21342's EngineScoreMixin
# (90e86800f, 2026-04-03; entrypoints/engine_score_mixin.py), none of them in 0.5.10rc0's, and
# no fused_sampling.py (PR #20501's, added 2026-04-01, reverted by ee9d922f5 on 2026-04-03):
# its branch was cut from main after 2026-04-03.
HOLDS = {
    "0.5.10": ("2026-04-03", (
        "sglang 0.5.10's sdist holds main's PRs #16711, #19163 and #21342 (merged 2026-04-02 "
        "and -03: server_args.py --stream-response-default-include-usage, models/transformers.py "
        "1,632 lines, entrypoints/engine_score_mixin.py) and not #20501's fused_sampling.py "
        "(reverted 2026-04-03), so it holds main through 2026-04-03")),
}

# Pre-release -> (the first build date whose main holds every rule kvplan gates at the release
# that follows it, that release, the evidence). 0.5.10rc0 (PyPI 2026-03-27, commit 9b0c470a6)
# holds each but Glm4MoeForCausalLM's FP32 router, which main merged on 2026-03-30.
RC_HOLDS = {
    "0.5.10rc0": ("2026-03-31", "0.5.10", (
        "sglang 0.5.10rc0's sdist (PyPI 2026-03-27, commit 9b0c470a6) holds every rule kvplan "
        "gates at 0.5.10: piecewise prefill CUDA graphs on by default (server_args.py:632 "
        "disable_piecewise_cuda_graph = False; kvplan.engines.sglang.prefill_graph, "
        "engine_args --disable-piecewise-cuda-graph), their memory reserve (server_args.py:"
        "1283-1290, the same lines as 0.5.10's :1304-1311; kvplan.engines.sglang.budget), the "
        "default max_running_requests read from the pool (model_runner_kv_cache_mixin.py:808 "
        "_resolve_max_num_reqs; kvplan.engines.sglang.pools RUNNING_FROM_POOL_SINCE), the "
        "token capacity split (:776 _resolve_token_capacity; swa_split) and transformers 5.3.0 "
        "(pyproject.toml:74; arrivals.json transformers_pin); Glm4MoeForCausalLM's FP32 "
        "router (router_gemm.py, 0.5.10) merged on main 2026-03-30 19:25 UTC (PR #21660, "
        "ad064c2f4), before this build")),
}

# The rules kvplan gates at each release of these brackets (grep of kvplan/engines/sglang for
# the versions), named in a refusal.
INSIDE = {
    "0.5.9": ("GlmMoeDsa support (kv_dtype.py GLM_DSA_SINCE), MoE TP under --ep-size "
              "(engine.py moe_tp_under_ep), transformers 4.57.1 pin"),
    "0.5.10": ("piecewise prefill CUDA graphs on by default (prefill_graph.py) and their "
               "reserve (budget.py), max_running_requests from the pool (pools.py "
               "RUNNING_FROM_POOL_SINCE), the token capacity split (swa_split.py), "
               "Glm4MoeForCausalLM's FP32 router (router_gemm.py), transformers 5.3.0"),
}


def _read() -> list[str]:
    """The releases kvplan reads (arrivals.json), oldest first."""
    return list(architectures._arrivals()["releases"])


def candidates(built: str) -> tuple[tuple[str, ...], str]:
    """(the releases kvplan reads whose rules a nightly built from main on `built`
    (YYYY-MM-DD) may hold, the evidence); () where no release is shown to hold main of that
    date."""
    before = [v for v in _read() if v in PUBLISHED and PUBLISHED[v] < built]
    above = [v for v, (date, _) in HOLDS.items() if date >= built]
    if not before or not above:
        return (), ""
    low, high = before[-1], min(above, key=release_post_key)
    why = [f"published on PyPI before {built}: sglang {low} ({PUBLISHED[low]})", HOLDS[high][1]]
    key = release_post_key
    for date, release, text in RC_HOLDS.values():
        if date <= built and key(low) < key(release) <= key(high):
            low = release
            why.append(text)
    return tuple(v for v in _read() if key(low) <= key(v) <= key(high)), "; ".join(why)


def inside(found: tuple[str, ...]) -> str:
    """The rules kvplan gates at the releases past the first of `found` (INSIDE)."""
    named = [f"{v}: {INSIDE[v]}" for v in found[1:] if v in INSIDE]
    return "; ".join(named)


def check() -> None:
    """The dates against each other: a pre-release's date is after its publication, a release
    holds main of a date before its own publication. AssertionError if not."""
    for rc, (date, release, _) in RC_HOLDS.items():
        assert PUBLISHED[rc] < date and release in INSIDE, rc
    for release, (date, _) in HOLDS.items():
        assert date < PUBLISHED[release], release


# The cohort's first evaluation (sglnightly62, 2026-12-06), the placement committed before any
# of its rows was replayed; read after it, no rule or constant of the engine changed.
FINDING = (
    "Cohort sglnightly62 (first replayed at stop 62: SGLang's nightly images): the 103 frozen "
    "rows of lmsysorg/sglang nightly-dev images d3bae71e, 1eea7448, b6fe0cca and d7256eb6 (45 "
    "of them under the moving tag nightly-dev, their image in silicon_data_source), placed "
    "between releases by their build date and the releases' published files "
    "(tests/benches/aiconfig_sglang_nightly.py: below, the newest release PyPI published "
    "before the build; above, 0.5.10, whose sdist holds main's features of 2026-04-02/03; "
    "0.5.10rc0's sdist, published 2026-03-27, holds every rule kvplan gates at 0.5.10, so a "
    "build from 2026-03-31 on is 0.5.10 to kvplan). Each row is replayed at every release of "
    "its bracket and kept where they agree. The cohort's one evaluation, before any change: "
    "91 rows within the bench's CPU bound (12 past it), 38 replayed (24 distinct "
    "measurements), all held out; TTFT inside 10, TPOT inside 38, both 10; median |TTFT err| "
    "84.9 %, |TPOT err| 7.4 %; median ratios 1.85 / 0.93. By image: 1eea7448 (2026-03-17, "
    "0.5.9 - 0.5.10; GLM-5 FP8, B200, TP 8; 36 rows): 28 replayed (14 measurements stated "
    "twice), TTFT inside 10, TPOT inside 28, both 10, median |err| 50.6 % / 7.2 %, ratios "
    "1.51 / 0.93; 2 refused, 0.5.9's and 0.5.10's replays apart (8,192 / 1,024 at "
    "concurrency 128: TTFT 21.6 s and 22.4 s); 6 past the CPU bound. b6fe0cca (2026-04-01, "
    "as 0.5.10; GLM-5 FP8, B300, TP 8; 10 rows): 10 replayed, TTFT inside 0, TPOT inside "
    "10, both 0, median |err| 138.2 % / 8.7 %, ratios 2.38 / 0.96. d3bae71e (2026-02-16, "
    "0.5.8.post1 - "
    "0.5.10; Qwen3.5-397B-A17B bf16, B200, TP 8; 45 rows): 0 replayed, 39 refused (0.5.8.post1 "
    "and 0.5.9 apart), 6 past the CPU bound. d7256eb6 (2026-04-02, as 0.5.10; Qwen3.5-397B "
    "NVFP4, B200, TP 4; 12 rows): 0 replayed, kvplan refuses all 12 at 0.5.10 (the "
    "checkpoint's kv_cache_scheme under --kv-cache-dtype auto: give --kv-dtype). Read after "
    "it (no rule or constant changed): TPOT is inside on every replayed row; TTFT comes out "
    "high on GLM-5, more so on B300 and at long prompts and high concurrency, unlike the vLLM "
    "nightly's low TTFT (nightly55). d3bae71e's refusals are kvplan's 0.5.8.post1 having no "
    "model class for Qwen3_5MoeForConditionalGeneration (arrivals: served from 0.5.9), while "
    "0.5.9 and 0.5.10 agree on the row read (1,024 / 1,024 at concurrency 4).")

# After the first evaluation (sglnightly62): the candidates kvplan refuses for not serving the
# row's architecture yet are dropped (tests.benches.aiconfig_nightly.replay), the rule read
# from d3bae71e's 39 refusals, so those rows are shaped by it.
SINCE = (
    "Since (sglnightly62, written after the first evaluation and committed before the rows "
    "were replayed again): a row was measured on its build, so the build serves the row's "
    "architecture, and a candidate release that kvplan refuses for not serving it yet is "
    "older than the build's code and dropped (aiconfig_nightly.replay). It moves d3bae71e's "
    "39 rows alone (Qwen3.5-397B-A17B bf16, B200, TP 8: 0.5.8.post1 has no "
    "Qwen3_5MoeForConditionalGeneration, SGLang serves it from 0.5.9; 0.5.9 and 0.5.10 agree on "
    "all 39), shaped by this rule: 0 -> 39 replayed (13 measurements stated three times), "
    "simulated as 0.5.9; TTFT inside 15, TPOT inside 39, both 15; median |err| 34.5 % / "
    "9.4 %; ratios 0.94 / 0.91. The cohort: 38 -> 77 replayed, TTFT inside 10 -> 25, TPOT "
    "inside 38 -> 77, both 10 -> 25, median |err| 84.9 % -> 48.2 % / 7.4 % -> 9.4 %, ratios "
    "1.85 -> 1.48 / 0.93 -> 0.91; held out (1eea7448, b6fe0cca) unchanged.")
