"""Section 3j of examples/disagg-bench.md: the frozen TensorRT-LLM rows of the prospective set,
first replayed at trtdis54 (disagg_rows.BACKEND_COHORTS) with TensorRT-LLM's disaggregated flow
(kvplan.engines.trtllm.disagg_flow), a blind test: the rule and the choice of rows were
committed before any of them was replayed. `python -m tests.benches.disagg_trtllm` prints it
alone (the merge regenerates the page).

The first evaluation (blind; the rules frozen at f9d32f28, run once after): 156 rows with full
layouts and a stated concurrency, 10 replayed (9 H200 FP8 DeepSeek-R1, 1 B200 FP8), 113 refused
by kvplan's TensorRT-LLM sizing (attention DP with an MoE model: the all-to-all workspaces are
not modelled), 30 whose image's TensorRT-LLM release is not stated, 3 Qwen3-32B-NVFP4 not sized.
Inside [0.75, 1.33] on both: 0 of 10; TTFT alone 0 of 10; TPOT alone 9 of 10; median ratio
TTFT 0.28, TPOT 1.07 (H200: TPOT 9 of 9, median 1.05; B200 c1: TPOT 1.41). No code error was
found after it; nothing changed (SHAPED_BY holds no record from these rows). Measured beside
it, not used: at TensorRT-LLM's default context seats (2,048 prompts, 8,192 tokens a step)
instead of the generator's max_batch_size 1, still 0 of 10 on TTFT (the ISL 1,024 H200 rows'
TTFT ratios 0.08-0.11 -> 0.13-0.44; ISL 8,192 unchanged). Where it misses: TTFT is 0.6-1.3 s
above kvplan's at 28-288 requests in flight (Little's law gives every prefill worker there a
load kvplan's one-prompt time, 69.5 ms at ISL 1,024 and 365 ms at 8,192, serves with room),
and at 576 in flight the measured worker served 17.2 prompts/s (58 ms each), above kvplan's
14.4/s at one prompt a step: kvplan saturates (TTFT 3.68 x).

The second cohort (blind; trtdep54, the rule frozen at 70b6de89, replayed once after): the 113
rows with an attention-DP role, refused until kvplan sized TensorRT-LLM's MoE all-to-all
workspace (kvplan.engines.trtllm.moe_alltoall: NVLinkOneSided on Blackwell where EP = TP, none
on Hopper or with MoE TP), each role at the max_num_tokens aiconfigurator's generator writes
(disagg_rows._trtllm_tokens; the 10 rows above unchanged by it). Inside [0.75, 1.33] on both:
1 of 113; TTFT alone 6 of 113; TPOT alone 63 of 113; median ratio TTFT 0.18, TPOT 1.27. By
card and precision (TTFT / TPOT inside, median ratios): B200 FP4 2 / 6 of 15 (0.50, 1.38),
B200 FP8 1 / 13 of 17 (0.25, 0.89), GB200 FP4 0 / 7 of 16 (0.19, 1.35), GB200 FP8 0 / 3 of 11
(0.06, 1.30), GB300 FP4 2 / 4 of 17 (0.12, 1.40), GB300 FP8 0 / 6 of 13 (0.07, 1.28), H100
FP8 0 / 8 of 8 (0.14, 1.10), H200 FP8 1 / 16 of 16 (0.17, 1.04). No code error was found
after it; nothing changed (SHAPED_BY holds no record from these rows). Measured beside it, not
used: without the workspace 3 of the 113 rows move (KV-bound decode at 4,096-8,192 in flight:
TTFT ratio 0.86 -> 0.84, 1.89 -> 1.88, 17.62 -> 17.46), none across the band. Where it misses:
as above, TTFT far below the measured under load, and TPOT above it on Blackwell FP4 (B200 /
GB200 / GB300 FP4 medians 1.35-1.40) where Hopper FP8 holds (1.04-1.10).


Shaped since (trtgap54, dc15ac9; SHAPED_BY): the generation server's polled transfer
(kvplan.engines.trtllm.disagg_flow (b)): a request is taken in at a decode step boundary, its
transfer started there, and seen done at a later boundary; an idle server waits for the
transfer. About one decode step more on the H200 rows (c36 76.7 -> 89.4 ms, c72 78.5 -> 94.2,
c144 82.9 -> 103.7, c288 84.9 -> 113.2, 8,192 c48 cfg347 408.9 -> 425.9; c28 cfg297 388.7
unchanged: its arrivals fall just before a boundary), the c1 B200 row 106.6 -> 98.9 (prefill
86.1 + the 12.8 ms transfer the idle server waits for, not two empty 10.3 ms steps): TTFT
still 0 of 10, median 0.28. Read and ruled out in the same pass (trtgap54's report): the
context server does not hold a seat or wait for the send (a context-only request leaves
active_requests for ctx_in_transmission_requests after its step; the send is checked
non-blocking); Dynamo's frontend routes round-robin by default (--router-mode), measured
beside it in the simulation, not used: the closed loop at the rows' equal prompt and output
lengths keeps it balanced (ISL 1,024 rows within 0.2 ms of the least-loaded pick; ISL 8,192
lower, cfg301 c48 1,145.1 -> 1,035.4 ms, cfg347 408.9 -> 391.4, cfg305 c160 1,475.0 ->
1,465.1): no part of the gap.

Since trta2a56 (bcea93d, issue 30; held out for it, `A2A_TEXT`): no EP all-to-all in a TP 8
EP 8 role without attention DP; TPOT inside 72 -> 90 of 123 (median 1.17 -> 1.11), TTFT inside
8 -> 7 (median 0.19 -> 0.16).

trtdis57 (issue 29) approached the TTFT gap from the measured side: Little's law on each row
(tests.benches.disagg_trtllm_load, a counterfactual table; nothing fitted, no rule, no figure
above moved) and a read of what limits a context server's rate (`READ_TEXT` there).

Shaped since trtseat58 (306a8a89, issue 29; SHAPED_BY): the rows are InferenceX runs of
NVIDIA's srt-slurm recipes, whose decode max_batch_size (per rank) seats fewer than the row's
users on 24 of the 98 rows matched to one (tests.benches.srt_slurm_recipes); the measured
seated count sits at it there (tests.benches.disagg_trtllm_seats). The replay seats at it
(disagg_rows.recipe_decode_seats): both inside 9 -> 24 of 123, TTFT 12 -> 27, TPOT 83 -> 88,
median ratio TTFT 0.33 -> 0.68, TPOT 1.10 -> 1.10 (`SEATS_TEXT`).

Shaped since trtttft61 (404cf02c, SHAPED_BY): the H100 rows at the recipes InferenceX named
before NVIDIA/srt-slurm held them (srt_slurm_recipes.NAMED_BEFORE): both inside 36 -> 41 of
123, TTFT 44 -> 49, TPOT 93 -> 93, median ratio TTFT 0.76 -> 0.84 (`TTFT61_TEXT`; the H200 /
B200 FP8 forensic beside it: tests.benches.disagg_trtllm_hopper)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from tests.benches.disagg_rows import (
    BACKEND_COHORTS,
    BAND,
    PREFIX,
    Replay,
    layout,
    prospective_rows,
    replay,
    replay_table,
    stated_concurrency,
)
from tests.benches.disagg_trtllm_load import READ_TEXT, load_lines
from tests.benches.disagg_trtllm_seats import summary_lines as seat_lines
from tests.benches.disagg_ttft_def import section_lines as ttft_def_lines

COHORT = BACKEND_COHORTS["trtllm"]
LATER = "trtdep54"
# Since the first evaluation (trtgap54; tests/benches/fitted_rows.py SHAPED_BY), and that
# evaluation's figures (trtdis54, b3e22112, the rules frozen at f9d32f28), kept beside them.
SHAPED_TEXT = (
    "Shaped since (trtgap54, dc15ac9): the generation server's polled transfer "
    "(kvplan.engines.trtllm.disagg_flow (b): a request taken in at a decode step boundary, its "
    "transfer started there and seen done at a later boundary, an idle server waiting for it), "
    "read after the first evaluation of the trtdis54 rows, which all shaped it; the trtdep54 "
    "rows were not read when it was written (held out for it). The figures above are with it.",
    "",
    "The trtdis54 rows' first (blind) evaluation, before it: both 0 of 10 (0%); TTFT alone 0 of "
    "10 (0%); TPOT alone 9 of 10 (90%); median ratio TTFT 0.28, TPOT 1.07 (dsr1 b200 fp8 TTFT "
    "0.28, TPOT 1.41; dsr1 h200 fp8 TTFT 0.28, TPOT 1.05).",
    "",
    "The trtdep54 rows' first (blind) evaluation, before it: both 1 of 113; TTFT alone 6 of 113; "
    "TPOT alone 63 of 113; median ratio TTFT 0.18, TPOT 1.27.",
    "")

# trta2a56's rule (commit bcea93d, issue 30), written from TensorRT-LLM's code after the
# aggregated rows were read (tests.benches.aiconfig_agg_trtep), not these: held out for it. The
# figures before it are this page's at its parent (trtmoe56 compared the section's output).
A2A_TEXT = (
    "Since trta2a56 (commit bcea93d; written from TensorRT-LLM's code after aiconfigurator's "
    "aggregated rows were read, not these, so a blind test of it): TensorRT-LLM's fused MoE "
    "runs no EP all-to-all without attention DP (CutlassFusedMoE.select_alltoall_method_type: "
    "NotEnabled where dp_size == 1), so a TP 8 EP 8 role no longer pays one (a DP 8 EP 8 role "
    "keeps it). The figures above are with it; before it: both 2 of 123; TTFT alone 8 of 123; "
    "TPOT alone 72 of 123; median ratio TTFT 0.19, TPOT 1.17 (trtdis54: 0 / 0 / 9 of 10, "
    "0.28 / 1.06; trtdep54: 2 / 8 / 63 of 113, 0.19 / 1.27). TPOT moves toward the measured "
    "on Blackwell (FP4 decode medians 1.35-1.40 -> 1.23-1.28) and H200 (1.05 -> 1.01), past "
    "it on H100 (1.10 -> 0.86); TTFT moves away. The all-to-all was 200 ms of an 8,192-token "
    "prompt on an H200 TP 8 EP 8 context server (58 MoE layers x (2 x 10 us + 8,192 x 8 x "
    "7,168 x 3 B x 7/8 / 360 GB/s)), and without it the rows whose measured TTFT shows a "
    "saturated context server no longer saturate in kvplan (cfg675 c128: measured 7,690.8 "
    "ms, kvplan 7,364.7 -> 242.5; cfg679 c768: 8,764.0, 12,642.3 -> 262.1): kvplan's H200 "
    "DeepSeek-R1 prefill is short of the engine's once the all-to-all stops standing in for "
    "it, as on the aggregated rows (tests.benches.aiconfig_agg_trtep: aiconfigurator's "
    "measured TensorRT-LLM MoE op on H200, EP 8, takes 1.40 ms a layer for an 8,192-token "
    "step where kvplan's experts take 0.52).",
    "")

# trtprefill57's rule (commit 08aee189, issue 30), written from TensorRT-LLM's code after the
# aggregated rows were read (tests.benches.aiconfig_agg_trtep), not these: held out for it. The
# figures before it are this page's at its parent (stop 55's main, a86cb96f).
PREFILL_TEXT = (
    "Since trtprefill57 (commit 08aee189; written from TensorRT-LLM's code after "
    "aiconfigurator's aggregated rows were read, not these, so a blind test of it): the PyTorch "
    "backend replays CUDA graphs for generation-only batches only (model_engine.py "
    "_maybe_get_cuda_graph; no torch.compile or piecewise graphs by default at 1.0-1.2), so a "
    "context step runs eagerly and pays each kernel's launch (kvplan.perf.trtllm_ops: the ops "
    "a layer counted from the model files, at kvplan's existing per-op time, PREFILL_LAUNCH_FIT, "
    "fitted on SGLang rows, not refitted). The figures above are with it; before it: both 4 of "
    "123; TTFT alone 7 of 123; TPOT alone 90 of 123; median ratio TTFT 0.16, TPOT 1.11 "
    "(trtdis54: 0 / 0 / 9 of 10, 0.09 / 0.99; trtdep54: 4 / 7 / 81 of 113, 0.17 / 1.17). "
    "TTFT moves toward the measured on every card (b200 fp4 median 0.49 -> 1.14, h200 fp8 "
    "0.10 -> 0.22) but stays far below it on most; TPOT inside 90 -> 83 (the decode role's "
    "steps are graphed and do not pay it; the closed loop's occupancy moves with the context "
    "side).",
    "")

# sglseat58's rule (commit 07479aa1, issue 29): trtseat58's lead (the context servers binding
# cfg346 / cfg315 / cfg412 first) came from these rows, so they shaped it (SHAPED_BY). The
# figures before it are this page's at trtseat58 (41481410); the same figures came out of
# `replay(..., recipe_context=False)` at 07479aa1, run beside the rule.
CONTEXT_TEXT = (
    "Shaped since sglseat58 (commit 07479aa1, frozen before the rows were replayed with it; "
    "tests/benches/fitted_rows.py SHAPED_BY): each context rank steps up to the prefill "
    "max_batch_size prompts within the prefill max_num_tokens of the run's srt-slurm recipe "
    "(2-8 prompts, 8,320-16,896 tokens; disagg_rows.trt_context_recipe) where it took the "
    "generator's one prompt a step, and both roles' max_num_tokens (the estimation run, the "
    "decode all-to-all workspace) are the recipe's, not the generator's rounding. The "
    "figures above are with it; before it (trtseat58, 41481410): both 24 of 123; TTFT alone "
    "27 of 123; TPOT alone 88 of 123; median ratio TTFT 0.68, TPOT 1.10. 65 rows move by "
    "more than 5%; 9 into the band on both, 9 out of it. Where the context servers bound the "
    "load (20 rows with TTFT ratio over 2 before it), the median TTFT ratio falls 13.7 -> 1.89 "
    "(9 still over 2, 6 now under 0.75: their generation ranks bind instead); at 100 users or "
    "fewer a prompt now waits for the step it shares (32 rows moved, median 0.72 -> 1.20: "
    "b200 fp4 cfg320 c45 / c90 leave the band, 1.20 / 0.86 -> 1.63 / 1.67). The overshooting "
    "rows trtseat58 named do not come down (gb200 cfg388 and gb300 cfg417 at 192 users stay "
    "1.47; gb300 cfg417 8,192 c12 1.57; gb200 fp8 cfg386 at most +6%). The seat and load "
    "lines below are at the replay's setup (the recipe's step where matched); the text of "
    "trtdis57 / trtdisttft55 below that speaks of kvplan's one-prompt context step predates "
    "this rule.",
    "")

# trtttft61's rule (commit 404cf02c): the H100 rows' TTFT was read before it, so they shaped it
# (tests/benches/fitted_rows.py SHAPED_BY). The figures before it are this page's at its parent
# (461b879e), both recomputed over the section's 123 replays at 461b879e and at 404cf02c.
TTFT61_TEXT = (
    "Shaped since trtttft61 (commit 404cf02c; written after the H100 rows' TTFT was read, so "
    "they are no test of it; tests/benches/fitted_rows.py SHAPED_BY): the H100 rows' "
    "measured TTFT falls as users are added (ISL 1,024: 12,345 ms at 6 users, 7,137 at 9, "
    "5,052 at 30) and is 240-930 of their own decode steps, a wait for a decode seat and not "
    "a prefill. Their recipes reached NVIDIA/srt-slurm on 2026-03-03, after the rows' "
    "2026-02-08, so trtseat58 left them unmatched; InferenceX's master config named the same "
    "files for the same points on 2026-02-07 (SemiAnalysisAI/InferenceX 32a48459, "
    ".github/configs/nvidia-master.yaml:1732-1995, from the sa-submission-q1-2026 branch), "
    "so a file named there before the measurement is taken at its first srt-slurm version "
    "where that version's decode max_batch_size is the batch its name states "
    "(srt_slurm_recipes.NAMED_BEFORE; 1, 2, 8, 16, 64 seats a server against 2, 3, 10, 20, "
    "77 users). The figures above are with it; before it: both 36 of 123; TTFT alone 44 of "
    "123; TPOT alone 93 of 123; median ratio TTFT 0.76, TPOT 1.08 (h100 fp8: both 0 / TTFT 1 "
    "/ TPOT 6 of 8, median 0.17 / 0.85 -> 5 / 6 / 6, 0.81 / 0.81). 7 rows move, no other "
    "(cfg503 c154's context server binds first in kvplan). What is left on them: kvplan's "
    "decode step is 0.81-0.89 of the measured, so the seat wait (about one generation) is "
    "short by as much; at 60 users 0.66. Not a rule, measured beside it "
    "(tests.benches.disagg_trtllm_hopper --moe fitted): the H200 and B200 FP8 rows' TTFT gap "
    "is their context servers' speed (at the saturated H200 rows a TP 8 EP 8 server serves "
    "2.85 prompts of 8,192 tokens a second, kvplan's 5.06), and the term furthest under is "
    "the block-FP8 experts TensorRT-LLM runs through CUTLASS (MoeConfig.backend default "
    "CUTLASS, CutlassFusedMoE's use_deepseek_fp8_block_scale path; examples/moe-op-bench.md "
    "puts kvplan's default at 0.35 of that op on H200 at 4k-16k tokens, 0.19 at EP 8 over "
    "every GPU): with the opt-in fitted fraction "
    "(FP8_MOE_GEMM 0.20) H200 TTFT inside 3 -> 11 of 25 (median 0.54 -> 0.81), B200 FP8 1 -> "
    "12 of 18 (0.55 -> 0.91), TPOT inside 23 / 13 unchanged. Left opt-in: the fraction is "
    "fitted, and these rows are read.",
    "")

# trtdis64's rule (commit 3b43e0fd): written after the Little's-law split of the rows above
# 1,024 users was read (11 FP8 rows: fitted_rows SHAPED_BY); the figures before it recomputed by
# `replayed_with(..., recipe_kv=False)` over the 58 rows it moves (tests/benches/trtdis64.py).
KV64_TEXT = (
    "Shaped since trtdis64 (commit 3b43e0fd; frozen before any row was replayed with it, "
    "written after the split of the rows above 1,024 users by Little's law was read: 11 "
    "FP8 rows shaped it, tests/benches/fitted_rows.py SHAPED_BY; tests/benches/trtdis64.py): "
    "a recipe-matched row's roles run the recipe's KV-cache dtype (disagg_rows._trt_recipe_kv:"
    " `kv_cache_config: dtype: fp8` on both roles in all 141 srt-slurm versions, read at their"
    " commits), where the FP8 DeepSeek checkpoints' rows kept a bf16 KV cache (the "
    "checkpoint's `auto`); it doubles those roles' pools, halves the transfer and the decode "
    "step's KV reads. The 58 matched FP8 rows move, no other (the FP4 checkpoint's KV is FP8 "
    "already; the 11 unmatched FP8 rows keep bf16). Before it over the 123: both 55; TTFT "
    "alone 63; TPOT alone 95. Over the 58: both 25 -> 27, TTFT 29 -> 30, TPOT 44 -> 47, "
    "median ratio TTFT 0.81 -> 0.75, TPOT 0.94 -> 0.92 (held out of its 11 shaping rows: 47 "
    "rows, both 25 -> 27, TTFT 29 -> 30, TPOT 37 -> 38; shaping: 0 / 0 / 7 -> 0 / 0 / 9). "
    "The rows whose generation pool bound below the recipe's seats come down from far above "
    "the measured TTFT to below it (gb200 fp8 cfg435 c8192 16.16 -> 0.47, cfg416 c6144 2.10 "
    "-> 0.29, b200 fp8 cfg549 c4096 1.44 -> 0.61, h200 cfg673 c512 4.32 -> 0.83, h100 cfg503 "
    "c154 1.30 -> 0.29), their TPOT toward the measured (0.59-0.84 -> 0.70-0.91).",
    "")

# trtseat58's rule (commit 306a8a89, issue 29): written after these rows' misses were read
# (the measured seated counts of tests.benches.disagg_trtllm_seats), so they shaped it
# (tests/benches/fitted_rows.py SHAPED_BY). The figures before it are this page's at its parent
# (f517c36b), recomputed by `replayed_with(..., recipe_seats=False)`.
SEATS_TEXT = (
    "Shaped since trtseat58 (commit 306a8a89; written after these rows' misses were read, so "
    "they are no test of it; tests/benches/fitted_rows.py SHAPED_BY): each generation rank "
    "seats at most the decode max_batch_size of the srt-slurm recipe the run is matched to "
    "(below; disagg_rows.recipe_decode_seats), per rank as TensorRT-LLM applies it, where it "
    "seated the row's decode batch size before (the concurrency over the decode ranks, "
    "aiconfigurator's InferenceX adapter's, never below the users); a request handed to a "
    "full rank waits for a seat, in its TTFT. The figures above are with it; before it: both "
    "9 of 123; TTFT alone 12 of 123; TPOT alone 83 of 123; median ratio TTFT 0.33, TPOT 1.10 "
    "(trtdis54: 0 / 0 / 7 of 10, 0.27 / 0.92; trtdep54: 9 / 12 / 76 of 113, 0.35 / 1.15). 21 "
    "rows move, those whose recipe seats fewer than their users a rank (gb200 / gb300 at 2-48"
    " users a worker against 1-32 seats, b200 fp4 cfg320 c100 / c180 and cfg335 c450): median"
    " TTFT ratio 0.15 -> 1.20, TPOT 1.28 -> 1.17 over them; 15 of them into the band on both,"
    " none out of it. Three more rows have fewer seats than users (b200 fp4 cfg346 c2192, "
    "cfg315 c370, gb300 fp4 cfg412 c3228) and do not move: kvplan's context servers bound "
    "them first (one prompt a rank a step, the generator's, where their recipes step 8 or 2),"
    " so their generation ranks never fill. Where kvplan overshoots now (gb200 cfg388 and "
    "gb300 cfg417 at 192 users, TTFT 1.47; gb300 cfg417 8,192 c12 1.57; gb200 fp8 cfg386 "
    "8,192 c6 1.49), the measured seated count sits at or a little above the recipe's seats "
    "(33.3 a worker against 32), so the engine seated as many as the recipe allows and "
    "kvplan's waits are the longer (its decode steps the slower: TPOT 1.30-1.39 there). "
    "Untouched: the rows whose users a rank are within the recipe's seats (the H200 rows' "
    "recipes seat 16-512, at or above their users), the rows matched to no recipe in force at"
    " their measured date (the H100 rows' recipes are committed after it), and what else the "
    "recipes set (the context server's max_batch_size, stream_interval: below)."
    " Left open: at one to four users the recipes seat exactly the users a worker (gb200 fp8 "
    "cfg378 c4 and cfg386 c3, one seat a worker), where kvplan's handover to the "
    "least-loaded rank never waits, yet the measured TTFT is 5,126 and 669 of their decode "
    "steps (38,597 and 4,963 ms): a request sent to a full worker while another has a free "
    "seat waits a whole generation, as with a frontend that does not route by load; Dynamo's "
    "routing at 0.8.1 was not read.",
    "")

# trtdisttft55 (issue 29): the TTFT gap looked for in code after the 123 rows were read; nothing
# found that the rows' settings turn on, so no rule was written and no figure above moved. What
# was read, for the next reader (the TensorRT-LLM files are the 1.1 / 1.2 line as GitHub's index
# stores them, the nearest to 1.2.0rc6.post1 found; no tagged copy could be fetched).
CHECKED_TEXT = (
    "Looked for in code after these 123 rows were read (trtdisttft55; no rule written, nothing "
    "above moved, SHAPED_BY holds nothing from it):",
    "",
    "- TensorRT-LLM tensorrt_llm/_torch/pyexecutor/py_executor.py (the 1.1 / 1.2 line, "
    "ctx_in_transmission_requests a dict): `_prepare_and_schedule_batch` checks the transfers "
    "each iteration (`_check_disagg_gen_transfer_status`: blocking for one only while every "
    "active request is in transmission); `_prepare_disagg_gen_init` -> `_recv_disagg_gen_cache` "
    "starts a fitting request's transfer where it is scheduled; `_executor_loop_overlap` calls "
    "`_prepare_disagg_gen_transmission_complete` and `_handle_first_token_response` (the context "
    "server's token, py_decoding_iter 1) before that iteration's forward; `_handle_responses` "
    "applies `stream_interval` from the second token only; `_send_disagg_ctx_cache` frees the "
    "context request's sequence slot as its send starts and `_handle_responses` moves it from "
    "active_requests to ctx_in_transmission_requests; `_schedule` waits for context requests "
    "only with attention_dp_config.enable_balance (`_balance_adp_requests`, timeout_iters) or "
    "batch_wait_timeout_iters / batch_wait_max_tokens_ratio > 0 (`_waiting_requests`), none of "
    "which aiconfigurator's generator writes. executor_request_queue.py "
    "`_fetch_and_process_requests` / `_get_from_request_queue`: new requests are taken every "
    "iteration up to max_num_active_requests less the active ones (x the ranks under attention "
    "DP), with no wait at batch_wait_timeout_ms 0. Nothing there holds a transferred request "
    "for more than the boundary rule (b) already models.",
    "- TensorRT-LLM cpp/tensorrt_llm/batch_manager/cacheTransceiver.cpp: "
    "`checkGenTransferStatus` allgathers the ready request ids over the rank group and "
    "completes those every rank has (a non-blocking poll at at-least 0); cacheTransBuffer.cpp: "
    "one pre-allocated receive buffer per generation rank (unless "
    "TRTLLM_REQUEST_KV_CACHE_CONCURRENT) and one send buffer per context rank (unless "
    "TRTLLM_PARALLEL_CACHE_SEND), and dataTransceiver's DataResponder answers from one response "
    "thread, so at most one rank's transfers run one after another. Not a part of "
    "the gap: a context rank finishes at most one prompt a step (the generator's max_batch_size "
    "1), and kvplan's one-prompt step is longer than its transfer on every setup here (the "
    "transfer at most about a fifth of it; it already counts a rank sending to "
    "several decode ranks: disagg.transfer_seconds), so no queue of transfers forms at these "
    "rows' rates.",
    "- aiconfigurator at 095f58a5, generator/config/backend_templates/trtllm/extra_engine_args."
    "1.2.0rc6.post1.yaml.j2 and rule_plugin/benchmark/trtllm.rule: no stream_interval, "
    "attention_dp_config or batch_wait setting; cache_transceiver max_tokens_in_buffer ISL + OSL "
    "+ 500 (or + 1,500) rounded to 32, above one prompt (no buffer allocated per transfer); "
    "backend_templates/benchmark/bench_run.sh.j2: aiperf --concurrency C --num-requests 20 x C "
    "--warmup-request-count 2 x C --streaming, ignore_eos. aiperf's TTFT is its first non-empty "
    "content response, reasoning text included (docs/metrics_reference.md: "
    "content_responses[0].perf_ns - request.start_perf_ns). Whether the rows ran these "
    "templates is not recorded (their silicon_data_source names an image and a workflow run, "
    "not the engine config).",
    "- Dynamo (components/src/dynamo/trtllm/request_handlers/handlers.py as the index stores "
    "it, not the 0.8.1 release): the frontend sends to a prefill worker first and then to a "
    "decode worker (PrefillHandler yields its one response; the decode worker's stream is the "
    "client's); the first token the client sees is the decode worker's first response, as "
    "kvplan has it.",
    "")


def _setup_of(r: Replay) -> str:
    """A row's deployment and lengths without its load (..._1024x1024_c36_cfg303 ->
    ..._1024x1024_cfg303)."""
    return re.sub(r"_c\d+_", "_", r.id.removeprefix(PREFIX))


def gap_lines(done: list[Replay]) -> list[str]:
    """What the measured rows show of the TTFT gap (trtdisttft55): the gap in each row's own
    decode steps, measured TTFT falling as the load rises within one deployment (no closed-loop
    queue does that), and the rows at one to four users. Read from the replays; nothing fitted."""
    rows = [r for r in done if r.ttft_ms is not None and r.concurrency is not None]
    steps = sorted((r.measured_ttft_ms - r.ttft_ms) / r.measured_tpot_ms for r in rows)
    out = ["What the measured rows show of the gap (computed from the replays above):", ""]
    if steps:
        n = len(steps)
        out.append(f"- The gap in each row's own decode steps ((measured - kvplan TTFT) / "
                   f"measured TPOT): median {_median(steps):.0f} over {n} rows (quartiles "
                   f"{steps[n // 4]:.0f} and {steps[3 * n // 4]:.0f}); kvplan above the "
                   f"measured TTFT on {sum(x < 0 for x in steps)}.")
    setups: dict[str, list[Replay]] = {}
    for r in done:
        if r.concurrency is not None:
            setups.setdefault(_setup_of(r), []).append(r)
    multi = {k: sorted(v, key=lambda r: r.concurrency or 0) for k, v in setups.items()
             if len(v) > 1}
    drops: list[tuple[float, str, Replay, Replay]] = []
    for key, group in multi.items():
        worst = max(((a.measured_ttft_ms / b.measured_ttft_ms, a, b)
                     for i, a in enumerate(group) for b in group[i + 1:]),
                    key=lambda x: x[0])
        if worst[0] > 1:
            drops.append((worst[0], key, worst[1], worst[2]))
    drops.sort(key=lambda x: (-x[0], x[1]))
    shown = "; ".join(f"{key} c{a.concurrency} {a.measured_ttft_ms:,.0f} ms -> "
                      f"c{b.concurrency} {b.measured_ttft_ms:,.0f} ms"
                      for _, key, a, b in drops[:4])
    # The context server's layout as the label spells it ("1P DP8 EP8 : ..." under attention DP).
    def adp(key: str) -> bool:
        return re.match(r"\d+P DP\d+", multi[key][0].label) is not None

    fall_adp = sum(adp(key) for _, key, _, _ in drops)
    all_adp = sum(adp(key) for key in multi)
    out.append(f"- Measured TTFT lower at a higher concurrency, within one deployment and "
               f"lengths: {len(drops)} of {len(multi)} deployments with two or more rows"
               + (f" (the largest falls: {shown})" if drops else "")
               + f"; {fall_adp} of these {len(drops)} have an attention-DP context server, "
               f"as {all_adp} of the {len(multi)} do. The mean wait of a closed loop's queue "
               "does not fall as users are added; a wait for a batch to fill, up to a timeout, "
               "does (the attention-DP balance of `_balance_adp_requests`, which, as read, "
               "releases a context-only server's prompts at once: the rank holding one holds no "
               "generation request; `_waiting_requests` is off under attention DP). Which of the "
               "rows' engines ran such a setting is not recorded.")
    low = sorted((r for r in rows if (r.concurrency or 0) <= 4), key=lambda r: r.id)
    if low:
        shown = "; ".join(f"{r.id.removeprefix(PREFIX)} {r.measured_ttft_ms:,.0f} vs "
                          f"{r.ttft_ms:,.0f} ms" for r in low if r.ttft_ms is not None)
        out.append(f"- At one to four users, measured vs kvplan TTFT: {shown}.")
        # Rows of one deployment, ISL and load that differ only in OSL: kvplan's TTFT is the
        # same prefill and transfer for both.
        pairs: dict[tuple[str, int, int | None], list[Replay]] = {}
        for r in low:
            key = (re.sub(r"_\d+x\d+_", "_", _setup_of(r)), r.input_len, r.concurrency)
            pairs.setdefault(key, []).append(r)
        for (_, isl, conc), group in sorted(pairs.items(), key=lambda x: str(x[0])):
            if len({r.output_len for r in group}) > 1:
                short, long_ = min(group, key=lambda r: r.output_len), max(
                    group, key=lambda r: r.output_len)
                out.append(f"- Same deployment, ISL {isl:,} and {conc} users, OSL "
                           f"{short.output_len:,} vs {long_.output_len:,}: measured TTFT "
                           f"{short.measured_ttft_ms:,.0f} vs {long_.measured_ttft_ms:,.0f} ms "
                           f"(kvplan {short.ttft_ms:,.0f} vs {long_.ttft_ms:,.0f}, one prefill "
                           "and one transfer each).")
    return [*out, ""]


def _share(rows: list[Replay], test: Callable[[Replay], bool]) -> str:
    n = sum(test(r) for r in rows)
    return f"{n} of {len(rows)}" + (f" ({n / len(rows):.0%})" if rows else "")


def _inside(i: int) -> Callable[[Replay], bool]:
    return lambda r: r.ratios is not None and BAND[0] <= r.ratios[i] <= BAND[1]


def _median(values: list[float]) -> float:
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _group(r: Replay) -> str:
    """Card and precision as the row's id spells them (dsr1_h200_trtllm_fp8_... -> h200 fp8)."""
    parts = r.id.removeprefix(PREFIX).split("_disagg_")[0].split("_")
    return " ".join(p for p in parts if p not in ("trtllm", "sxm") and not p.isdigit())


def _medians(rows: list[Replay]) -> str:
    ratios = [r.ratios for r in rows if r.ratios is not None]
    if not ratios:
        return "no ratio"
    return (f"median ratio TTFT {_median([x[0] for x in ratios]):.2f}, TPOT "
            f"{_median([x[1] for x in ratios]):.2f}")


def full_rows() -> list[str]:
    """Ids of the frozen TensorRT-LLM rows with both worker counts and a stated concurrency."""
    return [PREFIX + r["id"] for r in prospective_rows()
            if r["backend"] == "trtllm" and r["prefill_num_workers"].strip()
            and r["decode_num_workers"].strip() and stated_concurrency(r) is not None]


def dp_attention_rows() -> set[str]:
    """Ids of the full rows with an attention-DP role: refused (the MoE all-to-all workspace not
    sized) until trtdep54 (kvplan.engines.trtllm.moe_alltoall), first replayed there."""
    full = set(full_rows())
    return {PREFIX + r["id"] for r in prospective_rows() if PREFIX + r["id"] in full
            and any(layout(r, role).dp_attention for role in ("prefill", "decode"))}


def _split(done: list[Replay]) -> list[str]:
    dep = dp_attention_rows()
    later = [r for r in done if r.id in dep]
    first = [r for r in done if r.id not in dep]
    out = [f"Of these, {len(first)} first replayed at trtdis54 and {len(later)} at {LATER} "
           "(an attention-DP role: kvplan sized the MoE all-to-all workspace from then, "
           "kvplan.engines.trtllm.moe_alltoall; rule frozen at 70b6de89, rows replayed once "
           "after: blind; each cohort's first evaluation is below):", ""]
    for name, rows in ((f"trtdis54 ({len(first)})", first), (f"{LATER} ({len(later)})", later)):
        out.append(f"- {name}: both {_share(rows, lambda r: r.inside)}; TTFT "
                   f"{_share(rows, _inside(0))}; TPOT {_share(rows, _inside(1))}; "
                   f"{_medians(rows)}")
    groups: dict[str, list[Replay]] = {}
    for r in later:
        groups.setdefault(_group(r), []).append(r)
    for name, group in sorted(groups.items()):
        out.append(f"  - {LATER} {name}: both {_share(group, lambda r: r.inside)}; TTFT "
                   f"{_share(group, _inside(0))}; TPOT {_share(group, _inside(1))}; "
                   f"{_medians(group)}")
    return out


def section(all_rows: list[Replay] | None = None) -> list[str]:
    """The section over the bench's replays (`all_rows`), or these rows replayed alone."""
    full = set(full_rows())
    if all_rows is None:
        all_rows = [replay(r, prospective=True) for r in prospective_rows()
                    if PREFIX + r["id"] in full]
    mine = [r for r in all_rows if r.id in full]
    done = [r for r in mine if r.replayed and r.cohort == COHORT]
    why = Counter(r.why_not for r in mine if not r.replayed)
    out = [f"### 3j. Prospective: TensorRT-LLM rows ({COHORT}, blind)", "",
           f"The frozen set's TensorRT-LLM rows with both worker counts and a stated concurrency: "
           f"{len(mine)}. Replayed with TensorRT-LLM's disaggregated flow "
           "(kvplan.engines.trtllm.disagg_flow, read from tensorrt_llm/_torch/pyexecutor/"
           "py_executor.py and llmapi/llm_args.py, the 1.2 line): the context server steps up "
           "to max_batch_size whole prompts within max_num_tokens per rank (the srt-slurm "
           "recipe's where the run is matched to one, since sglseat58, else the generator's 1 "
           "prompt; no chunked prefill; overlap scheduler off), the generation server returns "
           "the context server's first token when it first schedules the request after the "
           "KV is there (0 steps past that boundary) and seats it under its max_batch_size "
           "(the srt-slurm recipe's where the run is matched to one, since trtseat58, else the "
           "row's decode batch size) and its pool's I + O reservation. The image's "
           "TensorRT-LLM release from aiconfigurator's dynamo matrix "
           "(disagg_rows.DYNAMO_TRTLLM). The rule and the "
           "choice of rows were committed before any row was replayed; the first "
           f"evaluation's figures follow the current ones. Replayed {len(done)}; the rest "
           "counted with why (below).", "",
           f"Inside [{BAND[0]}, {BAND[1]}] on both TTFT and TPOT: "
           f"{_share(done, lambda r: r.inside)}; TTFT alone {_share(done, _inside(0))}; TPOT "
           f"alone {_share(done, _inside(1))}; {_medians(done)}.", ""]
    groups: dict[str, list[Replay]] = {}
    for r in done:
        groups.setdefault(_group(r), []).append(r)
    for name, group in sorted(groups.items()):
        out.append(f"- {name}: both {_share(group, lambda r: r.inside)}; TTFT "
                   f"{_share(group, _inside(0))}; TPOT {_share(group, _inside(1))}; "
                   f"{_medians(group)}")
    out += ["", *_split(done)]
    out += ["", *SHAPED_TEXT, *A2A_TEXT, *PREFILL_TEXT, *SEATS_TEXT, *CONTEXT_TEXT, *TTFT61_TEXT,
            *KV64_TEXT,
            *seat_lines(done),
            *CHECKED_TEXT, *gap_lines(done),
            *load_lines(done),
            *READ_TEXT, *ttft_def_lines(done),
            "| not replayed: why | rows |",
            "|---|---|"]
    out += [f"| {reason} | {n} |" for reason, n in sorted(why.items(), key=lambda x: -x[1])]
    out += ["", *replay_table(done)]
    return out


if __name__ == "__main__":
    print("\n".join(section()))
