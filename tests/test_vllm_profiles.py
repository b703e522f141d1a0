"""vLLM's per-release allocator rules (kvplan.engines.vllm.profiles), each at the release whose
wheel first has it (issue 26: read in /tmp/vllm-src/<version>/vllm, one patch release per
minor), the CPU platform's hybrid manager before 0.10.2 (kvplan.engines.vllm.alloc) and its MLA
backend by host (kvplan.engines.vllm.block_size.cpu_mla_block). Numbers worked by hand below."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import UnmodelledError
from kvplan.capacity.plan import plan_capacity
from kvplan.cli import app
from kvplan.engines.base import plan_inputs
from kvplan.engines.vllm.alloc import get_platform, vllm_kv_config
from kvplan.engines.vllm.profiles import VLLM_PROFILES, VllmProfile, vllm_profile
from kvplan.kv.kinds import FullAttentionCache, LayerCaches, SlidingWindowCache
from kvplan.sources.resolve import load_spec

GiB = 1 << 30
DATA = Path(__file__).parent / "data"
DSV2_LITE = DATA / "oracle" / "deepseek-v2-lite" / "config.json"
CODESTRAL = DATA / "configs" / "mamba-codestral-7b.json"


def _cli(*args: str):
    return CliRunner().invoke(app, [*args])


def _estimate(*args: str) -> dict:
    result = _cli("estimate", *args, "-f", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _refused(*args: str) -> str:
    result = _cli("estimate", *args)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    return line


def test_each_rule_at_the_release_that_first_has_it() -> None:
    # group_size_ratio: 0.11.2 none, 0.12.0 kv_cache_utils.py:1017 1.25, 0.17.1 :1043 1.25,
    # 0.18.1 :1043 1.5.
    assert [vllm_profile(v).group_size_ratio for v in ("0.11.2", "0.12.0", "0.17.1", "0.18.1")
            ] == [None, 1.25, 1.25, 1.5]
    # Mode 'align' with --enable-prefix-caching: 0.15.1 models/config.py:332-347 (0.14.1
    # :332-349 turned prefix caching off instead).
    assert [vllm_profile(v).mamba_align_mode for v in ("0.14.1", "0.15.1")] == [False, True]
    # The print: 0.19.1 kv_cache_utils.py:1302-1306 blocks // groups x block; 0.20.2 :1706
    # int(max_concurrency x max_model_len). 0.20.0 / 0.20.1 are not read (0.19's row).
    assert [vllm_profile(v).reported_tokens for v in ("0.19.1", "0.20.1", "0.20.2")] == [
        "blocks", "blocks", "concurrency"]
    # Prefix caching on for hybrids by default: 0.27.1 engine/arg_utils.py:2605 (`and not
    # is_hybrid`) no, 0.28.0 :2650 yes.
    assert [vllm_profile(v).hybrid_prefix_caching for v in ("0.27.1", "0.28.0", "0.32")] == [
        False, True, True]
    # The block a pure Mamba model reports: v1/engine/core.py sets cache_config.block_size to
    # the groups' smallest from 0.19.1 (:273; 0.18.1 has no such line).
    assert [vllm_profile(v).attention_free_block_is_max_len for v in ("0.18.1", "0.19.1")] == [
        False, True]


def _oss_14_10() -> tuple[LayerCaches, ...]:
    # gpt-oss-20b's attention (8 KV heads x head_dim 64, K and V, bf16: 2,048 B a token; window
    # 128), its 12 sliding + 12 full layers hand-changed to 14 sliding + 10 full: 14 / 10 = 1.4,
    # between 1.25 and 1.5 (no published config has such counts).
    return tuple(LayerCaches(index=i, caches=(
        SlidingWindowCache(token_bytes=2048, window=128) if i < 14 else
        FullAttentionCache(token_bytes=2048),)) for i in range(24))


@pytest.mark.parametrize(("version", "block_bytes", "blocks", "per_request", "tokens"), [
    # 0.17.1 (1.25): 14 >= 1.25 x 10, so groups of 10 (the smaller count): sliding in 2 groups
    # of 7 (3 padding layers each) + 1 full group; a pool block is 10 pages of 16 x 2,048 =
    # 32,768 B = 327,680 B: 4 GiB // 327,680 = 13,107 blocks. A request of 32,768 tokens: full
    # 32,768 / 16 = 2,048 blocks, each sliding group cdiv(min(127 + 8,192, 32,768), 16) + 1 =
    # 521 (kv_cache_interface.py SlidingWindowSpec): 2,048 + 2 x 521 = 3,090 -> 4.24x.
    # 'GPU KV cache size' = 13,107 // 3 groups x 16 = 69,904.
    ("0.17.1", 327_680, 13_107, 3_090, 69_904),
    # 0.18.1 (1.5): 14 < 1.5 x 10, so groups of 14: 1 sliding group, 1 full group of 10 + 4
    # padding; a pool block 14 x 32,768 = 458,752 B: 9,362 blocks; 2,048 + 521 = 2,569 -> 3.64x;
    # 9,362 // 2 x 16 = 74,896.
    ("0.18.1", 458_752, 9_362, 2_569, 74_896),
])
def test_group_size_ratio_moves_at_0_18(version: str, block_bytes: int, blocks: int,
                                       per_request: int, tokens: int) -> None:
    config = vllm_kv_config(_oss_14_10(), context=32768, profile=vllm_profile(version),
                            platform=get_platform("cuda"), version=version,
                            max_num_batched_tokens=8192)
    assert config.bytes_per_block == block_bytes
    assert config.num_blocks(4 * GiB) == blocks
    assert config.blocks_per_request == per_request
    assert config.reported_tokens(blocks, 32768) == tokens


def test_cpu_hybrid_manager_off_before_0_10_2() -> None:
    # 0.10.0 config.py:4656-4663 and 0.10.1.1 config/__init__.py:3653-3660: not CUDA or ROCm ->
    # disable_hybrid_kv_cache_manager = True; 0.10.2 asks Platform.support_hybrid_kv_cache(),
    # True on CPU (platforms/cpu.py:352). Gemma-3-12B's attention (8 KV heads x 256, bf16:
    # 8,192 B a token; window 1,024; 40 sliding + 8 full layers) on CPU (block 128: a page of
    # 1 MiB), 32,768 tokens, 4 GiB:
    # - 0.10.1.1: all 48 layers full attention (unify_hybrid_kv_cache_specs), one group: 48 MiB
    #   a block, 85 blocks, 256 a request;
    # - 0.10.2: groups of 8 (the smaller count): 5 sliding + 1 full, 8 MiB a block, 512 blocks;
    #   a request 256 + 5 x (cdiv(min(1,023 + 8,192, 32,768), 128) + 1 = 73) = 621.
    layers = tuple(LayerCaches(index=i, caches=(
        FullAttentionCache(token_bytes=8192) if i % 6 == 5 else
        SlidingWindowCache(token_bytes=8192, window=1024),)) for i in range(48))
    rows = []
    for version in ("0.10.1.1", "0.10.2"):
        c = vllm_kv_config(layers, context=32768, profile=vllm_profile(version),
                           platform=get_platform("cpu"), version=version,
                           max_num_batched_tokens=8192)
        rows.append((c.hybrid_manager, len(c.groups), c.num_blocks(4 * GiB),
                     c.blocks_per_request))
    assert rows == [(False, 1, 85, 256), (True, 6, 512, 621)]
    # On CUDA 0.10.1.1 keeps it on.
    cuda = vllm_kv_config(layers, context=32768, profile=vllm_profile("0.10.1.1"),
                          platform=get_platform("cuda"), version="0.10.1.1")
    assert cuda.hybrid_manager


def test_cpu_recurrent_hybrid_before_0_10_2_does_not_start() -> None:
    # With the manager off, unify_hybrid_kv_cache_specs cannot make Mamba and attention one
    # type: "Hybrid KV cache manager is disabled but failed to convert the KV cache specs to one
    # unified type" (0.10.0 kv_cache_utils.py:1063-1065).
    with pytest.raises(UnmodelledError, match="one unified type"):
        plan_capacity(load_spec("jamba-mini"), plan_inputs(
            context=8192, kv_budget_bytes=GiB, platform="cpu", engine_version="0.10.0"))
    plan = plan_capacity(load_spec("jamba-mini"), plan_inputs(
        context=8192, kv_budget_bytes=GiB, platform="cpu", engine_version="0.10.2"))
    assert plan.num_blocks > 0


def test_mamba_prefix_caching_mode_all_is_refused() -> None:
    # NemotronHForCausalLM declares SupportsMambaPrefixCaching: with --enable-prefix-caching
    # 0.15.1 - 0.27.1 set mamba cache mode 'all' (models/config.py:334-336), a state page per
    # block (not sized); 0.28.0 drops the branch ('align').
    spec = load_spec("nemotron-nano-9b-v2")
    for version in ("0.12", "0.15", "0.27.1"):
        with pytest.raises(UnmodelledError, match="mode 'all'"):
            plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=GiB,
                                            engine_version=version, prefix_caching=True))
    plan = plan_capacity(spec, plan_inputs(context=8192, kv_budget_bytes=GiB,
                                           engine_version="0.28", prefix_caching=True))
    assert plan.mamba_cache_mode == "align"
    # Without the interface (Qwen3-Next's Gated DeltaNet): 'align' from 0.15.1, and 0.14.1
    # turned prefix caching off ('none').
    next80 = load_spec("qwen3-next-80b-a3b")
    modes = [plan_capacity(next80, plan_inputs(
        context=8192, kv_budget_bytes=8 * GiB, engine_version=v, prefix_caching=True)
    ).mamba_cache_mode for v in ("0.14.1", "0.15.1")]
    assert modes == ["none", "align"]


def test_mamba2_prefill_checkpoint_from_0_32() -> None:
    # Granite-4.0-H-Small (36 Mamba2 + 4 attention layers: 9 state groups of 4 + 1 full), mode
    # 'align' by default from 0.28 (prefix caching on for hybrids). A request at 32,768 tokens:
    # cdiv(32,768, 528) = 63 attention blocks + per state group 2 pages (the running state and
    # the last block-aligned one, MambaSpec.max_memory_usage_bytes) to 0.31, 3 from 0.32.0,
    # whose MambaMixer2.get_kv_cache_spec adds num_prefill_checkpoint_blocks=1
    # (mamba_mixer2.py:1098-1108; 0.31.0's has none): 63 + 9 x 2 = 81, 63 + 9 x 3 = 90.
    spec = load_spec("granite-4.0-h-small")
    per_request = [plan_capacity(spec, plan_inputs(
        context=32768, kv_budget_bytes=8 * GiB, engine_version=v)).blocks_per_request
        for v in ("0.31", "0.32")]
    assert per_request == [81, 90]


def test_align_with_a_drafter_before_0_17_does_not_start() -> None:
    # 0.15.1 and 0.16.0 models/config.py:357-360 assert no speculative_config in mode 'align'
    # (gone in 0.17.1): Qwen3-Next with MTP and --enable-prefix-caching does not start there.
    spec = load_spec("qwen3-next-80b-a3b")
    ask = {"context": 8192, "kv_budget_bytes": 8 * GiB, "prefix_caching": True,
           "speculative_method": "mtp", "num_speculative_tokens": 1}
    with pytest.raises(UnmodelledError, match="not compatible with speculative decoding"):
        plan_capacity(spec, plan_inputs(engine_version="0.16", **ask))
    assert plan_capacity(spec, plan_inputs(engine_version="0.17", **ask)
                         ).mamba_cache_mode == "align"


@pytest.mark.parametrize(("version", "tokens", "block"), [
    # Mamba-Codestral-7B: 64 Mamba2 layers, a state of conv (8,192 + 2 x 8 x 128) x 3 x 2 B =
    # 61,440 + ssm 128 heads x 64 x 128 x 2 B = 2,097,152 -> 2,158,592 B a layer; one block of
    # the pool is 64 of them (138,149,888 B): 1 GiB // that = 7 blocks, one a request.
    # 0.10.x: single type, num_blocks x CacheConfig's 16 (kv_cache_utils.py:856) = 112.
    ("0.10.2", 112, 16),
    # 0.11.0 on: 7 // 1 group x the group's block, mamba_block_size = max_model_len (8,192):
    # 57,344 (kvplan said 112 before); the block shown is CacheConfig's until 0.19.
    ("0.11", 57_344, 16), ("0.18", 57_344, 16),
    # 0.19.1 core.py:273: cache_config.block_size = the groups' smallest: 8,192.
    ("0.19", 57_344, 8192),
])
def test_pure_mamba_reports_its_state_block(version: str, tokens: int, block: int) -> None:
    out = _estimate(str(CODESTRAL), "-c", "8192", "--kv-budget-gib", "1",
                    "--engine-version", version)
    assert out["reported_kv_cache_tokens"] == tokens and out["block_size"] == block


def test_cpu_mla_needs_the_host() -> None:
    # vLLM 0.29-0.34 on CPU: AMX_MLA on a host with AMX tiles, CPU_MLA (16) without
    # (platforms/cpu.py): not printed as exact unless told.
    line = _refused(str(DSV2_LITE), "-c", "8192", "--platform", "cpu", "--kv-budget-gib", "1")
    assert "--cpu-amx or --no-cpu-amx" in line
    # No AMX: CPU_MLA's 16 whatever --block-size (the oracle's runs, tests/oracle/no_amx).
    for extra in ((), ("--block-size", "64")):
        out = _estimate(str(DSV2_LITE), "-c", "8192", "--platform", "cpu", "--kv-budget-gib",
                        "1", "--no-cpu-amx", *extra)
        assert out["block_size"] == 16
    # AMX, --block-size 64, recorded on an AMX host (tests/data/oracle/block-size-runs.json,
    # deepseek-v2-lite-64-amx: 310,656 tokens, 37.92x). The shrunk config's 3 MLA layers of
    # (512 + 64) x 2 B = 1,152 B a token: a block of 3 x 64 x 1,152 = 221,184 B; 1 GiB //
    # 221,184 = 4,854 blocks; 8,192 / 64 = 128 a request: 37.921875x; x 8,192 = 310,656.
    out = _estimate(str(DSV2_LITE), "-c", "8192", "--platform", "cpu", "--kv-budget-gib", "1",
                    "--cpu-amx", "--block-size", "64", "--max-num-batched-tokens", "2048")
    assert (out["block_size"], out["reported_kv_cache_tokens"]) == (64, 310_656)
    # AMX and no --block-size: 128 (0.32.0 cpu.py:291-292).
    assert _estimate(str(DSV2_LITE), "-c", "8192", "--platform", "cpu", "--kv-budget-gib", "1",
                     "--cpu-amx")["block_size"] == 128
    # AMX_MLA's kernels MultipleOf(32): 16 stopped there ("No common block size for 16").
    line = _refused(str(DSV2_LITE), "-c", "8192", "--platform", "cpu", "--kv-budget-gib", "1",
                    "--cpu-amx", "--block-size", "16")
    assert "multiples of 32" in line


@pytest.mark.parametrize(("host", "block", "tokens"), [
    # hf-internal-testing's LongCat-ShortCat (shrunk, tests/data/blind26/shrunk): 4 MLA layers
    # of (512 + 64) x 2 B = 4,608 B a token, 1 GiB, 8,192 tokens, both recorded on vLLM 0.32's
    # CPU build on an AMX host (its results.json). AMX_MLA by default: block 128, 128 x 4,608
    # = 589,824 B; 1 GiB // 589,824 = 1,820 blocks; 8,192 / 128 = 64 a request: 28.4375x ->
    # 232,960 tokens. Forced to CPU_MLA (--attention-backend CPU_MLA, what a host without AMX
    # runs): 16 x 4,608 = 73,728 B; 14,563 blocks; 512 a request: 28.443359375x -> 233,008.
    ("--cpu-amx", 128, 232_960), ("--no-cpu-amx", 16, 233_008),
])
def test_cpu_mla_by_host_as_recorded(host: str, block: int, tokens: int) -> None:
    config = DATA / "blind26" / "shrunk" / "longcat-shortcat-hf-internal" / "config.json"
    out = _estimate(str(config), "-c", "8192", "--platform", "cpu", "--kv-budget-gib", "1",
                    "--max-num-batched-tokens", "2048", host)
    assert (out["block_size"], out["reported_kv_cache_tokens"]) == (block, tokens)


def test_cpu_mla_default_on_an_amx_host_as_recorded() -> None:
    # DeepSeek-V2-Lite shrunk (3 MLA layers), 1 GiB, 8,192 tokens, vLLM 0.32's CPU build on an
    # AMX host with no hook (tests/data/oracle/cpu-amx-runs.json): 310,656 tokens, 37.92x.
    # --cpu-amx: block 128, 3 x 128 x 1,152 = 442,368 B; 1 GiB // 442,368 = 2,427 blocks; 64 a
    # request: 37.921875x -> 310,656. --no-cpu-amx (CPU_MLA 16) would say 310,688: the host
    # moves the print.
    [run] = json.loads((DATA / "oracle" / "cpu-amx-runs.json").read_text())["runs"]
    logged = run["output"]["kv_cache_tokens"]
    args = (str(DSV2_LITE), "-c", "8192", "--platform", "cpu", "--kv-budget-gib", "1",
            "--max-num-batched-tokens", "2048")
    assert _estimate(*args, "--cpu-amx")["reported_kv_cache_tokens"] == logged == 310_656
    assert _estimate(*args, "--no-cpu-amx")["reported_kv_cache_tokens"] == 310_688


def test_cpu_mla_by_release() -> None:
    # 0.27.1 platforms/cpu.py:83-84: "MLA is not supported on CPU."; 0.28.0 CPU_MLA only (no
    # AMX_MLA before 0.29.0): 16 on any host.
    line = _refused(str(DSV2_LITE), "-c", "8192", "--platform", "cpu", "--kv-budget-gib", "1",
                    "--engine-version", "0.27", "--no-cpu-amx")
    assert "runs no MLA there" in line
    out = _estimate(str(DSV2_LITE), "-c", "8192", "--platform", "cpu", "--kv-budget-gib", "1",
                    "--engine-version", "0.28")
    assert out["block_size"] == 16



# Every release's profile as the table gave it before its rows were built from the release before
# (dataclasses.replace): the rewrite must not move a value. Fields in VllmProfile's order.
FROZEN_PROFILE_FIELDS = (
    'version', 'group_size_ratio', 'reported_tokens', 'chunked_local_hybrid',
    'hybrid_prefix_caching', 'mamba_align_mode', 'attention_free_block_is_max_len',
    'reported_block_is_groups_min', 'mamba2_prefill_checkpoint', 'gdn_prefill_checkpoint',
    'sliding_mla_full_fallback', 'notes'
)
FROZEN_PROFILES = (
    ('0.10', None, 'blocks', True, False, False, False, False, False, False, False,
     "group size = the smaller type's layer count; tokens = blocks x size"),
    ('0.10.1', None, 'blocks', False, False, False, False, False, False, False, False,
     'chunked local attention turns the hybrid manager off by default'),
    ('0.11', None, 'blocks', False, False, False, False, True, False, False, False,
     "'GPU KV cache size' takes the groups' smallest block for every model"),
    ('0.12', 1.25, 'blocks', False, False, False, False, True, False, False, False,
     'group size: the larger count when under 1.25x the smaller'),
    ('0.14', 1.25, 'blocks', True, False, False, False, True, False, False, False,
     'chunked local attention (Llama 4) keeps the hybrid KV-cache manager on by '
     'default (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1)'),
    ('0.15', 1.25, 'blocks', True, False, True, False, True, False, False, False,
     "--enable-prefix-caching on a recurrent hybrid: mamba cache mode 'align'"),
    ('0.18', 1.5, 'blocks', True, False, True, False, True, False, False, False,
     'group size: under 1.5x (gpt-oss-20b + EAGLE: 12 sw + 13 full)'),
    ('0.19', 1.5, 'blocks', True, False, True, True, True, False, False, False,
     "the block reported is the groups' smallest (pure Mamba: max_model_len)"),
    ('0.20.2', 1.5, 'concurrency', True, False, True, True, True, False, False, False,
     "'KV cache size: N tokens' = int(max_concurrency x max_model_len)"),
    ('0.28', 1.5, 'concurrency', True, True, True, True, True, False, False, False,
     "prefix caching on for hybrids: mamba cache mode 'align'"),
    ('0.32', 1.5, 'concurrency', True, True, True, True, True, True, False, False,
     "Mamba2 keeps a prefill checkpoint page per request in mode 'align'"),
    ('0.33', 1.5, 'concurrency', True, True, True, True, True, True, True, False,
     "Gated DeltaNet in mode 'align' on FlashInfer's prefill: a prefill checkpoint "
     'page per request, block a multiple of 64'),
    ('0.34', 1.5, 'concurrency', True, True, True, True, True, True, True, True,
     'the allocator as 0.33 at a default block of 64 (16 before), and MLA pages that '
     'cannot be unified put sliding-window '
     'MLA layers in full attention; the KV cache sized after warm-up on CUDA and ROCm '
     '(extensible KV cache): budget not modelled'),
)


def test_profiles_equal_the_table_before_rows_were_built_from_the_release_before() -> None:
    assert [f.name for f in dataclasses.fields(VllmProfile)] == list(FROZEN_PROFILE_FIELDS)
    assert [dataclasses.astuple(p) for p in VLLM_PROFILES] == list(FROZEN_PROFILES)
