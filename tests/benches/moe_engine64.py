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
