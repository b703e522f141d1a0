"""SGLang's shared-expert fusion for DeepSeek-V3 / R1 on ROCm (gfx942 MI300X / MI325X, gfx950
MI355X): the one shared expert joins the routed experts' fused MoE as a 257th expert that every
token picks (top_k 8 + 1), so its MLP launches nothing of its own (kvplan.engines.
attention_kernel.SharedExpertFusion; kvplan.perf.shared_fusion.engine_folds_shared_expert).

Read in the sglang 0.5.7 sdist (PyPI, python/sglang/srt/models/deepseek_v2.py):

- DeepseekV2ForCausalLM.__init__ calls determine_num_fused_shared_experts (:3304), which keeps
  num_fused_shared_experts = config.n_shared_experts (:3388) unless --disable-shared-experts-
  fusion is given (:3352) or one of: the config's first architecture is not
  DeepseekV3ForCausalLM, or n_routed_experts != 256, or n_shared_experts != 1 (:3357-3362); not
  CUDA SM 8.0+ and not HIP with capability >= (9, 4) (:3363-3369, "AMD-platform with capability
  >= gfx942(MI30x)"); expert parallelism off HIP (:3370-3373; on HIP EP keeps it); DeepEP
  (:3374-3375); w4afp8 (:3376-3377). Where it disables the fusion it sets the server arg.
- DeepseekV2MoE then builds its FusedMoE with num_experts = n_routed_experts + 1 and top_k =
  num_experts_per_tok + 1 (:625-629, :663-667), and no shared_experts MLP (:705, `if
  config.n_shared_experts is not None and self.num_fused_shared_experts == 0`); forward_normal's
  _forward_shared_experts returns None (:1160), so nothing is added after the experts (:925).
- server_args.py sets --disable-shared-experts-fusion itself only with the flashinfer_trtllm
  MoE runner (:1831-1839), a CUDA (SM 10.x) backend.

Declared for ROCm first (mi300x67), written after prospective59's DeepSeek-V3.1 MI300X rows
(tests/benches/mi300x_forensic.py), which it moves the other way (faster); those rows are
SHAPED_BY it (tests/benches/fitted_rows.py).

CUDA (sglh200_68): the same function fuses on CUDA with compute capability 8.0 or more
(0.5.7 :3363-3369; 0.5.9 :2868-2873, the same test), but with expert parallelism (0.5.7
:3370-3373, 0.5.9 :2875-2878: EP > 1 keeps the fusion on HIP only) and under DeepEP (0.5.9
also Mori, :2879-2882). On SM 10.x SGLang picks the flashinfer_trtllm MoE runner for a
DeepseekV3ForCausalLM checkpoint quantized fp8 / modelopt_fp8 / modelopt_fp4 (or none), which
sets --disable-shared-experts-fusion (kvplan.engines.sglang.shared_stream names the lines:
there the shared experts run on a second stream instead); the other quantizations on SM 10.x
were not traced through the runner's choice, so SM 10.x is not declared here. Declared: the
SM 8.x, 9.0 and 12.x presets, EP 1 (`under_ep` False), from 0.5.7 (earlier releases not read
here; the cost model's fit rows ran early-2025 engines with the shared expert apart:
kvplan.perf.op_counts). Where it holds, shared_stream's `unfused` is False (no second stream):
the two rules split CUDA between them."""

from __future__ import annotations

from kvplan.engines.attention_kernel import SharedExpertFusion

SGLANG_ROCM_SHARED_EXPERT_FUSION = SharedExpertFusion(
    name="SGLang DeepSeek-V3 shared expert inside fused_moe on ROCm (gfx942 and later)",
    platform="rocm", compute_capabilities=((9, 4), (9, 5)),
    architectures=("DeepseekV3ForCausalLM",), routed_experts=256,
    not_quantizations=("w4afp8",), since="0.5.7",
    source="sglang 0.5.7 models/deepseek_v2.py:3348-3388 (determine_num_fused_shared_experts), "
           ":625-629, :663-667, :705, :1160")
SGLANG_CUDA_SHARED_EXPERT_FUSION = SharedExpertFusion(
    name="SGLang DeepSeek-V3 shared expert inside fused_moe on CUDA SM 8.0+ at EP 1",
    platform="cuda", compute_capabilities=((8, 0), (8, 6), (8, 9), (9, 0), (12, 0), (12, 1)),
    architectures=("DeepseekV3ForCausalLM",), routed_experts=256,
    not_quantizations=("w4afp8",), since="0.5.7", under_ep=False,
    source="sglang 0.5.7 models/deepseek_v2.py:3348-3388 (determine_num_fused_shared_experts: "
           ":3363-3369 CUDA >= (8, 0), :3370-3373 EP > 1 off CUDA's fusion), :625-629, :663-667, "
           ":705, :1160; 0.5.9 :2853-2895")
SGLANG_SHARED_EXPERT_FUSION = (SGLANG_ROCM_SHARED_EXPERT_FUSION, SGLANG_CUDA_SHARED_EXPERT_FUSION)
