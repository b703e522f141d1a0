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

Measured at branch offl54 (kvplan as at main 093b841; X in ms, X_kvplan kvplan's chunk extra at
the first stage's running requests; the last column the least fraction of the 989.5 TFLOPS peak
the chunk step's FLOPs must run at, every other cost in it but the all-reduce floor taken as 0):

- Dense 1-GPU runs (Qwen3-14B 13, 14; Llama-3.1-8B 16, 18, 22-25): X_kvplan 4.8-9.8, X from
  the ITLs 4.3-9.9 (upper 5.0-10.6), from the TTFT 3.9-11.8; the decode step D - D_kvplan
  -0.13 to +0.32 ms; GEMM fraction >= 0.47-0.67 (TTFT) - kvplan's 0.70 fits. Llama-3.1-8B TP 2
  (26): X_kvplan 3.0, X 4.9-6.7 (kvplan's chunk step short, not long), fraction >= 0.35.
- Mixtral (28, 30, 31, 49, 50, 56, 9, 10, 29): X_kvplan 2.0-4.2, X from the ITLs -6.2 to +4.7
  (upper -5.9 to +6.7): the experts stream their weights in both steps; their X from the TTFT
  (7.8-19.9) is the TTFT gap mixtral_ttft.py places outside the step loop.
- Run 2 (CodeLlama-34B TP 2): D - D_kvplan -0.78 ms (kvplan's decode step 14.99 ms at 18
  requests, 5 % long); X_kvplan 14.4, X point +2.0, upper +2.6, from the TTFT +7.0 / +5.5, floor
  +3.7 (above the upper bound by 1.1 ms: within noise, the upper bound runs 5.0-10.6 over the
  five identical Llama-3.1-8B general runs 16, 22, 23, 24, 25); GEMM fraction >= 0.84 / 1.08.
- Run 6 (Llama-2-70B TP 4): D - D_kvplan -0.40 ms (17.97 ms at 22, 2 % long); X_kvplan 19.0, X
  point -0.3, upper +9.7, from the TTFT +5.7 / +4.4, floor +3.8; GEMM fraction >= 0.90 / 0.74.

So the two runs' ITL miss (+12.7 / +24.1 % and +19.1 / +29.9 %) is mostly not the decode step
(2-5 % long) but the chunk-holding steps (f x (X_kvplan - X): run 2 stage 0, 0.072 x 12.4 =
0.9 of its +1.8 ms; the decode step 0.78, the rest the simulated batch, 20.2 running against the
measured 18.1, that a slower step grows); the TTFT miss is the same chunk step once. Closing it
would need the chunk step's GEMMs at 0.74-1.08 of the dense peak with nothing else in the step,
against 0.47-0.67 on every dense run that fits and 0.65 (M 512) to 0.788 (4096^3, the best)
in OpenXLA's measured H100 table (kvplan.perf.gemm_shape): no measured GEMM rule gives it, so
none was written. Under kvplan's own step the measured X is a chunk of about 250-330 tokens on
run 2 (X 2.9 at 250, 5.5 at 300, 8.1 at 350) and 225-250 on run 6 from its TTFT (5.7 at 250; up
to about 315 at its ITL bound, 8.7 at 300), not the replayed 470. Ruled out as the cause, each
by the split main() prints second (tp_breakdown at 24 / 48 decodes and with the chunk): the
all-reduce (vLLM 0.15.1's custom kernel as kvplan charges it,
one-shot at TP 2, two-shot at TP 4 from 512 KiB, PR 24111's H100 timings; all of it is 0.65 /
1.44 ms of a decode step, and at the line rate the chunk step's still costs 1.71 / 4.3 ms of
kvplan's 2.71 / 7.49); Llama-2-70B's 8 KV heads at TP 4 (2 a rank; its attention is 0.45 ms at
24 decodes, the KV read at kvplan's HBM fraction); the vocabulary of 32,000 (lm_head under
0.1 ms); the offload replay (weights less 4 GiB move only the KV budget, never filled; a real
offload would slow the step).
Not checked here: what vLLM tokenized. inference-perf's shared_prefix data are random token ids
decoded to text and re-tokenized by the server (tokenizer-dependent length), and every profile
sets enable_multi_turn_chat (inference-perf apis/user_session.py: each user's next prompt is its
last prompt and answer plus its question); both shape the uncached tokens per request, and
neither is in the public files.
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
    # The least fraction of the dense bf16 peak the chunk-holding step's FLOPs must run at if
    # that step took D + X (X from the first stage's TTFT, and X's upper bound), its
    # all-reduces at the line rate and nothing else: FLOPs / peak / (D + X - all-reduce floor).
    gemm_fraction: tuple[float, float]


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
    peak = cost.gpu.peak_flops(GemmMath.bf16)
    ar_chunk = 2 * layers * all_reduce_floor_s(tp, tokens * h * ACT_BYTES)
    floor = chunk_extra_floor_s(chunk_step_flops=st.flops, peak_flops_per_s=peak,
                                all_reduce_floor_s=ar_chunk, itl0_s=itl[0])
    x_ttft = tuple(x_k + (m[i]["ttft_mean"] - simulated[i]["ttft_mean"]) / 1e3
                   - PIPELINE_STEPS * offset for i in (0, 1))
    d_v = decode[0] + offset
    fraction = tuple(st.flops / peak / max(d_v + x - ar_chunk, 1e-9) for x in (x_ttft[0], upper))
    return RunSplit(run=run, running=(b[0], b[1]), share=(f[0], f[1]),
                    decode_ms=(decode[0] * 1e3, decode[1] * 1e3),
                    chunk_extra_kvplan_ms=x_k * 1e3, decode_offset_ms=offset * 1e3,
                    x_point_ms=point * 1e3, x_upper_ms=upper * 1e3,
                    x_ttft_ms=(x_ttft[0] * 1e3, x_ttft[1] * 1e3), x_floor_ms=floor * 1e3,
                    floor_growth_us=floor_growth * 1e6,
                    gemm_fraction=(fraction[0], fraction[1]))


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
          "X_kvplan ms | X point ms | X upper ms | X from TTFT ms (stage 0 / 1) | X floor ms | "
          "GEMM fraction >= (X from TTFT / X upper) |")
    print("|---|---:|---|---|---|---:|---:|---:|---:|---|---:|---|")
    for r in rows():
        flag = " (floor > upper)" if r.x_floor_ms > r.x_upper_ms else ""
        print(f"| {r.run.folder} | {r.run.tp} | {r.running[0]:.1f} / {r.running[1]:.1f} | "
              f"{r.share[0]:.3f} / {r.share[1]:.3f} | {r.decode_ms[0]:.2f} / {r.decode_ms[1]:.2f}"
              f" | {r.decode_offset_ms:+.2f} | {r.chunk_extra_kvplan_ms:.1f} | "
              f"{r.x_point_ms:+.1f} | {r.x_upper_ms:+.1f} | {r.x_ttft_ms[0]:+.1f} / "
              f"{r.x_ttft_ms[1]:+.1f} | {r.x_floor_ms:+.1f}{flag} | "
              f"{r.gemm_fraction[0]:.2f} / {r.gemm_fraction[1]:.2f} |")
    print()
    breakdown()


def breakdown() -> None:
    """kvplan's step split by term (tests/benches/tp_breakdown.py) at the stages' running
    requests (the CUDA-graph sizes 24 and 48 hold them: 18-22 and 38-47 on runs 2 and 6) and
    the mean context 689, beside the runs that fit."""
    from tests.benches import sim_to_real as s2r
    from tests.benches import tp_breakdown as tb

    runs = {r.id: r for kw in ({}, {"offload": True}) for r in s2r.load_runs(**kw)[1]}
    saved, tb.CONTEXT = tb.CONTEXT, 689
    try:
        print("| run | step | kvplan ms | " + " | ".join(tb._COLUMNS) + " |")
        print("|---|---|---:|" + "---:|" * len(tb._COLUMNS))
        for rid in (2, 6, 26, 24, 9):
            for decodes, chunks in ((24, []), (48, []), (24, [(96, 470)])):
                r = tb._split(runs[rid], s2r.run_inputs, decodes, chunks)
                print(f"| {r.label} | {r.step} | {r.total_ms:.2f} | "
                      + " | ".join(f"{r.ms[c]:.2f}" for c in tb._COLUMNS) + " |")
    finally:
        tb.CONTEXT = saved


if __name__ == "__main__":
    sys.exit(main())
