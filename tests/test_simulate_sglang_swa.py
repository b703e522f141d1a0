"""`kvplan simulate --engine sglang` over SGLang's sliding-window pool (issue 30): the full pool
beside the SWA pool (kvplan.analysis.simulate.sglang_swa, after SGLang 0.5.9
managers/schedule_batch.py, managers/schedule_policy.py, mem_cache/swa_radix_cache.py and
mem_cache/swa_memory_pool.py; 0.5.6 where named), and the hybrid pools' JSON keys."""

from __future__ import annotations

import json
from dataclasses import asdict, replace

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.sglang_pools import swa_releases_text, swa_rule
from kvplan.analysis.simulate.sglang_swa import (
    EveryIntervalDecodes,
    EveryWindowDecodes,
    SwaRule,
    SwaSettings,
    SwaWindow,
    TokenGatedDecodes,
)
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model

runner = CliRunner()


def _gpt_oss(version: str = "0.5.9", **options: object):  # type: ignore[no-untyped-def]
    spec = load_model("gpt-oss-20b")[0]
    inputs = estimate_inputs(spec, context=4096, gpu="H200", tp=1, kv_budget_gib=1,
                             engine=Engine("sglang"), engine_version=version, **options)
    return spec, inputs


def test_gpt_oss_20b_full_and_swa_tokens_by_hand() -> None:
    """openai/gpt-oss-20b's config.json (tests/data/configs/gpt-oss-20b.json): 24 layers
    alternating sliding_attention (window 128) and full_attention, 8 KV heads of head_dim 64.
    SGLang 0.5.9 on one H200, TP 1, 1 GiB for the KV cache (rest = 1,073,741,824 B):
    - F (full layers' cell) = 12 x 2 (K, V) x 8 x 64 x 2 B = 24,576 B; S (sliding) = 24,576 B.
    - model_runner_kv_cache_mixin.py (0.5.9): profile_max_num_token T = rest // (F + S) =
      1,073,741,824 // 49,152 = 21,845 (:143-149); set_num_tokens_hybrid_swa (:251-336):
      full = int(21,845 x 49,152 / (F + 0.8 x S = 44,236.8)) = int(24,272.2) = 24,272 tokens
      (page 1); swa = int(24,272 x 0.8) = int(19,417.6) = 19,417 tokens
      (--swa-full-tokens-ratio 0.8, server_args.py).
    - max_running_requests: init_memory_pool's default (:340-352) runs before the split, over
      T: clamp(int(21,845 / 4,096 x 512) = 2,730, 2,048, 4,096) = 2,730, under 24,272 // 2
      (tp_worker.py). (0.5.10+ read the full pool's tokens: 3,034.)
    - The window the tree cache and maybe_evict_swa count with: model_runner.py
      sliding_window_size = the model's get_attention_sliding_window_size, gpt-oss's being
      config.sliding_window - 1 = 127 (models/gpt_oss.py 0.5.9:99-102)."""
    spec, inputs = _gpt_oss()
    sim, notes = setup(spec, inputs)
    assert sim.plan.token_capacity == 24_272
    assert sim.plan.swa_max_total_num_tokens == 19_417
    assert sim.swa is not None
    assert sim.swa.tokens == 19_417 and sim.swa.window == 127
    assert sim.swa.radix and sim.swa.decode_evicts
    assert sim.sglang is not None and sim.sglang.max_running_requests == 2_730
    assert ("24,272 full-attention tokens, 19,417 sliding-window tokens, window 128"
            in notes[0])
    assert sim.caching and sim.swa.hits  # 0.5.9: the SWA radix cache's hits are simulated


def test_a_request_holds_the_locked_nodes_and_the_window_by_hand() -> None:
    """SwaWindow against swa_radix_cache.py / schedule_batch.py 0.5.9, window 128, page 1,
    radix cache on, chunked prefill 8,192: a 20,000-token prompt enters the tree as nodes
    [0, 8,192), [8,192, 16,384), [16,384, 20,000) (cache_unfinished_req per chunk,
    scheduler.py:1873, and after the last, scheduler_output_processor_mixin.py:183);
    inc_lock_ref (:692-731) locks the last node (3,616 >= 128): the first two are evictable,
    the request holds 3,616 of the prompt. Decodes: decode_batch_idx 1 frees [max(20,000,
    cache_protected_len 20,000), 20,001 - 128) = nothing; after 129 decodes, idx 129 frees
    [20,000, 20,129 - 128 = 20,001): 1 token. 0.5.6 frees no decoded token (no
    maybe_evict_swa with the radix cache)."""
    for rule, held_after in ((EveryWindowDecodes(), 3_616 + 130 - 1), (SwaRule(), 3_616 + 130)):
        w = SwaWindow(SwaSettings(tokens=100_000, window=128, page=1, radix=True, chunk=8_192,
                                  overlap=True, rule=rule))
        for done in (0, 8_192, 16_384):
            w.before_chunk(1, done)
            w.take(1, min(8_192, 20_000 - done))
        # Before the third chunk the tree holds [0, 8,192), [8,192, 16,384); the lock takes
        # the second (8,192 >= 128), the first is evictable; the third is the request's.
        assert w.used == 20_000 - 8_192
        for i in range(130):
            w.before_decode(1, 20_000 + i)
            w.take(1, 1)
            if i == 0:
                assert w.used == 3_616 + 1  # the prompt's last insertion, then its token
        assert w.used == held_after
        w.release(1)
        assert w.used == 0


def test_chunk_cache_keeps_the_window_by_hand() -> None:
    """--disable-radix-cache (SWAChunkCache, 0.5.9 maybe_evict_swa): with the overlap
    scheduler the third chunk (extend_batch_idx 2) frees [0, 16,384 - 8,192 - 128) = 8,064
    tokens; decode_batch_idx 1 frees up to 20,001 - 128 = 19,873."""
    w = SwaWindow(SwaSettings(tokens=100_000, window=128, page=1, radix=False, chunk=8_192,
                              overlap=True, rule=EveryWindowDecodes()))
    for done in (0, 8_192, 16_384):
        w.before_chunk(1, done)
        w.take(1, min(8_192, 20_000 - done))
    assert w.used == 20_000 - 8_064
    w.before_decode(1, 20_000)
    w.take(1, 1)
    w.before_decode(1, 20_001)
    w.take(1, 1)
    assert w.used == 20_002 - 19_873


def _run(sim, specs, **kw):  # type: ignore[no-untyped-def]
    return simulate(sim, specs, timeline=True, **kw)


def test_the_window_pool_limits_concurrency_by_hand() -> None:
    """40 requests at once of 1,000 + 64 tokens, chunked prefill off, on the hand-sized pools
    above. With the radix cache on, each prompt is one tree node of 1,000 >= 127 tokens, locked
    whole while its request runs, and no decoded token is freed before decode_batch_idx 128:
    a request holds 1,000 + its outputs in both pools. The first prefill batch takes 16
    (max_prefill_tokens 16,384: the 17th's 1,000 >= 16,384 - 16,000); the second sees
    rem_total = min(24,272, 19,417) - 16,000 - 16 x 63 x 0.7 = 3,417 - 705.6 = 2,711.4 and
    admits 2 (1,064 < 2,711.4, 1,064 < 1,647.4, 1,064 >= 583.4): 18 run at a time, 18 x 1,064 =
    19,152 <= 19,417 (no retraction). Without the SWA pool (the full pool alone), the same
    second batch sees 24,272 - 16,000 - 705.6 = 7,566.4 and admits 7: 23."""
    spec, inputs = _gpt_oss()
    sim, _ = setup(spec, inputs)
    sim = replace(sim, sglang=replace(sim.sglang, chunked_prefill_size=None))
    specs = [RequestSpec(arrival_s=0.0, prompt_len=1_000, output_len=64) for _ in range(40)]
    swa = _run(sim, specs, concurrency=40)
    assert max(rec.running for _, rec in swa.timeline) == 18
    assert swa.metrics.preemptions == 0
    assert swa.metrics.swa_usage is not None
    assert swa.metrics.swa_usage["max"] <= 19_152 / 19_417
    assert swa.metrics.swa_usage["max"] > swa.metrics.kv_usage["max"]
    full = _run(replace(sim, swa=None), specs, concurrency=40)
    assert max(rec.running for _, rec in full.timeline) == 23
    assert full.metrics.swa_usage is None


@settings(max_examples=8, deadline=None)
@given(lens=st.lists(st.tuples(st.integers(1, 1_500), st.integers(1, 200)), min_size=1,
                     max_size=12),
       radix=st.booleans())
def test_a_window_at_least_the_context_runs_as_full_attention(
        lens: list[tuple[int, int]], radix: bool) -> None:
    """A window >= every context frees nothing early (no node set reaches the window; the
    decode rule's seqlen - 1 - window is below 0); with as many SWA tokens as full ones the
    SWA pool is the full pool's twin and the run equals the full-attention run."""
    spec, inputs = _gpt_oss()
    sim, _ = setup(spec, inputs)
    assert sim.swa is not None
    # The radix cache's hits as setup gives them (0.5.9: on with it, none without).
    sim = replace(sim, caching=radix)
    twin = replace(sim, swa=replace(sim.swa, window=10**6, radix=radix, hits=radix,
                                    tokens=sim.plan.token_capacity))
    specs = [RequestSpec(arrival_s=0.01 * i, prompt_len=p, output_len=o)
             for i, (p, o) in enumerate(lens)]
    a = asdict(simulate(twin, specs, bulk_decode=False).metrics)
    b = asdict(simulate(replace(sim, swa=None), specs, bulk_decode=False).metrics)
    for key in ("swa_usage", "swa_tombstoned_tokens"):
        a.pop(key)
        b.pop(key)
    assert a == b


def test_cli_json_keys_and_refusals() -> None:
    args = ["simulate", "gpt-oss-20b", "--engine", "sglang", "--gpu", "H200",
            "--kv-budget-gib", "1", "--max-model-len", "4096", "--concurrency", "4",
            "--num-requests", "8", "--input-len", "512", "--output-len", "16",
            "--format", "json"]
    ok = runner.invoke(app, [*args, "--engine-version", "0.5.9"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    assert data["swa_tokens"] == 19_417 and data["swa_window"] == 127
    assert 0 < data["swa_usage"]["mean"] <= data["swa_usage"]["max"] <= 1
    assert "mamba_slots" not in data
    # 0.5.14 - 0.5.19 (a forward-iteration cadence, then token gating over trees not read in
    # full) are refused in one line, not guessed; so is 0.5.23 without the radix cache.
    for refused in (["--engine-version", "0.5.14"], ["--engine-version", "0.5.19"],
                    ["--no-enable-prefix-caching"]):
        old = runner.invoke(app, [*args, *refused])
        assert old.exit_code == 2 and old.stdout == "", refused
        assert "eviction of out-of-window tokens" in old.stderr
        assert old.stderr.count("\n") == 1
    # The releases read, in words written from SWA_RULES (the refusal and simulate-bench.md).
    assert swa_releases_text() == ("0.5.6 - 0.5.7 and 0.5.20+ with the radix cache, "
                                   "0.5.8 - 0.5.13")
    assert f"(kvplan reads {swa_releases_text()})" in old.stderr
    # The newest release runs by 0.5.23's token-gated rule; 0.5.8 by 0.5.9's.
    for ran in ([], ["--engine-version", "0.5.8"]):
        new = runner.invoke(app, [*args, *ran])
        assert new.exit_code == 0, new.output
        assert json.loads(new.stdout)["swa_window"] == 127
    # The SWA radix cache's hits: simulated for 0.5.8 - 0.5.11 (swa_radix_cache.py read at
    # 0.5.9), refused in one line for the rest.
    hits = runner.invoke(app, [*args, "--engine-version", "0.5.9", "--enable-prefix-caching"])
    assert hits.exit_code == 0, hits.output
    assert "prefix_hit_rate" in json.loads(hits.stdout)
    for version in ("0.5.12", "0.5.23"):
        hits = runner.invoke(app, [*args, "--engine-version", version, "--enable-prefix-caching"])
        assert hits.exit_code == 2 and hits.stderr.count("\n") == 1, version
        assert "SWA radix cache hits are not simulated" in hits.stderr


def test_chunked_prompt_keeps_only_its_locked_nodes_in_a_run() -> None:
    """One request of 3,000 + 8 tokens, --chunked-prefill-size 1,024, on the hand-sized pools
    above (window 127): chunk 1 holds 1,024; before chunk 2 the tree takes [0, 1,024), locked
    (1,024 >= 127), so 2,048 held after it; before chunk 3 it takes [1,024, 2,048), whose lock
    frees [0, 1,024): 3,000 - 1,024 = 1,976; after the prefill it takes [2,048, 3,000) (952 >=
    127): 952 held, then one a decode (none freed before decode_batch_idx 128). The most the
    SWA pool holds is 2,048 of 19,417."""
    spec, inputs = _gpt_oss()
    sim, _ = setup(spec, inputs)
    sim = replace(sim, sglang=replace(sim.sglang, chunked_prefill_size=1_024))
    assert sim.swa is not None
    sim = replace(sim, swa=replace(sim.swa, chunk=1_024))
    run = simulate(sim, [RequestSpec(arrival_s=0.0, prompt_len=3_000, output_len=8)])
    assert run.metrics.swa_usage is not None
    assert run.metrics.swa_usage["max"] == 2_048 / 19_417


def test_every_modelled_release_maps_to_a_rule_it_was_read_by() -> None:
    """SGLang wheels 0.5.6 - 0.5.23 read (managers/schedule_batch.py maybe_evict_swa and
    _evict_swa, mem_cache/swa_radix_cache.py inc_lock_ref and cache_unfinished_req, environ.py):
    0.5.7's are 0.5.6's (no maybe_evict_swa); 0.5.8 and 0.5.10 evict as 0.5.9; 0.5.11 - 0.5.13
    every floor_page(max(page, window)) decodes to one page further back; 0.5.14 - 0.5.19 are
    refused (None); 0.5.20 - 0.5.23 and later (and the newest) gate on tokens."""
    assert type(swa_rule("0.5.6")) is SwaRule and type(swa_rule("0.5.7")) is SwaRule
    for v in ("0.5.8", "0.5.8.post1", "0.5.9", "0.5.10"):
        assert type(swa_rule(v)) is EveryWindowDecodes
    for v in ("0.5.11", "0.5.13"):
        assert type(swa_rule(v)) is EveryIntervalDecodes
    for v in ("0.5.5", "0.5.14", "0.5.16", "0.5.17", "0.5.19"):
        assert swa_rule(v) is None
    for v in ("0.5.20", "0.5.21", "0.5.22", "0.5.23", "0.5.24", None):
        assert type(swa_rule(v)) is TokenGatedDecodes
    # 0.5.11's interval and frontier at page 16, window 127: max(16, 127) // 16 x 16 = 112
    # decodes; pre_len - 127 - 16 (schedule_batch.py 0.5.11:2613-2680).
    assert EveryIntervalDecodes().keep(127, 16) == 143
    # 0.5.23's at page 16: ceil_align(max(127, 16), 16) = 128 (common.py:116-118).
    assert TokenGatedDecodes().keep(127, 16) == 128
    assert TokenGatedDecodes().leaf_cap(127, 16) == 128
    # 0.5.20 - 0.5.22's not rounded: max(127, 16) = 127 (common.py 0.5.22:100, 0.5.20:86).
    for v in ("0.5.20", "0.5.21", "0.5.22"):
        assert swa_rule(v) == TokenGatedDecodes(page_rounded=False)
    assert TokenGatedDecodes(page_rounded=False).keep(127, 16) == 127


def test_newest_release_holds_one_window_and_frees_every_128_by_hand() -> None:
    """SwaWindow under 0.5.23's rule (TokenGatedDecodes) for openai/gpt-oss-20b's window
    (config sliding_window 128, SGLang's 127, models/gpt_oss.py), page 1, radix cache on: a
    3,000-token prompt in one chunk enters the tree as one fresh leaf [0, 3,000), longer than
    ceil_page(127) = 127, so it is split at 2,873 (swa.py _maybe_split_leaf_for_swa_lock) and
    the lock takes [2,873, 3,000) (127 >= 127): the request holds 127 of the prompt (0.5.9: the
    whole leaf, 3,000). Decodes (decode i at seqlen - 1 = 3,000 + i, decode_batch_idx i):
    - i = 1: 3,001 - 127 = 2,874 >= 0 + 128: fires; evicted seqlen := cache_protected_len
      3,000 (swa_dead_lo), 3,001 - 127 = 2,874 below it: nothing freed;
    - next when 3,000 + i - 127 >= 3,000 + 128, i = 255: frees [3,000, 3,128), 128 tokens;
      before it the request held 127 + 255 = 382 (its peak);
    - i = 383 (3,383 - 127 = 3,256 >= 3,128 + 128): frees [3,128, 3,256)."""
    w = SwaWindow(SwaSettings(tokens=100_000, window=127, page=1, radix=True, chunk=None,
                              overlap=True, rule=TokenGatedDecodes()))
    w.before_chunk(1, 0)
    w.take(1, 3_000)
    assert w.used == 3_000
    peak = 0
    for i in range(300):
        w.before_decode(1, 3_000 + i)
        if i == 0:
            assert w.used == 127  # the prompt's insertion: one window locked
        if i == 255:
            assert w.used == 382 - 128
        peak = max(peak, w.used)
        w.take(1, 1)
        peak = max(peak, w.used)
    assert peak == 382
    assert w.used == 127 + 300 - 128
    w.release(1)
    assert w.used == 0


def test_newest_release_chunked_prompt_keeps_one_window_in_a_run() -> None:
    """The run above (3,000 + 8 tokens, --chunked-prefill-size 1,024) at 0.5.23 on the same
    hand-sized pools (24,272 full / 19,417 SWA tokens, window 127, page 1: 0.5.23 sizes them as
    0.5.9, the estimate's pools.py 0.5.14 - 0.5.23 DefaultPoolConfigurator): each insertion's
    fresh leaf (1,024, 1,024, 952 tokens) is split to a 127-token tail, so after chunk 1 the
    lock keeps [897, 1,024) and chunk 2 adds 1,024: the peak is 127 + 1,024 = 1,151 (0.5.9:
    2,048)."""
    spec, inputs = _gpt_oss("0.5.23")
    sim, _ = setup(spec, inputs)
    assert sim.plan.token_capacity == 24_272
    assert sim.plan.swa_max_total_num_tokens == 19_417
    sim = replace(sim, sglang=replace(sim.sglang, chunked_prefill_size=1_024))
    assert sim.swa is not None
    assert type(sim.swa.rule) is TokenGatedDecodes
    sim = replace(sim, swa=replace(sim.swa, chunk=1_024))
    run = simulate(sim, [RequestSpec(arrival_s=0.0, prompt_len=3_000, output_len=8)])
    assert run.metrics.swa_usage is not None
    assert run.metrics.swa_usage["max"] == 1_151 / 19_417


SIM = ["simulate", "gpt-oss-20b", "--engine", "sglang", "--gpu", "H200", "--kv-budget-gib", "1",
       "--max-model-len", "4096", "--format", "json"]


def test_cli_swa_full_tokens_ratio_and_disable_by_hand() -> None:
    """SGLang's own flags on simulate, sized by estimate's rule (kvplan.engines.sglang.swa_split)
    for openai/gpt-oss-20b at 1 GiB, 0.5.9 (F = S = 24,576 B, T = 1 GiB // 49,152 = 21,845):
    - --swa-full-tokens-ratio 0.5: full = int(21,845 x 49,152 / 36,864) = 29,126, swa =
      int(29,126 x 0.5) = 14,563; max_running_requests over T: int(21,845 / 4,096 x 512) = 2,730;
    - --disable-hybrid-swa-memory: one pool of every layer, 21,845 tokens, no SWA keys;
    - --swa-full-tokens-ratio outside (0, 1] is refused (server_args.py 0.5.9:2703)."""
    args = [*SIM, "--engine-version", "0.5.9", "--num-requests", "4", "--concurrency", "2",
            "--input-len", "256", "--output-len", "8"]
    half = runner.invoke(app, [*args, "--swa-full-tokens-ratio", "0.5"])
    assert half.exit_code == 0, half.output
    data = json.loads(half.stdout)
    assert data["swa_tokens"] == 14_563 and data["swa_window"] == 127
    assert (data["num_blocks"], data["max_num_seqs"]) == (29_126, 2_730)
    flat = runner.invoke(app, [*args, "--disable-hybrid-swa-memory"])
    assert flat.exit_code == 0, flat.output
    data = json.loads(flat.stdout)
    assert "swa_tokens" not in data and "swa_usage" not in data
    # 0.5.9's default over 21,845 tokens: 2,730, under 21,845 // 2.
    assert (data["num_blocks"], data["max_num_seqs"]) == (21_845, 2_730)
    for bad in ("0", "1.5"):
        out = runner.invoke(app, [*args, "--swa-full-tokens-ratio", bad])
        assert out.exit_code == 2 and out.stdout == ""


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(min_value=0, max_value=1_000),
       version=st.sampled_from(["0.5.9", "0.5.23"]),
       radix=st.sampled_from([[], ["--no-enable-prefix-caching"]]))
def test_ratio_one_runs_as_the_disabled_pool(seed: int, version: str, radix: list[str]) -> None:
    """At ratio 1.0 the SWA pool has the full pool's tokens (= the disabled pool's) and a
    request never holds more there than in the full pool, so it never binds: a run without
    shared prefixes serves as with --disable-hybrid-swa-memory, metric for metric."""
    if version == "0.5.23" and radix:
        return  # 0.5.23's chunk cache is not read (refused above)
    args = [*SIM, "--engine-version", version, "--num-requests", "40", "--input-len", "1500",
            "--output-len", "200", "--rate", "40", "--seed", str(seed), *radix]
    one = runner.invoke(app, [*args, "--swa-full-tokens-ratio", "1.0"])
    flat = runner.invoke(app, [*args, "--disable-hybrid-swa-memory"])
    assert one.exit_code == 0 and flat.exit_code == 0, one.output + flat.output
    a, b = json.loads(one.stdout), json.loads(flat.stdout)
    assert a["swa_tokens"] == 21_845
    for key in ("ttft_ms", "tpot_ms", "e2e_ms", "preemptions", "output_throughput",
                "kv_usage"):
        assert a.get(key) == b.get(key), key
