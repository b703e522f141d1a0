"""The benchmark client's own serial work in a closed loop (`kvplan simulate --client-cost
measured`): when the replacements of the requests that finished at one engine step are sent.

`vllm bench serve` (vllm/benchmarks/serve.py, `limited_request_func` under an
asyncio.Semaphore(C); lib/endpoint_request_func.py `async_request_openai_completions`; read in
vLLM 0.32, the same loop as the 0.11.0 source bench_client.py cites) runs every request as a task
on one asyncio loop, one thread. When K streams end at one instant, the loop runs the K finishing
tasks first (each parses its last chunks, closes its response, releases the semaphore; a release
only schedules the waiting task, behind the ones already ready), then the K tasks that acquired a
slot, each building its payload and POSTing it. So replacement i (0-based) of the group is sent at

    start + K x finish_s + (i + 1) x send_s,  start = max(when the client sees the K ends,
                                                          when its loop is next free)

not all at `start`, as the replay without this stage sends them. Left out: the chunks of the
streams still running, which the same loop also parses (measured ~0.05 ms a chunk on the CPU
below, tests/benches/clientloop68.py), and the network.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ClientLoopCost:
    """The client loop's serial CPU seconds per finished stream and per replacement sent."""

    finish_s: float
    send_s: float
    source: str

    def loop(self) -> ClientLoop:
        """A fresh client loop at this cost (one a run)."""
        return ClientLoop(self)


# Measured, not fitted to any serving row: tests/benches/clientloop68_measure.py runs vLLM 0.32's
# `vllm bench serve` coroutine (benchmark(), request rate inf, --max-concurrency C, openai
# completions, streaming) against a loopback fake server that ends K streams at one step, on
# an "Intel(R) Xeon(R) Processor @ 2.80GHz" (2 cores, shared with other work). The client's CPU
# a request, 0.581 ms (less 0.053 ms a streamed token chunk: the line over N = 8 / 32 / 128 at
# C 25), split as the wall clock splits a group of 25 (median finish 1.08 ms, send 0.375 ms a
# request, both inflated by the host's load): finish 0.431 ms, send 0.150 ms
# (tests/benches/clientloop68.py `constants` over tests/data/clientloop68_measured.json).
VLLM_BENCH_CLIENT_COST = ClientLoopCost(
    finish_s=0.431e-3, send_s=0.150e-3,
    source="tests/benches/clientloop68.py: vLLM 0.32 `vllm bench serve` against a loopback "
           "fake server, Intel Xeon @ 2.80GHz (a benchmark host's CPU differs)")


class ClientLoop:
    """One client's loop over the closed loop's finishes, in the order the client sees them."""

    def __init__(self, cost: ClientLoopCost) -> None:
        self.cost = cost
        self._free_s = float("-inf")

    def sends(self, seen_s: float, count: int) -> list[tuple[float, int]]:
        """(when, 1) for each of the `count` replacements of streams the client sees end at
        `seen_s`, in send order (module docstring); the loop is busy until the last is sent."""
        c = self.cost
        start = max(seen_s, self._free_s) + count * c.finish_s
        out = [(start + (i + 1) * c.send_s, 1) for i in range(count)]
        self._free_s = start + count * c.send_s
        return out
