"""SGLang's EAGLE-family speculative decoding as its scheduler and EAGLEWorker spend a step,
chain drafting only (``--speculative-eagle-topk 1``; NEXTN = EAGLE over the model's MTP
layers). Read in the sdists of 0.5.3, 0.5.6 and 0.5.9, ``python/sglang/srt/`` (line numbers
0.5.3 / 0.5.6 / 0.5.9); the "v1" worker (speculative/eagle_worker.py), the default: v2 needs
SGLANG_ENABLE_SPEC_V2, not modelled.

- Server args: topk 1 sets ``speculative_num_draft_tokens = num_steps + 1``
  (server_args.py 0.5.3 :1110-1116, 0.5.6 :1744-1750, 0.5.9 :2444-2450); the overlap scheduler
  is turned off (0.5.3 :1061, 0.5.6 :1693-1694, 0.5.9 :2383-2384, v2 off) and mixed chunks too
  (0.5.9 :2390-2395); --max-running-requests unset becomes 48 (kvplan.engines.sglang.pools
  spec_default_running).
- A prefill (extend) batch (eagle_worker.py forward_batch_generation, 0.5.3 :432-455, 0.5.6
  :270-286, 0.5.9 :278-303): the target's extend, then ``forward_draft_extend`` of the draft
  over the same tokens (its KV for the prompt); one token sampled a request.
- A decode batch (0.5.6 :287-313): ``draft`` runs ``draft_forward``, whose loop over
  ``range(num_steps)`` breaks before the last forward (0.5.3 :758/:767, 0.5.6 :615/:625, 0.5.9
  :642/:651): S - 1 one-token draft forwards (the first draft token comes from the last draft
  extend); ``verify`` runs the target over num_draft_tokens = S + 1 tokens a request (the
  verified token and the S drafts; prepare_for_verify, eagle_info.py 0.5.6 :107-116, allocates
  them); then ``forward_draft_extend_after_decode`` (0.5.3 :1026, 0.5.6 :917, 0.5.9 :902) runs
  the draft over accept_length + 1 tokens a request (eagle_info.py 0.5.6 :682), in the draft-
  extend CUDA graph padded to ``num_tokens_per_batch = num_steps + 1`` (eagle_worker.py 0.5.6
  :938, :968-975): kvplan prices S + 1, the graph's shape.
- CUDA graphs: the draft's decode passes and the draft extend replay their own graphs
  (init_cuda_graphs, 0.5.6 :213-253): no host launches charged (unlike vLLM's piecewise head).
- KV: the draft passes' S x topk slots a request are allocated and handed back at once
  (``alloc_token_slots(..., backup_state=True)`` then ``restore_state``, 0.5.6 :380-384, :494):
  the verify's S + 1 reuse them. After verify the rejected drafts' slots are freed (eagle_info.py
  0.5.6 :410-419): a request grows by 1 + its accepted drafts.
- Retraction (page size 1). The trigger, ``check_decode_mem`` before a decode batch
  (scheduler.py 0.5.3 :2001, 0.5.6 :1910, 0.5.7 :2084-2086, 0.5.9 :2213): 0.5.3 - 0.5.7 need
  ``running x buf_multiplier`` free tokens, buf_multiplier = num_draft_tokens + topk x
  num_steps (scheduler.py 0.5.3 :826-832, 0.5.6 :798-805, 0.5.7 :709-718; schedule_batch.py
  0.5.6 :1567-1575): 2S + 1 a request with topk 1; 0.5.9's ``new_tokens_required_next_decode``
  max(num_steps x topk, num_draft_tokens) a request (schedule_batch.py 0.5.9 :1811-1830, v1: no
  doubling): S + 1. ``retract_decode`` then takes requests from the back of the batch,
  unsorted with speculative decoding ("filter_batch API can only filter requests from the
  back", schedule_batch.py 0.5.3 :1509-1511, 0.5.6 :1595-1599, 0.5.9 :1854-1858), at least
  one, until ``check_decode_mem(selected_indices)`` passes: at its default buf_multiplier 1 in
  0.5.3 / 0.5.6 (one token a kept request, :1524-1525 / :1610-1611), at the trigger's 2S + 1
  in 0.5.7 (passed in: scheduler.py :2096-2098, schedule_batch.py :1753-1779), S + 1 in 0.5.9
  (:1869-1870); one request is always kept.
- Releases: 0.5.3 - 0.5.7 and 0.5.9 read (0.5.4 / 0.5.5 between two reads that agree). Others
  are refused (`retraction`): 0.5.8 not read (its sdist did not download here), nothing past
  0.5.9 read, and 0.4.9 differs (its retract loop needs 20 + 2S + 1 a request,
  schedule_batch.py 0.4.9 :1393-1409, and its draft extend has no padded graph shape).
- ``accept len`` in the decode log line (managers/scheduler_metrics_mixin.py 0.5.6 :81-82,
  :294; 0.5.9 :148-149, :390) = (accepted drafts + bs) / bs over the verifies: 1 + accepted
  drafts a verify, vLLM's mean acceptance length (kvplan.engines.vllm.spec_decode); its
  ``accept rate`` divides the same count by verifies x num_draft_tokens (0.5.6 :280-288): accept
  len / (S + 1), not vLLM's draft acceptance rate (accept len - 1) / S.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key

# (trigger, retract loop) tokens a request, by the releases read (module docstring); "2S+1",
# "S+1" or "1".
_RETRACTION = (((0, 5, 3), (0, 5, 6), ("2S+1", "1")), ((0, 5, 7), (0, 5, 7), ("2S+1", "2S+1")),
               ((0, 5, 9), (0, 5, 9), ("S+1", "S+1")))
RELEASES_READ = "0.5.3 - 0.5.7 or 0.5.9"


def retraction(engine_version: str | None) -> tuple[str, str]:
    """The release's (trigger, loop) rule names; InputError at a release not read."""
    v = version_key(engine_version)[:3]
    for lo, hi, rule in _RETRACTION:
        if lo <= v <= hi:
            return rule
    raise InputError(f"simulate --engine sglang {engine_version or '(newest)'} "
                     "--speculative-method: SGLang's decode retraction with drafts was read at "
                     f"{RELEASES_READ} (give --engine-version one of them)")


def check_chain(topk: int | None) -> None:
    """kvplan simulates chain drafting only; a tree (topk > 1) is refused."""
    if topk is not None and topk > 1:
        raise InputError(f"simulate --speculative-eagle-topk {topk}: kvplan simulates SGLang's "
                         "chain drafting only (--speculative-eagle-topk 1)")


@dataclass(frozen=True, kw_only=True)
class SglangSpecDecode:
    """EAGLE / NEXTN with topk 1 and S = `num_steps` (the module docstring's rules)."""

    method: str
    num_steps: int
    engine_version: str | None = None

    @property
    def num_speculative_tokens(self) -> int:
        """The drafts a verify checks, S (the acceptance's k)."""
        return self.num_steps

    @property
    def verify_tokens(self) -> int:
        """num_draft_tokens with topk 1: the verified token and the S drafts."""
        return self.num_steps + 1

    @property
    def one_token_draft_passes(self) -> int:
        """draft_forward's forwards: S - 1 (the loop breaks before its last)."""
        return self.num_steps - 1

    @property
    def draft_extend_tokens(self) -> int:
        """Tokens a request of forward_draft_extend_after_decode's graph: S + 1 (padded)."""
        return self.num_steps + 1

    @property
    def lookahead_slots(self) -> int:
        """No slots reserved past the scheduled ones (the verify allocates its S + 1)."""
        return 0

    def _tokens(self, rule: str) -> int:
        s = self.num_steps
        return {"2S+1": 2 * s + 1, "S+1": s + 1, "1": 1}[rule]

    def decode_check_tokens(self) -> int:
        """Free tokens the scheduler's check before a decode batch needs a running request
        (page size 1): 2S + 1 in 0.5.3 - 0.5.7, S + 1 in 0.5.9 (module docstring)."""
        return self._tokens(retraction(self.engine_version)[0])

    def retract_keep_tokens(self) -> int:
        """Free tokens retract_decode's loop needs a kept request: 1 in 0.5.3 - 0.5.6 (its
        check_decode_mem at buf_multiplier 1), 2S + 1 in 0.5.7, S + 1 in 0.5.9."""
        return self._tokens(retraction(self.engine_version)[1])

    def draft_launches(self, engine_version: str | None) -> int:
        """No host launches charged: the draft's passes replay CUDA graphs."""
        return 0
