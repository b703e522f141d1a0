"""Workloads for the serving simulator: the requests (arrival, prompt and output lengths, the
shared content of the prompt), generated from a rate and length distributions or read from a
trace (kvplan.sources.traces). Pure: a seeded `random.Random`, no I/O.

Arrivals follow `vllm bench serve` (vllm/benchmarks/serve.py `get_request`): the first request
at t = 0, then gaps drawn from a gamma distribution of shape `burstiness` and scale
1 / (rate x burstiness) (burstiness 1: Poisson, exponential gaps); "constant" spaces them
1 / rate apart.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from kvplan._util.errors import InputError, unknown_choice
from kvplan.sources.traces import TraceRow

ARRIVALS = ("poisson", "constant", "gamma")


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """One request as the client sends it. `segments`: the prompt's leading content that other
    requests may share, in order, as (key, tokens): equal keys mean equal tokens (a trace's
    hash ids); the rest of the prompt and the output are the request's own."""

    arrival_s: float
    prompt_len: int
    output_len: int
    segments: tuple[tuple[Hashable, int], ...] = ()
    where: str = field(default="", compare=False)
    """Where it came from, for errors: a trace's file and line; "" for a synthetic request."""


def check_pulled(spec: RequestSpec, number: int, last_arrival: float,
                 max_model_len: int) -> None:
    """The two rules a scheduler applies to each request it pulls from the stream (vLLM's and
    the data-parallel lockstep alike): arrivals in order, and prompt + output within the max
    model length (vLLM refuses a longer request). Said naming the trace's file and line, or for
    synthetic requests the options that set the lengths."""
    where = spec.where or f"request {number}"
    if spec.arrival_s < last_arrival:
        raise InputError(f"{where}: arrives at {spec.arrival_s} s, before the one before it "
                         f"({last_arrival} s): requests must be in arrival order")
    if spec.prompt_len + spec.output_len > max_model_len:
        given = "" if spec.where else " (--input-len / --output-len against -c/--context)"
        raise InputError(f"{where}: {spec.prompt_len} prompt + {spec.output_len} output tokens "
                         f"exceed the max model length ({max_model_len}){given}")


@dataclass(frozen=True, kw_only=True)
class LengthDist:
    """A token-length distribution: fixed:N, uniform:LO:HI (inclusive), normal:MU:SIGMA,
    lognormal:MU:SIGMA (of the log); draws are rounded and at least 1."""

    kind: str
    a: float
    b: float = 0.0

    def draw(self, rng: random.Random) -> int:
        if self.kind == "fixed":
            return int(self.a)
        if self.kind == "uniform":
            return rng.randint(int(self.a), int(self.b))
        if self.kind == "normal":
            value = rng.gauss(self.a, self.b)
        else:
            value = rng.lognormvariate(self.a, self.b)
        return max(1, round(value))

    @property
    def mean(self) -> float:
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return (self.a + self.b) / 2
        if self.kind == "normal":
            return self.a
        return math.exp(self.a + self.b * self.b / 2)


def parse_length_dist(option: str, text: str) -> LengthDist:
    """`--input-len-dist` / `--output-len-dist` text as a LengthDist."""
    parts = text.strip().split(":")
    kind = parts[0].lower()
    arity = {"fixed": 1, "uniform": 2, "normal": 2, "lognormal": 2}
    if kind not in arity or len(parts) != arity[kind] + 1:
        raise InputError(f"{option}: expected fixed:N, uniform:LO:HI, normal:MU:SIGMA or "
                         f"lognormal:MU:SIGMA, got {text!r}")
    try:
        values = [float(p) for p in parts[1:]]
    except ValueError:
        raise InputError(f"{option}: {text!r}: the parameters must be numbers") from None
    if not all(math.isfinite(v) for v in values):
        raise InputError(f"{option}: {text!r}: the parameters must be finite")
    if kind == "fixed" and (values[0] < 1 or values[0] != int(values[0])):
        raise InputError(f"{option}: {text!r}: N must be a whole number >= 1")
    if kind == "uniform" and not (1 <= values[0] <= values[1]
                                  and all(v == int(v) for v in values)):
        raise InputError(f"{option}: {text!r}: expected whole numbers 1 <= LO <= HI")
    if kind in ("normal", "lognormal") and values[1] < 0:
        raise InputError(f"{option}: {text!r}: SIGMA must be >= 0")
    if kind == "normal" and values[0] < 1:
        raise InputError(f"{option}: {text!r}: MU must be >= 1")
    return LengthDist(kind=kind, a=values[0], b=values[1] if len(values) > 1 else 0.0)


def arrival_gaps(rate: float | None, arrival: str, burstiness: float,
                 rng: random.Random) -> Iterator[float]:
    """Gaps between successive requests (the first is sent at 0); rate None: all at once."""
    if arrival not in ARRIVALS:
        raise unknown_choice("--arrival", ARRIVALS, arrival)
    if rate is not None and not (rate > 0 and math.isfinite(rate)):
        raise InputError(f"--rate: must be a positive number, got {rate}")
    if burstiness <= 0:
        raise InputError(f"--burstiness: must be > 0, got {burstiness}")
    shape = 1.0 if arrival == "poisson" else burstiness
    while True:
        if rate is None:
            yield 0.0
        elif arrival == "constant":
            yield 1.0 / rate
        else:
            yield rng.gammavariate(shape, 1.0 / (rate * shape))


def synthetic(*, num_requests: int, input_len: LengthDist, output_len: LengthDist,
              rate: float | None, arrival: str = "poisson", burstiness: float = 1.0,
              prefix_len: int = 0, seed: int = 0,
              lengths: Sequence[tuple[int, int]] | None = None) -> Iterator[RequestSpec]:
    """`num_requests` requests with lengths drawn from the distributions and arrivals at
    `rate` per second (None: all at t = 0). `prefix_len`: tokens every prompt starts with (one
    shared system prompt), added to the drawn input length. `lengths`: each request's (input,
    output) as a benchmark client drew them (kvplan.analysis.simulate.range_ratio), in place
    of the distributions."""
    if num_requests < 1:
        raise InputError(f"--num-requests: must be >= 1, got {num_requests}")
    rng = random.Random(seed)
    gaps = arrival_gaps(rate, arrival, burstiness, rng)
    segments: tuple[tuple[Hashable, int], ...] = (("prefix", prefix_len),) if prefix_len else ()
    t = 0.0
    for i in range(num_requests):
        if i:
            t += next(gaps)
        if lengths is not None:
            drawn_in, drawn_out = lengths[i]
        else:
            drawn_in = input_len.draw(rng)
            drawn_out = output_len.draw(rng)
        yield RequestSpec(arrival_s=t, prompt_len=prefix_len + drawn_in,
                          output_len=drawn_out, segments=segments)


def from_trace(rows: Iterable[TraceRow], *, num_requests: int | None = None,
               rate: float | None = None, arrival: str = "poisson", burstiness: float = 1.0,
               seed: int = 0) -> Iterator[RequestSpec]:
    """A trace's requests: its own arrival times, or with `rate` (or for a format without
    times) arrivals drawn as `synthetic` draws them (none and no rate: all at t = 0); the first
    `num_requests` rows only, if given."""
    rng = random.Random(seed)
    gaps = arrival_gaps(rate, arrival, burstiness, rng)
    t = 0.0
    for i, row in enumerate(rows):
        if num_requests is not None and i >= num_requests:
            return
        if rate is None and row.arrival_s is not None:
            if row.arrival_s < t:  # said here, with the file and line (fuzz58: the scheduler
                # said only "request N"); with --rate the trace's times are not used
                raise InputError(f"{row.where or f'trace row {i}'}: arrives at "
                                 f"{row.arrival_s:g} s, before the row before it ({t:g} s): a "
                                 "trace's rows must be in arrival order (or give --rate)")
            t = row.arrival_s
        elif i:
            t += next(gaps)
        yield RequestSpec(arrival_s=t, prompt_len=row.prompt_len, output_len=row.output_len,
                          segments=row.segments, where=row.where)


@dataclass(frozen=True, kw_only=True)
class WorkloadOptions:
    """`kvplan simulate`'s workload options, as given."""

    num_requests: int | None = None  # None: 1,000 synthetic, or the whole trace
    rate: float | None = None  # requests per second; None: all at once (or the trace's times)
    arrival: str = "poisson"
    burstiness: float = 1.0
    concurrency: int | None = None
    input_len: int = 1024
    output_len: int = 128
    input_len_dist: str | None = None
    output_len_dist: str | None = None
    # A benchmark client's random dataset spread (kvplan.analysis.simulate.range_ratio): its
    # --random-range-ratio and whose convention reads it (None: vllm's); None: fixed lengths.
    random_range_ratio: float | None = None
    range_ratio_convention: str | None = None
    prefix_len: int = 0
    seed: int = 0
    trace: str | None = None
    trace_format: str | None = None
    trace_block_tokens: int = 512
    tokenizer: str | None = None
    max_requests: int | None = None  # the bound on synthetic requests; None: MAX_REQUESTS


DEFAULT_REQUESTS = 1000
# Synthetic requests simulated at most, unless raised (issue 32: bounded before the work). The
# simulator takes about 0.6 ms of CPU per request (examples/simulate-speed.md: 100,000 trace
# requests in 56.1 s of CPU), so 2,000,000 is about 19 minutes on one core.
MAX_REQUESTS = 2_000_000
CPU_S_PER_REQUEST = 56.1 / 100_000  # examples/simulate-speed.md, the 100,000-request row


def requests_from(options: WorkloadOptions) -> Iterator[RequestSpec]:
    """The request stream the options describe (a trace is read lazily)."""
    from pathlib import Path

    from kvplan.sources.traces import read_trace, tokenizer_counter

    o = options
    if o.concurrency is not None and o.concurrency < 1:
        raise InputError(f"--concurrency: must be >= 1, got {o.concurrency}")
    if o.arrival != "poisson" and o.rate is None:
        raise InputError(f"--arrival {o.arrival}: needs --rate")
    if o.burstiness != 1.0 and o.arrival != "gamma":
        raise InputError("--burstiness: needs --arrival gamma")
    if o.rate is None and o.concurrency is None and o.trace is None:
        raise InputError("give --rate R (open loop), --concurrency C (closed loop) or --trace")
    if o.trace is not None:
        if o.trace_format is None:
            raise InputError("--trace: give --trace-format (mooncake, burstgpt, azure, sharegpt)")
        given = [name for name, v in (("--input-len-dist", o.input_len_dist),
                                      ("--output-len-dist", o.output_len_dist)) if v]
        if o.random_range_ratio is not None:
            given.append("--random-range-ratio")
        if given:
            raise InputError(f"{given[0]}: the trace sets the lengths")
        counter = tokenizer_counter(Path(o.tokenizer)) if o.tokenizer else None
        rows = read_trace(Path(o.trace), o.trace_format, block_tokens=o.trace_block_tokens,
                          count_tokens=counter)
        return from_trace(rows, num_requests=o.num_requests, rate=o.rate, arrival=o.arrival,
                          burstiness=o.burstiness, seed=o.seed)
    if o.trace_format is not None:
        raise InputError("--trace-format: needs --trace FILE")
    if o.input_len < 1 or o.output_len < 1:
        raise InputError("--input-len / --output-len: must be >= 1")
    input_dist = (parse_length_dist("--input-len-dist", o.input_len_dist) if o.input_len_dist
                  else LengthDist(kind="fixed", a=o.input_len))
    output_dist = (parse_length_dist("--output-len-dist", o.output_len_dist)
                   if o.output_len_dist else LengthDist(kind="fixed", a=o.output_len))
    if o.prefix_len < 0:
        raise InputError("--prefix-len: must be >= 0")
    n, bound = o.num_requests or DEFAULT_REQUESTS, o.max_requests or MAX_REQUESTS
    if n > bound:
        raise InputError(
            f"--num-requests: {n:,} is over the simulator's bound of {bound:,} requests (about "
            f"{CPU_S_PER_REQUEST * 1e3:.0f} ms of CPU each, {bound * CPU_S_PER_REQUEST / 60:,.0f}"
            " min); give fewer, or raise it with `kvplan simulate --max-sim-requests N`")
    lengths = None
    if o.range_ratio_convention is not None and o.random_range_ratio is None:
        raise InputError("--range-ratio-convention: needs --random-range-ratio R")
    if o.random_range_ratio is not None:
        from kvplan.analysis.simulate.range_ratio import client_lengths

        given = [name for name, v in (("--input-len-dist", o.input_len_dist),
                                      ("--output-len-dist", o.output_len_dist)) if v]
        if given:
            raise InputError(f"{given[0]}: not with --random-range-ratio (the client's spread "
                             "sets the lengths)")
        # The client draws every length before the first request is sent (its own seed,
        # --seed); the arrivals are kvplan's draws after.
        lengths = client_lengths(o.range_ratio_convention or "vllm",
                                 o.random_range_ratio).lengths(n, o.input_len, o.output_len,
                                                               o.seed)
    return synthetic(num_requests=n, input_len=input_dist,
                     output_len=output_dist, rate=o.rate, arrival=o.arrival,
                     burstiness=o.burstiness, prefix_len=o.prefix_len, seed=o.seed,
                     lengths=lengths)
