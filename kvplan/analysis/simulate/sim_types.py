"""The simulator's types (kvplan.analysis.simulate.scheduler and the engines built on it): a
request as the scheduler sees it, the scheduler's settings, what a run leaves, and the step
cost it asks. kvplan.analysis.simulate.scheduler imports each, so they stay importable from
there too."""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kvplan.analysis.simulate.client_loop import ClientLoopCost
from kvplan.analysis.simulate.hybrid_pool import HybridHold
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.vllm.frontend import ApiOutputCost, ApiServerCost, TokenizerBatching


class SimRequest:
    """A request inside the simulator (vllm/v1/request.py Request, the fields the scheduler
    reads)."""

    __slots__ = ("rid", "sent_s", "prompt_len", "output_len", "segments", "num_computed",
                 "num_output", "alloc", "freed", "blocks", "cached_blocks", "first_token_s",
                 "last_token_s", "finish_s", "preemptions", "_hashes", "admitted", "in_batch",
                 "anchor_step", "anchor_computed", "anchor_output", "_shared_tokens", "kept",
                 "hybrid", "seen_s", "_ends")

    def __init__(self, rid: int, spec: RequestSpec, sent_s: float, groups: int) -> None:
        self.rid = rid
        self.sent_s = sent_s
        self.seen_s = sent_s  # when the engine core can first schedule it (the server's batcher)
        self.prompt_len = spec.prompt_len
        self.output_len = spec.output_len
        self.segments = spec.segments
        self.num_computed = 0
        self.num_output = 0
        self.alloc = [0] * groups
        self.freed = [0] * groups
        self.blocks: list[list[object]] = []
        self.cached_blocks = 0
        self.kept: list[list[object]] = []
        self.hybrid: HybridHold | None = None  # its blocks in a hybrid caching pool
        self.first_token_s = -1.0
        self.last_token_s = -1.0
        self.finish_s = -1.0
        self.preemptions = 0
        self.admitted = False
        self._hashes: list[int] = []
        self._ends: tuple[int, ...] | None = None
        self._shared_tokens = sum(n for _, n in spec.segments)
        # In the collective decode batch (kvplan.analysis.simulate.scheduler, `_batch_step`):
        # num_computed / num_output are anchor + steps since `anchor_step`.
        self.in_batch = False
        self.anchor_step = self.anchor_computed = self.anchor_output = 0

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + self.num_output

    def own_from(self, block_size: int) -> int:
        """The first block wholly past the shared segments (its tokens are this request's)."""
        return -(-self._shared_tokens // block_size)

    def block_hash(self, index: int, block_size: int) -> int:
        """The chained hash of full block `index` (vllm/v1/core/kv_cache_utils.py
        hash_block_tokens: hash(parent hash, the block's tokens)). A block's tokens are named
        by the shared segments they come from (key, offset); a block wholly past them (the
        rest of the prompt, the output) holds this request's own tokens, so its chained hash is
        unique to (request, index): it is that pair, packed into a negative int."""
        if index * block_size >= self._shared_tokens:
            return -1 - ((self.rid << 24) | index)
        hashes = self._hashes
        if len(hashes) <= index:
            segments = self.segments
            # The first segment that ends after block len(hashes) starts, and where it starts:
            # the segments before it hold no token of this block or of any later one (the
            # content of each block is as a scan of every segment from the first would find).
            first = bisect_right(self._segment_ends(), len(hashes) * block_size)
            base = self._segment_ends()[first - 1] if first else 0
        while len(hashes) <= index:
            j = len(hashes)
            start, end = j * block_size, (j + 1) * block_size
            content: list[Hashable] = []
            while first < len(segments) and base + segments[first][1] <= start:
                base += segments[first][1]
                first += 1
            offset = base
            for key, length in itertools.islice(segments, first, None):
                lo, hi = max(start, offset), min(end, offset + length)
                if lo < hi:
                    content.append((key, lo - offset, hi - offset))
                offset += length
                if offset >= end:
                    break
            if end > offset:
                content.append(("own", self.rid, max(start, offset)))
            hashes.append(hash((hashes[-1] if hashes else 0, tuple(content))))
        return hashes[index]

    def drop_pages(self) -> None:
        """Let go of the pool's per-page bookkeeping (`blocks`, `kept`, `hybrid`) once the run
        is over: a finished request handed back holds none of the pool's page objects, so they
        are freed with the pool rather than scanned by the collector (speed only:
        kvplan.analysis.simulate.gc_scope; nothing reads them after the run)."""
        self.blocks = []
        self.kept = []
        self.hybrid = None

    def _segment_ends(self) -> tuple[int, ...]:
        """Where each shared segment ends (cumulative tokens), computed once."""
        ends = self._ends
        if ends is None:
            ends = self._ends = tuple(itertools.accumulate(n for _, n in self.segments))
        return ends


@dataclass(frozen=True, kw_only=True)
class SchedulerConfig:
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int
    async_scheduling: bool = False
    # The server's tokenizer batcher in front of the engine (kvplan.analysis.simulate.frontend);
    # None: the engine sees a request when it is sent.
    tokenizer_batching: TokenizerBatching | None = None
    # The API server's serial CPU stage before the batcher (kvplan.analysis.simulate.frontend
    # ServerQueue); None: not simulated (the default).
    api_server: ApiServerCost | None = None
    # The API server loop's work after each engine step (kvplan.analysis.simulate.frontend
    # ServerQueue.deliver_s): a step's tokens reach the client when it is done; None: they
    # reach it at the step's end (the default).
    api_output: ApiOutputCost | None = None
    # The benchmark client's serial loop in a closed loop (kvplan.analysis.simulate.client_loop,
    # `simulate --client-cost measured`); None: every replacement sent when the client sees
    # its finish (the default).
    bench_client: ClientLoopCost | None = None
    # Admission of a waiting request: only when its whole prompt fits in the free blocks (vLLM
    # from its scheduler_reserve_full_isl; the other engines' schedulers) or, False, when its
    # first chunk does (vLLM to 0.18.1: kvplan.engines.vllm.admission).
    full_isl_admission: bool = True


@dataclass(kw_only=True)
class StepRecord:
    """One step, for the timeline."""

    start_s: float
    seconds: float
    tokens: int
    running: int
    waiting: int
    kv_usage: float


@dataclass(kw_only=True)
class SimState:
    """What a run leaves: the finished requests and the counters."""

    finished: list[SimRequest] = field(default_factory=list)
    itl_values: list[float] = field(default_factory=list)
    itl_weights: list[int] = field(default_factory=list)
    steps: int = 0
    preemptions: int = 0
    usage_sum: float = 0.0
    usage_max: float = 0.0
    prefix_queries: int = 0
    prefix_hits: int = 0
    clock_s: float = 0.0
    first_arrival_s: float = 0.0
    timeline: list[StepRecord] | None = None


class StepCost(Protocol):
    """The time of one step (kvplan.perf.mixed_step.MixedStepCost)."""

    @property
    def full_attention_only(self) -> bool: ...

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float: ...

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float: ...


@runtime_checkable
class GatheredStepCost(StepCost, Protocol):
    """A step cost that also prices a rank's MoE layers at the tokens gathered over the
    attention-DP ranks (kvplan.perf.mixed_step.MixedStepCost.regathered_seconds)."""

    def regathered_seconds(self, tokens: int, gathered: int, *, requests: int | None = None,
                           rows: int | None = None) -> float: ...
