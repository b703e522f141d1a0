"""kvplan's price of one dense GEMM and of one TP all-reduce against aiconfigurator's measured
tables (issue 30 / 29): examples/dense-op-bench.md.

The measured rows (tests/data/dense_op/*.csv.gz, extracted by tests.benches.dense_op_extract;
their provenance and what was timed: tests/data/dense_op/SOURCES.md):

- GEMMs: one linear layer's forward (the engine's own Linear, its activation quantization
  included for FP8 / NVFP4) of M rows over an N x K weight, for vLLM 0.19.0, SGLang 0.5.9 and
  TensorRT-LLM 1.2.0rc5 on H100, H200 and B200, bf16, FP8 (per-tensor), block-FP8 (128 x 128)
  and NVFP4 (B200) weights;
- all-reduces: the engines' own TP all-reduce (vLLM's and SGLang's custom all-reduce in a CUDA
  graph and eagerly, TensorRT-LLM's AllReduce with strategy AUTO in a graph) and NCCL 2.29.2's
  ring / tree all-reduce (nccl-tests), bf16 / half, over 2, 4 and 8 GPUs of one node.

kvplan's price of a GEMM row is the roofline's weight-GEMM operation
(kvplan.perf.roofline._Step.op, as step_time charges a projection or an MLP: one kernel, M rows,
2 M N K FLOPs, the weight's bytes with its scales from kvplan's own format
(kvplan.model.quant_config: the checkpoint formats the collectors build), at the type the format
asks the card to run (GPU.runs), on the engine's efficiency as `simulate` builds it
(engine_efficiency over device_efficiency)): max(FLOPs / (peak x fraction), bytes / (HBM x hbm),
kernels x floor), a w8a8 / w4a4 GEMM two kernels (its activations' quantization).
An all-reduce row's price is what step_time charges each TP all-reduce
(kvplan.perf.roofline._Step.collective of Interconnect.all_reduce_s on the GPU preset's link,
kvplan.perf.layout.link): the custom one-shot / two-shot rule up to 8 MiB on NVLink, an NCCL
ring beyond, at least one kernel floor. kvplan has one all-reduce rule for every engine and
none for NCCL at sizes the custom kernel takes: the NCCL rows are priced by the same function,
which says where kvplan's switch point stands against NCCL's own curve.
"""

from __future__ import annotations

import csv
import gzip
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from kvplan._util.dtypes import GemmMath
from kvplan.hardware.gpus import GPU, get_gpu
from kvplan.model.quant_config import parse_quantization_config
from kvplan.perf.efficiency import Efficiency, device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout, link
from kvplan.perf.roofline import _Step
from tests.benches.allreduce_fit import (
    FIT_GPU,
    FIT_MAX_BYTES,
    FIT_SOURCES,
    FIT_T1_S,
    FIT_T2_S,
    fitted_custom_ar,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "dense_op"
GEMM_ROWS = DATA / "gemm_perf_rows.csv.gz"
AR_ROWS = DATA / "allreduce_perf_rows.csv.gz"
GPUS = {"NVIDIA H100 80GB HBM3": "H100-80GB", "NVIDIA H200": "H200", "NVIDIA B200": "B200"}
SHORT = {"H100-80GB": "H100", "H200": "H200", "B200": "B200"}
ENGINES = {"VLLM": "vllm", "vLLM": "vllm", "SGLang": "sglang", "TRTLLM": "trtllm"}
DTYPES = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8 block", "nvfp4": "nvfp4"}
# The checkpoint format each table's dtype is (the collectors' quant configs:
# tests/data/dense_op/SOURCES.md), as kvplan reads it; bfloat16: no format, 2 bytes a weight.
FORMATS = {
    "fp8": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic"},
    "fp8_block": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                  "weight_block_size": [128, 128]},
    "nvfp4": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16},
}
M_BUCKETS = (("1-16", 1, 16), ("32-256", 32, 256), ("512-2k", 512, 2048),
             ("4k-16k", 4096, 16384))
KIB, MIB = 1024, 1024 * 1024
SIZE_BUCKETS = (("<= 64 KiB", 0, 64 * KIB), ("128 KiB-1 MiB", 64 * KIB + 1, MIB),
                ("2-8 MiB", MIB + 1, 8 * MIB), ("16-64 MiB", 8 * MIB + 1, 64 * MIB),
                ("128 MiB-1 GiB", 64 * MIB + 1, 1024 * MIB))


@dataclass(frozen=True, kw_only=True)
class GemmRow:
    engine: str  # --engine name
    version: str
    gpu: str  # kvplan preset
    kernel_source: str
    dtype: str  # bfloat16 | fp8 | fp8_block | nvfp4
    m: int
    n: int
    k: int
    measured_ms: float


@dataclass(frozen=True, kw_only=True)
class ArRow:
    source: str  # vllm graph | vllm eager | sglang graph | sglang eager | trtllm graph | nccl
    version: str
    gpu: str
    ranks: int
    nbytes: int  # the buffer (message_size elements x 2 bytes)
    measured_ms: float


def _read(path: Path) -> list[dict[str, str]]:
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def read_gemm_rows(path: Path = GEMM_ROWS) -> list[GemmRow]:
    return [GemmRow(engine=ENGINES[r["framework"]], version=r["version"], gpu=GPUS[r["device"]],
                    kernel_source=r["kernel_source"], dtype=r["gemm_dtype"], m=int(r["m"]),
                    n=int(r["n"]), k=int(r["k"]), measured_ms=float(r["latency"]))
            for r in _read(path)]


def ar_source(framework: str, kernel_source: str) -> str:
    """The row's implementation: the engine and whether it ran in a CUDA graph, or NCCL."""
    if kernel_source == "NCCL":
        return "nccl"
    engine = ENGINES[framework]
    if engine == "trtllm":
        return "trtllm graph"  # collector/network/collect_all_reduce.py: captured in a graph
    return f"{engine} {'graph' if kernel_source.endswith('graph') else 'eager'}"


def read_ar_rows(path: Path = AR_ROWS) -> list[ArRow]:
    # message_size is elements of the dtype (bf16 / half: 2 bytes); SOURCES.md.
    return [ArRow(source=ar_source(r["framework"], r["kernel_source"]), version=r["version"],
                  gpu=GPUS[r["device"]], ranks=int(r["num_gpus"]),
                  nbytes=2 * int(r["message_size"]), measured_ms=float(r["latency"]))
            for r in _read(path)]


@cache
def _gpu(name: str) -> GPU:
    return get_gpu(name)


@cache
def efficiency(engine: str, version: str, gpu: str) -> Efficiency:
    return engine_efficiency(engine, device_efficiency(_gpu(gpu)), version=version)


@cache
def weight_format(dtype: str, n: int, k: int) -> tuple[float, GemmMath]:
    """Bytes of one n x k weight with its scales, and the type its GEMM asks for."""
    if dtype == "bfloat16":
        return 2.0 * n * k, GemmMath.bf16
    quant = parse_quantization_config(FORMATS[dtype], "dense_op_bench")
    scheme = quant.scheme_for("model.layers.0.mlp.down_proj")
    assert scheme is not None
    return float(scheme.matrix_bytes(n, k).total), scheme.math


def gemm_price_s(row: GemmRow, eff: Efficiency | None = None) -> float:
    """kvplan's price of the row's GEMM (module docstring)."""
    gpu = _gpu(row.gpu)
    eff = eff or efficiency(row.engine, row.version, row.gpu)
    nbytes, math = weight_format(row.dtype, row.n, row.k)
    step = _Step(gpu, eff, eff.kernel_floor_s)
    step.op("gemm", flops=2.0 * row.m * row.n * row.k, nbytes=nbytes, math=math, rows=row.m)
    return step.by_op["gemm"]


def ar_price_s(row: ArRow) -> float:
    """kvplan's price of the row's all-reduce, as step_time charges a TP all-reduce."""
    gpu = _gpu(row.gpu)
    eff = device_efficiency(gpu)
    step = _Step(gpu, eff, eff.kernel_floor_s)
    ring = link(Layout(tp=row.ranks), gpu, row.ranks)
    step.collective("tp_all_reduce", ring.all_reduce_s(row.ranks, row.nbytes))
    return step.by_op["tp_all_reduce"]


def achieved_fraction(row: GemmRow) -> float:
    """The measured GEMM's FLOPs rate over the peak of the type kvplan runs it at."""
    gpu = _gpu(row.gpu)
    math = gpu.runs(weight_format(row.dtype, row.n, row.k)[1])
    return 2.0 * row.m * row.n * row.k / (row.measured_ms / 1e3) / gpu.peak_flops(math)


def m_bucket(m: int) -> int:
    return next(i for i, (_, lo, hi) in enumerate(M_BUCKETS) if lo <= m <= hi)


def size_bucket(nbytes: int) -> int:
    return next(i for i, (_, lo, hi) in enumerate(SIZE_BUCKETS) if lo <= nbytes <= hi)


def _cell(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) < 2:
        return f"{values[0]:.2f}"
    q = statistics.quantiles(sorted(values), n=10, method="inclusive")
    return f"{statistics.median(values):.2f} ({q[0]:.2f}-{q[-1]:.2f})"


def gemm_ratio(row: GemmRow) -> float:
    return gemm_price_s(row) * 1e3 / row.measured_ms


def ar_ratio(row: ArRow) -> float:
    return ar_price_s(row) * 1e3 / row.measured_ms


GPU_ORDER = {"H100-80GB": 0, "H200": 1, "B200": 2}
DTYPE_ORDER = {d: i for i, d in enumerate(DTYPES)}
SOURCE_ORDER = {s: i for i, s in enumerate(("vllm graph", "sglang graph", "trtllm graph",
                                            "vllm eager", "sglang eager", "nccl"))}


def gemm_lines(rows: list[GemmRow]) -> list[str]:
    """By GPU, dtype and engine: the median (10th-90th) ratio in each M bucket."""
    groups: dict[tuple, list[list[float]]] = defaultdict(lambda: [[] for _ in M_BUCKETS])
    for r in rows:
        groups[(GPU_ORDER[r.gpu], DTYPE_ORDER[r.dtype], r.engine, r.version,
                r.kernel_source)][m_bucket(r.m)].append(gemm_ratio(r))
    out = []
    for (g, d, e, v, ks), cells in sorted(groups.items()):
        gpu = next(k for k, i in GPU_ORDER.items() if i == g)
        out.append(f"| {SHORT[gpu]} | {list(DTYPES.values())[d]} | {e} {v} | {ks} | "
                   f"{sum(map(len, cells))} | " + " | ".join(map(_cell, cells)) + " |")
    return out


def fraction_lines(rows: list[GemmRow], least_m: int = 4096,
                   least_weights: int = 8192 * 8192) -> list[str]:
    """The measured fraction of the peak at prefill sizes (M >= least_m, N x K >= 64 Mi
    elements), by GPU and dtype, each engine, beside the fraction kvplan charges."""
    groups: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.m >= least_m and r.n * r.k >= least_weights:
            groups[(GPU_ORDER[r.gpu], DTYPE_ORDER[r.dtype])][r.engine].append(
                achieved_fraction(r))
    out = []
    for (g, d), by in sorted(groups.items()):
        gpu = next(k for k, i in GPU_ORDER.items() if i == g)
        dtype = list(DTYPES)[d]
        eff = device_efficiency(_gpu(gpu))
        math = _gpu(gpu).runs(weight_format(dtype, 1, 1)[1])
        charged = eff.fp8_gemm if math is GemmMath.fp8 and eff.fp8_gemm is not None else eff.gemm
        every = [f for fs in by.values() for f in fs]
        out.append(f"| {SHORT[gpu]} | {DTYPES[dtype]} | {math.value} | {charged:.2f} | "
                   f"{len(every)} | {statistics.median(every):.2f} | "
                   + " | ".join(f"{statistics.median(by[e]):.2f}" if by.get(e) else "-"
                                for e in ("vllm", "sglang", "trtllm")) + " |")
    return out


def ar_lines(rows: list[ArRow]) -> list[str]:
    """By GPU, implementation and ranks: the median ratio in each message-size bucket."""
    groups: dict[tuple, list[list[float]]] = defaultdict(lambda: [[] for _ in SIZE_BUCKETS])
    for r in rows:
        groups[(GPU_ORDER[r.gpu], SOURCE_ORDER[r.source], r.version, r.ranks)][
            size_bucket(r.nbytes)].append(ar_ratio(r))
    out = []
    for (g, s, v, n), cells in sorted(groups.items()):
        gpu = next(k for k, i in GPU_ORDER.items() if i == g)
        source = next(k for k, i in SOURCE_ORDER.items() if i == s)
        out.append(f"| {SHORT[gpu]} | {source} {v} | {n} | "
                   + " | ".join(map(_cell, cells)) + " |")
    return out


def ar_us_lines(rows: list[ArRow], gpu: str = "H100-80GB",
                sizes: tuple[int, ...] = (16 * KIB, 256 * KIB, 1 * MIB, 4 * MIB, 16 * MIB,
                                          128 * MIB)) -> list[str]:
    """Measured and kvplan microseconds at a few buffer sizes on `gpu`, graph rows and NCCL."""
    by = {(r.source, r.ranks, r.nbytes): r for r in rows if r.gpu == gpu}
    out = []
    for ranks in (2, 4, 8):
        for source in ("vllm graph", "sglang graph", "trtllm graph", "nccl"):
            cells = []
            for size in sizes:
                r = by.get((source, ranks, size))
                cells.append("-" if r is None else
                             f"{r.measured_ms * 1e3:.1f} / {ar_price_s(r) * 1e6:.1f}")
            out.append(f"| {ranks} | {source} | " + " | ".join(cells) + " |")
    return out


# What the gaps are worth in a served dense model: Llama-3.1-70B (hidden 8,192, intermediate
# 28,672, 64 query / 8 KV heads of 128, 80 layers) on H100 under vLLM 0.19.0, bf16.
WORTH_MODEL = "llama-3.1-70b"
WORTH_STEPS = (("decode, 64 requests x 2,048 context", "decode", 64, 2048, 64),
               ("prefill, 8,192 tokens", "prefill", 8192, 8192, 1))


def llama_gemms(tp: int) -> tuple[tuple[str, int, int], ...]:
    """One layer's four GEMMs on a rank at TP `tp`: (name, n, k)."""
    q, kv, d, h, inter = 64, 8, 128, 8192, 28672
    return (("qkv", (q + 2 * kv) * d // tp, h), ("o_proj", h, q * d // tp),
            ("gate_up", 2 * inter // tp, h), ("down", h, inter // tp))


def table_gemm_ms(rows: list[GemmRow], *, gpu: str, engine: str, dtype: str, m: int, n: int,
                  k: int) -> float:
    """The measured latency at (m, n, k); an N the tables' grid lacks (TP 4's gate_up, 14,336;
    TP 8's qkv, 1,280) linearly between the extracted N on either side at the same M and K."""
    at = {r.n: r.measured_ms for r in rows if r.gpu == gpu and r.engine == engine
          and r.dtype == dtype and r.m == m and r.k == k}
    if n in at:
        return at[n]
    lo, hi = max(x for x in at if x < n), min(x for x in at if x > n)
    return at[lo] + (at[hi] - at[lo]) * (n - lo) / (hi - lo)


def worth_lines(gemm_rows: list[GemmRow], ar_rows: list[ArRow], gpu: str = "H100-80GB",
                engine: str = "vllm", version: str = "0.19.0") -> list[str]:
    """Per layer and over the 80 layers: kvplan's GEMM and TP all-reduce time (step_time of one
    layer: attention_proj + mlp, tp_all_reduce) against the tables' (the four GEMMs at the
    step's M; two all-reduces of M x 8,192 bf16 in the engine's CUDA-graph rows), and
    kvplan's whole step."""
    from kvplan.perf.roofline import step_time
    from kvplan.sources.resolve import load_spec

    spec = load_spec(WORTH_MODEL)
    g = _gpu(gpu)
    eff = efficiency(engine, version, gpu)
    layers = spec.num_hidden_layers
    ar = {(r.ranks, r.nbytes): r.measured_ms for r in ar_rows
          if r.gpu == gpu and r.source == f"{engine} graph"}
    out = []
    for tp in (4, 8):
        for label, phase, tokens, context, requests in WORTH_STEPS:
            layout = Layout(tp=tp)
            one = step_time(spec, g, tokens=tokens, context=context, requests=requests,
                            phase=phase, layout=layout, eff=eff, layers=range(0, 1))
            whole = step_time(spec, g, tokens=tokens, context=context, requests=requests,
                              phase=phase, layout=layout, eff=eff).seconds
            k_gemm = (one.by_op["attention_proj"] + one.by_op["mlp"]) * 1e6
            k_ar = one.by_op["tp_all_reduce"] * 1e6
            m_gemm = 1e3 * sum(table_gemm_ms(gemm_rows, gpu=gpu, engine=engine,
                                             dtype="bfloat16", m=tokens, n=n, k=k)
                               for _, n, k in llama_gemms(tp))
            m_ar = 2e3 * ar[(tp, tokens * spec.hidden_size * 2)]
            gap_ms = ((k_gemm - m_gemm) + (k_ar - m_ar)) * layers / 1e3
            out.append(f"| TP {tp} | {label} | {k_gemm:.1f} / {m_gemm:.1f} | "
                       f"{k_ar:.1f} / {m_ar:.1f} | {gap_ms:+.2f} | {whole * 1e3:.1f} | "
                       f"{100 * gap_ms / (whole * 1e3):+.1f} % |")
    return out


WEIGHT_BUCKETS = (("1-4 Mi", 1 << 20, 1 << 22), ("8-16 Mi", (1 << 22) + 1, 1 << 24),
                  ("32-64 Mi", (1 << 24) + 1, 1 << 26), ("128-256 Mi", (1 << 26) + 1, 1 << 28))
SHAPE_M = (256, 512, 1024, 2048, 4096, 8192, 16384)


def shape_lines(rows: list[GemmRow], gpu: str, dtype: str = "bfloat16") -> list[str]:
    """The measured fraction of the peak (`achieved_fraction`, every engine's rows together)
    by M and by the weight's elements (N x K), on `gpu`."""
    groups: dict[tuple[int, int], list[float]] = defaultdict(list)
    for r in rows:
        if r.gpu == gpu and r.dtype == dtype and r.m in SHAPE_M:
            w = next(i for i, (_, lo, hi) in enumerate(WEIGHT_BUCKETS) if lo <= r.n * r.k <= hi)
            groups[(r.m, w)].append(achieved_fraction(r))
    return [f"| {SHORT[gpu]} | {m:,} | " + " | ".join(
        f"{statistics.median(groups[(m, w)]):.2f}" if groups.get((m, w)) else "-"
        for w in range(len(WEIGHT_BUCKETS))) + " |" for m in SHAPE_M]


def gemm_shape_lines(rows: list[GemmRow]) -> list[str]:
    """bf16 rows on the Hopper cards: median ratio and median |ratio - 1| by M bucket with
    `Efficiency.gemm` (0.70) and with the opt-in shape table (kvplan.perf.gemm_shape, OpenXLA's
    sm_90 table; DEVICE_GEMM_SHAPE gives it to the H100 preset only, set here on H200 too)."""
    from kvplan.perf.gemm_shape import h100_bf16_gemm_shape

    shape = h100_bf16_gemm_shape()
    out = []
    for gpu in ("H100-80GB", "H200"):
        for name, lo, hi in M_BUCKETS:
            part = [r for r in rows if r.gpu == gpu and r.dtype == "bfloat16" and lo <= r.m <= hi]
            flat = [gemm_ratio(r) for r in part]
            shaped = [gemm_price_s(r, replace(efficiency(r.engine, r.version, r.gpu),
                                              gemm_shape=shape)) * 1e3 / r.measured_ms
                      for r in part]
            cells = [f"{statistics.median(x):.2f} / {statistics.median(abs(v - 1) for v in x):.1%}"
                     for x in (flat, shaped)]
            out.append(f"| {SHORT[gpu]} | {name} | {len(part)} | " + " | ".join(cells) + " |")
    return out


def fit_lines(rows: list[ArRow]) -> list[str]:
    """The graph rows up to FIT_MAX_BYTES on the NVLink 4 cards: median ratio with nvlink4's
    values, then with the fitted t1 / t2 (tests/benches/allreduce_fit.py), by GPU, engine and
    ranks; which rows the fit used."""
    part = [r for r in rows if r.gpu in ("H100-80GB", "H200") and r.nbytes <= FIT_MAX_BYTES
            and r.source.endswith("graph")]
    before = [ar_ratio(r) for r in part]
    with fitted_custom_ar():
        after = [ar_ratio(r) for r in part]
    groups: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for r, x, y in zip(part, before, after, strict=True):
        groups[(GPU_ORDER[r.gpu], SOURCE_ORDER[r.source], r.version, r.ranks)].append((x, y))
    out = []
    for (g, src, v, n), pairs in sorted(groups.items()):
        gpu = next(k for k, i in GPU_ORDER.items() if i == g)
        source = next(k for k, i in SOURCE_ORDER.items() if i == src)
        fit = "fitted" if gpu == FIT_GPU and source in FIT_SOURCES else "held out"
        out.append(f"| {SHORT[gpu]} | {source} {v} | {n} | {fit} | {len(pairs)} | "
                   f"{_cell([x for x, _ in pairs])} | {_cell([y for _, y in pairs])} |")
    return out


INTRO = (
    "kvplan's price of one dense GEMM and of one TP all-reduce against the ops aiconfigurator "
    "measured (github.com/ai-dynamo/aiconfigurator at 095f58a51, aic-core/src/"
    "aiconfigurator_core/systems/data/<gpu>/gemm/<backend>/<version>/gemm_perf.parquet, "
    ".../comm/<backend>/<version>/custom_allreduce_perf.parquet and .../comm/nccl/2.29.2/"
    "nccl_perf.parquet) on H100, H200 and B200: the engines' own linear layer (vLLM 0.19.0, "
    "SGLang 0.5.9, TensorRT-LLM 1.2.0rc5; bf16, per-tensor FP8, block-FP8, NVFP4 on B200) "
    "at M = 1 to 16,384 rows over 29 weight shapes (the 5 x 5 powers of two 1,024-16,384 and "
    "Llama-3.1-70B's TP 4 / TP 8 shapes the grid holds): 12,905 rows; the engines' TP "
    "all-reduce (vLLM's and SGLang's custom all-reduce in a CUDA graph and eagerly, "
    "TensorRT-LLM's AllReduce with strategy AUTO in a graph) and NCCL's (nccl-tests), bf16, "
    "2 / 4 / 8 GPUs, 256 B to 1 GiB: 1,224 rows (tests/data/dense_op/SOURCES.md says what "
    "was timed; tests/benches/dense_op_bench.py what kvplan's price holds: the roofline's "
    "weight-GEMM op and the all-reduce step_time charges, on the engine's efficiency as "
    "`simulate` builds it). Kernel tables, not serving rows. First evaluation (the findings "
    "below): no rule shaped, no default changed; one counterfactual fitted after it on the "
    "H100 all-reduce rows (its section, H200 held out), not kvplan's default. A ratio "
    "below 1 is kvplan pricing the op cheaper than it ran. Cells: median (10th-90th "
    "percentile).")

GEMM_TEXT = (
    "By GPU, weight dtype and engine, in four M buckets: decode-sized (1-16, 32-256 rows) "
    "and prefill-sized (512-2,048, 4,096-16,384 rows); every one of the 29 weight shapes "
    "in each (fewer where a table lacks a case: TensorRT-LLM's H200 table, vLLM's B200 "
    "block-FP8).")

FRACTION_TEXT = (
    "The fraction of the peak the measured GEMMs reach at prefill sizes (M 4,096-16,384, "
    "N x K >= 64 Mi elements: 18 cases a table), of the peak of the type kvplan runs the "
    "format at (gpus.json), beside the fraction kvplan charges (`Efficiency.gemm`, "
    "`fp8_gemm` where the preset sets one).")

SHAPE_TEXT = (
    "The measured fraction of the bf16 peak by M and the weight's elements (N x K), every "
    "engine's rows together (medians). kvplan charges one 0.70 from 1 row to 16,384 (a "
    "decode GEMM is priced by its bytes, so only M >= ~256 matters): the measured fraction "
    "rises with the GEMM and passes 0.70 from about 512 rows on weights of 32 Mi elements "
    "and more (hidden 8,192 models' per-rank GEMMs at TP <= 4) on H100 and H200, never on "
    "B200.")

GEMM_SHAPE_TEXT = (
    "kvplan's opt-in bf16 fraction by GEMM shape (`Efficiency.gemm_shape`, "
    "kvplan.perf.gemm_shape: OpenXLA's sm_90 table of XLA-compiled dots) against these "
    "tables, which are another publisher's measurements of the engines' own linear layers: "
    "it brings the 512-2,048-row GEMMs closer and the 4k-16k ones a little further, and "
    "cannot help decode sizes (bytes-bound).")

AR_TEXT = (
    "By GPU, implementation and ranks, in five buffer-size buckets. Decode steps' buffers are "
    "tokens x hidden x 2 B: 64 requests x 8,192 = 1 MiB; a prefill step's of 8,192 tokens "
    "128 MiB. kvplan charges every engine the same rule (custom one-shot / two-shot up to "
    "8 MiB, NCCL ring beyond: kvplan.hardware.interconnect), so the eager rows (SGLang's "
    "prefill outside piecewise graphs) and the NCCL rows show what that rule leaves out.")

AR_US_TEXT = (
    "H100, microseconds measured / kvplan at six buffer sizes (CUDA-graph rows and NCCL).")

FIT_TEXT = (
    "The one-shot and two-shot fixed parts (t1, t2 of kvplan.hardware.interconnect) FITTED "
    f"on the H100 tables (tests/benches/allreduce_fit.py, committed at 22073c05 before any "
    f"serving row was run with them): the median, over vLLM's and SGLang's graph rows up to "
    f"1 MiB, of the time less the bytes term at 360 GB/s, split by the engines' dispatch "
    f"(68 one-shot, 10 two-shot rows): t1 {FIT_T1_S * 1e6:.2f} us, t2 {FIT_T2_S * 1e6:.2f} us, "
    "in place of nvlink4's 5.72 / 13.10 (vLLM PR 24111's benchmark). H200 (the same NVLink 4 "
    "preset) and TensorRT-LLM's rows are held out (H200's rows alone would give 4.57 / 8.55 "
    "us); B200's nvlink5 is not touched (its rows give t1 7.4 us beside nvlink5's 7.0). "
    "Buffers up to 1 MiB in a CUDA graph. Judged on serving rows after "
    "(tests/benches/allreduce_fit_bench.py; the findings): not kvplan's default.")

WORTH_TEXT = (
    "Per layer, kvplan's time (step_time of one layer: attention_proj + mlp; tp_all_reduce) "
    "against the tables' (the four GEMMs at the step's M from vLLM 0.19.0's bf16 H100 "
    "table, an N the grid lacks linearly between its neighbours; two all-reduces of "
    "M x 8,192 x 2 B from vLLM's CUDA-graph rows), in microseconds; the gap over 80 layers "
    "(kvplan - measured, ms) beside kvplan's whole step. Llama-3.1-70B bf16 on H100, vLLM "
    "0.19.0.")

FINDINGS = (
    "## Findings (first evaluation, kvplan at 113e3005; no rule or default changed)\n\n"
    "1. **bf16 GEMMs at prefill sizes run a little faster than kvplan's 0.70 on Hopper, "
    "slower on B200.** H100 / H200 512-16,384 rows: medians 0.96-1.08 (measured 0.66-0.76 "
    "of the bf16 peak on the large shapes), the fraction rising to 0.73-0.80 at 512-2,048 "
    "rows on weights of 32-256 Mi elements. The sim-to-real study's dense TP runs "
    "(examples/simulate-bench.md: CodeLlama-34B TP 2 and Llama-2-70B TP 4 on H100, TTFT "
    "+22 / +27 % high) are these shapes: at 0.77-0.79 of the peak their GEMMs take about "
    "10 % less than kvplan's, a part of the gap, not all of it (that page says 23.6 of the "
    "29.4 ms of run 2's prefill step are GEMMs at 0.70: 0.78 would take about 2.4 ms off). "
    "kvplan's opt-in shape table (OpenXLA's, the table above) agrees with these measurements "
    "at 512-2,048 rows (median |error| 10.6 -> 7.4 % on H100) and is a little low at "
    "4k-16k. B200 bf16 prefill: 0.82-0.96, the measured fraction 0.63-0.68.\n"
    "2. **FP8 GEMMs are priced too cheap at prefill sizes, by engine.** kvplan runs them at "
    "0.70 of the FP8 peak on Hopper (0.55 on B200); the tables reach 0.54-0.62 on H100 / H200 "
    "(per-tensor FP8 and block FP8 alike, each engine's medians 0.48-0.72) and 0.40-0.45 on "
    "B200, NVFP4 0.46 of the FP4 peak. The ratios at 4k-16k rows: H100 per-tensor FP8 "
    "0.56 (TensorRT-LLM) to 0.84 (vLLM), block FP8 0.62-0.81; B200 block FP8 0.29-0.74, "
    "NVFP4 0.46-0.58. FP8's gain over bf16 at prefill is about 1.5x, not the 2x the FP8 "
    "peak at one fraction implies. Decode-sized FP8 rows spread widely (medians 0.30-1.00) "
    "where the two kernels' floors (kvplan counts the activation quantization as a kernel) "
    "meet eager timing (vLLM's block-FP8 rows are timed without a CUDA graph: SOURCES.md).\n"
    "3. **Decode-sized GEMMs run 20-35 % over kvplan's price** (bf16 medians 0.64-0.80 at "
    "1-256 rows): the weights stream at less than 0.90 of the HBM bandwidth in one GEMM "
    "kernel, most on the smallest weights. kvplan's fitted per-layer overhead (35 us, "
    "fitted on 1-GPU decode TPOTs) already stands for each GEMM's ramp-up and tail, so "
    "this is not a second cost to add.\n"
    "4. **Small all-reduces in a CUDA graph are priced 18-34 % high (H100 / H200), large "
    "ones at 8 ranks 22-27 % high, at 2 ranks 13-31 % low.** Up to 64 KiB the engines' "
    "custom kernels take 4.4-5.4 us in a graph where kvplan charges the 5.7 us one-shot "
    "fixed part (vLLM PR 24111's timings), and the two-shot rows' fixed part is 8.3-13.7 "
    "us (median 9.4) where kvplan takes 13.1 (TensorRT-LLM's AUTO strategy, 1.5-1.7 at "
    "small sizes, has a larger spread). 16-64 MiB at 2 ranks is 0.69-0.76: the measured 2-rank "
    "all-reduce moves about 200-290 GB/s, where kvplan's one NVLink figure is 360. "
    "From 128 MiB at 8 ranks every implementation (the engines hand such buffers to NCCL) "
    "reaches 410-470 GB/s of bus bandwidth on H100 / H200, above the 360 GB/s of the "
    "ring kvplan charges: NCCL's NVLink SHARP (NVLS) all-reduce on the NVSwitch, which "
    "reduces in the switch; kvplan has no such rule. On B200 (nvlink5, 720 GB/s charged) "
    "the large buffers ran 0.73-0.95: kvplan was the faster there (b200vllm63 set nvlink5 "
    "to 588 GB/s, the median bus bandwidth of these tables' 8-rank B200 rows of 16 MiB-1 GiB; "
    "the tables above are after it). The switch point: the "
    "custom kernels beat NCCL up to 8 MiB at 8 ranks on H100 (4 MiB: 30.6-34.3 us "
    "against NCCL's 50.5), and from 16 MiB the engines' rows are NCCL's or vLLM's "
    "symmetric-memory path (8 ranks, 16 MiB: SGLang 122.5 us = NCCL's 121.9, vLLM 92.4); "
    "kvplan's switch to the ring above 8 MiB stands. Eager rows run 3-5x a graph's at "
    "small sizes (launch time), which kvplan does not charge a collective apart from the "
    "eager prefill's per-op launch time (SGLang, TensorRT-LLM).\n"
    "5. **What it is worth in a served dense model** (the table above, Llama-3.1-70B on "
    "H100, vLLM): a decode step of 64 requests is under-priced by 0.9-1.4 ms (6 % of "
    "kvplan's step: the GEMMs' streaming, partly offset by the all-reduces priced high); "
    "an 8,192-token prefill step is over-priced by 23 ms at TP 4 (4 %) and 38 ms at TP 8 "
    "(12 %: 14 ms of it the 160 all-reduces of 128 MiB at 360 GB/s against NVLS's rate, "
    "24 ms the GEMMs at 0.70 against 0.74-0.79). Both point the way the dense TP runs' "
    "TTFT errs (high).\n\n"
    "**The custom all-reduce fit, judged on serving rows (NOT the default).** With nvlink4's "
    "t1 / t2 at the fitted 4.62 / 9.37 us (tests/benches/allreduce_fit_bench.py, run after "
    "the constants were committed), the sim-to-real study's TP stages on H100 (28 stages "
    "of 17 runs: its main, prospective, blind and offload sets) go TTFT median |error| "
    "20.2 -> 20.5 % (ratio 0.861 -> 0.853) and ITL 2.0 -> 2.2 % (1.012 -> 1.000): the dense "
    "runs come closer (Llama-2-70B TP 4, run 6: TTFT 27.2 -> 24.1 %, ITL 24.5 -> 20.6 %; "
    "CodeLlama-34B TP 2, run 2: ITL 18.4 -> 17.4 %), the Mixtral stages, already low on "
    "TTFT, move lower (Mixtral-8x22B TP 8: 17.6 -> 19.4 %); the prospective sets' TP runs "
    "on NVLink 4 (prospective31, 53b, 54, 57: 21 runs) keep TTFT (78.7 %) and go TPOT "
    "30.1 -> 31.4 % (MoE checkpoints whose decode kvplan already prices low). Other "
    "publishers' rows get worse on the median, so it stays a counterfactual "
    "(allreduce_fit.fitted_custom_ar), with the kernel tables' figures on this page.\n\n"
    "Not changed, and why. A bf16 fraction by GEMM shape (kvplan.perf.gemm_shape, opt-in) "
    "is what finding 1 asks for; these tables are a second source that agrees with it at "
    "512-2,048 rows. An FP8 fraction of ~0.57 fitted on the H100 tables (finding 2) holds "
    "out on H200 (0.54-0.62) but would be judged on FP8 serving rows from the same "
    "publisher (aiconfigurator's aggregated rows), and moves in the direction that makes "
    "the dense TP runs' TTFT no better. The all-reduce's NVLS bandwidth at 8 ranks and the "
    "lower 2-rank rate are structural (NCCL picks NVLS on NVSwitch systems) but read here "
    "only from the measurements, not in NCCL's code.\n")


def main() -> None:
    gemm, ar = read_gemm_rows(), read_ar_rows()
    print("# kvplan's dense GEMM and all-reduce prices against measured tables "
          "(aiconfigurator)\n")
    print(INTRO + "\n")
    print("## Part 1: GEMMs\n")
    print("### kvplan / measured by GPU, dtype, engine and M\n")
    print(GEMM_TEXT + "\n")
    print("| GPU | weights | engine | kernel_source | rows | "
          + " | ".join(f"M {name}" for name, _, _ in M_BUCKETS) + " |")
    print("|---|---|---|---|---:|" + "---:|" * len(M_BUCKETS))
    for line in gemm_lines(gemm):
        print(line)
    print("\n### The fraction of the peak at prefill sizes\n")
    print(FRACTION_TEXT + "\n")
    print("| GPU | weights | math | kvplan's fraction | cases | measured, median | vllm 0.19.0 "
          "| sglang 0.5.9 | trtllm 1.2.0rc5 |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for line in fraction_lines(gemm):
        print(line)
    print("\n### The bf16 fraction by GEMM size\n")
    print(SHAPE_TEXT + "\n")
    print("| GPU | M | " + " | ".join(f"N x K {name}" for name, _, _ in WEIGHT_BUCKETS)
          + " |")
    print("|---|---:|" + "---:|" * len(WEIGHT_BUCKETS))
    for gpu in GPU_ORDER:
        for line in shape_lines(gemm, gpu):
            print(line)
    print("\n### bf16 with the opt-in shape table\n")
    print(GEMM_SHAPE_TEXT + "\n")
    print("| GPU | M | rows | gemm 0.70: median ratio / median abs error "
          "| gemm_shape: median ratio / median abs error |")
    print("|---|---|---:|---:|---:|")
    for line in gemm_shape_lines(gemm):
        print(line)
    print("\n## Part 2: all-reduce\n")
    print("### kvplan / measured by GPU, implementation, ranks and buffer size\n")
    print(AR_TEXT + "\n")
    print("| GPU | implementation | ranks | "
          + " | ".join(name for name, _, _ in SIZE_BUCKETS) + " |")
    print("|---|---|---:|" + "---:|" * len(SIZE_BUCKETS))
    for line in ar_lines(ar):
        print(line)
    print("\n### H100 in microseconds\n")
    print(AR_US_TEXT + "\n")
    print("| ranks | implementation | 16 KiB | 256 KiB | 1 MiB | 4 MiB | 16 MiB | 128 MiB |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for line in ar_us_lines(ar):
        print(line)
    print("\n### The custom all-reduce's fixed parts fitted on the H100 tables\n")
    print(FIT_TEXT + "\n")
    print("| GPU | implementation | ranks | fit | rows | kvplan / measured, nvlink4 "
          "| with the fitted t1 / t2 |")
    print("|---|---|---:|---|---:|---:|---:|")
    for line in fit_lines(ar):
        print(line)
    print("\n## What it is worth: Llama-3.1-70B on H100 (vLLM 0.19.0)\n")
    print(WORTH_TEXT + "\n")
    print("| TP | step | GEMMs, us a layer: kvplan / measured | all-reduces, us a layer: "
          "kvplan / measured | gap over 80 layers, ms | kvplan's step, ms | gap / step |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for line in worth_lines(gemm, ar):
        print(line)
    print()
    print(FINDINGS, end="")


if __name__ == "__main__":
    main()
