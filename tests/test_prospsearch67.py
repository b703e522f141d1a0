"""The prospnew67 search record (tests/data/sim_to_real/prospsearch67.json): vLLM's and SGLang's
own pull requests searched for 'main' / 'before' serving blocks with full settings. No run met the
prospective sets' selection rule (every baseline block the index shows stops before its TTFT /
TPOT lines, or lacks the GPU, the model or the launch line), so it freezes no run: no
prospective67 set, no runner, nothing evaluated. Its candidates (the nearest misses) name what each
lacks, point at GitHub threads no earlier set replayed a run from or listed as a candidate, and
come from publishers none of whose runs is in a set."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "tests" / "data" / "sim_to_real"
RECORD = json.loads((SETS / "prospsearch67.json").read_text())
EARLIER = sorted(SETS.glob("prospective*.json"))
SEARCH66 = json.loads((SETS / "prospsearch66.json").read_text())


def _urls(candidate: dict) -> set[str]:  # type: ignore[type-arg]
    return {candidate["url"], *candidate.get("also", ())}


def test_the_record_freezes_no_run() -> None:
    assert RECORD["runs"] == []
    assert "NO run met the selection rule" in RECORD["what"]
    assert not (SETS / "prospective67.json").exists()
    # Fridge003's DeepSeek-V3-0324 H200 mains (sglang#16817 / #19122), yuan-luo's Qwen3.5-35B-A3B
    # TP 2 main (#20627), zminglei's Qwen3.5 H200 TP 4 baseline (#20565), hdlj-h's structured-output
    # blocks (vllm#30056), LopezCastroRoberto's DeepSeek-V3.2-NVFP4 main (vllm#39897).
    assert [c["url"].rsplit("/", 1)[1] for c in RECORD["candidates"]] == [
        "16817", "20627", "20565", "30056", "39897"]
    assert len(RECORD["skipped"]) == 10


def test_the_search_is_recorded() -> None:
    queries = RECORD["queries"]
    assert len(queries) >= 30
    assert all(q["corpus"] in ("issues", "code", "docs", "pages") and q["query"] for q in queries)
    assert all(s["runs"] and s["why"] for s in RECORD["skipped"])


def test_every_candidate_says_what_it_lacks() -> None:
    for c in RECORD["candidates"]:
        assert all(u.startswith("https://github.com/") for u in _urls(c))
        assert c["engine"] in ("sglang", "vllm", "trtllm")
        assert c["read"] and c["lacks"] and all(c["lacks"])
        # A named checkpoint has its config in the stores (vllm#30056 names none; #39897's NVFP4
        # checkpoint has none).
        assert c["model"] is None or (REPO / c["model"]).is_file(), c["model"]


def test_no_candidate_is_a_run_a_candidate_or_a_publisher_of_an_earlier_set() -> None:
    assert len(EARLIER) >= 17  # prospective30 ... 65 (53b and 56_served included)
    earlier_candidates = set().union(*(_urls(c) for c in SEARCH66["candidates"]))
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
