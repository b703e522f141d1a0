"""Request traces for `kvplan simulate --trace FILE --trace-format F`, read as a stream (one
request at a time, whatever the file's size), each row as (arrival seconds, prompt tokens, output
tokens, shared prompt segments). Formats, as their public releases lay them out:

- mooncake: JSON lines ``{"timestamp": ms, "input_length": n, "output_length": n, "hash_ids":
  [...]}`` (kvcache-ai/Mooncake, FAST25-release/traces): `timestamp` in milliseconds since the
  first request; each hash id names one block of `block_tokens` (512) prompt tokens, equal ids
  meaning equal tokens (the last block may be partial).
- burstgpt: CSV with header ``Timestamp,Model,Request tokens,Response tokens,Total tokens,Log
  Type`` (HPMLL/BurstGPT, data/BurstGPT_*.csv): `Timestamp` in seconds; rows with 0 response
  tokens (failures) are skipped.
- azure: CSV with header ``TIMESTAMP,ContextTokens,GeneratedTokens`` (Azure/AzurePublicDataset,
  data/AzureLLMInferenceTrace_{conv,code}.csv): TIMESTAMP a date and time
  ("2023-11-16 18:15:46.6805900", fractions beyond microseconds dropped, a +00:00 offset
  allowed).
- sharegpt: a JSON list of ``{"conversations": [{"from": "human", "value": ...}, {"from":
  "gpt", "value": ...}, ...]}``, each conversation's first human turn the prompt and the turn
  after it the output (vllm/benchmarks/datasets.py ShareGPTDataset); token counts need a
  tokenizer (`count_tokens`), and the file has no arrival times (they come from --rate). The
  JSON list is read whole.

Errors name the file, the line (or entry) and the field; exit 2.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from kvplan._util.errors import InputError, unknown_choice

TRACE_FORMATS = ("mooncake", "burstgpt", "azure", "sharegpt")
MOONCAKE_BLOCK_TOKENS = 512


@dataclass(frozen=True, slots=True)
class TraceRow:
    """One request of a trace. `arrival_s`: seconds since the trace's first request (None: the
    format has no times); `segments`: the prompt's shareable blocks in order, (key, tokens)."""

    arrival_s: float | None
    prompt_len: int
    output_len: int
    segments: tuple[tuple[Hashable, int], ...] = ()
    where: str = field(default="", compare=False)
    """The file and line (or entry) the row was read from, for errors found downstream."""


def _count(path: Path, where: str, field: str, value: object, *, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"{path}: {where}: {field}: expected a whole number, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{path}: {where}: {field}: expected a whole number, got {value!r}"
                         ) from None
    if not math.isfinite(number) or number != int(number) or number < least:
        raise InputError(f"{path}: {where}: {field}: expected a whole number >= {least}, got "
                         f"{value!r}")
    return int(number)


def _seconds(path: Path, where: str, field: str, value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{path}: {where}: {field}: expected a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise InputError(f"{path}: {where}: {field}: expected a time >= 0, got {value!r}")
    return number


def read_mooncake(path: Path, *, block_tokens: int = MOONCAKE_BLOCK_TOKENS
                  ) -> Iterator[TraceRow]:
    """Mooncake JSON lines (module docstring)."""
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"line {number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}: {where}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise InputError(f"{path}: {where}: expected a JSON object")
            for key in ("timestamp", "input_length", "output_length"):
                if key not in row:
                    raise InputError(f"{path}: {where}: {key}: missing")
            t = _seconds(path, where, "timestamp", row["timestamp"]) / 1e3
            prompt = _count(path, where, "input_length", row["input_length"])
            output = _count(path, where, "output_length", row["output_length"])
            ids = row.get("hash_ids", [])
            if not isinstance(ids, list):
                raise InputError(f"{path}: {where}: hash_ids: expected a list")
            if len(ids) > 1 and prompt <= (len(ids) - 1) * block_tokens:
                raise InputError(f"{path}: {where}: hash_ids: {len(ids)} blocks of "
                                 f"{block_tokens} tokens for input_length {prompt}")
            segments = []
            for i, h in enumerate(ids):
                if isinstance(h, bool) or not isinstance(h, (int, str)):
                    raise InputError(f"{path}: {where}: hash_ids: expected ids, got {h!r}")
                size = min(block_tokens, prompt - i * block_tokens)
                segments.append((("mooncake", h), size))
            yield TraceRow(arrival_s=t, prompt_len=prompt, output_len=output,
                           segments=tuple(segments), where=f"{path}: {where}")


def _csv_rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[str, dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        header = [c.strip() for c in (reader.fieldnames or [])]
        missing = [c for c in columns if c not in header]
        if missing:
            raise InputError(f"{path}: header: missing column(s) {', '.join(missing)} "
                             f"(expected {', '.join(columns)})")
        reader.fieldnames = header
        for row in reader:
            yield f"line {reader.line_num}", row


def read_burstgpt(path: Path) -> Iterator[TraceRow]:
    """BurstGPT CSV (module docstring); failed requests (0 response tokens) are skipped."""
    first: float | None = None
    for where, row in _csv_rows(path, ("Timestamp", "Request tokens", "Response tokens")):
        t = _seconds(path, where, "Timestamp", row["Timestamp"])
        output = _count(path, where, "Response tokens", row["Response tokens"], least=0)
        if output == 0:
            continue
        first = t if first is None else first
        yield TraceRow(arrival_s=t - first,
                       prompt_len=_count(path, where, "Request tokens", row["Request tokens"]),
                       output_len=output, where=f"{path}: {where}")


def _azure_time(path: Path, where: str, text: str) -> float:
    value = text.strip()
    if value.endswith("+00:00"):
        value = value[:-6]
    if "." in value:
        head, frac = value.split(".", 1)
        value = f"{head}.{frac[:6]}"
    try:
        return datetime.fromisoformat(value).replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        raise InputError(f"{path}: {where}: TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS.ffffff', "
                         f"got {text!r}") from None


def read_azure(path: Path) -> Iterator[TraceRow]:
    """Azure LLM inference trace CSV (module docstring)."""
    first: float | None = None
    for where, row in _csv_rows(path, ("TIMESTAMP", "ContextTokens", "GeneratedTokens")):
        t = _azure_time(path, where, row["TIMESTAMP"])
        first = t if first is None else first
        yield TraceRow(arrival_s=t - first,
                       prompt_len=_count(path, where, "ContextTokens", row["ContextTokens"]),
                       output_len=_count(path, where, "GeneratedTokens",
                                         row["GeneratedTokens"]), where=f"{path}: {where}")


def read_sharegpt(path: Path, count_tokens: Callable[[str], int] | None) -> Iterator[TraceRow]:
    """ShareGPT JSON (module docstring): the first human turn and the reply after it."""
    if count_tokens is None:
        raise InputError(f"{path}: --trace-format sharegpt: token counts need a tokenizer "
                         "(--tokenizer tokenizer.json, with the 'tokenizers' package)")
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(entries, list):
        raise InputError(f"{path}: expected a JSON list of conversations")
    for i, entry in enumerate(entries):
        turns = entry.get("conversations") if isinstance(entry, dict) else None
        if not isinstance(turns, list):
            raise InputError(f"{path}: entry {i}: conversations: missing or not a list")
        texts = [t.get("value") for t in turns[:2] if isinstance(t, dict)]
        if len(texts) < 2 or not all(isinstance(t, str) for t in texts):
            continue  # vLLM's sampler skips conversations with fewer than two turns
        prompt, output = count_tokens(texts[0]), count_tokens(texts[1])
        if prompt < 1 or output < 1:
            continue
        yield TraceRow(arrival_s=None, prompt_len=prompt, output_len=output,
                       where=f"{path}: entry {i}")


def read_trace(path: Path, fmt: str, *, block_tokens: int = MOONCAKE_BLOCK_TOKENS,
               count_tokens: Callable[[str], int] | None = None) -> Iterator[TraceRow]:
    """The rows of `path` in format `fmt`, as a stream."""
    if fmt not in TRACE_FORMATS:
        raise unknown_choice("--trace-format", TRACE_FORMATS, fmt)
    if not path.is_file():
        raise InputError(f"{path}: --trace: no such file")
    if fmt == "mooncake":
        return read_mooncake(path, block_tokens=block_tokens)
    if fmt == "burstgpt":
        return read_burstgpt(path)
    if fmt == "azure":
        return read_azure(path)
    return read_sharegpt(path, count_tokens)


def tokenizer_counter(path: Path) -> Callable[[str], int]:
    """Token counts with a Hugging Face tokenizer.json (the 'tokenizers' package, imported
    here only)."""
    try:
        from tokenizers import Tokenizer  # type: ignore[import-not-found]
    except ImportError:
        raise InputError("--tokenizer: needs the 'tokenizers' package (pip install tokenizers)"
                         ) from None
    if not path.is_file():
        raise InputError(f"{path}: --tokenizer: no such file")
    tok = Tokenizer.from_file(str(path))
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)
