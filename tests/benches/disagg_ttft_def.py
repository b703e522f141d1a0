"""What the measured TTFT of section 3j counts (ttftdef57, issues 29 / 30): whether the
TensorRT-LLM rows' TTFT, which at light load grows with the output length asked for
(tests.benches.disagg_trtllm_load), is a first *content* token taken after DeepSeek-R1's
reasoning text. Read in the harness's code and checked on the rows; nothing fitted, no rule.

- `implied_lines`: the gap of each replayed row in its own decode steps, k = (measured TTFT -
  kvplan TTFT) / measured TPOT, beside the output length O asked for. Were the gap k reasoning
  tokens, k would be the model's think length on aiperf's random prompts: fixed by the prompt,
  not by max_tokens (the model does not see it), so rows that differ only in O would show the
  same k while it is below O.
- `frontend_lines`: the measured rows alone (no kvplan figure), TTFT / TPOT at LIGHT or fewer
  users by model, frontend (the image named in silicon_data_source) and lengths, over every
  frozen aiconfigurator row that has ISL 1,024 at both OSL 1,024 and 8,192: the aggregated rows
  (tests/data/sim_to_real/aiconfigurator_agg.csv.gz) and the disaggregated ones
  (tests/data/disagg/aiconfigurator_prospective_disagg.csv.gz). A reasoning-text effect would
  show wherever DeepSeek-R1 is measured by the same client, whatever the engine.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from tests.benches.disagg_rows import Replay, prospective_rows, replay, stated_concurrency

ROOT = Path(__file__).resolve().parents[2]
AGG_FILE = ROOT / "tests" / "data" / "sim_to_real" / "aiconfigurator_agg.csv.gz"
# Users at or below which a row counts as lightly loaded (as tests.benches.disagg_trtllm_load).
LIGHT = 64
# The lengths compared: ISL 1,024 at the two output lengths aiconfigurator's rows measure.
ISL = 1024
OSLS = (1024, 8192)

# What was read (ttftdef57), each with its file and line; the versions as stated.
READ_TEXT = (
    "What the measured TTFT counts, read in the harness's code (ttftdef57; no rule written, no "
    "row dropped, SHAPED_BY holds nothing from it):",
    "",
    "- The client (aiconfigurator at 095f58a5): src/aiconfigurator/generator/sflow.py:393, :409 "
    "`pip install aiperf==0.3.0`, :417 `--endpoint-type chat`, :419 `--streaming`; "
    "generator/config/backend_templates/benchmark/bench_run.sh.j2:79-101 `aiperf profile` with "
    "`--extra-inputs ignore_eos:true`, `{\"nvext\":{\"ignore_eos\":true}}`, `--streaming`; "
    "generator/config/deployment_config.yaml:207-209 BenchConfig.endpoint_type 'chat'. No "
    "reasoning parser is set anywhere in the generator or tools/accuracy_tracking (no "
    "`reasoning` in either; the one `--reasoning-parser` is collector/fpm_forward/runner.py:976, "
    "glm45, the collector's own runs). The rows' silicon_data_source names an image and a "
    "workflow or a source file, not the client's version or its command line.",
    "- aiperf 0.3.0 (the wheel on PyPI): aiperf/metrics/types/ttft_metric.py:41-53, TTFT = "
    "the first of `record.content_responses` less the request's start; "
    "common/models/record_models.py:710-716, content_responses = every response whose parsed "
    "data is not empty; endpoints/openai_chat.py:206-217, a chat chunk's delta gives "
    "`content` and `reasoning_content` (or `reasoning`), is dropped only when both are "
    "empty, and a reasoning-only chunk is a ReasoningResponseData: it is a content response, "
    "so TTFT counts the first reasoning token. The first *content* token is a separate "
    "metric, time_to_first_output_token (metrics/types/time_to_first_output_token_metric.py:"
    "11-39, :65-73, flagged NO_CONSOLE). aiperf v0.1.1 (ai-dynamo/aiperf tag v0.1.1) "
    "aiperf/metrics/types/ttft_metric.py:47 takes `record.responses[0]`, the first parsed "
    "response, and its parsers/openai_parsers.py:124-135 parse a reasoning-only chunk as 0.3.0 "
    "does. Neither version's TTFT waits for content.",
    "- Dynamo's reasoning parser (lib/parsers/src/reasoning/deepseek_r1_parser.rs as the index "
    "stores it, commit 1795815b, not the 0.8.1 release the rows ran): BasicReasoningParser "
    "with force_reasoning and stream_reasoning true; base_parser.rs (commit 074fa895) "
    "`parse_reasoning_streaming_incremental` passes reasoning text on as it arrives, holding "
    "back only a partial `</think>` at a chunk's end. Were it set, each chunk would carry "
    "`reasoning_content`, which aiperf counts as above; unset, the think text is `content`.",
    "",
)


def implied_steps(r: Replay) -> float | None:
    """The gap in the row's own decode steps, (measured TTFT - kvplan TTFT) / measured TPOT;
    None where kvplan has no TTFT for the row."""
    if r.ttft_ms is None:
        return None
    return (r.measured_ttft_ms - r.ttft_ms) / r.measured_tpot_ms


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def implied_lines(done: list[Replay]) -> list[str]:
    """The implied k by lengths over the replayed rows `done` (module docstring)."""
    by_len: dict[tuple[int, int], list[tuple[float, bool]]] = {}
    for r in done:
        k = implied_steps(r)
        if k is not None:
            by_len.setdefault((r.input_len, r.output_len), []).append(
                (k, (r.concurrency or 0) <= LIGHT))
    if not by_len:
        return ["No replayed row with a kvplan TTFT.", ""]
    parts = []
    for (i, o), ks in sorted(by_len.items()):
        light = [k for k, is_light in ks if is_light]
        every = [k for k, _ in ks]
        parts.append(f"ISL {i:,} / OSL {o:,}: {len(every)} rows, median k {_median(every):,.0f} "
                     f"({_median(every) / o:.1%} of O)"
                     + (f", at {LIGHT} or fewer users {len(light)} rows, median "
                        f"{_median(light):,.0f} ({_median(light) / o:.1%} of O), from "
                        f"{min(light):,.0f} to {max(light):,.0f}" if light else ""))
    return ["- The gap as tokens generated before the counted one, k = (measured - kvplan TTFT) "
            "/ measured TPOT, by lengths: " + "; ".join(parts) + ". A think length is set by "
            "the prompt, not by the max_tokens the model never sees: at the same ISL it would "
            "not grow with OSL while below it.", ""]


def _frontend(source: str) -> str:
    """The serving frontend the row's silicon_data_source names (its image), else 'unstated'."""
    if "ai-dynamo/" in source:
        return "Dynamo"
    if "tensorrt-llm/release" in source:
        return "trtllm-serve"
    if "lmsysorg/sglang" in source:
        return "SGLang"
    if "vllm/vllm-openai" in source:
        return "vLLM"
    return "unstated"


def model_run(row: dict[str, str]) -> str:
    """The model a row ran: every row labelled deepseek-ai/DeepSeek-V3 in these files has a
    dsr1_ id (aiconfigurator sizes DeepSeek-R1 with DeepSeek-V3's config), so a dsr1_ id is
    DeepSeek-R1; else the model_path's last part."""
    if row["id"].startswith("dsr1_"):
        return "DeepSeek-R1"
    return row["model_path"].split("/")[-1]


@cache
def _agg_rows() -> tuple[dict[str, str], ...]:
    with gzip.open(AGG_FILE, "rt") as f:
        return tuple(csv.DictReader(io.StringIO(f.read())))


def measured_rows() -> list[dict[str, str]]:
    """The frozen aggregated and disaggregated aiconfigurator rows, one per measurement: many
    disaggregated TensorRT-LLM rows labelled DeepSeek-V3 (dsr1_ ids) carry the measured TTFT
    and TPOT of a DeepSeek-R1 row (the same run stored twice), so a measurement already seen
    (system, mode, lengths, TTFT and TPOT to 0.01 ms) is counted once, the first by id."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for row in sorted([*_agg_rows(), *prospective_rows()], key=lambda x: x["id"]):
        key = (row["system"], row["mode"], row["isl"], row["osl"],
               f"{float(row['silicon_ttft_ms'] or 0):.2f}",
               f"{float(row['silicon_tpot_ms'] or 0):.2f}")
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


def frontend_lines(rows: Iterable[dict[str, str]]) -> list[str]:
    """Measured TTFT / TPOT at LIGHT or fewer users, ISL 1,024, OSL 1,024 against 8,192, by
    mode, backend, model and frontend (module docstring); rows as aiconfigurator's CSVs."""
    steps: dict[tuple[str, str, str, str], dict[int, list[float]]] = {}
    for row in rows:
        conc = stated_concurrency(row)
        if (conc is None or conc > LIGHT or int(row["isl"]) != ISL
                or int(row["osl"]) not in OSLS or not row["silicon_ttft_ms"]):
            continue
        key = (row["mode"], row["backend"], model_run(row), _frontend(row["silicon_data_source"]))
        steps.setdefault(key, {}).setdefault(int(row["osl"]), []).append(
            float(row["silicon_ttft_ms"]) / float(row["silicon_tpot_ms"]))
    both = sorted((k, v) for k, v in steps.items() if all(o in v for o in OSLS))
    ratio = {k: _median(v[OSLS[1]]) / _median(v[OSLS[0]]) for k, v in both}
    others = [x for k, x in ratio.items() if k[3] != "Dynamo"]
    spread = (f" (8,192 over 1,024 from {min(others):.2f} to {max(others):.2f} x over "
              f"{len(others)} groups)" if others else "")
    out = [f"- The measured rows alone (no kvplan figure): TTFT / TPOT at {LIGHT} or fewer "
           f"users, ISL {ISL:,}, OSL {OSLS[0]:,} against {OSLS[1]:,}, every frozen "
           "aiconfigurator row with both (aggregated: tests/data/sim_to_real/"
           "aiconfigurator_agg.csv.gz; disaggregated: the prospective set; a measurement "
           "stored twice counted once; every row labelled DeepSeek-V3 has a dsr1_ id and is "
           "counted as DeepSeek-R1; the frontend is the image named in silicon_data_source). "
           "DeepSeek-R1 served by trtllm-serve or SGLang, aggregated or disaggregated, does "
           "not add steps to its TTFT at the longer OSL, as no other model here does"
           f"{spread}; only the "
           "Dynamo + TensorRT-LLM disaggregated rows grow with it. They are the only Dynamo "
           "rows measured at both lengths and no non-reasoning model is among them, so these "
           "rows cannot tell Dynamo's frontend from the reasoning model; the same model "
           "through the other frontends, measured by aiconfigurator's same kind of rows, "
           "shows no think text in its TTFT.", "",
           "| mode | backend | model | frontend | rows at OSL 1,024 / 8,192 | median TTFT / "
           "TPOT at 1,024 | at 8,192 | ratio |", "|---|---|---|---|---|---|---|---|"]
    for (mode, backend, model, fe), v in both:
        out.append(f"| {mode} | {backend} | {model} | {fe} | {len(v[OSLS[0]])} / "
                   f"{len(v[OSLS[1]])} | {_median(v[OSLS[0]]):,.0f} | "
                   f"{_median(v[OSLS[1]]):,.0f} | {ratio[(mode, backend, model, fe)]:.2f} |")
    return [*out, ""]


def section_lines(done: list[Replay]) -> list[str]:
    """Section 3j's text on what the measured TTFT counts (module docstring)."""
    return [*READ_TEXT, *implied_lines(done), *frontend_lines(measured_rows()),
            *CONCLUSION_TEXT]


CONCLUSION_TEXT = (
    "So the evidence is not there: aiperf's TTFT (the version aiconfigurator's generator "
    "installs and the older one read) counts a reasoning-only chunk, Dynamo's DeepSeek-R1 "
    "parser streams the reasoning, the rows name no metric, client version or frontend flag "
    "that would make their TTFT a time to first output token, the gap in steps is no fixed "
    "share of the output length and grows with it where a think length would not, and "
    "DeepSeek-R1 behind the other frontends shows none of it (the replayed SGLang rows of "
    "sections 3a-3i, the same client and model: k at 64 or fewer users a median 7 over 14 "
    "rows at ISL / OSL 1,024 / 1,024 and 38 over 23 at 8,192 / 1,024, measured at 8a6878b7 "
    "by `python -m tests.benches.disagg_ttft_def`; no replayed SGLang row asks 8,192 out). "
    "No row is flagged as not "
    "comparable; the figures above stand. Left open: what the Dynamo + TensorRT-LLM "
    "disaggregated runs add that grows with the output length asked for. Not read: Dynamo "
    "at the rows' 0.8.1 release (its snapshot too large to fetch here; the index's copies "
    "are later) and the rows' own client logs (not published).",
    "",
)


def sglang_lines() -> list[str]:
    """The implied k over the replayed SGLang prospective rows (sections 3a-3i's DeepSeek-R1,
    the same client and model behind SGLang's own frontend): `python -m
    tests.benches.disagg_ttft_def` (some minutes of CPU: every SGLang row replayed)."""
    done = [r for r in (replay(x, prospective=True) for x in prospective_rows()
                        if x["backend"] == "sglang") if r.replayed]
    return [f"SGLang prospective rows replayed: {len(done)}", "", *implied_lines(done)]


if __name__ == "__main__":
    print("\n".join(sglang_lines()))
