"""kvplan's price of one attention layer's kernel against aiconfigurator's measured attention op
(issue 30): examples/attention-op-bench.md.

The measured rows (tests/data/attention_op/attention_perf_rows.csv.gz and mla_perf_rows.csv.gz,
extracted by tests.benches.attention_op_extract; their provenance and what was timed:
tests/data/attention_op/SOURCES.md) are one rank's attention op for `batch_size` sequences:
context, `isl` prompt tokens each, causal, no earlier KV (`step` 0); generation, one query token
each over `step` cached tokens (the new token's key besides). kvplan's price of the same call is
the simulator's own: kvplan.perf.mixed_step.MixedStepCost.attention_seconds (the attention core
of a step, each layer one kernel of max(FLOPs / (bf16 peak x `Efficiency.attention`), rows read
and written / (HBM x `hbm`), kernel floor), the engine's varlen kernel's query tiles where it
declares one) for one layer, on the engine's efficiency as the simulator builds it
(kvplan.perf.engine_traits.engine_efficiency over device_efficiency, as
kvplan.analysis.simulate.run._step_cost does): context rows as `batch_size` chunks (0, isl),
generation rows as `batch_size` decodes of step + 1 keys.

GQA rows are priced on Llama-3.1-8B's spec (full attention in every layer) with its attention
rewritten to the row's query and KV heads (kvplan.perf.flops.with_attention), on one GPU: the
table's heads are one rank's. MLA rows are DeepSeek-V3's 128 heads over TP `tp_size`, priced on
DeepSeek-V3's spec in Layout(tp=tp_size), the absorbed form kvplan's simulator takes for it (its
prefill: kvplan.perf.flops.prefill_form). Not in the price: the RoPE and the KV-cache write
kernels kvplan counts apart (TensorRT-LLM's op fuses both; SOURCES.md).
"""

from __future__ import annotations

import csv
import gzip
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from kvplan.hardware.gpus import get_gpu
from kvplan.model.attention import AttentionKind, HeadAttention
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.flops import MLAForm, with_attention
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.sources.resolve import load_spec

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "attention_op"
ROWS = DATA / "attention_perf_rows.csv.gz"
MLA_ROWS = DATA / "mla_perf_rows.csv.gz"
BASE = "llama-3.1-8b"  # the GQA rows' host spec (its attention rewritten per row)
MLA_MODEL = "deepseek-v3"
GPUS = {"NVIDIA H100 80GB HBM3": "H100", "NVIDIA H200": "H200", "NVIDIA B200": "B200"}
ENGINES = {"VLLM": "vllm", "SGLang": "sglang", "TRTLLM": "trtllm"}
KV = {"bfloat16": "bf16", "fp8": "fp8"}
PHASE = {"context_attention": "context", "generation_attention": "generation",
         "mla_context": "context", "mla_generation": "generation"}
# Context rows by prompt length; generation rows by the keys each decode attends.
CONTEXT_BUCKETS = (("1-256", 1, 256), ("512-2k", 512, 2048), ("3k-8k", 3072, 8192),
                   ("10k-32k", 10240, 32768))
GENERATION_BUCKETS = (("2-256", 2, 256), ("512-4k", 257, 4096), ("8k-32k", 4097, 32768),
                      ("64k-128k", 32769, 131072))
BATCH_BUCKETS = (("1-4", 1, 4), ("8-32", 8, 32), ("64-2k", 64, 2048))


@dataclass(frozen=True, kw_only=True)
class Row:
    """One measured case (the table's columns, kvplan's names)."""

    kind: str  # "GQA" | "MLA"
    engine: str  # --engine name
    version: str
    gpu: str  # kvplan preset
    kernel_source: str
    phase: str  # context | generation
    batch: int
    isl: int  # context: prompt tokens a sequence; generation: 1
    step: int  # generation: cached tokens before the query token; context: 0
    heads: int  # GQA: the rank's query heads; MLA: the model's (128)
    kv_heads: int  # GQA: the rank's KV heads; MLA: 1
    tp: int  # MLA: the TP the heads split over; GQA: 1
    kv_dtype: str  # kvplan's name of the cache's dtype: bf16 | fp8
    measured_ms: float

    @property
    def keys(self) -> int:
        """Keys a query token attends at most: the prompt's (context) or the cache's and its
        own (generation)."""
        return self.isl if self.phase == "context" else self.step + 1


def read_csv(path: Path = ROWS) -> list[dict[str, str]]:
    """The committed rows as the table has them (column names and values)."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _cases(raw: list[tuple[tuple, float]]) -> list[Row]:
    cases: dict[tuple, list[float]] = defaultdict(list)
    for key, ms in raw:
        cases[key].append(ms)
    fields = ("kind", "engine", "version", "gpu", "kernel_source", "phase", "batch", "isl",
              "step", "heads", "kv_heads", "tp", "kv_dtype")
    return [Row(**dict(zip(fields, key, strict=True)), measured_ms=statistics.fmean(ms))
            for key, ms in cases.items()]


def read_rows(path: Path = ROWS) -> list[Row]:
    """One Row per measured GQA case; a case the table holds twice (H200's vLLM context table:
    SOURCES.md) counts once, its measurements averaged."""
    return _cases([(("GQA", ENGINES[r["framework"]], r["version"], GPUS[r["device"]],
                     r["kernel_source"], PHASE[r["op_name"]], int(r["batch_size"]),
                     int(r["isl"]), int(r["step"]), int(r["num_heads"]),
                     int(r["num_key_value_heads"]), 1, KV[r["kv_cache_dtype"]]),
                    float(r["latency"]))
                    for r in read_csv(path)])


def read_mla_rows(path: Path = MLA_ROWS) -> list[Row]:
    """One Row per measured MLA case (duplicates averaged, as `read_rows`)."""
    return _cases([(("MLA", ENGINES[r["framework"]], r["version"], GPUS[r["device"]],
                     r["kernel_source"], PHASE[r["op_name"]], int(r["batch_size"]),
                     int(r["isl"]), int(r["step"]), int(r["num_heads"]), 1,
                     int(r["tp_size"]), KV[r["kv_cache_dtype"]]), float(r["latency"]))
                    for r in read_csv(path)])


@cache
def gqa_spec(heads: int, kv_heads: int) -> ModelSpec:
    """BASE with `heads` query and `kv_heads` KV heads of 128."""
    return with_attention(load_spec(BASE), HeadAttention(
        kind=AttentionKind.gqa, num_attention_heads=heads, num_key_value_heads=kv_heads,
        head_dim=128, v_head_dim=128))


@cache
def step_cost(kind: str, engine: str, version: str, gpu: str, heads: int, kv_heads: int,
              tp: int, kv_dtype: str = "bf16", bound: bool = False
              ) -> tuple[MixedStepCost, int]:
    """The simulator's step cost for a row's model, engine and card, and its attention
    layers; `bound`: at the whole peak and bandwidth, no floor (`price_s`)."""
    g = get_gpu(gpu)
    eff = engine_efficiency(engine, device_efficiency(g), version=version)
    # The rows asked bf16 queries (`attn_dtype` bfloat16, FP8_TEXT): without the engine's FP8
    # query on non-latent attention (vLLM on SM 10.x, kvplan.engines.vllm.fp8_query).
    eff = replace(eff, kv_dtype_attention=tuple(k for k in eff.kv_dtype_attention if k.latent))
    if bound:
        eff = replace(eff, attention=1.0, hbm=1.0, kernel_floor_s=0.0)
    if kind == "GQA":
        spec, layout = gqa_spec(heads, kv_heads), Layout(tp=1)
    else:
        spec, layout = load_spec(MLA_MODEL), Layout(tp=tp)
    cost = MixedStepCost(spec, g, kv_dtype=kv_dtype, layout=layout, eff=eff,
                         mla_form=MLAForm.absorbed)
    assert cost.full_attention_only
    layers = sum(map(spec.has_attention, range(spec.num_hidden_layers)))
    return cost, layers


def price_s(row: Row, *, bound: bool = False) -> float:
    """kvplan's price of the row's attention op (module docstring): one layer's attention
    core of the step holding the row's sequences. `bound`: at the card's whole bf16 peak and
    HBM bandwidth, no kernel floor (the least time the card can run the op's FLOPs and
    bytes in)."""
    cost, layers = step_cost(row.kind, row.engine, row.version, row.gpu, row.heads,
                             row.kv_heads, row.tp, row.kv_dtype, bound)
    if row.phase == "context":
        seconds = cost.attention_seconds([], [(0, row.isl)] * row.batch)
    else:
        seconds = cost.attention_seconds([row.step + 1] * row.batch, [])
    return seconds / layers


def ratio(row: Row) -> float:
    return price_s(row) * 1e3 / row.measured_ms


def below_bound(row: Row) -> bool:
    """The row ran faster than the card can move its bytes or compute its FLOPs (`price_s`'s
    bound): not a measurement of the op kvplan prices (SOURCES.md: H200's vLLM context
    table). An fp8 cache's kernel may compute in FP8, at up to twice the bf16 peak: its bound
    is halved (max(F / 2, B) >= max(F, B) / 2 for FLOPs time F and bytes time B)."""
    least = price_s(row, bound=True) * 1e3
    return row.measured_ms < (least / 2 if row.kv_dtype == "fp8" else least)


def bucket(row: Row) -> tuple[int, str]:
    """The row's sequence-length bucket (order, name)."""
    buckets = CONTEXT_BUCKETS if row.phase == "context" else GENERATION_BUCKETS
    return next((i, name) for i, (name, lo, hi) in enumerate(buckets) if lo <= row.keys <= hi)


def batch_bucket(row: Row) -> tuple[int, str]:
    return next((i, name) for i, (name, lo, hi) in enumerate(BATCH_BUCKETS)
                if lo <= row.batch <= hi)


def _summary(values: list[float]) -> str:
    values = sorted(values)
    q = statistics.quantiles(values, n=10, method="inclusive") if len(values) > 1 else values * 9
    return f"{len(values):,} | {statistics.median(values):.2f} | {q[0]:.2f} - {q[-1]:.2f}"


def table(pairs: list[tuple[Row, float]], key, label) -> list[str]:
    """Rows of a markdown table: the ratios grouped by `key` (a sortable tuple), each group's
    cells `label(row)`, then its rows, median and 10th - 90th percentile."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    labels: dict[tuple, tuple] = {}
    for r, x in pairs:
        groups[key(r)].append(x)
        labels[key(r)] = label(r)
    return ["| " + " | ".join(map(str, labels[k])) + " | " + _summary(v) + " |"
            for k, v in sorted(groups.items())]


# H200's vLLM 0.19 context table (both its version labels): 1,083 of its 2,486 bf16 rows ran faster
# than the card's bound (`below_bound`; a 16,384-token prompt of 64 heads in 0.47 ms where H100's
# table has 6.11 ms and the card's peak alone needs 4.4 ms): the table is left out whole.
BROKEN_TABLES = (("vllm", "H200", "GQA", "context"),)


def excluded(row: Row) -> str | None:
    """Why the row is left out of the ratios (None: kept)."""
    if (row.engine, row.gpu, row.kind, row.phase) in BROKEN_TABLES:
        return "table left out"
    return "below the card's bound" if below_bound(row) else None


def exclusion_lines(rows: list[Row]) -> list[str]:
    """Rows left out per table (`excluded`), the tables with any."""
    out: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        why = excluded(r)
        key = (f"{r.engine} {r.version}", r.gpu, r.kind, r.phase, r.kv_dtype)
        out[key][2] += 1
        if why is not None:
            out[key][0 if why == "table left out" else 1] += 1
    return [f"| {' | '.join(k)} | {n[2]:,} | {n[1]:,} | {n[0]:,} |"
            for k, n in sorted(out.items()) if n[0] or n[1]]


IMPLIED_MIN_KEYS = 8192  # context rows this long or longer: compute-bound (implied_lines)


def implied_lines(pairs: list[tuple[Row, float]]) -> list[str]:
    """The fraction of the bf16 peak each engine's context kernel ran at, where kvplan's
    price is compute-bound (prompts of IMPLIED_MIN_KEYS or more): kvplan's `attention`
    fraction times its ratio (kvplan's FLOPs over the measured time, over the peak)."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for r, x in pairs:
        if r.phase == "context" and r.keys >= IMPLIED_MIN_KEYS:
            eff = step_cost(r.kind, r.engine, r.version, r.gpu, r.heads, r.kv_heads, r.tp,
                            r.kv_dtype)[0].eff
            groups[(r.engine, r.version, r.gpu, r.kind, r.kernel_source)].append(eff.attention * x)
    return [f"| {e} {v} | {g} | {k} | {src} | {len(fs)} | {statistics.median(fs):.2f} | "
            f"{min(fs):.2f} - {max(fs):.2f} |"
            for (e, v, g, k, src), fs in sorted(groups.items())]


# What the gap is worth over a served prefill: (model, its checkpoint, TP, EP, query / KV heads
# a rank, prompt tokens, chunk tokens).
SERVED = (("MiniMax-M2.5", "minimax-m2", 8, 8, 6, 1, 32768, 8192),
          ("MiniMax-M2.5", "minimax-m2", 8, 8, 6, 1, 131072, 8192),
          ("Llama-3.1-70B", "llama-3.1-70b", 4, 1, 16, 2, 8192, 8192))
NEAREST_ISL = 16384  # the context tables' longest prompt


def nearest_ratio(pairs: list[tuple[Row, float]], engine: str, gpu: str, heads: int,
                  kv_heads: int, isl: int) -> tuple[float, str] | None:
    """The ratio of the kept context row of one sequence nearest the served prefill: the
    rank's heads where measured (else 8 query heads a KV head, 1 KV head: MiniMax-M2.5's 6 / 1
    is not in the tables), the prompt's length or the tables' longest (NEAREST_ISL)."""
    want = min(isl, NEAREST_ISL)
    for h, kv in ((heads, kv_heads), (8, 1)):
        hit = [(r, x) for r, x in pairs if r.kind == "GQA" and r.phase == "context"
               and r.engine == engine and r.gpu == gpu and r.batch == 1 and r.isl == want
               and (r.heads, r.kv_heads) == (h, kv)]
        if hit:
            return hit[0][1], f"{h}/{kv}, {want:,}"
    return None


def served_lines(pairs: list[tuple[Row, float]]) -> list[str]:
    """Per served case (SERVED), engine and card: kvplan's attention over the whole prompt (the
    simulator's chunks, every layer), kvplan's whole prefill (MixedStepCost.seconds over the
    chunks), and the attention at the nearest row's ratio (`nearest_ratio`): price / ratio."""
    out = []
    for name, ckpt, tp, ep, heads, kv, prompt, chunk in SERVED:
        spec = load_spec(ckpt)
        for engine, version in (("vllm", "0.19.0"), ("sglang", "0.5.9"), ("trtllm", "1.2.0rc5")):
            for gpu in ("H100", "B200"):
                near = nearest_ratio(pairs, engine, gpu, heads, kv, prompt)
                if near is None:
                    continue
                g = get_gpu(gpu)
                cost = MixedStepCost(spec, g, layout=Layout(tp=tp, ep=ep), eff=engine_efficiency(
                    engine, device_efficiency(g), version=version), eager_prefill=True)
                chunks = [(s, min(chunk, prompt - s)) for s in range(0, prompt, chunk)]
                att = sum(cost.attention_seconds([], [c]) for c in chunks) * 1e3
                whole = sum(cost.seconds(decode_contexts=[], chunks=[c]) for c in chunks) * 1e3
                x, where = near
                out.append(f"| {name} TP{tp} | {prompt:,} | {engine} {version} | {gpu} | "
                           f"{where} | {x:.2f} | {whole:,.0f} | {att:,.0f} | "
                           f"{att / x:,.0f} | {att / x - att:+,.0f} |")
    return out


def main() -> None:
    rows = read_rows() + read_mla_rows()
    kept = [r for r in rows if excluded(r) is None]
    every = [(r, ratio(r)) for r in kept]
    pairs = [(r, x) for r, x in every if r.kv_dtype == "bf16"]
    fp8 = [(r, x) for r, x in every if r.kv_dtype == "fp8"]
    cells = "rows | median kvplan / measured | 10th - 90th |"
    print("# kvplan's attention price against measured attention kernels "
          "(aiconfigurator's tables)\n")
    print(INTRO + "\n")
    print("## Rows left out\n")
    print(EXCLUDED_TEXT + "\n")
    print("| engine | GPU | op | phase | cache | rows | below the card's bound "
          "| table left out |")
    print("|---|---|---|---|---|---:|---:|---:|")
    for line in exclusion_lines(rows):
        print(line)
    print("\n## By engine, GPU, op and keys\n")
    print("Keys: a context row's prompt tokens (each attends up to them, causal); a generation "
          "row's cached tokens plus its own.\n")
    print("| engine | GPU | op | phase | keys | " + cells)
    print("|---|---|---|---|---|---:|---:|---:|")
    for line in table(pairs, lambda r: (r.engine, r.version, r.gpu, r.kind, r.phase,
                                        bucket(r)[0]),
                      lambda r: (f"{r.engine} {r.version}", r.gpu, r.kind, r.phase,
                                 bucket(r)[1])):
        print(line)
    print("\n## Context (GQA) by keys and batch\n")
    print("| engine | GPU | keys | batch | " + cells)
    print("|---|---|---|---|---:|---:|---:|")
    for line in table([(r, x) for r, x in pairs if r.kind == "GQA" and r.phase == "context"],
                      lambda r: (r.engine, r.version, r.gpu, bucket(r)[0],
                                 batch_bucket(r)[0]),
                      lambda r: (f"{r.engine} {r.version}", r.gpu, bucket(r)[1],
                                 batch_bucket(r)[1])):
        print(line)
    print("\n## An fp8 KV cache (GQA)\n")
    print(FP8_TEXT + "\n")
    print("| engine | GPU | phase | keys | " + cells)
    print("|---|---|---|---|---:|---:|---:|")
    for line in table(fp8, lambda r: (r.engine, r.version, r.gpu, r.phase, bucket(r)[0]),
                      lambda r: (f"{r.engine} {r.version}", r.gpu, r.phase, bucket(r)[1])):
        print(line)
    print("\n## The fraction of the bf16 peak the context kernels ran at "
          f"(prompts of {IMPLIED_MIN_KEYS:,} tokens or more)\n")
    print(IMPLIED_TEXT + "\n")
    print("| engine | GPU | op | kernel | rows | median fraction | least - most |")
    print("|---|---|---|---|---:|---:|---:|")
    for line in implied_lines(pairs):
        print(line)
    print("\n## What the gap is worth over a served prefill\n")
    print(SERVED_TEXT + "\n")
    print("| model | prompt | engine | GPU | nearest row (heads / KV heads, prompt) | ratio "
          "| kvplan's prefill, ms | kvplan's attention, ms | at the row's ratio, ms | gap, ms |")
    print("|---|---:|---|---|---|---:|---:|---:|---:|---:|")
    for line in served_lines(pairs):
        print(line)
    print()
    print(FINDINGS, end="")


INTRO = (
    "kvplan's price of one layer's attention kernel (the simulator's own: "
    "kvplan.perf.mixed_step.MixedStepCost.attention_seconds, on the engine's efficiency as "
    "`simulate` builds it) against the attention op aiconfigurator measured "
    "(github.com/ai-dynamo/aiconfigurator at 095f58a51, aic-core/src/aiconfigurator_core/"
    "systems/data/<gpu>/attention/<backend>/<version>/{context,generation}_attention_perf"
    ".parquet and mla/.../{context,generation}_mla_perf.parquet): one rank's attention call "
    "for a batch of sequences, replayed in a CUDA graph and timed with CUDA events; context: "
    "causal prompts of 1 to 16,384 tokens (MLA: 32,768) with no cached prefix; generation: one "
    "query token a sequence over 1 to 131,071 cached tokens; vLLM 0.19.0, SGLang 0.5.9 and "
    "TensorRT-LLM 1.2.0rc5 on H100, H200 and B200; GQA with 128-wide heads, 4, 6 or 8 query "
    "heads a KV head, a bf16 or fp8 cache; MLA: DeepSeek-V3's 128 heads over TP 1-8 (SGLang and "
    "TensorRT-LLM; vLLM's MLA tables time the whole module), bf16 cache: 54,955 rows "
    "(tests/data/attention_op/SOURCES.md; tests/benches/attention_op_bench.py says what "
    "kvplan's price holds). Kernel tables, not serving rows. This page is a first evaluation "
    "(kvplan at 113e3005): nothing was fitted and no rule or constant changed. A ratio below 1 "
    "is kvplan pricing the op cheaper than it ran. kvplan prices attention at 0.60 of the "
    "bf16 peak (`Efficiency.attention`) and its bytes at 0.90 of the HBM bandwidth, at least "
    "one 4 us kernel floor a layer.")

EXCLUDED_TEXT = (
    "A row is left out where it ran faster than the card can compute its FLOPs at the whole "
    "bf16 peak and move its bytes at the whole HBM bandwidth (`below_bound`: kvplan's own "
    "price at fractions 1 and no floor). H200's vLLM context table (both its version labels, "
    "0.19.0 and 0.19.1, both caches) is left out whole: 1,083 of its 2,486 bf16-cache rows "
    "are below that bound, 719 of the fp8 ones below half of it (a "
    "16,384-token prompt of 64 query heads in 0.47 ms, where H100's table has 6.11 ms and the "
    "card's peak alone needs 4.4 ms). TensorRT-LLM's generation rows below it are the calls "
    "with the most KV bytes (from 0.27 GB a call on H100 and B200, 0.54 GB on H200; 256 to "
    "131,072 cached tokens): 148, 75 and 148 of the 241, 153 and 241 such calls ran up to "
    "1.64x the card's bandwidth, as if part of the cache were not read from HBM (the 1.2.0rc5 "
    "collector's KV-cache set-up was not stored; not read); the rest of those calls is "
    "suspect too.")

FP8_TEXT = (
    "The same cases with an fp8 (e4m3) KV cache, bf16 queries asked (`attn_dtype` "
    "bfloat16): kvplan prices them as the bf16 rows with the cache rows at one byte an "
    "element, the attention in bf16 (kvplan.perf.attention_kernel.attention_math: FP8 only "
    "with --fp8-attention or an engine kernel declared to compute in the cache's dtype; vLLM's "
    "FP8 query on SM 10.x, kvplan.engines.vllm.fp8_query, is left off here: these rows asked "
    "a bf16 one). The B200 vLLM 0.19.0 table was collected (aiconfigurator b886aad3d, "
    "2026-04-30) by a collector that passed the bf16 query to impl.forward (collect_attn.py "
    "before 01da5ebfb, 2026-06-17, which casts it to FP8 where `supports_quant_query_input`); "
    "vLLM 0.19.0's forward asserts the query's dtype is the metadata's (flashinfer.py:"
    "1313-1316), so those rows ran bf16 queries, FlashInfer's own prefill on an fp8 cache "
    "(utils/flashinfer.py:383-387). The tables' other kernels may compute in FP8 (vLLM's "
    "FlashAttention 3 quantizes the query where `supports_quant_query_input`); the bound "
    "that leaves rows out is halved for them (`below_bound`).")

IMPLIED_TEXT = (
    "kvplan's attention fraction (0.60) times the median ratio: the fraction of the bf16 peak "
    "at which kvplan's FLOPs (the causal pairs, exact) would take the measured time, where "
    "the op is compute-bound (prompts of 8,192 tokens or more, every batch). SGLang's Hopper "
    "MLA rows run the absorbed 576 / 512 kernel (SOURCES.md), 3.4x the naive form's FLOPs "
    "kvplan prices a prefill at: 0.18 of the peak by the naive FLOPs is about 0.61 by the "
    "kernel's own.")

SERVED_TEXT = (
    "kvplan's attention over a whole served prompt (every attention layer, the prompt in the "
    "chunks the simulator schedules: vLLM's max_num_batched_tokens 8,192 of prospective58 for "
    "MiniMax-M2.5, whose checkpoint kvplan prices with MiniMax-M2's architecture), beside its "
    "whole prefill (MixedStepCost.seconds over the same chunks, eager launch time included "
    "where the engine pays one), and that attention at the ratio of the nearest measured row "
    "(one sequence; the rank's query / KV heads where the tables have them, else 8 / 1; the "
    "prompt's length or the tables' longest, 16,384): kvplan's attention / ratio. Chunks after "
    "the first attend a cached prefix, which the context tables do not measure, and the 32k and "
    "128k prompts lie beyond them: the ratio at 16,384 tokens, where it has stopped moving "
    "(the table above: 3k-8k to 10k-32k), stands in.")

FINDINGS = (
    "## Findings (first evaluation, kvplan at 113e3005; no rule or constant changed)\n\n"
    "1. **Long-prompt prefill attention is priced within about 20 %, both ways: it does not "
    "explain the low TTFT.** At prompts of 10,240-16,384 tokens the median ratio is 0.84-1.19 "
    "on Hopper (vLLM's FlashAttention 3 1.19: it runs at 0.71 of the bf16 peak, above "
    "kvplan's 0.60; SGLang's FlashAttention 3 0.95-0.97, 0.57-0.58 of the peak; TensorRT-LLM's "
    "FMHA 0.84-0.85, 0.50-0.51) and 0.78-1.04 on B200 (0.46-0.60 of its peak), hardly "
    "moving with the rank's query heads (4 to 64; vLLM's FlashInfer on B200 the exception: "
    "0.81 at 4 heads, 1.12 at 32-64, prompts of 8k-16k); MLA prefill "
    "(the naive form's FLOPs) 0.96-0.98 for TensorRT-LLM on Hopper, 0.88-0.91 on B200 (both "
    "engines). Over a "
    "served prefill that is -22 to +32 ms of a 196-925 ms prefill at 32k tokens of "
    "MiniMax-M2.5 (TP 8), -347 to +508 ms of 1.7-5.8 s at 128k, and -5 to +14 ms of 245-605 ms "
    "for Llama-3.1-70B (TP 4) at 8k, where attention is 6-7 % of kvplan's prefill. For "
    "prospective58 (vLLM on H100, TTFT low on 32 of 33 runs) kvplan prices the attention "
    "HIGHER than the kernel ran (-22 ms at 32k, -347 ms at 128k): the missing prefill time is "
    "elsewhere (the MoE experts' GEMMs of examples/moe-op-bench.md are the measured candidate). "
    "Not made a rule: the fraction differs by engine (0.50-0.71 on one card), an efficiency of "
    "each kernel, not a count read in its code; one constant would move the engines apart.\n"
    "2. **Short calls run 1.6-7x kvplan's attention price, mostly kernels kvplan counts "
    "apart.** GQA prompts of 1-256 tokens price at a median 0.14-0.31 of the measured op, "
    "512-2,048 at 0.26-0.62, and GQA generation over 2-256 cached tokens at 0.31-0.55 (MLA: "
    "0.07-0.13 and 0.15-0.29): one sequence's call takes 11-15 us on Hopper (context of up to "
    "64 tokens) and 9-12 us (generation over up to 63 cached tokens), B200 7-15 us, where the "
    "attention core alone is kvplan's 4 us kernel floor. The timed calls hold more than the "
    "attention kernel: vLLM's KV-cache write (`do_kv_cache_update`), TensorRT-LLM's RoPE and "
    "cache write inside its op; kvplan charges those as kernels of their own "
    "(kvplan.perf.op_counts.ATTN_KERNELS: input norm, RoPE, KV-cache write, residual add, a "
    "floor each), 8 us with the write and 12 us with RoPE besides, which leaves 0-4 us a call "
    "(0-0.25 ms a step of a 62-layer model). Not changed.\n"
    "3. **Decode over long caches is under-priced where few sequences and KV heads feed the "
    "kernel.** Generation over 64k-128k cached tokens prices at 0.74-0.86 (GQA, H100 / B200) "
    "and 0.80-1.04 (MLA); one sequence with one KV head at 64k-128k tokens ran 30-48 us on "
    "H100 (vLLM) where its bytes at 0.9 of the bandwidth take 11-22 us: the split-KV kernels "
    "do not fill the card from one (sequence, KV head) pair. H200's vLLM generation table "
    "(0.31 there) runs slower than H100's on the same shapes, which a card with 1.4x the "
    "bandwidth should not; not read further.\n"
    "4. **SGLang's Hopper MLA context rows time the absorbed kernel.** They price at 0.29-0.31 "
    "at 3k-32k tokens, 3.4x under (the absorbed form's 576 / 512 FLOPs over the naive form's "
    "192 / 128: kvplan.perf.flops.attention_flops): the stored collector builds that form for "
    "every backend but trtllm_mla (SOURCES.md), so the rows are of the absorbed kernel, at "
    "about 1.0 by its own FLOPs, not of the naive prefill SGLang serves without a prefix "
    "(whether SGLang 0.5.9 serves it so on Hopper was not read here); kvplan is not changed "
    "by them.\n"
    "5. **An fp8 cache: kvplan halves a decode's bytes, the kernels gain less.** GQA "
    "generation over 8k-128k cached tokens prices at 0.52-0.71 with an fp8 cache on H100 "
    "(SGLang, vLLM; bf16: 0.74-0.86) and 0.56-0.62 on B200 (bf16: 0.64-0.75): the kernels "
    "read half the bytes but do not run in half the time (the cache's dequantization; "
    "H200's vLLM table, 0.14 at 64k-128k, is the odd one again). In prefill, where kvplan "
    "keeps the bf16 math, SGLang's FlashAttention 3 with an fp8 cache runs faster than with a "
    "bf16 one (1.12-1.14 at 10k-16k tokens on Hopper, against 0.95-0.97), vLLM's a little "
    "slower (1.09 on H100, against 1.19), TensorRT-LLM's FMHA the same (0.84-0.85). Not "
    "changed: what the fp8 decode kernels spend beyond their bytes was not read in their "
    "code.\n\n"
    "Which serving rows share the publisher: every aiconfigurator row in "
    "examples/simulate-bench.md's aggregated section and examples/disagg-bench.md's "
    "aiconfigurator rows comes from the same publisher and commit as these tables; none of "
    "this page's numbers fed a constant or a rule.\n")


if __name__ == "__main__":
    main()
