"""How SGLang splits the memory left for the KV cache (``rest``) between its full-attention pool
and its sliding-window (SWA) pool, by release (kvplan.engines.sglang.pools.HybridSwaPool; one
rule for `estimate`, `plan` and `simulate`). ``F`` is the full layers' bytes per token, ``S``
the sliding layers', ``r`` ``--swa-full-tokens-ratio`` (server_args.py, default 0.8, "should
be in range (0, 1.0]", 0.5.9:2703), ``page`` the page size; every floor to the page is
``x // page * page``.

0.5.0 - 0.5.10, split after the profile (``model_runner_kv_cache_mixin.py``):
    ``T = rest // (F + S)`` (``profile_max_num_token``, 0.5.9:143-149: the hybrid cell is both
    kinds of layer, :82-95), capped by ``--max-total-tokens`` and floored to the page
    (``init_memory_pool`` 0.5.9:377-392; 0.5.10 ``_resolve_token_capacity`` :807-838), then
    ``full = int(T x (F + S) / (F + r x S))`` and ``swa = int(full x r)``, each floored to the
    page (``set_num_tokens_hybrid_swa`` 0.5.9:251-336; 0.5.10 ``_resolve_hybrid_swa_tokens``
    :287-371). 0.5.3 - 0.5.8 write it per layer, ``full = int(T x layers / (r x n_swa +
    n_full))`` (0.5.8:206-250; 0.5.6 model_runner.py ``set_num_token_hybrid`` :1526-1610), the
    same number where full and sliding layers are as wide (gpt-oss, Llama-4); before 0.5.3 not
    read, taken as 0.5.3. The default ``max_running_requests`` rule takes ``T`` before the cap
    in 0.5.9 and earlier (``init_memory_pool`` 0.5.9:340-352 runs before the split, :407-408;
    0.5.8 :257-266 and :325; 0.5.6 model_runner.py :1677 and :1746)
    and ``full`` in 0.5.10 (``_resolve_max_num_reqs(token_capacity)``, :887).
0.5.11 - 0.5.23, split in the budget (``pool_configurator.py: HybridSWAPoolConfigurator``):
    ``full = int(rest // (F + r x S))`` (``calculate_pool_sizes`` 0.5.12:287-291, 0.5.23:
    907-916, its ``_recompute_cell_size`` :786-803), capped by ``--max-total-tokens`` and
    then split as given (``calculate_pool_sizes_from_max_tokens``; 0.5.12 mixin
    ``_apply_token_constraints`` :788-815), floored to the page; ``swa = int(full x r)``
    floored (``_solve_pool_sizes`` 0.5.23:859-905). ``max_running_requests`` from ``full``
    (``_resolve_max_num_reqs``).
    From 0.5.16 a SWA pool of ``sliding_window_size + page`` tokens or fewer is refused at start
    ("SWA pool (N tokens) cannot hold even one request", 0.5.16 pool_configurator.py:427-436;
    0.5.23 ``validate_swa_pool_size`` :198-216; 0.5.14 - 0.5.15 have no such check).
    From 0.5.14, with ``--disable-radix-cache`` and ``--max-running-requests`` (and a chunked
    prefill size), ``SWAChunkCapPoolConfigurator`` (0.5.14:339-, ``is_applicable`` :389-400;
    0.5.23 ``SWARequestCapPoolConfigurator`` :971-1041) sizes the SWA pool from the running
    requests' worst case instead of ``r``: not modelled, refused.

``--disable-hybrid-swa-memory`` (server_args.py 0.5.9:340, 0.5.23 arg_groups/fields/
schedule.py:182): ``ModelConfig.is_hybrid_swa`` is off (0.5.23 configs/model_config.py:
1213-1218), so there is no SWA pool: every layer is in the one token pool at full length,
``rest // (F + S)`` tokens -- the same full-pool tokens as ``r = 1`` gives (below).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import InputError, UnmodelledError

SWA_FULL_TOKENS_RATIO = 0.8  # server_args.py swa_full_tokens_ratio
SPLIT_IN_BUDGET_SINCE = (0, 5, 11)  # pool_configurator.py's HybridSWAPoolConfigurator
SWA_FLOOR_CHECK_SINCE = (0, 5, 16)  # "SWA pool (N tokens) cannot hold even one request"
SWA_CAP_POOL_SINCE = (0, 5, 14)  # SWAChunkCapPoolConfigurator (radix off, running cap given)
# model_config.py is_hybrid_swa_model: (model_type, the first release kvplan applies it to).
# gpt-oss: 0.5.0-0.5.3's server_args.py disables the hybrid pool for GptOssForCausalLM; by
# January 2026 it is on (sglang PR #17517 turns it off only with speculative decoding).
SGLANG_HYBRID_SWA = {"llama4": (0,), "gpt_oss": (0, 5, 8)}
# Architectures with sliding layers that SGLang 0.5.23's model_config.py is_hybrid_swa_model
# (its hybrid_swa_archs and SWA_SINK_ARCHS) gives the separate sliding-window pool, whose sizing
# kvplan has not read for them (the release each joined the list is not read either): refused
# rather than sized as full attention (sliding layers at full length, the non-hybrid pool).
SGLANG_UNREAD_HYBRID_SWA = frozenset({"GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM",
    "IQuestQ1ForCausalLM", "BeamForCausalLM", "LagunaForCausalLM", "MellumForCausalLM"})
# The window SGLang's pools and tree cache count with (model_runner.py 0.5.9:1021-1033,
# `sliding_window_size`): the model's get_attention_sliding_window_size where it has one,
# gpt-oss's being config.sliding_window - 1 ("SGLang assumes exclusive", models/gpt_oss.py
# 0.5.9:99-102); else the config's window, else Llama-4's attention_chunk_size.
SGLANG_WINDOW_EXCLUSIVE = frozenset({"gpt_oss"})


def sglang_window(window: int, model_type: str) -> int:
    """SGLang's ``sliding_window_size`` for a config window (or chunk) of `window` tokens."""
    return window - (model_type in SGLANG_WINDOW_EXCLUSIVE)


@dataclass(frozen=True)
class SwaSplit:
    """One rank's two pools: `full` and `swa` tokens, and the `profiled` tokens before the
    --max-total-tokens cap (``rest // (F + S)`` before 0.5.11), which the default
    max_running_requests rule reads before 0.5.10 (kvplan.engines.sglang.pools,
    RUNNING_FROM_POOL_SINCE)."""

    full: int
    swa: int
    profiled: int


def swa_split(rest: int, *, cell: int, swa_cell: int, ratio: float, page: int,
              max_total_tokens: int | None, version: tuple[int, ...]) -> SwaSplit:
    """SGLang `version`'s full and SWA pool tokens from `rest` bytes (module docstring)."""
    rest = max(0, rest)
    if version >= SPLIT_IN_BUDGET_SINCE:
        profiled = int(rest // (cell + ratio * swa_cell))
        full = profiled if max_total_tokens is None else min(profiled, max_total_tokens)
        full = full // page * page
        return SwaSplit(full=full, swa=int(full * ratio) // page * page, profiled=profiled)
    profiled = rest // (cell + swa_cell)
    tokens = profiled if max_total_tokens is None else min(profiled, max_total_tokens)
    tokens = tokens // page * page
    full = int(tokens * (cell + swa_cell) / (cell + ratio * swa_cell)) // page * page
    swa = int(full * ratio) // page * page
    return SwaSplit(full=full, swa=swa, profiled=profiled)


def swa_rest_needed(full: float, *, cell: int, swa_cell: int, ratio: float,
                    version: tuple[int, ...]) -> float:
    """The least rest whose split gives at least `full` full-pool tokens (before the page
    floor): the inverse of `swa_split` for `kvplan estimate --requests`."""
    if version >= SPLIT_IN_BUDGET_SINCE or full <= 0:
        return full * (cell + ratio * swa_cell)
    # Before 0.5.11 the profile floors to whole (F + S) tokens first.
    tokens = int(-(-full * (cell + ratio * swa_cell) // (cell + swa_cell)))
    while int(tokens * (cell + swa_cell) / (cell + ratio * swa_cell)) < full:
        tokens += 1
    return float(tokens * (cell + swa_cell))


def check_swa_split(split: SwaSplit, *, window: int, page: int, version: tuple[int, ...]
                    ) -> None:
    """Refuse, in SGLang's words, a SWA pool that version will not start with (no full pool at
    all is left to the callers' "does not fit")."""
    if version >= SWA_FLOOR_CHECK_SINCE and split.full > 0 and window + page >= split.swa:
        raise InputError(
            f"--engine sglang: SWA pool ({split.swa} tokens) cannot hold even one "
            f"request: the prefill admission floor is sliding_window_size ({window}) + "
            f"page_size ({page}) (pool_configurator.py); raise --swa-full-tokens-ratio or the "
            "KV budget")


def check_swa_cap_pool(*, radix_cache: bool, max_running_requests: int | None,
                       version: tuple[int, ...], model: str) -> None:
    """Refuse the request-cap sizing of the SWA pool (0.5.14+), which kvplan does not model."""
    if version >= SWA_CAP_POOL_SINCE and not radix_cache and max_running_requests is not None:
        raise UnmodelledError(
            f"--engine sglang: {model}: with --disable-radix-cache and --max-running-requests "
            "SGLang 0.5.14+ sizes the sliding-window pool from the running requests' worst "
            "case (pool_configurator.py SWAChunkCapPoolConfigurator), which kvplan does not "
            "model; drop --max-running-requests or keep the radix cache")
