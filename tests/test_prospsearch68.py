"""The prospnew68 search record (tests/data/sim_to_real/prospsearch68.json): repositories that
commit `vllm bench serve` / `sglang.bench_serving` output searched through the code index's whole
files. Fewer than four runs met the selection rule, so it freezes no run: no prospective66 set, no
runner, no simulate-bench section, nothing evaluated. Its candidates (the nearest misses) say what
each lacks, come from publishers none of whose runs is in a set, and where a result block was read
carry its published figures (so a later set can freeze them once what they lack is supplied)."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "tests" / "data" / "sim_to_real"
RECORD = json.loads((SETS / "prospsearch68.json").read_text())
# The sets before the record (prospective66, frozen later by prosp66_68 from its first
# candidate, is not one of them).
EARLIER = sorted(p for p in SETS.glob("prospective*.json") if p.name != "prospective66.json")
SEARCHES = [json.loads((SETS / f"prospsearch{n}.json").read_text()) for n in (66, 67)]


def _urls(candidate: dict) -> set[str]:  # type: ignore[type-arg]
    return {candidate["url"], *candidate.get("also", ())}


def test_the_record_freezes_no_run() -> None:
    assert RECORD["runs"] == []
    assert "fewer than 4 runs met the selection rule" in RECORD["what"]
    # prospective66 came later (prosp66_68): its runs are the record's first candidate's.
    later = json.loads((SETS / "prospective66.json").read_text())
    assert {run["url"] for run in later["runs"]} == {RECORD["candidates"][0]["url"]}
    # kubesimplify's TP 4 and TP 2 posts, John Musgrave's A100 sweep, the Isambard-AI tutorial.
    assert [c["url"].rsplit("/", 1)[-1] or c["url"].rsplit("/", 2)[-2]
            for c in RECORD["candidates"]] == [
        "running-a-big-llm-across-multiple-gpus-with-vllm.md",
        "running-a-single-llm-across-two-gpus-with-vllm.md",
        "vllm-throughput-latency-sweep-on", "distributed-inference"]


def test_the_search_is_recorded() -> None:
    queries = RECORD["queries"]
    assert len(queries) >= 30
    assert all(q["tool"] in ("find_string", "search", "fetch", "find_files")
               and q["corpus"] in ("code", "pages") and q["query"] for q in queries)
    assert all(s["runs"] and s["why"] for s in RECORD["skipped"])


def test_every_candidate_says_what_it_lacks() -> None:
    for c in RECORD["candidates"]:
        assert all(u.startswith("https://") for u in _urls(c))
        assert c["engine"] in ("sglang", "vllm", "trtllm")
        assert c["read"] and c["lacks"] and all(c["lacks"])
        # A named checkpoint has its config in the stores; the TP 4 post's FP8 checkpoint has none
        # (its nearest stored config is named instead).
        assert c["model"] is None or (REPO / c["model"]).is_file(), c["model"]
        if c["model"] is None:
            assert (REPO / c["model_nearest"]).is_file()


def test_the_read_result_blocks_are_self_consistent() -> None:
    """A published block's token totals are its prompt count times the fixed lengths (random
    dataset, --ignore-eos): 12 x 1,024 = 12,288 in and 12 x 256 = 3,072 out; 640 x 1,024 =
    655,360 and 640 x 256 = 163,840 (the kubesimplify TP 4 post's two blocks)."""
    runs = [run for c in RECORD["candidates"] for run in c.get("runs", ())]
    assert len(runs) == 2
    for run in runs:
        w, p = run["workload"], run["published"]
        assert p["total_input_tokens"] == w["num_prompts"] * w["input_len"]
        assert p["total_generated_tokens"] == w["num_prompts"] * w["output_len"]


def test_no_candidate_is_a_run_a_candidate_or_a_publisher_of_an_earlier_set() -> None:
    assert len(EARLIER) >= 17  # prospective30 ... 65 (53b and 56_served included)
    earlier_candidates = set().union(*(_urls(c) for s in SEARCHES for c in s["candidates"]))
    for c in RECORD["candidates"]:
        assert not _urls(c) & earlier_candidates, c["url"]
    for path in EARLIER:
        doc = json.loads(path.read_text())
        run_urls = {run.get("url") for run in doc["runs"]}
        source_urls = {src.get("url") for src in doc.get("sources", {}).values()}
        publishers = " ".join(src.get("publisher", "") for src in doc.get("sources", {}).values())
        for c in RECORD["candidates"]:
            assert not _urls(c) & (run_urls | source_urls), (path.name, c["url"])
            name = c["publisher"].split(" (")[0]
            assert name not in publishers, (path.name, name)
