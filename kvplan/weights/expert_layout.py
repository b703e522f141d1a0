"""How a MoE layer's routed experts are split over the ranks that share them: `ep` expert-parallel
groups, each holding E / ep whole experts, and inside each group every expert's GEMMs split over
`moe_tp` ranks (the MoE TP x EP layout), moe_tp x ep = the ranks. The rule, written once, that
the weights (kvplan.capacity.weights, kvplan.weights.checkpoint), the time model
(kvplan.perf.layout.Layout.moe_tp) and the engines' launch checks (kvplan.engines.moe_layout)
read.

The engines derive it the same way:
- SGLang (read in 0.5.9 and 0.5.10.post1): `--ep-size` with `--tp`, no MoE DP:
  distributed/parallel_state.py `initialize_model_parallel` (0.5.9 line 1775, 0.5.10.post1
  1887): ``moe_tp_size = tensor_model_parallel_size // moe_ep_size // moe_dp_size``;
  layers/moe/fused_moe_triton/layer.py `FusedMoE.__init__` (0.5.9 lines 217-229): E / moe_ep
  local experts (asserted to divide), ``intermediate_size_per_partition = intermediate_size //
  moe_tp_size`` (asserted to divide).
- TensorRT-LLM: `moe_expert_parallel_size` with `tensor_parallel_size` (trtllm-serve
  `--ep_size`): tensorrt_llm/mapping.py `Mapping` (as stored, 05ebebb2, and its pydantic
  successor): ``moe_tp_size = tp_size // (moe_ep_size * moe_cluster_size)`` where only the EP
  size is given, and ``tp_size must equal to moe_tp_size * moe_ep_size``.
- vLLM: no MoE TP under EP (kvplan.engines.moe_layout).
"""

from __future__ import annotations

from kvplan._util.errors import InputError


def moe_tp_size(ranks: int, ep: int) -> int:
    """The ranks each routed expert's GEMMs are split over, where `ranks` GPUs share a MoE
    layer (the TP group; under data-parallel attention every rank) and `ep` of them hold
    disjoint sets of whole experts: ranks // ep (ep 1: every rank, plain TP-MoE; ep >= ranks:
    1, experts whole, as vLLM's EP over TP x DP). An `ep` below `ranks` that does not divide
    them is no layout an engine builds: refused."""
    if ranks < 1 or ep < 1:
        raise ValueError(f"ranks and ep must be >= 1, got ranks={ranks}, ep={ep}")
    if ep >= ranks:
        return 1
    if ranks % ep:
        raise InputError(f"--ep {ep}: MoE TP x EP needs EP to divide the {ranks} ranks "
                         "sharing the experts")
    return ranks // ep


def experts_on_rank(n_experts: int, ep: int, rank: int) -> int:
    """The routed experts EP rank `rank` of `ep` holds: E // ep, one more on the first E % ep
    ranks (vLLM 0.32 layers/fused_moe/expert_map_manager.py:66-69 `determine_expert_map`, the
    same count under its linear and round-robin placements; SGLang asserts that ep divides E).
    Over the ranks every expert is held once."""
    if n_experts < 0 or ep < 1 or not 0 <= rank < ep:
        raise ValueError(f"need n_experts >= 0 and 0 <= rank < ep, got {n_experts}, {rank}, {ep}")
    return n_experts // ep + (rank < n_experts % ep)


def busiest_rank_experts(n_experts: int, ep: int) -> int:
    """The most routed experts one EP rank holds, ceil(E / ep): rank 0's (`experts_on_rank`),
    which sets the memory every rank is sized by."""
    return experts_on_rank(n_experts, ep, 0)
