"""Forensic of issue 30's MI300X miss (task mi300x60): why kvplan prices DeepSeek-V3.1's decode on
8 x MI300X 20-54 % too fast (prospective59, SGLang 0.5.7 cookbook runs) while Llama-4-Maverick's
on the same GPUs is within 6 %. Nothing here changes a rule, a constant or the harness.

1. The decomposition: kvplan's decode step (kvplan.perf.roofline.step_time, the price the
   simulator's MixedStepCost pays for a decode-only step) at each run's steady point (the
   client's concurrency as the batch; mean prompt plus half the mean output as the context, from
   the printed totals), by operation, beside the measured mean TPOT. At concurrency 1 the TPOT
   is the step itself (no other request's prefill lands between a request's tokens); above it,
   the measured TPOT also holds the prefills, so the gap there is an upper bound on the step's.
2. What SGLang 0.5.7 runs for DeepSeek-V3 on gfx942 and kvplan does not count (`CODE_READ`,
   each item with the file and line read in the sglang 0.5.7 sdist from PyPI and in
   ROCm/aiter e4048607a5): kernels per decoder layer beyond kvplan's count, read, not profiled.
3. aiter's own measured block-FP8 GEMM times at DeepSeek-V3's TP-8 decode shapes (`AITER_GEMM`,
   ROCm/aiter e4048607a5 aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv, the
   gfx942 / 304-CU rows at M = 16) beside kvplan's charge for the same GEMM kernel.
4. A counterfactual replay (`counterfactual`): the nine DeepSeek-V3.1 runs replayed with the
   code-read kernels charged at kvplan's kernel floor on every MLA layer (as a per-layer time:
   `Efficiency.layer_overhead_s` + kernels x floor, the MI300X preset patched for the replay
   only). Not a rule and not a fit: the kernel count is the code's, the floor kvplan's own.

Run: python -m tests.benches.mi300x_forensic (prints the Markdown section; not a page of
examples/, no test compares it byte for byte).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from unittest import mock

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.perf import efficiency
from kvplan.perf.roofline import StepTime, step_time
from tests.benches import prospective_runs
from tests.benches.prospective59_runs import DATA, ID_PREFIX

US = 1e-6
# The operations the decomposition prints, in this order (kvplan.perf.roofline's names); any
# other is summed under "other".
COLUMNS = ("experts", "attention_proj", "attention", "small_kernels", "layer_overhead",
           "tp_all_reduce", "mlp", "lm_head")


@dataclass(frozen=True)
class Lead:
    """Work SGLang 0.5.7 launches per DeepSeek-V3 decoder layer on gfx942 that kvplan does not
    count: `kernels` beyond kvplan's count for the same work, where the code is."""

    what: str
    kernels: int
    source: str


# Read in the sglang 0.5.7 sdist (PyPI, python/sglang/srt/...), the launch the page states
# (`--tp 8`, every other flag the default) in SGLang's ROCm image, which sets SGLANG_USE_AITER=1
# (docker/rocm.Dockerfile of v0.5.5.post3 and v0.5.10.post1 both do: index file ids 357891113,
# 57432408374; the v0.5.7 file itself was not read). With 128 / 8 = 16 heads per rank the default
# attention backend is aiter (server_args.py:1554-1561, "current aiter only support head number
# 16 or 128"), whose decode dispatch is AttnForwardMethod.MLA (models/deepseek_v2.py:421-425),
# i.e. forward_absorb_prepare / forward_absorb_core (:1858-2200) with gfx942's fallbacks.
CODE_READ = (
    Lead("DeepSeek's YaRN RoPE runs as PyTorch ops (forward_native) on HIP: the cos / sin "
         "gather, two repeat_interleave, per q and k a multiply, a negation, a stack, a "
         "multiply and an add (the fp32 cache promotes them), then two casts back to bf16: "
         "15 kernels in the CUDA graph where kvplan counts 1 RoPE kernel", 14,
         "layers/rotary_embedding.py:823-824 (`if _is_hip: self._forward_method = "
         "self.forward_native`), :898-933, _rotate_gptj :56-60 (is_neox_style=False, "
         "models/deepseek_v2.py:1405-1411); fp32 cache :854-869; 0.5.9 the same (:1044-1045)"),
    Lead("W_UK / W_UV absorb on gfx942: each step casts the per-tensor FP8 weight to bf16 and "
         "multiplies it by its scale, then a bf16 bmm (3 kernels each) where kvplan counts an "
         "FP8 quantize + bmm (2 each)", 2,
         "models/deepseek_v2.py:1953-1991 and :2142-2176 (`TODO(haishaw): add bmm_fp8 to "
         "ROCm`: torch.bmm(q, self.w_kc.to(torch.bfloat16) * self.w_scale)); FP8 per-tensor "
         "weights: :3547-3551 (block_quant_to_tensor_quant on HIP)"),
    Lead("q and k concatenated before the aiter backend (torch.cat twice): aiter is not in "
         "FORWARD_ABSORB_CORE_ATTENTION_BACKENDS and the fused rope + cat + cache kernel is "
         "gfx95 only in 0.5.7", 2,
         "models/deepseek_v2.py:2057-2104 (`if _use_aiter_gfx95: fused_qk_rope_cat_and_cache_"
         "mla ... else: q = torch.cat(...); k = torch.cat(...)`); sglang PR 18242 (merged "
         "2026-02) later enables the fused kernel on every HIP GPU, '~11%' decode throughput"),
    Lead("aiter's MLA decode is two kernels (stage 1, then the split reduce) where kvplan "
         "counts 1", 1,
         "ROCm/aiter e4048607a5 aiter/mla.py mla_decode_fwd (:668 mla_decode_stage1_asm_fwd, "
         ":724 the stage-2 reduce); sglang layers/attention/aiter_backend.py (persistent "
         "kernel, SGLANG_AITER_MLA_PERSIST default True, :50)"),
)
CODE_READ_KERNELS = sum(lead.kernels for lead in CODE_READ)  # per decoder layer: 19

# aiter's tuned block-FP8 GEMMs at DeepSeek-V3's TP-8 decode shapes, gfx942, 304 CUs, M = 16
# (ROCm/aiter e4048607a5 aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv,
# column `us`): (role, N, K, us). The GEMM kernel alone; the activation quantization is apart.
AITER_GEMM_SOURCE = ("ROCm/aiter e4048607a5 aiter/configs/model_configs/"
                     "a8w8_blockscale_tuned_gemm_ds_v3.csv (gfx942, cu_num 304, M 16, `us`)")
AITER_GEMM = (
    ("fused q_a + kv_a", 2112, 7168, 11.9346),
    ("q_b", 3072, 1536, 6.7699),
    ("o_proj", 7168, 2048, 8.3748),
    ("shared expert gate_up", 512, 7168, 11.0753),
    ("shared expert down", 7168, 256, 3.2169),
)


@dataclass(frozen=True)
class Point:
    """One run's steady decode point and kvplan's step there."""

    run_id: str
    model: str
    batch: int
    context: int
    layers: int
    measured_tpot_ms: float
    step: StepTime


def steady_point(run: dict) -> tuple[int, int]:  # type: ignore[type-arg]
    """(batch, context): the client's concurrency (at most the prompts), and the mean prompt
    plus half the mean output, from the run's printed totals."""
    w, m = run["workload"], run["measured"]
    batch = min(w["max_concurrency"], w["num_prompts"])
    mean_in = m["total_input_tokens"] / w["num_prompts"]
    mean_out = m["total_generated_tokens"] / w["num_prompts"]
    return batch, round(mean_in + mean_out / 2)


def decompose(run: dict, eff: efficiency.Efficiency | None = None) -> Point:  # type: ignore[type-arg]
    """kvplan's decode step for `run` as the replay prices it (the SGLang setup's efficiency,
    layout, KV dtype; `eff` in its place where given), at the run's steady point."""
    spec = load_spec(str(prospective_runs.REPO / run["model"]))
    engine = Engine(run.get("engine", "vllm"))
    inputs = estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                             engine=engine, engine_version=run[engine.value])
    sim, _ = setup(spec, inputs)
    cap = inputs.capacity
    assert cap is not None and inputs.gpu is not None
    batch, context = steady_point(run)
    st = step_time(spec, inputs.gpu, tokens=batch, context=context, requests=batch,
                   kv_dtype=cap.kv_dtype, layout=sim.cost.layout,
                   eff=eff if eff is not None else sim.cost.eff,
                   quantization=cap.quantization)
    return Point(run_id=run["id"].removeprefix(ID_PREFIX), model=run["model_id"], batch=batch,
                 context=context, layers=spec.num_hidden_layers,
                 measured_tpot_ms=run["measured"]["mean_tpot_ms"], step=st)


def points() -> list[Point]:
    return [decompose(run) for run in prospective_runs.load(DATA)["runs"]]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def print_decomposition(pts: list[Point]) -> None:
    print("| run | batch | context | measured TPOT ms | kvplan step ms | "
          + " | ".join(COLUMNS) + " | other | measured - step ms | per layer us |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(COLUMNS) + "---:|---:|---:|")
    for p in pts:
        by = p.step.by_op
        other = sum(v for k, v in by.items() if k not in COLUMNS)
        gap = p.measured_tpot_ms / 1e3 - p.step.seconds
        print(f"| {p.run_id} | {p.batch} | {p.context:,} | {p.measured_tpot_ms:.2f} | "
              f"{_ms(p.step.seconds)} | "
              + " | ".join(_ms(by.get(k, 0.0)) for k in COLUMNS)
              + f" | {_ms(other)} | {_ms(gap)} | {gap / p.layers / US:.0f} |")


def floor_kernels_per_layer(p: Point, floor_s: float) -> float:
    """Kernels kvplan charges at the floor in a batch-1 step, per layer: the small kernels, the
    projections' and dense MLPs' GEMM (and quantize) kernels and the attention kernel, each at
    the floor there (the experts' fused MoE and the all-reduces are priced apart)."""
    by = p.step.by_op
    return sum(by.get(k, 0.0) for k in ("small_kernels", "attention_proj", "mlp",
                                        "attention")) / floor_s / p.layers


def counterfactual_efficiency(eff: efficiency.Efficiency) -> efficiency.Efficiency:
    """`eff` with the code-read kernels (CODE_READ) at its own floor on every decoder layer."""
    return replace(eff, layer_overhead_s=eff.layer_overhead_s
                   + CODE_READ_KERNELS * eff.kernel_floor_s)


def counterfactual(model_id: str = "deepseek-ai/DeepSeek-V3.1") -> list[tuple[str, float, float]]:
    """(run id, TPOT error as replayed, TPOT error with the code-read kernels) for `model_id`'s
    runs: the MI300X preset patched for these replays only (every DeepSeek-V3.1 layer is an MLA
    layer, so the per-layer time is the per-MLA-layer one)."""
    runs = [r for r in prospective_runs.load(DATA)["runs"] if r["model_id"] == model_id]
    base = {r.run_id: r for r in prospective_runs.set_results(DATA)}
    patched = {"MI300X": counterfactual_efficiency(efficiency.DEVICE_EFFICIENCY["MI300X"])}
    out = []
    with mock.patch.dict(efficiency.DEVICE_EFFICIENCY, patched):
        for run in runs:
            after = prospective_runs.run_one(run)
            before = base[run["id"]]
            err = [r.simulated["tpot_ms.mean"] / run["measured"]["mean_tpot_ms"] - 1
                   for r in (before, after)]
            out.append((run["id"].removeprefix(ID_PREFIX), err[0], err[1]))
    return out


def print_section() -> None:
    """The forensic as a Markdown section (stdout)."""
    pts = points()
    eff = efficiency.DEVICE_EFFICIENCY["MI300X"]
    floor = eff.kernel_floor_s
    print("\n## MI300X forensic: DeepSeek-V3.1's decode under SGLang 0.5.7 (prospective59)\n")
    print("kvplan's decode step at each run's steady point (batch = the client's concurrency; "
          "context = mean prompt + half the mean output, from the printed totals), by "
          "operation (kvplan.perf.roofline names; ms per step on one rank), against the "
          "measured mean TPOT. Concurrency-1 rows: the TPOT is the step. Above it the "
          "measured TPOT also holds other requests' prefills, so 'measured - step' bounds "
          "the step's miss from above. No rule, constant or harness changed.\n")
    print_decomposition(pts)
    lone = [p for p in pts if p.batch == 1]
    print("\nAt concurrency 1, DeepSeek-V3.1's measured TPOT barely moves with the context "
          + ", ".join(f"{p.context:,} tokens {p.measured_tpot_ms:.2f} ms" for p in lone
                      if "DeepSeek" in p.model)
          + ": a fixed step of ~23.5 ms on one rank, against kvplan's "
          + ", ".join(_ms(p.step.seconds) for p in lone if "DeepSeek" in p.model)
          + " ms. Maverick's ("
          + ", ".join(f"{p.measured_tpot_ms:.2f} measured, {_ms(p.step.seconds)} kvplan"
                      for p in lone if "Maverick" in p.model)
          + ") shares the GPU preset, the xGMI all-reduce and the 4 us floor, so the miss is in "
          "what DeepSeek's layers launch on gfx942.\n")
    print("What SGLang 0.5.7 launches per DeepSeek-V3 decoder layer on gfx942 that kvplan "
          "does not count (read in the sglang 0.5.7 sdist, python/sglang/srt/; not profiled):\n")
    print("| what | kernels per layer beyond kvplan's | at the 4 us floor, ms per step "
          "(61 layers) | source |")
    print("|---|---:|---:|---|")
    layers = next(p.layers for p in pts if "DeepSeek" in p.model)
    for lead in CODE_READ:
        print(f"| {lead.what} | {lead.kernels} | {_ms(lead.kernels * floor * layers)} | "
              f"{lead.source} |")
    print(f"| all | {CODE_READ_KERNELS} | {_ms(CODE_READ_KERNELS * floor * layers)} | |")
    print(f"\naiter's measured block-FP8 GEMM kernels at the TP-8 decode shapes, M = 16 "
          f"({AITER_GEMM_SOURCE}), against kvplan's charge for the GEMM kernel (its "
          "quantize kernel is a second floor in both):\n")
    print("| GEMM | N x K | aiter us | kvplan us |")
    print("|---|---|---:|---:|")
    for role, n, k, us in AITER_GEMM:
        print(f"| {role} | {n} x {k} | {us:.2f} | {floor / US:.0f} |")
    attn = sum(us for role, *_, us in AITER_GEMM[:3])
    shared = sum(us for role, *_, us in AITER_GEMM[3:])
    print(f"\nThe attention projections take {attn:.1f} us a layer in aiter's table against "
          f"kvplan's {3 * floor / US:.0f} us (+{attn - 3 * floor / US:.1f} us, "
          f"{_ms((attn / 1e6 - 3 * floor) * layers)} ms a step). The shared expert's two "
          f"({shared:.1f} us) do not run on gfx942: SGLang 0.5.7 fuses DeepSeek-V3's shared "
          "expert into the routed experts' fused MoE on gfx942 and later "
          "(models/deepseek_v2.py:3348-3389, 'AMD-platform with capability >= gfx942'; "
          "aiter's glm5_1 table's 257-expert top-9 rows are that shape), where kvplan charges "
          "it apart (the `mlp` column on MoE layers, 4 floors) -- that error runs the other "
          "way (kvplan ~0.9 ms a step too slow) and roughly cancels the projections' one.\n")
    rows = counterfactual()
    print(f"Counterfactual (not a rule, nothing fitted): the {CODE_READ_KERNELS} code-read "
          "kernels per layer charged at kvplan's 4 us floor on every DeepSeek-V3.1 layer "
          "(Efficiency.layer_overhead_s + kernels x floor, the MI300X preset patched for this "
          "replay only), mean TPOT error predicted / measured - 1:\n")
    print("| run | as replayed | with the code-read kernels |")
    print("|---|---:|---:|")
    for run_id, before, after in rows:
        print(f"| {run_id} | {before:+.1%} | {after:+.1%} |")
    print(f"| median abs, {len(rows)} runs | "
          f"{statistics.median(abs(b) for _, b, _ in rows):.1%} | "
          f"{statistics.median(abs(a) for *_, a in rows):.1%} |")
    print("\nWhat is left at concurrency 1 after them, and the time per kernel that would "
          "close it over every kernel kvplan charges at the floor plus the code-read ones "
          "(a lead, not a measurement: no HIP-graph kernel spacing on MI300X was found):\n")
    print("| run | left ms per step | left us per layer | floor that closes it us |")
    print("|---|---:|---:|---:|")
    for p in lone:
        if "DeepSeek" not in p.model:
            continue
        left = p.measured_tpot_ms / 1e3 - p.step.seconds - CODE_READ_KERNELS * floor * p.layers
        kernels = floor_kernels_per_layer(p, floor) + CODE_READ_KERNELS
        print(f"| {p.run_id} | {_ms(left)} | {left / p.layers / US:.0f} | "
              f"{(floor + left / p.layers / kernels) / US:.1f} |")


if __name__ == "__main__":
    print_section()
