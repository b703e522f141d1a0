"""What the SGLang radix-cache tests share (tests/test_simulate_sglang_mamba_radix.py,
tests/test_simulate_sglang_swa_radix.py): the three-request Mooncake trace their hand
derivations walk, the shared-prefix requests their properties draw, and a recorder of each
prefix match a tree keeps."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kvplan.analysis.simulate.workload import RequestSpec, from_trace
from kvplan.sources.traces import read_trace

# A Mooncake trace (kvplan.sources.traces, blocks of 100 tokens here): A sends blocks 1 - 10
# (s1's 1,000 tokens); the second request (B in the mamba test's derivation, D in the SWA
# test's), 5 s later, s1's first 900 (blocks 1 - 9) and 100 of its own (21); C, 10 s later,
# s1's 1,000 and 50 of its own (31, partial). Two output tokens each: each request ends before
# the next comes. Queried: 1,000 + 1,000 + 1,050 = 3,050 tokens.
TRACE = "\n".join(json.dumps(row) for row in (
    {"timestamp": 0, "input_length": 1_000, "output_length": 2, "hash_ids": list(range(1, 11))},
    {"timestamp": 5_000, "input_length": 1_000, "output_length": 2,
     "hash_ids": [*range(1, 10), 21]},
    {"timestamp": 10_000, "input_length": 1_050, "output_length": 2,
     "hash_ids": [*range(1, 11), 31]}))


def three_requests(tmp_path: Path) -> list[RequestSpec]:
    """`TRACE`'s requests, read as `kvplan simulate --trace` reads the file."""
    path = tmp_path / "trace.jsonl"
    path.write_text(TRACE + "\n", encoding="utf-8")
    return list(from_trace(read_trace(path, "mooncake", block_tokens=100)))


def shared_prefix_requests(draws: list[tuple[int, int, int, int]]) -> list[RequestSpec]:
    """Requests sharing prefixes of three system prompts (keys 0 - 2), each draw (key, shared
    tokens, its own tokens, output tokens), 50 ms apart; with no tokens of its own a prompt is
    all shared prefix and ends where a later one can match."""
    out = []
    for i, (sys_key, shared, own, out_len) in enumerate(draws):
        segments = ((("sys", sys_key), shared),)
        out.append(RequestSpec(arrival_s=0.05 * i, prompt_len=shared + own, output_len=out_len,
                               segments=segments))
    return out


@contextmanager
def recorded_matches(tree: Any, record: Callable[[list[Any], list[Any]], None]
                     ) -> Iterator[None]:
    """Inside, every `tree.match(hit)` (a class's method: the mamba or SWA radix tree) also
    passes (hit, what it kept) to `record`; the method is restored on leaving."""
    original = tree.match

    def match(self: Any, hit: list[Any]) -> list[Any]:
        kept = original(self, hit)
        record(hit, kept)
        return kept

    tree.match = match
    try:
        yield
    finally:
        tree.match = original
