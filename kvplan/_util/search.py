"""One monotone search, shared by the reverse questions (longest context, compute-bound batch,
absorbed-MLA crossover)."""

from __future__ import annotations

from collections.abc import Callable


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
