"""Section 3l of the disagg bench (sgldeepep59, issue 29): the SGLang rows whose srt-slurm recipe
runs --moe-a2a-backend deepep, priced as DeepEP (kvplan.engines.sglang.deepep), before and after.
`python -m tests.benches.disagg_deepep` prints the section alone (over the section 3 rows, as
disagg_bench passes them)."""

from __future__ import annotations

from tests.benches.disagg_rows import (
    BACKEND_COHORTS,
    FIRST_COHORT,
    PREFIX,
    Replay,
    prospective_replays,
    prospective_rows,
    replayed_with,
    sglang_recipe_settings,
)
from tests.benches.fitted_rows import SHAPED_BY

DEEPEP_COMMIT = "97d4ed27"  # the rule, committed before the rows were re-run


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _line(rows: list[Replay]) -> str:
    """Both / TTFT / TPOT inside the band and the median TTFT / TPOT ratios of `rows`."""
    from tests.benches.disagg_bench import inside, share

    ratios = [r.ratios for r in rows if r.ratios]
    med = (f"{_median([t for t, _ in ratios]):.2f} / {_median([p for _, p in ratios]):.2f}"
           if ratios else "-")
    return (f"both {share(rows, lambda r: r.inside)}; TTFT {share(rows, inside(0))}; TPOT "
            f"{share(rows, inside(1))}; median TTFT / TPOT ratio {med}")


def deepep_rows(done: list[Replay]) -> list[Replay]:
    """The rows of `done` matched to a recipe with a DeepEP role (either role)."""
    by_id = {PREFIX + r["id"]: r for r in prospective_rows()}
    out = []
    for r in done:
        rec = sglang_recipe_settings(by_id[r.id])
        if rec is not None and "deepep" in (rec.prefill.moe_a2a_backend,
                                            rec.decode.moe_a2a_backend):
            out.append(r)
    return out


def section(done: list[Replay]) -> list[str]:
    """`done`: the section's replayed SGLang rows (both cohorts), with the DeepEP flags."""
    from tests.benches.disagg_bench import _moved

    rule = next(s for s in SHAPED_BY if s.commit == DEEPEP_COMMIT)
    old = [r for r in replayed_with(done, deepep=False) if r.replayed]
    ours = deepep_rows(done)
    ids = {r.id for r in ours}
    both_cohorts = [("3a (prospective cohort)", lambda r: r.cohort != FIRST_COHORT),
                    ("3b (first cohort)", lambda r: r.cohort == FIRST_COHORT),
                    ("the DeepEP rows", lambda r: r.id in ids)]
    out = [f"### 3l. Shaped: SGLang's DeepEP roles priced as DeepEP ({rule.commit}), both "
           "cohorts", "",
           f"{rule.rule[0].upper()}{rule.rule.split('; read after')[0][1:]}. "
           f"{len(ours)} of these {len(done)} rows run a recipe with a DeepEP role (3k's match; "
           "the GB200 / GB300 FP8 recipes' prefill in normal mode and decode in low-latency "
           "mode, the FP4 ones' decode alone, in low-latency mode with NVFP4 dispatch); their "
           "recipes also set --moe-dense-tp-size 1 and --enable-dp-lm-head on those roles, fed "
           "with it (dense MLPs, shared experts and lm_head whole on each DP rank: no gather, "
           "no logits gather, and their weights out of each rank's pool). All were read "
           "before (3a-3k): shaped by it, no blind test. No row becomes replayable with it "
           "(it changes times and each DeepEP rank's weights), so no first evaluation. Read "
           "and not fed still: --moe-dense-tp-size 1 on the TP-attention low-latency recipes "
           "without DeepEP (kvplan refuses it without DeepEP: it holds the shared experts and "
           "dense MLPs in one group), --ep-num-redundant-experts 32 and EPLB, "
           "--enable-single-batch-overlap (the FP4 DP prefill), the deepep-config file's SM "
           "counts. The prefill's eager launch count stays SGLang's gather path's "
           "(kvplan.perf.op_counts): DeepEP's dispatch / combine ops are not counted apart.", "",
           f"With it (above, both cohorts): {_line(done)}.",
           f"Without it (the DeepEP roles at SGLang's default gathers, as at b52ea450), computed "
           f"beside it: {_line(old)}."]
    for name, test in both_cohorts:
        out.append(f"- {name}: without {_line([r for r in old if test(r)])}; with "
                   f"{_line([r for r in done if test(r)])}")
    out += ["", "It moves the rows away from the measured, faster on both sides; no constant was "
            "changed after it was seen. Where the time went (a GB200 decode rank of cfg523, DP 32 /"
            " EP 32, 64 requests at 1,536 cached tokens): 19.88 ms a step with the gathers "
            "(all-gather + reduce-scatter of 2,048 tokens a layer, 5.80 ms; the logits gather 0.96 "
            "ms), 15.28 ms with DeepEP (its dispatch + combine 1.80 ms: 58 layers x (2 x 8 us + 64 "
            "x 168,516 B / 720 GB/s); the whole dense MLPs and shared experts +0.16 ms, the whole "
            "lm_head +0.19 ms); a cfg523 prefill rank, DP 8 / EP 8, 16 prompts of 1,024: 1,169 ms "
            "with the SUM_LEN gathers (558 ms), 746 ms with DeepEP's normal kernels (135 ms). "
            "DeepEP is priced at NVLink 5's 720 GB/s and its 8 us latency (an estimate, "
            "kvplan/hardware/interconnects.json); no GB200 / GB300 measurement of DeepEP's kernels "
            "was found. The nearest, not applied: DeepEP's low-latency kernels over NVLink inside "
            "one H20 node (DeepEP issue 303: 8 ranks, 128 tokens, dispatch + combine 222 us, 99 "
            "GB/s as its test counts bytes, of NVLink 4's 450 GB/s a direction); at that rate the "
            "decode rank's all-to-all above would take 58 x 64 x 8 x 21,744 B / 99 GB/s = 6.5 ms, "
            "more than the gathers. Left for a measurement of DeepEP on an NVL72 rack.", ""]
    out += _moved(done, old, (0, 1))
    return out


def _section_rows() -> list[Replay]:
    return [r for r in prospective_replays()
            if r.replayed and r.cohort != BACKEND_COHORTS["trtllm"]]


if __name__ == "__main__":
    print("\n".join(section(_section_rows())))
