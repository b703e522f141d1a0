"""Section 3k of the disagg bench (sglseat58, issue 29): the SGLang rows at the flags of the
NVIDIA/srt-slurm recipe each InferenceX run is matched to (tests.benches.srt_slurm_sglang,
disagg_rows.sglang_recipe_settings), before and after, and the rows the recipes made
replayable with their first evaluation. `python -m tests.benches.disagg_sglang_recipe` prints
the section alone (over the section 3 rows, as disagg_bench passes them)."""

from __future__ import annotations

from tests.benches import srt_slurm_sglang
from tests.benches.disagg_rows import (
    BACKEND_COHORTS,
    PREFIX,
    Replay,
    layout,
    prospective_replays,
    prospective_rows,
    replayed_with,
    sglang_recipe_settings,
    stated_concurrency,
)
from tests.benches.fitted_rows import SHAPED_BY

RULE_COMMIT = "b52ea450"
# The rows the recipe flags made replayable (kvplan refused a role at SGLang's defaults), at
# their first evaluation (RULE_COMMIT, the rule committed before they were replayed): TTFT /
# TPOT ratio to the measured. Kept as first evaluated.
FIRST_EVALUATION = {
    "dsr1_gb200_sglang_fp8_disagg_1024x1024_c4_cfg502": (0.91, 1.32),
    "dsr1_gb200_sglang_fp8_disagg_1024x1024_c8_cfg502": (0.87, 1.30),
}


def _later(row: dict[str, str]) -> bool:
    """A row a recipe fits but whose every matching version postdates its measurement."""
    conc = stated_concurrency(row)
    if conc is None or sglang_recipe_settings(row) is not None:
        return False
    found = srt_slurm_sglang._matching(row, conc, layout(row, "prefill"), layout(row, "decode"))
    return bool(found)


def section(done: list[Replay]) -> list[str]:
    """`done`: the section's replayed SGLang rows (both cohorts), with the recipe flags."""
    from tests.benches.disagg_bench import _group_line, _moved

    rule = next(s for s in SHAPED_BY if s.commit == RULE_COMMIT)
    by_id = {PREFIX + r["id"]: r for r in prospective_rows()}
    old = [r for r in replayed_with(done, sglang_recipe=False) if r.replayed]
    old_ids = {r.id for r in old}
    matched = [r for r in done if sglang_recipe_settings(by_id[r.id]) is not None]
    later = [r for r in done if _later(by_id[r.id])]
    first = [r for r in done if r.id not in old_ids]
    out = [f"### 3k. Shaped: SGLang rows at their srt-slurm recipe's flags ({rule.commit}), "
           "both cohorts", "",
           f"{rule.rule[0].upper()}{rule.rule.split('; read after')[0][1:]}. The rows' "
           "prefill / decode batch sizes are aiconfigurator's InferenceX adapter's concurrency "
           "over ranks (sdk/config_adapter/inferencex.py `_worker` at 095f58a5), not the "
           "engine's flags, so before it the replay ran SGLang's defaults. Matched "
           f"{len(matched)} of these {len(done)} rows (tests/data/disagg/"
           "srt_slurm_sglang_recipes.json, the version in force at each row's measured date); "
           f"{len(later)} more fit only recipe versions committed after they were measured (the "
           "B200 rows: srt-slurm's B200 SGLang recipes date from 2026-03-03 and 2026-03-25), "
           "not applied; the rest fit no recipe (the 2025-12-21 GB200 rows state DP attention "
           "without EP where the recipes run TP or DP with EP). "
           f"{sum(r.id in rule.rows for r in done)} rows move; all were read before (sections "
           "3a-3i): no blind test of it.", "",
           f"With it (above, both cohorts): {_group_line([r for r in done if r.id in old_ids])}"
           ".",
           f"Without it (SGLang's defaults), computed beside it: {_group_line(old)}."]
    for isl in (1024, 8192):
        a = [r for r in old if r.input_len == isl]
        b = [r for r in done if r.input_len == isl and r.id in old_ids]
        out.append(f"- ISL {isl:,}: without {_group_line(a)}; with {_group_line(b)}")
    out += ["", f"Made replayable by it ({len(first)}: at SGLang's default fraction kvplan's "
            "TP 4 FP8 prefill worker held no KV; the recipe's --mem-fraction-static 0.95 and "
            "--max-total-tokens 8,192 do), first evaluated at "
            f"{RULE_COMMIT} (TTFT / TPOT ratio):"]
    for r in first:
        name = r.id.removeprefix(PREFIX)
        f = FIRST_EVALUATION.get(name)
        now = f"{r.ratios[0]:.2f} / {r.ratios[1]:.2f}" if r.ratios else "-"
        out.append(f"- {name}: first {f[0]:.2f} / {f[1]:.2f}, now {now}" if f
                   else f"- {name}: now {now} (not in FIRST_EVALUATION)")
    out += ["", "Fed: both roles' --mem-fraction-static, --max-running-requests (the pool's "
            "request slots; the decode rank's running cap // --dp-size) and --max-total-tokens; "
            "the prefill's --chunked-prefill-size and --max-running-requests // --dp-size under "
            "DP attention, and --max-prefill-tokens; since sgldeepep59 (3l) the DeepEP roles' "
            "--moe-a2a-backend deepep, --deepep-mode, --moe-dense-tp-size 1 and "
            "--enable-dp-lm-head (the 'with' figures above include it; 'without' runs SGLang's "
            "defaults, without both). Read and not fed: "
            "--context-length (2,176-9,600; kvplan sizes the request's I + O), "
            "--cuda-graph-max-bs, --num-reserved-decode-tokens, --enable-dp-lm-head and "
            "--moe-dense-tp-size 1 on roles without DeepEP. The "
            "rows it moves furthest below the band (listed below) are the 8,192-token "
            "max-throughput rows (cfg489 / 575: 10 TP 4 prefill workers at "
            "--chunked-prefill-size 131,072 and --max-prefill-tokens 524,288, up to 16 prompts "
            "a step where SGLang's defaults took one) and the ISL 1,024 rows at 8,192 in flight "
            "(cfg483 / 576).", ""]
    out += _moved(done, old, (0, 1))
    return out


def _section_rows() -> list[Replay]:
    return [r for r in prospective_replays()
            if r.replayed and r.cohort != BACKEND_COHORTS["trtllm"]]


if __name__ == "__main__":
    print("\n".join(section(_section_rows())))
