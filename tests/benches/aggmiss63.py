"""Where the aggregated held-out misses come from (issue 30, aggmiss63): aiconfigurator's
measured aggregated rows as examples/simulate-bench.md prints them (its per-row table: the
measured and kvplan TTFT / TPOT, their ratios, the split), the held-out rows classified by
engine x GPU x model x precision x ISL x concurrency x direction without replaying them
(but the six rows `script_replay` replays to test the largest class's hypothesis).

Forensic only: no rule or constant of kvplan is set here and no row's replay changes. Every
figure is read from the page (each ratio from the printed measured and kvplan ms, 0.1 ms TTFT
and 0.01 ms TPOT) and the frozen rows' file
(tests/data/sim_to_real/aiconfigurator_agg.csv.gz: engine, release, model, precision, GPU,
ISL / OSL, the stated concurrency, the provenance tests.benches.aiconfig_harness reads), so it
moves when the lead regenerates the page.

A row is a miss where either ratio (kvplan / measured) is outside [0.75, 1.33], the page's
'inside'; its direction per figure is low (< 0.75), in, or high (> 1.33).

FINDING (read at the merge branch 31abe644, page as committed; the rows were all read before,
so nothing here is blind and no rule was written from it):
- The 989 held-out rows (split 'held out'; the 102 'host of shaped disagg rows' apart) are
  vLLM (736) and SGLang (253) only: every replayed TensorRT-LLM row is shaped (08aee189).
  Both inside 319; TTFT-only misses 563 (low 416, high 147), TPOT-only 28, both 79. TTFT low
  is the class that holds the TTFT median: 481 rows (49 %) sit below 0.75, 161 above 1.33.
- By engine: vLLM TTFT low 402 of 736 (median ratio 0.71; TPOT 1.04, |err| 13.5 %); SGLang
  splits both ways (low 79, high 109 of 253; median 1.12): its TTFT high is ISL 8,192 at
  concurrency >= 8 (70 of 74 rows high, median 2.95), mostly Qwen3.5-397B-A17B and GLM-5 on
  B200 / B300 / H200 (the bench's fixed lengths queue each round's 8,192-token prompts behind
  each other in SGLang's prefill-first scheduler: aiconfig_harness_replay's mechanism).
- The largest coherent class: vLLM, MiniMax-M2.5 on B200 (FP8 0.17.0 / 0.19.0 and NVFP4
  0.19.0 / nightly 5b8c30d6), TTFT low: 167 of its 224 held-out rows, at every ISL,
  concurrency and TP (median TTFT ratio 0.60 FP8 / 0.62 NVFP4), TPOT inside (1.12 / 1.09).
  The same model on H200 sits at 0.81, on B300 0.70 (FP8) / 0.78 (NVFP4); gpt-oss-120b on B200
  0.83. At concurrency <= 4 and ISL 1,024 its B200 FP8 rows are at 0.48 (0.19.0, 10 rows) and
  0.29 (0.17.0, 6 rows, whose script forced EP with Triton MoE).
- Its shape (`script_replay`, 6 of its rows replayed, vLLM 0.19.0 FP8, EP 1; the only replay
  here): with InferenceX's minimaxm2.5_fp8_b200.sh flags as of bddbf4031 (fp8 KV cache, block
  32, --max-num-batched-tokens 2 x ISL) and InferenceX's workload (10 x C requests, lengths
  uniform in [0.8, 1] x ISL / OSL, every request measured), kvplan's mean TTFT is 0.30-0.32
  of the measured at ISL 8,192 on TP 4 at EVERY concurrency (4, 16, 32, 64: 65 / 99 / 136 / 206
  ms against 208 / 324 / 449 / 639) and 0.56-0.61 at ISL 1,024 (TP 2 c4, TP 4 c64), TPOT
  0.88-1.12. The frozen replay's ratios fall with concurrency (0.62 -> 0.28 at 8,192) because
  its fixed lengths queue each round's prompts together; under the harness's spread lengths
  that queueing goes and a constant factor is left, which grows with the prompt: the prefill
  of these rows takes about 3x kvplan's price at 8,192 tokens and 1.7x at 1,024 (kvplan's lone
  8,192-token step on TP 4: 45.5 ms, of it TP all-reduce 14.0, experts 11.6, attention
  projections 4.5, the attention kernel 9.5). The TPOT cannot see it: 64 prefills over a request's
  1,024 decode steps add 1-5 ms to its TPOT either way.
- Candidates checked (code; nothing changed):
  (1) the stream interval (--stream-interval 20 from bddbf4031): ruled out by aggvllmttft55,
  vLLM sends the first token at once;
  (2) vLLM's ungraphed prefill launches: opt-in, 4.4 us a launch (kvplan.perf.vllm_ungraphed),
  about 2 ms a step, an order below;
  (3) the full-width q / k norm's TP all-reduce (vLLM models/minimax_m2.py
  MiniMaxText01RMSNormTP): charged (kvplan.perf.roofline `qk_norm_all_reduce`, 0.45 ms);
  (4) the float32 router: vLLM 0.19.0 runs MiniMax-M2's gate as a float32 GEMM on every GPU
  before 0.32.0 (kvplan.engines.vllm.router_gemm: minimax_m2.py 0.11.1 / 0.20.0 :115-119,
  :134 ReplicatedLinear(params_dtype=float32); tensor cores on SM 10.x from 0.32.0 only), and
  kvplan charges it on H100 / H200 (router_fp32 2.1 ms at 1,024 tokens, 17.0 ms at 8,192, TP 8)
  but NOT on B200 / B300: gpus.json holds no FP32 peak for them (GPU.peak_fp32_flops_per_s
  None, kvplan.perf.router_cost: 'not read from a datasheet'), so the router's FLOPs are free
  there. MiniMax-M2.5's H200 rows sit at 0.81, its B200 rows at 0.60. At H200's FP32 rate it
  would add about 17 ms to the 45.5 ms step: a part of the gap, not all of it;
  (5) the experts: kvplan prices block-FP8 experts on SM 10.x as weights and exact FLOPs at
  the dense FP8 fraction (kvplan.engines.vllm.moe_ep.vllm_moe_experts returns None there: the
  kernel vLLM runs was not read); the Hopper-fitted FP8 MoE fraction (FP8_MOE_GEMM_FIT, 0.20)
  on Triton's kernel would take the TP 4 step's experts 11.6 -> 36.6 ms at 8,192 tokens and
  add about 1 ms at 1,024 (weight-bound). vLLM's backend order (oracle/fp8.py, read at the code
  index's stored version 001a058b, not at the 0.19.0 tag) moves Triton first on SM 9.0 only,
  so on SM 10.0 FlashInfer's TRT-LLM-gen, then FlashInfer CUTLASS, then DeepGEMM are tried
  first, which kernel is not read;
  (6) the bench's fixed lengths: the opposite sign (above).
  Left: the SM 10.x experts' kernel and rate, and the B200 / B300 FP32 peak (a datasheet
  figure, not code): together they may explain the 3x; no measurement here times either.
- Elsewhere: vLLM, Qwen3-235B-A22B-FP8 on H200 (gap-analysis rows, ISL 8,000 / 2,000 /
  4,000 at 8-16 users) is the TPOT-low class (30 of 38 low, median 0.65); Kimi-K2.5 INT4 on
  B200 has both low (21 TPOT low of 39).

Run: python -m tests.benches.aggmiss63 (reads the page; no replay, about a second of CPU);
`python -m tests.benches.aggmiss63 replay` adds `script_replay` (6 rows, about 3 s of CPU).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import SimSetup, setup
from kvplan.engines.base import Engine
from tests.benches import aiconfig_agg_runs, aiconfig_harness
from tests.benches.aiconfig_agg_loop import row_run, steady
from tests.benches.aiconfig_harness_replay import workload
from tests.benches.disagg_rows import stated_concurrency

PAGE = Path(__file__).resolve().parents[2] / "examples" / "simulate-bench.md"
SECTION = "## aiconfigurator's measured aggregated rows (held out)"
HELD_OUT = "held out"
LOW, HIGH = 0.75, 1.33  # the page's 'inside' band: [0.75, 1.33]


@dataclass(frozen=True)
class PageRow:
    """One replayed row as the page prints it, with the frozen row's fields."""

    id: str
    backend: str
    version: str
    model: str
    precision: str
    system: str
    isl: int
    concurrency: int
    provenance: str
    ttft_ratio: float
    tpot_ratio: float
    split: str

    @property
    def ttft(self) -> str:
        return direction(self.ttft_ratio)

    @property
    def tpot(self) -> str:
        return direction(self.tpot_ratio)

    @property
    def miss(self) -> bool:
        return self.ttft != "in" or self.tpot != "in"

    @property
    def kind(self) -> str:
        """The miss's direction: 'TTFT low', 'TPOT high', 'TTFT low + TPOT low', or 'inside'."""
        parts = [f"{name} {d}" for name, d in (("TTFT", self.ttft), ("TPOT", self.tpot))
                 if d != "in"]
        return " + ".join(parts) or "inside"


def direction(ratio: float) -> str:
    """'low' below 0.75, 'high' above 1.33, else 'in' (the page's inside band)."""
    return "low" if ratio < LOW else "high" if ratio > HIGH else "in"


def band(concurrency: int) -> str:
    """The concurrency band a row is classed in."""
    return ("<=4" if concurrency <= 4 else "8-16" if concurrency <= 16
            else "32-64" if concurrency <= 64 else ">=128")


def table_cells(text: str) -> list[list[str]]:
    """The 7-cell lines of the page's aggregated section's per-row table."""
    lines = text.splitlines()
    start = lines.index(SECTION)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    out = []
    for line in lines[start:end]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0] not in ("row", "---"):
            out.append(cells)
    return out


def _pair(cell: str) -> tuple[float, float]:
    """'1,463.1 / 24.56' -> (1463.1, 24.56): a TTFT / TPOT cell of the page, in ms."""
    ttft, tpot = cell.split(" / ")
    return float(ttft.replace(",", "")), float(tpot.replace(",", ""))


def page_rows(text: str, frozen: dict[str, dict[str, str]]) -> list[PageRow]:
    """The page's replayed rows joined with the frozen file's (`frozen`: id -> row)."""
    out = []
    for cells in table_cells(text):
        row = frozen.get(cells[0])
        if row is None:
            continue
        measured_ttft, measured_tpot = _pair(cells[2])
        kvplan_ttft, kvplan_tpot = _pair(cells[3])
        out.append(PageRow(
            id=cells[0], backend=row["backend"], version=row["backend_version"],
            model=row["model_path"].split("/")[-1], precision=row["precision"],
            system=row["system"], isl=int(row["isl"]),
            concurrency=stated_concurrency(row) or int(row["batch_size"]),
            provenance=aiconfig_harness.provenance(row),
            ttft_ratio=kvplan_ttft / measured_ttft, tpot_ratio=kvplan_tpot / measured_tpot,
            split=cells[6]))
    return out


def frozen_rows() -> dict[str, dict[str, str]]:
    return {r["id"]: r for r in aiconfig_agg_runs.rows()}


@dataclass(frozen=True)
class ClassLine:
    key: tuple[str, ...]
    n: int
    misses: int
    ttft_low: int
    ttft_high: int
    tpot_low: int
    tpot_high: int
    ttft_median: float
    tpot_median: float


def classify(rows: Iterable[PageRow], key: Callable[[PageRow], tuple[str, ...]]
             ) -> list[ClassLine]:
    """Rows grouped by `key`, the largest number of misses first."""
    groups: dict[tuple[str, ...], list[PageRow]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    out = [ClassLine(key=k, n=len(v), misses=sum(r.miss for r in v),
                     ttft_low=sum(r.ttft == "low" for r in v),
                     ttft_high=sum(r.ttft == "high" for r in v),
                     tpot_low=sum(r.tpot == "low" for r in v),
                     tpot_high=sum(r.tpot == "high" for r in v),
                     ttft_median=statistics.median(r.ttft_ratio for r in v),
                     tpot_median=statistics.median(r.tpot_ratio for r in v))
           for k, v in groups.items()]
    return sorted(out, key=lambda c: (-c.misses, -c.n, c.key))


def median_error(ratios: Sequence[float]) -> float:
    """Median |ratio - 1| (the page's median |error|)."""
    return statistics.median(abs(x - 1) for x in ratios)


def full_key(r: PageRow) -> tuple[str, ...]:
    """engine x GPU x model x precision x ISL x concurrency band x direction."""
    return (r.backend, r.system, r.model, r.precision, str(r.isl), band(r.concurrency), r.kind)


def _table(title: str, lines: list[ClassLine], names: Sequence[str], top: int | None) -> None:
    print(f"\n{title}\n")
    print("| " + " | ".join(names) + " | rows | misses | TTFT low | TTFT high | TPOT low | "
          "TPOT high | median TTFT ratio | median TPOT ratio |")
    print("|" + "---|" * len(names) + "---:|" * 8)
    for c in lines[:top]:
        print("| " + " | ".join(c.key) + f" | {c.n} | {c.misses} | {c.ttft_low} | "
              f"{c.ttft_high} | {c.tpot_low} | {c.tpot_high} | {c.ttft_median:.2f} | "
              f"{c.tpot_median:.2f} |")


def report(rows: list[PageRow]) -> None:
    held = [r for r in rows if r.split == HELD_OUT]
    misses = [r for r in held if r.miss]
    print(f"Held-out rows on the page: {len(held)}; both inside {len(held) - len(misses)}; "
          f"misses {len(misses)}. Median |error| from the printed figures: TTFT "
          f"{100 * median_error([r.ttft_ratio for r in held]):.1f} %, TPOT "
          f"{100 * median_error([r.tpot_ratio for r in held]):.1f} %.")
    _table("By the miss's direction:", classify(held, lambda r: (r.kind,)), ["direction"], None)
    _table("By engine and provenance:", classify(held, lambda r: (r.backend, r.provenance)),
           ["engine", "provenance"], None)
    _table("By engine, model, precision and GPU (the 25 with most misses):",
           classify(held, lambda r: (r.backend, r.model, r.precision, r.system)),
           ["engine", "model", "precision", "GPU"], 25)
    _table("By engine, ISL and concurrency:",
           classify(held, lambda r: (r.backend, str(r.isl), band(r.concurrency))),
           ["engine", "ISL", "concurrency"], None)
    _table("The full classification, misses only (engine x GPU x model x precision x ISL x "
           "concurrency x direction; the 40 largest):", classify(misses, full_key),
           ["engine", "GPU", "model", "precision", "ISL", "concurrency", "direction"], 40)
    mm = [r for r in held if r.backend == "vllm" and r.model == "MiniMax-M2.5"]
    _table("The largest coherent class's neighbourhood: vLLM MiniMax-M2.5, by GPU, precision, "
           "release, ISL and concurrency:",
           classify(mm, lambda r: (r.system, r.precision, r.version, str(r.isl),
                                   band(r.concurrency))),
           ["GPU", "precision", "release", "ISL", "concurrency"], None)


# The handful of rows replayed to test the class's hypothesis (`script_replay`): vLLM 0.19.0,
# MiniMax-M2.5 FP8 on B200, EP 1, one row per (ISL, concurrency, TP) picked for the spread.
REPLAYED = (
    "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c4_tp2_0_ep1_0_1305",
    "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_1024x1024_c64_tp4_0_ep1_0_1310",
    "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_8192x1024_c4_tp4_0_ep1_0_1312",
    "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_8192x1024_c16_tp4_0_ep1_0_1318",
    "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_8192x1024_c32_tp4_0_ep1_0_1301",
    "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_8192x1024_c64_tp4_0_ep1_0_1292",
)


def _script_setup(row: dict[str, str]) -> SimSetup:
    """The row's engine at InferenceX's minimaxm2.5_fp8_b200.sh flags as of bddbf4031 (the
    vLLM 0.19.0 update, 2026-04-03: `--kv-cache-dtype fp8 --block-size=32
    --max-num-batched-tokens $((ISL * 2))`; its --max-cudagraph-capture-size 2048 and
    --stream-interval 20 are not simulated), the bench's --max-model-len. A sensitivity, not a
    rule: the rows do not record the flags they ran."""
    config, _, _ = aiconfig_agg_runs.AGG_MODELS[(row["model_path"], row["precision"])]
    spec = aiconfig_agg_runs._spec(config)
    tp, _, _, ep = aiconfig_agg_runs.layout(row)
    isl, osl = int(row["isl"]), int(row["osl"])
    inputs = estimate_inputs(spec, context=isl + osl + aiconfig_agg_runs.CONTEXT_PAD,
                             kv_dtype="fp8", engine=Engine("vllm"),
                             gpu=aiconfig_agg_runs.GPUS[row["system"]], tp=tp,
                             engine_version=aiconfig_agg_runs.release(row), ep=ep,
                             block_size=32, max_num_batched_tokens=2 * isl)
    return setup(inputs.spec, inputs)[0]


def script_replay(ids: Sequence[str] = REPLAYED) -> None:
    """Each row: measured, the page's frozen replay, the script's flags in the bench's closed
    loop (mean of the steady requests, aiconfig_agg_loop.steady) and the script's flags under
    InferenceX's workload (tests.benches.aiconfig_harness_replay.workload: 10 x C requests,
    lengths uniform in [0.8, 1] x ISL / OSL, every request measured: mean and median TTFT, mean
    TPOT). ms; (kvplan / measured)."""
    cells = {c[0]: c for c in table_cells(PAGE.read_text())}
    frozen = frozen_rows()
    print("\n| row | TP | conc. | measured TTFT / TPOT | frozen replay | script flags | + "
          "InferenceX workload: TTFT mean / median, TPOT |")
    print("|---|---:|---:|---|---|---|---|")
    for rid in ids:
        row, conc = frozen[rid], stated_concurrency(frozen[rid])
        assert conc is not None
        m_ttft, m_tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
        ttft, tpot, _ = steady(list(row_run(row, _script_setup(row)).finished), conc)
        done = row_run(row, _script_setup(row),
                       workload(int(row["isl"]), int(row["osl"]), conc)).finished
        ttfts = [(r.first_token_s - r.sent_s) * 1e3 for r in done]
        tpots = [(r.finish_s - r.first_token_s) / (r.output_len - 1) * 1e3
                 for r in done if r.output_len > 1]
        mean, med, tp_ = statistics.fmean(ttfts), statistics.median(ttfts), statistics.fmean(tpots)
        print(f"| {rid.removesuffix('_0').split('agg_')[-1]} | {row['tp_size']} | {conc} | "
              f"{m_ttft:.1f} / {m_tpot:.2f} | {cells[rid][3]} | {ttft:.1f} / {tpot:.2f} "
              f"({ttft / m_ttft:.2f} / {tpot / m_tpot:.2f}) | {mean:.1f} / {med:.1f}, {tp_:.2f} "
              f"({mean / m_ttft:.2f} / {med / m_ttft:.2f}, {tp_ / m_tpot:.2f}) |")


def main(argv: Sequence[str] = ()) -> None:
    report(page_rows(PAGE.read_text(), frozen_rows()))
    if "replay" in argv:
        script_replay()


if __name__ == "__main__":
    main(sys.argv[1:])
