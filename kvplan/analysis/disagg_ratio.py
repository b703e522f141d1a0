"""The x prefill : y decode workers (xPyD) a disaggregated deployment needs for a target, from
kvplan's time model (kvplan.perf) and each role's KV capacity, with no fitted factor.

- Decode: a worker holds n requests; each attention rank decodes ceil(n / ranks) of them per
  step at the time model's TPOT (at the mean decode context I + O / 2). With --concurrency C,
  n = ceil(C / y); with --rate R, n solves Little's law n = R / y x (O x TPOT(n) + transfer)
  (iterated to its fixed point). The decode pool also holds the requests whose KV is in flight
  from prefill (R / y x transfer): n plus those must fit the worker's KV capacity (requests of
  I + O tokens, the same count `kvplan plan` gives), a hard limit.
- Prefill: a worker serves one prompt of I tokens per prefill time on each of its replicas
  (attention-DP ranks or DP engines), so x workers serve R with utilisation
  rho = R x prefill / (x x replicas); TTFT = queue + prefill + handover, the queue an M/D/1
  wait per replica, rho / (2 (1 - rho)) x prefill (Poisson arrivals, one prompt length).
- The handover, where the connector's flow is read (`Handover.first_token_steps`, e.g. vLLM's
  NixlConnector): the decode worker sees the transfer end on one of its step boundaries, then
  takes that many more steps to the first token, all at the decode step time of the running
  batch: max(1, ceil(transfer / step)) x step + first_token_steps x step. Otherwise the
  transfer time alone.
- At a stated concurrency with the engine's prefill batching known (`PrefillBatching`),
  `evaluate_xy` (one given xPyD, as the bench replays published rows) takes TTFT and TPOT from
  the closed-loop simulation of both roles instead (kvplan.analysis.simulate.disagg_sim):
  prompts batched per step up to the engine's token budget, the handover on the decode
  worker's simulated step boundaries, the decode steps at their simulated batch. The ratio
  search (`plan_ratio`, up to 32 x 32 options per target, and every --rate target) keeps the
  M/D/1 formulas above: a simulation per option is too slow there.
- --slo-tpot-ms bounds the decode batch, --slo-ttft-ms the prefill utilisation (without it,
  the mean queue is held to one prefill: rho <= 2/3). Options list, for the first decode
  counts y that serve the target, the fewest prefill workers; the chosen one is the cheapest
  (by --price, else by GPUs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvplan.analysis.plan_types import Candidate
from kvplan.analysis.simulate.bench_client import BenchClient
from kvplan.analysis.simulate.disagg_local import LocalPrefillFlow, simulate_disagg_local
from kvplan.analysis.simulate.disagg_queue import QueuedTransferFlow, simulate_disagg_queued
from kvplan.analysis.simulate.disagg_sim import DisaggSimInputs, simulate_disagg
from kvplan.analysis.simulate.sim_types import SchedulerConfig
from kvplan.engines.dynamo_frontend import FrontendRouting
from kvplan.engines.handover import DecodeAdmission, PrefillBalance


@dataclass(frozen=True, kw_only=True)
class RatioTarget:
    """What the ratio serves: a concurrency or a request rate, within SLOs."""

    output_len: int
    concurrency: int | None = None
    rate: float | None = None  # requests per second
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None
    price_per_gpu_hour: float | None = None
    max_workers: int = 32  # per role


@dataclass(frozen=True, kw_only=True)
class PrefillBatching:
    """How a prefill rank batches prompts per step (the engine's scheduler: token budget,
    seats, chunking), the most requests a decode rank runs, and the time of one prefill step
    (`step_ms(tokens, prompts)` on the busiest rank, prompts of `input_len` tokens; None: not
    modelled)."""

    input_len: int
    token_budget: int
    max_seqs: int
    chunked: bool
    decode_max_seqs: int
    step_ms: Callable[[int, int], float | None]
    # The decode rank's admission before the prefill, where the connector's flow has one
    # (kvplan.engines.handover.DecodeAdmission; the simulation holds each prompt until then).
    decode_admission: DecodeAdmission | None = None
    # The engine's input budget per prefill step besides the token budget (SGLang's
    # --max-prefill-tokens: kvplan.analysis.simulate.disagg_sim); None: none.
    input_budget: int | None = None
    # Which attention-DP rank of a prefill worker takes a prompt, as the engine picks it
    # (kvplan.engines.handover.PrefillBalance, the connector's `prefill_balance`); None: the
    # simulation's least-loaded rank.
    prefill_balance: PrefillBalance | None = None


@dataclass(frozen=True, kw_only=True)
class RatioOption:
    prefill_workers: int
    decode_workers: int
    gpus: int
    cost_per_hour_usd: float | None
    rate_rps: float  # requests per second served
    decode_in_flight: int  # requests per decode worker (decoding)
    decode_batch: int  # per attention rank
    prefill_utilization: float
    ttft_ms: float
    tpot_ms: float
    meets_slo: bool

    @property
    def label(self) -> str:
        return f"{self.prefill_workers}P{self.decode_workers}D"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "prefill_workers": self.prefill_workers,
                "decode_workers": self.decode_workers, "gpus": self.gpus,
                "cost_per_hour_usd": self.cost_per_hour_usd, "rate_rps": self.rate_rps,
                "decode_in_flight_per_worker": self.decode_in_flight,
                "decode_batch_per_rank": self.decode_batch,
                "prefill_utilization": self.prefill_utilization, "ttft_ms": self.ttft_ms,
                "tpot_ms": self.tpot_ms, "meets_slo": self.meets_slo}


@dataclass(frozen=True, kw_only=True)
class RatioPlan:
    target: str  # "concurrency 64" / "rate 2 req/s"
    prefill_ms: float
    transfer_ms: float
    decode_kv_requests: int  # requests of I + O tokens one decode worker's KV holds
    options: tuple[RatioOption, ...]
    chosen: RatioOption | None
    reason: str = ""  # when nothing serves the target: why
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None

    @property
    def decode_batch(self) -> int:
        return self.chosen.decode_batch if self.chosen is not None else 1

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "prefill_ms": self.prefill_ms,
                "transfer_ms": self.transfer_ms,
                "decode_kv_requests_per_worker": self.decode_kv_requests,
                "chosen": self.chosen.to_dict() if self.chosen else None,
                "options": [o.to_dict() for o in self.options], "reason": self.reason or None,
                "slo_ttft_ms": self.slo_ttft_ms, "slo_tpot_ms": self.slo_tpot_ms}


# Without --slo-ttft-ms, prefill workers are added until the mean queue is no longer than one
# prefill: the M/D/1 wait rho / (2 (1 - rho)) x prefill <= prefill holds for rho <= 2/3 (a
# stated default, not fitted; --slo-ttft-ms replaces it).
DEFAULT_MAX_UTILIZATION = 2 / 3
MAX_OPTIONS = 4  # options listed: the first decode counts that serve the target


def _md1_wait_s(rho: float, service_s: float) -> float:
    """Mean wait in an M/D/1 queue (Pollaczek-Khinchine with zero service variance)."""
    return rho / (2 * (1 - rho)) * service_s


class _Model:
    """The two roles' times for one target: the decode state of y workers, the option of x
    prefill workers with them."""

    def __init__(self, req: RatioTarget, prefill: Candidate, decode: Candidate,
                 transfer_s: float, prefill_ms: float,
                 decode_tpot_ms: Callable[[int], float | None],
                 first_token_steps: float | None = None) -> None:
        self.req, self.prefill, self.decode, self.transfer_s = req, prefill, decode, transfer_s
        self.first_token_steps = first_token_steps
        self.prefill_s = prefill_ms / 1e3
        self._tpot_ms = decode_tpot_ms
        self._tpots: dict[int, float | None] = {}

    def tpot_s(self, batch: int) -> float | None:
        if batch not in self._tpots:
            self._tpots[batch] = self._tpot_ms(batch)
        t = self._tpots[batch]
        return None if t is None else t / 1e3

    def decode_state(self, y: int) -> tuple[int, int, float, float] | None:
        """(requests per decode worker, per attention rank, TPOT s, rate req/s) for y decode
        workers, or None where the time model has no answer."""
        req, ranks, kv_cap = self.req, self.decode.layout.replicas, self.decode.requests
        if req.concurrency is not None:
            n = -(-req.concurrency // y)
            t = self.tpot_s(-(-n // ranks))
            if t is None:
                return None
            return n, -(-n // ranks), t, y * n / (req.output_len * t + self.transfer_s)
        assert req.rate is not None
        n, t = 1, self.tpot_s(1)
        for _ in range(30):  # Little's law fixed point: n = R / y x (O x TPOT(n) + xfer)
            if t is None or n > 4 * kv_cap:
                break
            nxt = max(1, math.ceil(req.rate / y * (req.output_len * t + self.transfer_s)))
            if nxt == n:
                break
            n = nxt
            t = self.tpot_s(-(-n // ranks))
        if t is None:
            return None
        return n, -(-n // ranks), t, req.rate

    def option(self, x: int, y: int, state: tuple[int, int, float, float]
               ) -> RatioOption | None:
        """x prefill workers with y decode workers in `state` (None: prefill saturated)."""
        n, batch, t, rate = state
        rho = rate * self.prefill_s / (x * self.prefill.layout.replicas)
        if rho >= 1:
            return None
        ttft_ms = (_md1_wait_s(rho, self.prefill_s) + self.prefill_s
                   + handover_s(self.transfer_s, t, self.first_token_steps)) * 1e3
        return self.ratio_option(x, y, rate=rate, in_flight=n, batch=batch, rho=rho,
                                 ttft_ms=ttft_ms, tpot_ms=t * 1e3)

    def ratio_option(self, x: int, y: int, *, rate: float, in_flight: int, batch: int,
                     rho: float, ttft_ms: float, tpot_ms: float) -> RatioOption:
        """x prefill : y decode workers with their times, GPUs, price and the SLO verdict."""
        req = self.req
        ok = ((req.slo_ttft_ms is None or ttft_ms <= req.slo_ttft_ms)
              and (req.slo_tpot_ms is None or tpot_ms <= req.slo_tpot_ms))
        gpus = x * self.prefill.layout.gpus + y * self.decode.layout.gpus
        price = req.price_per_gpu_hour
        return RatioOption(
            prefill_workers=x, decode_workers=y, gpus=gpus,
            cost_per_hour_usd=None if price is None else price * gpus, rate_rps=rate,
            decode_in_flight=in_flight, decode_batch=batch, prefill_utilization=rho,
            ttft_ms=ttft_ms, tpot_ms=tpot_ms, meets_slo=ok)


def handover_s(transfer_s: float, step_s: float, first_token_steps: float | None) -> float:
    """The handover's part of TTFT (module docstring): the transfer rounded up to the decode
    worker's steps plus the connector's steps to the first token, or the transfer alone where
    the connector's flow is not read (`first_token_steps` None)."""
    if first_token_steps is None or step_s <= 0:
        return transfer_s
    return (max(1, math.ceil(transfer_s / step_s)) + first_token_steps) * step_s


def evaluate_xy(req: RatioTarget, prefill: Candidate, decode: Candidate, transfer_s: float,
                x: int, y: int, *, prefill_ms: float,
                decode_tpot_ms: Callable[[int], float | None],
                first_token_steps: float | None = None,
                batching: PrefillBatching | None = None,
                prefill_flow: tuple[bool, bool] = (False, False),
                transfer_polled: bool = False, client: BenchClient | None = None,
                routing: FrontendRouting | None = None,
                local: LocalPrefillFlow | None = None,
                queued: QueuedTransferFlow | None = None) -> RatioOption | None:
    """One given xPyD at the target (the bench replays published layouts with it): simulated
    (module docstring) at a concurrency with `batching`, else the formulas. `prefill_flow`:
    the connector's `Handover.prefill_lookahead`, and whether the prefill's DP rank is the
    engine's pick (`PrefillBatching.prefill_balance`; False: the least-loaded rank), and
    `transfer_polled` its `Handover.transfer_polled`, for the simulation. `client`: the
    benchmark client's rounds, what it averages and its lengths (each request its own where
    the client spreads them: kvplan.analysis.simulate.bench_client `lengths`);
    `routing`: the frontend's choice of worker (kvplan.engines.dynamo_frontend); None: four
    rounds, the first and last not averaged, the least-loaded worker. `local`: decode workers
    without a connector (kvplan.analysis.simulate.disagg_local), simulated only. `queued`: the
    connector's transfers queued on each end (kvplan.analysis.simulate.disagg_queue), simulated
    only."""
    model = _Model(req, prefill, decode, transfer_s, prefill_ms, decode_tpot_ms,
                   first_token_steps)
    state = model.decode_state(y)
    if state is None:
        return None
    if batching is None or req.concurrency is None:
        if local is not None or queued is not None:
            raise ValueError("decode workers without a connector, queued transfers: simulated "
                             "only (a concurrency and the prefill batching)")
        return model.option(x, y, state)
    return _simulated(model, x, y, state, batching, prefill_flow, transfer_polled, client,
                      routing, local, queued)


def _simulated(model: _Model, x: int, y: int, state: tuple[int, int, float, float],
               batching: PrefillBatching, prefill_flow: tuple[bool, bool],
               transfer_polled: bool = False, client: BenchClient | None = None,
               routing: FrontendRouting | None = None,
               local: LocalPrefillFlow | None = None,
               queued: QueuedTransferFlow | None = None) -> RatioOption | None:
    """`model.option` with TTFT / TPOT from the two-role closed-loop simulation (of decode
    workers without a connector where `local` says so, of queued transfers where `queued`)."""
    if local is not None and queued is not None:
        raise ValueError("decode workers without a connector move no KV: nothing to queue")
    req = model.req
    assert req.concurrency is not None
    ranks_p, ranks_d = model.prefill.layout.replicas, model.decode.layout.replicas
    missing: list[str] = []

    def prefill_s(tokens: int, prompts: int) -> float:
        ms = batching.step_ms(tokens, prompts)
        if ms is None:
            missing.append("prefill")
            return math.inf
        return ms / 1e3

    def decode_s(batch: int) -> float:
        t = model.tpot_s(batch)
        if t is None:
            missing.append("decode")
            return math.inf
        return t

    input_len = batching.input_len
    rounds = client.rounds if client is not None else 4
    # The client's own lengths, each request's in send order (bench_client `lengths`).
    lengths = (tuple(client.lengths.lengths(req.concurrency * rounds, input_len, req.output_len,
                                            client.seed))
               if client is not None and client.lengths is not None else None)
    inputs = DisaggSimInputs(
        concurrency=req.concurrency, input_len=input_len, output_len=req.output_len,
        prefill_workers=x, prefill_ranks=ranks_p, decode_workers=y, decode_ranks=ranks_d,
        prefill=SchedulerConfig(max_num_seqs=batching.max_seqs,
                                max_num_batched_tokens=batching.token_budget,
                                max_model_len=input_len),
        chunked_prefill=batching.chunked, decode_max_seqs=batching.decode_max_seqs,
        transfer_s=model.transfer_s, first_token_steps=model.first_token_steps,
        prefill_lookahead=prefill_flow[0],
        prefill_balance=batching.prefill_balance if prefill_flow[1] else None,
        decode_admission=batching.decode_admission, prefill_input_budget=batching.input_budget,
        transfer_polled=transfer_polled, rounds=rounds,
        measure_all_rounds=client is not None and client.measures_first_round,
        random_workers=routing is not None and not routing.by_load, lengths=lengths)
    if local is not None:
        res = simulate_disagg_local(inputs, local, prefill_step_s=prefill_s,
                                    decode_step_s=decode_s)
    elif queued is not None:
        res = simulate_disagg_queued(inputs, queued, prefill_step_s=prefill_s,
                                     decode_step_s=decode_s)
    else:
        res = simulate_disagg(inputs, prefill_step_s=prefill_s, decode_step_s=decode_s)
    if missing or not math.isfinite(res.ttft_ms):
        return None
    n, batch, _, _ = state
    # Little's law over the simulated times: requests in flight / time each is in flight.
    rate = req.concurrency / ((res.ttft_ms + (req.output_len - 1) * res.tpot_ms) / 1e3)
    rho = rate * model.prefill_s / (x * ranks_p)
    return model.ratio_option(x, y, rate=rate, in_flight=n, batch=batch, rho=rho,
                              ttft_ms=res.ttft_ms, tpot_ms=res.tpot_ms)


def plan_ratio(req: RatioTarget, prefill: Candidate, decode: Candidate, transfer_s: float, *,
               prefill_ms: float | None, decode_tpot_ms: Callable[[int], float | None],
               first_token_steps: float | None = None) -> RatioPlan | None:
    """The xPyD options for the target (None without one). `prefill_ms`: one prompt on one
    prefill replica; `decode_tpot_ms(batch)`: TPOT at `batch` requests per attention rank."""
    if req.concurrency is None and req.rate is None:
        return None
    if prefill_ms is None:
        return RatioPlan(target=_target(req), prefill_ms=math.nan,
                         transfer_ms=transfer_s * 1e3, decode_kv_requests=decode.requests,
                         options=(), chosen=None,
                         reason="the time model does not cover this layout (pipeline stages)")
    model = _Model(req, prefill, decode, transfer_s, prefill_ms, decode_tpot_ms,
                   first_token_steps)
    kv_cap = decode.requests
    options: list[RatioOption] = []
    reasons: list[str] = []
    for y in range(1, req.max_workers + 1):
        state = model.decode_state(y)
        if state is None:
            break
        n, _, _, rate = state
        in_flight = rate / y * transfer_s  # KV arriving from prefill, held by the pool
        if n + math.ceil(in_flight) > kv_cap:
            reasons.append(f"{y}D: {n} requests per worker (+{math.ceil(in_flight)} in "
                           f"flight) exceed its KV ({kv_cap})")
            continue
        option = None
        for x in range(1, req.max_workers + 1):
            option = model.option(x, y, state) or option
            if option is not None and (option.ttft_ms <= req.slo_ttft_ms
                                       if req.slo_ttft_ms is not None else
                                       option.prefill_utilization <= DEFAULT_MAX_UTILIZATION):
                break
        if option is None:
            reasons.append(f"{y}D: no prefill count up to {req.max_workers} serves "
                           f"{rate:.3g} req/s")
            continue
        options.append(option)
        if len([o for o in options if o.meets_slo]) >= MAX_OPTIONS:
            break
    good = [o for o in options if o.meets_slo]
    if req.price_per_gpu_hour is not None:
        good.sort(key=lambda o: (o.cost_per_hour_usd or 0.0, o.gpus, o.ttft_ms))
    else:
        good.sort(key=lambda o: (o.gpus, o.ttft_ms))
    chosen = good[0] if good else None
    reason = "" if chosen else ("; ".join(reasons[-2:]) or "no option meets the SLOs")
    return RatioPlan(target=_target(req), prefill_ms=prefill_ms, transfer_ms=transfer_s * 1e3,
                     decode_kv_requests=kv_cap, options=tuple(options), chosen=chosen,
                     reason=reason, slo_ttft_ms=req.slo_ttft_ms, slo_tpot_ms=req.slo_tpot_ms)


def _target(req: RatioTarget) -> str:
    return (f"{req.concurrency:,} concurrent requests" if req.concurrency is not None
            else f"{req.rate:g} requests/s")
