"""sglprefill68 (issue 30): engine-timed SGLang prefill steps for DeepSeek-V3 / R1 FP8 TP 8 on
Hopper, recorded BEFORE kvplan's figures were computed (tests.benches.sglprefill68 reads them).

Searched (2026-12-07, corpus issues / code / pages, find_string): SGLang's scheduler line
"Prefill batch[.,] #new-seq: N, #new-token: T, ..." with "input throughput (token/s)", for
DeepSeek-V3 / R1 on H200 / H100 at TP 8; "bench_one_batch" prefill latencies for the same.
NEW HELD-OUT ANCHORS FOUND: NONE. What the search returned, and why each was not taken:
- sgl-project/sglang#11648 (DeepSeek-R1, 6 x 8 H20, DP attention + EP, PD prefill): H20, not
  Hopper H100 / H200 compute, and DP attention (a different step).
- sgl-project/sglang#19712 (DeepSeek-V3.2, "#new-token: 2048 ... input throughput 9406"):
  V3.2 (sparse attention, another step), GPU / TP not stated with the lines, #running-req 7
  (decodes between the prefills, so the throughput is not the step: below).
- eugr/llama-benchy#15 (2048-token prefills at 46 token/s): not DeepSeek on Hopper.
- sgl-project/sglang#3458 / #3361, SemiAnalysisAI/InferenceX#870, datacrunch-research/
  h200-benchmarks: client TTFT / throughput only, no per-step timing.
- sgl-project/sglang#24488 (H200 PD): GLM-5.1, TP 16 DP 16.
- sgl-project/sglang#5571 (DeepSeek-V3 SM90 shared-experts fusion, 5,000-token prompts) and
  tenstorrent/tt-inference-server#356 (DeepSeek-R1-0528, 16 x H100): serving results only.

What the "input throughput" figure is (SGLang 0.5.9 wheel, srt/managers/
scheduler_metrics_mixin.py:166-169, log_prefill_stats): last_prefill_tokens / the time since
the PREVIOUS prefill batch was logged, i.e. the previous line's #new-token over the gap between
two prefill logs: a prefill step only where the prefills run back to back (#queue-req > 0 and
no decode batch between them, e.g. a PD prefill server); in an aggregated run with decodes in
between it also holds their steps. So a logged line is an anchor only with that context.

The engine-timed points already in kvplan (examples/cost-bench.md, tests/benches/fitted_rows.py:
SGLang bench_one_batch, DeepSeek-V3 / R1 / V3.1 FP8 TP 8 H200): they are the launch constant's
FIT rows, so SHAPED, not held out; kept here so the bench can print them beside kvplan.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Anchor:
    """One engine-timed prefill step: `prompts` x `prompt` new tokens in `measured_ms`."""

    label: str
    url: str
    release: str
    gpu: str
    layout: str  # TP / DP / EP
    flags: str
    prompts: int
    prompt: int
    measured_ms: float
    role: str  # "held out" | "shaped"

    @property
    def new_tokens(self) -> int:
        return self.prompts * self.prompt


ANCHORS: tuple[Anchor, ...] = (
    Anchor(label="DeepSeek-R1 1 x 128 (DataCrunch)", url="index file id 49041160351",
           release="SGLang Feb 2025 (0.4.2-era)", gpu="H200", layout="TP 8",
           flags="--enable-torch-compile", prompts=1, prompt=128, measured_ms=196.3,
           role="shaped"),
    Anchor(label="DeepSeek-V3 1 x 1,000", url="https://github.com/sgl-project/sglang/pull/5432",
           release="SGLang Apr 2025", gpu="H200", layout="TP 8",
           flags="SGL_ENABLE_JIT_DEEPGEMM_BMM=0", prompts=1, prompt=1000, measured_ms=179.6,
           role="shaped"),
    Anchor(label="DeepSeek-V3 1 x 1,000 (DeepGEMM bmm)",
           url="https://github.com/sgl-project/sglang/pull/5432", release="SGLang Apr 2025",
           gpu="H200", layout="TP 8", flags="SGL_ENABLE_JIT_DEEPGEMM_BMM=1", prompts=1,
           prompt=1000, measured_ms=166.6, role="shaped"),
    Anchor(label="DeepSeek-V3.1 16 x 512", url="https://github.com/sgl-project/sglang/pull/14764",
           release="SGLang Dec 2025", gpu="H200", layout="TP 8",
           flags="--enable-flashinfer-allreduce-fusion", prompts=16, prompt=512,
           measured_ms=288.9, role="shaped"),
)
