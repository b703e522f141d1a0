"""The provenance of aiconfigurator's aggregated rows and the low-load offset table
(tests.benches.aiconfig_harness, issue 30, aggvllmttft55)."""

from __future__ import annotations

import collections
import random
import re

from tests.benches import aiconfig_agg_runs, aiconfig_harness, aiconfig_harness_replay
from tests.benches.disagg_rows import Replay


def _row(source: str) -> dict[str, str]:
    return {"silicon_data_source": source}


def test_provenance_reads_the_three_formats() -> None:
    # One row of each format, verbatim from the frozen file.
    h = aiconfig_harness
    assert h.provenance(_row(
        "source_file=2026-03-25.csv; model=DeepSeek-R1; silicon_concurrency=128; "
        "measured=2026-03-25T16:34:14Z; wip=False; image=lmsysorg/sglang:v0.5.9-cu130")) \
        == h.INFERENCEX_ROWS
    assert h.provenance(_row(
        "db-dump/2026-04-27; config_id=637; silicon_concurrency=4; "
        "measured=2026-04-17T00:00:00.000Z; workflow_run_id=344; vllm/vllm-openai:v0.18.0")) \
        == h.INFERENCEX_ROWS
    assert h.provenance(_row(
        "source_file=kimi-k2.5-gap-analysis.csv; silicon_concurrency=16; "
        "aic_database_mode=SILICON")) == h.OTHER_ROWS


def test_provenance_counts_on_the_frozen_file() -> None:
    # Counted apart from `provenance` (grep over the file, aggvllmttft55): InferenceX's rows
    # carry a dated export file and an engine's own image, or a db-dump source; by that count
    # vLLM 610 + 257 = 867 of 986, SGLang 403 + 198 = 601 of 747, TensorRT-LLM 124 + 233 + 74 =
    # 431 of 749 (124 spell the registry nvcr.io#, the Slurm launchers' form); the 16
    # TensorRT-LLM rows naming nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime come from a
    # gap-analysis file.
    own_image = re.compile(r"image=(vllm/vllm-openai|lmsysorg/sglang|"
                           r"nvcr\.io[/#]nvidia/tensorrt-llm/release):")
    h = aiconfig_harness
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for row in aiconfig_agg_runs.rows():
        source = row["silicon_data_source"]
        prov = h.provenance(row)
        assert (prov == h.INFERENCEX_ROWS) == (
            source.startswith("db-dump/") or bool(own_image.search(source))), row["id"]
        assert (prov == h.DYNAMO_ROWS) == ("ai-dynamo/" in source), row["id"]
        counts[row["backend"], prov] += 1
    assert counts == {
        ("vllm", h.INFERENCEX_ROWS): 867, ("vllm", h.OTHER_ROWS): 119,
        ("sglang", h.INFERENCEX_ROWS): 601, ("sglang", h.OTHER_ROWS): 146,
        ("trtllm", h.INFERENCEX_ROWS): 431, ("trtllm", h.DYNAMO_ROWS): 16,
        ("trtllm", h.OTHER_ROWS): 302}


def _replay(measured: float, kvplan: float | None, conc: int, why: str = "") -> Replay:
    return Replay(id="x", label="x", measured_ttft_ms=measured, measured_tpot_ms=10.0,
                  concurrency=conc, input_len=1024, output_len=1024, ttft_ms=kvplan,
                  tpot_ms=None if kvplan is None else 10.0, why_not=why)


def test_offset_line_by_hand() -> None:
    # Offsets 10, 20, 40 ms at concurrency 4 or less are counted; the concurrency-8 row, the
    # refused row and the saturated row (no TTFT) are not. Inclusive quartiles of (10, 20, 40):
    # Q1 = 10 + (20 - 10) / 2 = 15, median 20, Q3 = 20 + (40 - 20) / 2 = 30.
    part = [_replay(30.0, 20.0, 4), _replay(50.0, 30.0, 1), _replay(100.0, 60.0, 2),
            _replay(500.0, 20.0, 8), _replay(90.0, None, 4, why="kvplan refuses: x"),
            _replay(90.0, None, 4)]
    assert aiconfig_harness.offset_line("t", part) == "| t | 3 | 20.0 | 15.0 | 30.0 |"
    assert aiconfig_harness.offset_line("t", part[:1]) == "| t | 1 | - | - | - |"


def test_harness_workload_follows_the_client() -> None:
    # InferenceX's client (benchmark_serving.py:112-117): lengths uniform over
    # [int(0.8 x L), L], both ends included; 10 x C requests (the scripts' --num-prompts).
    # int(0.8 x 1,024) = int(819.2) = 819; int(0.8 x 8,192) = int(6,553.6) = 6,553.
    reqs = aiconfig_harness_replay.workload(8192, 1024, 4)
    assert len(reqs) == 40
    assert all(r.arrival_s == 0.0 for r in reqs)
    assert all(6553 <= r.prompt_len <= 8192 and 819 <= r.output_len <= 1024 for r in reqs)
    # Spread, not one length (the point: the users fall out of step), and seeded.
    assert len({r.output_len for r in reqs}) > 30
    assert reqs == aiconfig_harness_replay.workload(8192, 1024, 4)
    # Both ends are reachable: a 2-token range gives both values.
    got = set(aiconfig_harness_replay.sample_uniform(5, 200, random.Random(1)))
    assert got == {4, 5}  # int(0.8 x 5) = 4
