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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.dp_lockstep import DpAttentionLayout, dp_attention_layout
from kvplan.engines.base import Engine

COHORT = "aggdp55"  # the session that first replayed the attention-DP rows


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
