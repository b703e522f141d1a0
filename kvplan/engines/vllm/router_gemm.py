"""vLLM's float32 MoE routers (kvplan.engines.router_gemm), read in the model files at each
release below (vllm/model_executor/models/, the PyPI sdists; 0.32.0 the installed wheel).

Every listed gate holds its weight in float32 and is fed a float32 input: before the GateLinear
tiers, `ReplicatedLinear(..., params_dtype=torch.float32)` or `nn.Linear(..., dtype=torch.float32)`
called on `hidden_states.to(torch.float32)`; in 0.32.0 a `GateLinear(params_dtype=torch.float32,
out_dtype=torch.float32)`, whose last tier casts the input to the weight's dtype and runs F.linear
(layers/fused_moe/router/gate_linear.py:287-302). On Hopper 0.32.0's MiniMax shapes (3072 x 256)
take a specialised float32 kernel up to 32 tokens (:42-45, :261-271, :389-411) and F.linear above:
float32 either way. On Blackwell (compute capability 10.x) 0.32.0 runs a bf16x3 tensor-core kernel
for a bf16 input (:122-129, :273-280, :413-418), which 0.20.0's GateLinear has not
(gate_linear.py:13-17: the DSV3 kernel, cuBLAS bf16 -> fp32, F.linear): the first release with it
is not read, so 0.32.0 is named. gpt-oss (gpt_oss.py 0.11.0:153, 0.20.0:181 a router in the compute
dtype), DeepSeek-V2/V3, Kimi and GLM-5 (deepseek_v2.py: a GateLinear without params_dtype) and the
Qwen MoE blocks run theirs in the compute dtype: not listed. LongCat-Flash and MiMo-V2 (a float32
gate where the config's router dtype says so) and Nemotron-H (force_fp32_compute: float32 off
Hopper / Blackwell only) are not modelled.
"""

from __future__ import annotations

from kvplan.engines.router_gemm import Fp32Gate, RouterGemmRule

_GLM4_MOE = Fp32Gate(since="0.10.1", source=(
    "glm4_moe.py 0.10.1:124-128, :184 nn.Linear(dtype=float32) on hidden_states.to(float32) "
    "(0.10.0: a ReplicatedLinear in the compute dtype, kvplan.weights.routers); 0.11.0:124-128, "
    ":205; 0.20.0:146-150, :210; 0.32.0:141-146, :215 GateLinear params / out float32"))

VLLM_ROUTER_GEMM = RouterGemmRule(gates={
    "MiniMaxM2ForCausalLM": Fp32Gate(source=(
        "minimax_m2.py 0.11.1:115-119, :134 (absent from 0.11.0) and 0.20.0:115-119, :134 "
        "ReplicatedLinear(params_dtype=float32) on hidden_states.to(float32); 0.32.0:113-120 "
        "GateLinear params / out float32")),
    "Glm4MoeForCausalLM": _GLM4_MOE,
    # glm4_moe_lite.py 0.20.0:86 Glm4MoeLite(Glm4MoE); glm4_1v.py builds its text model as
    # Glm4MoeForCausalLM.
    "Glm4MoeLiteForCausalLM": _GLM4_MOE,
    "Glm4vMoeForConditionalGeneration": _GLM4_MOE,
    "Ernie4_5_MoeForCausalLM": Fp32Gate(since="0.11.1", source=(
        "ernie45_moe.py 0.11.1:166, :210 and 0.20.0:170, :214 ReplicatedLinear(params_dtype="
        "float32) on hidden_states.to(float32) (0.10.1:160 and 0.11.0: the compute dtype)")),
    "AfmoeForCausalLM": Fp32Gate(source=(
        "afmoe.py 0.20.0:96, :155 nn.Linear(dtype=float32) on hidden_states.to(float32); "
        "0.32.0:86-95 GateLinear params float32")),
    "HYV3ForCausalLM": Fp32Gate(source=(
        "hy_v3.py 0.20.0:158-159 and 0.32.0:154-178 GateLinear params / out float32")),
    "Step3p5ForCausalLM": Fp32Gate(source=(
        "step3p5.py 0.20.0:74, :333 a float32 ReplicatedLinear whose forward casts x to "
        "float32; 0.32.0:317-330 GateLinear params float32")),
}, tensor_core_capabilities={10: "0.32.0"})
