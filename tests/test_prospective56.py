"""The frozen prospective56 set (tests/data/sim_to_real/prospective56.json): every run names its
source and its own URL, a model config, a GPU preset, an engine release and measured figures, none
is in an earlier set or from an earlier set's publisher, and the replay's requests are the run's
stated lengths (vLLM) or bench_serving's own draw (SGLang), checked against the printed totals
(the full replay is tests.benches.prospective56_runs)."""

from __future__ import annotations

import functools
import json

from tests.benches import (
    prospective31_runs,
    prospective52_runs,
    prospective53_runs,
    prospective53b_runs,
    prospective54_runs,
    prospective56_runs,
    prospective_runs,
)

EARLIER = (prospective_runs.DATA, prospective31_runs.DATA, prospective52_runs.DATA,
           prospective53_runs.DATA, prospective53b_runs.DATA, prospective54_runs.DATA)

_runs = functools.partial(prospective_runs.runs_by_id, prospective56_runs.DATA)


def test_every_run_is_complete_and_new() -> None:
    doc = prospective_runs.load(prospective56_runs.DATA)
    # Scicom llm-benchmaq: vLLM 26 (H100 x 23 at concurrency 10-200, the January H100 / H200 /
    # B200 Qwen3-32B runs), SGLang 7; vLLM PR #28200: MiniMax-M2 before / after.
    assert len(doc["runs"]) == 35
    assert sum(run.get("engine") == "sglang" for run in doc["runs"]) == 7
    assert not prospective_runs.incomplete(doc)
    # Each run carries its own URL: Scicom's log file at the snapshot's commit, or the PR.
    assert all(run["url"].startswith("https://github.com/") for run in doc["runs"])
    assert all(run["url"].endswith(".txt") for run in doc["runs"] if "scicom" in run["source"])
    # No source, run or publisher of an earlier set.
    old = [prospective_runs.load(data) for data in EARLIER]
    urls = {src["url"] for src in doc["sources"].values()}
    assert not urls & {src["url"] for d in old for src in d["sources"].values()}
    assert not {run["id"] for d in old for run in d["runs"]} & set(_runs())
    mine = {str(src["publisher"]).split(" (")[0] for src in doc["sources"].values()}
    theirs = {str(src.get("publisher", "")).split(" (")[0] for d in old
              for src in d["sources"].values()}
    assert mine == {"Scicom", "minatoaquaMK2"} and not mine & theirs
    assert all(src["assumed"] and src["stated"] for src in doc["sources"].values())
    assert len(doc["skipped"]) == 8


def test_vllm_requests_follow_the_run() -> None:
    # Llama-3.1-70B at 200: 1,023,000 / 1,000 = 1,023 prompt tokens (its tokenizer re-encodes the
    # 1,024 random ids one shorter), 128 out (--ignore-eos: 128,000 / 1,000), all available at
    # t = 0 (rate inf) under --max-concurrency 200; no chat template (/v1/completions).
    run = _runs()["scicom vLLM Llama-3.1-70B H100 TP8 random 1023/128 conc 200 (1000 prompts)"]
    reqs = prospective_runs.requests(run)
    assert len(reqs) == 1000 and run["workload"]["max_concurrency"] == 200
    assert {(r.prompt_len, r.output_len, r.arrival_s) for r in reqs} == {(1023, 128, 0.0)}
    for rid, run in _runs().items():
        if run.get("engine", "vllm") == "vllm" and "scicom" in rid:
            reqs = prospective_runs.requests(run)
            assert sum(r.prompt_len for r in reqs) == run["measured"]["total_input_tokens"]
            assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"]


def test_sglang_requests_reproduce_the_printed_totals() -> None:
    # bench_serving's seed-1 draw as SGLang 0.5.7 and later make it (outputs from 1): 100 prompts
    # of up to 1,024 / 128 tokens give the printed 50,561 in and 6,108 out; Llama's tokenizer
    # prints 50,461 (100 fewer: one per re-encoded prompt), its generated total the same.
    sglang = {rid: run for rid, run in _runs().items() if run.get("engine") == "sglang"}
    assert len(sglang) == 7
    for rid, run in sglang.items():
        reqs = prospective_runs.requests(run)
        assert sum(r.output_len for r in reqs) == run["measured"]["total_generated_tokens"] == 6108
        printed = run["measured"]["total_input_tokens"]
        assert sum(r.prompt_len for r in reqs) == 50561 == printed + (100 if "Llama" in rid else 0)


def test_the_minimax_layout_is_the_one_its_tuned_config_names() -> None:
    # vLLM names a fused-MoE config E=<experts>,N=<2 x intermediate / TP>; the PR's H100 config
    # for MiniMax-M2 is E=256,N=384 (the only one of N=768 / 384 / 192 in vLLM's tree), so TP 8:
    # 2 x 1,536 / 8 = 384.
    config = json.loads((prospective_runs.REPO / "tests/data/configs/minimax-m2.json").read_text())
    for run in _runs().values():
        if run["model_id"] == "MiniMaxAI/MiniMax-M2":
            assert (config["num_local_experts"], 2 * config["intermediate_size"] // run["tp"]) \
                == (256, 384)
