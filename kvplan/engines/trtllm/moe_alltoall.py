"""TensorRT-LLM's MoE all-to-all workspace under attention DP (PyTorch backend, the 1.2 line).

Which all-to-all runs. The MoE backend is ``moe_config.backend``, CUTLASS by default
(``llmapi/llm_args.py: MoeConfig``; aiconfigurator's generator writes ``backend: CUTLASS`` too,
``extra_engine_args.1.2.0rc6.post1.yaml.j2``). ``CutlassFusedMoE.select_alltoall_method_type``
(``_torch/modules/fused_moe/fused_moe_cutlass.py``, since NVIDIA/TensorRT-LLM PR #8950, merged
2025-11-12, and the renaming of PR #9388, 2025-11-24; the 1.2 line) returns:
    NotEnabled      without attention DP (``mapping.dp_size == 1``)
    NotEnabled      with MoE tensor parallelism (``moe_tp_size != 1``: EP smaller than the TP
                    group; moe_tp x moe_ep = tp)
    NotEnabled      where ``MnnvlMemory.supports_mnnvl()`` is false (``_mnnvl_utils.py``: every
                    NVLink up, "not equivalent to MNNVL support"; aiconfigurator, aligning its
                    model with 1.2.0rc6 in ai-dynamo/aiconfigurator PR #551, takes it as SM >= 100,
                    and so does kvplan: compute capability 10.x / 11.x with NVLink, not Hopper,
                    not the SM 12.x cards a later revision excludes; on Hopper the one-sided
                    buffer's fabric handles would not open across the two-node H100 EP-16 workers
                    these rows ran)
    NVLinkOneSided  otherwise (the EP-vs-top-k test is commented out: "NVLinkOneSided performs
                    better than NCCL AllGather/ReduceScatter, regardless of ... EP size and topK")
    (TRTLLM_FORCE_ALLTOALL_METHOD overrides it; kvplan takes it unset.)

What NVLinkOneSided holds. ``CutlassFusedMoE.__init__`` builds ``MoeAlltoAll``
(``_torch/distributed/moe_alltoall.py``) with ``workspace_size_per_rank =
MoeAlltoAll.calculate_required_workspace_size(ep_size, top_k, model_config.max_num_tokens,
hidden_size, dtype)`` (dtype: the model's, 16-bit); one workspace per process
(``MoeAlltoAll._WORKSPACE``), shared by every MoE layer:
    aux     = the C++ ``calculateOffsets``' payload offset: two 4-byte fields, send / receive
              counters (ep x 4 B each), dispatch / combine completion flags (ep x 4 B each), the
              top-k target ranks and send indices (max_num_tokens x kMaxTopK 8 x 4 B each), each
              section aligned to 128 B (the alignment and the first two fields' width are read
              from the newest source; they move the size by under 1 KiB)
    + ep x max_num_tokens x hidden x 2 B      dispatch: unquantized hidden states, padded to 128
    + 2 x ep x max_num_tokens x top_k x 4 B   token_selected_experts, token_final_scales (each
                                              padded to 128)
    + ep x max_num_tokens x hidden x 2 B      combine
``MnnvlMemory(mapping, size)`` then ``cuMemCreate``s it rounded up to the allocation granularity
(``cuMemGetAllocationGranularity(..., RECOMMENDED)`` of a fabric-handle allocation; kvplan takes
2 MiB, not read from a log) and maps the peers' copies: memory outside torch, allocated while the
model is built, so before the KV cache estimation (``_util.py: KvCacheCreator``) and lost to the
pool like the other outside-torch parts. E.g. DeepSeek-V3 (hidden 7,168, top-8) at EP 8 and
max_num_tokens 8,192: 2 x 939,524,096 + 2 x 2,097,152 + 524,672 aux = 1,883,767,168 B -> 899 x
2 MiB = 1.756 GiB per GPU.

Not modelled (kvplan's activation estimate is unchanged under attention DP): the estimation run's
MoE over the tokens gathered from every DP rank (``moe_max_num_tokens`` = max_num_tokens x
dp_size) and the dense layers run without TP. Before 1.2 the CUTLASS backend chose MNNVL's
two-sided workspaces (``MnnvlMoe.get_moe_workspaces``) when EP > top_k: not read; refused.
"""

from __future__ import annotations

from kvplan._util.units import MiB
from kvplan._util.versions import version_key

ONE_SIDED_FROM = (1, 2)
A2A_MAX_TOP_K = 8  # moeAlltoAllKernels.h: kMaxTopK
A2A_ALIGN = 128
A2A_GRANULARITY = 2 * MiB


def _pad(n: int, to: int) -> int:
    return -(-n // to) * to


def alltoall_modelled(version: str | None) -> bool:
    """Whether kvplan reads this release's all-to-all choice (the 1.2 line onwards)."""
    return version_key(version) >= ONE_SIDED_FROM


def alltoall_method(*, dp_attention: bool, tp: int, ep: int,
                    capability: tuple[int, int] | None, nvlink: bool) -> str:
    """CutlassFusedMoE.select_alltoall_method_type (1.2): "NVLinkOneSided" or "NotEnabled"."""
    if not dp_attention or tp <= 1 or ep < 1 or tp // ep != 1:
        return "NotEnabled"
    if not nvlink or capability is None or capability[0] not in (10, 11):
        return "NotEnabled"
    return "NVLinkOneSided"


def one_sided_aux_bytes(ep: int, max_num_tokens: int) -> int:
    """calculateOffsets' payload offset (module docstring)."""
    offset = 8 + 2 * ep * 4
    for size in (ep * 4, ep * 4, max_num_tokens * A2A_MAX_TOP_K * 4,
                 max_num_tokens * A2A_MAX_TOP_K * 4):
        offset = _pad(offset, A2A_ALIGN) + size
    return _pad(offset, A2A_ALIGN)


def one_sided_workspace_bytes(*, ep: int, top_k: int, max_num_tokens: int, hidden: int,
                              element_bytes: int = 2) -> int:
    """MoeAlltoAll.calculate_required_workspace_size, rounded to the allocation granularity."""
    size = one_sided_aux_bytes(ep, max_num_tokens)
    size = _pad(size + ep * max_num_tokens * hidden * element_bytes, A2A_ALIGN)
    size = _pad(size + ep * max_num_tokens * top_k * 4, A2A_ALIGN)
    size = _pad(size + ep * max_num_tokens * top_k * 4, A2A_ALIGN)
    size = _pad(size + ep * max_num_tokens * hidden * element_bytes, A2A_ALIGN)
    return _pad(size, A2A_GRANULARITY)
