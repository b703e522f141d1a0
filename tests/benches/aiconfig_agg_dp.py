"""aiconfigurator's aggregated rows run with attention data parallelism (attention_dp_size > 1),
replayed by tests/benches/aiconfig_agg_runs.py through `kvplan simulate --dp-attention`
(kvplan.analysis.simulate.dp_lockstep, aggdp55): the row's DP ranks in lockstep, each its own
scheduler and KV pool, requests dealt by the engine's balancer, every step the slowest rank's.

The rows' layout fields, as aiconfigurator writes them: tp_size the attention TP of one DP
rank, attention_dp_size the ranks, moe_tp_size x moe_ep_size the MoE layout over all GPUs. So
vLLM's `TP 4, attention DP 4, MoE EP 16` is `--tensor-parallel-size 4 --data-parallel-size 4
--enable-expert-parallel` (16 GPUs: `kvplan simulate --tp 4 --dp 4 --ep 16 --dp-attention`),
TensorRT-LLM's `TP 1, attention DP 8, MoE EP 8` is tp_size 8 with enable_attention_dp and
moe_expert_parallel_size 8 (`--tp 1 --dp 8 --ep 8 --dp-attention`). A row whose MoE TP is
above 1 under attention DP (an MoE TP x EP hybrid) is not replayed (the cost model's EP splits
whole experts only). The bench's assumptions are the other rows' (aiconfig_agg_runs: every
engine flag at its default, the closed loop, WORK_BOUND), set before these rows were replayed;
their first replay is cohort `COHORT`, kept in the page beside any later figure.

Read after that first replay (vllmdpep56): every vLLM row here is an InferenceX single-node run
that aiconfigurator's adapter restated (InferenceX's `tp 4, ep 4`, 4 GPUs, written as the TP 4 x
DP 4 EP 16 above); `as_run` reads the layout the run launched, and the bench replays that since
(the rows SHAPED; the cohort's lines keep the stated layout's names).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.dp_lockstep import DpAttentionLayout, dp_attention_layout
from kvplan.engines.base import Engine
from tests.benches.aiconfig_harness import INFERENCEX_ROWS, provenance

COHORT = "aggdp55"  # the session that first replayed the attention-DP rows

# The layout an InferenceX single-node vLLM run launched, where aiconfigurator's row states
# another (vllmdpep56, read after this cohort's first evaluation, so the rows it moves are
# SHAPED: tests/benches/fitted_rows.py). InferenceX records a single-node run as its `tp`, `ep`
# and `dp_attention` only, its GPUs being the TP (SemiAnalysisAI/InferenceX 1cb92d21
# utils/process_result.py:100-112: throughput per GPU = total / tp_size); its database fills
# num_prefill_gpu = num_decode_gpu = tp x ep for such a row (SemiAnalysisAI/InferenceX-app
# 77ca49a packages/db/src/etl/benchmark-mapper.ts:150-158); aiconfigurator's vLLM adapter then
# takes attention DP = GPUs / tp and, with ep > 1, MoE EP = every GPU (ai-dynamo/aiconfigurator
# 095f58a5 src/aiconfigurator/sdk/config_adapter/inferencex.py:139-143, 156-159; dp_attention
# unread for vLLM). So InferenceX's `tp 4, ep 4` reads as TP 4 x DP 4 EP 16 (16 GPUs) and
# `tp 2, ep 2` as TP 2 x DP 2 EP 4, where the run was `vllm serve --tensor-parallel-size 4`
# on 4 GPUs of one node.
# What the scripts launch (benchmarks/single_node/, at the commit the row's image and date
# match): `--enable-expert-parallel` where EP_SIZE > 1 (minimaxm2.5_fp8_b200.sh bddbf4031
# :29-30, 44; minimaxm2.5_fp8_h100.sh 626932a11 :34-35, 45), so EP = TP x DP = TP (no
# all-to-all: vLLM runs it only with DP ranks, kvplan.perf.roofline); with DP_ATTENTION true
# `--tensor-parallel-size=1 --data-parallel-size=$TP --enable-expert-parallel`
# (minimaxm2.5_fp4_b200.sh 79bd988e9 :28-33, minimaxm2.5_fp4_b300.sh 633fd2377 :34-39); the
# Kimi-K2.5 NVFP4 B200 script of the rows' date passes no EP flag at all (NO_EP_FLAG).
NO_EP_FLAG = {
    # kimik2.5_fp4_b200.sh at 79a42e20a / 626932a11 (2026-03-27, the rows' measured date, image
    # v0.17.0): `vllm serve --tensor-parallel-size=$TP` (:34 / :38), no --enable-expert-parallel:
    # the experts split TP-wise (MoE TP = TP).
    ("moonshotai/Kimi-K2.5", "fp4", "b200_sxm"),
}
# The InferenceX configs (.github/configs/nvidia-master.yaml) that list one (tp, ep) with and
# without dp-attn: true in the rows' weeks (2026-04-08 .. 04-21: 79bd988e9, 22d0f12f7,
# 633fd2377, 0c2467c15), keyed (model_path, precision, system, tp); a row of one says which by
# its config_id, read from the concurrencies each config_id's rows hold against each entry's
# range (706 / 726: the 1k/1k 128-256 and 8k/1k 128-512 entries; 707 / 727: dp-attn, 1k/1k
# 256-2048, and 8k/1k 512 at 633fd2377). The others' config_id is not read: refused.
DP_ATTENTION_SPLIT = {
    ("MiniMaxAI/MiniMax-M2.5", "fp4", "b200_sxm", 2),
    ("MiniMaxAI/MiniMax-M2.5", "fp4", "b300_sxm", 2),
    ("MiniMaxAI/MiniMax-M2.5", "fp8", "b300_sxm", 2)}
DP_ATTENTION_CONFIG = {706: False, 707: True, 726: False, 727: True}
_CONFIG_ID = re.compile(r"config_id=(\d+)")


def inferencex_single_node(row: dict[str, str], stated: tuple[int, int, int, int]) -> bool:
    """Whether the row is an InferenceX single-node vLLM run that aiconfigurator states as
    attention DP (the adapter's signature: DP = InferenceX's ep, MoE EP = tp x that)."""
    tp, dp, moe_tp, ep = stated
    return (row["backend"] == "vllm" and provenance(row) == INFERENCEX_ROWS and dp > 1
            and moe_tp == 1 and ep == tp * dp)


def as_run_note(row: dict[str, str], stated: tuple[int, int, int, int]) -> str:
    """The run's InferenceX layout where `as_run` reads one, for the row's label."""
    tp, dp = stated[0], stated[1]
    return (f" (InferenceX TP{tp} EP{dp} on {tp} GPUs)" if inferencex_single_node(row, stated)
            else "")


def as_run(row: dict[str, str], stated: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """(TP, attention DP, MoE TP, EP) the row's run launched: `stated` (the row's fields) but
    for an InferenceX single-node vLLM row (`inferencex_single_node`); InputError where the
    run's attention DP is not read."""
    if not inferencex_single_node(row, stated):
        return stated
    tp, ep = stated[0], stated[1]  # InferenceX's tp, and its ep (the adapter's GPUs / tp)
    if (row["model_path"], row["precision"], row["system"]) in NO_EP_FLAG:
        return tp, 1, tp, 1
    if (row["model_path"], row["precision"], row["system"], tp) in DP_ATTENTION_SPLIT:
        found = _CONFIG_ID.search(row["silicon_data_source"])
        dp_attention = DP_ATTENTION_CONFIG.get(int(found.group(1))) if found else None
        if dp_attention is None:
            raise InputError(f"InferenceX TP {tp} EP {ep}: its config lists it with and without "
                             "attention DP and the row's config_id is not read")
        if dp_attention:
            return 1, tp, 1, tp
    return tp, 1, 1, tp


def rank_layout(backend: str, tp: int, dp: int, moe_tp: int, ep: int) -> DpAttentionLayout:
    """One rank's capacity layout for the row's fields, or InputError saying why not."""
    if moe_tp > 1:
        raise InputError(f"MoE TP {moe_tp} x EP {ep} under attention DP {dp}: an MoE TP x EP "
                         "hybrid, not simulated")
    return dp_attention_layout(Engine(backend).rules, tp=tp, dp=dp, ep=ep)


def why_not(backend: str, tp: int, dp: int, moe_tp: int, ep: int) -> str:
    """Why an attention-DP row is not replayed ("" where it is)."""
    try:
        rank_layout(backend, tp, dp, moe_tp, ep)
    except InputError as e:
        return str(e) if "attention DP" in str(e) else f"attention DP {dp}: {e}"
    return ""


def dp_times_ep(row: dict[str, str], layout: Callable, same: Sequence[dict[str, str]],
                layout_id: re.Pattern[str]) -> str:
    """Why an attention-DP row stating an MoE TP x EP hybrid (MoE TP m > 1, EP e > 1, attention
    DP m x e) is an attention-DP m, EP e run written with attention_dp_size m x e and MoE TP m
    ("" where nothing says so; trtdp56, read after the cohort's first evaluation, as
    moehybrid55's `tp_times_ep` for the rows without attention DP): its id names `tp{m}_ep{e}`
    (InferenceX's TP m, EP e with DP attention: m GPUs, m attention-DP ranks), or a row of the
    same measured TTFT and TPOT (`same`, to the last digit written) states TP 1 x DP m, EP e.
    E.g. ..._8192x1024_c128_tp8_ep8_942 (attention DP 64, MoE TP 8, EP 8) states the
    measurement of ..._8192x1024_c128_tp8_0_ep8_0_987 (TP 1 x DP 8, EP 8)."""
    tp, dp, moe_tp, ep = layout(row)
    if not (tp == 1 and moe_tp > 1 and ep > 1 and dp == moe_tp * ep):
        return ""
    named = layout_id.search(row["id"])
    if (named is not None and (int(named.group(1)), int(named.group(2))) == (moe_tp, ep)) or any(
            r is not row and layout(r) == (1, moe_tp, 1, ep) for r in same):
        return (f"attention DP {moe_tp} x EP {ep} written as attention_dp_size {dp} with MoE TP "
                f"{moe_tp} (its id, or a row of the same measurement, names that layout): not "
                "an MoE TP x EP hybrid")
    return ""


def layout_name(backend: str, tp: int, dp: int, ep: int) -> str:
    return f"{backend} TP{tp} x DP{dp} EP{ep}"


def cohort_lines(part: list, row_of: Callable, layout: Callable,  # type: ignore[type-arg]
                 line: Callable) -> list[str]:
    """The table's lines of the attention-DP cohort: all, by backend, by layout (the rows'
    first replay at stop 55)."""
    mine = [r for r in part if r.cohort == COHORT]
    if not mine:
        return []
    out = [line(f"cohort {COHORT} (first replayed at stop 55: attention DP)", mine)]
    for backend in sorted({row_of(r)["backend"] for r in mine}):
        out.append(line(f"cohort {COHORT}: backend {backend}",
                        [r for r in mine if row_of(r)["backend"] == backend]))

    def name(r) -> str:  # type: ignore[no-untyped-def]
        tp, dp, _, ep = layout(row_of(r))
        return layout_name(row_of(r)["backend"], tp, dp, ep)
    for lay in sorted({name(r) for r in mine}):
        out.append(line(f"cohort {COHORT}: {lay}", [r for r in mine if name(r) == lay]))
    return out


# Read after the one evaluation (aggdp55, 2026-12-05); no rule or constant changed.
FINDING = (
    "Cohort aggdp55 (first replayed at stop 55: attention DP): the 169 frozen rows that run "
    "attention DP, held out (the lockstep ranks, vLLM's balancer (4 x waiting + running, "
    "core_client.py, 0.19.0) and TensorRT-LLM's (active prompt tokens under the expected "
    "count, executor_request_queue.py) and vLLM's all-to-all over EP = TP x DP were written "
    "from the engines' code before any of these rows was replayed). 76 pass every check, 46 "
    "more only the CPU bound; 47 TensorRT-LLM rows run an MoE TP x EP hybrid under attention "
    "DP (not simulated). That one evaluation: 73 replayed (3 refused: TensorRT-LLM "
    "1.1.0rc2.post2, outside the scheduler's 1.2 - 1.3 line); TTFT inside 12, TPOT inside 58, "
    "both 11; median |TTFT err| 283.7 %, |TPOT err| 17.7 %; median ratios 3.84 / 1.02. Read "
    "after it (no rule or constant changed): TPOT holds (vLLM 1.03 over 67 rows); TTFT splits "
    "by node count. vLLM TP 2 x DP 2 EP 4 (4 GPUs, one node; 16 rows) sits at 0.88 / 0.86, "
    "10 rows both inside; TP 4 x DP 4 EP 16 (16 GPUs, two HGX nodes; 51 rows) at 5.46 / 1.10 "
    "(ISL 1,024: 5.08, 36 rows; 8,192: 7.27, 15): the cost model prices the EP all-to-all "
    "(dispatch FP8, combine bf16, (EP - 1) / EP of every routed copy) on the scale-out link "
    "once EP passes the 8 GPUs of a node, so one 1,024-token prefill step of MiniMax-M2.5 FP8 "
    "on B200 takes 114 ms, 101 of them the all-to-all at InfiniBand NDR's 50 GB/s a GPU, where "
    "the measured TTFT of four such prompts a rank is 76 ms: the cross-node all-to-all is the "
    "miss (vLLM's default all2all backend at 0.19 is allgather_reducescatter, "
    "config/parallel.py:160, and half the EP peers share the node), not checked further here. "
    "TensorRT-LLM's 6 rows: the 3 of 8,192-token prompts are held back at the default "
    "max_num_tokens 8,192 as in the other TensorRT-LLM rows (TTFT 43-78x); the 3 of 1,024 "
    "tokens 0.28-0.52 / 0.81-1.31.")


# Read after that evaluation (vllmdpep56): the rows' layout as run (`as_run`), SHAPED.
AS_RUN_FINDING = (
    "Read after that evaluation (vllmdpep56; the 97 vLLM rows are SHAPED since, "
    "tests/benches/fitted_rows.py SHAPED_BY b8b24713, split column 'shaped'): none of them ran "
    "attention DP. They are InferenceX single-node runs: InferenceX records one as tp, ep and "
    "dp_attention, its GPUs the TP (utils/process_result.py:100-112 at 1cb92d21), its database "
    "fills the GPU count as tp x ep (InferenceX-app packages/db/src/etl/benchmark-mapper.ts:"
    "150-158), and aiconfigurator's vLLM adapter reads that as attention DP = GPUs / tp and MoE "
    "EP = GPUs (sdk/config_adapter/inferencex.py:139-159 at 095f58a5). So InferenceX's `tp 4, "
    "ep 4` became TP 4 x DP 4 EP 16 on 16 GPUs where the script ran `vllm serve "
    "--tensor-parallel-size 4 --enable-expert-parallel` on 4 GPUs of one node (benchmarks/"
    "single_node/minimaxm2.5_fp8_b200.sh bddbf4031 :29-30, 44): EP = TP, which vLLM reduces in "
    "the TP all-reduce with no all-to-all (use_all2all_kernels needs DP ranks: fused_moe/"
    "config.py:945-946 at 0.19.0, the rule kvplan.perf.roofline holds); "
    "Kimi-K2.5 NVFP4's script of the rows' date passes no EP flag (MoE TP 4); InferenceX's "
    "dp-attn configs (707 / 727 here) ran TP 1 x DP t. One 1,024-token prefill step of "
    "MiniMax-M2.5 FP8 on B200 cost 114.3 ms as stated (all-to-all 100.6 ms at InfiniBand NDR) "
    "and costs 21.3 ms as run (experts 10.2, TP all-reduce 4.0). Replayed as run (`as_run`; "
    "the cohort's lines keep the stated layout's names): TP 4 x DP 4 EP 16, 51 rows: TTFT "
    "inside 2 -> 22, TPOT 40 -> 50, median |TTFT err| 446.5 -> 29.3 %, |TPOT err| 19.9 -> "
    "9.5 %, ratios 5.46 / 1.10 -> 0.76 / 1.07; TP 2 x DP 2 EP 4, 16 rows: TTFT inside 10 -> "
    "6, TPOT 14 -> 16, ratios 0.88 / 0.86 -> 0.65 / 1.13 (as stated each GPU had carried half "
    "the run's load); 3 MiniMax-M2.5 FP8 B300 rows (configs 735 / 827, listed with and "
    "without dp-attn) are refused for it. Left as found: those 2-GPU rows' TTFT now short at "
    "128 users (1k/1k 0.52 - 0.72, 8k/1k 0.29 - 0.30) and at 4 - 8 (0.53 - 0.63), which the "
    "scripts' --max-num-batched-tokens 2 x ISL and --kv-cache-dtype fp8 (not in the frozen "
    "bench) do not close (replayed with both, not kept: MiniMax-M2.5 FP8 B200 1k/1k at 128 "
    "users 0.52 -> 0.52, NVFP4 8k/1k 0.29 -> 0.43); and the cost "
    "model's all-to-all bytes (top-k copies, FP8 out, bf16 back) beside vLLM 0.19's default "
    "allgather_reducescatter backend (every DP rank's tokens all-gathered, then "
    "reduce-scattered), which no row here tests. The same GPU count (tp x ep) is in the other "
    "engines' InferenceX rows, not read here: TensorRT-LLM's 45 stated 'MoE TP t x EP e under "
    "attention DP t x e' (a dp-attn run of tp_size t, ep_size e on t GPUs: "
    "dsr1_fp4_b200_trt.sh :51, :100 at 1cb92d21) and moehybrid55's 159 `tp_times_ep` rows.")


# trtdp56 (stop 56), read after the cohort's first evaluation (kept above as it ran): the
# TensorRT-LLM rows traced, the engine's code and the rows' scripts read; these rows SHAPED the
# attention-DP balance rule (tests/benches/fitted_rows.py SHAPED_BY, c7cccdf), which is off by
# default, so their frozen figures do not move.
TRTDP_FINDING = (
    "Read after it (trtdp56, stop 56): TensorRT-LLM's attention-DP rows. Their first "
    "evaluation (above, aggdp55): 6 replayed of 72; TTFT inside 0, TPOT inside 4, both 0; "
    "median |TTFT err| 2151.0 %, |TPOT err| 26.9 %; median ratios 21.91 / 0.79. Traced step by "
    "step, the replay shows no admission or balancing fault at the engine's defaults: the "
    "balancer (executor_request_queue.py `_balance_requests_across_ranks`, expected = "
    "max(ceil(all / ranks), the most active), read again at the 1.2 line) deals 8 or 16 "
    "requests to each of the 8 ranks, and each rank's scheduler then does what TensorRT-LLM's "
    "does at max_num_tokens 8,192 (a rank's budget, each rank its own scheduler): an "
    "8,192-token prompt fills a step alone, so a rank runs one request at a time and the next "
    "prompt waits the 1,024 decode steps of the one before (TTFT 188.8 s at 128 users against "
    "2.4 s measured; TPOT 11.88 ms, one request a rank, against 15-27 ms); at 1,024-token "
    "prompts the bench's users stay in step and every rank prefills its 8 prompts in one "
    "8,192-token step (TTFT 302 ms against 1,085). The miss is the bench's assumption of the "
    "engine's defaults: these are InferenceX runs, and their scripts set what moves them "
    "(benchmarks/dsr1_fp4_b200_trt.sh at 6eecc0e66:62-75, 96: --max_num_tokens max(8,192, "
    "C + ISL + 64 rounded up to 64), 8,384 at 128 users of 8,192-token prompts, and "
    "attention_dp_config enable_balance true, timeout_iters 60, batching_wait_iters 0; "
    "gptoss_fp4_b200_trt.sh at b30c3398a: max_num_tokens 20,000, max_batch_size 512, the "
    "balance on at its defaults 50 / 10; all: fp8 KV cache, block reuse off). kvplan did not "
    "simulate the balance; written now from py_executor.py `_schedule` / "
    "`_balance_adp_requests` (kvplan.engines.trtllm.dp_balance.AdpContextGate: a context "
    "request runs when every rank has one, or the wait counter, which also counts "
    "decode-only iterations, reaches timeout_iters, or some rank has no generation request), "
    "off by default as in the engine. Replayed at each script's flags (a counterfactual, next "
    "section; not the set's evaluation, and these rows shaped the rule): with the bench's "
    "workload TTFT inside 0, TPOT inside 6, median ratios 0.36 / 1.05 (the balance holds "
    "nothing while the users stay in step); with InferenceX's workload (10 x C requests, "
    "lengths uniform in [0.8, 1] x ISL / OSL, every request measured) TTFT inside 3, TPOT "
    "inside 4, both 3, median ratios 0.77 / 1.08; the same without the balance 0.21 / 1.73 "
    "(each rank's long prompt then stalls every rank's decodes alone; held, the ranks prefill "
    "together). The 1.2.0rc6.post3 row of 1,024-token prompts at 64 users stays low "
    "(0.48 / 1.35: the post3 rows' lower TPOT, TRTLLM_FINDING, is not explained). Refusals: "
    "40 of the 47 rows stating an MoE TP x EP hybrid under attention DP are attention-DP m, "
    "EP e runs written with attention_dp_size m x e and MoE TP m (`dp_times_ep`: the id names "
    "tp{m}_ep{e}, or a TP 1 x DP m, EP e row states the same measurement), refused as such now; "
    "the 3 H200 1.1.0rc2.post2 rows stay refused by kvplan (the MoE all-to-all workspaces "
    "before 1.2, enabled only with attention DP, are not modelled).")
