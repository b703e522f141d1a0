"""Parts of examples/simulate-bench.md's aggregated section printed from their own rows alone
(seconds to a minute of CPU, not the section's ~13 minutes), to check a change to one cohort
without regenerating the page: each prints the lines that part's rows make on the page.

    python -m tests.benches.aiconfig_agg_parts --nightly   # cohort nightly55 (aiconfig_nightly)
    python -m tests.benches.aiconfig_agg_parts --sglnightly  # sglnightly62: SGLang's nightlies
    python -m tests.benches.aiconfig_agg_parts --dp        # cohort aggdp55 (aiconfig_agg_dp)
    python -m tests.benches.aiconfig_agg_parts --trt-ep    # trta2a56 (aiconfig_agg_trtep)
    python -m tests.benches.aiconfig_agg_parts --trt-prefill  # trtprefill57: every TRT-LLM row
"""

from __future__ import annotations

import collections
import sys

from tests.benches import (
    aiconfig_agg_dp,
    aiconfig_agg_trtep,
    aiconfig_nightly,
    aiconfig_sglang_nightly,
)
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.aiconfig_agg_text import TRTLLM_EP_FINDING, TRTLLM_PREFILL_FINDING
from tests.benches.disagg_rows import Replay


def print_cohort(cohort: str, part: list[Replay], *texts: str) -> None:
    """A cohort's part from `part`, the replays of the rows that make it: the cohort's lines,
    the refusals among those rows, their table rows, then `texts` (its findings)."""
    for line in agg.cohort_lines(part)[1:]:
        if line.startswith(f"| cohort {cohort}"):
            print(line)
    whys = collections.Counter(r.why_not for r in part if not r.replayed)
    for why, n in sorted(whys.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"| {why} | {n:,} |")
    for r in part:
        if r.replayed:
            print(agg._row_line(r))
    for text in texts:
        print(f"\n{text}")


def print_trt_ep() -> None:
    """TensorRT-LLM's EP = TP rows under TP attention (the 142 that shaped trta2a56's rule;
    some 40 s of CPU): their split line, the prefill split and the finding."""
    part = [agg.replay(r) for r in agg.rows() if aiconfig_agg_trtep.is_tp_attention_ep(r)]
    done = [r for r in part if r.replayed]
    for split in sorted({agg.split_of(r) for r in done}):
        print(agg._line(f"split: {split}", [r for r in done if agg.split_of(r) == split]))
    aiconfig_agg_trtep.print_split(agg._representative)
    print(f"\n{TRTLLM_EP_FINDING}")


def print_trt_prefill() -> None:
    """Every TensorRT-LLM row (the 493 replayed that trtprefill57's eager-prefill rule moves;
    some 5 minutes of CPU): their line, by split and by checkpoint, then the finding."""
    part = [agg.replay(r) for r in agg.rows() if r["backend"] == "trtllm"]
    done = [r for r in part if r.replayed]
    print(agg._line("backend trtllm", part))
    for split in sorted({agg.split_of(r) for r in done}):
        print(agg._line(f"backend trtllm, split: {split}",
                        [r for r in done if agg.split_of(r) == split]))
    for key in sorted({(agg.row_of(r)["model_path"], agg.row_of(r)["precision"]) for r in done}):
        print(agg._line(f"backend trtllm: {key[0]} {key[1]}", [
            r for r in done if (agg.row_of(r)["model_path"], agg.row_of(r)["precision"]) == key]))
    print(f"\n{TRTLLM_PREFILL_FINDING}")


def main(argv: list[str]) -> None:
    if argv == ["--nightly"]:  # the non-release rows (some 11 s of CPU)
        print_cohort(aiconfig_nightly.COHORT,
                     [agg.replay(r) for r in agg.rows() if agg.release(r) is None],
                     aiconfig_nightly.FINDING)
    elif argv == ["--sglnightly"]:  # SGLang's non-release rows (sglnightly62)
        print_cohort(aiconfig_sglang_nightly.COHORT,
                     [agg.replay(r) for r in agg.rows()
                      if agg.release(r) is None and r["backend"] == "sglang"],
                     aiconfig_sglang_nightly.FINDING, aiconfig_sglang_nightly.SINCE)
    elif argv == ["--dp"]:  # the rows stating attention DP
        print_cohort(aiconfig_agg_dp.COHORT,
                     [agg.replay(r) for r in agg.rows() if agg.layout(r)[1] > 1],
                     aiconfig_agg_dp.FINDING, aiconfig_agg_dp.AS_RUN_FINDING,
                     aiconfig_agg_dp.TRTDP_FINDING)
    elif argv == ["--trt-ep"]:
        print_trt_ep()
    elif argv == ["--trt-prefill"]:
        print_trt_prefill()
    else:
        sys.exit("usage: python -m tests.benches.aiconfig_agg_parts --nightly | --sglnightly | --dp"
                 " | --trt-ep"
                 " | --trt-prefill")


if __name__ == "__main__":
    main(sys.argv[1:])
