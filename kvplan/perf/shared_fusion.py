"""Whether the engine runs a MoE layer's one shared expert inside its fused MoE (CostTraits.
shared_expert_fusion, already filtered to its release in Efficiency.shared_expert_fusion;
SGLang's DeepSeek-V3 on ROCm: kvplan.engines.sglang.shared_fusion). kvplan.perf.roofline then
reads the shared expert's weights and FLOPs in the experts' op, with no kernels of its own, as
it does for ModelSpec.shared_expert_in_fused_moe (kvplan.perf.op_counts.fused_shared_expert)."""

from __future__ import annotations

from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.layout import Layout


def engine_folds_shared_expert(eff: Efficiency, spec: ModelSpec, gpu: GPU, layout: Layout,
                               quantization: str | None) -> bool:
    """True where a declaration in `eff` names `gpu`'s platform and compute capability and
    `spec`'s first architecture, `spec` has its number of routed experts and one shared
    expert, `layout` runs no all-to-all MoE (the engine's `eff.moe_a2a`, e.g. DeepEP, on
    expert-parallel ranks, as kvplan.perf.roofline runs it) and the quantization is not one
    the declaration leaves out, and EP is 1 where the declaration keeps it only there
    (`under_ep` False: CUDA). Read by the step's price (roofline) and by the eager prefill's
    op count (kvplan.perf.engine_traits.eager_ops)."""
    moe = spec.moe
    all_to_all = eff.moe_a2a is not None and layout.ep > 1 and layout.moe_tp == 1
    if all_to_all or moe is None or moe.n_shared_experts != 1 or not spec.architectures:
        return False
    return any(f.platform == gpu.platform and gpu.compute_capability in f.compute_capabilities
               and spec.architectures[0] in f.architectures
               and moe.n_routed_experts == f.routed_experts
               and quantization not in f.not_quantizations
               and (f.under_ep or layout.ep == 1)
               for f in eff.shared_expert_fusion)
