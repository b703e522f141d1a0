"""`kvplan plan --disagg --engine vllm --connector mooncake` (issue 29): the KV one request hands
over, as vLLM 0.32.0's MooncakeConnector moves it
(vllm/distributed/kv_transfer/kv_connector/v1/mooncake/mooncake_connector.py), derived by hand
per layer kind from real configs.

Hand derivations name the source lines they follow (0.32.0):
- push: each prefill rank writes into the blocks its paired decode ranks named
  (`send_kv_to_decode` :1498, one `batch_transfer_sync_write` per pair: `_send_blocks` :1946).
- blocks: the decode side's unhashed blocks of the prompt (`update_state_after_alloc`
  :1033-1080), cdiv(T, block), the last one whole (each block a layer's whole page,
  `kv_block_len = layer_spec.page_size_bytes` :2128-2139); a sliding-window group clipped to
  `blocks_per_sw = cdiv(window, block) + 1` (:923-944); T = I - 1 with Mamba layers (:946-953).
- recurrent state: the Mamba group's one non-null block, its PADDED page (MambaSpec.
  page_size_bytes = page_size_padded, :2138-2139).
- heterogeneous TP (`_compute_sender_transfer_plan` :236-288): a decode rank receives its own
  block length; from P / D prefill ranks when prefill TP is larger, replicated heads written
  by one of their holders (`local_tp_rank % local_replica_count == 0`); MLA from one rank.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.analysis.disagg import DisaggRequest, plan_disagg
from kvplan.analysis.plan_types import Layout
from kvplan.cli import app
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link
from kvplan.sources.resolve import load_model
from tests.test_disagg import CONFIGS

runner = CliRunner()


def _handover(model: str, prefill: Layout, decode: Layout, input_len: int, *,
              gpu: str = "H200", connector: str = "mooncake", **kw: object):
    spec, _ = load_model(model)
    return plan_disagg(spec, DisaggRequest(
        prefill=prefill, decode=decode, input_len=input_len, output_len=16, gpu=get_gpu(gpu),
        link=get_kv_link("ib-ndr"), connector=connector, **kw)).handover


QWEN3_8B = str(CONFIGS / "qwen3-8b.json")


# --- golden bytes, per layer kind -------------------------------------------------------------

def test_gqa_equal_tp_moves_every_block_of_the_prompt() -> None:
    # Qwen3-8B (config: 36 layers, 8 KV heads, head_dim 128), bf16, TP 1 -> 1, block 16:
    # 8 x 128 x 2 (K, V) x 2 B = 4,096 B a token, 65,536 B a block a layer. 8,192 tokens:
    # 512 blocks x 36 layers x 65,536 = 1,207,959,552 B = 1,152 MiB, one write.
    h = _handover(QWEN3_8B, Layout(tp=1), Layout(tp=1), 8192)
    assert h.block_size == 16 and h.connector == "MooncakeConnector"
    assert h.bytes_per_rank == h.transfer_bytes == h.sender_bytes == (1_207_959_552,)
    # 1,000 tokens at block 32: cdiv(1000, 32) = 32 blocks, the last (8 tokens) whole:
    # 32 x 32 x 4,096 x 36 = 150,994,944 B = 144 MiB.
    h = _handover(QWEN3_8B, Layout(tp=1), Layout(tp=1), 1000, extra={"block_size": 32})
    assert h.bytes_per_rank == (150_994_944,) and h.tokens_moved == 1000


def test_prefill_tp_larger_each_prefill_rank_writes_its_heads() -> None:
    # Qwen3-8B, prefill TP 2 -> decode TP 1, 1,000 tokens, block 32: tp_ratio 2 (both <= 8
    # heads), each prefill rank writes its whole 4-head block (2,048 B a token) at offset
    # (rank % 2) x its length: two writes of 32 x 32 x 2,048 x 36 = 75,497,472 B.
    h = _handover(QWEN3_8B, Layout(tp=2), Layout(tp=1), 1000, extra={"block_size": 32})
    assert h.bytes_per_rank == (150_994_944,)
    assert h.transfer_bytes == h.sender_bytes == (75_497_472, 75_497_472)


def test_decode_tp_larger_reads_its_slice_of_one_prefill_rank() -> None:
    # Qwen3-8B, prefill TP 1 -> decode TP 2: tp_ratio -2, the one prefill rank writes each
    # decode rank's 4 heads (remote_kv_block_len, at offset (remote rank % 2) x it):
    # 75,497,472 B each; the prefill rank sends both.
    h = _handover(QWEN3_8B, Layout(tp=1), Layout(tp=2), 1000, extra={"block_size": 32})
    assert h.bytes_per_rank == h.transfer_bytes == (75_497_472, 75_497_472)
    assert h.sender_bytes == (150_994_944,)


def test_replicated_heads_are_written_once() -> None:
    # Qwen3-30B-A3B (48 layers, 4 KV heads x 128), fp8 KV, prefill TP 8 -> decode TP 2, 4,096
    # tokens, block 16. Prefill replicated (8 > 4), decode not: the head branch, local_head_
    # count 1, local_replica_count 8 // 4 = 2: ranks 0, 2, 4, 6 write one head each (128 x 2 x
    # 1 B = 256 B a token), ranks 1, 3, 5, 7 nothing (no transfer posted). Decode rank: 2 heads,
    # 256 blocks x 16 x 512 B x 48 layers = 100,663,296 B, in two writes of half.
    h = _handover(str(CONFIGS / "qwen3-30b-a3b.json"), Layout(tp=8), Layout(tp=2), 4096,
                  kv_dtype="fp8")
    per = 48 * 256 * 16 * 512
    assert per == 100_663_296
    assert h.bytes_per_rank == (per, per)
    assert h.transfer_bytes == (per // 2,) * 4
    assert h.sender_bytes == (per // 2, 0) * 4
    # Prefill TP 2 -> decode TP 8: decode replicated (8 > 4), prefill not: each decode rank
    # receives one head (256 B a token: 256 x 16 x 256 x 48 = 50,331,648 B) from prefill rank
    # d // 4, which writes four.
    h = _handover(str(CONFIGS / "qwen3-30b-a3b.json"), Layout(tp=2), Layout(tp=8), 4096,
                  kv_dtype="fp8")
    assert h.bytes_per_rank == h.transfer_bytes == (50_331_648,) * 8
    assert h.sender_bytes == (4 * 50_331_648,) * 2


def test_mla_latent_is_replicated_one_writer_per_decode_rank() -> None:
    # DeepSeek-V2-Lite (27 layers, kv_lora_rank 512 + rope 64 = 576 x 2 B = 1,152 B a token,
    # one row for every head), block 64, 1,000 tokens: cdiv(1000, 64) = 16 blocks:
    # 27 x 16 x 64 x 1,152 = 31,850,496 B per decode rank.
    model = str(CONFIGS / "deepseek-v2-lite.json")
    per = 27 * 16 * 64 * 1152
    assert per == 31_850_496
    # TP 1 -> 2: producer replicated, tp_ratio -2: the prefill rank writes the whole block to
    # both decode ranks.
    h = _handover(model, Layout(tp=1), Layout(tp=2), 1000, extra={"block_size": 64})
    assert h.bytes_per_rank == h.transfer_bytes == (per, per)
    assert h.sender_bytes == (2 * per,)
    # TP 2 -> 1: tp_ratio 2, replicated: only rank 0 (0 % 2 == 0) writes.
    h = _handover(model, Layout(tp=2), Layout(tp=1), 1000, extra={"block_size": 64})
    assert h.bytes_per_rank == h.transfer_bytes == (per,)
    assert h.sender_bytes == (per, 0)


def test_sliding_window_moves_the_window_tail() -> None:
    # gpt-oss-20b (24 layers alternating sliding window 128 and full; 8 KV heads x 64, bf16:
    # 2,048 B a token, 32,768 B a 16-token block). 8,192 tokens, hybrid manager on
    # (SupportsHMA): full layers cdiv(8192, 16) = 512 blocks, window layers blocks_per_sw =
    # cdiv(128, 16) + 1 = 9 (get_sw_clipped_blocks keeps the last 9).
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), 8192)
    assert h.bytes_per_rank == (12 * 512 * 32768 + 12 * 9 * 32768,) == (204_865_536,)
    # Shorter than the window: every block (cdiv(100, 16) = 7 < 9).
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), 100)
    assert h.bytes_per_rank == (24 * 7 * 32768,)


def test_recurrent_state_moves_as_its_padded_page() -> None:
    # granite-4.0-h-micro (40 layers: 36 Mamba2, 4 attention of 8 KV heads x 64 = 2,048 B a
    # token). Mamba2 state: conv 3 x (4,096 + 2 x 128) bf16 = 26,112 B + SSM 64 heads x 64 x
    # 128 bf16 = 1,048,576 B = 1,074,688 B. vLLM raises the block until a page holds it:
    # 16 x cdiv(1,074,688, 16 x 2,048) = 528 tokens, attention page 528 x 2,048 = 1,081,344 B,
    # the state padded to it. 1,000 tokens: T = 999 (the decode recomputes the last);
    # attention cdiv(999, 528) = 2 blocks x 4 layers, state 1 padded page x 36 layers.
    h = _handover(str(CONFIGS / "granite-4.0-h-micro.json"), Layout(tp=1), Layout(tp=1), 1000)
    assert h.block_size == 528 and h.tokens_moved == 999
    assert h.bytes_per_rank == (4 * 2 * 1_081_344 + 36 * 1_081_344,) == (47_579_136,)
    # NixlConnector moves the state's own bytes (nixl/base_worker.py _build_mamba_remote).
    nixl = _handover(str(CONFIGS / "granite-4.0-h-micro.json"), Layout(tp=1), Layout(tp=1),
                     1000, connector="nixl")
    assert nixl.bytes_per_rank == (4 * 2 * 1_081_344 + 36 * 1_074_688,)


# --- properties -------------------------------------------------------------------------------

@given(st.integers(1, 40_000), st.sampled_from([(1, 1), (2, 4), (4, 2), (8, 1), (1, 8)]))
@settings(max_examples=30, deadline=None)
def test_decode_ranks_sum_to_the_request_and_to_the_paged_prompt(prompt: int,
                                                                  tps: tuple[int, int]) -> None:
    # Llama-3.1-8B (32 layers, 8 KV heads x 128, bf16): heads split, never duplicated, when
    # both TPs <= 8: the decode ranks' bytes sum to the prompt's paged cache on one GPU, and
    # every byte is one write of one prefill rank.
    p, d = tps
    h = _handover("llama-3.1-8b", Layout(tp=p), Layout(tp=d), prompt, gpu="H100")
    assert sum(h.bytes_per_rank) == h.bytes_per_request
    assert h.bytes_per_request == 32 * math.ceil(prompt / 16) * 16 * 2 * 8 * 128 * 2
    assert sum(h.transfer_bytes) == sum(h.sender_bytes) == h.bytes_per_request


@given(st.integers(1, 20_000), st.integers(1, 2_000),
       st.sampled_from(["llama-3.1-8b", "gpt-oss-20b"]))
@settings(max_examples=25, deadline=None)
def test_handover_is_monotone_in_the_prompt(prompt: int, more: int, model: str) -> None:
    a = _handover(model, Layout(tp=1), Layout(tp=2), prompt, gpu="H100")
    b = _handover(model, Layout(tp=1), Layout(tp=2), prompt + more, gpu="H100")
    assert b.bytes_per_request >= a.bytes_per_request
    assert all(y >= x for x, y in zip(a.bytes_per_rank, b.bytes_per_rank, strict=True))


# --- versions, refusals, launch ---------------------------------------------------------------

def test_versions_and_refusals() -> None:
    with pytest.raises(InputError, match="0.13.0"):
        _handover(QWEN3_8B, Layout(tp=1), Layout(tp=1), 100, engine_version="0.12.0")
    # 0.13.0-0.15.1: equal TP only, rank r to rank r; full attention as 0.32 moves it.
    old = _handover(QWEN3_8B, Layout(tp=1), Layout(tp=1), 8192, engine_version="0.13.0")
    assert old.bytes_per_rank == (1_207_959_552,)
    # Unequal TP from 0.19.0, sliding-window layers as full attention with the manager off
    # (before 0.22) and clipped from 0.20 with it on: tests/test_vllm_connector_releases.py.
    with pytest.raises(InputError, match="0.19"):
        _handover(QWEN3_8B, Layout(tp=2), Layout(tp=1), 100, engine_version="0.18.0")
    with pytest.raises(UnmodelledError, match="re-layout"):
        _handover(str(CONFIGS / "granite-4.0-h-micro.json"), Layout(tp=2), Layout(tp=1), 1000)
    with pytest.raises(InputError, match="divide"):
        _handover(QWEN3_8B, Layout(tp=2), Layout(tp=3), 100)


def test_launch_flags_name_each_role() -> None:
    spec, _ = load_model(QWEN3_8B)
    req = DisaggRequest(prefill=Layout(tp=1), decode=Layout(tp=1), input_len=1000,
                        output_len=100, gpu=get_gpu("H100"), link=get_kv_link("ib-ndr"),
                        connector="MooncakeConnector")
    plan = plan_disagg(spec, req)
    prefill, decode = plan.prefill.to_dict()["command"], plan.decode.to_dict()["command"]
    assert '{"kv_connector":"MooncakeConnector","kv_role":"kv_producer"}' in prefill
    assert '{"kv_connector":"MooncakeConnector","kv_role":"kv_consumer"}' in decode


def test_cli_connector_mooncake_and_the_refused_names() -> None:
    r = runner.invoke(app, ["plan", QWEN3_8B, "--disagg", "--connector", "mooncake",
                            "--input-len", "8192", "--output-len", "16", "--gpu", "H100",
                            "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["handover"]["connector"] == "MooncakeConnector"
    assert data["kv_transfer_bytes_per_request"] == 1_207_959_552
    r = runner.invoke(app, ["plan", QWEN3_8B, "--disagg", "--connector", "p2pnccl",
                            "--input-len", "100", "--output-len", "16", "--gpu", "H100"])
    assert r.exit_code == 2
    assert "nixl, mooncake" in r.stderr and "0.24.0" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# --- the public Mooncake benchmark (tests/data/disagg/nixl_logs.json, not held) ---------------

# kvcache-ai/Mooncake docs/source/performance/vllm-v1-support-benchmark.md: Qwen3-8B, 1P1D,
# TP 8 on both (H800), vLLM 0.11.2.dev358's MooncakeConnector, --no-enable-prefix-caching,
# `vllm bench serve --backend openai-chat --dataset-name random --random-input-len N`; its "KV
# Size" per prompt length, MB / GB as printed (MiB / GiB: 4.50 GB / 31.65 ms = 142.2, its
# stated GB/s).
MOONCAKE_PAGE = {128: "20 MB", 256: "38 MB", 512: "74 MB", 1024: "146 MB", 2048: "290 MB",
                 4096: "578 MB", 8192: "1.13 GB", 16384: "2.25 GB", 32768: "4.50 GB"}


def _page_size(nbytes: int) -> str:
    return f"{nbytes / 2**20:.0f} MB" if nbytes < 2**30 else f"{nbytes / 2**30:.2f} GB"


@pytest.mark.parametrize("n", sorted(MOONCAKE_PAGE))
def test_mooncake_benchmark_page_is_its_prompt_plus_a_chat_template(n: int) -> None:
    # Not a replay: the page ran a 0.11.2 dev build (kvplan reads the connector from 0.13.0,
    # the first release carrying it) and does not print the prompt's token count after the
    # chat endpoint's template. Qwen3-8B at TP 8 (1 KV head a rank: 36 x 2 x 128 x 2 B =
    # 18,432 B a token, 147,456 B = 144 KiB over the 8 ranks), block 16: the page's sizes are
    # cdiv(N + k, 16) blocks for every k in 1-16 (Qwen3's template wraps a user message in 8
    # tokens: <|im_start|>user\n ... <|im_end|>\n<|im_start|>assistant\n), and not N / 16
    # blocks (k = 0) for N <= 8,192 (18, 36, 72, 144, 288, 576 MB, 1.12 GB).
    spec, _ = load_model(QWEN3_8B)

    def size(prompt: int) -> str:
        h = plan_disagg(spec, DisaggRequest(
            prefill=Layout(tp=8), decode=Layout(tp=8), input_len=prompt, output_len=128,
            gpu=get_gpu("H800"), link=get_kv_link("roce-400"), connector="mooncake",
            engine_version="0.13.0")).handover
        assert h.block_size == 16 and len(h.transfer_bytes) == 8
        assert h.bytes_per_request == math.ceil(prompt / 16) * 16 * 147_456
        return _page_size(h.bytes_per_request)

    assert {size(n + k) for k in (1, 8, 16)} == {MOONCAKE_PAGE[n]}
    assert (size(n) == MOONCAKE_PAGE[n]) == (n >= 16384)
