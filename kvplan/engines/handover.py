"""The KV a disaggregated deployment hands over, prefill worker to decode worker, per request:
what each engine's connector moves (`EngineRules.kv_connector`; the rules per connector live in
kvplan.engines.<engine>.connectors, read from the connector's source of a named version).

A `Handover` counts bytes the way the connector does: per decode rank (what that rank reads or
receives, every layer and cache group), per transfer (one read posted to one prefill rank: the
unit vLLM's NIXL log line "Avg MB per transfer" averages) and per prefill rank (what it sends).
Per-block and per-state bytes come from the kv/ cache kinds on the rank (`RankCaches`); this
module only says which of them move.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kvplan._util.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.launch import LaunchLayout
    from kvplan.kv.kinds import CacheKind, LayerCaches
    from kvplan.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class LayerMove:
    """One cache kind's share of a handover, on one decode rank."""

    kind: str  # the cache kind as `kvplan estimate` describes it
    layers: int  # layers of this kind on the rank
    units: int  # blocks (or state slots) moved per layer
    unit_bytes: int  # bytes of one block (or state slot) of one layer on the rank
    rule: str  # why that many (the connector's rule)

    @property
    def nbytes(self) -> int:
        return self.layers * self.units * self.unit_bytes

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "layers": self.layers, "units": self.units,
                "unit_bytes": self.unit_bytes, "bytes": self.nbytes, "rule": self.rule}


@dataclass(frozen=True, kw_only=True)
class TransferQueue:
    """How many transfers one end of a connector runs at once, where its code bounds them (for
    the closed-loop simulation, kvplan.analysis.simulate.disagg_queue): each sending prefill
    rank runs at most `send_slots`, each receiving decode rank (a TP server's ranks together,
    each receiving its share of every request) at most `recv_slots`; the rest wait in order.
    The prefill rank keeps a prompt's blocks until its send ends (`sender_holds_kv`), so its
    pool bounds the prompts it admits, each reserving its prompt and `held_extra_tokens`."""

    send_slots: int
    recv_slots: int
    sender_holds_kv: bool
    held_extra_tokens: int
    source: str  # the code it follows


@dataclass(frozen=True, kw_only=True)
class Handover:
    """One request's KV, handed from the prefill worker's ranks to the decode worker's."""

    connector: str
    engine_version: str | None
    input_len: int
    tokens_moved: int  # prompt tokens whose KV moves (the rest the decode worker recomputes)
    block_size: int
    bytes_per_rank: tuple[int, ...]  # each decode rank holding the request, stage-major
    transfer_bytes: tuple[int, ...]  # each transfer the connector posts (one per source rank)
    sender_bytes: tuple[int, ...]  # each prefill rank holding the request, stage-major
    moves: tuple[LayerMove, ...] = ()  # decode rank 0's share by cache kind
    notes: tuple[str, ...] = field(default_factory=tuple)
    # The decode worker's side of TTFT, where the connector's flow is read: the transfer ends
    # at a decode step's boundary (ceil(transfer / step) steps, at least one), and this many
    # more decode steps pass before the first token (kvplan.analysis.disagg_ratio). None: not
    # read; TTFT counts the transfer time alone.
    first_token_steps: float | None = None
    # The prefill worker's side, where the engine's disaggregated scheduler is read (for the
    # closed-loop simulation, kvplan.analysis.simulate.disagg_sim): it forms its next step
    # when the current one starts (`prefill_lookahead`), and it puts a request on an
    # attention-DP rank by a random id rather than by load (`prefill_random_rank`).
    prefill_lookahead: bool = False
    prefill_random_rank: bool = False
    # The decode worker takes a request in at a step boundary, its transfer starting there, and
    # sees it done at a later boundary (`transfer_polled`: TensorRT-LLM's generation server,
    # kvplan.engines.trtllm.disagg_flow (b); the simulation's rule).
    transfer_polled: bool = False
    # Transfers one at a time (or a few) per rank on each end (`TransferQueue`); None: every
    # transfer runs at once (the simulation's rule before trtctx68).
    transfer_queue: TransferQueue | None = None

    @property
    def bytes_per_request(self) -> int:
        """All decode ranks together: what crosses the link for one request."""
        return sum(self.bytes_per_rank)

    def to_dict(self) -> dict[str, Any]:
        return {"connector": self.connector, "engine_version": self.engine_version,
                "input_len": self.input_len, "tokens_moved": self.tokens_moved,
                "block_size": self.block_size,
                "kv_transfer_bytes_per_request": self.bytes_per_request,
                "kv_transfer_bytes_per_rank": list(self.bytes_per_rank),
                "transfer_bytes": list(self.transfer_bytes),
                "sender_bytes_per_rank": list(self.sender_bytes),
                "moves": [m.to_dict() for m in self.moves], "notes": list(self.notes),
                "first_token_steps": self.first_token_steps,
                "prefill_lookahead": self.prefill_lookahead,
                "prefill_random_rank": self.prefill_random_rank,
                "transfer_polled": self.transfer_polled,
                "transfer_queue": (None if self.transfer_queue is None else {
                    "send_slots": self.transfer_queue.send_slots,
                    "recv_slots": self.transfer_queue.recv_slots})}


@dataclass(frozen=True, kw_only=True)
class DecodeRankState:
    """One decode attention rank as its admission sees it (for the closed-loop simulation,
    kvplan.analysis.simulate.disagg_sim): what its requests hold."""

    free_tokens: int  # pool tokens no request holds (whole pages)
    running: int  # requests in the running batch
    pending: int  # admitted, not yet running (in transfer or waiting for a seat)
    running_tokens: int  # prompt + generated tokens of the running requests

    @property
    def held(self) -> int:
        return self.running + self.pending


@dataclass(frozen=True, kw_only=True)
class PrefillRankState:
    """One attention-DP rank of a prefill worker as its engine's balancer sees it (for the
    closed-loop simulation, kvplan.analysis.simulate.disagg_sim)."""

    waiting: int  # prompts queued, never scheduled
    running: int  # prompts scheduled (in the running step, or part-prefilled), not done
    prompt_tokens: int  # the whole prompts of both


class PrefillBalance(Protocol):
    """The engine's rule for which attention-DP rank of a prefill worker takes a new prompt:
    its DP balancer, from the ranks' queues (`by_load`), or a draw of its own whatever the
    queues (SGLang's bootstrap room)."""

    by_load: bool

    def rank(self, ranks: Sequence[PrefillRankState], prompt_len: int,
             rng: random.Random) -> int:
        """The index in `ranks` of the rank that takes a prompt of `prompt_len` tokens (`rng`:
        the simulation's seeded draws, for a rule that draws)."""


def check_no_recv_interval(recv_interval: int) -> None:
    """For a connector whose decode side takes requests in at every step boundary (no
    --scheduler-recv-interval: SGLang's flag, kvplan.engines.sglang.decode_admission): any
    value but 1 is a one-line InputError."""
    if recv_interval != 1:
        raise InputError(f"--scheduler-recv-interval {recv_interval}: SGLang's decode flag; "
                         "this engine's decode side takes the handed-over requests at every "
                         "step (give --engine sglang, or leave it at 1)")


class DecodeAdmission(Protocol):
    """A decode worker's admission of a prompt before its prefill runs (the engine's
    disaggregated flow, where read): the prompt waits until the decode rank takes it, which
    then holds its prompt's pages and a request slot until the request ends."""

    pool_tokens: int  # the rank's pool
    page_tokens: int  # its page size
    max_running: int  # running requests at most
    # The decode scheduler takes newly sent requests in only at some step boundaries: every
    # `recv_interval` decode steps while it only decodes, at once after a step that seated
    # handed-over requests or while it is idle (SGLang's --scheduler-recv-interval:
    # kvplan.engines.sglang.decode_admission); 1: at every boundary.
    recv_interval: int

    @property
    def launch_groups(self) -> tuple[tuple[str, ...], ...]:
        """The decode launch's flags for what is not the engine's default (`recv_interval`)."""

    def admits(self, state: DecodeRankState, queued: int, input_len: int,
               max_new_tokens: int) -> int:
        """How many of `queued` prompts of `input_len` tokens at the head of the rank's queue
        it admits now."""

    def single_need(self, input_len: int, max_new_tokens: int) -> int:
        """The tokens one running request of these lengths counts for in the rule (the
        running batch's largest is `admits_each`'s `running_need`)."""

    def admits_each(self, state: DecodeRankState, heads: Iterable[tuple[int, int]],
                    running_need: int) -> int:
        """`admits` for requests of their own lengths (a client's length spread): how many of
        the queue's head requests, (prompt tokens, max_new_tokens) each in order, it admits
        now; `running_need`: the largest `single_need` of the running requests."""


@dataclass(frozen=True, kw_only=True)
class ContextScheduler:
    """A prefill (context) rank's step limits where the engine's own scheduler is not
    simulated but its disaggregated context server's is read (TensorRT-LLM:
    kvplan.engines.trtllm.disagg_flow), for the closed-loop simulation."""

    max_num_tokens: int  # prompt tokens per step
    max_batch_size: int  # prompts per step
    chunked: bool  # a prompt longer than what is left of the tokens continues next step


class KvConnector(Protocol):
    """One engine's connector (by version): which caches move, and the flags that turn it on."""

    name: str

    def handover(self, spec: ModelSpec, *, input_len: int, prefill: LaunchLayout,
                 decode: LaunchLayout, decode_stages: tuple[tuple[LayerCaches, ...], ...],
                 block_size: int, version: str | None, inputs: Any = None
                 ) -> Handover:
        """The KV one request of `input_len` prompt tokens hands over. `decode_stages`: the
        caches one decode rank of each pipeline stage holds (kvplan.engines.caches);
        `inputs`: the decode role's PlanInputs (the engine's own options; kvplan.engines.base
        imports this module, so it is not named here)."""

    def launch_groups(self, role: str, version: str | None, block_size: int | None
                      ) -> tuple[tuple[str, ...], ...]:
        """The flags a role's launch command adds (role: "prefill" or "decode"; the block
        size both roles must share, where one was given)."""

    def launch_yaml(self, role: str, version: str | None, block_size: int | None) -> str:
        """Lines a role's options file adds (engines configured by YAML), else ""."""

    def launch_env(self, role: str, version: str | None, spec: ModelSpec
                   ) -> tuple[tuple[str, str], ...]:
        """Environment variables both roles' commands need for this model, (name, value)."""

    def decode_admission(self, *, pool_tokens: int, max_num_reqs: int, page_tokens: int,
                         dp_attention: int, user_max_running: int | None,
                         recv_interval: int = 1) -> DecodeAdmission | None:
        """The decode rank's admission of a prompt before its prefill (`DecodeAdmission`),
        from its pool's tokens, request slots and page size, and the launch's running-request
        flag (None: unset); None where the connector's flow admits on the decode side only
        after the handover (or it is not read). `recv_interval`: the decode launch's
        --scheduler-recv-interval (1: SGLang's default, and the only value an engine without
        that flag takes: a one-line InputError otherwise)."""

    def context_scheduler(self, version: str | None) -> ContextScheduler | None:
        """The context server's default step limits, where the engine's disaggregated flow
        is read for them (TensorRT-LLM's context server: its own flags); None where the
        engine's scheduler answers (`EngineRules.prefill_step_defaults`)."""

    def prefill_balance(self) -> PrefillBalance:
        """Which attention-DP rank of a prefill worker takes a new prompt (`PrefillBalance`):
        the engine's DP balancer, or its disaggregated prefill's own rule."""

    def no_decode_connector(self, version: str | None, hold_env_s: float | None = None
                            ) -> NoDecodeConnector | None:
        """The flow where the prefill workers run this connector and the decode workers none
        (`NoDecodeConnector`), at `version` and the hold's environment override where the
        deployment sets one; None where the engine's code is not read for it."""


@dataclass(frozen=True, kw_only=True)
class NoDecodeConnector:
    """How a deployment whose decode workers run without the connector behaves, where the
    engine's code is read for it (`KvConnector.no_decode_connector`): the decode worker
    prefills every prompt itself (nothing is pulled), and the prefill worker keeps a finished
    prompt's blocks `hold_s` (the connector's wait for a read that never comes), then frees
    them (kvplan.analysis.simulate.disagg_local)."""

    hold_s: float
    source: str


# One decode rank's share of one cache kind, by prefill rank: (source rank, bytes) pairs.
Sources = Callable[["CacheKind", int, int], list[tuple[int, int]]]
# How many blocks (or state slots) of one layer of a cache kind move, and why.
Units = Callable[["CacheKind"], tuple[int, str]]


def pick_connector(name: str | None, known: tuple[str, ...], what: str, suffix: str = "",
                   strip: str = "") -> str:
    """The `--connector` name as one of `known` (none given: the first), else one line naming
    the `known` ones (`what`: whose they are; `suffix`: what else the line says). `strip`: a
    suffix the engine's own class names carry (vLLM's "NixlConnector")."""
    key = (name or known[0]).strip().lower().removesuffix(strip)
    if key not in known:
        raise InputError(f"--connector: {what}: {', '.join(known)} (got {name!r}{suffix})")
    return key


def handover_tps(input_len: int, prefill: LaunchLayout, decode: LaunchLayout, engine: str
                 ) -> tuple[int, int]:
    """The (prefill, decode) attention TP sizes of a handover of `input_len` prompt tokens, as
    every connector checks them: at least one token, both roles' TP sizes dividing one
    another, and equal pipelines only (what kvplan pairs; `engine`: whose handover)."""
    if input_len < 1:
        raise InputError(f"--input-len: must be >= 1, got {input_len}")
    p_tp, d_tp = prefill.attention_tp, decode.attention_tp
    if prefill.pp != decode.pp:
        raise InputError(f"--prefill-pp {prefill.pp} / --decode-pp {decode.pp}: kvplan models "
                         f"{engine} handovers between equal pipeline layouts only")
    if max(p_tp, d_tp) % min(p_tp, d_tp):
        raise InputError(f"--prefill-tp {p_tp} / --decode-tp {d_tp}: {engine} needs one "
                         "attention TP size to divide the other")
    return p_tp, d_tp


def unique_head_sources(d_rank: int, d_tp: int, p_tp: int, kv_heads: int | None) -> list[int]:
    """Prefill ranks holding distinct KV heads of one decode rank's slice, the first rank of
    each (prefill TP larger; a head replicated over several prefill ranks is read once)."""
    if d_tp >= p_tp:
        return [d_rank * p_tp // d_tp]
    ratio = p_tp // d_tp
    seen: dict[int, int] = {}
    for r in range(d_rank * ratio, (d_rank + 1) * ratio):
        seen.setdefault(r * (kv_heads or p_tp) // p_tp, r)
    return sorted(seen.values())


def assemble(*, connector: str, version: str | None, input_len: int, tokens: int,
             block_size: int, decode_stages: tuple[tuple[LayerCaches, ...], ...], d_tp: int,
             p_tp: int, units: Units, sources: Sources, notes: tuple[str, ...],
             first_token_steps: float | None = None,
             unit_bytes: Callable[[CacheKind], int] | None = None) -> Handover:
    """A handover from the connector's two rules: blocks (or state slots) per layer of each
    cache kind (`units`), and which prefill ranks send a decode rank's bytes of a kind, how
    many each (`sources`). One transfer per (source, decode rank) pair. `unit_bytes`: the
    bytes of one block (or state slot) of a kind, where the connector does not move the
    cache's own page (or the state's own bytes)."""
    per_rank: list[int] = []
    transfers: list[int] = []
    senders = [0] * (p_tp * len(decode_stages))
    first_moves: list[LayerMove] = []
    for stage, layers in enumerate(decode_stages):
        kinds: dict[CacheKind, int] = {}
        for lc in layers:
            for c in lc.caches:
                kinds[c] = kinds.get(c, 0) + 1
        moves = []
        for cache, count in kinds.items():
            n, rule = units(cache)
            unit = (unit_bytes(cache) if unit_bytes is not None else
                    cache.state_bytes if cache.is_state else cache.page_bytes(block_size))
            moves.append(LayerMove(kind=cache.describe(), layers=count, units=n,
                                   unit_bytes=unit, rule=rule))
        if stage == 0:
            first_moves = moves
        for d_rank in range(d_tp):
            by_source: dict[int, int] = {}
            for cache, move in zip(kinds, moves, strict=True):
                for src, nbytes in sources(cache, d_rank, move.nbytes):
                    by_source[src] = by_source.get(src, 0) + nbytes
            per_rank.append(sum(by_source.values()))
            for src, nbytes in sorted(by_source.items()):
                transfers.append(nbytes)
                senders[stage * p_tp + src] += nbytes
    return Handover(connector=connector, engine_version=version, input_len=input_len,
                    tokens_moved=tokens, block_size=block_size,
                    bytes_per_rank=tuple(per_rank), transfer_bytes=tuple(transfers),
                    sender_bytes=tuple(senders), moves=tuple(first_moves), notes=notes,
                    first_token_steps=first_token_steps)
