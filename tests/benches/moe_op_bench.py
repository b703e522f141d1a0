"""kvplan's price of one MoE layer against aiconfigurator's measured MoE op (issue 30):
examples/moe-op-bench.md.

The measured rows (tests/data/moe_op/moe_perf_rows.csv.gz, extracted by
tests.benches.moe_op_extract; their provenance and what was timed: tests/data/moe_op/SOURCES.md)
are one rank's fused-MoE forward, router logits given, in a CUDA graph, for `num_tokens` tokens
on that rank. kvplan's price of the same call is the simulator's own: kvplan.perf.roofline
.step_time of that one MoE layer (`layers`), on the engine's efficiency as the simulator builds
it (kvplan.perf.engine_traits.engine_efficiency over device_efficiency, as
kvplan.analysis.simulate.run._step_cost does), in a layout of moe_tp x moe_ep ranks with TP
attention (Layout(tp=moe_tp x moe_ep, ep=moe_ep): moe_tp = world // ep, every rank holding the
`num_tokens` tokens, as the collector's one rank does). From that step, `moe_price_s` takes:

- its `experts` op: the two grouped GEMMs (their weights, FLOPs, padding and activations where
  the engine declares its fused MoE kernel, their kernels' floors, FP8's quantize kernels);
- the MoE's small kernels the roofline counts at a floor each besides it: the gated activation
  (one of MLP_KERNELS, the other being the post-attention norm), the permute and the
  unpermute / reduce (MOE_EXTRA_KERNELS) and the router's top-k (op_counts.topk_kernels),
  and, where the engine's fused MoE kernel applies, its small kernels' bytes beyond their
  floors (kvplan.perf.moe_kernel.moe_traffic: Triton's activation and sum; CUTLASS's permute,
  activation and finalize).

Not in it: the router's gate GEMM (the collector passes router logits; kvplan counts the router
with the experts' bytes, a few hundred kB), the shared experts (a separate op), the all-to-all
or all-reduce (none in the measured op). The shapes are the bundled checkpoints' (Qwen3-30B-A3B
from tests/data/configs), bf16 (quantization_config removed) or block-FP8 (cost_cases.FP8_BLOCK).
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from kvplan.engines.vllm.moe_kernel import VLLM_TRITON_ONLY
from kvplan.hardware.gpus import get_gpu
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import FP8_MOE_GEMM, MOE_GEMM, MOE_GEMM_SHAPE, device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.moe_kernel import moe_traffic, priced_kernel, routed_expert_formats
from kvplan.perf.op_counts import MOE_EXTRA_KERNELS, topk_kernels
from kvplan.perf.roofline import step_time
from kvplan.sources.resolve import load_spec
from tests.benches import moe_op_cutlass
from tests.benches.cost_cases import FP8_BLOCK

ROOT = Path(__file__).resolve().parents[2]
ROWS = ROOT / "tests" / "data" / "moe_op" / "moe_perf_rows.csv.gz"
QWEN3_30B = str(ROOT / "tests" / "data" / "configs" / "qwen3-30b-a3b.json")
# (hidden_size, inter_size, num_experts, topk) -> the checkpoint kvplan prices it as.
MODELS = {(2048, 768, 128, 8): ("Qwen3-30B-A3B", QWEN3_30B),
          (4096, 1536, 128, 8): ("Qwen3-235B-A22B", "qwen3-235b-a22b"),
          (3072, 1536, 256, 8): ("MiniMax-M2", "minimax-m2"),
          (7168, 2048, 256, 8): ("DeepSeek-V3", "deepseek-v3"),
          (7168, 2048, 384, 8): ("Kimi-K2", "kimi-k2"),
          (4096, 14336, 8, 2): ("Mixtral-8x7B", "mixtral-8x7b")}
GPUS = {"NVIDIA H100 80GB HBM3": "H100", "NVIDIA H200": "H200", "NVIDIA B200": "B200"}
ENGINES = {"VLLM": "vllm", "SGLang": "sglang", "TRTLLM": "trtllm"}
QUANT = {"bfloat16": "bf16", "fp8_block": "fp8 block"}
DECODE_MAX = 256  # tokens: the decode-sized calls (1-256); 512-16,384: prefill-sized
BUCKETS = (("1-16", 1, 16), ("32-256", 32, 256), ("512-2k", 512, 2048),
           ("4k-16k", 4096, 16384))


@dataclass(frozen=True, kw_only=True)
class Row:
    """One measured row (the table's columns, kvplan's names) and kvplan's price of it."""

    engine: str  # --engine name
    version: str
    gpu: str  # kvplan preset
    kernel_source: str
    quant: str  # bfloat16 | fp8_block
    tokens: int
    shape: tuple[int, int, int, int]  # hidden, inter, experts, topk
    moe_tp: int
    moe_ep: int
    measured_ms: float

    @property
    def model(self) -> str:
        return MODELS[self.shape][0]


def read_csv(path: Path = ROWS) -> list[dict[str, str]]:
    """The committed rows as the table has them (column names and values)."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def read_rows(path: Path = ROWS) -> list[Row]:
    """One Row per measured case: the 384-expert shape (Kimi-K2's) is in each table twice, two
    collector cases of one shape measured apart (tests/data/moe_op/SOURCES.md); such a case's
    measurements are averaged, so that it counts once."""
    cases: dict[tuple, list[float]] = defaultdict(list)
    for r in read_csv(path):
        key = (ENGINES[r["framework"]], r["version"], GPUS[r["device"]], r["kernel_source"],
               r["moe_dtype"], int(r["num_tokens"]),
               (int(r["hidden_size"]), int(r["inter_size"]), int(r["num_experts"]),
                int(r["topk"])), int(r["moe_tp_size"]), int(r["moe_ep_size"]))
        cases[key].append(float(r["latency"]))
    return [Row(engine=e, version=v, gpu=g, kernel_source=k, quant=q, tokens=t, shape=shape,
                moe_tp=tp, moe_ep=ep, measured_ms=statistics.fmean(ms))
            for (e, v, g, k, q, t, shape, tp, ep), ms in cases.items()]


@cache
def model_spec(shape: tuple[int, int, int, int], quant: str) -> ModelSpec:
    spec = load_spec(MODELS[shape][1])
    moe = spec.moe
    assert moe is not None and (spec.hidden_size, moe.moe_intermediate_size,
                                moe.n_routed_experts, moe.num_experts_per_tok) == shape
    if quant == "fp8_block":
        return replace(spec, quantization_json=json.dumps(FP8_BLOCK))
    return replace(spec, quantization_json=None, quantization_file=None, weight_dtype="bf16")


def moe_layer(spec: ModelSpec) -> int:
    """The first decoder layer with routed experts."""
    from kvplan.weights.params import count_params

    return next(i for i, lp in enumerate(count_params(spec).layers) if lp.routed_experts)


def moe_price_s(row: Row, **fractions: object) -> float:
    """kvplan's price of the row's MoE call (module docstring); `fractions`: Efficiency fields
    set in place of the engine's (moe_gemm / fp8_moe_gemm / moe_gemm_shape, for the fits and
    the page's columns). The base is the device's WITHOUT the experts' shape table (the CUDA
    presets' default since moedefault63), so that no fraction given means the dense one and
    each column sets exactly its own rule, as the fits and the page were made."""
    spec = model_spec(row.shape, row.quant)
    gpu = get_gpu(row.gpu)
    eff = engine_efficiency(row.engine, replace(device_efficiency(gpu), moe_gemm_shape=None),
                            version=row.version)
    # The measured op holds the routed experts alone: not the shared expert SGLang folds into
    # its fused MoE for DeepseekV3ForCausalLM from 0.5.7 (kvplan.engines.sglang.shared_fusion),
    # which the bundled deepseek-v3 now names (presetarch68).
    eff = replace(eff, shared_expert_fusion=())
    if fractions:
        eff = replace(eff, **fractions)
    if row.kernel_source == "vllm_fused_moe":
        # The collector calls vLLM's Triton fused_moe itself (SOURCES.md), whatever kernel the
        # release's oracle would pick for the format and GPU in serving (FlashInfer's block-FP8
        # kernels on Hopper under EP, on B200): price the kernel the row ran.
        eff = replace(eff, moe_kernel=VLLM_TRITON_ONLY)
    layout = Layout(tp=row.moe_tp * row.moe_ep, ep=row.moe_ep)
    i = moe_layer(spec)
    step = step_time(spec, gpu, tokens=row.tokens, context=row.tokens, requests=1,
                     phase="prefill", layout=layout, eff=eff, layers=range(i, i + 1))
    small = 1 + MOE_EXTRA_KERNELS + topk_kernels(spec, gpu.platform)
    seconds = step.by_op["experts"] + small * eff.kernel_floor_s
    # The activation and moe_sum kernels where the roofline prices the engine's fused MoE
    # (kvplan.perf.moe_kernel.priced_kernel: 16-bit and block-FP8 experts, and under EP where
    # vLLM's Triton kernel walks every pair, the collector's one physical rank holding every
    # token); the quantize kernels' bytes are in the experts op.
    fmt = routed_expert_formats(spec, [i])[i]
    kernel = priced_kernel(eff.moe_kernel, fmt=fmt, version=row.version, gpu=gpu,
                           ep=row.moe_ep, dp_ranks=1)
    if kernel is not None:
        moe = spec.moe
        assert moe is not None
        traffic = moe_traffic(kernel, tokens=row.tokens, experts=moe.n_routed_experts,
                              top_k=moe.num_experts_per_tok, hidden=spec.hidden_size,
                              width=moe.moe_intermediate_size // layout.moe_tp, act_bytes=2,
                              ep=row.moe_ep)
        for nbytes in traffic.small_kernel_bytes:
            seconds += max(0.0, nbytes / (gpu.hbm_bytes_per_s * eff.hbm) - eff.kernel_floor_s)
    return seconds


# The fit of Efficiency.moe_gemm / fp8_moe_gemm (kvplan.perf.efficiency.MOE_GEMM_FIT): the
# H100 tables' prefill-sized cases; H200 and B200 held out.
FIT_GPU = "H100"
FIT_MIN_TOKENS = 4096
FIT_FIELD = {"bfloat16": "moe_gemm", "fp8_block": "fp8_moe_gemm"}


def fit_rows(rows: list[Row], quant: str) -> list[Row]:
    """The cases the `quant` experts' fraction is fitted on."""
    return [r for r in rows
            if r.gpu == FIT_GPU and r.tokens >= FIT_MIN_TOKENS and r.quant == quant]


def _median_ratio(rows: list[Row], **fractions: object) -> float:
    return statistics.median(moe_price_s(r, **fractions) * 1e3 / r.measured_ms for r in rows)


def fit_moe_gemm(rows: list[Row], quant: str) -> float:
    """The experts' fraction (of the peak their math runs at) at which the median ratio of
    the fit cases is 1, by bisection (a lower fraction prices the compute-bound calls higher,
    so the median ratio falls as the fraction rises)."""
    cases, field = fit_rows(rows, quant), FIT_FIELD[quant]
    lo, hi = 0.01, 1.0
    for _ in range(20):  # to 1e-6
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _median_ratio(cases, **{field: mid}) > 1 else (lo, mid)
    return (lo + hi) / 2


def implied_fraction(row: Row) -> float | None:
    """The experts' fraction that makes kvplan's price of `row` its measured latency: the
    GEMMs' compute time at the whole peak, C (from two prices deep in the compute-bound
    regime, at 0.01 and 0.02: 100 C and 50 C plus the rest), over the measured time less the
    rest; None where the rest alone outlasts the measured op. Below the compute-bound regime it
    is a lower bound only (the op's time there is its bytes)."""
    field = FIT_FIELD[row.quant]
    p1, p2 = moe_price_s(row, **{field: 0.01}), moe_price_s(row, **{field: 0.02})
    compute = (p1 - p2) / 50
    need = row.measured_ms / 1e3 - (p1 - 100 * compute)
    return compute / need if need > 0 else None


def implied_lines(rows: list[Row], gpu: str = FIT_GPU, least_tokens: int = 512) -> list[str]:
    """Median implied fraction on `gpu` by experts' dtype and rows per expert (T x top-k /
    experts, in powers of two), every engine and each."""
    groups: dict[tuple[str, int], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.gpu != gpu or r.tokens < least_tokens:
            continue
        f = implied_fraction(r)
        if f is not None:
            per_expert = 2 ** int(math.log2(r.tokens * r.shape[3] / r.shape[2]))
            groups[(r.quant, per_expert)][r.engine].append(f)
    out = []
    for (quant, m), by in sorted(groups.items()):
        every = [f for fs in by.values() for f in fs]
        out.append(f"| {QUANT[quant]} | {m:,} | {len(every)} | {statistics.median(every):.2f} | "
                   + " | ".join(f"{statistics.median(by[e]):.2f}" if by.get(e) else "-"
                                for e in ("sglang", "trtllm", "vllm"))
                   + f" | {_by_rows(quant, m):.2f} |")
    return out


def _by_rows(quant: str, rows: int) -> float:
    """kvplan's fraction by rows per expert (MOE_GEMM_SHAPE) for `quant` experts."""
    table = MOE_GEMM_SHAPE.bf16 if quant == "bfloat16" else MOE_GEMM_SHAPE.fp8
    return table.fraction(rows)


def bucket(tokens: int) -> str:
    return next(name for name, lo, hi in BUCKETS if lo <= tokens <= hi)


def bucket_order(tokens: int) -> int:
    return next(i for i, (_, lo, hi) in enumerate(BUCKETS) if lo <= tokens <= hi)


# The two prices the page sets beside each other: the experts' GEMMs at the dense fractions
# (`gemm` / `fp8_gemm`, 0.70 but B200's FP8 0.55: kvplan before moefit58) and at the fitted
# ones (kvplan.perf.efficiency.MOE_GEMM / FP8_MOE_GEMM), whichever the default is.
BEFORE = {"moe_gemm": None, "fp8_moe_gemm": None}
FITTED = {"moe_gemm": MOE_GEMM, "fp8_moe_gemm": FP8_MOE_GEMM}
# The fraction by rows per expert (kvplan.perf.moe_gemm_shape, moeshape59), the CUDA presets'
# default since moedefault63.
SHAPE = {"moe_gemm_shape": MOE_GEMM_SHAPE}
SIDES = (BEFORE, FITTED, SHAPE)


def ratios(rows: list[Row]) -> list[tuple[Row, tuple[float, ...]]]:
    """Each row with kvplan's price over its measured latency: before, with the fitted
    experts' fractions, and with the fraction by rows per expert (SIDES)."""
    return [(r, tuple(moe_price_s(r, **side) * 1e3 / r.measured_ms for side in SIDES))
            for r in rows]


def split(row: Row) -> str:
    """The row's part in the fit of the experts' fractions."""
    return "fitted" if row.gpu == FIT_GPU and row.tokens >= FIT_MIN_TOKENS else "held out"


def _summary(pairs: list[tuple[float, ...]]) -> str:
    cells = [f"{len(pairs):,}"]
    for side in range(len(SIDES)):
        values = sorted(p[side] for p in pairs)
        q = statistics.quantiles(values, n=10, method="inclusive")
        cells += [f"{statistics.median(values):.2f}", f"{q[0]:.2f} - {q[-1]:.2f}"]
    return " | ".join(cells)


def table(pairs: list[tuple[Row, tuple[float, ...]]], key, label) -> list[str]:
    """Rows of a markdown table: the ratios grouped by `key` (a sortable tuple), each group's
    cells `label(row)`: rows, then median and 10th - 90th percentile before, fitted and by
    shape."""
    groups: dict[tuple, list[tuple[float, ...]]] = defaultdict(list)
    labels: dict[tuple, tuple] = {}
    for r, x in pairs:
        groups[key(r)].append(x)
        labels[key(r)] = label(r)
    return ["| " + " | ".join(map(str, labels[k])) + " | " + _summary(v) + " |"
            for k, v in sorted(groups.items())]


def moe_layers(shape: tuple[int, int, int, int]) -> int:
    """Decoder layers with routed experts in the checkpoint of `shape`."""
    from kvplan.weights.params import count_params

    return sum(1 for lp in count_params(model_spec(shape, "bfloat16")).layers
               if lp.routed_experts)


def step_gap_lines(pairs: list[tuple[Row, tuple[float, ...]]], gpu: str = "H100",
                   quant: str = "fp8_block") -> list[str]:
    """What the per-layer gap is worth over a whole step: (measured - kvplan) x the
    checkpoint's MoE layers, in ms, at 2,048 and 8,192 tokens a rank, on `gpu`, MoE TP 8 or
    EP 8 (the layouts of an 8-GPU serving row); before, with the fitted fractions and by
    shape."""
    gap: dict[tuple, dict[int, str]] = defaultdict(dict)
    for r, xs in pairs:
        if (r.gpu == gpu and r.quant == quant and r.tokens in (2048, 8192)
                and (r.moe_tp, r.moe_ep) in ((8, 1), (1, 8))):
            layers = moe_layers(r.shape)
            key = (r.model, layers, f"{r.engine} {r.version}",
                   "EP 8" if r.moe_ep == 8 else "MoE TP 8")
            gap[key][r.tokens] = " / ".join(
                f"{(r.measured_ms - r.measured_ms * x) * layers:+.1f}" for x in xs)
    return [f"| {m} | {n} | {e} | {lay} | "
            + " | ".join(g.get(t, "-") for t in (2048, 8192)) + " |"
            for (m, n, e, lay), g in sorted(gap.items())]


INTRO = (
    "kvplan's price of one MoE layer (kvplan.perf.roofline.step_time of that layer, on the "
    "engine's efficiency as `simulate` builds it) against the fused-MoE op aiconfigurator "
    "measured (github.com/ai-dynamo/aiconfigurator at 095f58a51, "
    "aic-core/src/aiconfigurator_core/systems/data/<gpu>/moe/<backend>/<version>/"
    "moe_perf.parquet): one rank's FusedMoE forward, router logits given, replayed in a CUDA "
    "graph and timed with CUDA events, balanced routing (every expert receives T x top-k / "
    "experts tokens), for vLLM 0.19.0, SGLang 0.5.9 and TensorRT-LLM 1.2.0rc5 on H100, H200 "
    "and B200, bf16 or block-FP8 experts, the expert shapes of six checkpoints kvplan has, "
    "MoE TP or EP up to 8 ranks, 1 to 16,384 tokens a rank: 10,324 cases (11,794 rows) "
    "(tests/data/moe_op/SOURCES.md; tests/benches/moe_op_bench.py says what kvplan's price "
    "holds). Kernel tables, not serving rows. The page's first evaluation (df6b6154-d48f7124, "
    "the findings below) fitted nothing; since moefit58 two constants are fitted on the H100 "
    "tables' prefill-sized cases (the next paragraph), since moeshape59 a fraction by the rows "
    "each expert computes on the same H100 tables (the paragraph after it), and every table "
    "sets the price before (the experts' GEMMs at the dense fractions) beside the price with "
    "each. A ratio below 1 is kvplan pricing the op cheaper than it ran.")

FIT_TEXT = (
    "**The experts' compute fractions (moefit58, FITTED here).** `Efficiency.moe_gemm` and "
    "`fp8_moe_gemm` (kvplan.perf.efficiency.MOE_GEMM_FIT / FP8_MOE_GEMM_FIT) price the routed "
    "experts' grouped GEMMs at their own fraction of the peak their math runs at, in place of "
    "the dense GEMMs' 0.70 (B200's FP8 0.55). Each is the fraction at which the median ratio "
    "of the fit cases is 1 (fit_moe_gemm, by bisection): the H100 tables' cases of 4,096-16,384 "
    "tokens a rank, all three engines and seven layouts, bf16 (369 cases) -> 0.333 of the bf16 "
    "peak, kept as 0.33, and block FP8 (351) -> 0.203 of the FP8 peak, kept as 0.20; the "
    "column `fit` marks those rows. The H200 and B200 tables are held out: their 4k-16k medians "
    "move bf16 0.59 -> 1.09 (H200) and 0.39 -> 0.65 (B200), block FP8 0.37 -> 1.12 (H200) "
    "and 0.26 -> 0.58 (B200) (every engine together; the tables below by engine). Decode-sized "
    "calls (1-256 tokens) are memory-bound at both fractions and do not move. One fraction "
    "per format for every engine leaves the engines' spread (the fit rows' medians with the "
    "fitted fractions, bf16: SGLang 0.61, vLLM 1.15, TensorRT-LLM 1.24; block FP8: SGLang "
    "1.25, vLLM 0.92, TensorRT-LLM 0.93), and B200's block-FP8 MoE stays under-priced most "
    "under vLLM (0.16 -> 0.39). Whether it is kvplan's default was "
    "decided on serving rows after the constants were committed (tests/benches/"
    "moe_gemm_bench.py, its docstring's figures): it is NOT, an opt-in field. TTFT comes "
    "closer on every set (other publishers' prospective MoE runs, 69: median |error| 66.7 -> "
    "44.6 %; aiconfigurator's held-out aggregated MoE rows, every 4th, 266: 36.5 -> 32.4 %, "
    "TPOT 14.5 -> 14.9 %; disagg rows, 229: 70.0 -> 64.9 %), but the sim-to-real study's "
    "Mixtral stages' ITL, 20 stages, goes 1.7 -> 7.8 % (ratio 1.005 -> 1.078), which the "
    "rows-per-expert table below explains.")

SHAPE_TEXT = (
    "**The experts' compute fraction by rows per expert (moeshape59, FITTED here).** "
    "`Efficiency.moe_gemm_shape` (kvplan.perf.moe_gemm_shape; its tables "
    "kvplan.perf.efficiency.MOE_GEMM_SHAPE, records MOE_GEMM_SHAPE_BF16_FIT / _FP8_FIT) prices "
    "the routed experts' grouped GEMMs at a fraction that grows with the rows each expert "
    "computes (T x top-k / experts, the grouped GEMM's M), a table per format linear in log2 "
    "of the rows, the edge's value outside. Fit cases (tests/benches/moe_shape_fit.py): the "
    "H100 tables' cases the measured op is compute-bound in, read in the measurements alone: "
    "the latency at T at least 1.6x the same case's at T / 2 (the FLOPs' time at least three "
    "quarters of it), every expert receiving a row at T / 2. A point is a power of two of rows "
    "per expert (nearest in log2) where most of the bucket's H100 cases are fit cases; its "
    "value is the fit cases' median implied fraction (the table below), a point that would "
    "fall below the one before pooled with it. bf16 (183 fit cases): 0.339 / 0.436 / 0.589 / "
    "0.589 at 512 / 1,024 / 2,048 / 4,096 rows, kept as 0.34 / 0.44 / 0.59 / 0.59 (256 rows: "
    "42 of 123 cases compute-bound, not a point); block FP8 (266): 0.184 / 0.218 / 0.231 / "
    "0.346 / 0.346 at 256 / 512 / 1,024 / 2,048 / 4,096 (the last two pooled), kept as 0.18 / "
    "0.22 / 0.23 / 0.35 / 0.35. Below the first point the first point's fraction holds, where "
    "the weights' bytes outlast the FLOPs: decode-sized calls move as with the one fraction "
    "(25 of 6,200 cases of 1-256 tokens, the same ones). The expert's width is not a "
    "dimension: over the fit cases, a least-squares line of log2 of the fraction on log2 of "
    "the rows leaves an rms residual of 0.65 (bf16) and 0.64 (block FP8), adding log2 N (its "
    "intermediate / MoE TP) and log2 K (hidden) 0.64 and 0.53, FP8's gain no one pattern "
    "across the engines (per engine, the N slope is TensorRT-LLM's, the K slope SGLang's and "
    "vLLM's); the engines' spread dominates (at 1,024 rows, bf16: SGLang 0.24, vLLM 0.46, "
    "TensorRT-LLM 0.62), and one table for every engine leaves it, as the one fraction did. "
    "Held out, every engine together (median kvplan / measured, before -> one fraction -> by "
    "rows; median |ln ratio|): H200 4k-16k tokens bf16 0.59 -> 1.09 -> 0.98 (0.535 -> 0.360 "
    "-> 0.319), block FP8 0.37 -> 1.12 -> 1.09 (0.991 -> 0.296 -> 0.265); 512-2k bf16 0.73 -> "
    "0.81 -> 0.81, block FP8 0.74 -> 0.91 -> 0.93 (0.307 -> 0.235 -> 0.204); B200 4k-16k bf16 "
    "0.39 -> 0.65 -> 0.60 (0.941 -> 0.546 -> 0.541), block FP8 0.26 -> 0.58 -> 0.55 (1.334 -> "
    "0.640 -> 0.597): B200's kernels reach a lower fraction of its larger peaks (the same rule "
    "on the B200 table gives bf16 0.19-0.40, FP8 0.09-0.34), which an H100 table cannot "
    "know. Mixtral-8x7B's experts under vLLM (H100 bf16, 2,048-16,384 tokens, MoE TP 2-8, 12 "
    "cases): 0.89 at the dense 0.70, 1.79 at the one fraction 0.33, 1.22 by rows.")
# The serving verdict on the fraction by rows (tests/benches/moe_gemm_bench.py --compare shape,
# its docstring's figures), measured after the tables were committed (e846422e).
SERVING_TEXT = (
    "Judged on serving rows after the tables were committed (tests/benches/moe_gemm_bench.py "
    "--compare shape, its docstring): not made the default then, an opt-in field (made the "
    "CUDA presets' default later by moedefault63, after moeshape62's held-out rows met a rule "
    "stated before their replay, tests/benches/moe_shape62.py). TTFT comes closer on "
    "the other publishers' prospective MoE runs (69: median |error| 66.5 -> 52.3 %, TPOT 36.4 "
    "-> 28.0 %; the one fraction 44.6 % and 27.6 % at moefit58) and on the sim-to-real "
    "study's Mixtral stages' median (20: 18.6 -> 15.1 %), but their ITL gets worse (1.7 -> "
    "7.2 %, the one fraction 7.8 %) and the median hides five stages the simulator saturates: "
    "Mixtral-8x7B on 2 H100s at the study's second rate (max_num_batched_tokens 8,192: up to "
    "2,048 rows an expert) runs its queue away, TTFT 94-109x the measured, ITL 1.27-1.28x, "
    "where the dense 0.70 gives 0.76-0.88 and 1.00-1.01 (the one fraction 0.33 saturates the same "
    "five, TTFT 158-183x, which its medians above hid); prospective54's GLM-4.6 on 8 H200s at "
    "concurrency 512 goes 1.02 -> 1.33 (that set's median 14.9 -> 25.1 %). aiconfigurator's "
    "held-out aggregated MoE rows (every 4th, 266; the tables' publisher): TTFT 36.5 -> 32.6 "
    "%, TPOT 14.5 -> 14.8 %, as the one fraction (32.4 %, 14.9 %). Mixtral's experts "
    "are the widest of the tables (14,336 columns, 1,792-7,168 a rank under MoE TP 2-8) and "
    "under MoE TP run at 0.53-0.80 of the bf16 peak at 512-2,048 rows (the H100 bf16 fit "
    "cases, 20; vLLM's 0.59-0.66), where the table, led by the narrow experts of the other "
    "five checkpoints, says 0.34-0.59: a width the pooled fit does not separate from the "
    "engines' spread and from EP's own costs (Mixtral's 14,336-column cases under EP or on "
    "one rank: SGLang 0.21-0.24, vLLM 0.36-0.55; finding 2) is what the Mixtral rows miss.")

FINDINGS = (
    "## Findings (first evaluation, kvplan at f517c36b; no rule or constant changed)\n\n"
    "1. **Prefill-sized calls are under-priced, more the more tokens.** Decode-sized calls "
    "(1-256 tokens) sit at a median 0.78-1.04 on H100 / H200 and 0.56-0.81 on B200 "
    "(the weights' bytes and the kernels' floors, which kvplan prices from the HBM "
    "bandwidth, are most of them); "
    "at 4k-16k tokens a rank the median falls to 0.16-0.78. The measured op scales "
    "linearly there (16k / 8k tokens: 1.8-2.1x), so it is compute-bound, at a fraction "
    "of the peak well below the roofline's 0.7 (`Efficiency.gemm`, and `fp8_gemm` "
    "where set): on H100 block-FP8 experts, vLLM's Triton fused_moe reaches 0.20-0.27 of "
    "the FP8 peak on one rank (no EP, no TP) at 16,384 tokens (the six shapes), "
    "TensorRT-LLM's CUTLASS a median 0.18 over its layouts at 4k-16k tokens; bf16 experts "
    "0.36-0.46 of the bf16 peak (vLLM, one rank, 16,384 tokens) and a median 0.41, up to "
    "0.83, for TensorRT-LLM's CUTLASS. Block-FP8 MoE is the worst case: kvplan takes "
    "the FP8 peak, twice the bf16 one, at the same 0.7, where the kernels gain far less "
    "than 2x over bf16. This is the "
    "cause the aggregated rows' low TTFT pointed at (trtmoe56: TensorRT-LLM's CUTLASS FP8 "
    "block MoE at 0.2 of the FP8 peak at 4,096 / 8,192 tokens); these tables show it for "
    "every engine, not TensorRT-LLM alone. Over a whole step (the table above: H100, "
    "block FP8, 8 ranks) it is 3-29 ms at 2,048 tokens a rank and 32-123 ms at 8,192 for "
    "the 58-94-layer checkpoints (TensorRT-LLM's MoE TP 8: 65-76 and 291-329 ms), the "
    "order of the prefill time the aggregated rows' low TTFT lacks. Not made a rule: the "
    "fraction is an efficiency "
    "of the kernels' tile configurations, not a count read in their code, and a constant "
    "fitted on these tables would be fitted on the publisher whose serving rows "
    "(every aiconfigurator aggregated and disaggregated row) it would then be judged on.\n"
    "2. **vLLM's expert parallelism costs more than 1 / EP.** Under EP with TP attention "
    "(no all-to-all: kvplan.perf.moe_kernel's docstring, vLLM fused_moe.py "
    "write_zeros_to_output, read in 0.15.1) every rank holds every token and its grouped "
    "GEMMs walk all T x top-k pairs, writing zeros for the pairs of other ranks' experts, "
    "its activation and moe_sum likewise. kvplan charges those activation bytes only where "
    "EP is 1 (roofline: `moe_kernel` only for `layout.ep == 1`), so its vLLM ratio at "
    "4k-16k tokens falls with EP: bf16 0.72 / 0.53 / 0.47 / 0.36 at EP 1 / 2 / 4 / 8 (block "
    "FP8 0.35 -> 0.16), where MoE TP over as many ranks stays at 0.62-0.71. Qwen3-30B-A3B's "
    "experts on H100 at 16,384 tokens: measured 3.02 / 1.89 / 1.30 / 1.00 ms at EP 1 / 2 / "
    "4 / 8 against 3.02 / EP = 1.51 / 0.75 / 0.38 ms; the excess (0.38-0.62 ms) is of the size "
    "of the activations kvplan.perf.moe_kernel counts for all 131,072 pairs (the two "
    "GEMMs' outputs, the activation, moe_sum: about 2.3 GB, 0.78 ms at 0.9 of H100's "
    "3.35 TB/s). SGLang's Triton table falls less (bf16 0.34 -> 0.26), TensorRT-LLM's "
    "CUTLASS hardly (0.78 -> 0.72); their EP paths were not read here. A candidate rule "
    "read in code (kvplan.perf.moe_kernel's activations over all pairs under vLLM's "
    "TP-attention EP), not written: the vLLM rows of aiconfigurator's aggregated table that "
    "run EP under TP attention and replay hold block-FP8 or NVFP4 experts (37 and 34 "
    "rows), none bf16, so a rule for 16-bit experts would move no serving row, and one for "
    "FP8 / NVFP4 needs those backends' EP paths read first (vLLM picks them per card and "
    "release). The activations scale with the tokens: at 2,048 an eighth of the 16,384 "
    "tokens' figure, about 0.1 ms a layer for Qwen3-30B-A3B. {ep_rule}\n"
    "3. **TensorRT-LLM's MoE TP narrows the GEMMs.** Its bf16 ratio at 4k-16k tokens falls "
    "0.78 / 0.67 / 0.50 / 0.36 at MoE TP 1 / 2 / 4 / 8 (block FP8 0.36 -> 0.19): an "
    "expert's intermediate split 8 ways is 192 columns for Qwen3-235B-A22B, 96 for "
    "Qwen3-30B-A3B, and the measured op slows more than its FLOPs shrink (why was not "
    "read in the kernel's code); kvplan's roofline prices FLOPs at one fraction whatever "
    "the shape (the opt-in `gemm_shape` covers dense "
    "bf16 GEMMs, not the experts).\n"
    "4. **Decode-sized calls run a little over kvplan's price (bf16 medians 0.78-0.89 on "
    "H100 / H200)**, more on B200 (0.66-0.81), where kvplan's 4 us kernel floor and 0.90 "
    "of the HBM bandwidth are the H100's; kvplan counts the router's top-k, the "
    "activation, the permute and the unpermute at one floor each and each grouped GEMM at "
    "one (two with FP8's activation quantization), not the alignment sort "
    "(moe_align_block_size) of the Triton path. The balanced routing "
    "also touches min(1, T x top-k / experts) of the experts where kvplan's binomial expects "
    "1 - (1 - top-k / experts)^T, up to 37 % fewer at T = experts / top-k, and the ratios "
    "dip there: on one H100 (no TP, no EP; the five shapes whose experts / top-k is a "
    "token count of the table, every engine and dtype) a median 0.73 (0.63-0.89, 30 "
    "cases) at T = experts / top-k against 0.89 (0.70-1.15, 60 cases) at half and twice "
    "it. Real routing is neither exactly balanced nor independent (the tables' power-law "
    "rows, not read here, model its skew).\n\n"
    "Which serving rows share the publisher: every aiconfigurator row in "
    "examples/simulate-bench.md's aggregated section and examples/disagg-bench.md's "
    "aiconfigurator rows comes from the same publisher and commit as these tables "
    "(ai-dynamo/aiconfigurator at 095f58a5); none of this page's numbers fed a constant or "
    "a rule.\n")


IMPLIED_TEXT = (
    "The fraction of the peak (bf16 or FP8, as the experts' math runs) at which kvplan's "
    "price of each case would be its measured latency (`implied_fraction`), by the rows each "
    "expert receives (T x top-k / experts, balanced routing; the power of two at or below). "
    "Below about 256 rows an expert the op is bound by its weights' bytes and the figure is a "
    "lower bound only. It rises with the rows an expert computes: one fraction per format "
    "(0.33 / 0.20) is the fit cases' median, too low for few large experts (Mixtral-8x7B's 8 "
    "experts of 14,336 columns: 512-4,096 rows each at 2,048-16,384 tokens; vLLM's Triton "
    "fused_moe prices at a median 0.89 of its measured op with the dense 0.70 there and "
    "1.79 with the fitted 0.33, MoE TP 2-8, 12 cases) and too high for many small ones at the same "
    "tokens. The rule the tables point at is a fraction by the experts' GEMM shape (rows and "
    "width), as kvplan.perf.gemm_shape does for dense bf16 GEMMs; moeshape59 wrote it by rows "
    "(the paragraph at the top), whose table at each row count is the last column (here the "
    "rows are rounded down to a power of two, the fit's to the nearest one in log2).")


def main() -> None:
    rows = read_rows()
    pairs = ratios(rows)
    print("# kvplan's MoE op price against measured kernels (aiconfigurator's tables)\n")
    print(INTRO + "\n")
    print(FIT_TEXT + " " + refit_text(rows) + "\n")
    print(SHAPE_TEXT + " " + shape_refit_text(rows) + " " + SERVING_TEXT + "\n")
    cells = ("rows | median kvplan / measured, before | 10th - 90th, before "
             "| median, fitted fractions | 10th - 90th, fitted "
             "| median, by rows per expert | 10th - 90th, by rows |")
    print("## By engine, GPU, experts' dtype and tokens a rank\n")
    print("| engine | GPU | experts | tokens | fit | " + cells)
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for line in table(pairs, lambda r: (r.engine, r.gpu, r.quant, bucket_order(r.tokens)),
                      lambda r: (f"{r.engine} {r.version}", r.gpu, QUANT[r.quant],
                                 bucket(r.tokens), split(r))):
        print(line)
    print("\n## Prefill-sized calls (4,096-16,384 tokens) by expert layout\n")
    print("| engine | experts | MoE TP | MoE EP | " + cells)
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for line in table([(r, x) for r, x in pairs if r.tokens >= 4096],
                      lambda r: (r.engine, r.quant, r.moe_ep, r.moe_tp),
                      lambda r: (f"{r.engine} {r.version}", QUANT[r.quant], r.moe_tp,
                                 r.moe_ep)):
        print(line)
    print("\n## What the gap is worth over a prefill step (H100, block-FP8 experts)\n")
    print("Measured minus kvplan's price, times the checkpoint's MoE layers: the ms a whole "
          "step's routed experts ran beyond kvplan's price, at 2,048 and 8,192 tokens a "
          "rank, on the layouts of an 8-GPU row, before / with the fitted fractions / by rows per "
          "expert (a "
          "table's missing case: -; the 8,192-token cells are fit rows).\n")
    print("| checkpoint | MoE layers | engine | layout | ms at 2,048 tokens "
          "| ms at 8,192 tokens |")
    print("|---|---:|---|---|---:|---:|")
    for line in step_gap_lines(pairs):
        print(line)
    print("\n## What the fraction depends on: rows per expert (H100, 512-16,384 tokens)\n")
    print(IMPLIED_TEXT + "\n")
    print("| experts | rows per expert | cases | implied fraction, median | sglang 0.5.9 "
          "| trtllm 1.2.0rc5 | vllm 0.19.0 | kvplan by rows |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for line in implied_lines(rows):
        print(line)
    print("\n## By checkpoint and tokens (every engine and GPU)\n")
    print("| checkpoint | experts | tokens | " + cells)
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for line in table(pairs, lambda r: (r.model, r.quant, bucket_order(r.tokens)),
                      lambda r: (r.model, QUANT[r.quant], bucket(r.tokens))):
        print(line)
    print()
    print(moe_op_cutlass.section(rows))
    print(FINDINGS.replace("{ep_rule}", ep_rule_text(pairs)), end="")


def refit_text(rows: list[Row]) -> str:
    """The fit run again on kvplan's price today (the constants stay as fitted, 025ca10b)."""
    bf16, fp8 = fit_moe_gemm(rows, "bfloat16"), fit_moe_gemm(rows, "fp8_block")
    return ("Since vllmep59 priced vLLM's Triton walk over every pair under TP-attention EP "
            "for 16-bit experts and vllmmoe59 its block-FP8 activations and quantize kernels "
            "(finding 2), the same fit over the same cases gives "
            f"{bf16:.3f} for bf16 (block FP8 {fp8:.3f}); the constants are kept as fitted, "
            "opt-in.")


def shape_refit_text(rows: list[Row]) -> str:
    """The by-rows fit run again on kvplan's price today (the tables stay as fitted, e846422e)."""
    from tests.benches.moe_shape_fit import fit_table

    def points(quant: str) -> str:
        return " / ".join(f"{f:.2f}" for _, _, _, f in fit_table(rows, quant))
    return ("Fitted at e846422e, before vllmep59's EP walk and vllmmoe59's FP8 activations were "
            "priced; the same fit over the same "
            f"cases on today's price gives bf16 {points('bfloat16')} and block FP8 "
            f"{points('fp8_block')}; the tables are kept as fitted (the CUDA presets' default "
            "since moedefault63).")


def ep_rule_text(pairs: list[tuple[Row, tuple[float, float]]]) -> str:
    """Finding 2's rule (vllmep59), with vLLM's bf16 ratios by EP computed under it."""
    def median(ep: int) -> str:
        before = [x[0] for r, x in pairs if r.engine == "vllm" and r.quant == "bfloat16"
                  and r.moe_tp == 1 and r.moe_ep == ep and r.tokens >= 4096]
        return f"{statistics.median(before):.2f}"
    return ("Made a rule since (vllmep59: kvplan.engines.vllm.moe_ep, the walk read in vLLM "
            "0.12.0-0.20.0; the figures above are this page's first evaluation, before it, and "
            "these vLLM bf16 EP rows shaped it): kvplan.perf.moe_kernel prices the activations "
            "of every pair and the rank's own padded rows for 16-bit experts under "
            "TP-attention EP, and vLLM's bf16 ratio at 4k-16k tokens (before the fitted "
            f"fractions) is now {' / '.join(median(ep) for ep in (1, 2, 4, 8))} at EP 1 / 2 / "
            "4 / 8. " + fp8_rule_text(pairs))


def fp8_rule_text(pairs: list[tuple[Row, tuple[float, float]]]) -> str:
    """vllmmoe59's rule for block-FP8 experts on vLLM's Triton kernel, with vLLM's FP8 ratios by
    EP computed under it (before / with the fitted fractions)."""
    def medians(side: int) -> str:
        return " / ".join(
            f"{statistics.median(x[side] for r, x in pairs if r.engine == 'vllm' and r.quant == 'fp8_block' and r.moe_tp == 1 and r.moe_ep == ep and r.tokens >= 4096):.2f}"  # noqa: E501
            for ep in (1, 2, 4, 8))
    return ("Block-FP8 experts on vLLM's Triton kernel are priced since (vllmmoe59, read in "
            "0.11.0, 0.12.0, 0.17.0 and 0.19.0-0.20.0: kvplan.engines.vllm.moe_kernel): the "
            "layer's input and every pair's gated product are quantized to FP8 by a kernel of "
            "their own (per 128-element group, a float32 scale each), the GEMMs read the FP8 "
            "copies and write bf16, the activation and moe_sum as for bf16, every pair walked "
            "under EP, the rows padded by the block-FP8 default config. The rows that led to "
            "it are these tables' vLLM block-FP8 rows at MoE EP 1-8 (H100, H200, B200, every "
            "token count; kernel_source vllm_fused_moe): their 4k-16k median before it, at "
            "the dense fractions, was 0.35 / 0.30 / 0.23 / 0.16 at EP 1 / 2 / 4 / 8 (1.08 / "
            "0.86 / 0.67 / 0.45 with the fitted fractions; kvplan at fa10f602), now "
            f"{medians(0)} ({medians(1)}). The price follows the kernel the row ran: in "
            "serving, vLLM picks by release, GPU and layout (kvplan.engines.vllm.moe_ep."
            "vllm_moe_experts): Triton for block FP8 on Hopper without EP (0.11-0.12, 0.17+), "
            "FlashInfer's CUTLASS MoE under EP there (0.17+, the rank's own pairs) and its "
            "TRT-LLM-gen kernels on B200 (not priced); and from 0.20 FlashInfer for 16-bit "
            "experts, CUTLASS on Hopper and TRT-LLM-gen on Blackwell (not priced; Triton on "
            "Ampere / Ada). The CUTLASS MoE's activations are priced since flashmoe60 (the "
            "section above).")


if __name__ == "__main__":
    main()
