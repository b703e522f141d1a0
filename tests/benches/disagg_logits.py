"""Section 3g of examples/disagg-bench.md (issue 29, tpot29): SGLang's split lm_head's logits
gather under DP attention (kvplan.perf.roofline `_logits_gather`, LOGITS_GATHER_COMMIT) with
and without it on both cohorts of the prospective rows, what SGLang 0.5.5.post2 / 0.5.8.post1
do on the rows' wide-DP decode workers, and where TPOT stays above the band at high load: each
such row's requests decoding at once by Little's law over its measured times, with kvplan's
TPOT there (disagg_rows.decode_occupancy)."""

from __future__ import annotations

from collections.abc import Callable

from tests.benches.disagg_rows import (
    BAND,
    LOGITS_GATHER_COMMIT,
    PREFIX,
    Replay,
    decode_occupancy,
    replayed_with,
)
from tests.benches.fitted_rows import SHAPED_BY

HIGH_LOAD = 1024  # requests in flight from which a row counts as high load here


def _share(rows: list[Replay], test: Callable[[Replay], bool]) -> str:
    n = sum(1 for r in rows if test(r))
    return f"{n} of {len(rows)} ({100 * n / len(rows):.0f}%)" if rows else "0 of 0"


def _inside(i: int) -> Callable[[Replay], bool]:
    return lambda r: r.ratios is not None and BAND[0] <= r.ratios[i] <= BAND[1]


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _counts(rows: list[Replay]) -> str:
    tpot = f"{_median([r.ratios[1] for r in rows if r.ratios]):.2f}"
    return (f"both {_share(rows, lambda r: r.inside)}; TTFT {_share(rows, _inside(0))}; TPOT "
            f"{_share(rows, _inside(1))}; median TPOT ratio {tpot}")


def section(done: list[Replay]) -> list[str]:
    """3g: `done` are the replayed prospective rows (both cohorts)."""
    rule = next(s for s in SHAPED_BY if s.commit == LOGITS_GATHER_COMMIT)
    old = [r for r in replayed_with(done, logits_gather=False) if r.replayed]
    n = sum(r.id in rule.rows for r in done)
    out = [f"### 3g. Shaped: SGLang's logits gather under DP attention ({rule.commit}), both "
           "cohorts", "",
           f"{rule.rule[0].upper()}{rule.rule[1:]}: {n} of these {len(done)} rows shaped it "
           "(all were read before it); no blind test of it. It changes times, not what kvplan "
           "sizes: no frozen row not yet replayed becomes replayable, so no new cohort was "
           "evaluated. The rows state no --enable-dp-lm-head (with it the lm_head is split "
           "over the attention-TP group, one GPU at DP = TP: whole on each rank, no gather) "
           "and aiconfigurator's generator has no key for it (generator/config/"
           "backend_config_mapping.yaml at 043c66c5): SGLang's default (off) is taken. Its "
           "prefill (one row a prompt) does the same: priced since sgldp64 (d54ded84; not "
           "before it), in both lines below (the line without takes both out).", "",
           f"With it (above, both cohorts): {_counts(done)}.",
           f"Without it (the split lm_head on every DP rank's rows, no gather priced), "
           f"computed beside it: {_counts(old)}.", ""]
    pairs = {r.id: r.ratios for r in old if r.ratios is not None}
    moved = [(r, pairs[r.id]) for r in done if r.ratios is not None and r.id in pairs
             and (abs(r.ratios[1] / pairs[r.id][1] - 1) > 0.05
                  or abs(r.ratios[0] / pairs[r.id][0] - 1) > 0.05)]
    out += [f"TPOT or TTFT moves by more than 5% on {len(moved)} of {len(done)} rows:"]
    out += [f"- {r.id.removeprefix(PREFIX)}: TTFT ratio {b[0]:.2f} -> {r.ratios[0]:.2f}, "
            f"TPOT ratio {b[1]:.2f} -> {r.ratios[1]:.2f}" for r, b in moved if r.ratios]
    out += ["", "What a wide-DP decode worker does, read in SGLang 0.5.5.post2 / 0.5.8.post1 "
            "(issue 29, tpot29), at the rows' stated layout (e.g. cfg483: one GB200 decode "
            "worker, attention DP 32, EP 32, MoE TP 1):", "",
            "- No DeepEP: --moe-a2a-backend defaults to none and the rows name none "
            "(3f); on SM 10.x the MoE runner then defaults to flashinfer_trtllm "
            "(server_args.py:1226-1234), so the FP4 all-gather before the experts "
            "(layers/moe/utils.py:263-273 `should_use_flashinfer_cutlass_moe_fp4_allgather`: "
            "flashinfer_cutlass only) is off and every MLP layer gathers bf16 hidden rows "
            "(3f). --moe-dense-tp-size is unset (the dense layers gather too) and "
            "--enable-dp-lm-head off (above): neither has a key in aiconfigurator's generator.",
            "- The padded rows: a decode step runs in a CUDA graph up to --cuda-graph-max-bs "
            "(512 on cards of 160 GiB or more, server_args.py:955-960) captured at batch "
            "sizes 1, 2, 4, 8, 12, 16-256 by 8, 272-496 by 16, then by 32 (:1041-1065); the "
            "ranks replay the least captured size >= the busiest rank's batch "
            "(model_executor/cuda_graph_runner.py:784-793), and the gathered buffers hold that "
            "size x the DP size rows (:581-596), the MLP gather at MAX_LEN "
            "(dp_attention.py:76-82) and the logits' at SUM_LEN (logits_processor.py:198). "
            "kvplan times the ranks even at the simulated batch, not rounded to a captured size "
            "(at most 8 rows a rank more up to 256, 16 to 512).",
            "- The logits: [rows, 129,280 / 32 = 4,040] bf16 a rank (the vocabulary a multiple "
            "of 64, vocab_parallel_embedding.py:42), all-gathered to [rows, 129,280] and copied "
            "to row order: at 64 requests a rank 2,048 rows, 529.5 MB, 0.95 ms a step on "
            "NVLink 5 (tests/test_logits_gather.py), against 0.07 ms for the lm_head GEMM "
            "itself.", ""]
    out += _occupancy(done)
    return out


def _occupancy(done: list[Replay]) -> list[str]:
    """The rows whose TPOT is above the band at HIGH_LOAD or more in flight: kvplan's TPOT at
    the decode occupancy the measured times imply."""
    high = [r for r in done if r.ratios is not None and r.ratios[1] > BAND[1]
            and (r.concurrency or 0) >= HIGH_LOAD]
    out = [f"Where TPOT is above the band at {HIGH_LOAD:,} or more requests in flight "
           f"({len(high)} of {len(done)} rows): the requests decoding at once on a decode rank "
           "by Little's law over the measured times (in flight x (O - 1) x TPOT / (TTFT + "
           "(O - 1) x TPOT), over the decode ranks), and kvplan's TPOT at that batch a rank "
           "(its step, outside the simulation); kvplan's simulation keeps more of the users "
           "decoding where its TTFT is short of the measured:", ""]
    ratios = []
    for r in high:
        occ = decode_occupancy(r)
        if occ is None or r.ratios is None:
            continue
        per_rank, batch, tpot = occ
        ratios.append(tpot / r.measured_tpot_ms)
        out.append(f"- {r.id.removeprefix(PREFIX)}: {per_rank:.1f} decoding a rank measured; "
                   f"kvplan's step at {batch} a rank {tpot:.2f} ms, "
                   f"{tpot / r.measured_tpot_ms:.2f} x the measured {r.measured_tpot_ms:.2f} "
                   f"(replayed: TPOT ratio {r.ratios[1]:.2f}, TTFT ratio {r.ratios[0]:.2f})")
    if ratios:
        replayed = _median([r.ratios[1] for r in high if r.ratios])
        inside = sum(BAND[0] <= x <= BAND[1] for x in ratios)
        out += ["", f"At the measured occupancy kvplan's step is inside the band on {inside} "
                f"of {len(ratios)} of these rows, median ratio {_median(ratios):.2f} (replayed: "
                f"{replayed:.2f})" + (
                    ": where it is inside, the replayed overshoot is the simulation's "
                    "occupancy (its prefill serving more prompts a second than measured, its "
                    "TTFT short: 3d, 3e), not the decode step's price." if inside else ".")]
    return out
