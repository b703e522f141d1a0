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
4. The rules these runs shaped (commit 8da032bf, kvplan.engines.sglang.mla_decode: the first
   three `CODE_READ` items, 18 kernels a layer at kvplan's 4 us floor; commit a412b355,
   kvplan.engines.sglang.shared_fusion: the shared expert inside the fused MoE on ROCm, 4
   kernels a MoE layer fewer): each DeepSeek-V3.1 run's TPOT error at the first evaluation
   (prospective59's record) beside the replay with them.
   Before the rule, this forensic's own counterfactual (commit be438df2: all 19 kernels as a
   per-layer time, the MI300X preset patched for the replay) read a TPOT mean median |error|
   of 43.7 -> 27.6 % over the nine runs; no constant is fitted.
5. What is left at concurrency 1, and the time per kernel that would close it (a lead).
6. The block-FP8 GEMM SGLang 0.5.7 runs on gfx942 (`TRITON_GEMM`): aiter's Triton
   gemm_a8w8_blockscale, not the CK kernel of item 3's table, whose gfx942 configuration for
   the fused q_a + kv_a shape (N 2112, K 7168) was missing until 2026-02 (ROCm/aiter PR 1930,
   sglang PR 18242); its published serving deltas set against what is left (a lead, no rule).

Run: python -m tests.benches.mi300x_forensic (prints the Markdown section; not a page of
examples/, no test compares it byte for byte; tests/test_mla_decode_rocm.py checks its parts).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.engines.base import Engine
from kvplan.engines.sglang.mla_decode import SGLANG_GFX942_MLA_DECODE
from kvplan.hardware.gpus import get_gpu
from kvplan.perf import efficiency
from kvplan.perf.roofline import StepTime, step_time
from tests.benches import prospective_runs
from tests.benches.prospective59_runs import DATA, FIRST_ROWS, ID_PREFIX

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
    in_rule: bool = True  # charged by kvplan.engines.sglang.mla_decode (commit 8da032bf)


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
         "models/deepseek_v2.py:2057-2107 (`if _use_aiter_gfx95: fused_qk_rope_cat_and_cache_"
         "mla ... else: q = torch.cat(...); k = torch.cat(...)`); sglang PR 18242 (merged "
         "2026-02) later enables the fused kernel on every HIP GPU, '~11%' decode throughput"),
    Lead("aiter's MLA decode is two kernels (stage 1, then the split reduce) where kvplan "
         "counts 1", 1,
         "ROCm/aiter e4048607a5 aiter/mla.py mla_decode_fwd (:668 mla_decode_stage1_asm_fwd, "
         ":724 the stage-2 reduce); sglang layers/attention/aiter_backend.py (persistent "
         "kernel, SGLANG_AITER_MLA_PERSIST default True, :50); not in the rule: kvplan "
         "counts one kernel for every split-KV decode kernel, CUDA's too", in_rule=False),
)
# Read in the same sdist (task mi300x67) and found to agree with what kvplan prices (no change).
CHECKED = (
    ("HIP graph (CUDA graph) replay of decode steps",
     "on: disable_cuda_graph defaults False (server_args.py:526) and nothing turns it off for "
     "HIP, only torch_native / flex attention, DeepEP normal mode, disaggregation without "
     "piecewise graphs, tensor dumps (:1574, :1580, :1861, :2203, :2415)"),
    ("TP all-reduces per decoder layer: 2",
     "the attention output's (the layer communicator) and the MoE output's "
     "(models/deepseek_v2.py:927-933, tensor_model_parallel_all_reduce after the experts); "
     "kvplan: 2 x (8 us + bytes) a layer, the tp_all_reduce column"),
    ("the all-reduce kernel: the custom one-shot all-reduce",
     "GroupCoordinator.all_reduce takes the custom all-reduce first where should_custom_ar "
     "holds, quick all-reduce only after it (distributed/parallel_state.py:612-625); on HIP "
     "dispatch_custom_allreduce picks aiter's or sglang's (device_communicators/"
     "custom_all_reduce.py:430-470); kvplan's xgmi3 latency is vLLM's custom all-reduce on "
     "MI300 (7.07-7.66 us, ROCm/aiter PR 801)"),
    ("the routed scaling factor", "fused into aiter's biased grouped top-k on HIP with aiter "
     "(models/deepseek_v2.py:918-924 skips the multiply): no kernel"),
    ("MTP / speculative decoding", "off: the launch line has no --speculative-algorithm"),
    ("the shared expert", "inside the fused MoE on gfx942 (models/deepseek_v2.py:3348-3388): "
     "kvplan charged it apart; commit a412b355 folds it in (kvplan.engines.sglang."
     "shared_fusion), the decode step 0.93 ms shorter at batch 1, and 73b5bdae takes its 6 "
     "ops a MoE layer out of the eager prefill's count"),
)
CODE_READ_KERNELS = sum(lead.kernels for lead in CODE_READ)  # per decoder layer: 19
RULE_KERNELS = sum(lead.kernels for lead in CODE_READ if lead.in_rule)  # 18, the rule's
assert RULE_KERNELS == SGLANG_GFX942_MLA_DECODE.extra_kernels

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


# aiter's ASM MLA decode with one request on an MI300 (nhead 128, the bf16 cache; ROCm/aiter
# PR 2039's table, the ASM column): (batch, context, us).
AITER_MLA_SOURCE = "https://github.com/ROCm/aiter/pull/2039, ASM, nhead 128, batch 1, 21-64 keys"
AITER_MLA_BATCH1 = ((1, 21, 15.491), (1, 64, 14.717))

# What 0.5.7 runs for a block-FP8 linear layer on HIP under SGLANG_USE_AITER (sglang 0.5.7 sdist,
# layers/quantization/fp8_utils.py): `_dispatch_auto_backend` returns aiter_w8a8_block_fp8_linear
# (:244-260), which quantizes the activation per 1 x 128 (aiter_per1x128_quant, :503) and calls
# `gemm_a8w8_blockscale` imported from aiter.ops.triton.gemm_a8w8_blockscale (:58-65; the CK
# import is commented out): aiter's Triton kernel, configured per (N, K) from a per-arch file
# where one exists, else a default. ROCm/aiter PR 1930 (2026-01-29, after 0.5.7's 2026-01-01
# sdist): "the tuning configuration for the specific shape (N=2112, K=7168) was missing on
# mi300x, causing it to fall back to default parameters"; its SGLang DeepSeek-R1 serving on
# MI300X (1k / 1k) with the tuned configuration, median TPOT before -> after, ms, by
# concurrency. sglang PR 18242 (2026-02) names aiter PR 2024 as the fix it takes for gfx942.
TRITON_GEMM_SOURCE = ("https://github.com/ROCm/aiter/pull/1930 (median TPOT, SGLang, "
                      "DeepSeek-R1, MI300X, 1k/1k; Triton gemm_a8w8_blockscale N 2112 K 7168)")
TRITON_GEMM_TPOT = ((4, 28.76, 22.05), (8, 37.19, 25.56), (16, 47.17, 30.83), (32, 46.60, 34.30))


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
    before_rule: StepTime  # the same step without the rules these runs shaped (8da032bf, a412b355)


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
    used = eff if eff is not None else sim.cost.eff
    st, before = (step_time(spec, inputs.gpu, tokens=batch, context=context, requests=batch,
                            kv_dtype=cap.kv_dtype, layout=sim.cost.layout, eff=e,
                            quantization=cap.quantization)
                  for e in (used, replace(used, mla_decode_launches=(), shared_expert_fusion=())))
    return Point(run_id=run["id"].removeprefix(ID_PREFIX), model=run["model_id"], batch=batch,
                 context=context, layers=spec.num_hidden_layers,
                 measured_tpot_ms=run["measured"]["mean_tpot_ms"], step=st, before_rule=before)


def points() -> list[Point]:
    return [decompose(run) for run in prospective_runs.load(DATA)["runs"]]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def print_decomposition(pts: list[Point]) -> None:
    print("| run | batch | context | measured TPOT ms | kvplan step before the rules ms | "
          "kvplan step ms | " + " | ".join(COLUMNS) + " | other | measured - step ms | "
          "per layer us |")
    print("|---|---:|---:|---:|---:|---:|" + "---:|" * len(COLUMNS) + "---:|---:|---:|")
    for p in pts:
        by = p.step.by_op
        other = sum(v for k, v in by.items() if k not in COLUMNS)
        gap = p.measured_tpot_ms / 1e3 - p.step.seconds
        print(f"| {p.run_id} | {p.batch} | {p.context:,} | {p.measured_tpot_ms:.2f} | "
              f"{_ms(p.before_rule.seconds)} | {_ms(p.step.seconds)} | "
              + " | ".join(_ms(by.get(k, 0.0)) for k in COLUMNS)
              + f" | {_ms(other)} | {_ms(gap)} | {gap / p.layers / US:.0f} |")


def floor_kernels_per_layer(p: Point, floor_s: float) -> float:
    """Kernels kvplan charges at the floor in a batch-1 step, per layer: the small kernels, the
    projections' and dense MLPs' GEMM (and quantize) kernels and the attention kernel, each at
    the floor there (the experts' fused MoE and the all-reduces are priced apart)."""
    by = p.step.by_op
    return sum(by.get(k, 0.0) for k in ("small_kernels", "attention_proj", "mlp",
                                        "attention")) / floor_s / p.layers


def rule_rows(model_id: str = "deepseek-ai/DeepSeek-V3.1") -> list[tuple[str, float, float]]:
    """(run id, TPOT mean error at the first evaluation, TPOT mean error as replayed now) for
    `model_id`'s runs: the record (prospective59's FIRST_ROWS) beside the replay with the rule."""
    now = {r.run_id: r for r in prospective_runs.set_results(DATA)}
    return [(run["id"].removeprefix(ID_PREFIX), FIRST_ROWS[run["id"].removeprefix(ID_PREFIX)][1],
             now[run["id"]].simulated["tpot_ms.mean"] / run["measured"]["mean_tpot_ms"] - 1)
            for run in prospective_runs.load(DATA)["runs"] if run["model_id"] == model_id]


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
          "the step's miss from above. The step is priced with the rules these runs shaped "
          "(commit 8da032bf, kvplan.engines.sglang.mla_decode; commit a412b355, kvplan.engines."
          "sglang.shared_fusion); 'before the rules' is the same step without them.\n")
    print_decomposition(pts)
    lone = [p for p in pts if p.batch == 1]
    print("\nAt concurrency 1, DeepSeek-V3.1's measured TPOT barely moves with the context "
          + ", ".join(f"{p.context:,} tokens {p.measured_tpot_ms:.2f} ms" for p in lone
                      if "DeepSeek" in p.model)
          + ": a fixed step of ~23.5 ms on one rank, against kvplan's "
          + ", ".join(_ms(p.before_rule.seconds) for p in lone if "DeepSeek" in p.model)
          + " ms before the rules ("
          + ", ".join(_ms(p.step.seconds) for p in lone if "DeepSeek" in p.model)
          + " with them). Maverick's ("
          + ", ".join(f"{p.measured_tpot_ms:.2f} measured, {_ms(p.step.seconds)} kvplan"
                      for p in lone if "Maverick" in p.model)
          + ") shares the GPU preset, the xGMI all-reduce and the 4 us floor, so the miss is in "
          "what DeepSeek's layers launch on gfx942.\n")
    print("What SGLang 0.5.7 launches per DeepSeek-V3 decoder layer on gfx942 that kvplan "
          "does not count (read in the sglang 0.5.7 sdist, python/sglang/srt/; not profiled):\n")
    print("| what | kernels per layer beyond kvplan's count before the rule | at the 4 us "
          "floor, ms per step (61 layers) | in the rule (8da032bf) | source |")
    print("|---|---:|---:|---|---|")
    layers = next(p.layers for p in pts if "DeepSeek" in p.model)
    for lead in CODE_READ:
        print(f"| {lead.what} | {lead.kernels} | {_ms(lead.kernels * floor * layers)} | "
              f"{'yes' if lead.in_rule else 'no'} | {lead.source} |")
    print(f"| all | {CODE_READ_KERNELS} | {_ms(CODE_READ_KERNELS * floor * layers)} | "
          f"{RULE_KERNELS} | |")
    print("\nRead in the same sdist and priced as kvplan prices it (or now, by a412b355):\n")
    print("| what | 0.5.7 on gfx942 |")
    print("|---|---|")
    for what, read in CHECKED:
        print(f"| {what} | {read} |")
    print(f"\naiter's measured block-FP8 CK GEMM kernels at the TP-8 decode shapes, M = 16 "
          f"({AITER_GEMM_SOURCE}), against kvplan's charge for the GEMM kernel (its "
          "quantize kernel is a second floor in both). Not the kernel 0.5.7 runs: its "
          "block-FP8 linear layers call aiter's Triton gemm_a8w8_blockscale (below), so these "
          "are a tuned CK kernel's times, of the shapes only:\n")
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
          "aiter's glm5_1 table's 257-expert top-9 rows, the MI300X preset's moe floor, are "
          "that shape): kvplan charged it apart (4 floors a MoE layer, 0.93 ms a step) until "
          "commit a412b355 (kvplan.engines.sglang.shared_fusion), which folds it in.\n")
    rows = rule_rows()
    print("The rules these runs shaped (commit 8da032bf: the first three items above, "
          f"{RULE_KERNELS} kernels a layer at the 4 us floor, decode steps of SGLang 0.5.7 "
          "and later on gfx942 where aiter runs; with it alone the median below read 28.5 %. "
          "Commit a412b355: the shared expert inside the fused MoE, 4 floors a MoE layer "
          "fewer, the other way), mean TPOT error predicted / measured - 1 "
          "(the first evaluation at 25b47b7e is prospective59's record; this forensic's "
          "counterfactual before the rules, commit be438df2, all 19 kernels: median 43.7 -> "
          "27.6 %):\n")
    print("| run | first evaluation (record) | replayed with the rules |")
    print("|---|---:|---:|")
    for run_id, before, after in rows:
        print(f"| {run_id} | {before:+.1%} | {after:+.1%} |")
    print(f"| median abs, {len(rows)} runs | "
          f"{statistics.median(abs(b) for _, b, _ in rows):.1%} | "
          f"{statistics.median(abs(a) for *_, a in rows):.1%} |")
    deep = [p for p in lone if "DeepSeek" in p.model]
    spec = load_spec(str(prospective_runs.REPO / "tests/data/configs/deepseek-v3.1.json"))
    row_bytes = (spec.attention.kv_lora_rank + spec.attention.qk_rope_head_dim) * 2  # bf16
    lo, hi = deep[0], deep[-1]
    grown = (hi.measured_tpot_ms - lo.measured_tpot_ms) / 1e3
    streamed = (hi.context - lo.context) * row_bytes * hi.layers / grown
    print(f"\nThe step's growth with the context at concurrency 1: measured +{grown * 1e3:.2f} "
          f"ms from {lo.context:,} to {hi.context:,} tokens, kvplan's "
          f"+{_ms(hi.step.seconds - lo.step.seconds)} ms (one request's MLA attention sits at "
          f"the floor): the extra cache rows ({row_bytes} B a token a layer, bf16) stream at "
          f"{streamed / 1e9:,.0f} GB/s, {streamed / get_gpu('MI300X').hbm_bytes_per_s:.0%} of "
          "the MI300X's HBM: aiter's MLA decode with one request reads the cache far below "
          "the HBM rate (a lead; no batch-1 aiter MLA timing was found).\n")
    others = CODE_READ_KERNELS - RULE_KERNELS
    print("What is left at concurrency 1 after the rules (and the aiter reduce kernel, not in "
          "them, at the floor), and the time per kernel that would close it over every kernel "
          "kvplan now charges at the floor (a lead, not a measurement: no HIP-graph kernel "
          "spacing on MI300X was found):\n")
    print("| run | left ms per step | left us per layer | floor that closes it us |")
    print("|---|---:|---:|---:|")
    for p in deep:
        left = p.measured_tpot_ms / 1e3 - p.step.seconds - others * floor * p.layers
        kernels = floor_kernels_per_layer(p, floor) + others
        print(f"| {p.run_id} | {_ms(left)} | {left / p.layers / US:.0f} | "
              f"{(floor + left / p.layers / kernels) / US:.1f} |")
    mla_least_us = min(us for *_, us in AITER_MLA_BATCH1)
    print("\nOther leads, measured by AMD and not applied (each of another shape than this "
          f"launch's): aiter's MLA decode at one request takes {mla_least_us:.1f}-"
          f"{max(us for *_, us in AITER_MLA_BATCH1):.1f} us on an MI300 "
          f"({AITER_MLA_SOURCE}), against kvplan's {floor / US:.0f} us attention kernel: "
          f"+{_ms((mla_least_us * US - floor) * layers)} ms a step at 61 layers; the same "
          "kernel family on an MI355X (nhead 32, https://github.com/ROCm/aiter/pull/3003) "
          "grows from 15.8 us at 21 keys to 33.0 us at 8,192 with one request (the measured "
          "TPOT's growth above is the same kind, not the HBM rate). The attention projections' "
          "tuned CK GEMMs (above) would add "
          f"{_ms((attn / 1e6 - 3 * floor) * layers)} ms a step. SGLang PR 18242 (merged "
          "2026-02, after 0.5.7) puts gfx942 on "
          "the fused rope + cat + KV-write kernel and aiter's tuned gfx942 GEMMs for '~11%' "
          "decode throughput (its batch not stated): of the order of the rule's RoPE and cat "
          f"kernels ({_ms(16 * floor * layers)} ms of the ~24 ms one-request step at the "
          "floor), not a measurement of them.")
    print_triton_gemm(deep, floor)


def triton_gemm_per_layer_us() -> list[tuple[int, float]]:
    """(concurrency, us a decoder layer) that aiter PR 1930's tuned gfx942 configuration of the
    fused q_a + kv_a Triton GEMM took off SGLang's DeepSeek-R1 median TPOT on MI300X: (before -
    after) / 61 layers (the GEMM runs once a layer). A serving delta, not a kernel timing: above
    concurrency 4 the TPOT also holds prefills, whose GEMM (M = the prompt) got faster too."""
    return [(conc, (before - after) * 1e3 / 61) for conc, before, after in TRITON_GEMM_TPOT]


def _left_us(p: Point) -> float:
    return (p.measured_tpot_ms / 1e3 - p.step.seconds) / p.layers / US


def print_triton_gemm(deep: list[Point], floor: float) -> None:
    """Item 6 (a lead, not applied): the untuned Triton GEMM beside what is left."""
    print("\nThe block-FP8 GEMM 0.5.7 runs on gfx942 is aiter's Triton gemm_a8w8_blockscale "
          "(sglang 0.5.7 layers/quantization/fp8_utils.py:58-65, :244-260, :485-519), whose "
          "gfx942 configuration for the fused q_a + kv_a shape (N 2112, K 7168) was missing "
          f"until 2026-02, so it ran aiter's default one ({TRITON_GEMM_SOURCE}). What that "
          "PR's tuned configuration took off SGLang's DeepSeek-R1 TPOT on MI300X, per decoder "
          "layer (the GEMM runs once a layer; kvplan charges it a quantize and a GEMM kernel "
          "at the 4 us floor):\n")
    print("| concurrency | median TPOT before ms | after ms | per layer us |")
    print("|---:|---:|---:|---:|")
    for (conc, before, after), (_, us) in zip(TRITON_GEMM_TPOT, triton_gemm_per_layer_us(),
                                               strict=True):
        print(f"| {conc} | {before:.2f} | {after:.2f} | {us:.0f} |")
    least = triton_gemm_per_layer_us()[0][1]
    print(f"\nAt concurrency 4 the default configuration costs {least:.0f} us a layer more "
          "than the tuned one; what is left of each concurrency-1 step above after the rules "
          "(and the reduce kernel) is "
          + ", ".join(f"{_left_us(p) - floor / US:.0f}" for p in deep)
          + " us a layer. Of the same size, but a serving delta on another release and "
          "another batch, not a kernel timing of this launch (no timing of aiter's default "
          "Triton configuration at N 2112, K 7168 on gfx942 was found; ROCm/aiter PR 1232's "
          "default at M = 64 on an MI350X took 128.8 us, tuned 68.5): a lead, not applied. "
          "Whether the 0.5.7 ROCm image's aiter lacked the configuration is inferred from the "
          "dates (the sdist is of 2026-01-01, PR 1930 of 2026-01-29 says it was missing); the "
          "image's aiter commit was not read.")


if __name__ == "__main__":
    print_section()
