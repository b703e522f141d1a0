"""Where vLLM's two KV connectors' handover rules change, release by release, with the hybrid
KV-cache manager on (kvplan.engines.vllm.kv_transfer): which layer kinds each release hands over
and how many recurrent-state slots a request moves. Read from the PyPI sdists' source
(2026-12-07, nixlmc66); the rules themselves (which blocks, from which ranks) are
kvplan.engines.vllm.connectors'.

NixlConnector (distributed/kv_transfer/kv_connector/v1/nixl_connector.py to 0.19.1, nixl/ from
0.20.0; scheduler.py to 0.23.0, base_scheduler.py from 0.24.0):

- SupportsHMA from 0.18.0 (nixl_connector.py 0.18.0:316; 0.17.1 :304 is not). Before it an
  explicit --no-disable-hybrid-kv-cache-manager with the connector stops at start-up
  (kv_connector/factory.py 0.13.0 - 0.19.0 :56-61 "Connector ... does not support HMA but HMA
  is enabled").
- Sliding-window groups (the manager on): the decode side's unhashed non-null blocks
  (kv_cache_manager.py 0.22.0:91-101 `get_unhashed_block_ids_all_groups` "Skip padding
  blocks"), clipped to their last `cdiv(window, block) + 1` (nixl_connector.py 0.18.0:596-639;
  nixl/scheduler.py 0.22.0:121-136, :219-243 `get_sw_clipped_blocks`, used at :480 and :660;
  base_scheduler.py 0.24.0:133, :219-243; 0.27.0 :235-280 and 0.31.0 :250-302
  `get_exchange_clipped_blocks`, the same clip): the rule kvplan read at 0.32.0 holds from
  0.18.0 (the manager on from 0.22 by default, 0.18 - 0.21 only when asked).
- Recurrent (Mamba, GDN) groups: the conv sub-projections and the SSM state of each slot, the
  state's own bytes (nixl/worker.py 0.22.0:1014-1098 `_build_mamba_local` /
  `_build_mamba_remote`, as 0.32.0 base_worker.py:1828-1972), the prompt one token short on
  the prefill (scheduler.py 0.22.0:324-327 "Returns N-1 for Mamba models"), heads mapped by
  tp_mapping.py (0.22.0 = 0.32.0 but for DCP). Read from 0.22.0 (0.20.0 - 0.21.0 keep the
  manager off with a connector unless asked; not read there). Both roles need
  VLLM_SSM_CONV_STATE_LAYOUT=DS (worker.py 0.22.0:256-258, base_worker.py 0.32.0:606-608
  assert it; the default is "SD", mamba_utils.py get_conv_state_layout): `plan --disagg`
  prints it before both roles' commands (connectors.py `launch_env`). How many slots:
  - 0.22.0 - 0.26.0: no SSM clip (`get_sw_clipped_blocks` clips sliding groups only): every
    slot of the group moves, the running state and the `num_speculative_blocks` scratch
    slots (single_type_kv_cache_manager.py 0.22.0 MambaManager: 1 + num_speculative_blocks a
    new request in mode 'none' and in mode 'align'), paired one to one.
    In mode 'align' (prefix caching on a hybrid) the prefill's list also carries a null
    placeholder per block before the state (cdiv(T, block) + spec entries): 0.22.x asserts
    the two lists equal (nixl/worker.py 0.22.0:2335-2337 `assert num_local_blocks ==
    num_remote_blocks`), so a prompt past one block stops the worker; 0.23.0 - 0.26.0 keep
    the prefill's last block when the decode's list is shorter, asserting the decode holds
    one (worker.py 0.23.0:2344, base_worker.py 0.26.0:2285-2294 "SSM can only have one local
    block"): one slot without a drafter, a stop with one.
  - from 0.27.0: the running-state slot only (base_scheduler.py 0.27.0:235-280: speculative
    scratch and everything before the running state dropped; mode 'all' keeps its slots,
    refused by kvplan's allocator before 0.28), as 0.32.0's `clip_ssm_state_blocks`.
- DeepSeek-V3.2's indexer: registered as its own MLA region with per-release changes
  (worker.py 0.22.0:855 "MLA DSv32 Indexer case", base_worker.py 0.26.0:1110-1166,
  0.28.0 :1127-1180, 0.30.0 :1359-1508): read at 0.32.0 only.

MooncakeConnector (mooncake_connector.py to 0.14.1, mooncake/ from 0.16.0):

- SupportsHMA from 0.20.0 (mooncake/mooncake_connector.py 0.20.0:336; 0.19.1 :330 is not):
  before it the manager cannot be on with the connector (factory.py as above).
- With the manager off (any connector before 0.22 unless asked: kv_transfer) sliding-window and
  chunked layers are full attention in one group: every block of every layer (0.14.1 - 0.21.0:
  the decode side's unhashed blocks, each registered layer's whole page; no model special
  case), as for full attention.
- Sliding-window groups with the manager on: `get_sw_clipped_blocks` (0.20.0 :482-524, used
  at :590-594 and :697; 0.22.0 :505-548; 0.25.0 :634-680; 0.32.0 :890-944), NIXL's clip.
  0.20.0 - 0.24.0 flatten every group's block ids into one list and write it into every
  registered tensor (0.22.0 :1206-1258, :1260-1318), the tensors deduplicated by address
  (:1409-1414): each tensor is shared by one layer of each group, so the bytes are the
  per-layer rule's (each layer its own group's blocks).
- Recurrent groups: from 0.25.0 (:641-643 "This Mooncake MambaSpec path is currently tested
  with GDN", :681-686 N-1, :1469-1485 the group's non-null blocks on both sides, the Mamba
  layer's conv tensor registered whole: the padded page, :1677-1707). 0.22.0 - 0.24.0 have no
  Mamba path (no N-1 backoff, the state tuple registered as K and V): not read. No SSM clip in
  any release (0.32.0 included): the running state and the speculative scratch slots, 1 +
  num_speculative_blocks a request.
- Heterogeneous TP: `_compute_sender_transfer_plan` from 0.19.0 (identical to 0.29.0); the
  prefill's cache counts as replicated when `tp_size // total_num_kv_heads >= 1` or MLA
  (kv_connector/utils.py 0.19.0:456-466): replicated and prefill TP larger, only every
  (P / D)-th prefill rank writes its own block length, so a decode rank holding more heads than
  one prefill rank gets one rank's heads; not replicated and decode TP larger than the KV heads,
  `_validate_asymmetric_region_lengths` fails. 0.30.0 adds the GQA head branch (= 0.32.0).
  0.13.0 - 0.18.1 pair equal TP only.
"""

from __future__ import annotations

from kvplan._util.errors import InputError
from kvplan._util.units import cdiv
from kvplan._util.versions import version_key

Release = tuple[int, int]

NIXL_HMA_SINCE: Release = (0, 18)
NIXL_RECURRENT_SINCE: Release = (0, 22)
# NIXL's SSM clip (only the running-state slot moves): base_scheduler.py 0.27.0:235-280.
NIXL_STATE_CLIP_SINCE: Release = (0, 27)
# 0.23.0 keeps the prefill's last slot when the decode's list is shorter (worker.py :2344);
# 0.22.x asserts the lists equal (worker.py 0.22.0:2337).
NIXL_ALIGN_TRIM_SINCE: Release = (0, 23)
MOONCAKE_HMA_SINCE: Release = (0, 20)
MOONCAKE_RECURRENT_SINCE: Release = (0, 25)
MOONCAKE_HETERO_TP_SINCE: Release = (0, 19)
MOONCAKE_GQA_HEADS_SINCE: Release = (0, 30)
# Both connectors' indexer handover: read at 0.32.0 only.
INDEXER_SINCE: Release = (0, 32)


def nixl_state_slots(version: str | None, *, spec_tokens: int, align: bool, tokens: int,
                     block: int) -> tuple[int, str]:
    """The recurrent-state slots NIXL reads a request (module docstring): `spec_tokens` the
    drafter's (MambaSpec.num_speculative_blocks), `align` mamba cache mode 'align', `tokens`
    the prompt tokens the prefill computed, `block` the attention block (the state's block in
    mode 'align')."""
    key = version_key(version)
    if key >= NIXL_STATE_CLIP_SINCE:
        return 1, "the running-state slot (get_exchange_clipped_blocks, from 0.27)"
    longer = align and cdiv(tokens, block) > 1
    if longer and (key < NIXL_ALIGN_TRIM_SINCE or spec_tokens):
        site = ("worker.py 0.22.0:2337 'assert num_local_blocks == num_remote_blocks'"
                if key < NIXL_ALIGN_TRIM_SINCE else
                "base_worker.py 0.26.0:2293 'SSM can only have one local block'")
        raise InputError(
            f"--engine-version {version}: NixlConnector stops on a recurrent hybrid with "
            f"prefix caching (mamba cache mode 'align') past one {block}-token block"
            + (f" with {spec_tokens} speculative slots" if spec_tokens else "")
            + f" ({site}); run without prefix caching or give --engine-version 0.27 or newer")
    if longer:
        return 1, "the prefill's last slot (_apply_prefix_caching, 0.23 - 0.26)"
    return 1 + spec_tokens, (f"every slot: the running state + {spec_tokens} speculative "
                             "(no SSM clip before 0.27)")


def mooncake_state_slots(spec_tokens: int) -> tuple[int, str]:
    """MooncakeConnector writes every non-null slot of the group (module docstring)."""
    if spec_tokens:
        return 1 + spec_tokens, (f"the group's non-null slots: the running state + "
                                 f"{spec_tokens} speculative")
    return 1, "the group's one non-null slot"


def mooncake_gqa_tp_runs(p_tp: int, d_tp: int, kv_heads: int) -> bool:
    """Whether MooncakeConnector 0.19 - 0.29 writes a GQA model's heads whole between these TP
    sizes (module docstring): equal, or prefill TP larger with its cache not counted as
    replicated, or decode TP larger with the prefill's cache replicated or the decode's heads
    split."""
    if p_tp == d_tp:
        return True
    replicated = p_tp // kv_heads >= 1
    if p_tp > d_tp:
        return not replicated
    return replicated or d_tp <= kv_heads
