"""SGLang's pools for the hybrid families (kvplan.engines.sglang.pools), derived by hand from the
real configs and checked against the start-up logs they were read from (kvplan issue #13)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan._util.units import GiB, MiB
from kvplan.capacity.plan import plan_capacity
from kvplan.capacity.reverse import fraction_needed
from kvplan.cli import app
from kvplan.engines.base import Engine, PlanInputs, plan_inputs
from kvplan.engines.caches import stage_caches
from kvplan.engines.sglang.pools import (
    MambaPool,
    default_max_running_requests,
    mamba_full_memory_ratio,
    sglang_pool,
)
from kvplan.sources.resolve import load_spec

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "data" / "configs"
runner = CliRunner()


def sglang(context: int = 4096, **kw) -> PlanInputs:
    return plan_inputs(context=context, engine=Engine.sglang, **kw)


def pool(model: str, **kw):  # noqa: ANN201
    spec = load_spec(model)
    inputs = sglang(**kw)
    return sglang_pool(spec, inputs, stage_caches(spec, inputs))


# --- recurrent state: SGLang's shapes are vLLM's ------------------------------------------------


def _sglang_mamba2_per_req(*, tp: int, intermediate: int, n_groups: int, heads: int,
                           head_dim: int, state: int, kernel: int, layers: int,
                           ssm_bytes: int = 4) -> int:
    """configs/mamba_utils.py, written out: Mamba2StateShape.create (n_groups extended when TP
    does not divide it), conv (conv_dim / tp, kernel - 1) in bfloat16, temporal (heads / tp,
    head_dim, state) in the SSM dtype; Mamba2CacheParams.mamba_cache_per_req sums the layers."""
    if n_groups % tp:
        n_groups += tp - n_groups  # extra_groups_for_head_shards
    conv_dim = intermediate + 2 * n_groups * state
    conv = conv_dim // tp * (kernel - 1) * 2
    ssm = heads // tp * head_dim * state * ssm_bytes
    return (conv + ssm) * layers


@pytest.mark.parametrize(("model", "tp", "by_hand"), [
    # Qwen3.5-9B (tests/data/configs/qwen3.5-9b.json): GDN as SGLang builds it, intermediate =
    # 32 value heads x 128, n_groups = 16 key heads, state = key dim 128; 24 linear layers.
    # TP2: conv 8,192 / 2 x 3 x 2 B = 24,576; ssm 16 x 128 x 128 x 4 B = 1,048,576.
    ("qwen3.5-9b", 2, {"intermediate": 4096, "n_groups": 16, "heads": 32, "head_dim": 128,
                       "state": 128, "kernel": 4, "layers": 24}),
    # Qwen3-Next-80B-A3B: the same GDN layer, 36 of 48 layers linear.
    ("qwen3-next-80b-a3b", 4, {"intermediate": 4096, "n_groups": 16, "heads": 32,
                               "head_dim": 128, "state": 128, "kernel": 4, "layers": 36}),
    # Nemotron-Nano-9B-v2: Mamba-2, 128 heads x 80, 8 groups x 128 state, 27 'M' layers.
    ("nemotron-nano-9b-v2", 1, {"intermediate": 10240, "n_groups": 8, "heads": 128,
                                "head_dim": 80, "state": 128, "kernel": 4, "layers": 27}),
    # Falcon-H1-34B: Mamba-2 beside attention in all 72 layers, mamba_d_ssm 4,096 = 32 heads x
    # 128, 2 groups x 256 state; TP2 splits the 2 groups (no extension).
    ("falcon-h1-34b", 2, {"intermediate": 4096, "n_groups": 2, "heads": 32, "head_dim": 128,
                          "state": 256, "kernel": 4, "layers": 72}),
])
def test_state_bytes_per_request_equal_sglangs_formula(model: str, tp: int, by_hand) -> None:
    spec = load_spec(model)
    p = pool(model, tp=tp)
    assert isinstance(p, MambaPool)
    assert p.per_req == _sglang_mamba2_per_req(tp=tp, **by_hand)
    # vLLM's shapes, the same kvplan.kv.cache.recurrent_state, in SGLang's dtypes: equal sizes.
    vllm = stage_caches(spec, plan_inputs(context=4096, tp=tp, ssm_dtype="float32"))
    vllm_state = sum(c.state_bytes for lc in vllm for c in lc.caches if c.is_state)
    if spec.weight_dtype == "bf16":
        assert vllm_state == p.per_req


def test_qwen35_9b_state_is_the_logged_one() -> None:
    # Qwen3.5-9B on 2 x RTX 4090 (tests/data/engine_logs/sglang_startup_logs.json): "Mamba Cache
    # is allocated. max_mamba_cache_size: 186, conv_state size: 0.10GB, ssm_state size: 4.38GB".
    # MambaPool holds 187 slots (slot 0 pads): 187 x 24 x 1 MiB = 4.38 GiB; conv 187 x 24 x
    # 24,576 B = 0.10 GiB.
    p = pool("qwen3.5-9b", tp=2)
    assert p.per_req == 25_755_648
    assert f"{187 * p.ssm_per_req / GiB:.2f}" == "4.38"
    assert f"{187 * p.conv_per_req / GiB:.2f}" == "0.10"


def test_qwen35_9b_split_reproduces_the_log() -> None:
    # rest = free after weights - free before x (1 - f). The log's own figures give 14.08 -
    # 22.93 x 0.2 = 9.494 GiB, but SGLang takes the least free memory over the TP ranks; the KV
    # line fixes the rest at 9.456 GiB on the tighter rank: 9.456 x 0.9 / 1.9 = 4.479 GiB /
    # 24.5625 MiB = 186.7 -> 186 slots; (9.456 GiB - 186 x 25,755,648 B) // (8 full layers x
    # 2 KV heads x 256 x 2 x 2 B = 16,384) = 327,315 tokens vs "#tokens: 327310"; and
    # max_running_requests = 186 // 3 = 62 as logged. The build (2026-04-14 main) is after
    # 0.5.10.post1 and before 0.5.11, whose "auto" strategy is still no_buffer: 3 slots per
    # running request (5 from 0.5.14: test_sglang_mamba_strategy.py).
    p = pool("qwen3.5-9b", tp=2, context=262144, engine_version="0.5.10.post1")
    sizes = p.size(int(9.456 * GiB))
    assert p.cell == 16_384
    assert sizes.max_mamba_cache_size == 186
    assert abs(sizes.max_total_num_tokens - 327_310) <= 10
    assert sizes.max_running_requests == 62
    assert f"{sizes.mamba_ssm_state_bytes / GiB:.2f}" == "4.38"


def test_granite_micro_split_reproduces_sglang_pr_18040() -> None:
    # ibm-granite/granite-4.0-h-micro, `sglang.bench_one_batch` in sglang PR #18040 (2026-01-31,
    # one 16 GB card): "Load weight begin. avail mem=15.24 GB", "Load weight end ... avail
    # mem=9.26 GB, mem usage=5.98 GB", "Mamba Cache is allocated. max_mamba_cache_size: 38,
    # conv_state size: 0.03GB, ssm_state size: 2.74GB", "KV Cache is allocated. #tokens: 399740,
    # K size: 1.52 GB". Config (tests/data/configs/granite-4.0-h-micro.json): 36 Mamba-2 layers
    # of 64 heads x 64, 1 group, state 128; 4 attention layers of 8 KV heads x 64.
    # By hand: conv (4,096 + 2 x 128) x 3 x 2 B = 26,112; ssm 64 x 64 x 128 x 4 B = 2 MiB;
    # x 36 = 76,437,504 B per slot. Cell 4 x 8 x 64 x 2 x 2 B = 8,192 (K 4,096: 399,740 x 4,096
    # = 1.52 GiB). The default fraction for a 16,303 MiB card (0.5.3+) is 0.771: rest = 9.26 -
    # 15.24 x 0.229 = 5.770 GiB -> x 0.9 / 1.9 = 2.733 GiB / 72.9 MiB = 38.4 -> 38 slots;
    # (5.770 GiB - 38 x 76,437,504) // 8,192 = 401,7xx tokens (+0.5 %: the figures are printed
    # to 0.01 GiB and the fraction to 0.001).
    spec = load_spec(str(CONFIGS / "granite-4.0-h-micro.json"))
    inputs = sglang()
    p = sglang_pool(spec, inputs, stage_caches(spec, inputs))
    assert p.per_req == 76_437_504 and p.cell == 8_192
    assert f"{399_740 * 4_096 / GiB:.2f}" == "1.52"
    sizes = p.size(int((9.26 - 15.24 * (1 - 0.771)) * GiB))
    assert sizes.max_mamba_cache_size == 38
    assert abs(sizes.max_total_num_tokens / 399_740 - 1) < 0.01
    assert f"{sizes.mamba_ssm_state_bytes / GiB:.2f}" == "2.74"
    assert f"{sizes.mamba_conv_state_bytes / GiB:.2f}" == "0.03"


def test_lfm2_short_conv_state_pool() -> None:
    # LFM2's short convolutions keep a conv-only state (SGLang: "ssm_state size: 0.00GB"), the
    # shape vLLM gives it: (L_cache - 1) x conv_dim in bfloat16. LFM2-1.2B
    # (tests/data/configs/lfm2-1.2b.json): 10 conv layers x 2 x 2,048 x 2 B = 81,920 B per slot;
    # 6 attention layers x 8 KV heads x 64 x 2 x 2 B = 12,288 B per token.
    p = pool(str(CONFIGS / "lfm2-1.2b.json"))
    assert (p.conv_per_req, p.ssm_per_req, p.cell) == (81_920, 0, 12_288)
    # LFM2 (700M: conv_dim 1,536, the same attention) through `sglang.bench_one_batch`, by the
    # author of sglang PR #18040 on the same 16 GB card (2025-12-29; code-index file id
    # 46415979912, an LFM2 support write-up):
    # "Load weight begin. avail mem=15.33 GB", "avail mem=13.81 GB, mem usage=1.52 GB", "Mamba
    # Cache is allocated. max_mamba_cache_size: 85292, conv_state size: 4.88GB", "#tokens:
    # 473854, K size: 2.71 GB". Per slot 10 x 2 x 1,536 x 2 B = 61,440 (4.88 GiB / 85,293 =
    # 61,434); rest = 13.81 - 15.33 x 0.229 = 10.30 GiB -> 85,261 slots and 473,672 tokens
    # (both -0.04 %).
    lfm700 = replace(p, conv_per_req=10 * 2 * 1536 * 2)
    sizes = lfm700.size(int((13.81 - 15.33 * (1 - 0.771)) * GiB))
    assert abs(sizes.max_mamba_cache_size / 85_292 - 1) < 0.001
    assert abs(sizes.max_total_num_tokens / 473_854 - 1) < 0.001
    assert f"{(85_292 + 1) * 61_440 / GiB:.2f}" == "4.88"
    assert f"{473_854 * 6_144 / GiB:.2f}" == "2.71"


def test_mamba_ratio_by_version_and_the_explicit_sizes() -> None:
    # server_args.py: mamba_full_memory_ratio 0.2, 0.9 from sglang PR #11679 (0.5.4).
    assert mamba_full_memory_ratio("0.5.3") == 0.2
    assert mamba_full_memory_ratio("0.5.4") == mamba_full_memory_ratio(None) == 0.9
    rest = 20 * GiB
    per_req = pool("qwen3.5-9b").per_req  # TP1: 24 x (3 x 8,192 x 2 + 32 x 128 x 128 x 4)
    assert per_req == 24 * (49_152 + 2 * MiB)
    # SGLang has Qwen3_5ForConditionalGeneration from 0.5.9 only: the 0.5.3 ratio is checked on
    # Qwen3-Next (from 0.5.2), whose 36 Gated DeltaNet layers hold the same state per layer,
    # TP1: 36 x (3 x 8,192 x 2 + 32 x 128 x 128 x 4).
    next_per_req = pool("qwen3-next-80b-a3b").per_req
    assert next_per_req == 36 * (49_152 + 2 * MiB)
    assert pool("qwen3-next-80b-a3b", engine_version="0.5.3").size(
        rest).max_mamba_cache_size == int(rest * 0.2 / 1.2 // next_per_req)
    # --max-mamba-cache-size as given; the tokens get the rest of the rest.
    sizes = pool("qwen3.5-9b", max_mamba_cache_size=100).size(rest)
    assert sizes.max_mamba_cache_size == 100
    assert sizes.max_total_num_tokens == (rest - 100 * per_req) // pool("qwen3.5-9b").cell
    # --disable-radix-cache: one slot per running request; with --max-running-requests the
    # slots are that many, without it 512 before sglang PR #18786 (0.5.9), the ratio after.
    off = pool("qwen3.5-9b", prefix_caching=False, max_num_seqs=48).size(rest)
    assert (off.max_mamba_cache_size, off.max_running_requests) == (48, 48)
    assert pool("qwen3-next-80b-a3b", prefix_caching=False, engine_version="0.5.8").size(
        rest).max_mamba_cache_size == 512
    ratio = pool("qwen3.5-9b", prefix_caching=False).size(rest)
    assert ratio.max_mamba_cache_size == int(rest * 0.9 / 1.9 // per_req)
    assert ratio.max_running_requests == ratio.max_mamba_cache_size  # one slot each


def test_max_running_requests_default_matches_the_dense_logs() -> None:
    # init_memory_pool: int(tokens / context_len x 512) within [2048, 4096]. grok-2, v0.5.2rc2:
    # "max_total_num_tokens=903439 ... max_running_requests=3529, context_len=131072";
    # Qwen3-14B (2026 build): 298447 tokens, context 40960 -> "max_running_requests=3730".
    assert default_max_running_requests(903_439, 131_072) == 3529
    assert default_max_running_requests(298_447, 40_960) == 3730
    assert default_max_running_requests(105_531, 131_072) == 2048  # the floor
    assert default_max_running_requests(2_658_165, 32_768) == 4096  # the ceiling


# meta-llama/Llama-3.1-8B's config.json (model_specs/llama-3.1-8b.yaml): 32 layers, 8 KV heads of
# head_dim 128, bf16: cell = 32 x 2 (K, V) x 8 x 128 x 2 B = 131,072 B per token (TP 1).
LLAMA_CELL = 131_072


@pytest.mark.parametrize(("version", "capped", "floored"), [
    ("0.5.9", 3_072, 3_071), ("0.5.10", 2_500, 3_068), ("0.5.23", 2_500, 3_068)])
def test_max_running_requests_reads_the_profiled_tokens_to_0_5_9_by_hand(
        version: str, capped: int, floored: int) -> None:
    """Context 8,192. To 0.5.9 init_memory_pool takes the default rule over the profiled
    rest // cell before the --max-total-tokens cap and the page floor (0.5.9 mixin:342-353, the
    cap :378-384, the floor :387-391); from 0.5.10 _resolve_max_num_reqs reads the pool's tokens
    after them (0.5.10 mixin:874-887).
    - 6 GiB, --max-total-tokens 40,000: profiled 6 x 2^30 // 131,072 = 49,152, pool 40,000;
      0.5.9 int(49,152 / 8,192 x 512) = 3,072, 0.5.10+ int(40,000 / 8,192 x 512) = int(2,500.0).
    - 49,150 x 131,072 B, page 64: profiled 49,150, pool 49,150 // 64 x 64 = 49,088; 0.5.9
      int(49,150 / 16) = int(3,071.875) = 3,071, 0.5.10+ 49,088 / 16 = 3,068."""
    spec = load_spec("llama-3.1-8b")
    cap = plan_capacity(spec, sglang(context=8192, engine_version=version,
                                     kv_budget_bytes=6 * GiB, max_total_tokens=40_000))
    assert (cap.token_capacity, cap.max_running_requests) == (40_000, capped)
    page = plan_capacity(spec, sglang(context=8192, engine_version=version, block_size=64,
                                      kv_budget_bytes=49_150 * LLAMA_CELL))
    assert (page.token_capacity, page.max_running_requests) == (49_088, floored)


@pytest.mark.parametrize(("version", "given", "tiny", "tiny_given"), [
    ("0.5.9", 5_000, 2_048, 3_000), ("0.5.10", 3_072, 1_500, 2_048),
    ("0.5.13", 3_072, 1_500, 2_048), ("0.5.14", 5_000, 1_500, 1_500),
    ("0.5.23", 5_000, 1_500, 1_500)])
def test_max_running_requests_given_and_half_pool_by_release_by_hand(
        version: str, given: int, tiny: int, tiny_given: int) -> None:
    """Llama-3.1-8B (LLAMA_CELL). --max-running-requests is taken as given to 0.5.9
    (init_memory_pool 0.5.9 mixin:340), capped by the default rule's clamp in 0.5.10 - 0.5.13
    (min(given, estimated), 0.5.10 mixin:844-849) and by tokens // 2 from 0.5.14 (0.5.14
    mixin:988-991); from 0.5.10 the default is at most tokens // 2 too (0.5.10 mixin:851).
    - 6 GiB, context 8,192, given 5,000: 49,152 tokens, estimated int(49,152 / 16) = 3,072,
      half 24,576: 5,000 / 3,072 / 5,000.
    - 3,000 tokens, context 1,024: estimated int(3,000 / 1,024 x 512) = 1,500 -> 2,048, half
      1,500: default 2,048 to 0.5.9, 1,500 after; given 3,000: 3,000 / 2,048 / 1,500."""
    spec = load_spec("llama-3.1-8b")
    big = plan_capacity(spec, sglang(context=8192, engine_version=version,
                                     kv_budget_bytes=6 * GiB, max_num_seqs=5_000))
    assert big.max_running_requests == given
    small = {"context": 1024, "engine_version": version, "kv_budget_bytes": 3_000 * LLAMA_CELL}
    assert plan_capacity(spec, sglang(**small)).max_running_requests == tiny
    assert plan_capacity(spec, sglang(max_num_seqs=3_000, **small)).max_running_requests == (
        tiny_given)


@settings(max_examples=25, deadline=None)
@given(budget=st.integers(min_value=0, max_value=40 << 30),
       version=st.sampled_from(["0.5.3", "0.5.9", "0.5.10", "0.5.14", "0.5.23"]),
       page=st.sampled_from([1, 16, 64]), context=st.sampled_from([512, 1000, 8192, 131_072]))
def test_sweep_grid_running_is_the_pools_rule(budget: int, version: str, page: int,
                                              context: int) -> None:
    """The sweep's request cap over a grid (SglangPool.grid_running) is `size`'s, point by
    point: one rule for estimate, plan, sweep and simulate."""
    p = pool("llama-3.1-8b", context=context, engine_version=version, block_size=page)
    grid = p.grid_running([budget, budget + 12_345], [context, 2 * context])
    for i, rest in enumerate((budget, budget + 12_345)):
        for j, ctx in enumerate((context, 2 * context)):
            assert int(grid[i, j]) == replace(p, context_len=ctx).size(rest).max_running_requests


def test_mamba_pool_caps_requests_in_the_plan() -> None:
    plan = plan_capacity(load_spec("qwen3.5-9b"), sglang(context=8192, kv_budget_bytes=20 * GiB,
                                                         engine_version="0.5.13"))
    assert plan.sglang_pool["kind"] == "mamba"
    assert plan.max_running_requests == plan.max_mamba_cache_size // 3  # no_buffer to 0.5.13
    newest = plan_capacity(load_spec("qwen3.5-9b"), sglang(context=8192,
                                                           kv_budget_bytes=20 * GiB))
    assert newest.max_running_requests == newest.max_mamba_cache_size // 5  # extra_buffer
    assert plan.max_requests == min(plan.num_blocks // 8192, plan.max_running_requests)
    assert plan.state_bytes_per_request == pool("qwen3.5-9b").per_req


# --- sliding-window pool --------------------------------------------------------------------------


def test_gpt_oss_120b_swa_pool_by_hand() -> None:
    # gpt-oss-120b: 36 layers alternating sliding (128) and full, 8 KV heads x 64. TP1: each
    # layer 8 x (64 + 64) x 2 B = 2,048 B/token; full cell 18 x 2,048 = 36,864 = the sliding
    # one. HybridSWAPoolConfigurator: full = rest // (36,864 + 0.8 x 36,864 = 66,355.2);
    # 10 GiB = 10,737,418,240 B -> 161,817; swa = int(161,817 x 0.8) = 129,453.
    plan = plan_capacity(load_spec("gpt-oss-120b"), sglang(kv_budget_bytes=10 * GiB))
    assert plan.sglang_pool["kind"] == "hybrid_swa"
    assert (plan.sglang_pool["cell_bytes"], plan.sglang_pool["swa_cell_bytes"]) == (36_864,
                                                                                   36_864)
    assert plan.full_max_total_num_tokens == plan.reported_kv_cache_tokens == 161_817
    assert plan.swa_max_total_num_tokens == 129_453
    # Before 0.5.8 (0.5.0-0.5.3's server_args.py: disable_hybrid_swa_memory for GptOss) and with
    # --disable-hybrid-swa-memory: every layer full, 10 GiB // 73,728 = 145,635 tokens.
    for old in (sglang(kv_budget_bytes=10 * GiB, engine_version="0.5.2"),
                sglang(kv_budget_bytes=10 * GiB, disable_hybrid_swa_memory=True)):
        flat = plan_capacity(load_spec("gpt-oss-120b"), old)
        assert flat.sglang_pool["kind"] == "token"
        assert flat.reported_kv_cache_tokens == 145_635 and flat.swa_max_total_num_tokens is None


def test_llama4_scout_chunked_layers_are_the_swa_pool() -> None:
    # Llama-4-Scout: SGLang's get_hybrid_layer_ids makes the layers with (i + 1) % 4 != 0 (the
    # chunked-attention ones, chunk 8,192) sliding. TP4: 8 KV heads / 4 x (128 + 128) x 2 B =
    # 1,024 B per layer: full cell 12 x 1,024 = 12,288, sliding 36 x 1,024 = 36,864; with
    # ratio 0.5: full = 10 GiB // (12,288 + 18,432) = 349,525; swa = 174,762.
    plan = plan_capacity(load_spec("llama-4-scout"),
                         sglang(tp=4, kv_budget_bytes=10 * GiB, swa_full_tokens_ratio=0.5))
    assert (plan.full_max_total_num_tokens, plan.swa_max_total_num_tokens) == (349_525, 174_762)
    assert plan.sglang_pool["sliding_window"] == 8192
    # At 4k a request holds all its tokens in both pools: the smaller sliding pool binds.
    assert plan.max_requests == 174_762 // 4096
    long = plan_capacity(load_spec("llama-4-scout"),
                         sglang(tp=4, context=65536, kv_budget_bytes=10 * GiB,
                                swa_full_tokens_ratio=0.5))
    assert long.max_requests == min(349_525 // 65536, 174_762 // 8193)


def test_gemma_sliding_layers_stay_full_attention() -> None:
    # gemma-2/3 are not in is_hybrid_swa_model (server_args.py disables the hybrid pool for
    # them): every layer in the one token pool, as before.
    spec = load_spec("gemma-3-27b")
    plan = plan_capacity(spec, sglang(kv_budget_bytes=10 * GiB))
    assert plan.sglang_pool["kind"] == "token" and plan.swa_max_total_num_tokens is None
    assert plan.per_gpu_bytes_per_token == 62 * 16 * 128 * 2 * 2 // 1  # 16 KV heads, 128


# --- DeepSeek sparse attention -----------------------------------------------------------------


def test_deepseek_v32_cell_with_the_indexer() -> None:
    # get_cell_size_per_token (is_deepseek_nsa): fp8 latent as calculate_mla_kv_cache_dim's
    # 512 + 512 / 128 x 4 + 64 x 2 = 656 B; the indexer keys 128 + 128 / 128 x 4 = 132 B
    # (uint8); 61 layers: 61 x 788 = 48,068 B/token. In bf16: 61 x (576 x 2 + 132) = 78,324.
    spec = load_spec("deepseek-v3.2")
    fp8 = plan_capacity(spec, sglang(kv_dtype="fp8", kv_budget_bytes=10 * GiB))
    assert fp8.per_gpu_bytes_per_token == 48_068
    # 10 GiB // 48,068 = 223,379 tokens, floored to SGLang's DSA page of 64 (server_args.py
    # "Setting page size to 64 for DeepSeek DSA"; kvplan.engines.sglang.dsa_page): 3,490 pages
    # = 223,360 tokens (223,379 before the page rule).
    assert fp8.reported_kv_cache_tokens == 223_360 == 10 * GiB // 48_068 // 64 * 64
    assert fp8.block_size == 64
    bf16 = plan_capacity(spec, sglang(kv_budget_bytes=10 * GiB, tp=8))  # MLA: not split
    assert bf16.per_gpu_bytes_per_token == 78_324


# --- refusals, the inverse, the CLI ----------------------------------------------------------


@pytest.mark.parametrize(("model", "kw", "words"), [
    # JambaForCausalLM: no SGLang release read has a model class for it (srt/models EntryClass,
    # kvplan/engines/sglang/arrivals.json), refused before its mamba1 layers are looked at.
    ("jamba-mini", {}, "no model class for JambaForCausalLM"),
    # Qwen3_5ForConditionalGeneration: from SGLang 0.5.9 (qwen3_5.py EntryClass).
    ("qwen3.5-9b", {"engine_version": "0.5.1"}, "from 0.5.9: --engine-version 0.5.9 or newer"),
    ("qwen3-next-80b-a3b", {"speculative_method": "mtp", "num_speculative_tokens": 1},
     "speculative"),
    ("deepseek-v3", {"speculative_method": "mtp", "num_speculative_tokens": 1, "pp": 2},
     "PP is not compatible"),
    ("deepseek-v3", {"speculative_method": "mtp", "num_speculative_tokens": 1,
                     "dp_attention": True, "tp": 8}, "DP"),
    ("gpt-oss-20b", {"speculative_method": "eagle3", "num_speculative_tokens": 3},
     "sliding-window pool"),
    # Glm4MoeForCausalLM (glm4_moe.py EntryClass) from 0.4.9.post5, still before 0.4.10.
    ("glm-4.5-air", {"speculative_method": "mtp", "num_speculative_tokens": 1,
                     "engine_version": "0.4.9.post5"}, "non-MLA NextN"),
])
def test_unmodelled_is_refused_in_one_line(model: str, kw, words: str) -> None:
    with pytest.raises(InputError, match=words) as err:
        plan_capacity(load_spec(model), sglang(kv_budget_bytes=10 * GiB, **kw))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("model", ["qwen3.5-9b", "llama-4-scout", "gpt-oss-20b"])
def test_fraction_needed_is_the_inverse_for_the_split_pools(model: str) -> None:
    spec = load_spec(model)
    tp = 4 if model == "llama-4-scout" else 1
    inputs = sglang(context=16384, total_bytes=80 * GiB, weights_bytes=10 * GiB, tp=tp)
    need = fraction_needed(spec, inputs, 20)
    assert need is not None and 0 < need < 1
    assert plan_capacity(spec, replace(inputs, mem_fraction=min(1.0, need + 0.002))
                         ).max_requests >= 20
    assert plan_capacity(spec, replace(inputs, mem_fraction=need - 0.01)).max_requests < 20


def test_cli_json_has_the_pool_keys() -> None:
    result = runner.invoke(app, ["estimate", "qwen3-next-80b-a3b", "--engine", "sglang",
                                 "--gpu", "H100", "--tp", "4", "--mamba-ssm-dtype", "bfloat16",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["sglang_pool"]["kind"] == "mamba"
    # bfloat16 SSM state: 36 x (3 x 2,048 x 2 + 8 x 128 x 128 x 2) = 9,879,552 B per slot.
    assert out["state_bytes_per_request"] == 9_879_552
    # The newest SGLang: extra_buffer for Qwen3-Next, 3 + 2 slots per running request.
    assert out["max_running_requests"] == out["max_mamba_cache_size"] // 5
    assert out["sglang_pool"]["slots_per_request"] == 5
    assert out["mamba_ssm_state_bytes"] == (out["max_mamba_cache_size"] + 1) * 36 * 262_144
    off = runner.invoke(app, ["estimate", "qwen3-next-80b-a3b", "--engine", "sglang", "--gpu",
                              "H100", "--tp", "4", "--disable-radix-cache",
                              "--max-running-requests", "64", "--format", "json"])
    assert json.loads(off.stdout)["max_mamba_cache_size"] == 64
    table = runner.invoke(app, ["estimate", "jamba-mini", "--engine", "sglang"])
    assert table.exit_code == 2 and "no model class for JambaForCausalLM" in table.output
