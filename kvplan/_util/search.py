"""Searches: one monotone search, shared by the reverse questions (longest context, compute-bound
batch, absorbed-MLA crossover), and the "did you mean" of a mistyped name (GPUs, models)."""

from __future__ import annotations

from collections.abc import Callable, Iterable


def first_true(pred: Callable[[int], bool], *, start: int = 1, limit: int) -> int | None:
    """The smallest n in [start, limit] with pred(n) true, for a pred that stays true once it
    turns true; None if pred(limit) is false. Doubles from `start`, then bisects: O(log limit)
    calls."""
    if pred(start):
        return start
    lo, hi = start, start
    while not pred(hi):  # invariant: pred(lo) is false
        lo = hi
        if hi >= limit:
            return None
        hi = min(2 * hi, limit)
    while hi - lo > 1:  # pred(hi) true, pred(lo) false
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


def close_names(word: str, names: Iterable[str], *, key: Callable[[str], str] = str.lower,
                n: int = 3) -> list[str]:
    """The names closest to a mistyped `word` ("did you mean"), best first, compared by `key`
    (difflib's ratio, at least 0.6), each name once."""
    import difflib  # only on the error path

    by_key: dict[str, str] = {}
    for name in names:
        by_key.setdefault(key(name), name)
    close = difflib.get_close_matches(key(word), list(by_key), n=max(n, 8), cutoff=0.6)
    return list(dict.fromkeys(by_key[k] for k in close))[:n]
