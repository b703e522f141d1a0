"""`python -m tests.benches.ctxstep67_fp4 [--replay ROWS]`: the one op ctxstep67 found
systematically under-priced, NVFP4 routed experts on Blackwell (kvplan / measured 0.23-0.40 at
16,384 tokens), as a fraction FITTED on the kernel tables alone, and what it would move on the
section-3 rows (a counterfactual; nothing in kvplan changes: no field, preset or default).

- kvplan prices NVFP4 (W4A4) experts at the dense fraction of the card's FP4 peak
  (kvplan.perf.efficiency.Efficiency.experts_fraction: "FP4 experts: `dense`", 0.70); the
  measured tables (tests/data/moe_op/moe_nvfp4_rows.csv.gz: SGLang 0.5.9's FlashInfer CuTe DSL
  kernel on B200 and GB200, TensorRT-LLM 1.2.0rc5's CUTLASS flow on B200) run them slower.
- The fit (`fit_fp4_experts`, moe_op_bench.fit_moe_gemm's rule on these tables): the fit cases
  are the compute-bound ones, read in the measurements alone as moe_shape_fit reads them: 4,096
  to 16,384 tokens a rank where the latency is at least 1.6x the same case's at half the tokens;
  the fraction (of the FP4 peak) at which the median kvplan / measured of those cases is 1, by
  bisection. kvplan's price of a case: moe_op_bench.moe_price_s's form on the NVFP4 DeepSeek-R1
  checkpoint kvplan replays (tests/data/disagg/deepseek-r1-nvfp4.json), the table's engine
  and version, the table's GPU.
- The counterfactual (`--replay`): section 3's rows (disagg_rows.replay at its default
  switches) with every NVFP4 expert GEMM at the fitted fraction (`fp4_experts`, a patch of
  Efficiency.experts_fraction for FP4 math only, the bench's alone), beside the same rows at
  kvplan's price, both replayed here.

FINDING (ctxstep67; the fraction fitted and committed, 4c9ac93a, before any row below was
replayed with it; every section-3 row was read before: shaped; the aggregated rows are held
out, SHAPED_BY naming none of them)

- The fit: 20 compute-bound cases of the 180 NVFP4 ones -> 0.217 of the FP4 peak (kvplan: the
  dense 0.70). Median kvplan / measured by table, kvplan -> fitted: SGLang B200 (6) 0.38 -> 1.22,
  SGLang GB200 (6) 0.34 -> 1.07, TensorRT-LLM B200 (8) 0.23 -> 0.75: the engines' kernels differ
  by ~1.6x, one fraction leaves it.
- dis3j67's class, its 18 NVFP4 rows (SGLang 12, TensorRT-LLM 6; TTFT too low above 32 users),
  replayed here both ways (`--replay`; the before reproduces the page's ratios): TTFT low 18 ->
  15, median TTFT ratio 0.33 -> 0.59 (median |ln| 1.11 -> 0.54); inside on TTFT 0 -> 3 (gb200
  cfg483 c512 0.64 -> 0.77, cfg255 c64 0.68 -> 0.77, gb300 trtllm cfg373 c4096 0.71 -> 0.86),
  both inside 0 -> 2; the rows at a queue move most (cfg483 c8192 0.25 -> 0.47, cfg489 c2048
  0.32 -> 0.63), the lightest least (cfg374 / cfg421 c60 0.03 / 0.17 unchanged: the routing
  class). TPOT moves <= 0.09. The class's 31 FP8 rows do not move (FP4 math only).
- Section 3a whole (42 SGLang NVFP4 rows; the page: both 17, TTFT 23): TTFT inside 23 -> 23,
  both 17 -> 16, TTFT low 18 -> 15, TTFT high 1 -> 4 (cfg538 c1024 1.10 -> 1.83, cfg530 c128
  0.97 -> 1.62, gb200 cfg254 c1024 1.00 -> 1.48 leave the band high). With the 6 TensorRT-LLM
  class rows (48): median TTFT 0.76 -> 0.81, median |ln TTFT| 0.322 -> 0.281.
- aiconfigurator's aggregated SGLang B200 NVFP4 DeepSeek rows the aggregated bench replays (15
  of 84; HELD OUT; `--agg`): TTFT inside 7 -> 7, both 7 -> 7, median TTFT ratio 1.56 -> 1.71,
  median |ln| 0.445 -> 0.536 (worse: kvplan is already above their TTFT at ISL 8,192), TPOT
  median 1.04 -> 1.04.
So the fraction the kernel tables give brings the class's TTFT closer but closes 3 of 18 rows,
sends 3 inside rows high and worsens the held-out aggregated rows: it stays a counterfactual
(no Efficiency field, preset or default is written), and the class's shortfall is not the
experts' rate (ctxstep67's docstring: the step at table rates grows x1.16, the rates need x2.15).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from unittest.mock import patch

from kvplan import load_spec
from kvplan._util.dtypes import GemmMath
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.efficiency import Efficiency, device_efficiency
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time
from tests.benches import disagg_rows
from tests.benches import moe_op_bench as mob
from tests.benches.ctxstep67 import ROOT, _nvfp4_rows
from tests.benches.disagg_miss67 import direction
from tests.benches.disagg_rows import prospective_rows, replay

SPEC = ROOT / "tests" / "data" / "disagg" / "deepseek-r1-nvfp4.json"
FIT_MIN_TOKENS = 4096
COMPUTE_BOUND = 1.6  # latency at T over that at T / 2 (moe_shape_fit's reading)


@contextmanager
def fp4_experts(fraction: float | None) -> Iterator[None]:
    """Every NVFP4 expert GEMM at `fraction` of the FP4 peak (None: kvplan's own price)."""
    if fraction is None:
        yield
        return
    real = Efficiency.experts_fraction

    def fitted(self: Efficiency, ran: GemmMath, rows: float, dense: float, *a: object,
               **k: object) -> float:
        return fraction if ran is GemmMath.fp4 else real(self, ran, rows, dense, *a, **k)

    with patch.object(Efficiency, "experts_fraction", fitted):
        yield


@cache
def _spec():  # noqa: ANN202
    return load_spec(str(SPEC))


def price_ms(row: mob.Row, fraction: float | None = None) -> float:
    """kvplan's price of an NVFP4 table case: one MoE layer's experts op (the few small
    kernels moe_price_s adds at their floors left out: 4 us each, under 1% at these sizes)."""
    spec = _spec()
    gpu = get_gpu(row.gpu)
    eff = engine_efficiency(row.engine, device_efficiency(gpu), version=row.version)
    i = mob.moe_layer(spec)
    with fp4_experts(fraction):
        res = step_time(spec, gpu, tokens=row.tokens, context=row.tokens, requests=1,
                        phase="prefill", layout=Layout(tp=row.moe_ep, ep=row.moe_ep), eff=eff,
                        layers=range(i, i + 1))
    return res.by_op["experts"] * 1e3


def cases() -> list[mob.Row]:
    """The NVFP4 table cases (TensorRT-LLM's CUTLASS flow: its prefill kernel)."""
    return [r for r in _nvfp4_rows() if r.quant == "nvfp4"
            and r.kernel_source != "moe_torch_flow_min_latency"]


def fit_cases() -> list[mob.Row]:
    """The compute-bound cases of 4,096-16,384 tokens (module docstring)."""
    rows = cases()
    at = {(r.engine, r.gpu, r.moe_ep, r.tokens): r.measured_ms for r in rows}
    return [r for r in rows if r.tokens >= FIT_MIN_TOKENS
            and r.measured_ms >= COMPUTE_BOUND * at[(r.engine, r.gpu, r.moe_ep, r.tokens // 2)]]


def median_ratio(rows: list[mob.Row], fraction: float | None = None) -> float:
    return statistics.median(price_ms(r, fraction) / r.measured_ms for r in rows)


def fit_fp4_experts() -> float:
    """The fraction at which the fit cases' median kvplan / measured is 1 (bisection)."""
    rows = fit_cases()
    lo, hi = 0.01, 1.0
    for _ in range(20):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if median_ratio(rows, mid) > 1 else (lo, mid)
    return (lo + hi) / 2


def fit_lines(fraction: float) -> list[str]:
    rows = fit_cases()
    out = [f"NVFP4 experts: {len(rows)} compute-bound fit cases of {len(cases())}; fitted "
           f"fraction {fraction:.3f} of the FP4 peak (kvplan: the dense 0.70)", "",
           "| table | cases | median kvplan / measured, kvplan | at the fitted fraction |",
           "|---|---:|---:|---:|"]
    for key in sorted({(r.engine, r.gpu) for r in rows}):
        g = [r for r in rows if (r.engine, r.gpu) == key]
        out.append(f"| {key[0]} {key[1]} | {len(g)} | {median_ratio(g):.2f} | "
                   f"{median_ratio(g, fraction):.2f} |")
    return out


def _ttft(ratios: tuple[float, float] | None) -> str:
    return "sat." if ratios is None else f"{ratios[0]:.2f} ({direction(ratios[0])})"


def replay_lines(ids: list[str], fraction: float) -> Iterator[str]:
    """The rows at kvplan's price and at the fitted fraction, replayed here, a line each."""
    rows = {r["id"]: r for r in prospective_rows()}
    yield from ("| row | TTFT ratio | -> | TPOT ratio | -> |", "|---|---:|---:|---:|---:|")
    for i in ids:
        disagg_rows._setup.cache_clear()  # a setup holds its priced steps
        before = replay(rows[i], prospective=True)
        disagg_rows._setup.cache_clear()
        with fp4_experts(fraction):
            after = replay(rows[i], prospective=True)
        disagg_rows._setup.cache_clear()
        b, a = before.ratios, after.ratios
        yield (f"| {i} | {_ttft(b)} | {_ttft(a)} | {before.tpot_ms / before.measured_tpot_ms:.2f}"
               f" | {after.tpot_ms / after.measured_tpot_ms:.2f} |")


def agg_rows() -> list[dict[str, str]]:
    """aiconfigurator's aggregated rows of the class's engine and card with NVFP4 DeepSeek
    (SGLang, B200: the only aggregated Blackwell FP4 DeepSeek rows kvplan replays; TensorRT-LLM's
    aggregated scheduler is not simulated) that the aggregated bench replays."""
    from tests.benches import aiconfig_agg_runs as agg

    return [r for r in agg.rows() if r["backend"] == "sglang" and r["system"] == "b200_sxm"
            and r["precision"] == "fp4" and "DeepSeek" in r["model_path"]
            and not agg.why_not(r)]


def agg_lines(fraction: float) -> Iterator[str]:
    """The aggregated rows at kvplan's price and at the fitted fraction (held out unless
    SHAPED_BY names them)."""
    from tests.benches import aiconfig_agg_runs as agg

    shaped = agg.shaped_rows()
    yield from ("| aggregated row | shaped | TTFT ratio | -> | TPOT ratio | -> |",
                "|---|---|---:|---:|---:|---:|")
    for r in agg_rows():
        agg._setup.cache_clear()
        before = agg.replay(r)
        agg._setup.cache_clear()
        with fp4_experts(fraction):
            after = agg.replay(r)
        agg._setup.cache_clear()
        if before.ttft_ms is None or after.ttft_ms is None:
            yield f"| {r['id']} | - | not replayed | | | |"
            continue
        yield (f"| {r['id']} | {'yes' if before.id in shaped else 'no'} | "
               f"{before.ttft_ms / before.measured_ttft_ms:.2f} | "
               f"{after.ttft_ms / after.measured_ttft_ms:.2f} | "
               f"{before.tpot_ms / before.measured_tpot_ms:.2f} | "
               f"{after.tpot_ms / after.measured_tpot_ms:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replay", nargs="*", default=[], help="row ids to replay both ways")
    ap.add_argument("--agg", action="store_true", help="the aggregated rows, both ways")
    args = ap.parse_args()
    f = fit_fp4_experts()
    print("\n".join(fit_lines(f)))
    if args.replay:
        print()
        for line in replay_lines(args.replay, f):
            print(line, flush=True)
    if args.agg:
        print()
        for line in agg_lines(f):
            print(line, flush=True)


if __name__ == "__main__":
    main()
