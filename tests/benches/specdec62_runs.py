"""specdec62: `kvplan simulate` with vLLM speculative decoding against the frozen public rows
of tests/data/sim_to_real/specdec62.json (vLLM issue #20780: Llama-3.1-8B, batch size 1,
MT-Bench, EAGLE-1 / EAGLE-3 at k 2..7). Run once after freezing: python -m
tests.benches.specdec62_runs (prints a markdown table: measured vs simulated mean TPOT, the
drafter as one layer of the target's shape and, eagle3draft63, priced from the head's own
config.json: tests/data/spec_drafts)."""

from __future__ import annotations

import json
from pathlib import Path

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.spec_acceptance import Acceptance
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.sources.draft_config import load_draft_config
from kvplan.sources.resolve import load_model

DATA = Path(__file__).parents[1] / "data" / "sim_to_real" / "specdec62.json"
# vLLM main on 2025-07-10 lies between v0.9.2 and v0.10.0 (the data's caveats): kvplan's 0.10.0.
ENGINE_VERSION = "0.10.0"
# The rows' heads (tests/data/spec_drafts/SOURCES.md).
HEADS = Path(__file__).parents[1] / "data" / "spec_drafts"
HEAD_CONFIGS = {"eagle": HEADS / "eagle-llama3.1-instruct-8b.json",
                "eagle3": HEADS / "eagle3-llama3.1-instruct-8b.json"}


def simulated_tpot_ms(row: dict, setup_: dict, *, own_head: bool = False) -> float:
    spec = load_model(setup_["model"])[0]
    kw = {} if row["method"] is None else {"speculative_method": row["method"],
                                           "num_speculative_tokens": row["k"]}
    inputs = estimate_inputs(spec, context=8192, gpu=setup_["gpu"],  # type: ignore[arg-type]
                             engine_version=ENGINE_VERSION, **kw)
    acc = (None if row["method"] is None
           else Acceptance.of(k=row["k"], mean_accept_len=row["mean_accept_len"]))
    head = (load_draft_config(str(HEAD_CONFIGS[row["method"]]))
            if own_head and row["method"] is not None else None)
    sim, _ = setup(spec, inputs, acceptance=acc, draft_config=head)
    reqs = [RequestSpec(arrival_s=0.0, prompt_len=setup_["input_len_approx"],
                        output_len=setup_["output_len"])] * setup_["num_prompts"]
    res = simulate(sim, reqs, concurrency=setup_["concurrency"])
    tpot = res.metrics.tpot_ms["mean"]
    assert tpot is not None
    return tpot


def main() -> None:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    print("| row | AL | measured TPOT ms | kvplan TPOT ms (target-shaped layer) | error | "
          "kvplan TPOT ms (head's config) | error |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    errs: dict[tuple[str, bool], list[float]] = {}
    for row in data["rows"]:
        cells = []
        for own in (False, True):
            got = simulated_tpot_ms(row, data["setup"], own_head=own)
            err = got / row["mean_tpot_ms"] - 1
            if row["method"] is not None:
                errs.setdefault((row["method"], own), []).append(abs(err))
                errs.setdefault(("all", own), []).append(abs(err))
            cells.append(f"{got:.2f} | {err:+.1%}")
        print(f"| {row['id']} | {row['mean_accept_len'] or '-'} | {row['mean_tpot_ms']:.2f} | "
              f"{' | '.join(cells)} |")
    for method in ("all", "eagle", "eagle3"):
        for own in (False, True):
            e = errs[(method, own)]
            print(f"\n{method} ({'head config' if own else 'target-shaped'}): {len(e)} rows, "
                  f"mean |error| {sum(e) / len(e):.1%}, max {max(e):.1%}")


if __name__ == "__main__":
    main()
