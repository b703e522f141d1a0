"""Attention data parallelism in one aggregated engine (`kvplan simulate --dp D --dp-attention`):
D ranks, each its own scheduler and KV pool (a kvplan.analysis.simulate.scheduler.Simulator or
its TensorRT-LLM subclass), stepping in lockstep because their MoE layers exchange tokens every
forward; new requests are dealt to the ranks by the engine's own balancing rule.

- vLLM (`--data-parallel-size D --enable-expert-parallel`, internal load balancing): one engine
  core per DP rank (DPEngineCoreProc), each rank an engine of --tp GPUs, the experts over all
  D x TP GPUs (EP = TP x DP: kvplan.engines.base.Launch.ep_over_dp). A request goes to the rank
  the API server's client picks (kvplan.engines.vllm.dp_balance: lowest 4 x waiting +
  running). Every step is one forward on every rank, an idle rank running a dummy batch while
  any rank has work (vllm/v1/engine/core.py:1696-1723 DPEngineCoreProc.run_busy_loop,
  `execute_dummy_batch`), and the ranks pad their batches to the most tokens of any rank
  (vllm/v1/worker/dp_utils.py:102-160 `_synchronize_dp_ranks`, 0.19.0: DP padding whenever
  the synced CUDA-graph mode is not NONE), so a step lasts as long as the slowest rank's.
- TensorRT-LLM (`tp_size D` with `enable_attention_dp: true`): D ranks of attention TP 1, the
  experts over `moe_expert_parallel_size` GPUs; each executor iteration fetches the new
  requests and balances them (kvplan.engines.trtllm.dp_balance); a rank without work runs a
  dummy generation request so that every rank joins each forward (py_executor.py
  `_pad_attention_dp_dummy_request`): the slowest rank sets the step.
- SGLang (`--tp T --dp D --enable-dp-attention`, D dividing T): D ranks of attention TP T / D
  (each rank's pool on its attention-TP group: PlanInputs.attention_dp_size), the MoE over the
  T GPUs (TP, or EP with --ep T / DeepEP); the data-parallel controller deals the requests
  round-robin and a rank with no batch runs an idle one while any rank has tokens; the MoE
  layers see the ranks' tokens summed in a step where some rank extends (SUM_LEN), each rank's
  padded to the busiest rank's in a decode-only step (MAX_LEN): `Simulator.gathered`, read in
  kvplan.engines.sglang.dp_balance. A rank idle in a busy step keeps its new-token ratio.

The step: when any rank holds a request, every rank with work schedules its own step (its own
scheduler's rules, on its own pool: `Simulator.schedule`), each step is timed by the cost model
at that rank's own mix (kvplan.perf.mixed_step; under EP the MoE layers priced at that rank's
tokens x the D ranks', which is what the padding to the most tokens makes every rank run), and
all ranks' steps last the longest of those times. Requests are routed when the engine first
sees them, at a step boundary, in the same order and with the same async-scheduling / overlap
rule as one engine (a request seen by step k + 1 arrived before step k started); the server's
tokenizer batcher and API server stage (where on) are one, in front of the balancer. A closed
loop's concurrency is global (the benchmark client's), not per rank. The decodes are stepped
one by one (the exact path of the scheduler, not its collective batch: a rank's step depends
on the others'). TensorRT-LLM's attention-DP balance (attention_dp_config.enable_balance, off by
default; `gate`): each iteration, after every rank's scheduler has picked, the ranks' (context,
generation) counts decide whether the context requests run or wait
(kvplan.engines.trtllm.dp_balance.AdpContextGate). Not modelled: the DP coordinator's 100 ms
snapshot lag (vLLM).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan._util.progress import report
from kvplan.analysis.simulate.frontend import ServerQueue, TokenizerBatcher
from kvplan.analysis.simulate.scheduler import Simulator
from kvplan.analysis.simulate.sim_types import SimRequest, SimState
from kvplan.analysis.simulate.step_boundary import taken
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmSimulator
from kvplan.analysis.simulate.workload import RequestSpec, check_pulled
from kvplan.engines.base import EngineRules, Scheduler
from kvplan.engines.moe_layout import even_ep
from kvplan.engines.sglang.dp_balance import sglang_round_robin_rank
from kvplan.engines.trtllm.dp_balance import AdpContextGate, trtllm_adp_ranks
from kvplan.engines.vllm.dp_balance import vllm_dp_engine
from kvplan.model.spec import ModelSpec

# How a set of new requests (in the order the engine sees them) is dealt to the ranks: the rank
# of each of the first k, k <= len(new) (the rest wait for a later step).
Balance = Callable[[Sequence[Simulator], Sequence[SimRequest]], list[int]]


def vllm_balance(ranks: Sequence[Simulator], new: Sequence[SimRequest]) -> list[int]:
    """vLLM's client, one request at a time, each counted waiting where it went."""
    waiting = [len(r.waiting) for r in ranks]
    running = [len(r.running) for r in ranks]
    out = []
    for _ in new:
        rank = vllm_dp_engine(waiting, running)
        waiting[rank] += 1
        out.append(rank)
    return out


def trtllm_balance(ranks: Sequence[Simulator], new: Sequence[SimRequest]) -> list[int]:
    """TensorRT-LLM's fetch: at most the free seats (max_batch_size a rank), then its heap."""
    active = [len(r.running) + len(r.waiting) for r in ranks]
    tokens = [sum(q.prompt_len for q in (*r.running, *r.waiting)) for r in ranks]
    seats = sum(r.config.max_num_seqs for r in ranks) - sum(active)
    take = list(new[:max(0, seats)])
    return trtllm_adp_ranks(active, tokens, [q.prompt_len for q in take])


def sglang_balance(ranks: Sequence[Simulator], new: Sequence[SimRequest]) -> list[int]:
    """SGLang's controller, round-robin over the requests in the order it receives them:
    the request numbered `rid` (0-based, in arrival order: `run_lockstep`) to rank rid mod D."""
    return [sglang_round_robin_rank(req.rid, len(ranks)) for req in new]


@dataclass(frozen=True, kw_only=True)
class DpAttentionLayout:
    """How the engine runs D attention-DP ranks of --tp GPUs with --ep expert ranks: the
    capacity inputs of one rank (tp, dp_attention, ep as kvplan.capacity sizes them)."""

    tp: int
    dp_attention: bool
    ep: int
    gpus: int
    attention_dp_size: int | None = None  # PlanInputs.attention_dp_size (None: --tp)


def dp_attention_layout(rules: EngineRules, *, tp: int, dp: int, ep: int) -> DpAttentionLayout:
    """The capacity layout of one rank of `dp` attention-DP ranks, as the engine lays them out,
    or a refusal naming what is not simulated."""
    if dp < 2:
        raise InputError("--dp-attention: needs --dp 2 or more (the attention-DP ranks)")
    balance_for(rules)  # refused where the engine's ranks are not simulated
    if rules.scheduler is Scheduler.prefill_first:
        # SGLang: `--tp T --dp D --enable-dp-attention`, T GPUs, D ranks of attention TP T / D
        # (kvplan.engines.launch.LaunchLayout; layers/dp_attention.py
        # compute_dp_attention_world_info, attn_tp_size = tp_size // dp_size: 0.5.3 :191-199,
        # 0.5.6 :227-235, 0.5.9 :230-244), each rank's pool and step on its attention-TP group
        # (PlanInputs.attention_dp_size, kvplan.perf.layout.Layout.attn_tp), the MoE over the T
        # GPUs: TP (--ep 1) or EP (--ep T, SGLang's --ep-size; DeepEP sets it to T). SGLang
        # asserts tp_size % dp_size == 0 (server_args.py _handle_data_parallelism: 0.5.3 :956,
        # 0.5.6 :1498, 0.5.9 :2116).
        if tp % dp:
            raise InputError(f"--dp {dp}: {rules.display_name} asserts that --dp divides --tp "
                             f"{tp} under --enable-dp-attention (its ranks' attention TP is "
                             "--tp / --dp)")
        if ep not in (1, tp):
            raise InputError(f"--dp-attention: --ep {ep} under {tp} GPUs (an MoE TP x EP "
                             f"hybrid) is not simulated: give --ep 1 or --ep {tp}")
        return DpAttentionLayout(tp=tp, dp_attention=True, ep=ep, gpus=tp,
                                 attention_dp_size=dp)
    if rules.launch.ep_over_dp:
        # vLLM: D engines of --tp GPUs, EP over all D x TP (Launch.ep_over_dp); without
        # --enable-expert-parallel vLLM's MoE runs TP over the DP ranks, not simulated.
        if ep != tp * dp:
            raise InputError(f"--dp-attention: {rules.display_name} runs the experts over "
                             f"--tp x --dp GPUs (--enable-expert-parallel): give --ep {tp * dp}")
        return DpAttentionLayout(tp=tp, dp_attention=False, ep=ep, gpus=tp * dp)
    # TensorRT-LLM: tp_size D with enable_attention_dp: D ranks of attention TP 1.
    if tp != 1:
        raise InputError(f"--dp-attention: {rules.display_name}'s attention-DP ranks are one GPU "
                         "each (tp_size = the ranks): give --tp 1")
    if ep != dp:
        raise InputError(f"--dp-attention: --ep {ep} under {dp} ranks (an MoE TP x EP hybrid) is "
                         f"not simulated: give --ep {dp}")
    return DpAttentionLayout(tp=dp, dp_attention=True, ep=ep, gpus=dp)


def attention_dp_engine(rules: EngineRules, spec: ModelSpec, ranks: int
                        ) -> tuple[int, DpAttentionLayout] | None:
    """One engine of `ranks` attention-DP ranks of attention TP 1 on `ranks` GPUs, the experts
    over those GPUs (EP `ranks` where the routed experts split evenly, else 1: even_ep), as
    `simulate --tp T --dp ranks --ep E --dp-attention` runs it: (T, one rank's capacity layout);
    None for a dense model (its ranks exchange nothing: plain replicas), or where the engine
    does not run that layout as simulated (attention_dp_engines' form of `ranks` ranks)."""
    return next(((tp, lay) for tp, d, lay in attention_dp_engines(rules, spec, ranks)
                 if d == ranks), None)


def attention_dp_engines(rules: EngineRules, spec: ModelSpec, gpus: int
                         ) -> tuple[tuple[int, int, DpAttentionLayout], ...]:
    """Every form of one engine of `gpus` GPUs with attention DP that the engine runs as
    simulated, as (`simulate --tp`, ranks D, one rank's capacity layout): D each divisor of
    `gpus` from `gpus` down to 2 (attention TP `gpus` / D from 1 up), the experts over the
    `gpus` GPUs (EP `gpus` where the routed experts split evenly, else 1: even_ep). Each engine's
    own check (`dp_attention_layout`) keeps what it runs: SGLang `--tp gpus --dp D` (attention
    TP gpus / D, its pool on the attention-TP group: PlanInputs.attention_dp_size), vLLM
    `--data-parallel-size D --tensor-parallel-size gpus / D --enable-expert-parallel` (EP = TP x
    DP), TensorRT-LLM only D = `gpus` (its ranks are one GPU each). Empty for a dense model."""
    if spec.moe is None or gpus < 2:
        return ()
    ep = even_ep(spec, gpus)
    out = []
    for ranks in (d for d in range(gpus, 1, -1) if gpus % d == 0):
        for tp in dict.fromkeys((gpus, gpus // ranks)):
            try:
                lay = dp_attention_layout(rules, tp=tp, dp=ranks, ep=ep)
            except InputError:
                continue
            if lay.gpus == gpus:
                out.append((tp, ranks, lay))
                break
    return tuple(out)


_BALANCE: dict[Scheduler, Balance] = {Scheduler.mixed_token_budget: vllm_balance,
                                      Scheduler.prefill_first: sglang_balance,
                                      Scheduler.capacity_micro_batch: trtllm_balance}


def balance_for(rules: EngineRules) -> Balance:
    """The engine's balancing rule, or a refusal where its attention-DP ranks are not read."""
    rule = _BALANCE.get(rules.scheduler) if rules.scheduler is not None else None
    if rule is None:
        raise InputError(f"--dp-attention: {rules.display_name}'s attention-DP ranks are not "
                         "simulated (--engine vllm, sglang or trtllm)")
    return rule


def _released(gate: AdpContextGate, ranks: Sequence[TrtllmSimulator]) -> bool:
    """Whether this iteration's context requests run: every rank's picks, a rank without an
    active request counted as its one dummy generation request (py_executor.py
    `_pad_attention_dp_dummy_request`)."""
    counts = [r.picked_counts() if (r.running or r.waiting) else (0, 1) for r in ranks]
    return gate.release([c for c, _ in counts], [g for _, g in counts])


def run_lockstep(ranks: Sequence[Simulator], balance: Balance, specs: Iterable[RequestSpec], *,
                 concurrency: int | None = None,
                 gate: AdpContextGate | None = None) -> list[SimState]:
    """Serve `specs` (in arrival order) on the ranks in lockstep (module docstring); each
    rank's state as Simulator.run leaves it (its clock the last step's end). `gate`:
    TensorRT-LLM's attention-DP balance of context requests (ranks of TrtllmSimulator)."""
    first = ranks[0]
    config = first.config
    gated: list[TrtllmSimulator] = []
    if gate is not None:
        gated = [r for r in ranks if isinstance(r, TrtllmSimulator)]
        if len(gated) != len(ranks):
            raise InputError("attention_dp_config.enable_balance: TensorRT-LLM's ranks only")
    source: Iterator[RequestSpec] = iter(specs)
    upcoming: deque[RequestSpec] = deque()
    sent: deque[SimRequest] = deque()
    batcher = (TokenizerBatcher(config.tokenizer_batching)
               if config.tokenizer_batching is not None else None)
    server = ServerQueue(config.api_server) if config.api_server else None
    groups = len(first.pool.groups)
    in_flight = next_id = 0
    clock = last_arrival = 0.0
    served = 0

    def pull() -> None:
        nonlocal last_arrival
        if upcoming:
            return
        spec = next(source, None)
        if spec is None:
            return
        check_pulled(spec, next_id, last_arrival, config.max_model_len)
        last_arrival = spec.arrival_s
        upcoming.append(spec)

    def admit_arrivals(now: float) -> None:
        nonlocal in_flight, next_id
        while True:
            pull()
            if not upcoming or upcoming[0].arrival_s > now:
                return
            if concurrency is not None and in_flight >= concurrency:
                return
            spec = upcoming.popleft()
            req = SimRequest(next_id, spec, now if concurrency is not None else spec.arrival_s,
                             groups)
            next_id += 1
            in_flight += 1
            req.seen_s = (req.sent_s if server is None
                          else server.leave_s(req.sent_s, req.prompt_len))
            if batcher is not None:
                batcher.admit(req, req.seen_s)
            sent.append(req)

    pull()
    if upcoming:
        clock = upcoming[0].arrival_s
    for r in ranks:
        r.state.first_arrival_s = clock
    prev_start: float | None = None
    while True:
        admit_arrivals(clock)
        cutoff = clock if prev_start is None else prev_start
        seen = []
        reply = (concurrency is not None and ranks[0].finish_reply_misses_next_step
                 and any(r.has_work() for r in ranks))  # step_boundary
        for req in sent:
            if not taken(req.seen_s, cutoff, reply_to_finish=reply):
                break
            seen.append(req)
        if seen:
            for req, rank in zip(seen, balance(ranks, seen), strict=False):
                ranks[rank].waiting.append(req)
                sent.popleft()
        busy = [r for r in ranks if r.has_work()]
        if not busy:
            prev_start = None
            if sent:  # in the tokenizer batch, or no seat yet: idle until it is released
                clock = max(clock, sent[0].seen_s)
                continue
            pull()
            if not upcoming:
                break
            clock = max(clock, upcoming[0].arrival_s)
            continue
        if config.async_scheduling:
            prev_start = clock
        hold = gate is not None and not _released(gate, gated)
        for g in gated:
            g.hold_context = hold
        steps: list[tuple[Simulator, list[tuple[SimRequest, int]]]] = []
        for r in busy:
            r.state.clock_s = clock
            scheduled = r.schedule()
            if not scheduled:
                if r.running or not r.waiting or hold:
                    continue  # nothing of its own this step: a dummy batch
                head = r.waiting[0]
                raise InputError(f"request {head.rid}: {head.num_tokens} tokens do not fit in "
                                 f"the KV pool even alone ({r.pool.usable} blocks)")
            steps.append((r, scheduled))
        if not steps:
            raise InputError("attention DP: no rank could schedule a step")
        # The tokens the ranks' MoE layers see (the engine's rule: SglangSimulator.gathered;
        # None: as many as each rank's on every rank, the busiest rank setting the step).
        gathered = first.gathered(steps)
        seconds = max(r.step_seconds(sched, gathered=gathered) for r, sched in steps)
        stepped = {id(r) for r, _ in steps}
        for r in ranks:
            if id(r) not in stepped:
                r.dummy_step(clock + seconds)
        for r, scheduled in steps:
            done = r._finish_step(scheduled, clock, seconds)
            r._record(clock, seconds, sum(n for _, n in scheduled))
            in_flight -= done
            if done:
                served += done
                report("simulate: requests served", served)
        clock += seconds
    for r in ranks:
        r.state.clock_s = max(clock, r.state.first_arrival_s)
    return [r.state for r in ranks]
