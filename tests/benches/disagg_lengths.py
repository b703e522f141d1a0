"""`python -m tests.benches.disagg_lengths`: disagg-bench section 3n, sa-bench's length spread
(rangeratio60): the prospective SGLang / TensorRT-LLM rows replayed with each request at its own
sa-bench draw (--random-range-ratio 0.8: prompt and output uniform in [int(0.8 L), L], numpy's
legacy state at seed 0, kvplan.analysis.simulate.range_ratio.BoundedBelow via
kvplan.analysis.simulate.bench_client), beside the same rows with every request at L (the
default before). The rule was committed (0a047bfb) before any row was replayed with it; it
follows the client's code, not the rows. The rows whose misses made the lead look (3j's
cfg388 / cfg417, overshooting TTFT at 1.40-1.51 with the client's measurement) shaped it
(tests/benches/fitted_rows.py SHAPED_BY); the rest are its first evaluation."""

from __future__ import annotations

from tests.benches.disagg_rows import PREFIX, Replay, prospective_replays, replayed_with
from tests.benches.disagg_why import _groups, line
from tests.benches.fitted_rows import SHAPED_BY

RULE_COMMIT = "0a047bfb"
# The rule's first evaluation, as measured at 4e43a82b (the frozen rule; the commit after it
# made the simulation faster, the same figures) on the merged tree of 89130f56: kept as it was.
FIRST_EVALUATION = (
    "First evaluation (rangeratio60, the frozen rule, 217 rows; shaped rows included): 3a both "
    "inside 19 -> 17 of 42, TTFT 24 -> 20, TPOT 32 -> 32, median ratio TTFT 0.81 -> 0.74, TPOT "
    "1.08 -> 1.10; 3b both 23 -> 17 of 52, TTFT 29 -> 23, TPOT 36 -> 36, median TTFT 0.86 -> "
    "0.77, TPOT 0.96 -> 0.95; 3j both 28 -> 36 of 123, TTFT 33 -> 44, TPOT 94 -> 93, median "
    "TTFT 0.88 -> 0.76, TPOT 1.10 -> 1.08; 3j held out of the 13 shaping rows: both 24 -> 28 "
    "of 110, TTFT 28 -> 36, TPOT 83 -> 82, median TTFT 0.69 -> 0.71, TPOT 1.03 -> 1.03. The "
    "shorter mean prompt (0.9 L) shortens every "
    "prefill: TTFT falls about 10 % everywhere, which brings the TensorRT-LLM rows that "
    "overshot into the band and pushes the SGLang rows that undershot further below it.")
# The rows named in 3j's and 3m's texts (the lead: cfg388 / cfg417), by their id's tail.
NAMED = ("1024x1024_c192_cfg388", "1024x1024_c192_cfg417", "8192x1024_c12_cfg417",
         "8192x1024_c6_cfg386", "1024x8192_c4_cfg378", "1024x1024_c3_cfg386")


def section(all_rows: list[Replay] | None = None, before: list[Replay] | None = None
            ) -> list[str]:
    """`all_rows`: the prospective replays (the lengths on, the default); `before`: the same
    rows with every request at L (else replayed here)."""
    rows = [r for r in (all_rows if all_rows is not None else prospective_replays())
            if r.replayed]
    before = [r for r in (before if before is not None else
                          replayed_with(rows, lengths=False)) if r.replayed]
    rule = next((s for s in SHAPED_BY if s.commit == RULE_COMMIT), None)
    shaped = set(rule.rows) if rule is not None else set()
    ids = {r.id for r in before}
    out = [f"### 3n. The client's length spread ({RULE_COMMIT}), both engines", "",
           "sa-bench (srt-slurm src/srtctl/benchmarks/scripts/sa-bench/benchmark_serving.py "
           "`sample_random_requests` at cc158081, :355-364) draws every prompt and every output "
           "length uniform in [int(L x R), L] from numpy's legacy global state, seeded with "
           "--seed 0 (bench.sh passes none), at bench.sh's RANDOM_RANGE_RATIO 0.8 (bench.sh:37, "
           "the value InferenceX's multi-node workflow sets): for 1,024 tokens 819..1,024 (mean "
           "921.5), for 8,192 6,553..8,192. kvplan.analysis.simulate.range_ratio reproduces the "
           "draw bit for bit (checked against numpy) and the simulation gives each request its "
           "own prompt and output in send order (the client's requests wait on one FIFO "
           "semaphore): its prefill tokens, decode pages and SGLang's admission, its end step, "
           "its TPOT over its own output, its transfer scaled by its prompt. Not modelled: the "
           "measured run's --use-chat-template moves the lower bound by 0.2 x (the template's "
           "tokens - 1) (the rows' tokenizers are not in the stores). The rule was committed "
           "before any row was replayed with it; on by default.", "",
           f"Rows: {len(rows)} replayed with it, {len(before)} without it "
           f"({sum(r.id not in ids for r in rows)} made replayable by it). Shaped: "
           f"{sum(r.id in shaped for r in rows)} (the rows whose misses made the lead look); "
           "the others' figures are the rule's first evaluation.", ""]
    for name, group in _groups(rows).items():
        g_ids = {r.id for r in group}
        out += [f"- {name}: with it {line(group)}",
                f"  - every request at L (before): "
                f"{line([r for r in before if r.id in g_ids])}"]
        blind = [r for r in group if r.id not in shaped]
        if shaped and len(blind) != len(group):
            out.append(f"  - held out of the shaping rows, with it: {line(blind)}; before: "
                       f"{line([r for r in before if r.id in {b.id for b in blind}])}")
    out += ["", FIRST_EVALUATION]
    pairs = {r.id: r.ratios for r in before if r.ratios is not None}
    out += ["", "The rows named in 3j's and 3m's texts, at L -> with the spread (TTFT / TPOT "
            "ratio):"]
    for key in NAMED:
        for r in rows:
            if r.id.endswith(key) and r.ratios and r.id in pairs:
                b = pairs[r.id]
                out.append(f"- {r.id.removeprefix(PREFIX)}: {b[0]:.2f} / {b[1]:.2f} -> "
                           f"{r.ratios[0]:.2f} / {r.ratios[1]:.2f}")
    return out


if __name__ == "__main__":
    print("\n".join(section()))
