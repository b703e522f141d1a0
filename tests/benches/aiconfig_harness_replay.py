"""A COUNTERFACTUAL for the low-load rows of aiconfigurator's aggregated set (issue 30,
aggvllmttft55): the vLLM InferenceX rows at concurrency <= aiconfig_harness.LOW_LOAD replayed
with InferenceX's WORKLOAD instead of the bench's, everything else as the frozen bench sets it
(the engine's defaults, the same step costs). Written after the rows' TTFT was seen, from the
harness's code alone (aiconfig_harness.HARNESS): nothing fitted, no rule of kvplan changed,
not the set's headline. It asks whether the workload and the statistic explain the offset.

InferenceX's workload (SemiAnalysisAI/InferenceX at aiconfig_harness.INFERENCEX_COMMIT,
utils/bench_serving/benchmark_serving.py:112-117 `sample_uniform`, benchmark_lib.sh:317-335,
the scripts' `--num-prompts $(( CONC * 10 ))`): PROMPTS_PER_USER x C requests, each prompt's
length drawn uniformly from [int(0.8 ISL), ISL] and each output's from [int(0.8 OSL), OSL]
(range ratio 0.8, benchmark-tmpl.yml:67), a closed loop of C users from t = 0, every request
measured (the start-up burst and the drain included). Drawn here with a fixed seed (the
client's numpy draws are not recorded; the distribution is what matters). The warm-up requests
precede the measured run and are not simulated (they leave no state: prefix caching does not
carry over between random prompts). Written once since aggwork64 in
tests.benches.aiconfig_agg_client (the bench replays every InferenceX row with it); re-exported
here under the same names.

Run: python -m tests.benches.aiconfig_harness_replay (a few minutes of CPU).
"""

from __future__ import annotations

import statistics
import sys

from kvplan._util.errors import KvplanError
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_harness
from tests.benches.aiconfig_agg_client import (  # noqa: F401  (re-exported: the studies' name)
    PROMPTS_PER_USER,
    RANGE_RATIO,
    SEED,
    sample_uniform,
    workload,
)
from tests.benches.aiconfig_agg_loop import row_run
from tests.benches.disagg_rows import stated_concurrency


def harness_ttft(row: dict[str, str]) -> tuple[float, float] | None:
    """(mean, median) TTFT in ms over every request of InferenceX's workload for the row, in
    the frozen bench's setup; None where kvplan refuses."""
    conc = stated_concurrency(row)
    assert conc is not None
    version = agg.release(row)
    assert version is not None
    try:
        result = row_run(row, agg.row_setup(row, version),
                         workload(int(row["isl"]), int(row["osl"]), conc))
    except KvplanError:
        return None
    ttfts = [(r.first_token_s - r.sent_s) * 1e3 for r in result.finished]
    return statistics.fmean(ttfts), statistics.median(ttfts)


def studied() -> list[dict[str, str]]:
    """The vLLM InferenceX rows the frozen bench replays at concurrency <= LOW_LOAD with
    1,024-token outputs (the 8,192-token outputs cost 8x the CPU and were left out before any
    row was run), in file order: the 107 the FINDING quotes, at a release and without
    attention DP (the nightly builds' rows, nightly55, and the attention-DP rows, aggdp55, that
    the bench replays since were not studied)."""
    h = aiconfig_harness
    return [r for r in agg.rows()
            if r["backend"] == "vllm" and h.provenance(r) == h.INFERENCEX_ROWS
            and not agg.why_not(r) and (stated_concurrency(r) or 0) <= h.LOW_LOAD
            and r["osl"] == "1024"
            and agg.release(r) is not None and agg.layout(r)[1] == 1]


def main() -> None:
    lines = []
    for row in studied():
        frozen = agg.replay(row)  # the frozen bench's replay of the row, as on the page
        got = harness_ttft(row)
        if frozen.ttft_ms is None or got is None:
            continue
        lines.append((row, float(row["silicon_ttft_ms"]), frozen.ttft_ms, *got))
        print(row["id"], *(f"{x:.1f}" for x in lines[-1][1:]), file=sys.stderr, flush=True)
    med = statistics.median
    print("| rows | n | median measured - kvplan, frozen | the same, harness mean | "
          "the same, harness median | median ratio, frozen | the same, harness mean |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for isl in sorted({int(r["isl"]) for r, *_ in lines}) + [0]:
        part = [x for x in lines if isl in (0, int(x[0]["isl"]))]
        name = "all" if isl == 0 else f"ISL {isl:,}"
        print(f"| {name} | {len(part)} | {med(m - f for _, m, f, _, _ in part):.1f} | "
              f"{med(m - a for _, m, _, a, _ in part):.1f} | "
              f"{med(m - b for _, m, _, _, b in part):.1f} | "
              f"{med(f / m for _, m, f, _, _ in part):.2f} | "
              f"{med(a / m for _, m, _, a, _ in part):.2f} |")


if __name__ == "__main__":
    main()
