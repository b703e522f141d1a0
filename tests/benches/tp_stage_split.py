"""The sim-to-real study's two-stage runs split into their decode step and their chunk-holding
step, from the measured figures alone (issue 30, the offload set's dense TP miss; branch
offl54). Printed only, on no generated page:

    PYTHONPATH=. python -m tests.benches.tp_stage_split

Nothing here changes a rule or a constant. tests/benches/tp_breakdown.py splits kvplan's own
step by term; this asks which of kvplan's two step kinds the measured ITL and TTFT disagree
with, and whether any step-time rule could close the gap at all.

The model (tests/benches/mixtral_ttft.py's, written on the measured side). A stage's mean ITL
is the mean step seen by its decoding requests: ITL = D(b) + f X, with D(b) vLLM's decode step
at b running requests (Little's law: b = rate x measured mean E2E), f = rate x ITL the share of
steps holding a prompt chunk (one chunk a request, arrivals 50-200 ms apart) and X what a chunk
adds to a step. Two stages of one run give

    ITL1 - ITL0 = s (b1 - b0) + (f1 - f0) X

with s vLLM's decode growth per running request. So, with no kvplan number in it,

    X <= (ITL1 - ITL0 - s_floor (b1 - b0)) / (f1 - f0)

where s_floor is what one more request must add to a step: its KV cache read once (KV bytes at
the mean context / HBM bandwidth) and its share of the TP all-reduces at the NVLink line rate
(2 (n - 1) / n x 2 all-reduces x layers x hidden x 2 bytes / 450 GB/s; the least bytes any
all-reduce algorithm moves). With s = kvplan's own growth, the same equation gives X's point
estimate; with kvplan's TTFT pipeline (2 ms tokenizer batch, half a step, the queued step, the
chunk step: TTFT - TTFT_kvplan = 2.5 (D - D_kvplan) + (X - X_kvplan)) a second, independent one.

And a floor no kernel can beat: the chunk-holding step (b0 decodes and the uncached chunk, as
kvplan replays the profile) costs at least its FLOPs at the full dense bf16 peak plus its
all-reduces at the line rate, the two sequential in vLLM 0.15.1 (one stream: no GEMM +
collective fusion, config/vllm.py:79 IS_DENSE = False, read on branch tp30), while D(b0) is at
most ITL0 (X >= 0), so X >= flops / peak + all-reduce floor - ITL0. Where this floor lies above
the upper bound, no step-time rule reproduces both the run's stages with the replayed chunk:
the prefill work per request vLLM did must be smaller than replayed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from kvplan._util.dtypes import GemmMath
from kvplan.analysis.simulate.run import setup
from kvplan.perf.roofline import step_time

# NVLink 4 on the H100 SXM: 900 GB/s bidirectional, 450 GB/s each way (NVIDIA H100 datasheet);
# the line rate, above the 360 GB/s kvplan's nvlink4 preset charges (interconnects.json).
NVLINK4_LINE_BYTES_PER_S = 450e9
ACT_BYTES = 2  # bf16 activations
PIPELINE_STEPS = 2.5  # kvplan's TTFT pipeline in decode steps (module docstring)


def all_reduce_floor_s(ranks: int, nbytes: float, *,
                       bytes_per_s: float = NVLINK4_LINE_BYTES_PER_S) -> float:
    """Least time of one all-reduce of `nbytes` over `ranks` GPUs: each rank sends and receives
    2 (n - 1) / n of the buffer whatever the algorithm (ring optimum), at the line rate."""
    if ranks <= 1:
        return 0.0
    return 2 * (ranks - 1) / ranks * nbytes / bytes_per_s


def chunk_extra_upper_s(*, itl_s: tuple[float, float], share: tuple[float, float],
                        running: tuple[float, float], floor_growth_s: float) -> float:
    """X's upper bound (module docstring) from two stages' measured mean ITL, chunk-holding
    shares and running requests, and the least decode growth per running request."""
    (i0, i1), (f0, f1), (b0, b1) = itl_s, share, running
    return (i1 - i0 - floor_growth_s * (b1 - b0)) / (f1 - f0)


def chunk_extra_floor_s(*, chunk_step_flops: float, peak_flops_per_s: float,
                        all_reduce_floor_s: float, itl0_s: float) -> float:
    """X's floor: the chunk-holding step's FLOPs at the full peak and its all-reduces at the
    line rate, less the decode step (at most the stage's mean ITL)."""
    return chunk_step_flops / peak_flops_per_s + all_reduce_floor_s - itl0_s


@dataclass(frozen=True, kw_only=True)
class RunSplit:
    run: Any
    running: tuple[float, float]
    share: tuple[float, float]
    decode_ms: tuple[float, float]  # kvplan's decode step at the measured running requests
    chunk_extra_kvplan_ms: float  # X_kvplan at b0
    decode_offset_ms: float  # D - D_kvplan at b0, with s = kvplan's growth
    x_point_ms: float  # X from the two ITLs, s = kvplan's growth
    x_upper_ms: float  # X's bound, s = s_floor
    x_ttft_ms: tuple[float, float]  # X from each stage's TTFT (kvplan's pipeline)
    x_floor_ms: float  # X's physical floor
    floor_growth_us: float


def split_run(run: Any, records: dict[tuple[int, int, str], dict[str, float]],
              run_inputs: Any, simulated: dict[int, dict[str, float]]) -> RunSplit:
    """One two-stage run; `records`: sim_to_real.load_records(); `simulated`: its
    sim_to_real.simulate_run(run).stages."""
    spec, inputs = run_inputs(run)
    sim, _ = setup(spec, inputs)
    cost = sim.cost
    w = run.workload
    context = w["system_prompt_len"] + w["question_len"] + w["output_len"] // 2
    # The uncached chunk as kvplan replays it: the prompt less its cached system prompt (whole
    # 16-token blocks).
    cached = w["system_prompt_len"] // 16 * 16
    chunk = (cached, w["system_prompt_len"] + w["question_len"] - cached)
    m = [{k: records[(run.id, i, k)]["measured"] for k in ("itl_mean", "e2e_mean", "ttft_mean")}
         for i in (0, 1)]
    rates = [run.stages[i][0] for i in (0, 1)]
    b = [rates[i] * m[i]["e2e_mean"] / 1e3 for i in (0, 1)]
    f = [rates[i] * m[i]["itl_mean"] / 1e3 for i in (0, 1)]
    itl = [m[i]["itl_mean"] / 1e3 for i in (0, 1)]
    n = [round(x) for x in b]
    decode = [cost.seconds(decode_contexts=[context] * k, chunks=[]) for k in n]
    with_chunk = cost.seconds(decode_contexts=[context] * n[0], chunks=[chunk])
    x_k = with_chunk - decode[0]
    growth_k = (decode[1] - decode[0]) / (n[1] - n[0])
    tp = run.tp
    h = spec.hidden_size
    layers = spec.num_hidden_layers
    kv = context * sim.plan.per_gpu_bytes_per_token / cost.gpu.hbm_bytes_per_s
    ar_per_request = 2 * layers * all_reduce_floor_s(tp, h * ACT_BYTES)
    floor_growth = kv + ar_per_request
    upper = chunk_extra_upper_s(itl_s=(itl[0], itl[1]), share=(f[0], f[1]),
                                running=(b[0], b[1]), floor_growth_s=floor_growth)
    point = chunk_extra_upper_s(itl_s=(itl[0], itl[1]), share=(f[0], f[1]),
                                running=(b[0], b[1]), floor_growth_s=growth_k)
    offset = itl[0] - decode[0] - f[0] * point
    tokens = n[0] + chunk[1]
    st = step_time(spec, cost.gpu, tokens=tokens, context=1, requests=n[0] + 1, logits=1,
                   layout=cost.layout, eff=cost.eff)
    floor = chunk_extra_floor_s(
        chunk_step_flops=st.flops, peak_flops_per_s=cost.gpu.peak_flops(GemmMath.bf16),
        all_reduce_floor_s=2 * layers * all_reduce_floor_s(tp, tokens * h * ACT_BYTES),
        itl0_s=itl[0])
    x_ttft = tuple(x_k + (m[i]["ttft_mean"] - simulated[i]["ttft_mean"]) / 1e3
                   - PIPELINE_STEPS * offset for i in (0, 1))
    return RunSplit(run=run, running=(b[0], b[1]), share=(f[0], f[1]),
                    decode_ms=(decode[0] * 1e3, decode[1] * 1e3),
                    chunk_extra_kvplan_ms=x_k * 1e3, decode_offset_ms=offset * 1e3,
                    x_point_ms=point * 1e3, x_upper_ms=upper * 1e3,
                    x_ttft_ms=(x_ttft[0] * 1e3, x_ttft[1] * 1e3), x_floor_ms=floor * 1e3,
                    floor_growth_us=floor_growth * 1e6)


def rows() -> list[RunSplit]:
    """Every two-stage run of the study's four sets (main, prospective, blind, offload)."""
    from tests.benches import sim_to_real as s2r

    records = s2r.load_records()
    out = []
    for kw in ({}, {"prospective": True}, {"blind": True}, {"offload": True}):
        for run in s2r.load_runs(**kw)[1]:
            if len(run.stages) == 2:
                out.append(split_run(run, records, s2r.run_inputs,
                                     s2r.simulate_run(run).stages))
    return out


def main() -> None:
    print("| run | TP | b0 / b1 | f0 / f1 | kvplan decode ms (b0 / b1) | D - D_kvplan ms | "
          "X_kvplan ms | X point ms | X upper ms | X from TTFT ms (stage 0 / 1) | X floor ms |")
    print("|---|---:|---|---|---|---:|---:|---:|---:|---|---:|")
    for r in rows():
        flag = " (floor > upper)" if r.x_floor_ms > r.x_upper_ms else ""
        print(f"| {r.run.folder} | {r.run.tp} | {r.running[0]:.1f} / {r.running[1]:.1f} | "
              f"{r.share[0]:.3f} / {r.share[1]:.3f} | {r.decode_ms[0]:.2f} / {r.decode_ms[1]:.2f}"
              f" | {r.decode_offset_ms:+.2f} | {r.chunk_extra_kvplan_ms:.1f} | "
              f"{r.x_point_ms:+.1f} | {r.x_upper_ms:+.1f} | {r.x_ttft_ms[0]:+.1f} / "
              f"{r.x_ttft_ms[1]:+.1f} | {r.x_floor_ms:+.1f}{flag} |")


if __name__ == "__main__":
    sys.exit(main())
