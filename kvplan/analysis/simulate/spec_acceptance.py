"""How many of a step's k drafts the target accepts (`simulate --spec-mean-accept-len` or
`--spec-acceptance-rate`): a workload's property, taken as an input in vLLM's own figures
(kvplan.engines.vllm.spec_decode: its SpecDecoding metrics log line), never defaulted.

A step's accepted drafts are a prefix: draft i counts only if drafts 1..i-1 did (rejection
sampling stops at the first rejected one). The draw follows a chain of conditional rates q_i
(draft i accepted given draft i-1 was), one uniform draw per request per step from a seeded
generator:

- a per-position list a_1..a_k (vLLM's "Per-position acceptance rate": steps whose draft i was
  accepted / steps) gives q_i = a_i / a_{i-1} (a_0 = 1), so P(draft i accepted) = a_i exactly;
- one rate P (vLLM's "Avg Draft acceptance rate", accepted / drafted) is the mean acceptance
  length L = 1 + P k; L alone fixes no per-position shape, so kvplan takes one rate q for every
  position (a geometric chain, the i.i.d. draft model of Leviathan et al. 2023, section 3.5),
  q solving q + q^2 + ... + q^k = L - 1 (bisection). An assumption: the output says it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from kvplan._util.errors import InputError


def chain_rate(mean_accept_len: float, k: int) -> float:
    """The one conditional rate q with q + q^2 + ... + q^k = mean_accept_len - 1.
    E.g. k 3, L 2.75: q + q^2 + q^3 = 1.75 at q = 0.7 (0.7 + 0.49 + 0.343 = 1.533) < 1.75 <
    q = 0.8 (0.8 + 0.64 + 0.512 = 1.952)."""
    target = mean_accept_len - 1
    if target <= 0 or target >= k:
        return 0.0 if target <= 0 else 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if sum(mid ** i for i in range(1, k + 1)) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass(frozen=True, kw_only=True)
class Acceptance:
    """The conditional acceptance rates of drafts 1..k and where they came from."""

    conditional: tuple[float, ...]
    source: str

    @property
    def k(self) -> int:
        return len(self.conditional)

    @property
    def per_position(self) -> tuple[float, ...]:
        """P(draft i accepted), vLLM's per-position acceptance rate."""
        out, p = [], 1.0
        for q in self.conditional:
            p *= q
            out.append(p)
        return tuple(out)

    @property
    def mean_accept_len(self) -> float:
        """1 + the expected accepted drafts a step (vLLM's mean acceptance length)."""
        return 1 + sum(self.per_position)

    def draw(self, rng: random.Random) -> int:
        """Accepted drafts in one request's step: the prefix of drafts the chain accepts. One
        uniform per position is drawn whether or not the chain got there, so two runs from one
        seed see the same uniforms, and higher rates accept at least as many drafts each step
        (more acceptance never slows a run down: tests/test_spec_decode_sim.py)."""
        u = [rng.random() for _ in self.conditional]
        n = 0
        for q, x in zip(self.conditional, u, strict=True):
            if x >= q:
                break
            n += 1
        return n

    @classmethod
    def of(cls, *, k: int, mean_accept_len: float | None = None,
           rates: Sequence[float] | None = None) -> Acceptance:
        """From `simulate --spec-mean-accept-len L` or `--spec-acceptance-rate` (one value:
        vLLM's average draft acceptance rate; k values: its per-position rates); one, not
        both, and no default (bad input: InputError naming the option)."""
        if (mean_accept_len is None) == (rates is None):
            raise InputError("simulate --speculative-method: give the drafts' acceptance, "
                             "--spec-mean-accept-len L or --spec-acceptance-rate P[,P2,...] "
                             "(vLLM's SpecDecoding metrics), one of them")
        if rates is not None:
            if any(not 0 <= r <= 1 for r in rates):
                raise InputError("--spec-acceptance-rate: each rate must be in [0, 1]")
            if len(rates) == 1:
                length = 1 + rates[0] * k
                return cls(conditional=(chain_rate(length, k),) * k,
                           source=f"--spec-acceptance-rate {rates[0]:g} (vLLM's average draft "
                                  f"acceptance rate: mean acceptance length {length:.3g}), one "
                                  "rate for every position (assumed)")
            if len(rates) != k:
                raise InputError(f"--spec-acceptance-rate: {len(rates)} per-position rates "
                                 f"for {k} speculative tokens (give {k}, or one average)")
            if any(b > a for a, b in zip(rates, rates[1:], strict=False)):
                raise InputError("--spec-acceptance-rate: per-position rates must not rise "
                                 "(draft i is accepted only after draft i-1)")
            cond, prev = [], 1.0
            for a in rates:
                cond.append(0.0 if prev == 0 else a / prev)
                prev = a
            return cls(conditional=tuple(cond),
                       source="--spec-acceptance-rate " + ",".join(f"{r:g}" for r in rates)
                              + " (vLLM's per-position acceptance rates)")
        assert mean_accept_len is not None
        if not 1 <= mean_accept_len <= 1 + k:
            raise InputError(f"--spec-mean-accept-len: {mean_accept_len:g} is outside [1, "
                             f"{1 + k}] (1 + --num-speculative-tokens)")
        return cls(conditional=(chain_rate(mean_accept_len, k),) * k,
                   source=f"--spec-mean-accept-len {mean_accept_len:g} (vLLM's mean "
                          "acceptance length), one rate for every position (assumed)")
