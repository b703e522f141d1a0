"""simspeed67 (issue 30, CI time): the disaggregated bench's replays (examples/disagg-bench.md,
tests.benches.disagg_bench) timed and dumped, so that a speed change can be shown to leave every
output byte as it was.

Where the time went (a stack sampler over the page's first 112 CPU s at main 0808e98a, then
cProfile of 8 prospective rows): section 3's prospective replays (disagg_rows._prospective and
the counterfactual sections replaying the same rows) are the page: 98.8 % of the samples. Of a
replay, kvplan.perf.roofline.step_time was 57 % (the simulated prefill steps through
plan_search.prefill_step_ms, about 55 % of the replay; the decode TPOT per batch through
disagg.role_times, 26 %), the closed-loop simulation itself (disagg_sim) most of the rest. What
was computed and dropped: `role_times` timed a whole prefill `predict` for every decode batch a
TPOT caller asked (its first value thrown away), `predict`'s naive roofline searched the
compute-bound batch it does not read, each prefill step rebuilt the same cost setup, and
step_time built a group's interconnect (a SpanningLink dataclass over several domains), the TP
all-reduce and the attention FLOPs of a span once per layer, and asked the GPU its math and peak
twice per op.

The change (speed only, every float the same): kvplan.analysis.disagg.role_prefill_ms /
role_tpot_ms (role_times their pair), plan_search.prefill_stepper, flops.decode_cost
search_crossover=False in costmodel.naive_roofline_seconds, and step_time's / _Step's per-step
memos (tests/test_simspeed67.py).

Measured (main 0808e98a -> this branch, both arms run at the same time on the shared 2-core
host, load 12 - 19, so single numbers drift): MEASURED, CPU s, one run each, every dump
byte-identical. Section 3 being the page, the page's estimated saving is about 40 % of its
CPU. The simulate page is not moved: step_time is 1.4 % of its samples (the vLLM / SGLang
schedulers' pools and steps are the rest); simspeed65's dumps of vllm-minimax-8k-c128,
sgl-glm5-1k-c128 and prosp-vllm-qwen3next-c256 byte-identical, 1.67 / 3.22 / 3.46 -> 1.60 /
3.03 / 3.41 s (noise).

Run: python -m tests.benches.simspeed67 dump OUT [ROWS STRIDE OFFSET]: the replays of ROWS
replayable prospective rows (every STRIDE-th from OFFSET; default 12 17 5) at the defaults and
at a counterfactual (fp4, gather off, the generator's flags), then section 2's silicon rows,
each Replay's repr a line, and the CPU s of each part on stderr.
"""

from __future__ import annotations

import sys
import time

from tests.benches import disagg_rows

# CPU s, main 0808e98a -> this branch (one run each, arms together on the loaded host).
MEASURED: dict[str, tuple[float, float]] = {
    "6 prospective rows (stride 37)": (34.81, 31.11),  # role_times split + prefill_stepper only
    "10 prospective rows (stride 22)": (20.91, 13.65),
    # `dump` at its defaults: 12 rows at the defaults / at the counterfactual / 28 silicon rows.
    "dump: 12 prospective rows": (51.90, 29.58),
    "dump: the same 12, counterfactual": (36.95, 21.49),
    "dump: section 2's 28 silicon rows": (1.18, 0.72),
    "section 4 (disagg_public.section)": (1.51, 0.79),
    "section 4b (prospdis65_runs)": (4.82, 2.72),
    "section 4c (prospdis66_runs)": (2.73, 1.39),
}


def dump(out: str, rows: int = 12, stride: int = 17, offset: int = 5) -> None:
    ok = [r for r in disagg_rows.prospective_rows() if not disagg_rows._why_not(
        r, disagg_rows.stated_concurrency(r), prospective=True)]
    chosen = ok[offset::stride][:rows]
    c0 = time.process_time()
    done = [disagg_rows.replay(r, prospective=True) for r in chosen]
    c1 = time.process_time()
    done += [disagg_rows.replay(r, prospective=True, fp4=False, gather=False, generator=True)
             for r in chosen]
    c2 = time.process_time()
    done += disagg_rows.replays()
    c3 = time.process_time()
    with open(out, "w") as fh:
        fh.write("".join(f"{r!r}\n" for r in done))
    print(f"{len(chosen)} rows: default {c1 - c0:.2f} s, counterfactual {c2 - c1:.2f} s; "
          f"silicon rows {c3 - c2:.2f} s", file=sys.stderr)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] != "dump":
        raise SystemExit(__doc__)
    dump(argv[1], *(int(a) for a in argv[2:5]))


if __name__ == "__main__":
    main(sys.argv[1:])
