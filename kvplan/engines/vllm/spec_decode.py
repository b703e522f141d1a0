"""vLLM V1's speculative decoding as its scheduler and drafter spend a step (EAGLE, EAGLE-3,
MTP: the serial drafters kvplan sizes, kvplan.engines.caches.draft_layers). Read in vLLM 0.32.0
(the CPU build's sources, vllm/...; the line numbers below), and checked the same in the sdists
of 0.11.0, 0.13.0, 0.16.0 and 0.19.0: v1/core/sched/scheduler.py sets num_lookahead_tokens =
num_spec_tokens when speculative_config.use_eagle() (method eagle, eagle3 or mtp: config/
speculative.py; 0.11.0 :160-165, 0.13.0 :193-198, 0.16.0 :215-220, 0.19.0 :215-220), schedules
``num_tokens_with_spec - num_computed_tokens`` (0.11.0 :213), passes the lookahead to every
allocate_slots (0.11.0 :258, :476) and rolls back ``num_computed_tokens -= num_rejected``
(0.11.0 :908, 0.19.0 :1379); v1/spec_decode/eagle.py returns after one pass for k 1 and loops
``range(num_speculative_tokens - 1)`` (0.11.0 :253 / :299, 0.19.0 :481 / :543). Not read before
0.11.0.

- Verify: a running request's next step schedules ``num_tokens_with_spec - num_computed``
  tokens, its one new token and its k drafts (v1/core/sched/scheduler.py:703-711), capped by
  the step's token budget and by ``max_model_len - num_computed - 1`` (:715-721); the target
  forward runs all of them and samples every position.
- KV slots: every ``allocate_slots`` call, running (:778-782) and waiting (:1257-1261), adds
  ``num_lookahead_tokens`` slots, k for EAGLE / MTP (config/vllm.py:635-640: the drafter
  writes its KV past the target's query range).
- Rejection: after the step, ``num_computed_tokens -= num_rejected`` with num_rejected =
  drafts - (sampled - 1) (scheduler.py:2116-2127): a request advances by 1 + its accepted
  drafts, the rejected drafts' slots are overwritten next step.
- Draft: the proposer's first forward runs over the target's scheduled tokens (every token of
  the step, a prompt chunk's too), then k - 1 forwards of one token per request
  (v1/spec_decode/llm_base_proposer.py:629 returns after the first when k is 1, :689 loops
  ``range(num_speculative_tokens - 1)``); each samples one row per request from the drafter's
  lm_head (MTP: the target's, shared).
- Metrics (v1/spec_decode/metrics.py:107-116): "Mean acceptance length" = 1 + accepted /
  drafts (drafts: verify steps); "Per-position acceptance rate" i = steps whose draft i was
  accepted / drafts; "Avg Draft acceptance rate" = accepted / drafted tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

SERIAL_DRAFTERS = ("mtp", "eagle", "eagle3")


@dataclass(frozen=True, kw_only=True)
class VllmSpecDecode:
    """One serial drafter (`method`, k = `num_speculative_tokens`) as vLLM's step runs it."""

    method: str
    num_speculative_tokens: int

    @property
    def lookahead_slots(self) -> int:
        """KV slots past the scheduled tokens every allocation reserves (config/vllm.py:635)."""
        return self.num_speculative_tokens

    @property
    def verify_tokens(self) -> int:
        """Tokens a running decode schedules: its new token and its k drafts."""
        return 1 + self.num_speculative_tokens

    @property
    def one_token_draft_passes(self) -> int:
        """Draft forwards of one token per request after the first (llm_base_proposer.py:689)."""
        return self.num_speculative_tokens - 1

    def decode_tokens(self, *, num_computed: int, max_model_len: int, budget: int) -> int:
        """Tokens a running decode at `num_computed` computed tokens schedules (scheduler.py:
        703-721): 1 + k, within the step's budget and max_model_len - num_computed - 1."""
        return max(0, min(self.verify_tokens, budget, max_model_len - num_computed - 1))
