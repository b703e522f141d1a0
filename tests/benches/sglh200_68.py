"""SGLang's two Hopper decode rules that sgldec67 read but did not write (issues 30, 29,
sglh200_68): the flashinfer all-reduce + RMSNorm fusion on SM 9.0 from 0.5.7, and DeepSeek-V3's
shared expert folded into the fused MoE on CUDA at EP 1.

DECISION RULE (committed before any row was replayed with the rules):
- Both rules follow SGLang's code (0.5.7 / 0.5.9 wheels); they land whatever the figures do,
  and a figure that moves the wrong way is reported as such.
- Rows: every SGLang row on H100 / H200 that the aggregated replay (aiconfig_agg_runs) replays
  and the rules can move (the DeepSeek-R1 / V3 FP8 TP 8 rows of SGLang 0.5.9, 39; the H200
  Qwen3-235B rows ran 0.5.6.post2, before both rules, and the Qwen3.5-397B rows are a model
  type neither names, so they cannot move), and the prospective sets' SGLang Hopper runs the
  rules can move (prospective56 / 61's gpt-oss-120b H100 / H200 TP 8 under 0.5.8: the
  all-reduce fusion only). Per set: rows, median |TPOT err| and |TTFT err|, before (main at
  b5b2328a) -> after.
- Splits: the DeepSeek-R1 H200 rows 289, 285, 256 (1,024 / 1,024 at 4 / 16 / 64 users) were
  read by sgldec67 to find these rules: SHAPED. The other 36 DeepSeek H200 rows: held out
  (never read to write a rule; they share the shaped rows' engine, model and GPU). The Scicom
  gpt-oss runs: shaped already (sgllong61's warm-server replay, sglgptoss64), reported apart.
- Expected, the test of the rules: on the 36 held-out DeepSeek H200 rows the median |TPOT err|
  falls (kvplan sat 0.6 - 3.2 ms above at 4 - 64 users, sgldec67), and the median |TTFT err|
  gets no worse by more than 1 point (the fusion also takes eager-prefill norms out). If the
  TPOT median does not fall, the rules still land (they follow code) and that is reported.

Run: python -m tests.benches.sglh200_68 (prints one line a row, then the medians).
"""
