"""The custom all-reduce's fixed parts (one-shot t1, two-shot t2) FITTED on aiconfigurator's H100
tables (tests/data/dense_op: vLLM 0.19.0's and SGLang 0.5.9's custom all-reduce replayed in a
CUDA graph), H200's and B200's held out; a counterfactual to nvlink4's values (5.7 / 13.1 us,
from vLLM PR 24111's benchmark: kvplan/hardware/interconnects.json), judged on serving rows by
tests/benches/allreduce_fit_bench.py.

The fit follows the rule kvplan.hardware.interconnect.Interconnect.all_reduce_s states and
custom_ar_fixed_s computes: each row's measured time less the bytes a rank reads from its peers
at the link's 360 GB/s, (n - 1) x the buffer one-shot, 2 (n - 1) / n x it two-shot; the dispatch
(vLLM / SGLang csrc custom_all_reduce.cuh REDUCE_CASE, as the interconnect module's docstring
gives it) says which rows are one-shot (2 ranks; 4 ranks under 512 KiB; 8 ranks under 256 KiB)
and which two-shot; buffers up to 1 MiB, as the PR 24111 medians took. t1 and t2 are the medians
over those rows (`fit_custom_ar`). The constants (`FIT_T1_S`, `FIT_T2_S`) are what that gave at
this module's first commit, before any serving row was run with them.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from kvplan._util.units import KiB, MiB

if TYPE_CHECKING:  # pragma: no cover
    from tests.benches.dense_op_bench import ArRow

FIT_GPU = "H100-80GB"
FIT_SOURCES = ("vllm graph", "sglang graph")
FIT_MAX_BYTES = 1 * MiB
LINK = "nvlink4"
# fit_custom_ar(read_ar_rows()) at this module's first commit: 4.622 / 9.371 us (68 / 10 rows).
FIT_T1_S = 4.62e-6
FIT_T2_S = 9.37e-6


def one_shot(ranks: int, nbytes: int) -> bool:
    """vLLM / SGLang's REDUCE_CASE: the one-shot kernel at 2 ranks, and under 512 KiB at 4
    ranks, under 256 KiB at 8 (kvplan.hardware.interconnect.Interconnect.all_reduce_s)."""
    return ranks == 2 or (ranks <= 4 and nbytes < 512 * KiB) or nbytes < 256 * KiB


def fit_rows(rows: list[ArRow], gpu: str = FIT_GPU) -> list[ArRow]:
    return [r for r in rows if r.gpu == gpu and r.source in FIT_SOURCES
            and r.nbytes <= FIT_MAX_BYTES]


def fixed_parts(rows: list[ArRow], bytes_per_s: float) -> tuple[list[float], list[float]]:
    """Each row's time less its bytes term: (one-shot rows', two-shot rows') seconds."""
    one, two = [], []
    for r in rows:
        t = r.measured_ms / 1e3
        if one_shot(r.ranks, r.nbytes):
            one.append(t - (r.ranks - 1) * r.nbytes / bytes_per_s)
        else:
            two.append(t - 2 * (r.ranks - 1) / r.ranks * r.nbytes / bytes_per_s)
    return one, two


def fit_custom_ar(rows: list[ArRow], gpu: str = FIT_GPU) -> tuple[float, float, int, int]:
    """(t1, t2, one-shot rows, two-shot rows) on `gpu`'s fit rows."""
    from kvplan.hardware.interconnect import INTERCONNECTS

    one, two = fixed_parts(fit_rows(rows, gpu), INTERCONNECTS[LINK].bytes_per_s)
    return statistics.median(one), statistics.median(two), len(one), len(two)


@contextmanager
def fitted_custom_ar() -> Iterator[None]:
    """nvlink4 with the fitted t1 / t2 (every other field and preset unchanged)."""
    from kvplan.hardware import interconnect

    table = interconnect._table().by_name
    saved = table[LINK]
    table[LINK] = replace(saved, custom_all_reduce_latency_s=FIT_T1_S,
                          two_shot_latency_s=FIT_T2_S)
    try:
        yield
    finally:
        table[LINK] = saved
