"""How vLLM builds an MoE layer's router, by architecture: the one table of it (issue 26).

vLLM's KV budget subtracts the bytes of the weights it loaded, so the router must be priced as
vLLM allocates it, not as the checkpoint stores it. Three things differ by family:

- the gate's weight dtype: most build a ``GateLinear`` (vllm/model_executor/layers/fused_moe/
  router/gate_linear.py, a ReplicatedLinear) in the compute dtype; some pass
  ``params_dtype=torch.float32`` and hold the (experts x hidden) matrix in float32 (4 B);
- a per-expert score-correction bias (``e_score_correction_bias`` / ``expert_bias``), an
  ``nn.Parameter`` of one float32 per router column, built always or only where the config
  switches it on (`MoESpec.score_bias`, read by kvplan.sources.hf_moe);
- a bias of the gate itself in the compute dtype (gpt-oss: ``GateLinear(..., bias=True)``);
- a sigmoid gate of the shared expert (``shared_expert_gate``, a ReplicatedLinear(hidden, 1) in
  the compute dtype) that only the Qwen MoE blocks build; Granite's shared MLP has none;
- Gemma-4's scales around its gate (``router.scale`` of hidden and ``router.per_expert_scale``
  of one per expert, in the compute dtype).

Read in vLLM 0.32.0 (lines below), unchanged in 0.33.0 and 0.34.0 for these classes, and the
same float32 builds back to each family's first release, except two older ones this table does
not model: GLM-4.5's gate is float32 from 0.10.1 (0.10.0 glm4_moe.py:122 a plain
ReplicatedLinear), ERNIE-4.5-MoE's from 0.11.2 (0.11.0 ernie45_moe.py:120-127, its bias in the
compute dtype too). An architecture not listed builds its gate in the compute dtype, with no
bias and no shared gate.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kvplan._util.units import cdiv
from kvplan.model.spec import ModelSpec
from kvplan.sources.support import support_table

FLOAT32_BITS = 32


@dataclass(frozen=True, kw_only=True)
class RouterBuild:
    """One family's router as vLLM builds it. ``weight_fp32``: the gate's weight in float32
    (else the compute dtype). ``score_bias``: "always", "config" (where `MoESpec.score_bias`)
    or "never": a float32 per-column bias. ``shared_expert_gate``: a (1 x hidden) gate on the
    shared expert, where the layer has one. ``gate_bias``: the gate's own bias, one per column
    in the gate's dtype. ``source``: the vLLM 0.32 file and lines."""

    weight_fp32: bool = False
    score_bias: str = "never"
    gate_bias: bool = False
    shared_expert_gate: bool = False
    # A learned scale of the router's input (hidden) and one per expert (Gemma-4).
    input_and_expert_scales: bool = False
    source: str = "layers/fused_moe/router/gate_linear.py GateLinear in the compute dtype"


_DEEPSEEK = RouterBuild(score_bias="config", source=(
    "models/deepseek_v2.py:320-332 DeepseekV2MoE: GateLinear without params_dtype "
    "(_get_moe_router_dtype sets only out_dtype), e_score_correction_bias float32 where "
    "topk_method is noaux_tc"))
_GLM4_MOE = RouterBuild(weight_fp32=True, score_bias="always", source=(
    "models/glm4_moe.py:141-150 Glm4MoE: GateLinear params_dtype float32, "
    "e_score_correction_bias float32"))
_MIMO_V2 = RouterBuild(weight_fp32=True, score_bias="always", source=(
    "models/mimo_v2.py:158-170: params_dtype = config.moe_router_dtype, default float32; "
    "e_score_correction_bias in the gate's out_dtype, float32"))
_QWEN_SHARED_GATE = RouterBuild(shared_expert_gate=True, source=(
    "models/qwen2_moe.py:148-153, qwen3_moe.py:180-188, qwen3_next.py:197-202 "
    "(qwen3_5.py and qwen3_vl_moe.py reuse these blocks): shared_expert_gate = "
    "ReplicatedLinear(hidden, 1) where shared_expert_intermediate_size > 0"))
_GRANITE_SHARED = RouterBuild(source=(
    "models/granitemoeshared.py:110-114, granitemoehybrid.py:102-106: shared_mlp without a "
    "gate; the router GateLinear in the compute dtype (granitemoe.py:99-102)"))

_GEMMA4 = RouterBuild(input_and_expert_scales=True, source=(
    "models/gemma4.py:298-323 Gemma4Router: scale = nn.Parameter(ones(hidden)), "
    "per_expert_scale = nn.Parameter(ones(num_experts)), proj = GateLinear(hidden, experts) in "
    "the compute dtype (the oracle shrink gemma-4-26b-a4b: all three bfloat16)"))

ROUTERS: dict[str, RouterBuild] = {
    "AfmoeForCausalLM": RouterBuild(weight_fp32=True, score_bias="always", source=(
        "models/afmoe.py:86-95: GateLinear params_dtype float32, expert_bias float32")),
    "BailingMoeForCausalLM": RouterBuild(score_bias="config", source=(
        "models/bailing_moe.py:241-262: params_dtype = router_dtype (unset: the compute dtype), "
        "expert_bias float32 where moe_router_enable_expert_bias")),
    "DeepseekV2ForCausalLM": _DEEPSEEK,
    "DeepseekV3ForCausalLM": _DEEPSEEK,
    "DeepseekV32ForCausalLM": _DEEPSEEK,
    "GlmMoeDsaForCausalLM": _DEEPSEEK,
    "KimiK25ForConditionalGeneration": _DEEPSEEK,
    "Ernie4_5_MoeForCausalLM": RouterBuild(weight_fp32=True, score_bias="always", source=(
        "models/ernie45_moe.py:156-166: GateLinear params_dtype float32, "
        "e_score_correction_bias float32")),
    "Gemma4ForCausalLM": _GEMMA4,
    "Gemma4ForConditionalGeneration": _GEMMA4,
    "GptOssForCausalLM": RouterBuild(gate_bias=True, source=(
        "models/gpt_oss.py:383-389 MLPBlock: router = GateLinear(hidden, experts, bias=True) "
        "in the compute dtype")),
    "Glm4MoeForCausalLM": _GLM4_MOE,
    # glm4_moe_lite.py:92 Glm4MoeLite(Glm4MoE); glm4_1v.py:1803 builds its text model as
    # Glm4MoeForCausalLM.
    "Glm4MoeLiteForCausalLM": _GLM4_MOE,
    "Glm4vMoeForConditionalGeneration": _GLM4_MOE,
    "GraniteMoeSharedForCausalLM": _GRANITE_SHARED,
    "GraniteMoeSWAForCausalLM": _GRANITE_SHARED,
    "GraniteMoeHybridForCausalLM": _GRANITE_SHARED,
    "HYV3ForCausalLM": RouterBuild(weight_fp32=True, score_bias="always", source=(
        "models/hy_v3.py:154-178: GateLinear params_dtype float32, expert_bias float32")),
    "KimiLinearForCausalLM": RouterBuild(score_bias="always", source=(
        "models/kimi_k3/nvidia/model.py:614-623 KimiMoE (the non-ROCm import of "
        "kimi_k3/__init__.py): GateLinear in the compute dtype, e_score_correction_bias "
        "float32")),
    "Lfm2MoeForCausalLM": RouterBuild(score_bias="config", source=(
        "models/lfm2_moe.py:128-139: GateLinear in the compute dtype, "
        "e_score_correction_bias float32 where use_expert_bias")),
    "LongcatFlashForCausalLM": RouterBuild(weight_fp32=True, score_bias="always", source=(
        "models/longcat_flash.py:153-167, 190: LongcatRouter classifier and "
        "e_score_correction_bias in router_params_dtype float32, routed + zero experts wide")),
    "MiMoV2FlashForCausalLM": _MIMO_V2,
    "MiMoV2ForCausalLM": _MIMO_V2,
    "MiniMaxM2ForCausalLM": RouterBuild(weight_fp32=True, score_bias="config", source=(
        "models/minimax_m2.py:85-116: GateLinear params_dtype float32, "
        "e_score_correction_bias float32 where use_routing_bias")),
    # The gate's dtype depends on the GPU here (force_fp32_compute=True: float32 unless a
    # Hopper / Blackwell router kernel serves it, gate_linear.py:80-87), which the weights do
    # not know: the compute dtype is taken; the bias is float32 everywhere.
    "NemotronHForCausalLM": RouterBuild(score_bias="always", source=(
        "models/nemotron_h.py:160-170: GateLinear(force_fp32_compute=True), "
        "e_score_correction_bias float32")),
    "Qwen2MoeForCausalLM": _QWEN_SHARED_GATE,
    "Qwen3MoeForCausalLM": _QWEN_SHARED_GATE,
    "Qwen3NextForCausalLM": _QWEN_SHARED_GATE,
    "Qwen3_5MoeForCausalLM": _QWEN_SHARED_GATE,
    "Qwen3_5MoeForConditionalGeneration": _QWEN_SHARED_GATE,
    "Qwen3VLMoeForConditionalGeneration": _QWEN_SHARED_GATE,
    "Step3p5ForCausalLM": RouterBuild(weight_fp32=True, score_bias="always", source=(
        "models/step3p5.py:317-330 FusedMoEBlock: GateLinear params_dtype float32, router_bias "
        "float32 of moe_num_experts (asserted on: use_moe_router_bias)")),
}
_DEFAULT = RouterBuild()


def router_build(spec: ModelSpec) -> RouterBuild:
    """The router of `spec`'s architecture: the first of `router_architectures` the table
    lists."""
    for name in router_architectures(spec):
        if name in ROUTERS:
            return ROUTERS[name]
    return _DEFAULT


def router_architectures(spec: ModelSpec) -> tuple[str, ...]:
    """config.json's `architectures`; for a spec file without them, the architectures the
    support table gives its model_type (DeepseekV3ForCausalLM for deepseek_v3 and kimi_k2)."""
    return spec.architectures or _table_architectures(spec.model_type)


@functools.cache
def _table_architectures(model_type: str) -> tuple[str, ...]:
    return tuple(row.architecture for row in support_table().values()
                 if model_type in row.model_types)


def router_columns(spec: ModelSpec) -> int:
    """Output columns of one MoE layer's router: one per routed and per zero (identity)
    expert (LongCat-Flash's zero_expert_num, models/longcat_flash.py LongcatRouter)."""
    moe = spec.moe
    return 0 if moe is None else moe.n_routed_experts + moe.zero_experts


def router_params(spec: ModelSpec) -> int:
    """Parameters of one MoE layer's gate matrices: the router and, where the family builds
    them, the shared expert's gate and the router's scales (the score bias is priced by
    `router_bytes`)."""
    moe = spec.moe
    if moe is None:
        return 0
    h = spec.hidden_size
    build = router_build(spec)
    shared_gate = build.shared_expert_gate and moe.shared_expert_intermediate_size
    scales = h + router_columns(spec) if build.input_and_expert_scales else 0
    return h * router_columns(spec) + (h if shared_gate else 0) + scales


def router_bytes(spec: ModelSpec, compute_bits: int) -> int:
    """Bytes of one MoE layer's router as vLLM allocates it (replicated on every rank): the gate
    in float32 or the compute dtype (with its own bias where built), the shared expert's gate in
    the compute dtype, and the float32 score bias where built."""
    moe = spec.moe
    if moe is None:
        return 0
    build = router_build(spec)
    h = spec.hidden_size
    columns = router_columns(spec)
    gate_bits = FLOAT32_BITS if build.weight_fp32 else compute_bits
    n = cdiv((h + int(build.gate_bias)) * columns * gate_bits, 8)
    n += cdiv((router_params(spec) - h * columns) * compute_bits, 8)
    if build.score_bias == "always" or (build.score_bias == "config" and moe.score_bias):
        n += columns * FLOAT32_BITS // 8
    return n
