"""Which InferenceX config ran an aggregated row, and the rows that cannot say (mtprows67,
issue 30).

sgldec67 found that at SemiAnalysisAI/InferenceX 12ba0ae07 (2026-03-25 16:34:10Z, the
`measured=` time of every SGLang DeepSeek-R1 FP8 B200 row) two configs of
.github/configs/nvidia-master.yaml ran the same points: `dsr1-fp8-b200-sglang` (:1762-1781,
dsr1_fp8_b200.sh, no speculative decoding) and `dsr1-fp8-b200-sglang-mtp` (:1944-1960,
dsr1_fp8_b200_mtp.sh, spec-decoding: mtp, EAGLE), both image lmsysorg/sglang:v0.5.9-cu130;
the rows state neither the config nor speculative decoding, and the aggregated replay runs
every row as the plain script (aiconfig_agg_scripts.scripts_of: the stem without _mtp).

The table (tests/data/sim_to_real/inferencex_agg_row_configs.csv, written by
tests.benches.aiconfig_agg_configs_extract from a clone; its docstring states the match): for
each replayable InferenceX row, every config of the master files at the row's commit whose
search space holds the row's point (model, GPU, precision, engine, ISL / OSL, TP, EP,
attention DP, concurrency), with its image and the matching entry's spec-decoding. A row is
AMBIGUOUS where more than one config holds its point and the row's own fields do not pick one:
the only field that can is its `image=` (silicon_data_source), kept where it equals some
candidates' image (the two DeepSeek configs share theirs: it picks neither). The replay
refuses an ambiguous row with the reason (`why_ambiguous`, aiconfig_agg_runs.replay_on) where
REFUSE_AMBIGUOUS; a row no config holds (a config edited between the run and the commit, a
pull request's run) is not refused here: nothing says another config ran it.
"""

from __future__ import annotations

import csv
import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "sim_to_real" / "inferencex_agg_row_configs.csv"
COLUMNS = ("id", "commit", "file", "config", "image", "spec_decoding")
# mtprows67: refuse the rows two or more configs could have produced (frozen before the
# evaluation, tests.benches.mtprows67_eval; False: the page before it).
REFUSE_AMBIGUOUS = True


class Candidate(NamedTuple):
    commit: str
    file: str
    config: str
    image: str
    spec_decoding: str


@cache
def _table() -> dict[str, tuple[Candidate, ...]]:
    out: dict[str, list[Candidate]] = {}
    with FILE.open() as f:
        for r in csv.DictReader(f):
            out.setdefault(r["id"], []).append(Candidate(*(r[c] for c in COLUMNS[1:])))
    return {k: tuple(v) for k, v in out.items()}


def candidates(row: dict[str, str]) -> tuple[Candidate, ...]:
    """The configs whose search space holds the row's point, as the table lists them."""
    return _table().get(row["id"], ())


def row_image(row: dict[str, str]) -> str:
    m = re.search(r"image=([^;\s]+)", row["silicon_data_source"])
    return m.group(1) if m else ""


def identified(row: dict[str, str]) -> tuple[Candidate, ...]:
    """The candidates left once the row's own `image=` picks among them (all where it equals
    none: a row's image is not read as excluding every config)."""
    found = candidates(row)
    same = tuple(c for c in found if c.image == row_image(row))
    return same or found


def why_ambiguous(row: dict[str, str]) -> str:
    """The refusal of a row two or more configs could have produced ("" where one or none)."""
    left = identified(row)
    if not REFUSE_AMBIGUOUS or len({c.config for c in left}) < 2:
        return ""
    names = ", ".join(f"{c.config} (spec-decoding {c.spec_decoding})"
                      for c in sorted(left, key=lambda c: c.config))
    return (f"InferenceX configs {names} both ran this point at {left[0].commit} "
            f"({left[0].file}); the row does not say which")


def why_speculative(row: dict[str, str]) -> str:
    """The refusal of a row that one config identifies whose entry decodes speculatively
    (spec-decoding other than none: the replay runs the plain script, no draft model)."""
    left = identified(row)
    if not REFUSE_AMBIGUOUS or len({c.config for c in left}) != 1:
        return ""
    c = left[0]
    if c.spec_decoding in ("none", ""):
        return ""
    return (f"InferenceX config {c.config} (spec-decoding {c.spec_decoding}) ran this point at "
            f"{c.commit}, the only one that did: a speculative-decoding run, replayed without")


def why_refused(row: dict[str, str]) -> str:
    """Why the aggregated replay refuses the row for its config ("" where it does not)."""
    return why_ambiguous(row) or why_speculative(row)


# The record of tests.benches.mtprows67_eval's one run (rule frozen at 164007f0 before it);
# printed after aiconfig_agg_scripts.FINDING by aiconfig_agg_runs.print_harness.
FINDING = (
    "mtprows67: since this change the page refuses, with the reason, an InferenceX row that "
    "two or more of InferenceX's master configs could have produced at the row's commit (same "
    "model, GPU, precision, engine, ISL / OSL, TP / EP / attention DP, concurrency; "
    "tests/data/sim_to_real/inferencex_agg_row_configs.csv, tests/benches/"
    "aiconfig_agg_configs.py) where its own image= does not pick one, and a row whose one "
    "config ran it with speculative decoding (MTP): the replay has no draft model and passes "
    "the plain script's flags. Every pair found is a plain config and its -mtp twin "
    "(DeepSeek-R1 FP8 B200 SGLang at 12ba0ae07, the pairs sgldec67 found; DeepSeek-R1 FP4 / "
    "FP8 B200 and FP8 H200 TensorRT-LLM; Qwen3.5 and DeepSeek-R1 B300 SGLang). Of the 1,311 "
    "replayable InferenceX rows, 134 are ambiguous and 80 an MTP config's alone (SGLang B200 "
    "35 + 42 of 217, B300 50 of 99; TensorRT-LLM B200 36 + 36 of 192, H200 13 + 2 of 27; "
    "vLLM none); 206 rows no config's space holds (130 wip=True pull-request runs) stay "
    "replayed: nothing says another config ran them. Nothing fitted, no figure read to pick a "
    "row. Before -> after on aggflags67's subsets (each arm over the rows it replays; the "
    "rows kept replay the same): fixed lengths (96 rows), replayed 94 -> 75, both inside "
    "29 -> 22, median |TTFT err| 39.7 -> 41.3 %, TTFT ratio 1.23 -> 1.34 (held out 61 -> 49: "
    "both inside 23 -> 17, 39.9 -> 41.3 %; shaped 33 -> 26: 6 -> 5, 39.5 -> 48.7 %, |TPOT "
    "err| 15.6 -> 10.5 %: the refused TensorRT-LLM rows had TPOT ratio 1.74, kvplan's plain "
    "decode against MTP-fast measured TPOTs); SGLang 29 -> 17 replayed, both inside 7 -> 1 "
    "(the rows left were among its best); under the client workload (17 rows) replayed "
    "17 -> 12, both inside 8 -> 7, |TTFT err| 21.1 -> 20.5 %, |TPOT err| 10.9 -> 9.4 %. At "
    "the fixed lengths the figures get worse (7 of the 19 refused rows were inside): a row "
    "inside that ran another config than the one replayed is no evidence for the model, so "
    "the refusal stands as the default.")
