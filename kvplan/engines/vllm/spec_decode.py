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
- Draft passes' host launches (`draft_launches`, issue 30, branch specpass62), read in the
  0.10.0 and 0.11.0 sdists' v1/spec_decode/eagle.py. Every pass runs the drafter's
  torch.compile'd forward in piecewise CUDA graphs (use_cuda_graph: level PIECEWISE and not
  enforce_eager, 0.10.0 :54-59, 0.11.0 :80-86; the first pass padded to a capture size when
  its tokens fit, 0.10.0 :123-126, the later ones at the padded batch, :167-170), so a pass's
  forward launches from the host what piecewise graphs leave out (kvplan.perf.vllm_ungraphed):
  per attention layer its split op's two kernels (KV write, attention) and a replay per piece
  (layers + 1): 2 + 2 = 4 for the one-layer head (0.10.0: models/llama_eagle.py:43 /
  llama_eagle3.py:82 @support_torch_compile; config.py:4324-4326 splits at the attention
  ops; v1/attention/backends/flash_attn.py:445 reshape_and_cache_flash, :476 the kernel).
  Everything else a pass runs is eager torch
  outside any graph, one kernel each (0.10.0 line numbers; 0.11.0 :299-381 the same kernels,
  its per-pass `build_for_drafting` metadata rebuild is host Python, not counted):
  first pass (:94-146) query_start_loc[1:] - 1, the input_ids shift copy, the next-token
  index_put, the positions and hidden-state copies, the forward (4), the last-token gather,
  compute_logits' lm_head GEMM, argmax: 11, + 1 for EAGLE-3's combine_hidden_states fc
  (:97-100); each later pass (:175-236) .int(), positions += 1, >=, torch.where, seq_lens += 1,
  masked_fill_, //, block_table.gather, *, %, +, masked_fill_, three buffer copies, the forward
  (4), lm_head, argmax: 21; torch.stack of the drafts once when k > 1 (:240). EAGLE-3 adds to
  every pass's compute_logits its draft-vocabulary mapping (model_executor/models/
  llama_eagle3.py, 0.10.0 :221-227, 0.11.0 :254-260: arange, + d2t, new_full of the target's
  vocabulary, the index_put): 4, for every EAGLE-3 head at these two releases (they create
  draft_id_to_target_id for every head, 0.10.0 :195-198, 0.11.0 :225-228, so it is never None;
  yuhuili/EAGLE3-LLaMA3.1-Instruct-8B maps 32000 of 128256; the head's own config, read by
  kvplan.engines.vllm.eagle_head, does not change the count). Not counted at other releases
  (None: not charged): 0.13.0,
  0.16.0 and 0.19.0 still run the head in piecewise graphs (even under a FULL target graph:
  0.13.0 eagle.py:113-116, 0.16.0 :364-372, 0.19.0 :367-375) but their loops changed (0.19.0
  fuses the positions / slot-mapping / seq_lens update into one Triton kernel,
  eagle_step_update_slot_mapping_and_metadata, :558; samples through _greedy_sample) and their
  forwards split at the KV update too: the 0.10 / 0.11 counts do not carry; not recounted.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.versions import version_key

SERIAL_DRAFTERS = ("mtp", "eagle", "eagle3")
# Releases whose EagleProposer launches were counted (module docstring): 0.10.0 and 0.11.0
# read, 0.10.x between them taken as they (the loop is the same code at both ends).
_LAUNCHES_READ = ((0, 10), (0, 11, 0))
# Host launches of the first pass, of each later pass; EAGLE-3's fc (first pass) and its
# draft-vocabulary mapping (every pass).
_FIRST_PASS_LAUNCHES = 11
_LATER_PASS_LAUNCHES = 21
_EAGLE3_FC = 1
_EAGLE3_VOCAB_MAP = 4


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

    def draft_launches(self, engine_version: str | None) -> int | None:
        """Kernels the proposer launches from the host in one step's drafting (module
        docstring): 11 for the first pass, 21 for each of the k - 1 later ones, 1 for the stack
        when k > 1; EAGLE-3 + 1 (fc) + 4 a pass (its vocabulary map); None at a release not
        read."""
        lo, hi = _LAUNCHES_READ
        if not lo <= version_key(engine_version)[:3] <= hi:
            return None
        eagle3 = self.method == "eagle3"
        vocab_map = _EAGLE3_VOCAB_MAP if eagle3 else 0
        first = _FIRST_PASS_LAUNCHES + vocab_map + (_EAGLE3_FC if eagle3 else 0)
        later = self.one_token_draft_passes
        return first + later * (_LATER_PASS_LAUNCHES + vocab_map) + (1 if later else 0)
