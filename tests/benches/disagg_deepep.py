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
SPEED_COMMIT = "3cc77652"  # DeepEP's measured kernel speeds (deepepbw59), frozen likewise
# The redundant experts' weights and DeepEP's speeds on more GPUs / EP sizes (deepepx60), frozen
# likewise.
REDUNDANT_COMMIT = "723ed03b"


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
           "dense MLPs in one group), "
           "--enable-single-batch-overlap (the FP4 DP prefill), the deepep-config file's SM "
           "counts. The prefill's eager launch count stays SGLang's gather path's "
           "(kvplan.perf.op_counts): DeepEP's dispatch / combine ops are not counted apart.", "",
           f"With it (above, both cohorts): {_line(done)}.",
           f"Without it (the DeepEP roles at SGLang's default gathers, as at b52ea450), computed "
           f"beside it: {_line(old)}."]
    for name, test in both_cohorts:
        out.append(f"- {name}: without {_line([r for r in old if test(r)])}; with "
                   f"{_line([r for r in done if test(r)])}")
    speed = next(s for s in SHAPED_BY if s.commit == SPEED_COMMIT)
    out += ["", "At 97d4ed27 DeepEP was timed at NVLink 5's 720 GB/s and an 8 us latency a call "
            "(an estimate, kvplan/hardware/interconnects.json), and it moved the rows away from "
            "the measured, faster on both sides: recorded then, the DeepEP rows both inside 16 -> "
            "9 of 30, median TTFT / TPOT ratio 0.96 / 0.99 -> 0.65 / 0.81; section 3's SGLang "
            f"rows both 34 -> 27 of 94. Since {speed.commit} (deepepbw59; shaped by these rows, "
            "whose miss was read first: no blind test) dispatch and combine are timed by "
            "DeepEP's own measured kernels (kvplan.engines.sglang.deepep_speed): aiconfigurator "
            "095f58a51's GB200 / GB300 wideep_deepep_ll / wideep_deepep_normal tables (DeepEP's "
            "test_low_latency.py / test_intranode.py on one tray, EP 4, SGLang 0.5.12's DeepEP, "
            "R1's shape, normal mode at 20 SMs), each call its time at 1 token plus its bytes at "
            "the bandwidth between 1 and 1,024 (low latency) / 16,384 (normal) tokens: on GB200 "
            "low-latency dispatch 16.57 us + 629 GB/s, combine 18.13 us + 781 GB/s, normal "
            "34.09 us + 297 GB/s and 48.01 us + 335 GB/s of DeepEP's logical bytes (the rank's "
            "own share among them). Kernel benchmarks, not a fit: no constant was set from the "
            "rows. The figures above are with it: the DeepEP rows both inside 9 -> 15 of 30, "
            "median TTFT / TPOT ratio 0.65 / 0.81 -> 0.81 / 0.87; section 3's SGLang rows 27 -> "
            "33 of 94; still faster than measured, and still behind the gathers' 16 of 30. Where "
            "the time goes (a GB200 decode rank of cfg523, DP 32 / EP 32, 64 requests at 1,536 "
            "cached tokens): 19.88 ms a step with the gathers (all-gather + reduce-scatter of "
            "2,048 tokens a layer, 5.80 ms; the logits gather 0.96 ms), 16.39 ms with DeepEP (its "
            "dispatch + combine 2.91 ms: 58 layers x (22.60 + 27.52 us), the GB200 rows' line at "
            "64 tokens, against 21.64 + 25.97 us measured there; 1.80 ms at the link pricing); "
            "a cfg523 prefill rank, DP 8 / EP 8, 16 prompts of 1,024: 1,169 ms with the SUM_LEN "
            "gathers (558 ms), 958 ms with DeepEP's normal kernels (347 ms; 746 / 135 ms at the "
            "link pricing). Stand-ins: EP 8 to 32 over the rack's multi-node NVLink are priced by "
            "the one-tray EP 4 rows (no larger GB200 / GB300 measurement was found), DeepEP 1.2.1 "
            "(SGLang 0.5.12's image) stands for the DeepEP of the 0.5.8 recipes, and the 20-SM "
            "rows for the recipes' deepep-config SM counts (not read). DeepEP issue 303's H20 "
            "low-latency figure (99 GB/s over NVLink 4) is not used: the GB200 rows measure the "
            "kernels on the fabric itself (at its rate the decode rank's all-to-all above would "
            "take 58 x 64 x 8 x 21,744 B / 99 GB/s = 6.5 ms).", ""]
    redundant = next(s for s in SHAPED_BY if s.commit == REDUNDANT_COMMIT)
    out += [f"Since {redundant.commit} (deepepx60; shaped by these rows: their recipes' "
            "--ep-num-redundant-experts 32, on every DeepEP role, was read for them, and listed "
            "here as read and not fed until then) each DeepEP role builds 256 + 32 physical "
            "experts a MoE layer (SGLang 0.5.8.post1 models/deepseek_v2.py:413-416, "
            "eplb/expert_location.py:199-205), (256 + 32) / ep a rank, each copy holding a "
            "logical expert's weights: 9 instead of 8 at EP 32 (R1 FP8: 2,554,954,752 B, 2.38 "
            "GiB, more a rank), 36 instead of 32 at EP 8 (9.52 GiB), out of each rank's KV pool "
            "(kvplan.capacity.weights.redundant_experts_held). Recorded at its first run, "
            "before -> after, both cohorts: section 3's SGLang rows both inside 42 -> 42 of 94, "
            "TTFT inside 53 -> 55; 3a unchanged; 3b both 23 -> 23 of 52, TTFT 29 -> 31; the "
            "DeepEP rows both 17 -> 17 of 30, TTFT 21 -> 23, TPOT 22 -> 22, median TTFT / TPOT "
            "ratio 0.84 / 0.87 -> 0.86 / 0.87. Of the rows listed below three changed at two "
            "decimals, each at the top of its recipe's concurrencies, where the decode KV "
            "binds: cfg526 c7680 TTFT ratio 0.68 -> 1.32 (TPOT 0.67 -> 0.64), c7168 0.71 -> "
            "0.76, and cfg508 c4096 (decode EP 8, 36 experts a rank) TTFT 3.62 -> 5.87, TPOT "
            "0.64 -> 0.61: a miss that grows (its queue was already too long in the "
            "simulation; not read further). EPLB: no recipe sets --enable-eplb or "
            "--init-expert-location, and their --eplb-algorithm deepseek is read only under "
            "those (expert_location.py:167-174, model_runner.py:448): inert. Not modelled: where "
            "a token's copy is chosen (--ep-dispatch-algorithm static / dynamic over the trivial "
            "placement, physical 256-287 copying logical 0-31) and uneven loads (the time model "
            "spreads the tokens evenly, as EPLB aims to); the time model still streams 256 / ep "
            "experts a rank. The same commit reads DeepEP's speeds on more GPUs and EP sizes "
            "(aiconfigurator's B200 / B300 / H100 / H200 rows at EP 8, and H100's legacy "
            "internode rows at EP 16 / 32 / 64 over RDMA, which H200 borrows): no row here "
            "runs them (all are GB200 / GB300, still priced by the one-tray EP 4 rows, a stand-in "
            "the plan's notes now name), and a GPU and EP size with no measurement is refused, "
            "no longer priced at its link's bandwidth.", ""]
    out += _moved(done, old, (0, 1))
    return out


def _section_rows() -> list[Replay]:
    return [r for r in prospective_replays()
            if r.replayed and r.cohort != BACKEND_COHORTS["trtllm"]]


if __name__ == "__main__":
    print("\n".join(section(_section_rows())))
