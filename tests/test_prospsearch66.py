"""The prospnew65 search record (tests/data/sim_to_real/prospsearch66.json): no serving run from a
publisher no earlier set used met the prospective sets' selection rule, so it freezes no run
(no prospective66 set, no runner, nothing evaluated). Its candidates (the nearest misses) name
what each lacks, point at GitHub threads no earlier set replayed a run from, and come from
publishers none of whose runs is in a set."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "tests" / "data" / "sim_to_real"
RECORD = json.loads((SETS / "prospsearch66.json").read_text())
EARLIER = sorted(SETS.glob("prospective*.json"))


def _urls(candidate: dict) -> set[str]:  # type: ignore[type-arg]
    return {candidate["url"], *candidate.get("also", ())}


def test_the_record_freezes_no_run() -> None:
    assert RECORD["runs"] == []
    assert "NO run met that rule" in RECORD["what"]
    assert "NOT waived" in RECORD["selection_rule"]
    # BBuf's gpt-oss-120b (#9278 / #8731) and DeepSeek-V3 (#7621) mains, chaunceyjiang's vLLM
    # main (vllm#25735), yuan-luo's H20 runs (#13998).
    assert [c["url"].rsplit("/", 1)[1] for c in RECORD["candidates"]] == [
        "9278", "7621", "25735", "13998"]
    assert len(RECORD["skipped"]) == 11


def test_every_candidate_says_what_it_lacks() -> None:
    for c in RECORD["candidates"]:
        assert all(u.startswith("https://github.com/") for u in _urls(c))
        assert c["engine"] in ("sglang", "vllm", "trtllm")
        assert c["read"] and c["lacks"] and all(c["lacks"])
        # A named checkpoint has its config in the stores (vllm#25735 names none).
        assert c["model"] is None or (REPO / c["model"]).is_file(), c["model"]


def test_no_candidate_is_a_run_or_a_publisher_of_an_earlier_set() -> None:
    assert len(EARLIER) >= 17  # prospective30 ... 65 (53b and 56_served included)
    for path in EARLIER:
        doc = json.loads(path.read_text())
        run_urls = {run.get("url") for run in doc["runs"]}
        publishers = " ".join(src.get("publisher", "") for src in doc.get("sources", {}).values())
        for c in RECORD["candidates"]:
            assert not _urls(c) & run_urls, (path.name, c["url"])
            name = c["publisher"].split(" (")[0]
            assert name not in publishers, (path.name, name)
