"""`python -m tests.benches.dis3trt68`: what TensorRT-LLM's context servers of section 3j's
TTFT-low rows above 32 users ran, read in their recipes and in TensorRT-LLM's / Dynamo's code,
against the prompt rate the rows measured (issue 29; dis3j67's class: the measured rate a median
0.50 of kvplan's context capacity, tests/benches/disagg_miss67.py). A forensic: no rule changes
here, nothing in kvplan moves, nothing is on a generated page. The 30 rows (`LOW_ROWS`) are the
3j rows of more than 32 users whose TTFT ratio is below 0.75 on examples/disagg-bench.md at
8c882c27; every 3j row was read before (dis3j67, trtctx62, trtttft61, trtdis57): all SHAPED,
none held out, and none is re-fitted here.

FINDING (dis3trt68; no rule written, SHAPED_BY holds nothing from it)

Each candidate of the task, what the code and the recipes say, and what it implies for the rows'
prompt rate (the table below: measured numbers, kvplan's transfer time and context pool at the
row's default replay setup, disagg_rows.replay_setup; rows' measured rate X by Little's law,
disagg_trtllm_load.little_rps):

1. Does a context-only request hold its KV blocks until the transfer completes, and how many
   transfers run at once? Yes (read before: py_executor.py `_send_disagg_ctx_cache` frees the
   sequence slot at once, `_terminate_disagg_ctx_finished_requests` frees the blocks once
   `check_context_transfer_status` sees the send done; trtdis57, disagg_flow docstring). One at a
   time on each end by default: cpp/tensorrt_llm/batch_manager/cacheTransBuffer.cpp
   (CacheTransBufferManager, the 1.1 / 1.2 line as the code index stores it) sets
   `mRecvBufferCount = getEnvRequestKVCacheConcurrent() ? getEnvKVCacheRecvBufferCount() : 1`
   and `mSendBufferCount = getEnvParallelCacheSend() ? getEnvKVCacheSendMaxConcurrenceNum() : 1`
   (later baseTransBuffer.cpp: `getEnvKVCacheSendMaxConcurrenceNum()`, default 1), and
   TensorRT-LLM's docs (disaggregated-service.md, environment variables) say that without
   TRTLLM_REQUEST_KV_CACHE_CONCURRENT the generation executor "will reuse the same resource to
   process KV cache transfer for each request sequentially", and without
   TRTLLM_ENABLE_KVCACHE_RECEIVE_PARALLEL a generation rank receives from a context instance's
   ranks one after another. No recipe read sets any of these variables (prefill_environment /
   decode_environment: TLLM_OVERRIDE_LAYER_NUM, TLLM_LOG_LEVEL, TRTLLM_*_DISABLE_GC,
   TRTLLM_ENABLE_PDL, NCCL_GRAPH_MIXING_SUPPORT only). So each context rank sends, and each
   generation rank receives, one prompt at a time: a single-server queue per rank, which kvplan
   does not model (disagg_sim runs every transfer at once). At the measured rates its load
   (X / units x kvplan's transfer) is at most 0.084 a context rank and 0.167 a generation rank
   over the 30 rows (b200 fp8 cfg553 c128: 8,192-token prompts from DP 8 to TP 8 generation
   servers, 102 ms each); the transfer a prompt would need for one-at-a-time transfers to cap the
   rate at the measured one (units / X) is a median 257x kvplan's on the sending side and 280x
   on the receiving side (smallest 6.0x: cfg553's receiving end). Real, not modelled, and not
   the class.
2. Does GUARANTEED_NO_EVICT reserve ISL + OSL blocks for a context-only request? No recipe read
   sets scheduler_config (TensorRT-LLM's default capacity policy GUARANTEED_NO_EVICT holds),
   which reserves the request's prompt + max_tokens. Dynamo's TensorRT-LLM worker sets
   `stop_conditions.max_tokens = 1` on a prefill request ("For PREFILL mode, set max_tokens=1",
   components/src/dynamo/trtllm/request_handlers/handler_base.py, as GitHub's index stores it
   at 0192e704, after the rows' 0.8.1; its comment: the Rust frontend's PrefillRouter sets 1
   for prefill), and the recipes cap it independently: the context role's max_seq_len is ISL +
   40 where the generation role's is ISL + OSL + 40 (NVIDIA/srt-slurm
   recipes/trtllm/gb300-fp8/1k8k/stp/ctx1_gen2_dep16_batch256_eplb0_mtp0_8192.yaml and
   1k1k/stp/ctx3_gen2_dep8_batch768_eplb0_mtp0_12288.yaml at 527855c1: prefill 1064, decode
   9256 / 2088). A context-only request holds about its prompt. Were it I + O, the 1k8k rows'
   pools would hold 9x fewer prompts (gb300 fp4 cfg373 c8192: bound 0.45 -> 4.1 of the pool);
   the code says it is not.
3. Is the context batch capped below kvplan's? No: kvplan steps each context rank at the
   matched recipe's max_batch_size and max_num_tokens (sglseat58: 16 prompts of 1,024 at
   16 / 16,384 on GB200 / GB300 / B200 1k, 8 at 8 / 8,192 on H200 1k, 2 at 2 / 16,640 on H200
   8k, 1 at 1 / 8,320 on B200 8k, 2 at 2 / 2,048 on H100 1k, 1 at 1 / 8,224 on H100 8k), and
   the generator's one prompt a step on the 6 unmatched rows (b200 cfg549 c256, cfg553,
   cfg554, cfg555, h200 cfg291, cfg294). The recipes read (the two above; trtctx62 the H200 /
   B200 ones) leave enable_chunked_prefill unset (False) and run cuda_graph_config null and
   enable_attention_dp on the context role where its DP size is above 1, as replayed.
   Found on the way and not applied by the replay: the recipes' context
   kv_cache_config.free_gpu_memory_fraction (0.2-0.85 in the matched versions, 0.1 in later
   GB300 FP8 ones) where kvplan sizes the context pool at 0.9; it moves no rate here (item 4).
4. The held KV against the pool at the recipe's own fraction: by Little's law a context rank
   holds at most X x TTFT / ranks prompts (each is held less than its TTFT). Over the recipe's
   context pool (kvplan's pool scaled from 0.9 to the recipe's fraction: kvplan.engines.trtllm.
   budget, (total - weights - reserve) x fraction) that bound is at most 0.22 on 22 of the 24
   matched rows, 0.45 on gb300 fp4 cfg373 c8192 and above 1 only on h100 cfg503 c154 (1.77: two
   8,192-token prompts a rank at 0.3), trtttft61's seat-wait row, where the prompts waiting for a
   generation seat would fill the context pool: where they wait moves, the TTFT does not. Not
   the class.
5. Does the overlap scheduler's off state add a step? No: with disable_overlap_scheduler true
   (the context role of every recipe read) `_executor_loop` forms, runs and answers each step in one
   iteration (check transfers, schedule, forward, sample, `_send_disagg_ctx_cache`,
   `_handle_responses`); no step of lookahead and none added (disagg_flow (a), trtgap54). As
   replayed.
6. Checked on the way, from the page's 3j table at 8c882c27 (all 123 rows): the gap in the
   row's own decode steps ((measured - kvplan TTFT) / measured TPOT) does not follow the
   generation recipe's stream_interval (si 100: 96 rows, median 1.4 steps; si 20: 9 rows,
   median 18.6; si 40: 1 row, 19.0), as the first token goes out at once
   (aiconfig_harness's reading of `_handle_responses`, py_decoding_iter == 1). Not the class.
7. Not read to the rows' version: Dynamo's attention-DP rank hint. The later handler_base.py
   (0192e704) passes a router-chosen `routing.dp_rank` to TensorRT-LLM as SchedulingParams(
   attention_dp_rank, attention_dp_relax=False), strict placement that would bypass the
   engine's fewest-tokens balance on an attention-DP context server; only Dynamo's KV router
   sets that hint, and the recipes read name no router mode (frontend type dynamo, one
   frontend). Whether 0.8.1 had the hint, and which router mode srt-slurm launched, is open.

The row function (disagg_rows.replay, default switches) re-run here on three of the 30 rows
gives the page's TTFT / TPOT: h200 cfg590 c72 562.9 / 14.83 ms, b200 cfg553 c128 1,734.4 /
22.16, h200 cfg291 c128 3,159.5 / 40.08.

So no setting or rule read in the rows' recipes, TensorRT-LLM's context path or Dynamo's prefill
path caps a context server below kvplan's full step at these rows' rates: the serial transfers
(item 1) are real and unmodelled but run at most a sixth busy. dis3j67's reading stands: what is
left is the context step's time at 8-16 prompts a rank (a cost-model term; 24 of the 30 rows are
block-FP8, where trtctx62's opt-in fitted fractions already move H200 TTFT 0.54 -> 0.87), measured
against a kernel table, not read. The 3j rows stay SHAPED.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass

from kvplan.analysis.disagg import transfer_seconds
from tests.benches.disagg_rows import (
    prospective_rows,
    replay_setup,
    stated_concurrency,
    trt_context_recipe,
)
from tests.benches.disagg_trtllm_load import little_rps

# The TTFT-low 3j rows above 32 users (dis3j67's class: examples/disagg-bench.md at 8c882c27,
# section 3j's replay table, TTFT ratio below 0.75 and users above 32): read, all shaped.
LOW_ROWS = (
    "dsr1_b200_trtllm_fp8_disagg_1024x1024_c4096_cfg549",
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c128_cfg553",
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c128_cfg661",
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c256_cfg549",
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c256_cfg666",
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c640_cfg555",
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c640_cfg667",
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c96_cfg554",
    "dsr1_b200_trtllm_fp8_disagg_8192x1024_c96_cfg669",
    "dsr1_gb200_trtllm_fp4_disagg_1024x8192_c4096_cfg239",
    "dsr1_gb200_trtllm_fp4_disagg_1024x8192_c60_cfg374",
    "dsr1_gb200_trtllm_fp4_disagg_1024x8192_c8192_cfg239",
    "dsr1_gb200_trtllm_fp8_disagg_1024x1024_c6144_cfg416",
    "dsr1_gb200_trtllm_fp8_disagg_1024x8192_c2048_cfg375",
    "dsr1_gb200_trtllm_fp8_disagg_1024x8192_c8192_cfg435",
    "dsr1_gb300_trtllm_fp4_disagg_1024x8192_c4096_cfg373",
    "dsr1_gb300_trtllm_fp4_disagg_1024x8192_c60_cfg421",
    "dsr1_gb300_trtllm_fp4_disagg_1024x8192_c8192_cfg373",
    "dsr1_gb300_trtllm_fp8_disagg_1024x1024_c12288_cfg418",
    "dsr1_h100_trtllm_fp8_disagg_1024x1024_c60_cfg494",
    "dsr1_h100_trtllm_fp8_disagg_8192x1024_c154_cfg503",
    "dsr1_h200_trtllm_fp8_disagg_1024x1024_c1152_cfg321",
    "dsr1_h200_trtllm_fp8_disagg_1024x1024_c144_cfg590",
    "dsr1_h200_trtllm_fp8_disagg_1024x1024_c1536_cfg336",
    "dsr1_h200_trtllm_fp8_disagg_1024x1024_c288_cfg590",
    "dsr1_h200_trtllm_fp8_disagg_1024x1024_c3584_cfg328",
    "dsr1_h200_trtllm_fp8_disagg_1024x1024_c72_cfg590",
    "dsr1_h200_trtllm_fp8_disagg_8192x1024_c128_cfg291",
    "dsr1_h200_trtllm_fp8_disagg_8192x1024_c128_cfg675",
    "dsr1_h200_trtllm_fp8_disagg_8192x1024_c768_cfg294",
)


def serial_load(rate_rps: float, transfer_s: float, units: int) -> float:
    """The busy share of one-at-a-time transfers (module docstring, 1): `rate_rps` prompts a
    second spread over `units` single-transfer ends (context ranks sending, or generation ranks
    receiving), each prompt taking `transfer_s`. At 1 the ends are saturated."""
    return rate_rps / units * transfer_s


def capping_transfer_s(rate_rps: float, units: int) -> float:
    """The transfer a prompt would need for `units` one-at-a-time ends to serve exactly
    `rate_rps` (serial_load 1)."""
    return units / rate_rps


def held_prompts_bound(rate_rps: float, ttft_s: float, ranks: int) -> float:
    """Prompts a context rank holds the KV of at most (module docstring, 4): Little's law over
    the measured TTFT, each prompt held less than it (as disagg_trtllm_load.RoleRates.
    held_prompts)."""
    return rate_rps * ttft_s / ranks


def pool_prompts(pool_tokens: int, kvplan_fraction: float, fraction: float,
                 prompt_tokens: int) -> int:
    """Whole prompts of `prompt_tokens` a context rank's pool holds at the recipe's `fraction`,
    kvplan's pool (`pool_tokens` at `kvplan_fraction`) scaled by the fraction: TensorRT-LLM's
    pool is (total - weights - reserve) x free_gpu_memory_fraction
    (kvplan.engines.trtllm.budget)."""
    return int(pool_tokens * fraction / kvplan_fraction) // prompt_tokens


@dataclass(frozen=True, kw_only=True)
class Reading:
    """One row's numbers (module docstring's table)."""

    row_id: str
    rate_rps: float  # measured, Little's law
    transfer_ms: float  # kvplan's, one prompt (disagg.transfer_seconds)
    send_load: float  # serial_load over the context ranks
    recv_load: float  # serial_load over the generation ranks receiving (TP: one a server)
    send_cap_x: float  # capping_transfer_s over kvplan's transfer, sending side
    recv_cap_x: float  # the same, receiving side
    held: float  # held_prompts_bound
    pool: int | None  # pool_prompts at the matched recipe's context fraction (None: no match)

    @property
    def held_share(self) -> float | None:
        return self.held / self.pool if self.pool else None


def reading(row: dict[str, str]) -> Reading:
    """The row's reading at its default replay setup."""
    st = replay_setup(row)
    users = stated_concurrency(row)
    assert users is not None  # every LOW_ROWS row states its concurrency
    isl, osl = int(row["isl"]), int(row["osl"])
    ttft_ms, tpot_ms = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
    rate = little_rps(users, ttft_ms, tpot_ms, osl)
    t_s = transfer_seconds(st.handover, st.req.link)
    send = int(row["prefill_num_workers"]) * st.prefill.layout.replicas
    # A TP generation server's ranks each receive every prompt of the server (one unit a
    # server); attention-DP ranks each receive their own prompts.
    recv = int(row["decode_num_workers"]) * st.decode.layout.replicas
    rec = trt_context_recipe(row)
    pool = (pool_prompts(st.prefill.capacity.token_capacity, st.prefill.mem_fraction,
                         rec.prefill.free_gpu_memory_fraction, isl + 1) if rec else None)
    return Reading(
        row_id=row["id"], rate_rps=rate, transfer_ms=t_s * 1e3,
        send_load=serial_load(rate, t_s, send), recv_load=serial_load(rate, t_s, recv),
        send_cap_x=capping_transfer_s(rate, send) / t_s,
        recv_cap_x=capping_transfer_s(rate, recv) / t_s,
        held=held_prompts_bound(rate, ttft_ms / 1e3, send), pool=pool)


def lines(readings: list[Reading]) -> list[str]:
    out = ["| row | X req/s | transfer ms | serial load send / recv | capping transfer / "
           "kvplan's, send / recv | held prompts a ctx rank | pool at recipe | held / pool |",
           "|" + "---|" * 8]
    for r in readings:
        share = f"{r.held_share:.2f}" if r.held_share is not None else "-"
        out.append(f"| {r.row_id} | {r.rate_rps:.2f} | {r.transfer_ms:.2f} | "
                   f"{r.send_load:.3f} / {r.recv_load:.3f} | {r.send_cap_x:,.1f} / "
                   f"{r.recv_cap_x:,.1f} | {r.held:.1f} | {r.pool if r.pool else '-'} | {share} |")
    shares = [s for r in readings if (s := r.held_share) is not None]
    send = max(r.send_load for r in readings)
    recv = max(r.recv_load for r in readings)
    send_x = statistics.median(r.send_cap_x for r in readings)
    recv_x = statistics.median(r.recv_cap_x for r in readings)
    least_x = min(min(r.send_cap_x, r.recv_cap_x) for r in readings)
    out += ["", f"- rows: {len(readings)}; serial load at most {send:.3f} sending, "
            f"{recv:.3f} receiving",
            f"- capping transfer over kvplan's: median {send_x:,.0f}x sending, {recv_x:,.0f}x "
            f"receiving; smallest {least_x:.1f}x",
            f"- held / pool at the recipe's fraction: {len(shares)} matched rows, at most 0.25 on "
            f"{sum(s <= 0.25 for s in shares)}, above 1 on {sum(s > 1 for s in shares)}"]
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    rows = {r["id"]: r for r in prospective_rows()}
    print("\n".join(lines([reading(rows[i]) for i in LOW_ROWS])))


if __name__ == "__main__":
    main()
