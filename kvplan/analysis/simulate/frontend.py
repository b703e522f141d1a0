"""When the engine core can first see each request, given the server's tokenizer batcher
(kvplan.engines.vllm.frontend.TokenizerBatching; vLLM's `AsyncMicrobatchTokenizer`
`_batch_encode_loop`).

The batcher takes the first queued prompt at its arrival (the batcher idle) and sets the batch's
deadline `wait_s` later; every prompt that arrives by the deadline joins, until the batch holds
`max_batch`; the batch is released at its deadline, or at the arrival of the prompt that fills
it. The tokenizer's own time is not modelled (zero): the next prompt after a release opens a new
batch at its own arrival. Releases are in arrival order, so the engine sees requests in the
order they were sent.

In front of the batcher, with `kvplan simulate --frontend`: the API server's serial CPU stage
(kvplan.engines.vllm.frontend.ApiServerCost; `ServerQueue`): a request reaches the server
`latency_s` after it was sent, waits for the requests before it, and leaves `service_s` later;
the batcher then takes it at that time.

With `kvplan simulate --api-output` (kvplan.engines.vllm.frontend.ApiOutputCost): the same loop,
after every engine step, takes that step's outputs (`ServerQueue.deliver_s`), in the same FIFO
as the ingestion; the step's tokens reach the client when it is done. A step that gives a
request its first token also pays, where the cost has it (vLLM >= 0.17 with `--frontend`), the
detokenizer's prime over the request's prompt tokens (`given_tokens`). The simulator books a
step's output work at the step's end and a request's ingestion when it next looks at arrivals,
which can be after a later step's outputs were booked: the ingestion then waits only for the
output work that reached the loop before the request did (`leave_s` looks through the recent
output work), in the code's FIFO order. With both stages, output work already booked is not
pushed back by the ingestion of a request that reached the loop before it (the two overlap).
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

from kvplan.engines.vllm.frontend import ApiOutputCost, ApiServerCost, TokenizerBatching


class Released(Protocol):
    """A request the batcher times: sent at `sent_s`, seen by the engine at `seen_s`."""

    sent_s: float
    seen_s: float


class Given(Protocol):
    """A scheduled request as the output stage counts it."""

    prompt_len: int
    num_computed: int
    num_tokens: int
    num_output: int


def given_tokens(scheduled: list[tuple[Given, int]], decodes: int = 0) -> tuple[int, int]:
    """(requests given a token, prompt tokens of those given their FIRST token) by a step of
    `scheduled` (request, tokens computed) plus `decodes` running decodes (none a first token):
    the output stage's two counts (kvplan.engines.vllm.frontend.ApiOutputCost.step_s)."""
    outputs = primed = 0
    for r, n in scheduled:
        if r.num_computed + n >= r.num_tokens:
            outputs += 1
            if r.num_output == 0:
                primed += r.prompt_len
    return decodes + outputs, primed


class TokenizerBatcher:
    """One server's batcher over the requests sent to one engine, in arrival order."""

    def __init__(self, rule: TokenizerBatching) -> None:
        self.rule = rule
        self._deadline = float("-inf")
        self._members: list[Released] = []

    def admit(self, req: Released, at_s: float | None = None) -> None:
        """Set `req.seen_s` (and the earlier members' of its batch, when it fills it); `at_s`:
        when it reaches the batcher (default: when it was sent)."""
        t = req.sent_s if at_s is None else at_s
        if t > self._deadline or len(self._members) >= self.rule.max_batch:
            self._deadline = t + self.rule.wait_s
            self._members = []
        self._members.append(req)
        req.seen_s = self._deadline
        if len(self._members) >= self.rule.max_batch:
            for m in self._members:  # full: released now, at the filling arrival
                m.seen_s = t
            self._deadline = float("-inf")
            self._members = []


class ServerQueue:
    """The API server's serial stage over the requests sent to it, in arrival order: one server,
    first come first served (the asyncio loop runs one request's work at a time). `cost`: the
    ingestion's (None: no time of its own, but a request still waits for the loop to be free);
    `output`: each engine step's output work (None: not simulated)."""

    def __init__(self, cost: ApiServerCost | None, output: ApiOutputCost | None = None) -> None:
        self.cost = cost
        self.output = output
        self._free_s = float("-inf")
        self._ingest_free_s = float("-inf")
        # The recent output work: (when it reached the loop, start, end), in order.
        self._work: deque[tuple[float, float, float]] = deque(maxlen=256)

    def leave_s(self, sent_s: float, prompt_len: int) -> float:
        """When a request sent at `sent_s` leaves the stage: it reaches the server `latency_s`
        later, starts when the server is free and takes its service time. With the output
        stage, the server is busy for it only with the requests before it and the output work
        that reached the loop before it did."""
        cost = self.cost
        arrive = sent_s + (cost.latency_s if cost else 0.0)
        service = cost.service_s(prompt_len) if cost else 0.0
        if self.output is None:
            start = max(arrive, self._free_s)
            self._free_s = start + service
            return self._free_s
        start = max(arrive, self._ingest_free_s)
        for ready, begin, end in self._work:
            if ready <= arrive and begin <= start < end:
                start = end
        self._ingest_free_s = start + service
        self._free_s = max(self._free_s, self._ingest_free_s)
        return self._ingest_free_s

    def deliver_s(self, end_s: float, outputs: int, primed_tokens: int = 0) -> float:
        """When the tokens of an engine step that ended at `end_s`, with `outputs` requests given
        a token (`primed_tokens`: the prompt tokens of those given their first), reach the
        client: the loop takes the step's outputs when it is free."""
        if self.output is None:
            return end_s
        start = max(end_s, self._free_s)
        self._free_s = start + self.output.step_s(outputs, primed_tokens)
        if self._free_s > start:
            self._work.append((end_s, start, self._free_s))
        return self._free_s
