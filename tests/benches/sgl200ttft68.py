"""sgl200ttft68 (issue 30): why kvplan's mean TTFT is ~2.5 x the measured on the 36 held-out
aggregated DeepSeek-R1 / V3 FP8 H200 TP 8 SGLang 0.5.9 rows (sglh200_68: median |TTFT err|
151.9 %, TPOT 8.2 %).

READ (shaped from here on): the rows sglh200_68 already named shaped (289, 285, 256:
1,024 / 1,024 at C 4 / 16 / 64) and, for the one-prompt prefill at ISL 8,192, the lowest
concurrency 8,192 / 1,024 row, 268 (C 4) with its two copies (2026-04-06 ..._83,
dsr1_..._8192x1024_c4_cfg81: same figures). Every other row of the 36 stays held out.

What the shaped rows showed (before any held-out row was replayed here): kvplan's TTFT split
on 289 / 285 / 256 is `own` (the prompt's prefill priced alone) 146.8 ms at each C, `behind`
(the other prompts in its extend) 95 / 422 / 855 ms, `queue` 0 / 0 / 501 ms, API 0; the
extends hold C prompts (4 / 16 / 32 at the 32,768 max-prefill-tokens budget): the bench's
fixed-length loop (ROUNDS x C requests of exactly ISL / OSL, all sent at t = 0) keeps every
user in phase, so each turn's C prompts arrive together and one (or two) extends prefill them
all: TTFT grows with C (kvplan / measured 0.93 / 1.99 / 3.59). InferenceX's client (the
workload aggwork64 wrote, tests.benches.aiconfig_agg_client, from InferenceX's
benchmark_serving.py: lengths uniform over [0.8, 1] x ISL / OSL, 10 x C requests, every one
measured) is in the code already and off on the page (aiconfig_agg_runs.CLIENT_WORKLOAD, for
CI's time): on the same three rows it gives 172 / 223 / 353 ms against 260 / 286 / 419
measured (TPOT 11.4 / 20.4 / 40.2 against 10.3 / 16.6 / 33.0; fixed: 11.0 / 18.5 / 32.7).

DECISION RULE (committed before any held-out row was replayed with the client arm):
- Arm: the page's replay (aiconfig_agg_runs.replay) with CLIENT_WORKLOAD on, nothing else
  changed; no kvplan rule or constant changes, so no default output moves. Whether the page
  turns the arm on for these rows is the lead's decision (it moves the heavy page).
- Sets: the 36 held-out rows less the 3 read copies of row 268 (33: "held out"), reported also
  less the 6 copies of 289 / 285 / 256 (27 distinct-measurement rows); the shaped 6 apart;
  and the other SGLang Hopper rows the aggregated replay takes (H200 Qwen3-235B-A22B-FP8,
  0.5.6.post2, 24; H200 Qwen3.5-397B-A17B, 0.5.9, 26): held out, none read here.
- Met if, on the 33 held out: median |TTFT err| falls by at least half (151.9 % -> under
  76 %), AND the kvplan / measured TTFT ratio no longer grows with C at fixed ISL / OSL (its
  C 64 / C 4 quotient, per ISL / OSL with both points, under 1.5 where it was above 2 before),
  AND median |TPOT err| gets no worse by more than 5 points. Reported whatever it gives, per set,
  before (fixed) -> after (client).
"""
