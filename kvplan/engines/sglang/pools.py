"""SGLang's KV pools, one type per model family, as SGLang sizes them from the memory left after
the weights (``rest``, kvplan.engines.sglang.budget.SglangBudget): how ``rest`` splits between the
pools, what SGLang prints, and how many requests each pool admits.

Read from sgl-project/sglang, ``python/sglang/srt/``, at the versions named:

``TokenPool`` -- every attention layer in one token pool (MHA, MLA, DeepSeek's sparse attention)
    ``model_executor/model_runner.py: profile_max_num_token`` (0.4-0.5.4),
    ``model_runner_kv_cache_mixin.py: get_cell_size_per_token`` (0.5.5-0.5.9),
    ``model_executor/pool_configurator.py: DefaultPoolConfigurator`` (2026 main):
    ``max_total_num_tokens = rest // cell_size`` floored to the page size; the cell is every
    layer's K and V (MLA: kv_lora_rank + qk_rope_head_dim). The sparse-attention models
    (DeepSeek-V3.2, GLM-5: ``is_deepseek_nsa`` / ``is_deepseek_dsa``) add the indexer keys,
    ``index_head_dim + index_head_dim // 128 * 4`` uint8 per layer, and with an fp8 KV cache
    store the latent as ``calculate_mla_kv_cache_dim``'s 656-byte fp8_ds_mla row
    (``kv_lora_rank + kv_lora_rank // 128 * 4 + qk_rope_head_dim * 2``; kvplan.kv.cache).
``HybridSwaPool`` -- a full pool and a sliding-window pool (gpt-oss, Llama-4's chunked layers),
    split by ``--swa-full-tokens-ratio`` (0.8) as each release does it (0.5.0-0.5.10 after the
    profile, 0.5.11+ in the budget): kvplan.engines.sglang.swa_split. Only the architectures in
    ``model_config.py: is_hybrid_swa_model`` get it: Llama-4 and gpt-oss, not gemma-2/3
    (``server_args.py`` sets ``disable_hybrid_swa_memory`` for them), whose sliding layers
    SGLang sizes as full attention, as ``--disable-hybrid-swa-memory`` does for any model.
``MambaPool`` -- a recurrent-state pool and the full-attention token pool (Qwen3-Next, Qwen3.5,
    Nemotron-H, Falcon-H1, granite-4.0-h (sglang PR #18040), Kimi-Linear, LFM2)
    ``model_runner.py`` / ``model_runner_kv_cache_mixin.py: handle_max_mamba_cache`` (0.5.2-0.5.9)
    and ``kv_cache_configurator.py: _handle_max_mamba_cache`` (2026 main):
    ``max_mamba_cache_size = int(rest x ratio / (1 + ratio) // mamba_cache_per_req)`` with
    ``ratio = --mamba-full-memory-ratio`` (0.2; 0.9 from sglang PR #11679, 0.5.4), or
    ``--max-mamba-cache-size`` as given, or with the radix cache off and
    ``--max-running-requests`` given, that number (without it, 512 until sglang PR #18786,
    0.5.9); the token pool gets ``rest - max_mamba_cache_size x mamba_cache_per_req`` over the
    full-attention layers' cell. ``mamba_cache_per_req`` (``configs/mamba_utils.py``) is every
    recurrent layer's conv state (bfloat16) plus SSM state (``--mamba-ssm-dtype``, else the
    config's ``mamba_ssm_dtype``, else float32) -- the shapes vLLM's MambaStateShapeCalculator
    gives (kvplan.kv.cache.recurrent_state). ``mem_cache/memory_pool.py: MambaPool`` allocates
    ``max_mamba_cache_size + 1`` slots (slot 0 is the padding target), which is what "Mamba
    Cache is allocated. max_mamba_cache_size: N, conv_state size: X GB, ssm_state size: Y GB"
    sums (GB there are GiB).

Speculative decoding: the draft worker beside the target's pool, release by release, is
kvplan.engines.sglang.draft (``SglangDraft``); `sglang_draft` below builds it from the stage's
caches.

Every version caps the running requests (``init_memory_pool`` / ``_resolve_max_num_reqs``):
``--max-running-requests`` if given, else ``min(max(int(tokens / context_len x 512), 2048),
4096)``; with a mamba pool also ``max_mamba_cache_size // slots``, where a running request
takes 3 slots with the radix cache on (``MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO``,
``mamba_scheduler_strategy`` no_buffer, the default to 0.5.13), 5 from 0.5.14 for the
architectures whose default becomes ``extra_buffer`` (its 2 ping-pong track slots with the
overlap schedule: kvplan.engines.sglang.mamba_strategy) and 1 with ``--disable-radix-cache``.
``tokens`` there is, to 0.5.9, the profiled ``rest // cell`` before the ``--max-total-tokens``
cap and the page floor (``init_memory_pool``: the profile and the rule at 0.5.9 mixin:342-353,
the cap and the floor after them at :378-391; 0.5.6 model_runner.py:1672-1685 and :1720-1733;
0.5.3 model_runner.py:1427-1440 and :1467-1480; 0.4.6 model_runner.py:734-745 and :773-786); from
0.5.10 the pool's tokens after them (``_resolve_memory_pool_config`` runs
``_resolve_token_capacity`` first, 0.5.10 mixin:874-887; ``_resolve_max_num_reqs`` :840-851;
the same in 0.5.23 mem_cache/kv_cache_configurator.py ``resolve_max_num_reqs``:3119-3132),
where the default is also at most ``tokens // 2``. ``--max-running-requests`` is taken as given
to 0.5.9, capped by the clamp above in 0.5.10 - 0.5.13 and by ``tokens // 2`` from 0.5.14
(``GIVEN_RUNNING_HALF_POOL_SINCE``). The scheduler runs at most ``min(tokens // 2, that)`` by
default at every release (kvplan.analysis.simulate.run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.units import cdiv
from kvplan._util.versions import version_key
from kvplan.engines.sglang.draft import (
    SGLANG_NEXTN_AUTO_DRAFT_TYPES,
    SPEC_BUDGETED_SINCE,
    SPEC_HEADROOM_SINCE,
    SPEC_SINCE,
    SglangDraft,
    check_draft_weights_known,
)
from kvplan.engines.sglang.dsa_page import sglang_page_size
from kvplan.engines.sglang.index_cache import dsa_indexer_cells
from kvplan.engines.sglang.mamba_strategy import mamba_slots_per_request
from kvplan.engines.sglang.options import sglang_options
from kvplan.engines.sglang.swa_split import (
    SGLANG_HYBRID_SWA,
    SGLANG_UNREAD_HYBRID_SWA,
    SWA_FULL_TOKENS_RATIO,
    check_swa_cap_pool,
    check_swa_split,
    sglang_window,
    swa_rest_needed,
    swa_split,
)
from kvplan.kv.kinds import ChunkedLocalCache, LayerCaches, RecurrentState, SlidingWindowCache
from kvplan.model.attention import AttentionKind

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec

def spec_default_running(v: tuple[int, ...]) -> int | None:
    """--max-running-requests when unset with EAGLE-family speculative decoding (server_args.py,
    release `v` as version_key gives it): 32 in 0.4.4-0.4.5, 48 from 0.4.6; None before 0.4.4."""
    if v < SPEC_HEADROOM_SINCE:
        return None
    return 32 if v < (0, 4, 6) else 48


# The release from which the default max_running_requests rule reads the pool's tokens after
# the --max-total-tokens cap and the page floor, not the profiled ones (module docstring).
RUNNING_FROM_POOL_SINCE = (0, 5, 10)
# --max-running-requests as given to 0.5.9 (init_memory_pool 0.5.9 mixin:340); from 0.5.10
# capped by the default rule's clamp, min(given, estimated) (_resolve_max_num_reqs 0.5.10
# mixin:844-849, 0.5.13 :880-885); from 0.5.14 by the pool's tokens // 2 instead (0.5.14
# mixin:988-991; 0.5.23 mem_cache/kv_cache_configurator.py:3126-3129).
GIVEN_RUNNING_HALF_POOL_SINCE = (0, 5, 14)
# Recurrent kinds SGLang runs with a mamba pool whose state kvplan shapes (configs/mamba_utils.py:
# Mamba2CacheParams for Mamba-2 and Gated DeltaNet, KimiLinearCacheParams for KDA, the conv-only
# state of LFM2's short convolutions: "ssm_state size: 0.00GB").
SGLANG_STATE_KINDS = ("mamba2", "gated_delta_net", "kda", "short_conv")
# Architectures whose sliding windows kvplan reads from a per-layer list as vLLM's model code
# reads them (kvplan.sources.hf_layer_windows); SGLang's model code for them is not read.
SGLANG_UNREAD_WINDOW_LISTS = frozenset({"ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM",
                                        "Plamo3ForCausalLM"})


def mamba_full_memory_ratio(version: str | None) -> float:
    """server_args.py's default: 0.2, raised to 0.9 by sglang PR #11679 (released in 0.5.4)."""
    return 0.9 if version_key(version) >= (0, 5, 4) else 0.2


def sglang_state_dtypes(spec: ModelSpec, ssm_dtype: str) -> tuple[str, str]:
    """(conv, SSM) state dtypes of SGLang's mamba pool: the conv state in bfloat16
    (configs/mamba_utils.py CONV_DTYPE); the SSM state in --mamba-ssm-dtype, else the config's
    mamba_ssm_dtype, else float32 (mamba2_state_dtype; server_args.py's default)."""
    if ssm_dtype != "auto":
        return "bfloat16", ssm_dtype
    rec = spec.recurrent
    return "bfloat16", (rec.ssm_dtype if rec is not None and rec.ssm_dtype else "float32")


def default_max_running_requests(tokens: Any, context_len: Any) -> Any:
    """init_memory_pool's default cap: int(tokens / context_len x 512) within [2048, 4096],
    over ints or numpy arrays alike (sweep grids it with the same rule)."""
    ratio = tokens / context_len * 512
    if isinstance(ratio, float):
        return min(max(int(ratio), 2048), 4096)
    import numpy as np

    return np.clip(np.asarray(ratio).astype(np.int64), 2048, 4096)


@dataclass(frozen=True, kw_only=True)
class SglangPoolSizes:
    """What SGLang computes and prints for one rank."""

    max_total_num_tokens: int  # "max_total_num_tokens=" (the full-attention pool)
    max_running_requests: int
    full_max_total_num_tokens: int | None = None
    swa_max_total_num_tokens: int | None = None
    max_mamba_cache_size: int | None = None
    mamba_conv_state_bytes: int | None = None  # the pool, size + 1 slots
    mamba_ssm_state_bytes: int | None = None
    draft_max_total_num_tokens: int | None = None  # the draft worker's pool (its KV line)
    draft_kv_bytes: int | None = None  # that pool: tokens x the draft's cell


@dataclass(frozen=True, kw_only=True)
class SglangPool:
    """The base: one token pool of `cell` bytes per token (every attention layer's K and V, or
    MLA latent plus indexer keys), in pages of `page_size` tokens."""

    page_size: int
    cell: int  # bytes per token of the pool max_total_num_tokens counts
    max_total_tokens: int | None  # --max-total-tokens
    user_max_running_requests: int | None  # --max-running-requests
    context_len: int
    version: tuple[int, ...]  # the release, as version_key gives it
    kind: str = "token"
    draft: SglangDraft | None = None  # speculative decoding's draft worker

    @property
    def bytes_per_token(self) -> int:
        """One token in every layer that caches it (the draft's pool too)."""
        return self.cell + (self.draft.cell if self.draft is not None else 0)

    @property
    def sizing_cell(self) -> int:
        """The bytes per token `rest` is divided by (0.5.14+: with the draft's layers)."""
        return self.draft.budget_cell(self.cell) if self.draft is not None else self.cell

    def _raw_tokens(self, rest: int) -> int:
        if not self.cell:
            return 0
        if self.draft is not None and self.draft.target_takes_headroom:
            # A pool can exist with the weights above the fraction: the docs CI logs of
            # 2025-05..09 show it (tests/test_sglang_spec.py).
            return rest // self.sizing_cell
        return max(0, rest) // self.sizing_cell

    def _floor(self, tokens: int) -> int:
        if self.max_total_tokens is not None:
            tokens = min(tokens, self.max_total_tokens)
        return tokens // self.page_size * self.page_size

    def _max_num_reqs(self, raw_tokens: int) -> int:
        """init_memory_pool's max_num_reqs: --max-running-requests (with speculative decoding
        server_args.py's 48 when unset), else the default rule over the profiled tokens."""
        if self.user_max_running_requests is not None:
            return self.user_max_running_requests
        if self.draft is not None:
            fixed = spec_default_running(self.draft.version)
            if fixed is not None:
                return fixed
        return default_max_running_requests(raw_tokens, self.context_len)

    def _running(self, *, tokens: int, profiled: int) -> int:
        """max_num_reqs: the default rule over the `profiled` tokens (before the
        --max-total-tokens cap and the page floor) to 0.5.9, over the pool's `tokens` from
        0.5.10 and there at most tokens // 2 (_resolve_max_num_reqs 0.5.10 mixin:851; to 0.5.9
        only the scheduler takes that, model_runner.py 0.5.9:593-600); --max-running-requests
        in its place, capped from 0.5.10 (GIVEN_RUNNING_HALF_POOL_SINCE)."""
        new = self.version >= RUNNING_FROM_POOL_SINCE
        estimated = default_max_running_requests(tokens if new else profiled, self.context_len)
        given = self.user_max_running_requests
        if given is None:
            return min(estimated, tokens // 2) if new else estimated
        if not new:
            return given
        return min(given, tokens // 2 if self.version >= GIVEN_RUNNING_HALF_POOL_SINCE
                   else estimated)

    def size(self, rest: int) -> SglangPoolSizes:
        if self.draft is None:
            raw = self._raw_tokens(rest)
            tokens = self._floor(raw)
            return SglangPoolSizes(max_total_num_tokens=tokens,
                                   max_running_requests=self._running(tokens=tokens,
                                                                      profiled=raw))
        raw = self._raw_tokens(rest)
        reqs = self._max_num_reqs(raw)
        extra = self.draft.headroom(reqs)
        if self.draft.only_draft_grows:
            tokens = self._floor(raw)
            draft_tokens = raw + extra
            if self.max_total_tokens is not None:
                draft_tokens = min(draft_tokens, self.max_total_tokens)
        else:
            tokens = draft_tokens = max(0, self._floor(raw + extra))
        return SglangPoolSizes(max_total_num_tokens=tokens, max_running_requests=reqs,
                               draft_max_total_num_tokens=draft_tokens,
                               draft_kv_bytes=draft_tokens * self.draft.cell)

    def grid_running(self, rests: Any, contexts: Any) -> Any:
        """`size`'s default max_running_requests over the sweep's grid (numpy: one rest per
        memory fraction by `contexts`), for the plain pool the sweep grids (no draft; the
        sweep takes no --max-total-tokens or --max-running-requests)."""
        import numpy as np

        raw = np.maximum(0, np.asarray(rests, dtype=np.int64))[:, None] // self.cell
        tokens = raw // self.page_size * self.page_size
        contexts = np.asarray(contexts, dtype=np.int64)[None, :]
        if self.version < RUNNING_FROM_POOL_SINCE:
            return default_max_running_requests(raw, contexts)
        return np.minimum(default_max_running_requests(tokens, contexts), tokens // 2)

    def extra_limits(self, sizes: SglangPoolSizes, context: int) -> tuple[tuple[int, int], ...]:
        """(pages the pool has, pages one request takes) for pools besides the full one."""
        return ()

    def rest_needed(self, requests: int, context: int, shared_tokens: int = 0) -> float:
        """The rest (bytes after the weights) at which `requests` requests of `context` tokens
        fit every pool (the inverse of `size`, for `kvplan estimate --requests`)."""
        own = cdiv(context, self.page_size) - shared_tokens // self.page_size
        pages = shared_tokens // self.page_size + requests * own
        tokens = pages * self.page_size
        if self.draft is not None and self.draft.target_takes_headroom:
            # 0.4.4-0.5.6 add the headroom to the profiled tokens (beyond the fraction).
            reqs = self.user_max_running_requests or spec_default_running(
                self.draft.version) or requests
            tokens = max(0, tokens - self.draft.headroom(reqs))
        return tokens * self.sizing_cell

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "cell_bytes": self.cell}
        if self.draft is not None:
            out |= {"draft_cell_bytes": self.draft.cell, "draft_layers": self.draft.layers,
                    "sizing_cell_bytes": self.sizing_cell, "speculative_rule": self.draft.rule,
                    "draft_in_budget": self.draft.version >= SPEC_BUDGETED_SINCE,
                    "speculative_num_steps": self.draft.num_steps,
                    "speculative_eagle_topk": self.draft.topk,
                    "speculative_num_draft_tokens": self.draft.num_draft_tokens}
        return out


@dataclass(frozen=True, kw_only=True)
class HybridSwaPool(SglangPool):
    """Full-attention layers (`cell` bytes per token) in the full pool, sliding (Llama-4:
    chunked) layers (`swa_cell`) in a pool of `ratio` x as many tokens, where a request keeps
    at most window + one page (SGLang frees what leaves the window, SWARadixCache)."""

    swa_cell: int
    ratio: float
    window: int
    model_type: str
    kind: str = "hybrid_swa"

    @property
    def bytes_per_token(self) -> int:
        return self.cell + self.swa_cell

    def size(self, rest: int) -> SglangPoolSizes:
        split = swa_split(rest, cell=self.cell, swa_cell=self.swa_cell, ratio=self.ratio,
                          page=self.page_size, max_total_tokens=self.max_total_tokens,
                          version=self.version)
        check_swa_split(split, window=sglang_window(self.window, self.model_type),
                        page=self.page_size, version=self.version)
        return SglangPoolSizes(max_total_num_tokens=split.full,
                               full_max_total_num_tokens=split.full,
                               swa_max_total_num_tokens=split.swa,
                               max_running_requests=self._running(tokens=split.full,
                                                                  profiled=split.profiled))

    def _swa_pages(self, context: int) -> int:
        return cdiv(min(context, self.window + self.page_size), self.page_size)

    def extra_limits(self, sizes: SglangPoolSizes, context: int) -> tuple[tuple[int, int], ...]:
        assert sizes.swa_max_total_num_tokens is not None
        return ((sizes.swa_max_total_num_tokens // self.page_size, self._swa_pages(context)),)

    def rest_needed(self, requests: int, context: int, shared_tokens: int = 0) -> float:
        full = super().rest_needed(requests, context, shared_tokens) / self.cell
        swa = requests * self._swa_pages(context) * self.page_size / self.ratio
        return swa_rest_needed(max(full, swa), cell=self.cell, swa_cell=self.swa_cell,
                               ratio=self.ratio, version=self.version)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "cell_bytes": self.cell, "swa_cell_bytes": self.swa_cell,
                "swa_full_tokens_ratio": self.ratio, "sliding_window": self.window}


@dataclass(frozen=True, kw_only=True)
class MambaPool(SglangPool):
    """Recurrent state of `per_req` bytes per slot (conv `conv_per_req` + SSM `ssm_per_req`)
    beside the full-attention token pool (`cell`)."""

    conv_per_req: int
    ssm_per_req: int
    ratio: float  # --mamba-full-memory-ratio
    max_mamba_cache_size: int | None  # --max-mamba-cache-size (per rank, after DP division)
    radix_cache: bool
    legacy_disabled_radix_size: bool  # before sglang PR #18786: 512 slots without the radix
    # Slots one running request reserves (_calculate_mamba_ratio at SGLang's defaults:
    # kvplan.engines.sglang.mamba_strategy, 1 / 3 / 5).
    slots_per_request: int
    kind: str = "mamba"

    @property
    def per_req(self) -> int:
        return self.conv_per_req + self.ssm_per_req

    def fixed_size(self) -> int | None:
        """The slots when no ratio decides them: --max-mamba-cache-size, or without the radix
        cache --max-running-requests (512 before sglang PR #18786)."""
        if self.max_mamba_cache_size is not None:
            return self.max_mamba_cache_size
        if not self.radix_cache:
            if self.user_max_running_requests is not None:
                return self.user_max_running_requests
            if self.legacy_disabled_radix_size:
                return 512
        return None

    def mamba_size(self, rest: int) -> int:
        fixed = self.fixed_size()
        if fixed is not None:
            return fixed
        return int(max(0, rest) * self.ratio / (1 + self.ratio) // self.per_req)

    def size(self, rest: int) -> SglangPoolSizes:
        slots = self.mamba_size(rest)
        if slots <= 0:
            raise InputError("--engine sglang: not one recurrent-state slot fits (SGLang: 'Not "
                             "enough GPU memory for hybrid (mamba/linear-attention) state cache')"
                             "; raise --mem-fraction or lower --max-mamba-cache-size")
        raw = self._raw_tokens(rest - slots * self.per_req)
        tokens = self._floor(raw)
        running = min(self._running(tokens=tokens, profiled=raw),
                      slots // self.slots_per_request)
        return SglangPoolSizes(max_total_num_tokens=tokens, max_running_requests=running,
                               max_mamba_cache_size=slots,
                               mamba_conv_state_bytes=(slots + 1) * self.conv_per_req,
                               mamba_ssm_state_bytes=(slots + 1) * self.ssm_per_req)

    def rest_needed(self, requests: int, context: int, shared_tokens: int = 0) -> float:
        kv = super().rest_needed(requests, context, shared_tokens)
        fixed = self.fixed_size()
        if fixed is not None:
            return kv + fixed * self.per_req
        # The ratio split gives the state pool ratio / (1 + ratio) of the rest and the tokens
        # the remainder: the rest must cover whichever needs more.
        state = requests * self.slots_per_request * self.per_req
        return max(kv * (1 + self.ratio), state * (1 + self.ratio) / self.ratio)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "cell_bytes": self.cell, "mamba_cache_per_req": self.per_req,
                "mamba_full_memory_ratio": self.ratio,
                "slots_per_request": self.slots_per_request}


def _token_cell(caches: tuple[LayerCaches, ...], *, sliding: bool | None = None) -> int:
    """Bytes per token of the token caches (attention, MLA, indexer keys); `sliding` True:
    only the sliding/chunked layers', False: only the others'."""
    total = 0
    for lc in caches:
        for c in lc.caches:
            if c.is_state:
                continue
            local = isinstance(c, (SlidingWindowCache, ChunkedLocalCache))
            if sliding is None or local == sliding:
                total += c.bytes_per_token
    return total


def _window(caches: tuple[LayerCaches, ...]) -> int:
    return max({getattr(c, "window", None) or getattr(c, "chunk", None) for lc in caches
                for c in lc.caches if isinstance(c, (SlidingWindowCache, ChunkedLocalCache))})


def check_sglang_served(spec: ModelSpec, inputs: PlanInputs) -> None:
    """Refuse, in one line, what kvplan does not size in SGLang's terms."""
    what = None
    rec = spec.recurrent
    spec_on = inputs.speculative_method is not None
    if spec.kind is AttentionKind.csa:
        what = "DeepSeek-V4's compressed sparse attention (SGLang's pools for it not read)"
    elif spec.layer_attention:
        what = "attention shapes that differ by layer type (SGLang's pools not read for them)"
    elif spec.sliding_window and (hybrid := SGLANG_UNREAD_HYBRID_SWA.intersection(
            spec.architectures)):
        what = (f"SGLang's hybrid sliding-window pool for {min(hybrid)} (configs/model_config.py "
                "is_hybrid_swa_model), not read")
    elif lists := SGLANG_UNREAD_WINDOW_LISTS.intersection(spec.architectures):
        what = (f"per-layer sliding windows of {min(lists)}, read from vLLM's model code only "
                "(SGLang's not read)")
    elif spec.num_recurrent_layers and rec is not None and rec.kind not in SGLANG_STATE_KINDS:
        what = f"SGLang's pool for {rec.kind} recurrent state"
    elif spec.num_recurrent_layers and version_key(inputs.engine_version) < (0, 5, 2):
        what = "recurrent state before SGLang 0.5.2 (its first mamba pool)"
    elif spec.num_recurrent_layers and spec_on:
        what = "SGLang's intermediate recurrent states for speculative decoding"
    elif spec_on and version_key(inputs.engine_version) < SPEC_SINCE:
        what = "speculative decoding before SGLang 0.4.2 (its first EAGLE worker)"
    elif spec_on and hybrid_swa(spec, inputs) and (spec.layer_chunks or spec.sliding_window):
        what = "the draft worker beside SGLang's sliding-window pool"
    elif (spec_on and inputs.speculative_method == "mtp" and spec.kind.value != "mla"
          and version_key(inputs.engine_version) < (0, 4, 10)):
        # Before 0.4.10 (model_runner.py) a non-MLA NextN draft's pool took the config's
        # num_hidden_layers, not num_nextn_predict_layers (MiMo-7B's docs CI log: the draft's K
        # size equals the target's).
        what = "a non-MLA NextN draft before SGLang 0.4.10 (its pool took every layer)"
    elif (spec_on and inputs.speculative_method == "mtp"
          and version_key(inputs.engine_version) >= SPEC_BUDGETED_SINCE
          and spec.model_type not in SGLANG_NEXTN_AUTO_DRAFT_TYPES):
        what = (f"a {spec.model_type} NextN draft from SGLang 0.5.14 (budgeted only with "
                "--speculative-draft-model-path, which kvplan cannot see)")
    if what is not None:
        raise UnmodelledError(f"--engine sglang: {spec.id}: kvplan does not model {what}; use "
                              "--engine vllm")
    # A layout's own refusal leaves `kvplan plan` its other layouts (an InputError); the ones
    # above refuse the model on SGLang whatever the layout (issue 32: exit 2, never DOES NOT FIT).
    if spec_on and inputs.pp > 1:
        what = "speculative decoding with --pp (SGLang: 'PP is not compatible with MTP models')"
    elif spec_on and inputs.dp_attention:
        what = "the draft worker's per-DP-rank request split under --dp-attention"
    if what is not None:
        raise InputError(f"--engine sglang: {spec.id}: kvplan does not model {what}; use "
                         "--engine vllm")


def sglang_draft(inputs: PlanInputs, caches: tuple[LayerCaches, ...]) -> SglangDraft | None:
    """The draft worker of an EAGLE-family speculative run (None without one): the draft
    layers kvplan.engines.caches.stage_caches appends, and the step counts given."""
    if inputs.speculative_method is None:
        return None
    draft = tuple(lc for lc in caches if lc.draft)
    steps = inputs.num_speculative_tokens
    opts = sglang_options(inputs)
    topk = opts.speculative_eagle_topk or 1
    # server_args.py: with eagle_topk 1 SGLang sets num_draft_tokens = num_steps + 1.
    tokens = steps + 1 if topk == 1 else opts.speculative_num_draft_tokens
    if tokens is None:
        raise InputError("--speculative-eagle-topk above 1: give --speculative-num-draft-tokens "
                         "(SGLang's tree size)")
    return SglangDraft(num_steps=steps, topk=topk, num_draft_tokens=tokens, layers=len(draft),
                       cell=_token_cell(draft), indexers=dsa_indexer_cells(caches),
                       target_layers=sum(1 for lc in caches if not lc.draft),
                       version=version_key(inputs.engine_version))


def hybrid_swa(spec: ModelSpec, inputs: PlanInputs) -> bool:
    """Whether SGLang gives the model its separate sliding-window pool."""
    since = SGLANG_HYBRID_SWA.get(spec.model_type)
    return (since is not None and not sglang_options(inputs).disable_hybrid_swa_memory
            and version_key(inputs.engine_version) >= since)


def sglang_pool(spec: ModelSpec, inputs: PlanInputs, caches: tuple[LayerCaches, ...]
                ) -> SglangPool | None:
    """SGLang's pool for one pipeline stage's caches (None: the stage caches nothing)."""
    check_sglang_served(spec, inputs)
    check_draft_weights_known(inputs)
    opts = sglang_options(inputs)
    draft = sglang_draft(inputs, caches)
    caches = tuple(lc for lc in caches if not lc.draft)
    common = {"page_size": sglang_page_size(spec, inputs),
              "max_total_tokens": opts.max_total_tokens,
              "user_max_running_requests": inputs.max_num_seqs, "context_len": inputs.context,
              "version": version_key(inputs.engine_version)}
    states = [c for lc in caches for c in lc.caches if isinstance(c, RecurrentState)]
    local = any(isinstance(c, (SlidingWindowCache, ChunkedLocalCache))
                for lc in caches for c in lc.caches)
    if states:
        conv = sum(t.nbytes for s in states for t in s.tensors if t.name == "conv")
        dp = inputs.attention_dp_ranks
        given = opts.max_mamba_cache_size
        return MambaPool(
            cell=_token_cell(caches), conv_per_req=conv,
            ssm_per_req=sum(s.state_bytes for s in states) - conv,
            ratio=(opts.mamba_full_memory_ratio if opts.mamba_full_memory_ratio is not None
                   else mamba_full_memory_ratio(inputs.engine_version)),
            max_mamba_cache_size=None if given is None else given // dp,
            radix_cache=inputs.prefix_caching is not False,
            legacy_disabled_radix_size=version_key(inputs.engine_version) < (0, 5, 9),
            slots_per_request=mamba_slots_per_request(
                inputs.engine_version, spec.architectures,
                radix_cache=inputs.prefix_caching is not False),
            **common)
    if local and hybrid_swa(spec, inputs):
        full, swa = _token_cell(caches, sliding=False), _token_cell(caches, sliding=True)
        if full == 0:
            raise UnmodelledError(
                f"--engine sglang: {spec.id}'s stage holds only sliding layers "
                "(SGLang's all-SWA pool), which kvplan does not model")
        check_swa_cap_pool(radix_cache=inputs.prefix_caching is not False,
                           max_running_requests=inputs.max_num_seqs,
                           version=version_key(inputs.engine_version), model=spec.id)
        return HybridSwaPool(cell=full, swa_cell=swa, window=_window(caches),
                             ratio=(opts.swa_full_tokens_ratio
                                    if opts.swa_full_tokens_ratio is not None
                                    else SWA_FULL_TOKENS_RATIO), model_type=spec.model_type,
                             **common)
    cell = _token_cell(caches)
    if cell == 0:
        return None
    return SglangPool(cell=cell, draft=draft, **common)
