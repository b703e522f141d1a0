"""SGLang's decode-side admission in disaggregated serving (kvplan.engines.sglang.
decode_admission): worked by hand at one measured row's settings, aiconfigurator's
dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527 (SGLang 0.5.8.post1, DeepSeek-R1 NVFP4 with
FP8 KV on B200, decode DP8 EP8, 1,024 in / 1,024 out), and its use by the bench."""

from __future__ import annotations

import pytest

from kvplan.engines.handover import DecodeRankState
from kvplan.engines.sglang.decode_admission import (
    CLIP_MAX_NEW_TOKENS,
    RESERVED_DECODE_TOKENS,
    SglangDecodeAdmission,
    sglang_decode_admission,
)

# The row's decode rank as kvplan sized it before SGLang's DP-attention weight placement
# (kvplan.engines.sglang.engine dp_attention_weights; the hand-worked numbers keep it; the
# bench's pool now is BENCH_POOL below) (SGLang's default mem_fraction_static 0.75 at DP
# attention on a B200, page_size 1): a KV budget of 67,049,699,089 B over the FP8 MLA cell of
# 61 layers x (512 latent + 64 rope) x 1 B = 35,136 B a token -> 1,908,290 tokens
# (max_total_num_tokens); max_num_reqs: init_memory_pool's default, 4,096 (the cap).
POOL = 67_049_699_089 // (61 * (512 + 64))
# With the dense MLP, shared experts and lm_head split over the TP group (SGLang 0.5.x
# deepseek_v2.py under --enable-dp-attention) the decode rank holds fewer weight bytes and
# kvplan's pool grows 1,908,290 -> 2,006,883 tokens (+5.2 %). Since eptpw56 (each EP rank
# holds its ceil(E / ep) routed experts whole, kvplan.weights.expert_layout.experts_on_rank,
# instead of a whole-minus-slice derivation that kept other ranks' NVFP4 scale padding) the
# rank holds about 0.2 MB fewer weight bytes: 6 more tokens of 35,136 B in its KV budget.
BENCH_POOL = 2_006_889
ROW = sglang_decode_admission(pool_tokens=POOL, max_num_reqs=4096, page_tokens=1,
                              dp_attention=8, user_max_running=None)


def test_defaults_as_read() -> None:
    # server_args.py:640 num_reserved_decode_tokens 512; decode.py:73 CLIP 4096.
    assert (RESERVED_DECODE_TOKENS, CLIP_MAX_NEW_TOKENS) == (512, 4096)
    assert POOL == 1_908_290


def test_running_cap_and_slots_by_hand() -> None:
    # model_runner.py:558-565: min(max_total_num_tokens // 2 = 954,145, max_num_reqs 4,096);
    # slots: 4,096 (no pre-allocation above 32 requests, model_runner_kv_cache_mixin.py:348).
    assert ROW.max_running == 4096 and ROW.slots == 4096
    # --max-running-requests 512 over dp 8: 64 running a rank; the pool keeps 512 slots.
    given = sglang_decode_admission(pool_tokens=POOL, max_num_reqs=512, page_tokens=1,
                                    dp_attention=8, user_max_running=512)
    assert (given.max_running, given.slots) == (64, 512)
    # max_num_reqs 16 <= 32: 2 x 16 more slots for preallocated requests (3 x 16 = 48).
    small = sglang_decode_admission(pool_tokens=POOL, max_num_reqs=16, page_tokens=1,
                                    dp_attention=1, user_max_running=16)
    assert (small.max_running, small.slots) == (16, 48)


def test_empty_rank_by_hand() -> None:
    # Nothing held: allocatable = 1,908,290 (need_space_for_single_req 0 with no running
    # batch). A prompt of 1,024 needs max(1,024 + 512, 1,024 + min(1,024, 4,096) - 0) = 2,048
    # free and takes 1,536: the k-th (from 0) fits while 1,908,290 - 1,536 k >= 2,048, i.e.
    # k <= 1,241.07: 1,242 admitted at once.
    empty = DecodeRankState(free_tokens=POOL, running=0, pending=0, running_tokens=0)
    assert ROW.admits(empty, 5000, 1024, 1024) == 1242
    assert ROW.admits(empty, 100, 1024, 1024) == 100


def test_loaded_rank_by_hand() -> None:
    # 64 running (the row's 512 users over 8 ranks), each 500 tokens into its answer: 1,524
    # tokens each, 97,536 in all (retractable). free = 1,908,290 - 97,536 = 1,810,754;
    # allocatable = free - max(512 x 64 = 32,768, 2,048 - 97,536 < 0) = 1,777,986; a prompt
    # needs max(1,536, 2,048 - 97,536) = 1,536: floor(1,777,986 / 1,536) = 1,157 admitted.
    state = DecodeRankState(free_tokens=POOL - 64 * 1524, running=64, pending=0,
                            running_tokens=64 * 1524)
    assert ROW.admits(state, 5000, 1024, 1024) == 1157
    # 1,000 more admitted but not running (pending, 1,024 tokens each held):
    # free = 1,810,754 - 1,024,000 = 786,754; allocatable = 786,754 - 512 x 1,064 = 241,986:
    # floor(241,986 / 1,536) = 157.
    state = DecodeRankState(free_tokens=POOL - 64 * 1524 - 1000 * 1024, running=64,
                            pending=1000, running_tokens=64 * 1524)
    assert ROW.admits(state, 5000, 1024, 1024) == 157


def test_fifo_slots_bound() -> None:
    # 4,095 of 4,096 slots held: one more, whatever the tokens.
    state = DecodeRankState(free_tokens=10**9, running=95, pending=4000, running_tokens=95)
    assert SglangDecodeAdmission(pool_tokens=10**9, page_tokens=1, max_num_reqs=4096,
                                 max_running=4096).admits(state, 10, 1024, 1024) == 1


def test_bench_row_uses_it() -> None:
    # The bench's replay of the row hands the simulation this admission (the connector's
    # decode_admission from the decode worker's pool), and the running cap is its.
    disagg_rows = pytest.importorskip("tests.benches.disagg_rows")
    row = next(r for r in disagg_rows.prospective_rows()
               if r["id"] == "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527")
    batching = disagg_rows._setup(disagg_rows._setup_key(row)).batching
    assert batching.decode_admission == sglang_decode_admission(
        pool_tokens=BENCH_POOL, max_num_reqs=4096, page_tokens=1, dp_attention=8,
        user_max_running=None)
    assert batching.decode_max_seqs == 4096
