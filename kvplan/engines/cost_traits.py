"""The plain data an engine's rules carry for the rest of kvplan: what the time model needs to
know of it (`CostTraits`, with `PrefillOpCount` and `AllReduceNormFusion`), how a plan is
launched (`Launch`) and what it does with a context above the model's maximum (`LongContext`).
Split from kvplan.engines.base, which re-exports each name."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from kvplan.engines.attention_kernel import KvDtypeAttention, SparseMlaKernel, VarlenAttentionKernel
from kvplan.engines.moe_comm import MoeAllToAllRule
from kvplan.engines.moe_kernel import MoeKernels
from kvplan.engines.moe_shape import ExpertsShapeTables
from kvplan.engines.prefill_graph import PrefillGraph
from kvplan.engines.router_gemm import RouterGemmRule
from kvplan.engines.shared_stream import SharedExpertStream

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.attention_kernel import MlaDecodeLaunches, SharedExpertFusion


@dataclass(frozen=True, kw_only=True)
class PrefillOpCount(str, Enum):
    """Whose code counts an eager prefill step's ops (kvplan.perf.engine_traits): SGLang's
    (kvplan.perf.op_counts; vLLM's under --enforce-eager) or TensorRT-LLM's (perf.trtllm_ops)."""

    sglang = "sglang"
    trtllm = "trtllm"


@dataclass(frozen=True, kw_only=True)
class AllReduceNormFusion:
    """An engine's fused TP all-reduce + residual add + RMSNorm, as plain data: the architectures
    (`model_types`) and GPU presets where the engine turns it on by default, for steps of at most
    `max_tokens` tokens on 2 to `max_ranks` GPUs (kvplan.perf.engine_traits decides), from
    release `since` on (None: every release before the engine's next declaration)."""

    model_types: frozenset[str]
    gpus: frozenset[str]
    max_tokens: int
    max_ranks: int
    since: str | None = None
    source: str = ""


@dataclass(frozen=True, kw_only=True)
class CostTraits:
    """What the time model needs to know of an engine."""

    # Prefill ops launched one by one from Python, outside CUDA graphs (each pays the launch).
    eager_prefill: bool = False
    prefill_op_count: PrefillOpCount = PrefillOpCount.sglang  # whose code counts those ops
    # Its fused all-reduce + RMSNorm by release, oldest first, each the whole rule from its
    # `since` on (engine_traits.engine_efficiency keeps the newest a release has); (): none.
    allreduce_norm_fusions: tuple[AllReduceNormFusion, ...] = ()
    ep_all_to_all_needs_dp: bool = False  # EP's all-to-all only under DP attention
    prefill_mlp_all_reduce: bool = False  # prefill MLPs gather by all-reduce (SGLang), no a2a
    decode_mlp_gather: bool = False  # decode MLPs: all-gather + reduce-scatter (SGLang), no a2a
    attention_kernels: tuple[VarlenAttentionKernel | SparseMlaKernel, ...] = ()  # by GPU; ()=pairs
    kv_dtype_attention: tuple[KvDtypeAttention, ...] = ()  # attention in the KV dtype, by GPU
    mla_decode_launches: tuple[MlaDecodeLaunches, ...] = ()  # MLA decode's extra kernels, by GPU
    shared_expert_fusion: tuple[SharedExpertFusion, ...] = ()  # shared expert inside fused MoE
    moe_kernel: MoeKernels | None = None  # its fused MoE by format, release, GPU (padding, bytes)
    moe_all_to_all: MoeAllToAllRule | None = None  # the all-to-all a launch selects (moe_comm)
    prefill_graph: PrefillGraph | None = None  # prefill steps replayed from CUDA graphs, by release
    router_gemm: RouterGemmRule | None = None  # its float32 MoE routers, by release (router_gemm)
    # Its fused MoE's own experts' fraction by rows per expert (kvplan.engines.moe_shape), in
    # place of the pooled table where Efficiency.moe_gemm_by_engine is set; None: the pooled.
    experts_shape: ExpertsShapeTables | None = None
    # Its own layers are what aiconfigurator's B200 kernel tables timed (vLLM 0.19.0's, read by
    # kvplan.perf.sm100_tables), so the opt-in `--kernel-tables` may price it by them; False:
    # the option is refused for it (kvplan.perf.cost_rules.CostRules.check).
    sm100_kernel_tables: bool = False
    # Its shared experts beside the routed ones on a second stream in a captured decode step
    # (kvplan.engines.shared_stream); None: in series.
    shared_expert_stream: SharedExpertStream | None = None


@dataclass(frozen=True, kw_only=True)
class Launch:
    """How a plan is launched: the memory fractions a plan may use (the default first, None:
    the engine's own default; then the most its guidance allows) and the context flag."""

    fractions: tuple[float | None, float]
    context_flag: str
    dp_attention: bool = True  # runs dp_attention on an MLA model (each rank its own requests)
    ep_over_dp: bool = False  # EP spans the DP replicas (vLLM: EP = TP x DP), not one TP group
    # The first release read to launch EP below the TP group, each expert split over tp / ep
    # ranks (MoE TP x EP, kvplan.engines.moe_layout); None: the engine cannot launch it.
    moe_tp_under_ep: str | None = None


@dataclass(frozen=True, kw_only=True)
class LongContext:
    """What the engine does with a context above the model's maximum (kvplan.engines.context)."""

    refuses: bool  # True: it refuses to start; False: it starts with its maximum instead
    action: str  # as the refusal line says it: "refuses to start with it"
    override_env: str | None  # the variable that lets it take the longer context anyway
