"""Each engine's own experts' shape table (kvplan.engines.moe_shape, CostTraits.experts_shape;
moeeng64, issue 30) judged against the pooled table (MOE_GEMM_SHAPE, the CUDA presets' default
since moedefault63) on held-out serving rows with MoE models on Hopper. The tables are not
changed here: "before" is moe_gemm_bench's mode "shape" (the pooled table, as the default),
"after" its mode "engine" (the same, with Efficiency.moe_gemm_by_engine: each engine's table in
place of the pooled one), each mode in a process of its own (moe_shape62's `--mode` stream, its
row keys and its split).

Sets, fixed before any row was replayed here (this docstring's first commit):
- agg_hopper: moe_shape62's stratified agg sample (every 9th replayable MoE row of each
  backend x system x ISL cell from its 1st, round-robin over the cells), its H100 / H200 rows
  only, every backend (vLLM, SGLang, TensorRT-LLM); split by moe_shape62.agg: "held" (the
  bench's split_of held out), "shaped" (shaped by earlier rules) and "read vllmlong62" (vLLM
  ISL 8,192, read by vllmlong62). The 23 held-out vLLM Hopper rows of moedefault63's finding
  (gpt-oss TTFT ratio 1.64, Qwen3-235B-FP8 1.33) are among them; they asked for this change,
  so they are reported apart too (the group lines), but stay in the held-out pool: no
  constant was set on them (the tables are fitted on kernel rows only).
- prospective: moe_shape62.prospective (the MoE runs of prospective30-62 and 58; its SHAPED
  MiniMax runs apart), replayed after agg_hopper, as far as the session's time allows; only
  the runs both modes finished count.

Decision rule (stated before any row was replayed): the per-engine tables become the default
(moe_gemm_by_engine on in CUDA_EFFICIENCY) only if, over the held-out rows both modes replayed
(agg_hopper "held" and prospective "held", pooled), the TTFT median |error| falls AND the count
of rows with both TTFT and TPOT inside disagg_rows.BAND does not fall AND the TPOT median
|error| grows by at most 0.5 point; otherwise they stay opt-in (`Efficiency(moe_gemm_by_engine=
True)`) and this docstring records why. Shaped and read rows are reported, never decide.

Evaluation (the rule and sets committed at 42a204e3, the tables frozen at c21ab047, both before
any row was replayed; both modes ran to the end on the shared host: 63 agg_hopper rows and 127
prospective runs with ratios; median |error| of the bench's TTFT / TPOT, rows inside
disagg_rows.BAND, before -> after):
- HELD OUT, pooled (the decision's rows): 118 rows, 105 moved; TTFT 37.2 % -> 38.6 % (median
  ratio 0.76 -> 0.69, inside 40 -> 32); TPOT 18.9 % -> 20.9 % (0.87 -> 0.81); both inside
  35 -> 26.
  - agg held (34: vLLM 23, SGLang 11; no TensorRT-LLM Hopper row is held out): TTFT 51.5 % ->
    33.6 % (1.35 -> 1.28), TPOT 14.1 % -> 15.2 %, both inside 11 -> 10. moedefault63's vLLM
    H100 gpt-oss rows (ISL 1,024): TTFT ratio 1.64 -> 1.31 (63.6 % -> 31.2 %, both inside
    1 -> 3); vLLM H200 ISL 1,024 (12) 42.4 % -> 33.2 % but both inside 5 -> 3; the vLLM H200
    ISL 8,000 Qwen3-FP8 rows, priced low already, 45.4 % -> 50.0 %. SGLang: 3 of 11 moved
    (the others' experts at a fraction both tables share, e.g. block FP8 at <= 256 rows an
    expert, where SGLang's table is the pooled 0.18).
  - prospective held (84): TTFT 34.6 % -> 39.3 % (0.69 -> 0.62), TPOT 22.8 % -> 29.5 %, both
    inside 24 -> 16: vLLM's gpt-oss runs, priced low already (p31 gpt-oss-120b TTFT 18.2 % ->
    36.4 %, p57 47.3 % -> 56.3 %), get cheaper still; p61's gpt-oss runs come closer (A100 29.5
    % -> 4.2 %).
  - by engine (held out): vLLM (94) TTFT 37.2 % -> 39.7 %, TPOT 18.2 % -> 22.1 %, both inside
    27 -> 19; SGLang (24) TTFT 35.6 % -> 29.8 %, TPOT 20.4 % -> 20.4 %, both 8 -> 7;
    TensorRT-LLM none held out.
- READ (vllmlong62's vLLM ISL 8,192 agg rows, 11): TTFT 33.7 % -> 40.8 % (0.79 -> 0.64).
- SHAPED: agg shaped (18: TensorRT-LLM 17, vLLM 1) TTFT 37.1 % -> 40.1 %, TPOT 23.8 % -> 23.3 %;
  prospective58 / 61 MiniMax-M2.5 (43, vLLM) TTFT 25.2 % -> 29.4 %, both 21 -> 18.

Decision: the stated rule is NOT met (pooled held-out TTFT +1.4 points, both inside 35 -> 26,
TPOT +2.0 points): the per-engine tables stay OPT-IN (`Efficiency(moe_gemm_by_engine=True)`;
moe_gemm_bench mode "engine"). No default rule changed: PREFILL_LAUNCH_FIT and
LAST_RULE_CHANGE untouched, no page moves. What the kernel rows say instead (held out, H200,
tests.benches.moe_shape_fit engine_vs_pooled_lines): the engine's own table prices the
engine's kernel closer in 5 of 6 engine x format cells; the serving rows do not follow because
vLLM's aggregated rows (overpriced) and the other publishers' vLLM gpt-oss runs (underpriced)
pull the same experts' fraction opposite ways: the experts' fraction is not what separates
them.

Run: python -m tests.benches.moe_engine64 --mode before|after SET...  (a JSON line a row)
     python -m tests.benches.moe_engine64 --tables BEFORE.jsonl AFTER.jsonl
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

from tests.benches import moe_shape62 as m

MODES = {"before": "shape", "after": "engine"}  # moe_gemm_bench.MODES
HOPPER = ("h100_sxm", "h200_sxm")


def agg_hopper() -> Iterator[m.Row]:
    """moe_shape62's agg sample, its Hopper rows (every backend)."""
    return m.agg([r for r in m.agg_sample() if r["system"] in HOPPER])


SETS = {"agg_hopper": agg_hopper, "prospective": m.prospective}


def main(argv: list[str]) -> None:
    if argv[:1] == ["--mode"]:
        from tests.benches.moe_gemm_bench import moe_fitted

        with moe_fitted(MODES[argv[1]]):
            for s in argv[2:] or list(SETS):
                for key, ratios in SETS[s]():
                    print(json.dumps({"set": s, "key": key, "ratios": ratios}), flush=True)
        return
    if argv[:1] == ["--tables"]:
        m.tables(m._load(argv[1]), m._load(argv[2]))
        return
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
