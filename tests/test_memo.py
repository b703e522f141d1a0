"""kvplan._util.memo.pure_cache and the caches on it (weight_breakdown, count_params): a cached
answer equals the uncached one for every argument it depends on; unhashable arguments fall back
to an uncached call."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kvplan._util.memo import pure_cache
from kvplan.capacity.weights import loaded_formats
from kvplan.sources.resolve import load_model
from kvplan.weights.breakdown import _weight_breakdown, weight_breakdown
from kvplan.weights.params import count_params

ROOT = Path(__file__).resolve().parents[1]


def test_pure_cache_calls_once_per_key_and_falls_back_on_unhashable() -> None:
    calls: list[object] = []

    @pure_cache(maxsize=8)
    def total(xs, scale=1):
        calls.append(xs)
        return sum(xs) * scale

    assert total((1, 2)) == 3 and total((1, 2)) == 3 and len(calls) == 1
    assert total((1, 2), scale=2) == 6 and len(calls) == 2  # every argument is in the key
    assert total([1, 2]) == 3 and total([1, 2]) == 3 and len(calls) == 4  # a list: uncached


def test_cached_breakdown_equals_the_uncached_one_at_every_argument() -> None:
    # DeepSeek-V3's MLA and experts at TP 1 and 8, the first and last stage apart: each key
    # gets its own answer, equal to the function's uncached one.
    spec, _ = load_model(str(ROOT / "tests/data/configs/deepseek-v3.json"))
    quant, dtype = loaded_formats(spec)
    raw = _weight_breakdown.__wrapped__
    seen = set()
    for kw in ({"tp": 1}, {"tp": 8}, {"tp": 8, "layers": range(0, 30), "last": False},
               {"tp": 8, "layers": range(30, 61), "first": False}):
        got = weight_breakdown(spec, quant, dtype=dtype, **kw)
        assert got == raw(spec, quant, dtype, kw["tp"], kw.get("layers"), kw.get("first", True),
                          kw.get("last", True), True, False, None)
        seen.add(got.total)
    assert len(seen) == 4
    # An equal spec (a copy) hits the cache; a changed one does not.
    assert weight_breakdown(replace(spec), quant, dtype=dtype, tp=8).total in seen
    fewer = replace(spec, num_hidden_layers=30)
    assert weight_breakdown(fewer, quant, dtype=dtype, tp=8).total not in seen
    assert count_params(fewer).total < count_params(spec).total
