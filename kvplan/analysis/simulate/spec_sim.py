"""vLLM V1's speculative decoding in the simulator (`kvplan simulate --speculative-method`):
the step composition of kvplan.engines.vllm.spec_decode over kvplan.analysis.simulate.
scheduler's Simulator, the drafts' acceptance drawn per request per step
(kvplan.analysis.simulate.spec_acceptance).

A step, priced by the one cost model (kvplan.perf.mixed_step):

- target: each running decode is a (k + 1)-token query at its context (a chunk of k + 1 tokens
  starting at its computed tokens, causal over the drafts), prompt chunks as without drafts;
  the lm_head over every verified position (k + 1 rows a decode, vLLM samples each);
- drafter: one forward over the step's scheduled tokens, then k - 1 forwards of one token per
  scheduled request, each with one lm_head row a request; the drafter's shape is one decoder
  layer of the target's last layer's shape, full attention, and the target's lm_head
  (`draft_layer_spec`; vLLM's MTP layer is the model's own). Given the head's own config.json
  (`--spec-draft-config`, vLLM's eagle / eagle3: kvplan.engines.vllm.eagle_head), its decoder
  layers at its widths and its lm_head's rows (EAGLE-3: draft_vocab_size), plus the GEMMs it
  runs beyond them (kvplan.perf.draft_head_cost): EAGLE-1's fc 2h -> h in every pass over the
  pass's tokens, EAGLE-3's fc 3h -> h over the step's tokens before the first pass and its qkv's
  embeds half in every pass.

- host: the kernels the proposer launches from the host outside its piecewise CUDA graphs
  (kvplan.engines.vllm.spec_decode `draft_launches`, at the releases read; none elsewhere),
  each at kvplan.perf.vllm_ungraphed's VLLM_UNGRAPHED_LAUNCH_S, added to the step (the sum, as
  `MixedStepCost.ungraphed_seconds` charges a step above the largest graph).

Each decode then advances by 1 + its accepted drafts and emits them in one chunk: one ITL gap
per chunk, as `vllm bench serve` times the stream's chunks; TPOT stays (E2E - TTFT) /
(output tokens - 1). A request at its last tokens emits no more than its output length.
The target's step is padded to vLLM's capture sizes with k drafts (kvplan.engines.vllm.
spec_graph_sizes: rounded up to multiples of k + 1 from 0.11.1, vllmspec68).
Not modelled: the drafter's own KV
blocks (they are in the pool's size: kvplan.engines.caches.draft_layers), async scheduling's
placeholders (drafts are scheduled as if the previous step's were known), the ngram drafter.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from kvplan.analysis.simulate.hybrid_pool import HybridPool
from kvplan.analysis.simulate.kv_pool import KVPool
from kvplan.analysis.simulate.scheduler import Simulator
from kvplan.analysis.simulate.sim_types import SchedulerConfig, SimRequest, StepCost
from kvplan.analysis.simulate.spec_acceptance import Acceptance
from kvplan.engines.sglang.spec_decode import SglangSpecDecode
from kvplan.engines.vllm.eagle_head import VllmEagleHead
from kvplan.engines.vllm.spec_decode import VllmSpecDecode
from kvplan.model.spec import ModelSpec
from kvplan.perf.draft_head_cost import DraftHeadCost
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.vllm_ungraphed import VLLM_UNGRAPHED_LAUNCH_S


def draft_layer_spec(spec: ModelSpec) -> ModelSpec:
    """One decoder layer of `spec`'s last layer's shape (its attention, its MLP or MoE), full
    attention, the target's vocabulary and lm_head: the drafter a step's cost prices."""
    last = spec.num_hidden_layers - 1
    moe = spec.moe
    if moe is not None:
        moe = (replace(moe, first_k_dense_replace=0, moe_layer_freq=1) if moe.is_moe_layer(last)
               else None)
    indexer = None if spec.indexer is None else replace(spec.indexer,
                                                        skipped_layers=frozenset())
    return replace(spec, num_hidden_layers=1, layer_windows=(), kv_sources=(), layer_mixers=(),
                   layer_chunks=(), layer_has_mlp=(), layers_per_block=1, recurrent=None,
                   moe=moe, indexer=indexer, num_nextn_predict_layers=0, vision=None,
                   qwen_vit=None, qwen2_vit=None, gemma_blocks=None)


@dataclass(frozen=True, kw_only=True)
class SpecDecodeSim:
    """The drafter, its acceptance and the generator's seed (each replica: seed + its index)."""

    rule: VllmSpecDecode | SglangSpecDecode
    acceptance: Acceptance
    target_cost: MixedStepCost
    draft_cost: MixedStepCost
    draft_launch_s: float = 0.0
    seed: int = 0
    # The head's own config (`--spec-draft-config`): its extra GEMMs; None: the default drafter.
    head_cost: DraftHeadCost | None = None

    @classmethod
    def of(cls, rule: VllmSpecDecode | SglangSpecDecode, acceptance: Acceptance,
           cost: MixedStepCost, *, seed: int = 0,
           head: VllmEagleHead | None = None) -> SpecDecodeSim:
        launches = rule.draft_launches(cost.eff.engine_version) or 0
        if head is None:
            draft, head_cost = cost.for_spec(draft_layer_spec(cost.spec)), None
        else:
            draft = cost.for_spec(head.layers)
            head_cost = DraftHeadCost(head, cost.gpu, cost.eff,
                                      att_tp=cost.layout.attention_tp)
        return cls(rule=rule, acceptance=acceptance, target_cost=cost, draft_cost=draft,
                   draft_launch_s=launches * VLLM_UNGRAPHED_LAUNCH_S, seed=seed,
                   head_cost=head_cost)

    @property
    def drafter(self) -> str:
        """Which drafter the step prices (the JSON's `drafter`)."""
        if self.head_cost is None:
            return "one decoder layer of the target's last layer's shape and its lm_head"
        return self.head_cost.head.describe()

    def records(self) -> dict[str, object]:
        """The JSON's `spec_decode` inputs (the run's counts are added by `SpecSimulator`)."""
        return {"method": self.rule.method, "k": self.rule.num_speculative_tokens,
                "drafter": self.drafter,
                "mean_accept_len": self.acceptance.mean_accept_len,
                "per_position_acceptance": list(self.acceptance.per_position),
                "acceptance_source": self.acceptance.source, "seed": self.seed}


class SpecSimulator(Simulator):
    """vLLM V1's scheduler with a serial drafter: drafts verified, slots reserved, rejected
    drafts rolled back (kvplan.engines.vllm.spec_decode)."""

    def __init__(self, pool: KVPool | HybridPool, config: SchedulerConfig, step_cost: StepCost,
                 spec: SpecDecodeSim, *, replica: int = 0, timeline: bool = False) -> None:
        super().__init__(pool, config, step_cost, timeline=timeline, bulk_decode=False)
        self._init_spec(spec, replica)

    def _init_spec(self, spec: SpecDecodeSim, replica: int) -> None:
        """The drafter, its slots, this replica's generator and the run's counts."""
        self.spec = spec
        self.lookahead = spec.rule.lookahead_slots
        self.rng = random.Random(spec.seed + replica)
        self.drafted = self.accepted = self.verifies = 0

    @staticmethod
    def _decoding(req: SimRequest) -> bool:
        """A running request past its prompt (it holds drafts from the last step's drafter)."""
        return req.num_output >= 1 and req.num_computed == req.num_tokens - 1

    def _running_tokens(self, req: SimRequest, budget: int) -> int:
        if not self._decoding(req):
            return super()._running_tokens(req, budget)
        return self.spec.rule.decode_tokens(num_computed=req.num_computed,
                                            max_model_len=self.config.max_model_len,
                                            budget=budget)

    def step_seconds(self, scheduled: list[tuple[SimRequest, int]],
                     gathered: int | None = None) -> float:
        if gathered is not None:
            raise ValueError("step_seconds: this engine's MoE layers see its own tokens x ranks")
        singles = [r.num_computed + 1 for r, n in scheduled if n == 1 and self._decoding(r)]
        chunks = [(r.num_computed, n) for r, n in scheduled if not (n == 1 and self._decoding(r))]
        verified = sum(n - 1 for r, n in scheduled if n > 1 and self._decoding(r))
        target = self.step_cost.seconds(decode_contexts=singles, chunks=chunks)
        rows = len(scheduled)
        head = self.spec.target_cost
        target += head.head_seconds(rows + verified) - head.head_seconds(rows)
        draft = self.spec.draft_cost
        first = draft.seconds(decode_contexts=singles, chunks=chunks)
        passes = self.spec.rule.one_token_draft_passes
        later = passes * draft.seconds(
            decode_contexts=[r.num_computed + n + 1 for r, n in scheduled], chunks=[]
        ) if passes else 0.0
        extra = self.spec.head_cost
        if extra is not None:  # the head's own GEMMs (kvplan.perf.draft_head_cost)
            first += extra.seconds(sum(n for _, n in scheduled), first=True)
            later += passes * extra.seconds(rows, first=False) if passes else 0.0
        return target + first + later + self.spec.draft_launch_s

    def _finish_step(self, scheduled: list[tuple[SimRequest, int]], start: float,
                     seconds: float, shown: float | None = None) -> int:
        """Advance the scheduled requests, a verified decode by 1 + its accepted drafts (one
        chunk to the client); returns how many finished."""
        if shown is not None or self.config.api_output is not None:
            raise ValueError("speculative decoding: the API server's output stage is refused "
                             "at set-up")
        st = self.state
        end = start + seconds
        done = 0
        for req, n in scheduled:
            if self._decoding(req) and n > 1:
                accepted = min(self.spec.acceptance.draw(self.rng), n - 1)
                self.drafted += n - 1
                self.accepted += accepted
                self.verifies += 1
                req.num_computed += 1 + accepted
                emitted = 1 + accepted
            else:
                req.num_computed += n
                if req.num_computed < req.num_tokens:
                    continue  # a partial prefill chunk: no token
                emitted = 1
            if req.num_output == 0:
                req.first_token_s = end
            else:
                st.itl_values.append(seconds if req.last_token_s == start
                                     else end - req.last_token_s)
                st.itl_weights.append(1)
            req.last_token_s = end
            req.num_output = min(req.num_output + emitted, req.output_len)
            if req.num_output >= req.output_len:
                req.finish_s = end
                self._release(req)
                st.finished.append(req)
                done += 1
        if done:
            self.running = [r for r in self.running if r.finish_s < 0]
        return done


def spec_metrics(spec: SpecDecodeSim, sims: list[SpecSimulator]) -> dict[str, object]:
    """`spec_decode` in the JSON: the inputs and what the run drew (vLLM's figures)."""
    drafted = sum(s.drafted for s in sims)
    accepted = sum(s.accepted for s in sims)
    verifies = sum(s.verifies for s in sims)
    return {**spec.records(), "drafted_tokens": drafted, "accepted_tokens": accepted,
            "simulated_mean_accept_len": (1 + accepted / verifies) if verifies else None,
            "simulated_draft_acceptance_rate": accepted / drafted if drafted else None}
