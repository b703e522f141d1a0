"""Reload or recompute: the time to copy an offloaded prefix back into HBM over the GPU's host
link (PCIe Gen4 / Gen5, NVLink-C2C; a disk tier's read bandwidth) against the time model's
prefill of the same tokens, and the prefix length above which reloading wins.

reload_s(n)    = n x bytes_per_token / link_bytes_per_s   (one rank's slice over its own link;
                 the ranks reload in parallel; no fixed latency is added)
recompute_s(n) = the time model's prefill of an n-token prompt on its own
                 (kvplan.perf.roofline.step_time, phase="prefill")

`reload_wins_above_tokens` is the smallest whole-block n from which reloading is faster for
every longer prefix up to the context (None: it never is). The prefill of a short prompt is
bound by reading the weights, so a reload of a few blocks usually wins.

Within a prompt of P tokens the rest is prefilled anyway, so a hit of n tokens saves only
saved_s(n) = step(P tokens from 0) - step(P - n tokens after n cached ones)
(kvplan.perf.mixed_step.MixedStepCost, one prefill chunk each): the weights are read either way.
`reload_wins_in_prompt_above_tokens` compares the reload with that.
"""

from __future__ import annotations

from collections.abc import Callable

from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time


def reload_ms(tokens: int, bytes_per_token: int, link_bytes_per_s: float) -> float:
    return tokens * bytes_per_token / link_bytes_per_s * 1e3


class Recompute:
    """The time model's prefill of n tokens on one rank of `layout` (memoised)."""

    def __init__(self, spec: ModelSpec, gpu: GPU, *, kv_dtype: str, layout: Layout,
                 eff: Efficiency | None = None) -> None:
        # `eff`: the fractions to time with (None: the GPU's, device_efficiency).
        self.spec, self.gpu, self.kv_dtype, self.layout = spec, gpu, kv_dtype, layout
        self.eff = eff
        self._memo: dict[int, float] = {}
        self._mixed: MixedStepCost | None = None

    def ms(self, tokens: int) -> float:
        hit = self._memo.get(tokens)
        if hit is None:
            st = step_time(self.spec, self.gpu, tokens=tokens, context=tokens, requests=1,
                           phase="prefill", logits=1, kv_dtype=self.kv_dtype, layout=self.layout,
                           eff=self.eff)
            hit = self._memo[tokens] = st.seconds * 1e3
        return hit

    def saved_ms(self, tokens: int, prompt: int) -> float:
        """The prefill a hit of `tokens` saves in a prompt of `prompt` tokens."""
        if self._mixed is None:
            self._mixed = MixedStepCost(self.spec, self.gpu, kv_dtype=self.kv_dtype,
                                        layout=self.layout, eff=self.eff)
        whole = self._mixed.seconds(decode_contexts=[], chunks=[(0, prompt)])
        rest = self._mixed.seconds(decode_contexts=[], chunks=[(tokens, prompt - tokens)])
        return (whole - rest) * 1e3


def reload_wins_above_tokens(recompute_ms: Callable[[int], float], *, bytes_per_token: int,
                             link_bytes_per_s: float, block: int, max_tokens: int) -> int | None:
    """The smallest whole-block prefix from which reloading beats recomputing (`recompute_ms`
    of the prefix's tokens) for every longer prefix up to `max_tokens` (None: never). Checked
    at whole blocks doubling from one block, then bisected between the last point recompute
    won and the next."""
    def wins(n: int) -> bool:
        return reload_ms(n, bytes_per_token, link_bytes_per_s) < recompute_ms(n)

    top = max_tokens // block * block
    if top < block:
        return None
    points, n = [], block
    while n < top:
        points.append(n)
        n *= 2
    points.append(top)
    lost = [p for p in points if not wins(p)]
    if not lost:
        return block
    if lost[-1] == top:
        return None
    lo = lost[-1] // block  # recompute wins here (in blocks)
    hi = points[points.index(lost[-1]) + 1] // block  # reload wins here and beyond
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if wins(mid * block):
            hi = mid
        else:
            lo = mid
    return hi * block
