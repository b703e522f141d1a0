"""vLLM's batches in flight, by release: the tokens sliding-window and chunked-local layers
reserve beyond their window (chunk), issue 26.

A sliding layer holds ``cdiv(min(window - 1 + T, max_model_len), block) + 1`` blocks per
request and a chunked-local layer ``cdiv(min(chunk + T, max_model_len), block)``
(v1/kv_cache_interface.py SlidingWindowSpec / ChunkedLocalAttentionSpec
max_memory_usage_bytes, which get_max_concurrency_for_kv_cache_config sums). T is:

- to 0.25: ``scheduler_config.max_num_batched_tokens``, one batch whatever PP and scheduling;
- from 0.26: ``VllmConfig.max_in_flight_tokens`` = max_concurrent_batches x
  max_num_batched_tokens, where max_concurrent_batches is PP + 1 with async scheduling on model
  runner V2, 2 with async scheduling on the V1 runner at PP 1, and PP otherwise (the V1 runner
  at PP > 1, or no async scheduling: the CPU platform, ``--no-async-scheduling``).

Async scheduling is on by default from 0.14 wherever the executor supports it (multiproc and
uniproc; Ray does not, and kvplan's launch lines use multiproc from 0.11.1), unless a pooling
model or a speculator other than EAGLE / MTP / n-gram / draft model (kvplan sizes MTP, EAGLE,
EAGLE3: async stays on); the CPU platform turns it off (platforms/cpu.py). Which runner a model
gets is kvplan.engines.vllm.runner.vllm_runs_v2's rule (the reserve follows it too). The
rows below give the files and lines read in each release's wheel (/tmp/vllm-src/<v>/vllm/);
one row per range where the code changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.versions import NEWEST, newest_at, version_key


@dataclass(frozen=True, kw_only=True)
class InFlightRule:
    """How the releases from `since` (to the next row) size the tokens in flight that sliding
    and chunked layers keep; `read`: the releases read, with the file and line of each rule."""

    since: tuple[int, ...]
    # max_in_flight_tokens (max_concurrent_batches batches); False: max_num_batched_tokens.
    reserves_in_flight: bool
    read: str


# Oldest first; a release takes the last row at or below it.
VLLM_IN_FLIGHT_RULES: tuple[InFlightRule, ...] = (
    InFlightRule(
        since=(0, 10), reserves_in_flight=False,
        read="0.10.0 v1/kv_cache_interface.py:179-195 SlidingWindowSpec.max_memory_usage_bytes "
             "and :144-166 ChunkedLocalAttentionSpec read scheduler_config."
             "max_num_batched_tokens; the same in every release to 0.25.1 (:573 and :501 "
             "through max_admission_blocks_per_request, 0.19.1 :256 and :234); "
             "max_concurrent_batches sized only the batch queue (0.10.0-0.22.1 the executor's, "
             "v1/engine/core.py; config/vllm.py from 0.23.0 :497)"),
    InFlightRule(
        since=(0, 26), reserves_in_flight=True,
        read="0.26.0 v1/kv_cache_interface.py:523 and :595 max_in_flight_tokens; config/vllm.py"
             ":512-533 max_concurrent_batches (async: V2 PP + 1, V1 2 at PP 1; else PP) and "
             "max_in_flight_tokens; :1059-1107 async scheduling on by default, at PP > 1 too "
             "(the V1 runner then gives PP); platforms/cpu.py:144 off. The same in 0.27.1 "
             "(:540-561, :1095-1143), 0.28.0 (:550-571, :1185-1234), 0.29.0 (:559-580, "
             ":1262-1311), 0.30.0 (:589-610, :1438-1487)"),
    InFlightRule(
        since=(0, 31), reserves_in_flight=True,
        read="0.31.0 config/vllm.py:592-613; :1625-1633 async scheduling off by default at "
             "PP > 1 on the V1 runner (PP batches either way); platforms/cpu.py:314. 0.32.0 "
             ":577-598, :1634-1644, cpu.py:331; 0.33.0 :588-598"),
    InFlightRule(
        since=(0, 34), reserves_in_flight=True,
        read="0.34.0 config/vllm.py:560-566: no V1 runner; async PP + 1, else PP"),
)


def in_flight_rule(version: str | None) -> InFlightRule:
    """The VLLM_IN_FLIGHT_RULES row that describes `version` (None: the newest)."""
    return newest_at(VLLM_IN_FLIGHT_RULES, version_key(version), lambda rule: rule.since)


def vllm_max_concurrent_batches(version: str | None, *, async_scheduling: bool, pp: int,
                                v2_runner: bool = True) -> int:
    """Batches of max_num_batched_tokens that vLLM `version`'s sliding and chunked layers
    reserve (see the module): 1 to 0.25; from 0.26 VllmConfig.max_concurrent_batches, PP + 1
    with async scheduling on model runner V2 (`v2_runner`) or at PP 1, else PP."""
    if not in_flight_rule(version).reserves_in_flight:
        return 1
    return pp + 1 if async_scheduling and (v2_runner or pp == 1) else pp


def in_flight_text() -> str:
    """The rule in words, for the notes of a plan with sliding or chunked layers."""
    first = next(r.since for r in VLLM_IN_FLIGHT_RULES if r.reserves_in_flight)
    before = f"{first[0]}.{first[1] - 1}"
    return (f"max_num_batched_tokens to vLLM {before}; from {first[0]}.{first[1]}, PP + 1 "
            "batches of it with async scheduling, on by default on CUDA and ROCm, and PP "
            "batches without it (the CPU platform) or on model runner V1 at PP > 1")


def in_flight_span(since: str, until: str | None) -> str:
    """The batches kept by the releases from `since` up to (not including) `until`, for
    `kvplan engines`' profile rows."""
    lo, hi = version_key(since), version_key(until) if until else NEWEST
    kinds = [r for r in VLLM_IN_FLIGHT_RULES if r.since < hi]
    start = in_flight_rule(since)
    kinds = [start] + [r for r in kinds if r.since > lo]
    words = ["PP + 1 batches" if r.reserves_in_flight else "1 batch" for r in kinds]
    if len(set(words)) == 1:
        return words[0]
    change = next(r.since for r in kinds if r.reserves_in_flight)
    return f"1 batch; PP + 1 from {change[0]}.{change[1]}"
