"""TensorRT-LLM's PyTorch-backend scheduler by release line (`kvplan simulate --engine trtllm`):
which lines are simulated, what was read for each, and the one scheduling rule that differs
between them. kvplan.analysis.simulate.trtllm_scheduler simulates the rules the lines share;
it asks the line (`TrtllmLine`) for the one that differs, never the version.

What was read, by line:

- 1.2 and 1.3's pre-releases: the PyTorch executor's and the C++ schedulers' source
  (kvplan.analysis.simulate.trtllm_scheduler's docstring cites it).
- 1.0 (the aggregated rows run 1.0.0rc3) and 1.1 (1.1.0rc2.post2): NOT the source at their
  tags, which no store here holds (the GitHub snapshot is 2.5 GB, over the 500 MB a fetch may
  bring; PyPI's 1.0.0rc3 / 1.1.0rc2 sdists are wheel stubs that download from pypi.nvidia.com,
  which does not resolve here; the code index's stored versions of the scheduler files could
  not be tied to those tags).
  Read instead: the release notes (docs/source/release-notes.md at 001eaec, as
  kvplan.engines.trtllm.architectures reads them) for every release from 0.20 to 1.2, and the
  pull requests behind the scheduling changes they name:
  * 0.20, "API Changes": "[Breaking Change]:Enable scheduling overlap by default" (PR #4174,
    2025-05: `enable_overlap_scheduler` renamed `disable_overlap_scheduler`, False by
    default): the overlap scheduler is on in 1.0 and 1.1 as in 1.2.
  * 1.2, "Highlights / Performance": "Enabled early exit with overlap scheduler" (PR #8587,
    TRTLLM-8831, opened 2025-10-22): "Usually with overlap scheduler we schedule one
    iteration ahead. The idea here is that when a request reaches its `max_tokens` we can avoid
    the last extra iteration because we know that the request will finish": PyExecutor sets
    GENERATION_TO_COMPLETE on a request that completes next iteration and the
    MicroBatchScheduler stops scheduling it there. Before it (1.0, 1.1) the extra iteration
    runs: `_executor_loop_overlap` schedules step k+1 before it reads step k's tokens, so a
    request whose last token step k samples is scheduled again in step k+1 (one more token,
    its KV slot allocated by the KV cache manager's prepare_resources), and its blocks are
    freed only when step k's results are handled, after step k+1 is launched. PR #5211
    ("Overlap: Skip last iter on length", closed unmerged 2025-09-15) tried the same on the
    1.1-era loop. `TrtllmLine.early_exit`.
  Two more lines of those notes touch what is simulated, neither read further: 1.0's "Auto-
  enable ngram with concurrency <= 32" (speculative decoding, which kvplan does not simulate;
  whether it is on unasked was not read) and 1.1's "Enabled KV cache reuse for MLA" (0.20's
  notes already say "Supported KV cache reuse for MLA"; the hits differ only where prompts
  share blocks). Nothing else in them changes the capacity or micro-batch scheduler (attention
  DP's balancing, 1.0, aside: not simulated), their policies and defaults
  (GUARANTEED_NO_EVICT, max_batch_size 2048, max_num_tokens 8192, chunked prefill off, block
  reuse on) or the pool: the pool's per-release sizing (blocks rounded up to 1.1,
  the all-reduce workspace) is kvplan.engines.trtllm.budget's, by version already. So 1.0 and
  1.1 are simulated as 1.2 but for the early exit, an assumption where the notes are silent;
  a run at those versions says so (`TrtllmLine.read`).

The notes describe the final releases: what of them a pre-release carries was not read (e.g.
CUDA graphs on by default, PR #5480, reviewed 2025-07-02, and 1.0.0rc3; kvplan's TensorRT-LLM
step cost has no launch time either way). A pre- or post-release belongs to its release's line
(1.0.0rc3 to 1.0, 1.1.0rc2.post2 to 1.1); which 1.2 pre-release first carries PR #8587 was
not read: the whole 1.2 line takes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan._util.versions import newest_at, version_key


@dataclass(frozen=True, kw_only=True)
class TrtllmLine:
    """One release line of TensorRT-LLM's PyTorch executor as simulated."""

    since: str  # its first release, X.Y
    name: str  # as a run's note names it
    # Under the overlap scheduler, a request that reaches its max_tokens is not scheduled for
    # the iteration after its last token (PR #8587, from 1.2); False: it is, one token more.
    early_exit: bool
    read: str  # what was read for the line (the run's note)

    @property
    def key(self) -> tuple[int, ...]:
        return version_key(self.since)


TRTLLM_LINES = (
    TrtllmLine(since="1.0", name="1.0 - 1.1", early_exit=False,
               read="1.0 / 1.1: their release notes and PRs #4174 / #8587 read, not the source "
                    "at the tag; simulated as 1.2 less the overlap scheduler's early exit"),
    TrtllmLine(since="1.2", name="1.2", early_exit=True,
               read="1.2 / 1.3: the PyTorch executor's and C++ schedulers' source"),
)
# The first release past the lines read (1.4 is not read).
TRTLLM_LINES_UNTIL = (1, 4)


def trtllm_line(version: str | None) -> TrtllmLine:
    """The line `version` belongs to (None: the newest read); one line naming the lines read on
    any other release."""
    key = version_key(version)
    if version is not None and not TRTLLM_LINES[0].key <= key < TRTLLM_LINES_UNTIL:
        raise InputError(f"simulate --engine trtllm: the PyTorch-backend scheduler is simulated "
                         f"for TensorRT-LLM 1.0 - 1.3 (the lines read); --engine-version "
                         f"{version} is not")
    return newest_at(TRTLLM_LINES, key, lambda line: line.key)
