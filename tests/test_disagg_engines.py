"""`kvplan plan --disagg --engine sglang|trtllm` (issue 29): the KV one request hands over, as
SGLang's disaggregation and TensorRT-LLM's cache transceiver move it, derived by hand per layer
kind from real configs.

SGLang, read from sgl-project/sglang main as stored in 2026 (python/sglang/srt/disaggregation/):
- prefill.py `pop_bootstrapped`: `kv_to_page_num(len(origin_input_ids))` pages, every page of
  the prompt; mooncake/conn.py `send_kvcache`: `item_len x pages` per layer buffer (K and V
  apart; MLA one latent buffer) -> cdiv(I, page) x page tokens per layer.
- prefill.py `send_kv_chunk` `_swa_payload`: the SWA pool's pages of
  [floor(max(0, I - w) / page) x page, I), w = sliding_window - 1 (models/gpt_oss.py);
  `_mamba_payload`: the one state slot; `_nsa_payload`: every page of the indexer keys.
- common/conn.py `CommonKVReceiver`: MLA from one prefill rank; MHA with prefill TP larger
  from all P / D ranks; mooncake/conn.py `send_kvcache_slice`: each sends its max(1, H / P)
  heads into the decode rank's max(1, H / D)-head token slots (no deduplication).
- The hybrid payloads by release, and between unequal TP sizes (read in the 0.5.2-0.5.23
  wheels, kvplan.engines.sglang.state_transfer): none before 0.5.4, NIXL's from 0.5.9; the
  Mamba slot cut on its TP axis (mooncake 0.5.9+, NIXL 0.5.11+), the SWA pool's pages
  head-sliced (0.5.22+); Llama 4's chunked layers send the last attention_chunk_size tokens.

TensorRT-LLM, read from NVIDIA/TensorRT-LLM main as stored in 2026
(cpp/tensorrt_llm/batch_manager/cacheFormatter.cpp, mlaCacheFormatter.cpp, kvCacheUtils.h):
- `getBlockRangeForSending`: every block of the request, cdiv(I, 32) by default; with several
  window sizes each window pool's last `window / tokens_per_block + 1` blocks.
- `needSendCache` / `pickRecvConnections`: a context rank duplicating a head does not send;
  MLA from one context rank.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.disagg import DisaggRequest, plan_disagg
from kvplan.analysis.plan_types import Layout
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.handover import PrefillRankState
from kvplan.engines.sglang.dp_balance import BOOTSTRAP_ROOM
from kvplan.engines.trtllm.dp_balance import TRTLLM_ADP_BALANCE
from kvplan.engines.vllm.dp_balance import VLLM_DP_BALANCE
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link
from kvplan.sources.resolve import load_model

CONFIGS = Path(__file__).parent / "data" / "configs"
SG, TRT = Engine.sglang, Engine.trtllm
runner = CliRunner()


def _handover(model: str, prefill: Layout, decode: Layout, input_len: int, *,
              gpu: str = "H100", **kw: object):
    spec, _ = load_model(model)
    return plan_disagg(spec, DisaggRequest(
        prefill=prefill, decode=decode, input_len=input_len, output_len=1024,
        gpu=get_gpu(gpu), link=get_kv_link("ib-ndr"), **kw)).handover


# --- SGLang -----------------------------------------------------------------------------------

def test_sglang_gqa_every_page_of_the_prompt() -> None:
    # Llama-3.1-8B (32 layers, 8 KV heads x 128), bf16, TP 1 -> 1, SGLang's page of 1 token:
    # 1,000 pages x 1 token x (8 x 128 x 2 (K, V) x 2 B = 4,096 B) x 32 layers.
    h = _handover("llama-3.1-8b", Layout(tp=1), Layout(tp=1), 1000, engine=SG)
    assert h.block_size == 1
    assert h.bytes_per_rank == h.transfer_bytes == (32 * 1000 * 4096,) == (131_072_000,)
    # --page-size 64: cdiv(1000, 64) = 16 pages moved whole, 1,024 tokens.
    h = _handover("llama-3.1-8b", Layout(tp=1), Layout(tp=1), 1000, engine=SG,
                  extra={"block_size": 64})
    assert h.bytes_per_rank == (32 * 16 * 64 * 4096,)


def test_sglang_prefill_tp_larger_writes_replicated_heads_once_per_replica() -> None:
    # Qwen3-30B-A3B (48 layers, 4 KV heads x 128), bf16, prefill TP 8 -> decode TP 2, 4,096
    # tokens. A decode rank holds max(1, 4 / 2) = 2 heads: 2 x 128 x 2 x 2 B = 1,024 B/token.
    # It receives from all 8 / 2 = 4 prefill ranks (common/conn.py target_tp_ranks), each
    # writing its max(1, 4 / 8) = 1 head (512 B/token): ranks 0, 1 both hold head 0 and both
    # send it. 4 x 48 x 4,096 x 512 = 402,653,184 B, twice the rank's own 201,326,592 B
    # (vLLM and TensorRT-LLM read each head once: 201,326,592).
    h = _handover(str(CONFIGS / "qwen3-30b-a3b.json"), Layout(tp=8), Layout(tp=2), 4096,
                  engine=SG)
    assert h.bytes_per_rank == (4 * 48 * 4096 * 512,) * 2 == (402_653_184,) * 2
    assert h.transfer_bytes == (48 * 4096 * 512,) * 8
    assert h.sender_bytes == (100_663_296,) * 8


def test_sglang_decode_tp_larger_reads_its_heads_from_one_rank() -> None:
    # Llama-3.1-70B (80 layers, 8 KV heads), prefill TP 4 -> decode TP 8, 4,096 tokens: decode
    # rank d takes its 1 head (512 B/token) from prefill rank d x 4 / 8.
    h = _handover("llama-3.1-70b", Layout(tp=4), Layout(tp=8), 4096, engine=SG)
    per = 80 * 4096 * 512
    assert h.bytes_per_rank == (per,) * 8 and h.transfer_bytes == (per,) * 8
    assert h.sender_bytes == (2 * per,) * 4


def test_sglang_mla_latent_from_one_rank() -> None:
    # DeepSeek-V2-Lite (27 layers, kv_lora_rank 512 + qk_rope_head_dim 64 = 576 x 2 B =
    # 1,152 B/token), TP 1 -> TP 2: both decode ranks take the whole latent from prefill rank
    # 0 (MLA: one real target rank), 27 x 4,096 x 1,152 = 127,401,984 B each.
    h = _handover("deepseek-v2-lite", Layout(tp=1), Layout(tp=2), 4096, engine=SG)
    assert h.bytes_per_rank == (27 * 4096 * 1152,) * 2 == (127_401_984,) * 2
    assert h.sender_bytes == (2 * 127_401_984,)
    # DeepSeek-V3 (61 layers), TP 8 -> TP 8 on H200: the same row on every rank.
    h = _handover("deepseek-v3", Layout(tp=8), Layout(tp=8), 8192, gpu="H200", engine=SG)
    assert h.bytes_per_rank == (61 * 8192 * 1152,) * 8


def test_sglang_time_side_of_the_handover() -> None:
    # SGLang's disaggregated scheduler as read in 0.5.5.post2 / 0.5.8.post1 (connectors.py
    # docstring): the overlap decode loop streams the prebuilt batch's first token one step
    # after the boundary that saw the transfer done (decode.py event_loop_overlap_disagg_decode,
    # get_new_prebuilt_batch); the overlap prefill loop forms step k + 1 as step k starts
    # (prefill.py event_loop_overlap_disagg_prefill), through 0.5.21 (0.5.22 rewrote it); the
    # prefill's DP rank is bootstrap_room % dp_size (data_parallel_controller.py).
    for version, lookahead in (("0.5.5.post2", True), ("0.5.8.post1", True), ("0.5.21", True),
                               ("0.5.22", False)):
        h = _handover("deepseek-v2-lite", Layout(tp=1), Layout(tp=1), 1000, engine=SG,
                      engine_version=version)
        assert (h.first_token_steps, h.prefill_lookahead, h.prefill_random_rank) == (
            1.0, lookahead, True)
    d = h.to_dict()
    assert (d["first_token_steps"], d["prefill_lookahead"], d["prefill_random_rank"]) == (
        1.0, False, True)


def test_each_connector_answers_its_engines_prefill_balance() -> None:
    # The prefill worker's DP rank, one rule per engine (kvplan.engines.<engine>.dp_balance):
    # vLLM's API server client and TensorRT-LLM's executor balance by load, whichever
    # connector; SGLang's disaggregated prefill follows the bootstrap room, not by load (the
    # Handover's `prefill_random_rank`).
    names = {"vllm": ("nixl", "mooncake"), "sglang": ("mooncake", "nixl"), "trtllm": (None,)}
    rules = {"vllm": VLLM_DP_BALANCE, "sglang": BOOTSTRAP_ROOM, "trtllm": TRTLLM_ADP_BALANCE}
    for engine, connectors in names.items():
        for name in connectors:
            rule = Engine(engine).rules.kv_connector(name).prefill_balance()
            assert rule is rules[engine]
            assert rule.by_load == (engine != "sglang")


def test_sglang_bootstrap_room_is_a_uniform_rank() -> None:
    # bootstrap_room % dp_size of a uniform random room: each of 4 ranks about a quarter of
    # 4,000 draws (a binomial's sd is ~27: within 150), the same draws from the same seed.
    idle = [PrefillRankState(waiting=0, running=0, prompt_tokens=0)] * 4
    draws = [BOOTSTRAP_ROOM.rank(idle, 100, rng) for rng in [random.Random(0)]
             for _ in range(4000)]
    counts = [draws.count(r) for r in range(4)]
    assert sum(counts) == 4000 and all(abs(c - 1000) < 150 for c in counts)
    again = random.Random(0)
    assert draws[:50] == [BOOTSTRAP_ROOM.rank(idle, 100, again) for _ in range(50)]


def test_sglang_sliding_window_pool_sends_its_window_pages() -> None:
    # gpt-oss-20b (24 layers alternating window 128 and full; 8 KV heads x 64: 2,048 B/token)
    # with SGLang's SWA pool (0.5.8+), --page-size 16, 8,192 tokens. Full layers: 512 pages.
    # Window layers: w = 128 - 1 = 127, start = floor((8192 - 127) / 16) x 16 = 8,064, pages
    # of [8064, 8192) = 8 (vLLM's NIXL reads cdiv(128, 16) + 1 = 9).
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), 8192, engine=SG,
                  engine_version="0.5.9", extra={"block_size": 16})
    assert h.bytes_per_rank == (12 * 512 * 16 * 2048 + 12 * 8 * 16 * 2048,) == (204_472_320,)
    # 0.5.7 has no SWA pool for gpt-oss: its window layers are in the full pool, every page.
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), 8192, engine=SG,
                  engine_version="0.5.7", extra={"block_size": 16})
    assert h.bytes_per_rank == (24 * 512 * 16 * 2048,)
    # Page of 1: the window layers move 127 tokens.
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), 8192, engine=SG,
                  engine_version="0.5.9", extra={"block_size": 1})
    assert h.bytes_per_rank == (12 * 8192 * 2048 + 12 * 127 * 2048,)


def test_sglang_mamba_state_slot() -> None:
    # Qwen3-Next-80B-A3B at TP 2 -> 2: 12 full layers of 1 KV head x 256 (1,024 B/token) and
    # 36 Gated DeltaNet states per rank: conv 3 x 4,096 bf16 (24,576 B) + SSM 16 x 128 x 128
    # in SGLang's default float32 (1,048,576 B) = 1,073,152 B, one slot each. T = I (SGLang
    # sends every prompt token's KV; vLLM's NIXL stops one short on recurrent models).
    h = _handover("qwen3-next-80b-a3b", Layout(tp=2), Layout(tp=2), 8192, gpu="H200",
                  engine=SG)
    assert h.tokens_moved == 8192
    assert h.bytes_per_rank == (12 * 8192 * 1024 + 36 * 1_073_152,) * 2


def test_sglang_mamba_state_between_unequal_tp() -> None:
    # Qwen3-Next-80B-A3B (48 layers: 12 full of 2 KV heads x 256, 36 Gated DeltaNet of 16 key
    # and 32 value heads x 128, conv kernel 4), 8,192 tokens, SGLang's dtypes (conv bf16, SSM
    # float32). Slot per rank at TP t: conv 3 x (2 x 16 x 128 + 32 x 128) / t x 2 B + SSM
    # (32 / t) x 128 x 128 x 4 B: TP 2 1,073,152 B; TP 4 3 x 2,048 x 2 + 8 x 65,536 =
    # 536,576 B. Newest release (0.5.9+ mooncake): _send_mamba_state_slice
    # (state_transfer.py).
    # Prefill TP 4 -> decode TP 2 (aggregation): each of prefill ranks 2d, 2d + 1 writes its
    # whole 536,576 B slot into decode rank d's 1,073,152 B one; the full layers: both write
    # their max(1, 2 / 4) = 1 head (1,024 B/token) into the rank's 1-head slots (no dedup).
    # Per decode rank: 2 x 12 x 8,192 x 1,024 + 36 x 1,073,152 = 239,960,064 B.
    h = _handover("qwen3-next-80b-a3b", Layout(tp=4), Layout(tp=2), 8192, gpu="H200",
                  engine=SG)
    assert h.bytes_per_rank == (2 * 12 * 8192 * 1024 + 36 * 1_073_152,) * 2 == (
        239_960_064,) * 2
    assert h.transfer_bytes == (12 * 8192 * 1024 + 36 * 536_576,) * 4 == (119_980_032,) * 4
    # Prefill TP 2 -> decode TP 4 (scatter): decode rank d's 536,576 B slot and its 1 head
    # (1,024 B/token) from prefill rank d x 2 / 4: 12 x 8,192 x 1,024 + 36 x 536,576 =
    # 119,980,032 B; each prefill rank sends twice that.
    h = _handover("qwen3-next-80b-a3b", Layout(tp=2), Layout(tp=4), 8192, gpu="H200",
                  engine=SG)
    assert h.bytes_per_rank == h.transfer_bytes == (119_980_032,) * 4
    assert h.sender_bytes == (2 * 119_980_032,) * 2
    assert "conv state per q / k / v sub-block" in h.notes[-1]
    # The same on NIXL from 0.5.11; refused where the release refuses (or drops the state).
    nixl = _handover("qwen3-next-80b-a3b", Layout(tp=2), Layout(tp=4), 8192, gpu="H200",
                     engine=SG, engine_version="0.5.11", connector="nixl")
    assert nixl.bytes_per_rank == h.bytes_per_rank
    assert "as one block of channels" in nixl.notes[-1]  # GDN's sub-blocks from 0.5.16
    for version, connector, match in (
            ("0.5.8.post1", "mooncake", "sliced from 0.5.9"),
            ("0.5.10", "nixl", "sliced from 0.5.11")):
        with pytest.raises(InputError, match=match):
            _handover("qwen3-next-80b-a3b", Layout(tp=2), Layout(tp=4), 8192, gpu="H200",
                      engine=SG, engine_version=version, connector=connector)
    # 0.5.9's aggregation offsets a writer by its rank in the whole prefill group
    # (mooncake/conn.py 0.5.9:744): past decode rank 1's slot, refused; one decode rank is
    # fine (Nemotron below).
    with pytest.raises(InputError, match="fixed in 0.5.10"):
        _handover("qwen3-next-80b-a3b", Layout(tp=4), Layout(tp=2), 8192, gpu="H200",
                  engine=SG, engine_version="0.5.9")
    # Equal TP: 0.5.3 sends no state at all (prefill.py), NIXL drops it before 0.5.9.
    for version, connector, match in (("0.5.3", "mooncake", "0.5.4"),
                                      ("0.5.8.post1", "nixl", "drops")):
        with pytest.raises(InputError, match=match):
            _handover("qwen3-next-80b-a3b", Layout(tp=2), Layout(tp=2), 8192, gpu="H200",
                      engine=SG, engine_version=version, connector=connector)


def test_sglang_mamba2_state_between_unequal_tp() -> None:
    # NVIDIA-Nemotron-Nano-9B-v2 (56 layers: 4 attention of 8 KV heads x 128 = 4,096 B/token,
    # 27 Mamba2 of 128 heads x 80, state 128, 8 groups, conv kernel 4), prefill TP 2 ->
    # decode TP 1, 8,192 tokens. Decode slot: conv 3 x (128 x 80 + 2 x 8 x 128 = 12,288) x 2 B
    # = 73,728 + SSM 128 x 80 x 128 x 4 B = 5,242,880 -> 5,316,608 B, half from each prefill
    # rank: 4 x 8,192 x 4,096 + 27 x 5,316,608 = 277,766,144 B.
    for version in (None, "0.5.9"):
        h = _handover("nemotron-nano-9b-v2", Layout(tp=2), Layout(tp=1), 8192, engine=SG,
                      engine_version=version)
        assert h.bytes_per_rank == (4 * 8192 * 4096 + 27 * 5_316_608,) == (277_766_144,)
        assert h.sender_bytes == (277_766_144 // 2,) * 2
    # Falcon-H1-34B (2 groups): at TP 4 each rank replicates the groups (n_groups % 4 != 0),
    # 4 x slot(4) != 2 x slot(2): SGLang's even slicing does not fit, refused.
    with pytest.raises(InputError, match="partly replicated"):
        _handover("falcon-h1-34b", Layout(tp=4), Layout(tp=2), 8192, gpu="H200", engine=SG)


def test_sglang_swa_pool_between_unequal_tp() -> None:
    # gpt-oss-20b (12 window-128 + 12 full layers, 8 KV heads x 64), --page-size 16, 8,192
    # tokens, 0.5.23 (_send_swa_state_slice, from 0.5.22): the window pages [8064, 8192) = 8,
    # head-sliced as the full pages are. Decode TP 2 <- prefill TP 1: the rank's 4 heads
    # (1,024 B/token) from prefill rank 0: 12 x 512 x 16 x 1,024 + 12 x 8 x 16 x 1,024 =
    # 102,236,160 B each.
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=2), 8192, engine=SG,
                  engine_version="0.5.23", extra={"block_size": 16})
    assert h.bytes_per_rank == (12 * 512 * 16 * 1024 + 12 * 8 * 16 * 1024,) * 2 == (
        102_236_160,) * 2
    # Prefill TP 2 -> decode TP 1: each prefill rank writes its 4 heads: half each of the
    # rank's 204,472,320 B (the TP 1 -> 1 figure).
    h = _handover("gpt-oss-20b", Layout(tp=2), Layout(tp=1), 8192, engine=SG,
                  engine_version="0.5.23", extra={"block_size": 16})
    assert h.bytes_per_rank == (204_472_320,) and h.sender_bytes == (102_236_160,) * 2
    with pytest.raises(InputError, match="head-sliced from 0.5.22"):
        _handover("gpt-oss-20b", Layout(tp=2), Layout(tp=1), 8192, engine=SG,
                  engine_version="0.5.21", extra={"block_size": 16})
    # With pipeline stages SGLang's SWA head slicing raises (common/conn.py 0.5.23:1763-1767).
    with pytest.raises(InputError, match="pipeline stages"):
        _handover("gpt-oss-20b", Layout(tp=2, pp=2), Layout(tp=1, pp=2), 8192, engine=SG,
                  engine_version="0.5.23", extra={"block_size": 16})


def test_sglang_llama4_chunked_layers_in_the_swa_pool() -> None:
    # Llama-4-Scout (48 layers: 36 chunked of attention_chunk_size 8,192, 12 global NoPE; 8 KV
    # heads x 128), TP 4 -> 4 (2 heads: 1,024 B/token), 20,000 tokens. SGLang's window for
    # the SWA pool is the chunk size (Llama4 has no get_attention_sliding_window_size), so
    # _swa_payload sends the pages of the last 8,192 tokens. Page 1: 12 x 20,000 x 1,024 +
    # 36 x 8,192 x 1,024 = 547,749,888 B. Page 64: start floor(11,808 / 64) x 64 = 11,776,
    # cdiv(8,224, 64) = 129 pages; the full layers cdiv(20,000, 64) = 313: 12 x 313 x 65,536
    # + 36 x 129 x 65,536 = 550,502,400 B. (On H200: with its vision tower counted, Scout in
    # bf16 leaves 4 x H100 no room for one request.)
    h = _handover("llama-4-scout", Layout(tp=4), Layout(tp=4), 20000, gpu="H200", engine=SG)
    assert h.bytes_per_rank == (12 * 20000 * 1024 + 36 * 8192 * 1024,) * 4 == (547_749_888,) * 4
    h = _handover("llama-4-scout", Layout(tp=4), Layout(tp=4), 20000, gpu="H200", engine=SG,
                  extra={"block_size": 64})
    assert h.bytes_per_rank == (12 * 313 * 65536 + 36 * 129 * 65536,) * 4 == (550_502_400,) * 4
    # Prefill TP 4 -> decode TP 8 (the SWA pool head-sliced from 0.5.22, the newest here):
    # decode rank d's 1 head (512 B/token) from prefill rank d x 4 / 8, both kinds:
    # 12 x 20,000 x 512 + 36 x 8,192 x 512 = 273,874,944 B.
    h = _handover("llama-4-scout", Layout(tp=4), Layout(tp=8), 20000, gpu="H200", engine=SG)
    assert h.bytes_per_rank == (12 * 20000 * 512 + 36 * 8192 * 512,) * 8 == (273_874_944,) * 8
    assert h.sender_bytes == (2 * 273_874_944,) * 4


def test_sglang_refusals() -> None:
    with pytest.raises(InputError, match="0.5"):
        _handover("llama-3.1-8b", Layout(tp=1), Layout(tp=1), 100, engine=SG,
                  engine_version="0.4.9")
    with pytest.raises(InputError, match="mooncake, nixl"):
        _handover("llama-3.1-8b", Layout(tp=1), Layout(tp=1), 100, engine=SG,
                  connector="ucx")


# --- TensorRT-LLM -----------------------------------------------------------------------------

def test_trtllm_gqa_whole_blocks_and_head_slices() -> None:
    # Llama-3.1-70B, TP 4 -> TP 8, tokens_per_block 32, 1,000 tokens: cdiv(1000, 32) = 32
    # blocks = 1,024 tokens per layer; a generation rank's 1 head is 512 B/token, from
    # context rank d x 4 / 8: 80 x 1,024 x 512 = 41,943,040 B.
    h = _handover("llama-3.1-70b", Layout(tp=4), Layout(tp=8), 1000, engine=TRT)
    assert h.block_size == 32
    assert h.bytes_per_rank == (80 * 1024 * 512,) * 8 == (41_943_040,) * 8
    # Context TP 8 -> generation TP 2 on Qwen3-30B-A3B (4 KV heads): context ranks (0, 1)
    # both hold head 0 and only rank 0 sends (needSendCache, mDupHeadFactor 2): each
    # generation rank gets its 2 heads once, half from each of 2 context ranks.
    h = _handover(str(CONFIGS / "qwen3-30b-a3b.json"), Layout(tp=8), Layout(tp=2), 4096,
                  engine=TRT)
    per = 48 * 4096 * 1024
    assert h.bytes_per_rank == (per,) * 2
    assert h.sender_bytes == (per // 2, 0, per // 2, 0) * 2


def test_trtllm_mla_latent_from_one_rank() -> None:
    # DeepSeek-V3 TP 8 -> TP 8 (H200), bf16 latent 1,152 B/token, 8,192 tokens = 256 blocks
    # of 32: 61 x 8,192 x 1,152 = 575,668,224 B per generation rank, one context rank each.
    h = _handover("deepseek-v3", Layout(tp=8), Layout(tp=8), 8192, gpu="H200", engine=TRT)
    assert h.bytes_per_rank == h.transfer_bytes == (575_668_224,) * 8


def test_trtllm_variable_window_sends_the_last_window_blocks() -> None:
    # gpt-oss-20b, blocks of 32, 8,192 tokens: two window sizes (128 and the full layers'
    # max_attention_window), so the window pool sends its last 128 // 32 + 1 = 5 blocks;
    # the full pool all 256. 2,048 B/token.
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), 8192, engine=TRT)
    assert h.bytes_per_rank == (12 * 256 * 32 * 2048 + 12 * 5 * 32 * 2048,) == (205_258_752,)
    # Mistral-7B-v0.1: every layer one window (4,096), one pool: every block moves.
    h = _handover(str(CONFIGS / "mistral-7b-v0.1.json"), Layout(tp=1), Layout(tp=1), 8192,
                  engine=TRT)
    assert h.bytes_per_rank == (32 * 256 * 32 * 4096,)


def test_trtllm_refusals_and_options_file() -> None:
    with pytest.raises(InputError, match="1.0"):
        _handover("llama-3.1-8b", Layout(tp=1), Layout(tp=1), 100, engine=TRT,
                  engine_version="0.21.0")
    result = runner.invoke(app, [
        "plan", "llama-3.1-8b", "--disagg", "--engine", "trtllm", "--gpu", "H100",
        "--input-len", "4k", "--output-len", "512", "--kv-dtype", "fp8",
        "--block-size", "64", "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for role in ("prefill", "decode"):
        files = dict(data[role]["launch"]["files"])
        text = next(iter(files.values()))
        assert "cache_transceiver_config:\n  backend: DEFAULT\n" in text
        # One kv_cache_config with both the fp8 dtype and the shared block size.
        assert text.count("kv_cache_config:") == 1 and "  tokens_per_block: 64\n" in text


def test_sglang_launch_names_the_mode_and_backend() -> None:
    result = runner.invoke(app, [
        "plan", "llama-3.1-8b", "--disagg", "--engine", "sglang", "--gpu", "H100",
        "--input-len", "4k", "--output-len", "512", "--connector", "nixl", "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["connector"] == "sglang-nixl"
    for role in ("prefill", "decode"):
        assert (f"--disaggregation-mode {role} --disaggregation-transfer-backend nixl"
                in data[role]["command"])


@given(st.integers(1, 30_000), st.sampled_from([(1, 1), (2, 4), (4, 2), (8, 1), (1, 8)]),
       st.sampled_from([SG, TRT]))
@settings(max_examples=30, deadline=None)
def test_dense_handover_is_the_paged_prompt_cache(prompt: int, tps: tuple[int, int],
                                                  engine: Engine) -> None:
    # Llama-3.1-8B (8 KV heads >= every TP here): the decode ranks together receive the
    # prompt's paged cache once (heads split, never duplicated), in the engine's page.
    p, d = tps
    h = _handover("llama-3.1-8b", Layout(tp=p), Layout(tp=d), prompt, engine=engine)
    page = h.block_size
    assert h.bytes_per_request == 32 * math.ceil(prompt / page) * page * 2 * 8 * 128 * 2
    assert sum(h.transfer_bytes) == sum(h.sender_bytes) == h.bytes_per_request


def test_sglang_dp_attention_divides_the_chunked_prefill_size() -> None:
    # SGLang server_args.py, ServerArgs.__post_init__ runs _handle_gpu_memory_settings (the
    # default --chunked-prefill-size: 16,384 on a card of >= 160 GiB, GB200's 186 GiB and
    # B200's 179 GiB; 8,192 below, H200's 141 GiB) before _handle_data_parallelism, which under
    # --enable-dp-attention sets `chunked_prefill_size = chunked_prefill_size // dp_size`
    # ("DP attention is enabled. The chunked prefill size is adjusted to N to avoid MoE kernel
    # issues."); each attention-DP rank's scheduler takes that many prompt tokens per step.
    # - NVFP4 DeepSeek-R1, prefill DP 4 (TP 4, EP 4) on GB200: 16,384 // 4 = 4,096 per rank,
    #   four 1,024-token prompts a step (was 16,384: sixteen);
    # - DeepSeek-V3 FP8, prefill DP 8 (TP 8, EP 8) on B200: 16,384 // 8 = 2,048 per rank;
    # - the same at TP 8 without DP attention: one scheduler, the whole 16,384;
    # - on H200 at DP 8: 8,192 // 8 = 1,024.
    from kvplan.analysis.disagg import _candidate, prefill_batching

    def budget(model: str, gpu: str, prefill: Layout, kv: str) -> int:
        spec, _ = load_model(model)
        req = DisaggRequest(prefill=prefill, decode=prefill, input_len=1024, output_len=1024,
                            gpu=get_gpu(gpu), link=get_kv_link("nvlink5"), engine=SG,
                            engine_version="0.5.8", kv_dtype=kv)
        p = _candidate(spec, req, "prefill", prefill)
        batching = prefill_batching(spec, req, p, p)
        assert batching is not None
        return batching.token_budget

    nvfp4 = str(Path(__file__).parent / "data" / "disagg" / "deepseek-r1-nvfp4.json")
    dep4 = Layout(tp=4, dp=4, ep=4, dp_attention=True, gpus_per_node=4)
    assert budget(nvfp4, "GB200", dep4, "fp8") == 16384 // 4 == 4096
    dep8 = Layout(tp=8, dp=8, ep=8, dp_attention=True)
    v3 = str(CONFIGS / "deepseek-v3.json")
    assert budget(v3, "B200", dep8, "bf16") == 16384 // 8 == 2048
    assert budget(v3, "B200", Layout(tp=8, ep=8), "bf16") == 16384
    assert budget(v3, "H200", dep8, "bf16") == 8192 // 8 == 1024


def test_vllm_nixl_refuses_llama4_chunked_groups_from_0_14_1() -> None:
    # vLLM 0.32.0 config/vllm.py :2148-2185: chunked local attention keeps the hybrid KV-cache
    # manager on (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE "1" from 0.14.1) and
    # NixlConnector is SupportsHMA, so Llama-4's chunked layers stay ChunkedLocalAttentionSpec
    # groups, whose handover (nixl/base_scheduler.py get_exchange_clipped_blocks clips only
    # sliding groups) kvplan has not read: refused. At 0.13 the manager is off and every local
    # layer is full attention: every block moves, as before.
    from kvplan._util.errors import UnmodelledError

    with pytest.raises(UnmodelledError, match="chunked local attention"):
        _handover("llama-4-scout", Layout(tp=4), Layout(tp=4), 8192, gpu="H200")
    old = _handover("llama-4-scout", Layout(tp=4), Layout(tp=4), 8192, gpu="H200",
                    engine_version="0.13")
    # 48 layers as full attention, 8 KV heads / TP 4 = 2 per rank x 128 x 2 (K, V) x 2 B =
    # 1,024 B a token and layer; 8,192 tokens = 512 blocks of 16: 48 x 512 x 16 x 1,024 B.
    assert old.bytes_per_rank == (48 * 512 * 16 * 1024,) * 4


def test_trtllm_disaggregated_flow() -> None:
    # kvplan.engines.trtllm.disagg_flow, read from tensorrt_llm/_torch/pyexecutor/py_executor.py
    # and llmapi/llm_args.py (the 1.2 line). The first token: the generation server returns the
    # context server's token when it first schedules the request (`_handle_first_token_response`
    # before the forward): 0 steps past the boundary. The context rank's step: the LLM API's
    # defaults, max_num_tokens 8,192, max_batch_size 2,048, no chunked prefill. The generation
    # server admits after the prefill: no hold before it.
    from kvplan.analysis.disagg import _candidate, prefill_batching

    v3 = str(CONFIGS / "deepseek-v3.json")
    spec, _ = load_model(v3)
    tp8 = Layout(tp=8, ep=8)
    req = DisaggRequest(prefill=tp8, decode=tp8, input_len=1024, output_len=1024,
                        gpu=get_gpu("H200"), link=get_kv_link("ib-ndr"), engine=TRT,
                        engine_version="1.2.0rc6.post1", kv_dtype="bf16")
    h = plan_disagg(spec, req).handover
    assert h.first_token_steps == 0.0
    # The generation server takes a request in at a step boundary, its transfer starting there,
    # and polls it done at the next boundaries (`_prepare_disagg_gen_init`,
    # `_check_disagg_gen_transfer_status`: disagg_flow (b), trtgap54); SGLang's does not.
    assert h.transfer_polled and h.to_dict()["transfer_polled"] is True
    sg = plan_disagg(spec, replace(req, engine=SG, engine_version="0.5.8.post1")).handover
    assert not sg.transfer_polled and sg.to_dict()["transfer_polled"] is False
    # One send and one receive at a time per rank (cacheTransBuffer.cpp, trtctx68:
    # kvplan.engines.trtllm.transceiver_queue); SGLang's transfers are not queued here.
    assert h.to_dict()["transfer_queue"] == {"send_slots": 1, "recv_slots": 1}
    assert sg.transfer_queue is None and sg.to_dict()["transfer_queue"] is None
    p = _candidate(spec, req, "prefill", tp8)
    d = _candidate(spec, req, "decode", tp8)
    b = prefill_batching(spec, req, p, d)
    assert b is not None
    assert (b.token_budget, b.max_seqs, b.chunked) == (8192, 2048, False)
    assert b.decode_admission is None and b.input_budget is None
    # Seats per decode rank: max_batch_size, under the requests of I + O tokens its pool
    # reserves (GUARANTEED_NO_EVICT); a deployment's own flags where it states them.
    assert b.decode_max_seqs == min(2048, d.requests)
    b = prefill_batching(spec, req, p, d, max_seqs=1, decode_max_seqs=16)
    assert b is not None and (b.max_seqs, b.decode_max_seqs) == (1, min(16, d.requests))
    # Before 1.0 the transceiver is refused (connectors.py TRANSCEIVER_SINCE).
    with pytest.raises(InputError, match="1.0"):
        prefill_batching(spec, replace(req, engine_version="0.21.0"), p, d)
