"""SGLang's float32 MoE routers (kvplan.engines.router_gemm), read in the model files of the
PyPI wheels (sglang/srt/models/).

MiniMax-M2: `ReplicatedLinear(..., params_dtype=torch.float32)` called on
`hidden_states.to(torch.float32)` in 0.5.7 (minimax_m2.py:174-178, :207) and 0.5.10 (:369-373,
:402). GLM-4.5 / 4.6 / 4.7: `Glm4MoeGate` ran F.linear on the compute-dtype weight in 0.5.7
(glm4_moe.py:311-327), 0.5.8 and 0.5.9 (:330-331); 0.5.10 casts the weight once and the input
each step to float32 (glm4_moe.py:353-374, "GLM requires FP32 gate projection"). GLM-4.7-Flash
(glm4_moe_lite.py 0.5.10:165-197 `Glm4MoeLiteGate`) and DeepSeek / GLM-5 (deepseek_v2.py
0.5.10 `MoEGate.forward`:301-340, dsv3_router_gemm or F.linear in the compute dtype) are not.
"""

from __future__ import annotations

from kvplan.engines.router_gemm import Fp32Gate, RouterGemmRule

SGLANG_ROUTER_GEMM = RouterGemmRule(gates={
    "MiniMaxM2ForCausalLM": Fp32Gate(source=(
        "minimax_m2.py 0.5.7:174-178, :207; 0.5.10:369-373, :402 ReplicatedLinear("
        "params_dtype=float32) on hidden_states.to(float32)")),
    "Glm4MoeForCausalLM": Fp32Gate(since="0.5.10", source=(
        "glm4_moe.py 0.5.10:353-374 Glm4MoeGate F.linear(hidden_states.to(float32), "
        "weight float32); 0.5.7:311-327, 0.5.9:330-331 the compute dtype")),
})
