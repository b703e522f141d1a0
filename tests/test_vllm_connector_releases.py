"""What vLLM's NixlConnector and MooncakeConnector hand over, by release, with the hybrid KV-cache
manager on or off (kvplan.engines.vllm.connector_releases, nixlmc66): per connector, version
range and layer kind, a byte count worked by hand in the comments from a real config
(gpt-oss-120b: sliding window + full; Qwen3-Next-80B-A3B: Gated DeltaNet + full; DeepSeek-V3:
MLA; Qwen3-8B: GQA between unequal TP sizes). Source lines are cited in connector_releases."""

from __future__ import annotations

import pytest

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.analysis.disagg import DisaggRequest, plan_disagg
from kvplan.analysis.plan_types import Layout
from kvplan.engines.vllm.connector_releases import (
    mooncake_gqa_tp_runs,
    mooncake_state_slots,
    nixl_state_slots,
)
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link
from kvplan.sources.resolve import load_model
from tests.test_disagg import CONFIGS


def _handover(model: str, p_tp: int, d_tp: int, version: str, *,
              connector: str | None = None, input_len: int = 8000, **extra: object):
    spec, _ = load_model(model)
    return plan_disagg(spec, DisaggRequest(
        prefill=Layout(tp=p_tp), decode=Layout(tp=d_tp), input_len=input_len, output_len=250,
        gpu=get_gpu("H200"), link=get_kv_link("ib-ndr"), engine_version=version,
        connector=connector, extra=dict(extra))).handover


ON = {"hybrid_kv_cache_manager": True}
MTP2 = {"speculative_method": "mtp", "num_speculative_tokens": 2}

# --- sliding window + full: gpt-oss-120b ------------------------------------------------------
# 36 layers (18 sliding, window 128; 18 full), 8 KV heads x 64, bf16. TP 2: 4 heads a rank,
# 4 x 64 x 2 (K, V) x 2 B = 1,024 B a token and layer, 16,384 B a 16-token block. 8,000
# tokens: cdiv(8000, 16) = 500 blocks. Clipped (the manager on): full 18 x 500, sliding
# 18 x (cdiv(128, 16) + 1 = 9): 18 x 509 x 16,384 = 150,110,208 B a decode rank. Manager off
# (sliding layers run as full attention): 36 x 500 x 16,384 = 294,912,000 B.
CLIPPED = 18 * (500 + 9) * 16384
EVERY_BLOCK = 36 * 500 * 16384


@pytest.mark.parametrize(("connector", "version", "extra", "want"), [
    # NIXL: the manager on from 0.22 (SupportsHMA), the clip the same code 0.22.0 - 0.31.0
    # (nixl/scheduler.py 0.22.0:219-243, base_scheduler.py 0.27.0:235-280).
    ("nixl", "0.22.0", {}, CLIPPED), ("nixl", "0.26.0", {}, CLIPPED),
    ("nixl", "0.31.0", {}, CLIPPED),
    # 0.18 - 0.21 asked on: the clip is in 0.18.0 (nixl_connector.py :596-639).
    ("nixl", "0.18.0", ON, CLIPPED), ("nixl", "0.21.0", {}, EVERY_BLOCK),
    # Mooncake: manager off to 0.21 (every block, 0.14.1 too), clipped from 0.20 when asked
    # and from 0.22 by default (get_sw_clipped_blocks 0.20.0 :513-524); 0.20 - 0.24 flatten the
    # groups' blocks into every shared tensor: the same bytes.
    ("mooncake", "0.14.1", {}, EVERY_BLOCK), ("mooncake", "0.21.0", {}, EVERY_BLOCK),
    ("mooncake", "0.20.0", ON, CLIPPED), ("mooncake", "0.22.0", {}, CLIPPED),
    ("mooncake", "0.24.0", {}, CLIPPED), ("mooncake", "0.29.0", {}, CLIPPED)])
def test_gpt_oss_sliding_layers_by_release(connector: str, version: str,
                                           extra: dict[str, object], want: int) -> None:
    h = _handover("gpt-oss-120b", 2, 2, version, connector=connector, **extra)
    assert h.block_size == 16
    assert h.bytes_per_rank == (want,) * 2 == h.transfer_bytes, (connector, version)


def test_the_manager_asked_on_with_a_connector_before_supports_hma_is_refused() -> None:
    # kv_connector/factory.py 0.13.0 - 0.19.0 :56-61: NIXL before 0.18, Mooncake before 0.20.
    with pytest.raises(InputError, match="not SupportsHMA"):
        _handover("gpt-oss-120b", 2, 2, "0.17.1", **ON)
    with pytest.raises(InputError, match="not SupportsHMA"):
        _handover("gpt-oss-120b", 2, 2, "0.19.0", connector="mooncake", **ON)


# --- Gated DeltaNet + full: Qwen3-Next-80B-A3B ------------------------------------------------
# 48 layers: 36 GDN, 12 full attention (2 KV heads x 256), bf16; TP 4. Attention: the 2 heads
# replicated, one a rank: 256 x 2 x 2 B = 1,024 B a token and layer. GDN state a rank: conv
# (2 x 16 x 128 + 32 x 128) / 4 = 2,048 channels x (kernel 4 - 1 = 3) x 2 B = 12,288 B, SSM
# 32 / 4 = 8 heads x 128 x 128 x 2 B = 262,144 B: 274,432 B. Block: 16 x cdiv(274,432,
# 16 x 1,024) = 16 x 17 = 272 tokens, page 278,528 B. 8,000 tokens: T = 7,999 (the decode
# recomputes the last: scheduler.py 0.22.0:324-327), cdiv(7999, 272) = 30 blocks.
# Attention: 12 x 30 x 278,528 = 100,270,080 B.
QN = "qwen3-next-80b-a3b"
QN_ATTENTION = 12 * 30 * 278528
# NIXL reads the state's own bytes (_build_mamba_remote), one slot: 36 x 274,432 = 9,879,552.
QN_NIXL = QN_ATTENTION + 36 * 274432
# Mooncake writes the padded page: 36 x 278,528 = 10,027,008.
QN_MOONCAKE = QN_ATTENTION + 36 * 278528
# With MTP 2 (num_speculative_blocks 2): conv 3 + 2 = 5 x 2,048 x 2 B = 20,480 B, state
# 282,624 B, block 16 x cdiv(282,624, 16,384) = 16 x 18 = 288, page 294,912 B; 13 attention
# layers (the MTP layer's too), cdiv(7999, 288) = 28 blocks: 13 x 28 x 294,912 = 107,347,968.
QN_MTP_ATTENTION = 13 * 28 * 294912


@pytest.mark.parametrize("version", ["0.22.0", "0.24.0", "0.26.0", "0.27.0", "0.31.0", "0.32"])
def test_qwen3_next_nixl_one_state_slot_without_a_drafter(version: str) -> None:
    # Mode 'none' (prefix caching off for hybrids to 0.27) and 'align' (on from 0.28): one
    # slot a request without a drafter, in every release from 0.22.
    h = _handover(QN, 4, 4, version)
    assert h.block_size == 272 and h.tokens_moved == 7999
    assert h.bytes_per_rank == (QN_NIXL,) * 4 == (110_149_632,) * 4, version


def test_qwen3_next_nixl_moves_the_speculative_slots_before_0_27() -> None:
    # 0.22.0 - 0.26.0: no SSM clip, the running state and 2 scratch slots: 3 x 36 x 282,624 =
    # 30,523,392 B + 107,347,968 = 137,871,360 B a rank.
    for version in ("0.22.0", "0.26.0"):
        h = _handover(QN, 4, 4, version, **MTP2)
        assert h.block_size == 288
        assert h.bytes_per_rank == (QN_MTP_ATTENTION + 3 * 36 * 282624,) * 4 == (
            137_871_360,) * 4, version
    # From 0.27.0 (get_exchange_clipped_blocks): the running state only, 36 x 282,624.
    h = _handover(QN, 4, 4, "0.27.0", **MTP2)
    assert h.bytes_per_rank == (QN_MTP_ATTENTION + 36 * 282624,) * 4 == (117_522_432,) * 4


def test_qwen3_next_nixl_with_prefix_caching_before_0_27() -> None:
    # Mode 'align': the prefill's list carries cdiv(7999, 272) - 1 = 29 null placeholders.
    # 0.22.0 asserts the lists equal: refused. 0.23.0 - 0.26.0 keep the prefill's last slot
    # when the decode holds one (no drafter: 110,149,632 B as above); with a drafter the
    # decode holds 3 and the worker asserts: refused.
    with pytest.raises(InputError, match="0.22.0:2337"):
        _handover(QN, 4, 4, "0.22.0", prefix_caching=True)
    assert _handover(QN, 4, 4, "0.24.0", prefix_caching=True).bytes_per_rank == (QN_NIXL,) * 4
    with pytest.raises(InputError, match="SSM can only have one local block"):
        _handover(QN, 4, 4, "0.24.0", prefix_caching=True, **MTP2)
    # Within one block both lists hold 1 + spec: every slot (a 200-token prompt: T = 199,
    # one 288-token block; 13 x 1 x 294,912 + 3 x 36 x 282,624 = 34,357,248 B).
    h = _handover(QN, 4, 4, "0.24.0", input_len=200, prefix_caching=True, **MTP2)
    assert h.bytes_per_rank == (13 * 294912 + 3 * 36 * 282624,) * 4 == (34_357_248,) * 4


def test_qwen3_next_recurrent_releases_refused() -> None:
    # NIXL's recurrent handover read from 0.22 (0.20 - 0.21 only with the manager asked on).
    with pytest.raises(InputError, match="NIXL's recurrent-state handover from vLLM 0.22"):
        _handover(QN, 4, 4, "0.21.0", **ON)
    # Mooncake has no Mamba path before 0.25.0.
    with pytest.raises(InputError, match="recurrent-state handover from vLLM 0.25"):
        _handover(QN, 4, 4, "0.24.0", connector="mooncake")


def test_qwen3_next_mooncake_padded_pages_every_non_null_slot() -> None:
    # 0.25.0 - 0.32: one padded page a GDN layer: 110,297,088 B a rank.
    for version in ("0.25.0", "0.28.0", "0.32"):
        h = _handover(QN, 4, 4, version, connector="mooncake")
        assert h.bytes_per_rank == (QN_MOONCAKE,) * 4 == (110_297_088,) * 4, version
    # No SSM clip in any release: with MTP 2 three padded pages (294,912 B) a layer:
    # 3 x 36 x 294,912 + 107,347,968 = 139,198,464 B.
    for version in ("0.25.0", "0.32"):
        h = _handover(QN, 4, 4, version, connector="mooncake", **MTP2)
        assert h.bytes_per_rank == (QN_MTP_ATTENTION + 3 * 36 * 294912,) * 4 == (
            139_198_464,) * 4, version


# --- MLA: DeepSeek-V3 -------------------------------------------------------------------------
# 61 layers, kv_lora_rank 512 + rope 64 = 576 x 2 B = 1,152 B a token, the same on every rank
# (replicated). Block 16 at these releases on H200: page 18,432 B, cdiv(8000, 16) = 500:
# 61 x 500 x 18,432 = 562,176,000 B a decode rank, read whole from one prefill rank.
MLA = 61 * 500 * 18432


def test_deepseek_mla_one_source_rank_by_release() -> None:
    # NIXL 0.24.0, TP 8 -> 16: decode rank r reads prefill rank r x 8 // 16 (tp_mapping.py
    # 0.22.0 = 0.32.0 but DCP); each prefill rank serves two.
    h = _handover("deepseek-v3", 8, 16, "0.24.0")
    assert h.block_size == 16
    assert h.bytes_per_rank == h.transfer_bytes == (MLA,) * 16 == (562_176_000,) * 16
    assert h.sender_bytes == (2 * MLA,) * 8
    # Mooncake 0.19.0, TP 16 -> 8: replicated, tp_ratio 2: only even prefill ranks write.
    h = _handover("deepseek-v3", 16, 8, "0.19.0", connector="mooncake")
    assert h.bytes_per_rank == h.transfer_bytes == (MLA,) * 8
    assert h.sender_bytes == (MLA, 0) * 8
    # Mooncake before 0.19 pairs equal TP only.
    with pytest.raises(InputError, match="from vLLM 0.19"):
        _handover("deepseek-v3", 16, 8, "0.18.0", connector="mooncake")


# --- GQA between unequal TP sizes: Qwen3-8B on Mooncake -----------------------------------------
# 36 layers, 8 KV heads x 128, bf16: a head 128 x 2 x 2 B = 512 B a token and layer; 500
# blocks of 16 at 8,000 tokens: one head a rank 36 x 500 x 16 x 512 = 147,456,000 B.
QWEN3_8B = str(CONFIGS / "qwen3-8b.json")
HEAD = 36 * 500 * 16 * 512


def test_mooncake_gqa_unequal_tp_before_and_from_0_30() -> None:
    # 0.19.0, TP 2 -> 1 (prefill 4 heads a rank, not replicated: 2 // 8 = 0): two writes of
    # 4 heads, 8 x HEAD = 1,179,648,000 B at the decode rank.
    h = _handover(QWEN3_8B, 2, 1, "0.19.0", connector="mooncake")
    assert h.bytes_per_rank == (8 * HEAD,) == (1_179_648_000,)
    assert h.transfer_bytes == (4 * HEAD,) * 2
    # 0.19.0, TP 2 -> 4: each decode rank its 2 heads from prefill rank r // 2.
    h = _handover(QWEN3_8B, 2, 4, "0.19.0", connector="mooncake")
    assert h.bytes_per_rank == (2 * HEAD,) * 4
    # 0.29.0, TP 8 -> 16: the prefill counts as replicated (8 // 8 = 1) and writes its one
    # head whole to each decode rank (one head each): HEAD a rank.
    h = _handover(QWEN3_8B, 8, 16, "0.29.0", connector="mooncake")
    assert h.bytes_per_rank == (HEAD,) * 16
    # 0.29.0, TP 8 -> 4: "replicated", only prefill ranks 0, 2, 4, 6 write their one head into
    # a decode rank holding two: refused. 0.30.0's head branch: two writes of one head.
    with pytest.raises(UnmodelledError, match="KV heads whole"):
        _handover(QWEN3_8B, 8, 4, "0.29.0", connector="mooncake")
    h = _handover(QWEN3_8B, 8, 4, "0.30.0", connector="mooncake")
    assert h.bytes_per_rank == (2 * HEAD,) * 4 and h.transfer_bytes == (HEAD,) * 8
    # 0.29.0, TP 1 -> 16: the region lengths do not divide (8 heads vs one x 16): refused.
    with pytest.raises(UnmodelledError, match="KV heads whole"):
        _handover(QWEN3_8B, 1, 16, "0.29.0", connector="mooncake")


def test_release_rules_directly() -> None:
    # nixl_state_slots: 0.22 - 0.26 every slot; 0.27 one.
    assert nixl_state_slots("0.22.0", spec_tokens=2, align=False, tokens=5000, block=272)[0] == 3
    assert nixl_state_slots("0.27.0", spec_tokens=2, align=True, tokens=5000, block=272)[0] == 1
    assert nixl_state_slots("0.23.0", spec_tokens=0, align=True, tokens=5000, block=272)[0] == 1
    assert nixl_state_slots("0.22.0", spec_tokens=0, align=True, tokens=272, block=272)[0] == 1
    assert mooncake_state_slots(0)[0] == 1 and mooncake_state_slots(3)[0] == 4
    # mooncake_gqa_tp_runs with 8 KV heads.
    assert [mooncake_gqa_tp_runs(p, d, 8) for p, d in (
        (4, 4), (4, 2), (8, 4), (16, 8), (2, 8), (2, 16), (8, 16), (16, 32))] == [
        True, True, False, False, True, False, True, True]
