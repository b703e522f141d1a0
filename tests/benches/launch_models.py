"""Issues 29 / 30 (launchfit53): which eager-launch model is consistent with both the fit rows and
SGLang's code? A counterfactual bench: nothing here changes a default or a generated page.

Each model (kvplan.perf.launch_model: "sum", today's; "op_max", each kernel max(its launch
share, its GPU time); "stream", the async eager stream, the CPU running ahead under long kernels)
gets its one constant refitted by PREFILL_LAUNCH_FIT's procedure (kvplan.perf.efficiency;
tests/benches/cost_bench.py `fitted_prefill_launch_s`): on the same 4 engine-timed SGLang
bench_one_batch prefills, the median of the per-row launch times that make each exact, rounded
to a whole us as 70 was. Then, at that constant, it prints:

- `fit`: each fit row's exact value and its measured / predicted at the median (the spread);
- `section3`: examples/disagg-bench.md section 3's counts (both / TTFT / TPOT inside the band)
  and median TTFT ratios by prefill attention (TP / DP) and ISL, over the replayed prospective
  rows (tests/benches/disagg_rows.py), every SGLang efficiency the cost model takes replaced
  (the switch idea of branch overlap53's `overlap` counterfactual);
- `simulate`: examples/simulate-bench.md's SGLang serving rows' median |error| by split;
- `prospective52`: that set's medians (tests/benches/prospective52_runs.py).

Model (c), a model plus SGLang's overlap loop across steps (branch overlap53, not merged): the
fit is the same as without it (bench_one_batch runs no overlap: bench_one_batch.py:384,
:557-561, SGLang 0.5.8.post1), and "stream"'s spill composes exactly with overlap53's rule
(kvplan.perf.launch_model docstring), so its figures come from this script run on a tree with
overlap53 merged (the launchfit53 report gives them).

Measured at launchfit53 (on branch merge + this; "+ overlap": the same on a scratch merge of
overlap53, not committed). Fit (exact us per row: R1 1 x 128 / V3 1 x 1000 / V3 bmm 1 x 1000 /
V3.1 16 x 512; max / min): sum 76.7 / 64.7 / 58.6 / 74.5, 1.31 -> 70 us; op_max 92.2 / 83.5 /
76.5 / 110.1, 1.44 -> 88 us; stream 93.2 / 85.2 / 79.1 / 136.9, 1.73 -> 89 us. Section 3, 92
rows, both / TTFT / TPOT in band, median TTFT ratio (TP 1k / TP 8k / DP 1k / DP 8k):
sum 24 / 30 / 67, 0.80 (0.82 / 0.42 / 0.76 / 1.14); op_max 13 / 17 / 69, 0.69 (0.76 / 0.35 /
0.69 / 0.96); stream 12 / 13 / 72, 0.45 (0.70 / 0.30 / 0.45 / 0.50); + overlap: sum 12 / 17 / 73,
0.46 (0.82 / 0.50 / 0.30 / 0.45); op_max 9 / 13 / 73, 0.41 (0.75 / 0.41 / 0.25 / 0.44); stream
7 / 8 / 72, 0.38 (0.68 / 0.33 / 0.24 / 0.44). simulate-bench SGLang rows, median |err| TPOT
(held out 7 / shaped a rule 41 / shaped the launch 9 / shaped the replay 11 runs) and TTFT
(shaped a rule 14 / shaped the launch 9): sum 5.8 / 12.2 / 12.7 / 8.7 %, 7.2 / 20.6 %; op_max
5.6 / 12.1 / 12.7 / 10.2, 13.4 / 24.4; stream 5.2 / 12.1 / 12.7 / 9.1, 13.9 / 32.0; + overlap:
sum 4.8 / 13.1 / 12.7 / 7.4, 7.2 / 17.1; op_max 4.8 / 13.1 / 12.7 / 7.0, 13.4 / 24.4; stream
4.8 / 13.2 / 12.7 / 7.0, 13.9 / 32.0. prospective52 (15 runs), TTFT mean / median, TPOT mean /
median, E2E mean: sum 25.0 / 28.6 / 12.6 / 12.5 / 12.5 %; op_max 22.4 / 32.5 / 12.9 / 12.5 /
12.9; stream 35.7 / 31.6 / 13.1 / 12.7 / 16.7; + overlap: sum 17.0 / 35.5 / 13.1 / 13.9 / 17.2;
op_max 17.6 / 38.6 / 13.1 / 13.9 / 19.1; stream 35.7 / 40.4 / 13.1 / 13.9 / 19.5.

Run: PYTHONPATH=. python -m tests.benches.launch_models [fit] [section3] [simulate]
[prospective52] (none: fit only; the others take minutes each); `section3:op_max,stream`: those
models only.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from typing import Any
from unittest.mock import patch

from kvplan.perf.launch_model import LAUNCH_MODELS
from tests.benches import cost_bench

US = 1e-6
MODELS = list(LAUNCH_MODELS)  # the models a run prints (main: `part:model,model`)


def exact_launch_s(case: cost_bench.PrefillCase, model: str) -> float:
    """The launch time per op at which `case`'s predicted prefill equals its measurement under
    `model` (bisection, as cost_bench._floor_that_fits: the prediction grows with it)."""
    lo, hi = 0.0, 1e-3
    for _ in range(60):
        mid = (lo + hi) / 2
        tweak = {"prefill_launch_s": mid, "prefill_launch_model": model}
        if cost_bench.predicted_prefill_ms(case, tweak) < case.measured_ms:
            lo = mid
        else:
            hi = mid
    return lo


def fit_cases() -> list[cost_bench.PrefillCase]:
    """PREFILL_LAUNCH_FIT's rows (no client TTFT is in that fit)."""
    assert not any(c.fit for c in cost_bench.TTFT_CASES)
    return [c for c in cost_bench.PREFILL_CASES if c.fit]


def fitted_launch_s(model: str) -> float:
    """The refitted constant of `model`: the median exact value, to a whole us (as 70)."""
    exact = [exact_launch_s(c, model) for c in fit_cases()]
    return round(statistics.median(exact) / US) * US


@contextmanager
def launch_model(model: str, launch_s: float) -> Iterator[None]:
    """Every efficiency the engine rules hand out (kvplan.perf.engine_traits.engine_efficiency,
    where the simulator's set-up imported it too) under `model` at `launch_s` where it pays a
    launch at all (SGLang's), for this bench's counterfactuals only."""
    from kvplan.analysis.simulate import engine_setups as run  # the step costs are built there
    from kvplan.perf import engine_traits

    real = engine_traits.engine_efficiency

    def swapped(*args: Any, **kwargs: Any) -> Any:
        eff = real(*args, **kwargs)
        if not eff.prefill_launch_s:
            return eff
        return replace(eff, prefill_launch_s=launch_s, prefill_launch_model=model)

    with ExitStack() as stack:
        stack.enter_context(patch.object(engine_traits, "engine_efficiency", swapped))
        stack.enter_context(patch.object(run, "engine_efficiency", swapped))
        yield


def print_fit() -> None:
    print("## The fit rows under each launch model\n")
    print("| model | constant us | " + " | ".join(c.label for c in fit_cases())
          + " | spread (max / min exact) |")
    print("|---|---:|" + "---:|" * len(fit_cases()) + "---:|")
    for model in MODELS:
        exact = [exact_launch_s(c, model) for c in fit_cases()]
        fit = fitted_launch_s(model)
        cells = []
        for case, value in zip(fit_cases(), exact, strict=True):
            tweak = {"prefill_launch_s": fit, "prefill_launch_model": model}
            ratio = case.measured_ms / cost_bench.predicted_prefill_ms(case, tweak)
            cells.append(f"{value / US:.1f} us, {ratio:.2f}")
        print(f"| {model} | {fit / US:.0f} | " + " | ".join(cells)
              + f" | {max(exact) / min(exact):.2f} |")
    print("\nEach cell: the launch time per op that makes the row exact, and measured / "
          "predicted at the model's median.")


def print_section3() -> None:
    from tests.benches import disagg_rows
    from tests.benches.disagg_bench import BAND

    by_id = {disagg_rows.PREFIX + r["id"]: r for r in disagg_rows.prospective_rows()}

    def line(rows: list[Any]) -> str:
        def within(i: int) -> int:
            return sum(1 for r in rows if r.ratios and BAND[0] <= r.ratios[i] <= BAND[1])
        ratios = [r.ratios[0] for r in rows if r.ratios]
        med = statistics.median(ratios) if ratios else float("nan")
        return (f"{len(rows)} rows: both {sum(r.inside for r in rows)}, TTFT {within(0)}, "
                f"TPOT {within(1)}, median TTFT ratio {med:.2f}")

    print("\n## Section 3 (replayed prospective rows) under each launch model\n")
    for model in MODELS:
        fit = fitted_launch_s(model)
        disagg_rows._setup.cache_clear()  # its prefill times are the model's (not the last's)
        with launch_model(model, fit):
            done = [r for r in (disagg_rows.replay(row, prospective=True)
                                for row in disagg_rows.prospective_rows()) if r.replayed]
        disagg_rows._setup.cache_clear()
        print(f"- {model} ({fit / US:.0f} us): {line(done)}")
        for name, dp in (("TP", False), ("DP", True)):
            for isl in (1024, 8192):
                group = [r for r in done if r.input_len == isl and dp == (
                    int(by_id[r.id]["prefill_attention_dp_size"] or 1) > 1)]
                print(f"  - {name}-attention prefill, ISL {isl:,}: {line(group)}")


def print_simulate() -> None:
    from tests.benches import simulate_bench

    print("\n## simulate-bench SGLang serving rows under each launch model\n")
    for model in MODELS:
        fit = fitted_launch_s(model)
        with launch_model(model, fit):
            table = simulate_bench.rows("sglang")
        print(f"### {model} ({fit / US:.0f} us)\n")
        for split in dict.fromkeys(r.split for r in table):
            tpot, ttft = simulate_bench.tpot_ttft_errors([r for r in table if r.split == split])
            print(f"- {split}: TPOT {tpot}, TTFT {ttft}")
        print()


def print_prospective52() -> None:
    from tests.benches import prospective52_runs as p52
    from tests.benches.prospective_runs import PAIRS52, medians_line

    print("\n## prospective52 under each launch model\n")
    for model in MODELS:
        fit = fitted_launch_s(model)
        with launch_model(model, fit):
            part = [p52.run_one(run) for run in p52.load(p52.DATA)["runs"]]
        print(f"- {model} ({fit / US:.0f} us): "
              + medians_line("prospective52", part, pairs=PAIRS52))


PARTS = {"fit": print_fit, "section3": print_section3, "simulate": print_simulate,
         "prospective52": print_prospective52}


def main(argv: list[str]) -> None:
    for arg in argv or ["fit"]:
        name, _, models = arg.partition(":")
        MODELS[:] = models.split(",") if models else LAUNCH_MODELS
        if name not in PARTS or not set(MODELS) <= set(LAUNCH_MODELS):
            raise SystemExit(f"launch_models: unknown part {name!r} (one of {', '.join(PARTS)})")
        PARTS[name]()
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
