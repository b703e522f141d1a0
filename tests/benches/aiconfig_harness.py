"""How aiconfigurator's aggregated rows were measured (issue 30, aggvllmttft55): the harness,
read in public code after the rows' TTFT was seen (so nothing here is blind), with the rows
split by the provenance their `silicon_data_source` states.

Analysis only: no rule or constant of kvplan is set here and no row's replay changes
(tests.benches.aiconfig_agg_runs replays the rows as frozen). `provenance` is a rule on the
field's format; tests.benches.aiconfig_agg_runs prints the replays' figures by provenance and
the low-load offsets (`offset_line`) after its section.

Printed by: python -m tests.benches.aiconfig_agg_runs (the end of its section).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable

from tests.benches.disagg_rows import Replay

# The last commit before 2026-03-25 (the date most of the rows' source files carry); the
# measuring core cited below (run_benchmark_serving, the client's request function, its random
# data set, process_result.py) is the same from d053ae24e (2026-01-21) to 77b259a5e
# (2026-04-21) but for ef01c2205 (2026-03-27: the client's tokenizer for DeepSeek-R1 under
# transformers v5) and 1780296b0 (2026-04-21: the random prompts made in several processes).
INFERENCEX_COMMIT = "1cb92d21d649c91ed589d1facb46d23e168b40a7"

INFERENCEX_ROWS = "InferenceX"
DYNAMO_ROWS = "gap analysis, Dynamo"
OTHER_ROWS = "gap analysis, not stated"
LOW_LOAD = 4  # "low load": concurrency at most this (the lowest InferenceX sweeps)


def provenance(row: dict[str, str]) -> str:
    """Where a row comes from, as its `silicon_data_source` says. INFERENCEX_ROWS: a row of
    InferenceX's database (`db-dump/...; config_id=...; workflow_run_id=...`, the keys of its
    benchmark_results table) or of one of its daily exports (`source_file=YYYY-MM-DD.csv`,
    naming the workflow's container `image=`). The rest are aiconfigurator's gap-analysis
    files (`source_file=` .../aic-auto-gap-analysis/... or *-gap-analysis.csv): DYNAMO_ROWS
    where the row names a Dynamo runtime image (`dynamo_version=`), OTHER_ROWS where it names
    no image and so no harness."""
    source = row["silicon_data_source"]
    if source.startswith("db-dump/") or (
            re.match(r"source_file=\d{4}-\d{2}-\d{2}\.csv;", source) and "image=" in source):
        return INFERENCEX_ROWS
    if "dynamo_version=" in source:
        return DYNAMO_ROWS
    return OTHER_ROWS


def _low_load_offsets(part: Iterable[Replay]) -> list[float]:
    """measured - kvplan TTFT (ms) of the replayed rows at concurrency <= LOW_LOAD."""
    return [r.measured_ttft_ms - r.ttft_ms for r in part
            if r.replayed and r.ttft_ms is not None and r.concurrency <= LOW_LOAD]


def offset_line(name: str, part: list[Replay]) -> str:
    """One line of the low-load offset table: rows at concurrency <= LOW_LOAD, the median and
    quartiles of measured - kvplan TTFT."""
    offsets = _low_load_offsets(part)
    if len(offsets) < 2:
        return f"| {name} | {len(offsets)} | - | - | - |"
    q1, q2, q3 = statistics.quantiles(offsets, n=4, method="inclusive")
    return f"| {name} | {len(offsets)} | {q2:,.1f} | {q1:,.1f} | {q3:,.1f} |"


# How the InferenceX rows were measured, as the code says (SemiAnalysisAI/InferenceX at
# INFERENCEX_COMMIT unless named; aiconfigurator at 095f58a5).
HARNESS = (
    "How these rows were measured (aggvllmttft55, read after the rows' TTFT was seen; no rule "
    "or constant changed). They are not aiconfigurator's own runs: its silicon_sample.csv is "
    "'a 2026-04 dump of the internal benchmark DB' "
    "(docs/design/prediction_regression_gate_design.md:143-145) and that database is "
    "InferenceX's (SemiAnalysis; github.com/SemiAnalysisAI/InferenceX): aiconfigurator's "
    "adapter reads 'InferenceX DB config/benchmark pairs' "
    "(src/aiconfigurator/sdk/config_adapter/inferencex.py, docs/config_adapter.md:177-189), "
    "the rows' db-dump fields config_id and workflow_run_id are the keys of InferenceX's "
    "benchmark_results table (SemiAnalysisAI/InferenceX-app "
    "packages/db/migrations/001_initial_schema.sql:99-119), and the images the others name are "
    "those of InferenceX's configs (.github/configs/nvidia-master.yaml, e.g. 3168-3180 "
    "gptoss-fp4-b200-vllm on vllm/vllm-openai:v0.15.1, TP 1 from concurrency 4; 1721 "
    "nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post3, the '#' its Slurm launchers write, "
    "runners/launch_h200-dgxc-slurm.sh:70-72). The other rows come from aiconfigurator's "
    "gap-analysis files (source_file .../aic-auto-gap-analysis/... or *-gap-analysis.csv): 16 "
    "TensorRT-LLM rows name a Dynamo runtime image "
    "(nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.9.0), the rest no image, so no harness: "
    "the provenance lines keep them apart. The InferenceX harness: the engine's own server in "
    "the engine's own image, no Dynamo "
    "(benchmarks/single_node/<model>_<precision>_<gpu>[_trt].sh: `vllm serve`, `python3 -m "
    "sglang.launch_server`, `trtllm-serve`), each script with flags of its own that the rows "
    "do not record (gptoss_fp4_b200.sh:32-39: fp8 KV cache, no prefix caching, "
    "--max-num-batched-tokens 8192, --max-cudagraph-capture-size 2048; dsr1_fp8_b200.sh:73: "
    "SGLang's --mem-fraction-static, --chunked-prefill-size, --max-prefill-tokens; "
    "dsr1_fp4_b200_trt.sh:76-78: max_num_tokens the larger of 8,192 and concurrency + ISL + 64 "
    "rounded up to 64, so an 8,192-token prompt shares a step with the running decodes; and "
    "they change between the rows' releases: minimaxm2.5_fp8_b200.sh at bddbf4031, 2026-04-03, "
    "moved from Triton MoE (FlashInfer and DeepGEMM MoE off) with expert parallelism always on "
    "to FlashInfer MoE, fp8 KV cache, --max-num-batched-tokens 2 x ISL and --stream-interval "
    "20, between its vLLM 0.17.0 and 0.19.0 rows). The client: InferenceX's copy of vLLM's "
    "benchmark_serving.py (benchmarks/benchmark_lib.sh:317-335; before 2026-01-21, d053ae24e, "
    "a clone of kimbochen/bench_serving and no warm-up), --backend vllm for vLLM and SGLang "
    "and openai for TensorRT-LLM, both the /v1/completions endpoint with stream true "
    "(utils/bench_serving/backend_request_func.py:234-330, 476-483; benchmark_serving.py:786), "
    "no chat template but in the speculative-decoding (MTP) scripts (*_mtp.sh: "
    "--use-chat-template), whose runs the rows do not tell apart (they state no speculative "
    "decoding); --dataset-name random with --random-range-ratio 0.8 "
    "(.github/workflows/benchmark-tmpl.yml:67): each prompt's length uniform in [0.8 ISL, ISL] "
    "and each output's in [0.8 OSL, OSL], random token ids decoded to text on the client and "
    "tokenized again by the server (benchmark_serving.py:91-169); --ignore-eos; --request-rate "
    "inf under --max-concurrency C (a semaphore: a closed loop whose first C requests start "
    "together, benchmark_serving.py:425-434); 10 x C prompts (the scripts' --num-prompts), "
    "every one measured, the start-up burst and the drain included; 2 x C warm-up requests "
    "first, each the first prompt again (benchmark_lib.sh:332, benchmark_serving.py:352-386). "
    "TTFT is the first SSE chunk carrying `choices` (its text may be empty) minus the time "
    "taken just before the POST, each request in a new aiohttp ClientSession, so a new TCP "
    "connection (backend_request_func.py:243, 270-299); TPOT is (latency - TTFT) / (output "
    "tokens - 1) per request (benchmark_serving.py:248-253). The run's JSON holds the mean, "
    "median and p99 of each (benchmark_serving.py:298-303; utils/process_result.py:117-119 "
    "copies every *_ms key); which one silicon_ttft_ms is, aiconfigurator does not say; the "
    "database keeps median_ttft and median_tpot as its 'hot' columns (InferenceX-app "
    "docs/data-pipeline.md:7, every metric in seconds), so the median is the likelier. Ruled "
    "out by code: the servers' stream intervals (vLLM --stream-interval, TensorRT-LLM "
    "stream_interval 10-20 in the scripts) send the first token at once (vLLM "
    "v1/engine/output_processor.py:324-337, read in the 0.32 wheel: 'It is the first token'; "
    "TensorRT-LLM PyExecutor._handle_responses: py_decoding_iter == 1), so they cannot delay "
    "TTFT.")

# Read after the provenance and offset tables were first printed (aggvllmttft55); no rule or
# constant changed.
FINDING = (
    "What it says about the low TTFT (read after the tables above; nothing fitted and no rule "
    "changed, so every row stays held out and none is shaped). (1) vLLM: the measuring path "
    "holds no component that kvplan lacks and an outside number prices: no Dynamo frontend, "
    "request plane or router (the engine's own server), no chat template; the server's "
    "tokenizing, detokenizing and SSE are the path the sim-to-real study's runs took too "
    "(vLLM's own server, another client), where kvplan without --frontend is within 3.8 % "
    "(median) of the measured TTFT. What the harness adds beyond that is on the client (a new "
    "TCP connection per request, random-token text) or in the statistic (the start-up burst "
    "and the drain measured; mean or median not stated), none of which code or a published "
    "measurement prices at tens of ms (the nearest report, "
    "tenstorrent/tt-inference-server#259, is a batch-synchronisation artefact of another "
    "accelerator's server). (2) At 1,024-token prompts and concurrency <= 4 all three engines' "
    "InferenceX rows sit above kvplan (medians in the table: vLLM and SGLang about 33 ms, "
    "TensorRT-LLM about 120 ms), which a harness-wide cost would explain; but within vLLM the "
    "offset follows the model, release and script (by (model, precision, release), 1,024-token "
    "prompts, concurrency 4: gpt-oss-120b 16 ms on 0.15.1 and 20 ms on 0.18.0; MiniMax-M2.5 "
    "FP8 82 ms on 0.17.0, whose script forced expert parallelism on (`-ge 1`) and turned "
    "FlashInfer and DeepGEMM MoE off, then 34 ms on 0.19.0 after the script changed), and at "
    "8,192-token prompts SGLang's sign flips (kvplan 201 ms above, median), so most of it is "
    "the engine as each script configured it, not a fixed cost of the path; a harness cost of "
    "up to the smallest offset (16 ms) cannot be told apart from kvplan's own error without a "
    "measurement. Nor is it the workload or the statistic: replaying the 107 vLLM InferenceX "
    "rows at concurrency <= 4 with 1,024-token outputs under InferenceX's workload "
    "(tests.benches.aiconfig_harness_replay: 10 x C requests, lengths uniform in [0.8, 1] x "
    "ISL / OSL, every request measured, the frozen setup otherwise) moves the median measured "
    "- kvplan TTFT from 32.5 to 28.7 ms on the 54 rows of 1,024-token prompts (median ratio "
    "0.53 either way) and from 44.5 to 121.2 ms on the 53 of 8,192 (ratio 0.80 -> 0.38; the "
    "median of the requests instead of the mean: 28.6 / 128.4 ms): the bench's fixed lengths "
    "keep the users in step, so every round's prompts queue behind each other, while the "
    "harness's spread lets them arrive apart. So under the harness's own workload the gap "
    "grows with the prompt (about 29 ms at some 920 tokens, 121 ms at some 7,400), which "
    "points at prefill time, kvplan's or the server's per-token work (tokenizing the prompt), "
    "not at a per-request constant; no code read here or published number prices vLLM's "
    "tokenizing of such random-token text. (3) SGLang: InferenceX's B200 DeepSeek-R1 and "
    "Qwen3.5 scripts pass --scheduler-recv-interval 10 below concurrency 16 and 30 from it "
    "(dsr1_fp8_b200.sh:28-59, 74; qwen3.5_fp8_b200.sh:33-35, 66): SGLang's scheduler then "
    "takes new requests only once a counter reaches the interval, a decode step adding 1 and "
    "any other step 1,000 (sglang/srt/managers/scheduler_recv_skipper.py "
    "SchedulerRecvSkipper.handle, _WEIGHT_OF_FORWARD_MODE), so between prefills an arrival "
    "waits up to 10 (30) decode steps before it is scheduled: a per-request delay from code "
    "and a stated value, which kvplan's SGLang scheduler (interval 1) does not simulate; a "
    "bench setting per script would, and its rows would then be shaped by it. Not done here: "
    "it needs each row's script at the row's date. TensorRT-LLM: its scripts' max_num_tokens "
    "(above) is why its 8,192-token rows starve in the frozen replay, and InferenceX also runs "
    "DeepSeek-R1 with MTP on TensorRT-LLM (dsr1_fp4_b200_trt_mtp.sh, "
    "dsr1_fp8_b200_trt_mtp.sh), which would fit the post3 rows' lower TPOT (TRTLLM_FINDING) "
    "but which the rows do not state; its low-load offset at 1,024-token prompts (about 120 "
    "ms) is not explained by any code read here. (4) What would settle the rest: replaying the "
    "InferenceX rows at the flags their script states at the row's date (fp8 KV caches, "
    "--max-num-batched-tokens, TensorRT-LLM's max_num_tokens above the prompt, SGLang's memory "
    "fraction and chunk sizes, the layouts the scripts really ran) with the harness's workload "
    "as above, and knowing whether silicon_ttft_ms is the mean or the median. Since "
    "(sglmoe56, read after the tables above): the SGLang DeepSeek rows' TTFT miss (133 "
    "replayed, median ratio 1.22, |err| 59 %) follows the prompt and the concurrency (1,024 "
    "tokens up to 8 users 0.93 - 1.10; 8,192 tokens 1.38 at 4 users rising to 3.89 at 128) "
    "while TPOT stays near 1: it is the bench's fixed lengths again. Its users stay in step, "
    "so each round's prompts arrive together and queue behind each other's prefills "
    "(prefill first, one 8,192-token prompt a step at SGLang's defaults: DeepSeek-R1 FP8 on "
    "8 x H200 at 4 users, a TTFT of 2.5 prefills of 311 ms on average, 778 ms, against 447 "
    "measured). Under InferenceX's workload at the engine's defaults the 132 rows of "
    "released 0.5.9 / 0.5.10.post1 builds come out below the measured instead (median ratio "
    "0.70, |err| 37.8 %; 0.27 at 8,192 / 1,024 and 128 users). At the flags each row's "
    "script passes at its date (tests.benches.aiconfig_sglang_flags: chunk and input "
    "budgets, running requests, memory fraction, fp8 KV cache; the 21 B300 NVFP4 rows at TP "
    "m, EP m; 142 rows) 0.55 (45.1 %); with the scripts' --scheduler-recv-interval, which "
    "`simulate --engine sglang` now follows (SglangOptionsSim.scheduler_recv_interval: the "
    "requests taken every N decode steps, at once after a prefill step; SGLang 0.5.9 "
    "managers/scheduler.py:1222-1227, scheduler_recv_skipper.py, environ.py:232-235; "
    "default 1, so no frozen replay moves; written after these rows were read, "
    "aiconfig_sglang_flags.recv_shaped()), 0.75 (26.5 %): B200 NVFP4 TP 4 EP 4 / TP 8 EP 8 "
    "0.57 / 0.61 -> 0.99 / 1.03, B200 FP8 TP 8 0.49 -> 0.69, H200 (no interval in its "
    "script) 0.79 either way. Left: all rows under the measured at 64 and more users "
    "(1,024 / 1,024 at 128: 0.47) and the B300 rows (0.11 - 0.56), not read. Since "
    "(vllmlongq62, tests.benches.vllmlong62, read after the vLLM 8,192-token rows' TTFT was "
    "seen; no rule changed): the statistic is more likely the MEAN over every request, the "
    "start-up burst included. Per configuration, the vLLM InferenceX rows' TTFT at 32, 64 "
    "and 128 users over their own 4-user TTFT (a ratio in which a constant error of kvplan's "
    "prices cancels) follows kvplan's own growth of the mean under the harness's workload "
    "(measured / kvplan 1.01 median, quartiles 0.93 - 1.07, 53 of 58 points within 15 %), "
    "not of the median (2.37; none within 15 %); InferenceX's docs name mean_ttft as the "
    "TTFT (AGENTS.md:491). The C prompts sent at t = 0 queue (C - 1) / 2 prefills for 1 / 10 "
    "of the requests, which is why the measured TTFT grows about linearly with the users; "
    "what is left is the 8,192-token prompt's price, about the same factor at 4 users as at "
    "64 (tests.benches.lone_prefill's open question).")

