"""vLLM's hybrid KV-cache manager with a KV connector (kvplan.engines.vllm.kv_transfer) and what
NixlConnector hands over before 0.22 (kvplan.engines.vllm.connectors): the manager off, every
sliding-window layer allocated and read as full attention; NIXL's Llama 4 clip of chunked layers
(0.10.0 - 0.17.1). Every number worked by hand in the comments."""

from __future__ import annotations

import pytest

from kvplan._util.errors import UnmodelledError
from kvplan.analysis.disagg import DisaggRequest, plan_disagg
from kvplan.analysis.inputs import build_inputs
from kvplan.analysis.plan_types import Layout
from kvplan.engines.vllm.engine import vllm_stage_config
from kvplan.engines.vllm.kv_transfer import hybrid_manager_with_connector
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link
from kvplan.sources.resolve import load_model


def _plan(model: str, tp: int, input_len: int, version: str, *, gpu: str = "H100",
          **kw: object):
    spec, _ = load_model(model)
    return plan_disagg(spec, DisaggRequest(
        prefill=Layout(tp=tp), decode=Layout(tp=tp), input_len=input_len, output_len=250,
        gpu=get_gpu(gpu), link=get_kv_link("ib-ndr"), engine_version=version, **kw))


@pytest.mark.parametrize(("version", "asked", "want"), [
    # 0.11.0 config/__init__.py:506-508, 0.12.0 config/vllm.py:892-905: off, even asked on.
    ("0.11.0", None, False), ("0.11.0", True, False), ("0.12.0", True, False),
    # 0.13.0 :927-931 - 0.21.0 :1342-1356: off unless asked on.
    ("0.13.0", None, False), ("0.13.0", True, True), ("0.21.0", None, False),
    ("0.21.0", False, False),
    # 0.22.0 :1440-1470 on: a SupportsHMA connector (NIXL from 0.18.0) keeps the version's own.
    ("0.22.0", None, None), ("0.32", None, None), ("0.32", False, False)])
def test_a_connector_turns_the_hybrid_manager_off_before_0_22(
        version: str, asked: bool | None, want: bool | None) -> None:
    assert hybrid_manager_with_connector(asked, version) is want


def test_gpt_oss_120b_pool_with_a_connector_at_0_11_is_every_layer_full() -> None:
    # gpt-oss-120b: 36 layers (18 sliding, window 128; 18 full), 8 KV heads x 64, bf16 KV: one
    # layer 2 x 8 x 64 x 2 B = 2,048 B a token, a page of 16 tokens 32,768 B. Hybrid (no
    # connector): a sliding and a full group of 18 layers (0.11: the smaller count), a block
    # 18 x 32,768 = 589,824 B. With --kv-transfer-config the manager is off and
    # unify_hybrid_kv_cache_specs makes the sliding layers full attention: one group of 36, a
    # block 36 x 32,768 = 1,179,648 B (73,728 B a token: every layer, every token).
    spec, _ = load_model("gpt-oss-120b")
    hybrid = vllm_stage_config(spec, build_inputs(context=5250, engine_version="0.11.0"))
    assert hybrid.hybrid_manager and hybrid.bytes_per_block == 18 * 32768 == 589824
    off = vllm_stage_config(spec, build_inputs(context=5250, engine_version="0.11.0",
                                               kv_transfer=True))
    assert not off.hybrid_manager
    assert [(g.kind, len(g.layers)) for g in off.groups] == [("full", 36)]
    assert off.bytes_per_block == 36 * 32768 == 1179648 == 16 * 73728
    # From 0.22 the connector (NixlConnector, SupportsHMA) leaves the manager on.
    kept = vllm_stage_config(spec, build_inputs(context=5250, engine_version="0.22.0",
                                                kv_transfer=True))
    assert kept.hybrid_manager and len(kept.groups) == 2


def test_nixl_moves_every_block_of_every_gpt_oss_layer_before_0_22() -> None:
    # TP 4 a role: 2 KV heads a rank, 2 x 2 x 64 x 2 B = 512 B a token and layer, 8,192 B a
    # block of 16. 5,000 prompt tokens: cdiv(5000, 16) = 313 blocks on each of the 36 layers
    # (nixl_connector.py 0.11.0 :1284-1290, "assume global attention"): 36 x 313 x 8,192 =
    # 92,307,456 B a decode rank (88.03 MiB), 369,229,824 B a request.
    for version in ("0.11.0", "0.17.1", "0.21.0"):
        h = _plan("gpt-oss-120b", 4, 5000, version).handover
        assert h.bytes_per_rank == (36 * 313 * 8192,) * 4 == (92307456,) * 4, version
    # At 0.32 (hybrid on, blocks_per_sw): 18 x 313 full + 18 x (cdiv(128, 16) + 1 = 9)
    # sliding blocks: (5,634 + 162) x 8,192 = 47,480,832 B a rank.
    assert _plan("gpt-oss-120b", 4, 5000, "0.32").handover.bytes_per_rank == (
        (18 * 313 + 18 * 9) * 8192,) * 4 == (47480832,) * 4
    # 0.22 - 0.31: the manager is on and NIXL clips sliding groups with the same code
    # (nixl/scheduler.py 0.22.0:121-136, :219-243; base_scheduler.py 0.27.0:235-280):
    # 0.32's bytes (tests/test_vllm_connector_releases.py, nixlmc66).
    for version in ("0.22.0", "0.24.0", "0.31.0"):
        assert _plan("gpt-oss-120b", 4, 5000, version).handover.bytes_per_rank == (
            (47480832,) * 4), version


def test_nixl_clips_llama4_chunked_layers_to_their_chunk_to_0_17() -> None:
    # Llama-4-Scout: 48 layers, 36 chunked (attention_chunk_size 8,192), 12 global; 8 KV heads
    # x 128, TP 4: 2 heads a rank, 2 x 2 x 128 x 2 B = 1,024 B a token and layer, 16,384 B a
    # block of 16. 20,000 tokens: cdiv(20000, 16) = 1,250 blocks. NIXL 0.11.0 - 0.17.1
    # (model_type llama4, :871-887): a chunked layer reads its last ceil(8192 / 16) = 512 blocks,
    # a global one all 1,250: (12 x 1,250 + 36 x 512) x 16,384 = 547,749,888 B a rank.
    clipped = (12 * 1250 + 36 * 512) * 16384
    for version in ("0.11.0", "0.13.0", "0.14.1", "0.17.1"):
        h = _plan("llama-4-scout", 4, 20000, version, gpu="H200").handover
        assert h.bytes_per_rank == (clipped,) * 4 == (547749888,) * 4, version
    # 0.18.0 drops the special case; the manager is still off with the connector (to 0.21):
    # every block of every layer, 48 x 1,250 x 16,384 = 983,040,000 B.
    h = _plan("llama-4-scout", 4, 20000, "0.18.0", gpu="H200").handover
    assert h.bytes_per_rank == (48 * 1250 * 16384,) * 4 == (983040000,) * 4
    # A prompt inside one chunk: every block either way (8,192 tokens: 512 blocks).
    h = _plan("llama-4-scout", 4, 8192, "0.11.0", gpu="H200").handover
    assert h.bytes_per_rank == (48 * 512 * 16384,) * 4
    # From 0.22 the manager stays on: chunked groups, not read.
    with pytest.raises(UnmodelledError, match="chunked local attention"):
        _plan("llama-4-scout", 4, 20000, "0.22.0", gpu="H200")


def test_mooncake_moves_every_block_with_the_manager_off() -> None:
    # nixlmc66: with the manager off (a connector before 0.22) Mooncake writes every block of
    # every layer, sliding and chunked ones as full attention (kvplan.engines.vllm.
    # connector_releases): the NIXL numbers above, without NIXL's Llama 4 clip.
    for version in ("0.14.1", "0.20.0", "0.21.0"):
        h = _plan("gpt-oss-120b", 4, 5000, version, connector="mooncake").handover
        assert h.bytes_per_rank == (36 * 313 * 8192,) * 4, version
        h = _plan("llama-4-scout", 4, 20000, version, gpu="H200", connector="mooncake").handover
        assert h.bytes_per_rank == (48 * 1250 * 16384,) * 4, version
    # From 0.22 the manager stays on (SupportsHMA from 0.20.0): chunked groups, not read.
    with pytest.raises(UnmodelledError, match="chunked local attention"):
        _plan("llama-4-scout", 4, 20000, "0.22.0", gpu="H200", connector="mooncake")


def test_estimate_kv_transfer_sizes_the_pool_as_plan_disagg_does() -> None:
    # `estimate --kv-transfer` (vLLM launched with --kv-transfer-config) and the roles of
    # `plan --disagg` read the one rule (alloc.hybrid_manager_on): at 0.11.0 the pool is the
    # manager-off pool (--hybrid-kv-cache-manager off), at 0.32 the hybrid one.
    import json

    from typer.testing import CliRunner

    from kvplan.cli import app

    def conc(version: str, *flags: str) -> float:
        out = CliRunner().invoke(app, [
            "estimate", "gpt-oss-120b", "--engine-version", version, "--gpu", "H100",
            "--tp", "4", "--context", "5250", "--format", "json", *flags])
        assert out.exit_code == 0, out.stdout
        return json.loads(out.stdout)["max_concurrency"]

    off = conc("0.11.0", "--hybrid-kv-cache-manager", "off")
    assert conc("0.11.0", "--kv-transfer") == off != conc("0.11.0")
    disagg = _plan("gpt-oss-120b", 4, 5000, "0.11.0")
    assert disagg.decode.candidate.capacity.max_concurrency == off
    hybrid = conc("0.32")
    assert conc("0.32", "--kv-transfer") == hybrid
    assert conc("0.32", "--hybrid-kv-cache-manager", "off") != hybrid
