"""The Triton fused-MoE JIT stall (issue 30; `kvplan simulate --moe-jit-compile-ms`, off by
default): one replica's step time with the compiles vLLM makes the first time a step's MoE
call meets a kernel start-up did not compile (kvplan.engines.vllm.moe_jit, the rule read in
vLLM 0.15.1 and Triton 3.5.1). The compile time is an input: no public measurement of it was
found (the issue's search: vLLM, SGLang and Triton issues, pages, code), so kvplan sets none."""

from __future__ import annotations

from dataclasses import dataclass, field

from kvplan.analysis.simulate.sim_types import StepCost
from kvplan.engines.vllm.moe_jit import CompileKey, TritonMoeJit


@dataclass(frozen=True, kw_only=True)
class MoeJitStall:
    """The rule and the seconds one compile stalls a step."""

    rule: TritonMoeJit
    compile_s: float


@dataclass(kw_only=True)
class JitStallCost:
    """`inner`'s step time plus `stall.compile_s` for each kernel the step compiles; one per
    replica (each engine process compiles for itself). `compiled` starts as start-up's set."""

    inner: StepCost
    stall: MoeJitStall
    compiled: set[CompileKey] = field(default_factory=set)
    compiles: int = 0
    # Token counts whose keys are all compiled: most steps, answered without the rule.
    _done: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.compiled |= self.stall.rule.warm()

    @property
    def full_attention_only(self) -> bool:
        return self.inner.full_attention_only

    def _stall_s(self, tokens: int) -> float:
        if tokens in self._done:
            return 0.0
        self._done.add(tokens)
        new = [k for k in self.stall.rule.keys(tokens) if k not in self.compiled]
        self.compiled.update(new)
        self.compiles += len(new)
        return len(new) * self.stall.compile_s

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        tokens = len(decode_contexts) + sum(n for _, n in chunks)
        return (self.inner.seconds(decode_contexts=decode_contexts, chunks=chunks)
                + self._stall_s(tokens))

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        tokens = decodes + sum(n for _, n in chunks)
        return (self.inner.seconds_from_sums(decodes, decode_keys, chunks)
                + self._stall_s(tokens))


def replica_cost(cost: StepCost, stall: MoeJitStall | None) -> StepCost:
    """A replica's step cost: `cost`, with its own compiled set where the stall is simulated."""
    return cost if stall is None else JitStallCost(inner=cost, stall=stall)
