"""prospective61's nine SGLang gpt-oss-120b runs as their servers ran (issue 30, branch
sglgptoss64b): read after the set's first evaluation and after sglgptoss64's forensic, so the
replay below is SHAPED (no blind test); the frozen set and its first evaluation stay as they were.

What the servers ran, read from each run's own --output-details JSONL (server_info, extracted by
tests.benches.sglgptoss64 into tests/data/sim_to_real/sglgptoss64_runs.json; llm-benchmaq at
123eefe), each a launch setting of the run, not a fit:

1. The weights: memory_usage.weight 27.38 (A100) / 27.37 (H100, H200) per GPU at TP 8. The unit
   is GiB although SGLang prints "GB": get_available_gpu_memory returns free bytes / (1 << 30)
   (sglang 0.5.8.post1 wheel, srt/utils/common.py:576) and model_runner.py:947-948 takes the
   difference before and after the load. By hand, the routed experts alone in bf16 are
   36 layers x 128 experts x (2,880 x 5,760 + 2,880 x 2,880) x 2 B / 8 ranks = 28,665,446,400 B
   = 26.70 GiB a rank; in MXFP4 (4.25 bits a weight with its scales) 7.09 GiB. kvplan sizes the
   bf16 checkpoint at 27.28 GiB a rank (-0.4 %), openai's MXFP4 file at 8.65 GiB.
2. Not a dequantization by SGLang: with the MXFP4 file, SGLang 0.5.8.post1 upcasts the experts to
   bf16 only when the MoE runner is not triton_kernel (srt/layers/quantization/mxfp4.py:534-563
   keeps them MXFP4 via _swizzle_mxfp4 when use_triton_kernels, :564-581 upcasts otherwise;
   use_triton_kernels is get_moe_runner_backend().is_triton_kernels(), :259); GptOssForCausalLM
   picks triton_kernel at EP 1 only when triton_kernels imports (server_args.py:1300-1316; SM100
   takes flashinfer_mxfp4 first), and every one of these servers reports
   moe_runner_backend triton_kernel, on the A100 (SM80) as on Hopper: triton_kernels was
   installed and the MXFP4 path kept 4 bits. No server flag asks for bf16 experts either
   (quantization None, flashinfer_mxfp4_moe_precision default; dtype bfloat16 is what
   server_args.py:1295-1298 sets for any MXFP4 checkpoint). So the servers loaded a bf16
   checkpoint (openai's config without quantization_config: tests/data/configs/
   gpt-oss-120b-bf16.json, as prospective56_served found for the 1,024-token runs of the same
   servers); the harness's own vLLM example (benchmaq/vllm/examples/gpt-oss-120b-session-1.yaml)
   serves the publisher's fine-tune Scicom-intl/gpt-oss-120b-Malaysian-Reasoning-SFT-v0.1 with
   the same max_model_len 12,000 and 0.9 fraction; its config.json was not read here.
3. The pool: with context_length 12,000 and mem_fraction_static 0.9 (server_info; the frozen set
   assumed 131,072 and SGLang's default fraction) and the bf16 weights, kvplan's pool is within
   1.5 % of the servers' max_total_num_tokens; the servers' own numbers check by hand: 42.64 GiB
   of KV cache / 5,519,745 tokens = 8,294 B a full-pool token = 18 full-attention layers x 1 KV
   head x 64 x 2 (K, V) x 2 B x (1 + 0.8 sliding-window tokens a full one, swa_full_tokens_ratio).

`served_run` (prospective56_served's) makes the run as served: the bf16 config, the logged
context length and fraction; `replays` replays each run before (as frozen) and after.

Run: python -m tests.benches.prospective61_served (printed inside prospective61's section).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tests.benches.prospective56_served import served_run, sizing
from tests.benches.prospective61_runs import DATA as FROZEN
from tests.benches.prospective_runs import Result, load, run_one
from tests.benches.sglgptoss64 import DATA as SERVED_DATA

PREFIX = "scicom SGLang gpt-oss-120b "
# (label, measured key, kvplan's figure key)
FIGURES = (("TTFT mean", "mean_ttft_ms", "ttft_ms.mean"),
           ("TTFT median", "median_ttft_ms", "ttft_ms.p50"),
           ("TPOT mean", "mean_tpot_ms", "tpot_ms.mean"),
           ("TPOT median", "median_tpot_ms", "tpot_ms.p50"),
           ("ITL mean", "mean_itl_ms", "itl_ms.mean"))


@dataclass(frozen=True, kw_only=True)
class Replay:
    """One run replayed as frozen and as served, with kvplan's sizing of each and the server's
    own (memory_usage: weights GiB, token pool)."""

    run_id: str
    before: Result
    after: Result
    weights_gib: tuple[float, float, float]  # server, kvplan as frozen, as served
    pool_tokens: tuple[int, int, int]


def server_of(run: dict) -> dict:  # type: ignore[type-arg]
    """The run's summary in sglgptoss64's extract ('gpt-oss-120b GPU LENGTH')."""
    gpu, length = run["id"].split()[3], run["workload"]["input_len"]
    return json.loads(SERVED_DATA.read_text())["runs"][f"gpt-oss-120b {gpu} {length}"]


def gpt_oss_runs() -> list[dict]:  # type: ignore[type-arg]
    return [r for r in load(FROZEN)["runs"] if r["id"].startswith(PREFIX)]


def replays() -> list[Replay]:
    out = []
    for run in gpt_oss_runs():
        info = server_of(run)
        served = served_run(run, info)
        (wb, pb, _), (wa, pa, _) = sizing(run), sizing(served)
        mem = info["memory_usage"]
        out.append(Replay(run_id=run["id"], before=run_one(run), after=run_one(served),
                          weights_gib=(mem["weight"], wb, wa),
                          pool_tokens=(mem["token_capacity"], pb, pa)))
    return out


def print_section() -> None:
    """The subsection printed at the end of prospective61's section."""
    print("\n### The gpt-oss-120b runs as served (read after the first evaluation)\n")
    print("Each run's --output-details JSONL records the server's /get_server_info: "
          "context_length 12,000, mem_fraction_static 0.9, and 27.37-27.38 GiB of weights a "
          "GPU (the bf16 size: kvplan 27.28 for a bf16 checkpoint, 8.65 for openai's MXFP4 "
          "file; SGLang 0.5.8.post1 keeps MXFP4 experts in 4 bits on the triton_kernel runner "
          "every server reports, layers/quantization/mxfp4.py:534-581). 'As served' replays "
          "each run with those three (tests/benches/prospective61_served.py); SHAPED: read "
          "after the misses, the frozen evaluation above is unchanged.\n")
    print("| run | weights GiB: server / frozen / served | pool tokens: server / frozen / "
          "served | " + " | ".join(f"{label}: frozen / served" for label, _, _ in FIGURES)
          + " |")
    print("|---|---:|---:|" + "---:|" * len(FIGURES))
    done = replays()
    for r in done:
        w, p = r.weights_gib, r.pool_tokens
        cells = []
        for _, key, fig in FIGURES:
            m = r.before.measured[key]
            cells.append(f"{r.before.simulated[fig] / m - 1:+.0%} / "
                         f"{r.after.simulated[fig] / m - 1:+.0%}")
        print(f"| {r.run_id.removeprefix(PREFIX)} | {w[0]:.2f} / {w[1]:.2f} / {w[2]:.2f} | "
              f"{p[0]:,} / {p[1]:,} / {p[2]:,} | " + " | ".join(cells) + " |")
    print("\n(Errors: kvplan / measured - 1.) The same replays against the records with the "
          "run's one engine-wide stall cut (tests.benches.sglgptoss64.figures(doc, gap): the "
          "silent gap taken off every TTFT after it and every inter-token gap across it; the "
          "stall is not simulated), and kvplan's decode step at 100 requests of 2,100-token "
          "contexts beside the steady step the records show right after the stall "
          "(sglgptoss64.steady_step):\n")
    print("| run | " + " | ".join(f"{label} (stall cut): frozen / served"
                                  for label, _, _ in FIGURES)
          + " | decode step ms: measured / frozen / served |")
    print("|---|" + "---:|" * (len(FIGURES) + 1))
    ratios: dict[bool, list[float]] = {False: [], True: []}
    for r in done:
        info = server_of(gpt_oss_run(r.run_id))
        cut = info["gap_cut"]
        cells = [f"{r.before.simulated[fig] / cut[key] - 1:+.0%} / "
                 f"{r.after.simulated[fig] / cut[key] - 1:+.0%}" for _, key, fig in FIGURES]
        steps = [decode_step_ms(gpt_oss_run(r.run_id), served) for served in (False, True)]
        for served, step in zip((False, True), steps, strict=True):
            ratios[served].append(step / info["steady_step_ms"] - 1)
        print(f"| {r.run_id.removeprefix(PREFIX)} | " + " | ".join(cells) + f" | "
              f"{info['steady_step_ms']:.1f} / {steps[0]:.1f} / {steps[1]:.1f} |")
    span = {k: f"{min(v):+.0%} to {max(v):+.0%}" for k, v in ratios.items()}
    print(f"\nThe bf16 experts are the decode step's miss: kvplan's step as served is "
          f"{span[True]} of the measured steady step, the MXFP4 replay's {span[False]}. The "
          "prefill steps do not move (kvplan prices an 8,192-token chunk the same in either "
          "format: compute-bound), nor the TTFTs. Against the records as printed every TPOT "
          "and ITL error shrinks; against the records with the stall cut the served replay "
          "runs long (mean TPOT and ITL over, where the MXFP4 replay's too-fast step had "
          "offset it): the replay's time between a request's tokens outside the steady step "
          "(the prefill batches after the stall, the tail as requests finish) is not yet "
          "read. Left: sglgptoss64's stall (one 1.0-2.9 s silent gap a run, not simulated) "
          "and the H100's late first token.")


def gpt_oss_run(run_id: str) -> dict:  # type: ignore[type-arg]
    return next(r for r in gpt_oss_runs() if r["id"] == run_id)


def decode_step_ms(run: dict, served: bool) -> float:  # type: ignore[type-arg]
    """kvplan's SGLang decode step (ms) at 100 running requests of 2,100-token contexts for
    the run as frozen or as served (sglgptoss64.decode_parts' point)."""
    from kvplan import load_spec
    from kvplan.analysis.inputs import estimate_inputs
    from kvplan.analysis.simulate.run import setup
    from kvplan.engines.base import Engine
    from tests.benches.prospective_runs import REPO
    r = served_run(run, server_of(run)) if served else run
    spec = load_spec(str(REPO / r["model"]))
    inputs = estimate_inputs(spec, context=r["max_model_len"], gpu=r["gpu"], tp=r["tp"],
                             engine=Engine.sglang, engine_version=r["sglang"],
                             mem_fraction=r.get("gpu_memory_utilization"))
    return 1e3 * setup(spec, inputs)[0].cost.seconds(decode_contexts=[2100] * 100, chunks=[])


if __name__ == "__main__":
    print_section()
