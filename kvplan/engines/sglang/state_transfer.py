"""SGLang's hybrid handover payloads by release and transfer backend: the Mamba state slot and the
SWA pool's window pages (prefill.py `send_kv_chunk`: `_mamba_payload`, `_swa_payload`, sent by
the backend's `maybe_send_extra`), and how they cross unequal prefill / decode attention TP
sizes (issue 29). Read in the pip wheels sglang 0.5.2 to 0.5.23 (srt/disaggregation/; every
release between, plus 0.5.5.post2 and 0.5.8.post1):

- No payload before 0.5.4: 0.5.2 / 0.5.3 prefill.py `send_kv_chunk` sends the full pool's page
  indices only (0.5.3:642 `send(page_indices)`), so a Mamba or SWA-pool model's state never
  reaches the decode worker: refused. 0.5.4 adds it (prefill.py 0.5.4:629-680: the one Mamba
  slot, the SWA pool's window pages, the NSA indexer pages) and `kv_args.state_type`
  (prefill.py 0.5.4:147-167).
- NIXL before 0.5.9: `NixlKVSender.send` takes the state indices and drops them (nixl/conn.py
  0.5.8.post1:719-738: `add_transfer_request` gets the KV pages and the aux index only): the
  state is never sent, refused. 0.5.9 adds NIXL's `maybe_send_extra` (nixl/conn.py 0.5.9:711).
- Mamba between unequal TP sizes: mooncake 0.5.4-0.5.8.post1 raise on the last chunk
  (mooncake/conn.py 0.5.8.post1:800-807, 0.5.4:798-805: "PD Disaggregation does NOT support PD
  different TP sizes for non-MLA hybrid models yet"); from 0.5.9 `_send_mamba_state_slice`
  (mooncake/conn.py 0.5.9:615-633, 689-760). NIXL 0.5.9 / 0.5.10 raise (nixl/conn.py
  0.5.9:724-728, 0.5.10:690); from 0.5.11 the same slicing (nixl/conn.py 0.5.11:727, 845).
  Each state tensor of each layer is cut on its TP axis (conv channels, SSM heads;
  utils.py 0.5.23:907-1042 `compute_mamba_state_slice_blocks` / `_byte_blocks`): decode TP
  larger ("scatter"), prefill rank d x P / D writes the decode rank's `dst_dim` of its own
  slot, i.e. the decode rank's whole slot; prefill TP larger ("aggregation"), each of the
  P / D prefill ranks writes its whole slot at its offset in the decode rank's. So a decode
  rank receives its own slot's bytes either way. 0.5.9's aggregation writes prefill rank r's
  slot at r x its size in the decode slot (mooncake/conn.py 0.5.9:744, the rank in the whole
  prefill group, not in the decode rank's P / D writers: 0.5.10:1103-1105), past the slot of
  every decode rank but the first: refused where D > 1. From 0.5.16 a GDN conv state is cut
  per q / k / v sub-block (`conv_shard_groups`, set for GDN only: configs/qwen3_next.py
  0.5.23:308); before, and for Mamba2's x / B / C conv channels in every release, the conv
  state is cut as one block, which moves the same bytes but not the channels each rank's
  weights expect (a note on the handover). SGLang's cut assumes every dim splits evenly over
  both TP sizes; where the rank's state replicates part of itself (Mamba2's groups when
  n_groups % TP != 0), P x slot(P) != D x slot(D), the aggregation writes past the decode
  slot: refused. (`--enable-unified-memory`, off by default,
  refuses unequal TP from 0.5.18: mooncake/conn.py 0.5.23:1300-1311; not modelled.)
- The SWA pool between unequal TP sizes: raised through 0.5.21 in both backends (mooncake/
  conn.py 0.5.9:636-645, 0.5.21:1767; nixl/conn.py 0.5.9:737-741, 0.5.21:2676). From 0.5.22
  `_send_swa_state_slice` (mooncake/conn.py 0.5.22:2370, 0.5.23:2435; nixl/conn.py
  0.5.22:2640, 0.5.23:2969-3182) -> common/conn.py `_get_mha_head_slice_blocks` (0.5.23:
  1751-1850): the full layers' head slices (`compute_head_slice_params`, common/
  staging_buffer.py 0.5.23:773-806: decode TP larger, its max(1, H / D) heads from one prefill
  rank; prefill TP larger, each of the P / D ranks its max(1, H / P) heads, replicas not
  deduplicated) over the window pages; with pipeline stages it raises (common/conn.py
  0.5.23:1763-1767): refused.
- Llama 4's chunked layers are the SWA pool's local layers: Llama4ForCausalLM has no
  `get_attention_sliding_window_size`, so the runner's `sliding_window_size` is the config's
  attention_chunk_size (model_runner.py 0.5.4:921-928, 0.5.9:1021-1034;
  model_runner_components/load_model_utils.py 0.5.23:144-156), and `_swa_payload` (prefill.py
  0.5.23:1588-1612, the same formula since 0.5.4; 0.5.23 starts it no earlier than the decode
  worker's prefix hit, which kvplan takes as none) sends the pages of
  [floor(max(0, T - c) / page) x page, T): the last c tokens, not the current chunk's
  [floor(T / c) x c, T) that the layer attends (a superset of it).
"""

from __future__ import annotations

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.kv.cache import recurrent_state
from kvplan.kv.kinds import RecurrentState
from kvplan.model.spec import ModelSpec

STATE_PAYLOAD_SINCE = (0, 5, 4)  # prefill.py sends the Mamba slot and the SWA pages
NIXL_STATE_SINCE = (0, 5, 9)  # NIXL's maybe_send_extra
MAMBA_SLICE_SINCE = {"mooncake": (0, 5, 9), "nixl": (0, 5, 11)}  # _send_mamba_state_slice
SWA_SLICE_SINCE = (0, 5, 22)  # _send_swa_state_slice (both backends)
AGGREGATION_OFFSET_FIXED = (0, 5, 10)  # the writer's offset within its decode rank's slot
CONV_GROUPS_SINCE = (0, 5, 16)  # GDN conv state cut per q / k / v sub-block


def check_hybrid_transfer(*, backend: str, version: str | None, p_tp: int, d_tp: int, pp: int,
                          mamba: bool, swa_pool: bool) -> None:
    """Refuse a handover of Mamba state (`mamba`) or SWA-pool pages (`swa_pool`) that the named
    SGLang release does not send, or refuses itself (module docstring)."""
    if not (mamba or swa_pool):
        return
    key = version_key(version)
    what = "Mamba state" if mamba else "sliding-window (SWA pool) pages"
    named = f"SGLang {version}" if version else "SGLang"
    if key < STATE_PAYLOAD_SINCE:
        raise UnmodelledError(
            f"--disagg --engine sglang: {named} hands over no {what} (prefill.py send_kv_chunk "
            "sends the full pool's pages only before 0.5.4); give 0.5.4 or newer")
    if backend == "nixl" and key < NIXL_STATE_SINCE:
        raise UnmodelledError(
            f"--connector nixl: {named}'s NixlKVSender.send drops the {what} (nixl/conn.py "
            "0.5.8.post1:719-738; sent from 0.5.9); give 0.5.9 or newer, or mooncake")
    if p_tp == d_tp:
        return
    tps = f"--prefill-tp {p_tp} / --decode-tp {d_tp}"
    if mamba and key < MAMBA_SLICE_SINCE[backend]:
        since = ".".join(map(str, MAMBA_SLICE_SINCE[backend]))
        raise UnmodelledError(
            f"{tps}: {named} ({backend}) refuses Mamba state between unequal TP sizes "
            f"(\"does NOT support PD different TP sizes\"; sliced from {since}); give equal "
            "TP sizes")
    if mamba and p_tp > d_tp > 1 and key < AGGREGATION_OFFSET_FIXED:
        raise UnmodelledError(
            f"{tps}: {named} writes each prefill rank's Mamba slot at its rank in the whole "
            "prefill group, past every decode rank's slot but the first (mooncake/conn.py "
            "0.5.9:744; fixed in 0.5.10); give 0.5.10 or newer, or --decode-tp 1")
    if swa_pool and key < SWA_SLICE_SINCE:
        raise UnmodelledError(
            f"{tps}: {named} refuses its SWA pool's pages between unequal TP sizes (\"does NOT "
            "support PD different TP sizes for non-MLA SWA hybrid models\"; head-sliced from "
            "0.5.22); give equal TP sizes")
    if swa_pool and pp > 1:
        raise UnmodelledError(
            f"{tps}: SGLang's SWA head slicing refuses pipeline stages (common/conn.py "
            "0.5.23:1763-1767); give equal TP sizes or one stage")


def _slot_bytes(spec: ModelSpec, state: RecurrentState, tp: int) -> int:
    """One request's state slot on one rank of `tp`, in the decode state's dtypes (no
    speculative rows: the check below compares two TP sizes alike)."""
    dtypes = {t.name: t.dtype for t in state.tensors}
    other = next((d for name, d in dtypes.items() if name != "conv"), "float32")
    assert spec.recurrent is not None  # a RecurrentState comes from spec.recurrent
    return recurrent_state(spec.recurrent, tp=tp, conv_dtype=dtypes.get("conv", other),
                           ssm_dtype=other).state_bytes


def check_state_slices(spec: ModelSpec, state: RecurrentState, p_tp: int, d_tp: int) -> None:
    """SGLang cuts a slot on each tensor's TP axis as if every dim split evenly over both TP
    sizes; refuse a state that replicates part of itself on a rank (P x slot(P) != D x slot(D):
    Mamba2's groups when n_groups % TP != 0), which that cut does not fit."""
    if p_tp == d_tp:
        return
    per_p, per_d = _slot_bytes(spec, state, p_tp), _slot_bytes(spec, state, d_tp)
    if p_tp * per_p != d_tp * per_d:
        raise UnmodelledError(
            f"--prefill-tp {p_tp} / --decode-tp {d_tp}: {spec.id}'s {state.kind} state is "
            f"partly replicated over the ranks ({p_tp} x {per_p:,} B != {d_tp} x {per_d:,} B), "
            "which SGLang's even TP slicing (disaggregation/utils.py "
            "compute_mamba_state_slice_blocks) does not fit; give equal TP sizes")


def state_slice_note(state: RecurrentState, version: str | None) -> str:
    """What the handover's notes say of a Mamba slot cut between unequal TP sizes."""
    grouped = state.kind == "gated_delta_net" and version_key(version) >= CONV_GROUPS_SINCE
    return ("SGLang cuts each Mamba state tensor on its TP axis (_send_mamba_state_slice): "
            "each decode rank receives its own slot's bytes" + (
                "; the conv state per q / k / v sub-block." if grouped else
                "; the conv state as one block of channels, not per sub-block as each "
                "rank's weights hold them (GDN: per sub-block from 0.5.16)."))
