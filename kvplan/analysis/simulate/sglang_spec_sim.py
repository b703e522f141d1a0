"""SGLang's EAGLE / NEXTN speculative decoding, chain drafting (topk 1), in the simulator
(`kvplan simulate --engine sglang --speculative-method`): kvplan.engines.sglang.spec_decode's
rules over kvplan.analysis.simulate.sglang_scheduler's SglangSimulator, with vLLM's
acceptance draw and verified-step advance (kvplan.analysis.simulate.spec_sim.SpecSimulator:
one acceptance chain, one advance rule).

A step, priced by the one cost model (kvplan.perf.mixed_step), S = --speculative-num-steps:

- prefill batch: the target's chunks, then the draft over the same chunks (forward_draft_extend);
- decode batch: the target verifies S + 1 tokens a request (a chunk of S + 1 at its computed
  tokens; the lm_head over every verified position), the draft runs S - 1 one-token passes
  (the i-th at its computed tokens + 1 + i) and one extend of S + 1 tokens a request (the
  draft-extend graph's padded shape), one lm_head row a request each; the draft is one
  decoder layer of the target's last layer's shape with the target's lm_head
  (spec_sim.draft_layer_spec). No host launches: SGLang replays the draft's CUDA graphs. The
  verify, the draft passes and the draft extend of a batch of up to --cuda-graph-max-bs
  requests are captured steps (step_time's `captured`: kvplan.engines.decode_graphs).

KV (page size 1): each decode takes S + 1 slots for the verify; the slots of its rejected drafts
are freed after the step (KVPool.trim), as SGLang frees them. The
retraction trigger and loop are the release's (SglangSpecDecode.decode_check_tokens /
retract_keep_tokens, at the releases read: 0.5.3 - 0.5.7 and 0.5.9; others refused), from
the back of the batch. Not modelled: SGLang's spec v2 (overlap),
tree drafting (refused), a page size above one (refused), sliding-window / mamba pools
(refused), DP attention (refused).
"""

from __future__ import annotations

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.scheduler import Simulator
from kvplan.analysis.simulate.sglang_scheduler import SglangSchedule, SglangSimulator
from kvplan.analysis.simulate.sim_setup import SimSetup
from kvplan.analysis.simulate.sim_types import SchedulerConfig, SimRequest, StepCost
from kvplan.analysis.simulate.spec_sim import SpecDecodeSim, SpecSimulator
from kvplan.engines.sglang.spec_decode import SglangSpecDecode, check_chain, retraction


def sglang_spec_rule(sim: SimSetup, *, method: str, num_steps: int, topk: int | None,
                     engine_version: str | None) -> tuple[SglangSpecDecode, SimSetup, str]:
    """The chain drafter for an SGLang set-up (its overlap scheduler off: server_args.py, spec v1,
    kvplan.engines.sglang.spec_decode), the set-up and the note; bad
    input (a tree, a pool kvplan does not simulate with drafts): InputError."""
    check_chain(topk)
    retraction(engine_version)  # a release whose retraction with drafts was not read: refused
    if sim.swa is not None or (sim.sglang_pool is not None
                               and sim.sglang_pool.mamba_slots() is not None):
        raise InputError("simulate --engine sglang --speculative-method: not simulated with a "
                         "sliding-window or mamba pool")
    if len(sim.groups) != 1 or sim.groups[0].block_size != 1:
        raise InputError("simulate --engine sglang --speculative-method: simulated at page "
                         "size 1 only (this model's SGLang pool pages "
                         f"{sim.groups[0].block_size} tokens)")
    rule = SglangSpecDecode(method=method, num_steps=num_steps, engine_version=engine_version)
    if sim.scheduler.async_scheduling:
        raise ValueError("sglang_spec_rule: the overlap scheduler is off with spec v1 (set-up)")
    note = (f"speculative decoding (SGLang {method}, chain: --speculative-num-steps {num_steps} "
            f"--speculative-eagle-topk 1 --speculative-num-draft-tokens {num_steps + 1}): a "
            f"decode verifies {num_steps + 1} tokens a step, the draft {num_steps - 1} one-token "
            f"pass(es) and one extend of {num_steps + 1} tokens a request (one layer of the "
            "target's shape), a prefill's draft extend over its chunk; "
            f"retraction below {rule.decode_check_tokens()} free tokens a request "
            "(kvplan.analysis.simulate.sglang_spec_sim)")
    return rule, sim, note


class SglangSpecSimulator(SpecSimulator, SglangSimulator):
    """SGLang's scheduler with a chain drafter: SpecSimulator's acceptance and advance
    (`_finish_step`), SglangSimulator's prefill admission, the decode batch and the step's time
    SGLang's (the module docstring)."""

    def __init__(self, pool: KVPool, config: SchedulerConfig, step_cost: StepCost,
                 schedule: SglangSchedule, spec: SpecDecodeSim, *, replica: int = 0,
                 timeline: bool = False) -> None:
        if not isinstance(spec.rule, SglangSpecDecode):
            raise ValueError("SglangSpecSimulator: an SGLang drafter's rule is needed")
        if pool.groups[0].block_size != 1:
            raise ValueError("SglangSpecSimulator: page size 1 only (refused at set-up)")
        SglangSimulator.__init__(self, pool, config, step_cost, schedule, timeline=timeline,
                                 bulk_decode=False)
        self._init_spec(spec, replica)
        self.rule: SglangSpecDecode = spec.rule
        # The verify and the draft extend replay CUDA graphs (the target's runner captures
        # TARGET_VERIFY at num_draft_tokens a request: model_executor/cuda_graph_runner.py
        # 0.5.6 :275-286; the draft-extend runner, eagle_worker.py 0.5.6 :247): no eager
        # prefill launches (kvplan.perf.mixed_step), unlike a prefill batch; captured, as a
        # decode step is, for a batch of up to --cuda-graph-max-bs requests whatever its
        # S + 1 tokens a request (kvplan.engines.decode_graphs: can_run's batch_size).
        target, draft = spec.target_cost, spec.draft_cost
        self._verify_cost = target.for_spec(target.spec, eager_prefill=False, verify=True)
        self._draft_graphed = draft.for_spec(draft.spec, eager_prefill=False, verify=True)

    def _finish_step(self, scheduled: list[tuple[SimRequest, int]], start: float,
                     seconds: float, shown: float | None = None) -> int:
        """SpecSimulator's advance, then each verified decode's rejected draft slots freed
        (eagle_info.py 0.5.6 :410-419)."""
        done = SpecSimulator._finish_step(self, scheduled, start, seconds, shown)
        for req, n in scheduled:
            if n > 1 and req.finish_s < 0 and self._decoding(req):
                self.pool.trim(req, req.num_computed)
        return done

    def _decode_batch(self) -> list[tuple[SimRequest, int]]:
        running, rule = self.running, self.rule
        if not running:
            return []
        if self._free_tokens() < len(running) * rule.decode_check_tokens():
            self._retract_until(rule.retract_keep_tokens())  # from the back, no sorting
        else:
            self.new_token_ratio = max(self.new_token_ratio - self.decay, self.min_ratio)
        n = rule.verify_tokens
        scheduled = []
        for r in running:
            if not self.pool.allocate(r, n):
                break  # the last request left alone cannot grow: the pool is too small
            scheduled.append((r, n))
        return scheduled

    def step_seconds(self, scheduled: list[tuple[SimRequest, int]],
                     gathered: int | None = None) -> float:
        if gathered is not None:
            raise ValueError("speculative decoding: DP attention is refused at set-up")
        draft, rule = self.spec.draft_cost, self.rule
        if not any(self._decoding(r) for r, _ in scheduled):
            # A prefill batch: the target's extend, the draft's over the same chunks.
            target = Simulator.step_seconds(self, scheduled)
            return target + draft.seconds(decode_contexts=[], chunks=[
                (r.num_computed, n) for r, n in scheduled])
        head = self._verify_cost
        target = head.seconds(decode_contexts=[],
                              chunks=[(r.num_computed, n) for r, n in scheduled])
        rows, verified = len(scheduled), sum(n - 1 for _, n in scheduled)
        target += head.head_seconds(rows + verified) - head.head_seconds(rows)
        passes = sum(draft.seconds(decode_contexts=[r.num_computed + 1 + i for r, _ in scheduled],
                                   chunks=[]) for i in range(1, rule.one_token_draft_passes + 1))
        extend = self._draft_graphed.seconds(decode_contexts=[], chunks=[
            (r.num_computed, rule.draft_extend_tokens) for r, _ in scheduled])
        return target + passes + extend + self.spec.draft_launch_s
