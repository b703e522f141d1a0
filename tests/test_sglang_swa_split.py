"""How SGLang splits the KV memory between its full and sliding-window pools, by release, and what
--swa-full-tokens-ratio / --disable-hybrid-swa-memory do (kvplan.engines.sglang.swa_split, read
from the sglang wheels 0.5.8 - 0.5.23; one rule for estimate, plan and simulate)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.units import GiB
from kvplan.capacity.plan import plan_capacity
from kvplan.cli import app
from kvplan.engines.base import Engine, PlanInputs, plan_inputs
from kvplan.engines.caches import stage_caches
from kvplan.engines.sglang.pools import sglang_pool
from kvplan.sources.resolve import load_spec

runner = CliRunner()
GPT_OSS = "gpt-oss-20b"
# openai/gpt-oss-20b's config.json (tests/data/configs/gpt-oss-20b.json): 24 layers alternating
# sliding_attention (window 128) and full_attention, 8 KV heads of head_dim 64, bf16. TP 1:
# F = 12 full layers x 2 (K, V) x 8 x 64 x 2 B = 24,576 B per token; S (sliding) = 24,576 B.
F = S = 24_576


def _inputs(version: str, context: int = 4096, **kw: object) -> PlanInputs:
    return plan_inputs(context=context, engine=Engine.sglang, engine_version=version,
                       kv_budget_bytes=kw.pop("kv_budget_bytes", GiB), **kw)


def _plan(version: str, **kw: object):  # noqa: ANN202
    return plan_capacity(load_spec(GPT_OSS), _inputs(version, **kw))


def test_gpt_oss_20b_ratio_half_by_release_by_hand() -> None:
    """--swa-full-tokens-ratio 0.5, 1 GiB (rest = 1,073,741,824 B), page 1, context 4,096.
    - 0.5.9 (model_runner_kv_cache_mixin.py): T = rest // (F + S) = 1,073,741,824 // 49,152 =
      21,845 (profile_max_num_token :143-149), then set_num_tokens_hybrid_swa (:251-336):
      full = int(21,845 x 49,152 / (F + 0.5 x S = 36,864)) = int(29,126.67) = 29,126, swa =
      int(29,126 x 0.5) = 14,563; max_running_requests over T (init_memory_pool :340-352, before
      the split): int(21,845 / 4,096 x 512) = int(2,730.6) = 2,730.
    - 0.5.23 (pool_configurator.py HybridSWAPoolConfigurator): full = int(rest // 36,864) =
      int(29,127.1) = 29,127 (calculate_pool_sizes :907-916), swa = int(29,127 x 0.5) = 14,563
      (_solve_pool_sizes :859-905); max_running_requests over full: int(29,127 / 4,096 x 512)
      = int(3,640.9) = 3,640."""
    old = _plan("0.5.9", swa_full_tokens_ratio=0.5)
    assert (old.full_max_total_num_tokens, old.swa_max_total_num_tokens) == (29_126, 14_563)
    assert old.max_running_requests == 2_730
    new = _plan("0.5.23", swa_full_tokens_ratio=0.5)
    assert (new.full_max_total_num_tokens, new.swa_max_total_num_tokens) == (29_127, 14_563)
    assert new.max_running_requests == 3_640
    assert new.sglang_pool["swa_full_tokens_ratio"] == 0.5
    # 0.5.10 splits as 0.5.9 but reads the full pool's tokens (_resolve_max_num_reqs(
    # token_capacity), mixin 0.5.10:887): int(29,126 / 4,096 x 512) = 3,640.
    mid = _plan("0.5.10", swa_full_tokens_ratio=0.5)
    assert (mid.full_max_total_num_tokens, mid.max_running_requests) == (29_126, 3_640)


def test_max_total_tokens_caps_before_the_split_until_0_5_11_by_hand() -> None:
    """--max-total-tokens 20,000 at ratio 0.5: 0.5.9 caps the profiled T (init_memory_pool
    :377-392) and then splits it, full = int(20,000 x 49,152 / 36,864) = int(26,666.7) = 26,666
    (more than the cap), swa = 13,333; 0.5.23 caps the full pool (calculate_pool_sizes_from_
    max_tokens): full = 20,000, swa = 10,000."""
    old = _plan("0.5.9", swa_full_tokens_ratio=0.5, max_total_tokens=20_000)
    assert (old.full_max_total_num_tokens, old.swa_max_total_num_tokens) == (26_666, 13_333)
    new = _plan("0.5.23", swa_full_tokens_ratio=0.5, max_total_tokens=20_000)
    assert (new.full_max_total_num_tokens, new.swa_max_total_num_tokens) == (20_000, 10_000)


def test_disable_hybrid_swa_memory_by_hand() -> None:
    """--disable-hybrid-swa-memory: ModelConfig.is_hybrid_swa off (0.5.23 configs/
    model_config.py:1213-1218): one token pool of every layer, rest // (F + S) = 21,845 tokens in
    both releases; no SWA pool."""
    for version in ("0.5.9", "0.5.23"):
        flat = _plan(version, disable_hybrid_swa_memory=True)
        assert flat.sglang_pool["kind"] == "token"
        assert flat.reported_kv_cache_tokens == 21_845
        assert flat.swa_max_total_num_tokens is None


@settings(max_examples=12, deadline=None)
@given(budget=st.integers(min_value=64 << 20, max_value=64 << 30),
       version=st.sampled_from(["0.5.8", "0.5.9", "0.5.10", "0.5.12", "0.5.23"]),
       page=st.sampled_from([1, 16, 64]),
       cap=st.one_of(st.none(), st.integers(min_value=20_000, max_value=2_000_000)))
def test_ratio_one_is_the_disabled_pool(budget: int, version: str, page: int,
                                        cap: int | None) -> None:
    """At --swa-full-tokens-ratio 1.0 the full pool holds what --disable-hybrid-swa-memory's
    one pool holds (0.5.9: int(T x (F + S) / (F + S)) = T; 0.5.23: rest // (F + S)), and the SWA
    pool as many; every release's two pools fit the budget."""
    kw = {"kv_budget_bytes": budget, "block_size": page, "max_total_tokens": cap}
    one = _plan(version, swa_full_tokens_ratio=1.0, **kw)
    flat = _plan(version, disable_hybrid_swa_memory=True, **kw)
    assert one.full_max_total_num_tokens == flat.reported_kv_cache_tokens
    assert one.swa_max_total_num_tokens == one.full_max_total_num_tokens
    for ratio in (0.5, 0.8):
        split = _plan(version, swa_full_tokens_ratio=ratio, **kw)
        full, swa = split.full_max_total_num_tokens, split.swa_max_total_num_tokens
        assert full is not None and swa is not None
        assert swa <= full and full * F + swa * S <= budget


def test_too_small_swa_pool_is_refused_from_0_5_16() -> None:
    """0.5.16+ refuse at start an SWA pool of sliding_window_size + page tokens or fewer
    (pool_configurator.py 0.5.16:427-436, 0.5.23 validate_swa_pool_size :198-216): 8 MiB at
    ratio 0.01 gives full = 8,388,608 // (24,576 + 245.76) = 337, swa = int(3.37) = 3 <= 127 + 1.
    0.5.14 - 0.5.15 have no such check: sized."""
    tiny = {"kv_budget_bytes": 8 << 20, "swa_full_tokens_ratio": 0.01}
    for version in ("0.5.16", "0.5.23"):
        with pytest.raises(InputError, match=r"SWA pool \(3 tokens\) cannot hold even one"):
            _plan(version, **tiny)
    for version in ("0.5.14", "0.5.15"):
        assert _plan(version, **tiny).swa_max_total_num_tokens == 3


def test_request_cap_pool_is_refused_from_0_5_14() -> None:
    """With the radix cache off and --max-running-requests, 0.5.14+ size the SWA pool from the
    running requests' worst case (SWAChunkCapPoolConfigurator, 0.5.14 is_applicable :389-400),
    not by the ratio: refused; 0.5.13 splits by the ratio."""
    spec = load_spec(GPT_OSS)
    for version, refused in (("0.5.13", False), ("0.5.14", True), ("0.5.23", True)):
        inputs = _inputs(version, prefix_caching=False, max_num_seqs=64)
        if refused:
            with pytest.raises(UnmodelledError, match="SWAChunkCapPoolConfigurator"):
                sglang_pool(spec, inputs, stage_caches(spec, inputs))
        else:
            assert plan_capacity(spec, inputs).swa_max_total_num_tokens is not None


@pytest.mark.parametrize("version", ["0.5.9", "0.5.23"])
def test_requests_inverse_meets_the_split(version: str) -> None:
    """estimate --requests: the rest that pools.HybridSwaPool.rest_needed asks for sizes pools
    that hold the requests (0.5.9's profile floor included)."""
    spec = load_spec(GPT_OSS)
    inputs = _inputs(version, swa_full_tokens_ratio=0.5)
    pool = sglang_pool(spec, inputs, stage_caches(spec, inputs))
    for requests in (1, 7, 100):
        rest = int(pool.rest_needed(requests, 4096))
        sizes = pool.size(rest)
        assert sizes.max_total_num_tokens >= requests * 4096
        assert sizes.swa_max_total_num_tokens is not None
        assert sizes.swa_max_total_num_tokens >= requests * min(4096, 128 + 1)


def test_estimate_cli_takes_the_options() -> None:
    """The same numbers through `kvplan estimate` (its JSON's kv pools)."""
    base = ["estimate", GPT_OSS, "--engine", "sglang", "--engine-version", "0.5.9",
            "--kv-budget-gib", "1", "--context", "4096", "--format", "json"]
    half = runner.invoke(app, [*base, "--swa-full-tokens-ratio", "0.5"])
    assert half.exit_code == 0, half.output
    text = json.dumps(json.loads(half.stdout))
    assert '"swa_max_total_num_tokens": 14563' in text
    assert '"full_max_total_num_tokens": 29126' in text
    off = runner.invoke(app, [*base, "--disable-hybrid-swa-memory"])
    assert off.exit_code == 0, off.output
    assert '"swa_max_total_num_tokens": 14563' not in json.dumps(json.loads(off.stdout))


def test_refusals_are_one_line_exit_2() -> None:
    base = ["estimate", GPT_OSS, "--engine", "sglang", "--engine-version", "0.5.23"]
    for extra, words in ((["--kv-budget-gib", "0.008", "--swa-full-tokens-ratio", "0.01"],
                          "cannot hold even one request"),
                         (["--kv-budget-gib", "1", "--disable-radix-cache",
                           "--max-running-requests", "64"], "SWAChunkCapPoolConfigurator")):
        out = runner.invoke(app, [*base, *extra])
        assert out.exit_code == 2 and out.stdout == "", out.output
        assert words in out.stderr and out.stderr.count("\n") == 1
