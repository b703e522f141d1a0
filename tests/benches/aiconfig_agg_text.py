"""The aggregated set's findings, as printed in its section of examples/simulate-bench.md
(tests.benches.aiconfig_agg_runs): each written when its evaluation or reading was done and kept
as it was, the figures in it measured then (the section's tables give the current ones).
"""

from __future__ import annotations

# Read after the one evaluation (aggmeas54, 2026-12-05); no rule or constant was changed.
FINDING = (
    "Read after the one evaluation; no rule or constant changed. TPOT is mostly inside (616 of "
    "683, median ratio 1.06); TTFT mostly is not (252 of 683, median ratio 0.75): vLLM's TTFT "
    "comes out low (527 rows, median 0.69; MiniMax-M2.5 0.63, Qwen3-235B-A22B-FP8 0.67), as in "
    "the prospective sets, where the API server's per-request time outside the engine's steps "
    "(HTTP, tokenizing, streaming: `simulate --frontend`, opt-in and not used here) was the "
    "miss at low load; SGLang's sits near 1 (156 rows, median 1.05; Qwen3.5-397B-A17B bf16 "
    "1.69 over 20 rows). Qwen3-235B-A22B-FP8 is the TPOT outlier (62 rows, median 0.73): its "
    "vLLM 0.12 H200 rows state an MoE TP twice or four times the TP on 19 rows (TP 1 / MoE TP "
    "2 or 4: 13, refused, 235B FP8 weights do not fit one H200; TP 2 / MoE TP 4: 6, replayed "
    "at TP 2), so that model's layout fields are not all consistent. Refused at the "
    "engine's defaults: SGLang 0.5.9 DeepSeek-R1 / V3 FP8 at TP 4 on B200 (10 rows): "
    "158.02 GiB of weights per GPU against 178.35 GiB at SGLang's default "
    "--mem-fraction-static (0.854 as kvplan reads 0.5.3+) leaves -6.84 GiB of KV; the "
    "measured runs must have raised the fraction, which the rows do not record.")

# TensorRT-LLM's rows, first replayed at the stop-54 merge once `simulate --engine trtllm`
# (trtagg54: kvplan.analysis.simulate.trtllm_scheduler, written from TensorRT-LLM's code
# without these rows) landed; the bench's assumptions as frozen (every flag at its default).
# Read after that one evaluation; no rule or constant changed.
TRTLLM_FINDING = (
    "TensorRT-LLM's rows were first replayed at the stop-54 merge, once `simulate --engine "
    "trtllm` (TensorRT-LLM 1.2's PyTorch executor: GUARANTEED_NO_EVICT admission, "
    "max_num_tokens 8,192 and max_batch_size 2,048 by default, no chunked prefill, the "
    "overlap scheduler; kvplan.analysis.simulate.trtllm_scheduler, written from "
    "TensorRT-LLM's code, not from these rows) landed; the rows and the bench's assumptions "
    "as frozen, so they are held out for it too. That one evaluation: 168 of the 749 replayed "
    "(319 refused: releases 1.0.0rc3 and 1.1.0rc2.post2 are outside the scheduler's 1.2 - 1.3 "
    "line); TTFT inside 13, TPOT inside 72, both 6; median |TTFT err| 76.8 %, |TPOT err| 37.8 "
    "%; median ratios 0.72 / 1.22. Read after it (no rule or constant changed): (1) all 69 "
    "replayed rows of 8,192-token prompts (B200: DeepSeek-R1 / V3 45, gpt-oss-120b 24) come "
    "out with TTFT 46-1,109x the measured (TPOT 0.16-2.10x): at the default max_num_tokens "
    "8,192 such a prompt fits a step only with no generation request in it, so kvplan's "
    "scheduler holds the prompts back until the running requests drain, where the measured "
    "runs did not: they must have run a larger max_num_tokens (or chunked prefill) than the "
    "default the bench assumed, which the rows do not record; (2) 18 pairs of rows differ "
    "only in the image (nvcr.io/nvidia/tensorrt-llm/release 1.2.0rc6.post2 vs .post3: the "
    "same model, GPU, layout, lengths and concurrency), and the post3 row's measured TPOT is "
    "a median 0.65x (0.43-0.83x) the post2 row's, a difference the rows' fields do not "
    "explain (speculative decoding or other flags not recorded); kvplan gives both the same, "
    "so its TPOT ratio is 1.75 (median) on the 52 post3 rows against 1.10 on the 62 post2 "
    "rows. The 99 rows of shorter prompts alone: TTFT inside 13, TPOT inside 48, both 6; "
    "median |TTFT err| 58.7 %, |TPOT err| 37.6 %; median ratios 0.42 / 1.38.")

# aggmore54's cohort, read after its one replay (2026-12-05); no rule or constant changed.
AGGMORE_FINDING = (
    "Cohort aggmore54: the checkpoints added after the first evaluation (Qwen3.5-397B-A17B FP8 "
    "and NVFP4, MiniMax-M2.5 NVFP4, Kimi-K2.5 INT4; configs in "
    "tests/data/sim_to_real/aiconfig_configs/, SOURCES.md), stated and committed before any "
    "of their rows was replayed, then replayed once: 520 frozen rows, 320 past every check, "
    "308 replayed (12 refused: nvidia/Qwen3.5-397B-A17B-NVFP4 on SGLang 0.5.10.post1 declares "
    "an fp8 KV cache that SGLang's --kv-cache-dtype auto takes only where the model class "
    "keeps its quant_config, which kvplan does not model). TTFT inside 115, TPOT inside 252, "
    "both 101; median |TTFT err| 37.2 %, |TPOT err| 17.2 %; median ratios 0.83 / 0.91. "
    "Read after that run (no rule or constant changed): vLLM's TTFT comes out low again (147 "
    "rows, median 0.72; the first cohort's vLLM rows 0.69); SGLang's Qwen3.5-397B-A17B FP8 "
    "(161 rows) sits at 1.15 / 0.93, but its 12 rows on 0.5.10.post1 (B300) at a TTFT ratio "
    "of 2.63 (TPOT 1.04); Kimi-K2.5 INT4 on B200 (vLLM 0.15.1, 39 rows) is the weakest, "
    "0.51 / 0.74 (both inside 3), against 0.92 / 0.80 on H200 (vLLM 0.16.0, both inside 22).")

# moehybrid55's cohort (the 221 MoE TP x EP rows), its first evaluation kept as it ran, then
# the rule read after it (`tp_times_ep`); no cost-model rule or constant changed on these rows.
HYBRID_FINDING = (
    "Cohort moehybrid55: the 221 rows stating a MoE TP x EP layout (EP above 1 and below the "
    "TP, MoE TP x EP = TP: SGLang TP 16 = 4 x 4 (76), TP 64 = 8 x 8 (54), TP 4 = 2 x 2 (12); "
    "TensorRT-LLM TP 64 = 8 x 8 (66), TP 16 = 4 x 4 (11), TP 4 = 2 x 2 (2)), refused for their "
    "layout alone until stop 55, first replayed at stop 55 once kvplan sized and timed the "
    "layout from the engines' code (kvplan.weights.expert_layout: E / ep experts a rank, each "
    "split over MoE TP; no all-to-all, the expert outputs joining the TP all-reduce; SGLang "
    "from 0.5.9, TensorRT-LLM from 1.2, vLLM refused), the rows and the bench's assumptions "
    "as frozen. That first evaluation: 103 replayed (84 refused: TensorRT-LLM releases before "
    "1.2, 59; TP 64 over Qwen3.5-397B's 32 heads, 13; the NVFP4 Qwen3.5 KV scheme, 12; 34 "
    "over the CPU bound); TTFT inside 7, TPOT inside 63, both 4; median |TTFT err| 281.7 %, "
    "|TPOT err| 25.8 %; median ratios 3.82 / 1.12 (SGLang 97 rows: 3.82 / 1.12; TensorRT-LLM "
    "6: 6.57 / 1.47). Read after it: most of these rows are not MoE TP x EP runs. 159 of them "
    "state a measured TTFT and TPOT equal to the last digit written to a row that states TP m, "
    "EP e (m = e) or whose id names `tp{m}_ep{e}` (their own ids too: "
    "2026_04_06_deepseek_r1_b200_sxm_sglang_fp4_agg_1024x1024_c128_tp4_ep4_1035 has tp_size "
    "16, MoE TP 4, EP 4 and the measurement of ..._c128_tp4_0_ep4_0_291, TP 4, EP 4): the same "
    "TP m, EP m run on m GPUs, exported with tp_size m x e and MoE TP m. The bench refuses "
    "those now (`tp_times_ep`, a provenance check written after the evaluation, not from "
    "kvplan's misses); the other 62: 21 replayed, all SGLang 0.5.10.post1 DeepSeek-V3 NVFP4 on "
    "B300 (tp_size 16 = 4 x 4, 12 rows; 64 = 8 x 8, 9): TTFT inside 1, TPOT inside 13, both "
    "0; median |TTFT err| 219.9 %, |TPOT err| 20.1 %; median ratios 3.20 / 1.00. Nothing "
    "in those 21 shows they ran on 16 or 64 GPUs either (they may be TP 4 / TP 8 EP runs "
    "written the same way, with no duplicate to show it), so the cohort does not test the "
    "MoE TP x EP rule; why kvplan's TTFT comes out 2.8 - 3.8x the measured on them was not "
    "read. Run time: 65 s of CPU for the 221 rows at the first evaluation, 9 s with the "
    "check. Since (sglmoe56, read after that evaluation; no rule changed): those 21 are TP m, "
    "EP m runs too. InferenceX's config for them, dsr1-fp4-b300-sglang "
    "(.github/configs/nvidia-master.yaml:1675-1693 at 9ebeafb4e, added with its script on "
    "the rows' date, 2026-04-17, image lmsysorg/sglang:v0.5.10.post1-cu130), lists only "
    "{ tp: 4, ep: 4 } and { tp: 8, ep: 8 }, and every one of the 21 rows' MoE TP, EP, "
    "lengths and concurrency is among them; the bench refuses them with the twin rows' reason "
    "(`INFERENCEX_TP_EP`), so the cohort replays none of its SGLang rows and this set does "
    "not test the MoE TP x EP rule. Their 2.8 - 3.8x TTFT was kvplan simulating 16 or 64 "
    "GPUs; replayed at TP 4 EP 4 / TP 8 EP 8 under InferenceX's workload and their script's "
    "flags (tests.benches.aiconfig_sglang_flags, a counterfactual) their median TTFT ratio "
    "is 0.32 / 0.56, below the measured as every B300 SGLang DeepSeek row is there "
    "(FP8 TP 4 0.11, TP 8 0.48): not read.")

# Since the first evaluation (kept above as it was), each later change to TensorRT-LLM's
# simulated scheduler and the rows replayed again after it.
TRTLLM_SINCE = (
    "Since: trtorder54 checked the scheduler's order against TensorRT-LLM's code (issue 30): "
    "the capacity scheduler (GUARANTEED_NO_EVICT, capacityScheduler.cpp "
    "GuaranteedNoEvictScheduler::impl) hands the micro-batch scheduler the generation "
    "requests first, then the prompts it takes, and the micro-batch scheduler "
    "(microBatchScheduler.cpp, the C++ one the PyTorch executor binds by default) stops the "
    "step at the first request of either kind that would pass max_num_tokens (`break`, "
    "not a skip); chunked prefill is off by default (llm_args.py) and a prompt longer than "
    "max_num_tokens is refused (llm.py LLM._check_arguments). kvplan already did this; it "
    "now keeps the capacity scheduler's order rather than re-sorting by arrival (which moves "
    "no output) and, with block reuse on, skips for a step a new prompt whose first uncached "
    "block another prompt is writing (beneficialToSkip; it moves only prompts that share "
    "blocks, which these rows' do not). The 749 TensorRT-LLM rows replayed again after both: "
    "unchanged, every row's figures equal (168 replayed; TTFT inside 13, TPOT inside 72, "
    "both 6; median |TTFT err| "
    "76.8 %, |TPOT err| 37.8 %; median ratios 0.72 / 1.22; the 69 rows of 8,192-token "
    "prompts 46-1,109x the measured TTFT). So the held-back 8,192-token prompts are "
    "TensorRT-LLM's own behaviour at max_num_tokens 8,192, not a misread of its scheduler; "
    "aiconfigurator's generator sets an aggregated engine's max_num_tokens to max_batch_size "
    "+ ISL + 1,500 rounded up to tokens_per_block (rule_plugin/trtllm.rule, as stored at "
    "17676b35), which the bench, its assumptions frozen, does not assume.")

# trt10's cohort, first replayed at stop 55 (2026-12-05), once `simulate --engine trtllm`
# accepted the 1.0 and 1.1 lines; its figures as that first evaluation printed them. Read after
# it; no rule or constant changed.
TRTLLM_LINES_FIRST = (
    "First replayed at stop 55: TensorRT-LLM 1.0 / 1.1 (cohort trt10). `simulate --engine "
    "trtllm` refused releases 1.0.0rc3 and 1.1.0rc2.post2 until trt10 read those lines "
    "(kvplan.analysis.simulate.trtllm_lines: their release notes and the pull requests behind "
    "them, not the source at their tags, which no store here holds): they run as 1.2 but for "
    "the overlap scheduler's early exit, which came in 1.2 (PR #8587), so a request is "
    "scheduled once more after its last token. The rule was written before any of these rows "
    "was replayed, the rows and the bench's assumptions as frozen: held out (19 share a host "
    "with shaped disaggregated rows). That first evaluation: 414 frozen rows, 319 replayed "
    "(95 counted out before kvplan: an EP neither 1 nor the TP 70, attention DP 20, the CPU "
    "bound 5; kvplan refused none); TTFT inside 100, TPOT inside 201, both 73; median |TTFT "
    "err| 48.0 %, |TPOT err| 24.2 %; median ratios 0.88 / 1.04. By release: 1.0.0rc3, 300 "
    "rows, all on H100 (Qwen3-32B FP8 176, Qwen3-235B-A22B-FP8 124): 95 / 195 / 73, 47.2 % / "
    "22.2 %, 0.88 / 1.04; 1.1.0rc2.post2, 19 rows, DeepSeek-R1 on H200 / B200: 5 / 6 / 0, "
    "60.8 % / 52.4 %, 0.81 / 1.44. Read after it (no rule or constant changed): by model, "
    "Qwen3-32B's TPOT sits near (0.85, |err| 16.1 %) and its TTFT low (0.72), "
    "Qwen3-235B-A22B-FP8 high on both (1.35 / 1.30); the 56 rows of 4,096-token prompts "
    "come out at a TTFT ratio of 0.41 (none inside) and the 7 rows of 8,192-token prompts "
    "at 61-548x, the held-back prompts of the stop-54 finding above (max_num_tokens 8,192). "
    "The early exit is not what moves them: the same rows replayed with 1.2's early exit "
    "(a sensitivity run, not a rule) give TTFT inside 100, TPOT 202, both 76, median ratios "
    "0.84 / 1.04 (per row TTFT 0.77-1.00x, median 1.00x; TPOT within 1 %). Cost: 57 s of CPU "
    "for the 319 rows (one process).")
