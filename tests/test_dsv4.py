"""DeepSeek-V4's compressed sparse attention in vLLM's accounting (issue 26, task dsv4).

Golden numbers worked by hand from the published config.json files (tests/data/configs/dsv4/,
sources in tests/data/configs/SOURCES-dsv4.md), following vLLM 0.32:
- vllm/models/deepseek_v4/attention.py: DeepseekV4Attention.get_kv_cache_spec (MLAAttentionSpec,
  tokens_per_state = ratio, 584 B rows, alignment 576), DeepseekV4IndexerCache (head 132 uint8
  at fp8: index_head_dim 128 + 128 // 128 x 4), DeepseekV4Indexer (fp8 keys by default);
- vllm/v1/attention/backends/mla/sparse_swa.py: DeepseekV4SWACache (block 64, 584 B, 576);
- vllm/models/deepseek_v4/compressor.py: CompressorStateCache (fp32, state_dim = 2 x coff x
  head_dim, window coff x ratio, block 4 at ratio 4, 8 at ratio 128; alignment 576);
- vllm/v1/kv_cache_interface.py: page_size_bytes, _apply_alignment_padding,
  SlidingWindowSpec.max_admission_blocks_per_request, FullAttentionSpec.max_memory_usage_bytes;
- vllm/v1/core/kv_cache_utils.py: _get_packed_kv_cache_groups, _approximate_gcd,
  _get_kv_cache_bytes_per_block, get_max_concurrency_for_kv_cache_config,
  get_kv_cache_capacity (tokens = int(concurrency x max_model_len)).

The oracle cases (tests/data/oracle/deepseek-v4/<case>/: the published files with the MoE, the
vocabulary and the query side shrunk, every cache field and the layer pattern kept) are vLLM
0.32's CPU build itself; kvplan must print its numbers exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import SpecError, UnmodelledError
from kvplan._util.units import GiB
from kvplan.engines.vllm.alloc import get_platform, vllm_batch_defaults
from kvplan.engines.vllm.compressed import vllm_v4_kv_config
from kvplan.engines.vllm.packed import approximate_gcd
from kvplan.hardware.gpus import get_gpu
from kvplan.kv.compressed import v4_layer_caches
from kvplan.sources.hf_dsv4 import read_compressed_sparse_attention

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs" / "dsv4"
ORACLE = DATA / "oracle" / "deepseek-v4"


def load(path: Path) -> tuple[dict, object]:
    config = json.loads(path.read_text())
    return config, read_compressed_sparse_attention(config, str(path))


def v4_config(path: Path, **kw):
    config, att = load(path)
    return vllm_v4_kv_config(att, config["num_hidden_layers"], **kw)


# --- pages, one kind at a time (DeepSeek-V4-Flash, fp8_ds_mla, cache block 256) -------------

def test_flash_pages_by_hand() -> None:
    _, att = load(CONFIGS / "deepseek-v4-flash.json")
    # Layer 0 (compress_ratios[0] = 0): the sliding window only, block 64: 64 x 584 = 37,376 B,
    # padded to 576 x 65 = 37,440.
    (swa,) = v4_layer_caches(att, 0)
    assert (swa.block(256), swa.page_bytes(256), swa.window) == (64, 37_440, 128)
    # Layer 2 (ratio 4, CSA): indexer keys 256 / 4 = 64 rows x 132 B = 8,448 -> 576 x 15 =
    # 8,640; the indexer compressor's state: 2 x 2 (coff) x 128 x 4 B = 2,048 B a row x block
    # 4 = 8,192 -> 8,640; the window 37,440; the compressed KV 64 rows x 584 = 37,376 ->
    # 37,440; the compressor's state 2 x 2 x 512 x 4 B = 8,192 B a row x 4 = 32,768 -> 576 x 57
    # = 32,832 (window coff x ratio = 8).
    csa = v4_layer_caches(att, 2)
    assert [(c.label, c.block(256), c.page_bytes(256)) for c in csa] == [
        ("indexer", 256, 8_640), ("compressor state", 4, 8_640), ("sliding", 64, 37_440),
        ("compressed", 256, 37_440), ("compressor state", 4, 32_832)]
    assert [c.window for c in csa if c.label == "compressor state"] == [8, 8]
    # Layer 3 (ratio 128, HCA): 256 / 128 = 2 rows x 584 = 1,168 -> 576 x 3 = 1,728; the state
    # 2 x 1 x 512 x 4 B = 4,096 B a row x block 8 = 32,768 -> 32,832, window 128.
    hca = v4_layer_caches(att, 3)
    assert [(c.label, c.block(256), c.page_bytes(256)) for c in hca] == [
        ("sliding", 64, 37_440), ("compressed", 256, 1_728), ("compressor state", 8, 32_832)]
    # The MTP layer (index 43, compress_ratios[43] = 0) is the window only.
    assert len(v4_layer_caches(att, 43)) == 1


def test_compressed_cache_has_no_bytes_per_token() -> None:
    _, att = load(CONFIGS / "deepseek-v4-flash.json")
    with pytest.raises(UnmodelledError, match="no whole bytes per token"):
        _ = v4_layer_caches(att, 3)[1].bytes_per_token


def test_approximate_gcd_as_vllm() -> None:
    # _approximate_gcd([43, 21, 20], lower_bound=21): d = 21 pads 20 + 0 + 1 = 21, d = 22 pads
    # 1 + 1 + 2 = 4, d = 23 pads 3 + 2 + 3 = 8, ... d = 43 pads 0 + 22 + 23: 22.
    assert approximate_gcd([43, 21, 20], lower_bound=21) == 22
    assert approximate_gcd([61, 31, 30], lower_bound=30) == 31
    assert approximate_gcd([2, 6, 2, 2], lower_bound=2) == 2


# --- the pool: groups, block, a request (the published files, vLLM 0.32 on an H100) ---------

def test_flash_pool_by_hand() -> None:
    # 43 layers: 0-1 window only, 21 CSA (2, 4, ..., 42), 20 HCA (3, ..., 41). Buckets (one
    # block size and one token-slot rule each, in registration order): the window (block 64,
    # 43 layers, one page size: balanced), the full-attention rows (block 256: 21 indexer + 21
    # CSA + 20 HCA, 21 / 21 / 20: not balanced, kept whole), the CSA states (block 4: 21 + 21,
    # balanced, two page sizes -> at least 21 repeats a group) and the HCA states (block 8, 20).
    # Repeats = _approximate_gcd([43, 21, 20], >= 21) = 22: the window splits in cdiv(43, 22) =
    # 2 groups (22 + 21), the rest stay whole: 5 groups (vLLM logs "kv cache group sizes (64,
    # 64, 256, 4, 8)").
    k = v4_config(CONFIGS / "deepseek-v4-flash.json", context=1_048_576,
                  platform=get_platform("cuda"), version="0.32")
    assert [(g.block_size, len(g.layers)) for g in k.groups] == [
        (64, 22), (64, 21), (256, 62), (4, 42), (8, 20)]
    # A pool block is the widest group: 21 x 37,440 + 20 x 1,728 + 21 x 8,640 = 786,240 +
    # 34,560 + 181,440 = 1,002,240 B (the window's 22 x 37,440 = 823,680; the CSA states' 21 x
    # (32,832 + 8,640) = 870,912; the HCA states' 20 x 32,832 = 656,640).
    assert [g.bytes_per_block for g in k.groups] == [
        823_680, 786_240, 1_002_240, 870_912, 656_640]
    assert k.bytes_per_block == 1_002_240
    # One request of 1,048,576 tokens, 2 x 8,192 tokens in flight (async scheduling): the rows
    # cdiv(1,048,576, 256) = 4,096 blocks; each window group cdiv(127 + 16,384, 64) + 1 = 259;
    # the CSA states cdiv(7 + 16,384, 4) + 1 = 4,099; the HCA states cdiv(127 + 16,384, 8) + 1
    # = 2,065: 4,096 + 2 x 259 + 4,099 + 2,065 = 10,778 blocks.
    assert [g.pages_per_request for g in k.groups] == [259, 259, 4_096, 4_099, 2_065]
    assert k.blocks_per_request == 10_778
    # 60 GiB: 64,424,509,440 // 1,002,240 = 64,280 blocks; 64,280 / 10,778 = 5.964 -> "5.96x";
    # int(5.964000742 x 1,048,576) = 6,253,708 tokens.
    blocks = k.num_blocks(60 * GiB)
    assert blocks == 64_280
    assert f"{k.max_concurrency(blocks):.2f}" == "5.96"
    assert k.reported_tokens(blocks, 1_048_576) == int(64_280 / 10_778 * 1_048_576) == 6_253_708


def test_pro_pool_by_hand() -> None:
    # 61 layers: compress_ratios starts 128, 128, then 4, 128, ... 4: 30 CSA, 31 HCA. Repeats
    # = _approximate_gcd([61, 31, 30], >= 30) = 31 (pads 1 + 0 + 1); the window: 31 + 30.
    # The rows: 30 x 37,440 + 31 x 1,728 + 30 x 8,640 = 1,123,200 + 53,568 + 259,200 =
    # 1,435,968 B, the widest (window 31 x 37,440 = 1,160,640; HCA states 31 x 32,832 =
    # 1,017,792; CSA states 30 x 41,472 = 1,244,160).
    k = v4_config(CONFIGS / "deepseek-v4-pro.json", context=131_072,
                  platform=get_platform("cuda"), version="0.34")
    assert [(g.block_size, len(g.layers)) for g in k.groups] == [
        (64, 31), (64, 30), (256, 91), (8, 31), (4, 60)]
    assert k.bytes_per_block == 1_435_968
    # 131,072 tokens: 512 + 2 x 259 + 2,065 + 4,099 = 7,194 blocks a request.
    assert k.blocks_per_request == 512 + 2 * 259 + 2_065 + 4_099 == 7_194


# --- vLLM's CPU build, recorded ---------------------------------------------------------------

def oracle_runs() -> list[tuple[str, dict]]:
    runs = []
    for results in sorted(ORACLE.glob("*/results.json")):
        for run in json.loads(results.read_text()):
            runs.append((results.parent.name, run["output"]))
    return runs


RUNS = oracle_runs()


@pytest.mark.parametrize(("name", "output"), RUNS,
                         ids=[f"{n}-{o['settings']['max_model_len']}-{i}"
                              for i, (n, o) in enumerate(RUNS)])
def test_kvplan_equals_vllm_cpu(name: str, output: dict) -> None:
    s = output["settings"]
    kw = {"context": s["max_model_len"], "platform": get_platform("cpu"), "version": "0.32",
          "max_num_batched_tokens": s["max_num_batched_tokens"],
          "kv_cache_dtype": s.get("kv_cache_dtype", "auto"), "block_size": s.get("block_size")}
    if not output["ok"]:
        # vLLM refused to start; kvplan refuses too, in one line.
        with pytest.raises(UnmodelledError):
            v4_config(ORACLE / name / "config.json", **kw)
        return
    k = v4_config(ORACLE / name / "config.json", **kw)
    blocks = k.num_blocks(output["kv_gib"] * GiB)
    assert k.reported_tokens(blocks, s["max_model_len"]) == output["kv_cache_tokens"]
    assert f"{k.max_concurrency(blocks):.2f}" == f"{output['max_concurrency']:.2f}"
    logged = [line for line in output["log_lines"] if "kv cache group sizes" in line]
    if logged:
        sizes = tuple(g.block_size for g in k.groups)
        assert f"kv cache group sizes {sizes}" in logged[0]


def test_oracle_cases_recorded() -> None:
    assert {name for name, _ in RUNS} >= {"deepseek-v4-flash", "deepseek-v4-pro",
                                          "deepseek-v4-flash-6l"}


# --- refusals, one line each --------------------------------------------------------------------

@pytest.mark.parametrize(("kw", "text"), [
    ({"version": "0.19"}, "first registered in vLLM 0.20"),
    ({"version": "0.26"}, "on vLLM 0.32 and later"),
    ({"kv_cache_dtype": "bfloat16"}, "fp8_ds_mla only"),
    ({"block_size": 128}, "block 256 only"),  # on CUDA; the CPU platform sets 256 (oracle)
    ({"compute_capability": (12, 0)}, "SM 12.x"),
    ({"platform": get_platform("rocm")}, "CUDA and CPU only"),
    ({"num_spec_tokens": 1}, "speculative decoding"),
])
def test_refusals(kw: dict, text: str) -> None:
    args = {"context": 8192, "platform": get_platform("cuda"), "version": "0.32", **kw}
    with pytest.raises(UnmodelledError, match=text) as err:
        v4_config(CONFIGS / "deepseek-v4-flash.json", **args)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("change", "field"), [
    ({"compress_ratios": None}, "compress_ratios"),
    ({"compress_ratios": [0, 2]}, "compress_ratios"),
    ({"num_key_value_heads": 2}, "num_key_value_heads"),
    ({"sliding_window": None}, "sliding_window"),
])
def test_reader_names_file_and_field(change: dict, field: str) -> None:
    config = json.loads((CONFIGS / "deepseek-v4-flash.json").read_text())
    config.update(change)
    with pytest.raises(SpecError) as err:
        read_compressed_sparse_attention(config, "v4/config.json")
    assert str(err.value).startswith(f"v4/config.json: {field}: ")


# --- real start-up logs (tests/data/engine_logs/vllm_dsv4_logs.json) ---------------------------

LOGS = json.loads((DATA / "engine_logs" / "vllm_dsv4_logs.json").read_text())


def test_every_log_is_replayed_or_says_why() -> None:
    # None so far: every public V4 log found predates vLLM 0.29's packed groups (0.22-0.26),
    # whose DeepSeek-V4 path (group_and_unify_kv_cache_specs) kvplan does not model.
    for log in LOGS:
        assert log["url"].startswith("https://") and log["read"].startswith("held out")
        assert log["replay"] is None and log["skip_reason"] in log["notes"]
    assert len(LOGS) == 5


def test_b200_log_is_beyond_the_032_rule() -> None:
    # vllm issue 51454 (0.25.0, 8x B200, TP 8, 1M tokens, 8,192 batched tokens): 20.43x. Under
    # 0.32's rule that is 20.43 x 10,778 blocks x 1,002,240 B = 220.7 GB of KV on each GPU,
    # more than a B200's 178 GiB: the older release charged a request far fewer blocks.
    k = v4_config(CONFIGS / "deepseek-v4-flash.json", context=1_048_576,
                  platform=get_platform("cuda"), version="0.32")
    assert 20.43 * k.blocks_per_request * k.bytes_per_block > 200 * GiB


@pytest.mark.parametrize(("gpu", "blocks"), [("H100-80GB", 10_778), ("H200", 10_778),
                                             ("B200", 17_434), ("GB200", 17_434)])
def test_default_layout_by_gpu(gpu: str, blocks: int) -> None:
    # Every one of these is SM 9.x / 10.x: FlashMLA's fp8_ds_mla rows and cache block 256 (the
    # indexer's only size), whatever the KV flag. `vllm serve` batches 8,192 tokens on an
    # 80-150 GiB card and 16,384 on a >= 160 GiB one (EngineArgs.get_batch_defaults, 0.28+),
    # two batches in flight. B200 / GB200 at 1,048,576 tokens: the rows 4,096 blocks; the
    # windows 2 x (cdiv(127 + 32,768, 64) + 1) = 2 x 515; the CSA states cdiv(7 + 32,768, 4) +
    # 1 = 8,195; the HCA states cdiv(127 + 32,768, 8) + 1 = 4,113: 17,434 (H100: 10,778,
    # test_flash_pool_by_hand).
    g = get_gpu(gpu)
    _, batched = vllm_batch_defaults(g.memory_bytes, is_a100=False, version="0.32")
    k = v4_config(CONFIGS / "deepseek-v4-flash.json", context=1_048_576,
                  platform=get_platform("cuda"), version="0.32", max_num_batched_tokens=batched,
                  compute_capability=g.compute_capability)
    # The block vLLM reports is the groups' smallest (v1/engine/core.py: min over the
    # prefix-cacheable groups' blocks, here 64, 64, 256, 4, 8): 4; the cache block stays 256.
    assert (k.block_size, k.requested_block_size) == (4, 256) and k.blocks_per_request == blocks


def test_rtx_pro_6000_refused() -> None:
    g = get_gpu("RTX-PRO-6000")
    with pytest.raises(UnmodelledError, match="SM 12.x"):
        v4_config(CONFIGS / "deepseek-v4-flash.json", context=8192, platform=get_platform("cuda"),
                  compute_capability=g.compute_capability)
