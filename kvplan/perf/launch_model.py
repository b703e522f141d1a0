"""How an eager prefill step's CPU launch time combines with its GPU time (issues 29 / 30):
three candidate models, one default. Counterfactual only: `Efficiency.prefill_launch_model`
"sum" (the default, kvplan.perf.efficiency PREFILL_LAUNCH_FIT) charges every step exactly as
before; the others exist for tests/benches/launch_models.py, which refits the one constant under
each and prints what it moves.

A step launches `ops` ops from Python (kvplan.perf.op_counts.eager_prefill_ops), each taking
`launch_s` of CPU time; the GPU runs them in launch order on one stream. `roofline._Step`
records its GPU work as events in that order: (seconds, kernels), a kernel count of 0 for GPU
time launched by no op of its own (the per-layer overhead, a small kernel's bytes beyond its
floor). The step's kernels and its Python ops are not the same count (the per-layer overhead
stands for ops the step does not itemise), so the ops' launch time is spread evenly over the
kernels: `ops x launch_s / kernels` per kernel.

- "sum": the launch is added to the GPU time, ops x launch_s (today's rule and fit).
- "op_max": each kernel costs max(its launch share, its GPU time), summed over the step: the
  GPU idles while a short kernel's launch is still running, a long kernel hides its launch.
  No backlog carries over: a launch hidden under a long kernel does not bank time for the next.
- "stream": the async eager stream exactly. Launches never wait for the GPU (no host sync in
  the prefill forward: kvplan.perf.overlap's docstring on branch overlap53, SGLang 0.5.8.post1
  trtllm_mla_backend.py:578-610), the GPU starts kernel i at max(its launch end, kernel i - 1's
  end): the step ends at max over i of (launch end of i + the GPU time from i on). Under a
  long kernel the CPU runs ahead, so a run of short kernels after it does not idle the GPU.

Both non-default models return the step's time beyond its GPU time (the `spill`), charged as
`prefill_launch` where the sum charges ops x launch_s. With the overlap scheduler's head start
H (the previous step's GPU time, branch overlap53's kvplan.perf.overlap), the "stream" step
takes max(G, stream time - H) = G + max(0, spill - H): its spill composes with that rule.
"""

from __future__ import annotations

from collections.abc import Sequence

LAUNCH_MODELS = ("sum", "op_max", "stream")


def launch_spill_s(events: Sequence[tuple[float, int]], ops: int, launch_s: float,
                   model: str) -> float:
    """Seconds the step's `ops` launches of `launch_s` each add to its GPU `events`
    ((seconds, kernels) in launch order) under `model` (LAUNCH_MODELS; module docstring)."""
    if model == "sum":
        return ops * launch_s
    kernels = sum(k for _, k in events)
    if kernels == 0:
        return ops * launch_s
    share = ops * launch_s / kernels  # launch time per kernel
    gpu = sum(t for t, _ in events)
    if model == "op_max":
        return sum(max(0.0, k * share - t) for t, k in events)
    if model != "stream":
        raise ValueError(f"unknown launch model {model!r} (one of {', '.join(LAUNCH_MODELS)})")
    cpu = end = 0.0
    for t, k in events:
        if k == 0:
            end += t
            continue
        g = t / k
        # k equal kernels of g each, launched every `share` from `cpu` on: the last ends at
        # the later of the GPU running them back to back from `end` and the latest launch
        # that gates it (the last one when launches are slower than kernels, else the first).
        gated = cpu + k * share + g if share >= g else cpu + share + k * g
        end = max(end + k * g, gated)
        cpu += k * share
    return end - gpu
