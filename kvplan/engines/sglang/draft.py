"""SGLang's speculative-decoding draft worker as its KV pools meet it (kvplan.engines.sglang.pools
builds one per stage with `sglang_draft`): the releases where the target's pool rule changes, the
draft's headroom and budgeted cell, and the draft weights kvplan cannot see.

Read from sgl-project/sglang, ``python/sglang/srt/``, at the versions named:

Speculative decoding (``--speculative-algorithm`` EAGLE / EAGLE3 / NEXTN, NEXTN being EAGLE over
the model's MTP layers; ``SglangDraft``). The draft worker shares the target's token indices
(``req_to_token_pool``, ``token_to_kv_pool_allocator``) and keeps its own KV pool of the same
``max_total_num_tokens`` over the draft's layers ("KV Cache is allocated" a second time, with the
draft's layers). How the target's pool is sized changed three times:
    0.4.2-0.4.3 (``model_runner.py: init_memory_pool``): the target's pool is ``rest // cell``;
        only the draft's grows, by ``max_num_reqs x speculative_num_steps + 100``.
    0.4.4-0.5.6 (``model_runner.py: init_memory_pool``): both pools get
        ``draft_runner_cache_size = rest // cell + max_num_reqs x (num_steps x eagle_topk) +
        max_num_reqs x num_draft_tokens + 100`` ("draft" and "verify" headroom, then the page
        floor); ``max_num_reqs`` is ``--max-running-requests``, which ``server_args.py:
        _handle_speculative_decoding`` resets to 48 when unset (32 in 0.4.4-0.4.5).
    0.5.7-0.5.13 (``model_runner_kv_cache_mixin.py: init_memory_pool``): no headroom; both
        pools hold ``rest // cell`` tokens.
    0.5.14-0.5.23 (``pool_configurator.py: DefaultPoolConfigurator``, sglang PR #23862): the
        draft's KV is budgeted: ``cell = int(cell x (1 + draft_layers / layers))``; and the
        scheduler loads the draft's weights before it sizes the pool (``scheduler.py:
        init_model_worker``), so ``rest`` is after both models' weights.
The draft's KV layers: EAGLE / EAGLE3 heads are one decoder layer (kvplan sizes it like the
target's layers, as 0.5.14's rule assumes); NEXTN the config's ``num_nextn_predict_layers``.
Before 0.5.14 the draft's weights and pool sit in the memory the fraction leaves
(``server_args.py`` lowers the default fraction by 2 GiB, 4 GiB from 0.5.10:
kvplan.engines.sglang.budget.sglang_default_fraction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key
from kvplan.engines.sglang.index_cache import DSA_DRAFT_SINCE, dsa_budget_cell

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs

# Speculative decoding (module docstring): the releases where the target's pool rule changes.
SPEC_SINCE = (0, 4, 2)  # the first EAGLE worker (0.4.1 has none)
SPEC_HEADROOM_SINCE = (0, 4, 4)  # the target's pool takes the draft/verify headroom
SPEC_SHARED_SINCE = (0, 5, 7)  # headroom gone: draft_runner_cache_size = max_total_num_tokens
SPEC_BUDGETED_SINCE = (0, 5, 14)  # draft KV in the cell, draft weights before the profile
SPEC_HEADROOM_BUFFER_TOKENS = 100  # model_runner.py "# buffer"
# 0.5.14+ budgets the draft's layers only where --speculative-draft-model-path is set, which
# arg_groups/speculative_hook.py does itself for NEXTN on these architectures (DeepseekV3/V32,
# Glm4Moe(Lite), GlmMoeDsa, ...): kvplan's model_types of them.
SGLANG_NEXTN_AUTO_DRAFT_TYPES = ("deepseek_v3", "deepseek_v32", "glm4_moe", "glm4_moe_lite",
                                 "glm_moe_dsa")


@dataclass(frozen=True, kw_only=True)
class SglangDraft:
    """The EAGLE-family draft worker of one rank: its KV layers and cell, and the
    speculative_num_steps / eagle_topk / num_draft_tokens that size the headroom."""

    num_steps: int
    topk: int
    num_draft_tokens: int
    layers: int  # the draft's KV layers
    cell: int  # the draft pool's bytes per token
    target_layers: int  # the target's layers on this rank (0.5.14's scaling)
    version: tuple[int, ...]
    indexers: tuple[int, int] | None = None  # DSA: index-K B/token, target's and draft's

    @property
    def rule(self) -> str:
        """The release's rule, named for JSON (sglang_pool.speculative_rule)."""
        v = self.version
        if v >= SPEC_BUDGETED_SINCE:
            return "budgeted"
        if SPEC_HEADROOM_SINCE <= v < SPEC_SHARED_SINCE:
            return "headroom"
        return "shared" if v >= SPEC_SHARED_SINCE else "draft_headroom"

    @property
    def target_takes_headroom(self) -> bool:
        """0.4.4-0.5.6: the target's pool (and with it the draft's) takes the headroom, after
        a floor that may be negative (int(rest x 2^30 // cell) < 0 keeps its sign)."""
        return SPEC_HEADROOM_SINCE <= self.version < SPEC_SHARED_SINCE

    @property
    def only_draft_grows(self) -> bool:
        """0.4.2-0.4.3: the target keeps rest // cell; the draft's pool alone grows."""
        return self.version < SPEC_HEADROOM_SINCE

    def budget_cell(self, cell: int) -> int:
        """The bytes per token the target's pool is sized with: from 0.5.14 int(cell x (1 +
        draft_layers / layers)) (pool_configurator.py; a DSA model from 0.5.18:
        index_cache.dsa_budget_cell), else the target's."""
        if self.version >= SPEC_BUDGETED_SINCE and self.layers and self.target_layers:
            if self.indexers is not None and self.version >= DSA_DRAFT_SINCE:
                return dsa_budget_cell(cell, self.indexers, self.layers, self.target_layers)
            return int(cell * (1 + self.layers / self.target_layers))
        return cell

    def headroom(self, max_num_reqs: int) -> int:
        """Tokens added to the pool: 0.4.4-0.5.6's draft + verify + buffer (model_runner.py);
        before 0.4.4 (from 0.4.2) the draft's pool alone grows by max_num_reqs x num_steps + 100;
        none from 0.5.7."""
        if self.target_takes_headroom:
            return (max_num_reqs * self.num_steps * self.topk
                    + max_num_reqs * self.num_draft_tokens + SPEC_HEADROOM_BUFFER_TOKENS)
        if self.only_draft_grows:
            return max_num_reqs * self.num_steps + SPEC_HEADROOM_BUFFER_TOKENS
        return 0


def check_draft_weights_known(inputs: PlanInputs) -> None:
    """From 0.5.14 the draft's weights are inside the budget; kvplan has no draft checkpoint."""
    if (inputs.speculative_method is not None
            and version_key(inputs.engine_version) >= SPEC_BUDGETED_SINCE
            and inputs.weights_bytes is None and inputs.kv_budget_bytes is None):
        raise InputError(
            f"--engine sglang {inputs.engine_version or '(newest)'}: from 0.5.14 the draft "
            "model's weights load before the KV pool is sized (scheduler.py init_model_worker) "
            "and kvplan does not size the draft checkpoint; give --weights-gib (target + draft "
            "'Load weight end ... mem usage', per GPU) or --engine-version below 0.5.14")
