"""specdec62: `kvplan simulate` with vLLM speculative decoding against the frozen public rows
of tests/data/sim_to_real/specdec62.json (vLLM issue #20780: Llama-3.1-8B, batch size 1,
MT-Bench, EAGLE-1 / EAGLE-3 at k 2..7). Run once after freezing: python -m
tests.benches.specdec62_runs (prints a markdown table: measured vs simulated mean TPOT)."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.spec_acceptance import Acceptance
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.sources.resolve import load_model

DATA = Path(__file__).parents[1] / "data" / "sim_to_real" / "specdec62.json"
# vLLM main on 2025-07-10 lies between v0.9.2 and v0.10.0 (the data's caveats): kvplan's 0.10.0.
ENGINE_VERSION = "0.10.0"


def simulated_tpot_ms(row: dict, setup_: dict) -> float:
    spec = load_model(setup_["model"])[0]
    kw = {} if row["method"] is None else {"speculative_method": row["method"],
                                           "num_speculative_tokens": row["k"]}
    inputs = estimate_inputs(spec, context=8192, gpu=setup_["gpu"],  # type: ignore[arg-type]
                             engine_version=ENGINE_VERSION, **kw)
    acc = (None if row["method"] is None
           else Acceptance.of(k=row["k"], mean_accept_len=row["mean_accept_len"]))
    sim, _ = setup(spec, inputs, acceptance=acc)
    reqs = [RequestSpec(arrival_s=0.0, prompt_len=setup_["input_len_approx"],
                        output_len=setup_["output_len"])] * setup_["num_prompts"]
    res = simulate(sim, reqs, concurrency=setup_["concurrency"])
    tpot = res.metrics.tpot_ms["mean"]
    assert tpot is not None
    return tpot


def main() -> None:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    print("| row | AL | measured TPOT ms | kvplan TPOT ms | error |")
    print("|---|---:|---:|---:|---:|")
    errs = []
    for row in data["rows"]:
        got = simulated_tpot_ms(row, data["setup"])
        err = got / row["mean_tpot_ms"] - 1
        if row["method"] is not None:
            errs.append(abs(err))
        print(f"| {row['id']} | {row['mean_accept_len'] or '-'} | {row['mean_tpot_ms']:.2f} | "
              f"{got:.2f} | {err:+.1%} |")
    print(f"\nspeculative rows: {len(errs)}, mean |error| {sum(errs) / len(errs):.1%}, "
          f"max {max(errs):.1%}")


if __name__ == "__main__":
    main()
