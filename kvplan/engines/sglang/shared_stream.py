"""SGLang's dual-stream shared experts in a graph-captured decode step (DeepSeek-V2 / V3).

Read in SGLang 0.5.6, 0.5.7 and 0.5.9 (sdists; line numbers 0.5.9's, 0.5.6's in brackets):
- models/deepseek_v2.py DeepseekV2MoE.forward (:560-580 [:755-787]): without an expert
  all-to-all (`_enable_a2a_moe` False), when `alt_stream` is set, `num_fused_shared_experts`
  is 0, the batch is not empty and `get_is_capture_mode()` (a decode batch being captured into
  a CUDA graph, model_executor/cuda_graph_runner.py), it takes `forward_normal_dual_stream`
  (:591-622 [:789-]): `_forward_shared_experts` on the current stream while
  `self.gate` (the router GEMM), `self.topk` and `self.experts` run under
  `torch.cuda.stream(self.alt_stream)`, joined by `current_stream.wait_stream`. The stream is
  made on CUDA (DeepseekV2Model, :2539-2543). An eager step (an extend) takes
  `forward_normal`: the two in series.
- num_fused_shared_experts (:383-387 and `determine_num_fused_shared_experts`, :2853-2895): 0
  under --disable-shared-experts-fusion, and set so when the architecture is not
  DeepseekV3ForCausalLM, the routed experts are not 256 or the shared not 1, on CUDA below SM
  8.0, with EP above 1 on CUDA, under DeepEP / Mori, or for W4AFP8.
- server_args.py sets --disable-shared-experts-fusion with the flashinfer_trtllm MoE runner
  (:2147-2158 [:1520-1530]), which it picks on SM 10.x for DeepseekV3ForCausalLM with
  quantization fp8 / modelopt_fp8 / modelopt_fp4 (a checkpoint with none taken as fp8) and no
  all-to-all backend (:1288-1310 [:1040-1060]), and with the flashinfer all-to-all.

So (`unfused`), by config.json model_type (a preset keeps no `architectures`; deepseek_v2 is
DeepseekV2ForCausalLM, deepseek_v3 and Kimi-K2's kimi_k2 name DeepseekV3ForCausalLM): a
DeepSeek-V2 checkpoint always; a DeepseekV3ForCausalLM one where its experts are not 256 routed
+ 1 shared, with EP above 1, or on SM 10.x with one of those quantizations. Not modelled: the
flags (--disable-shared-experts-fusion, --moe-runner-backend) and W4AFP8. Where fusion stays
on (DeepSeek-V3 on Hopper, EP 1) the shared expert is the routed experts' 257th, which kvplan
does not fold for DeepSeek (kvplan.perf.op_counts.fused_shared_expert: GLM-4.5 only)."""

from __future__ import annotations

from kvplan.engines.sglang.quant_methods import sglang_method
from kvplan.engines.shared_stream import SharedExpertStream
from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec

_V3 = frozenset({"deepseek_v3", "kimi_k2"})  # model types whose config names DeepseekV3ForCausalLM
_SM100_TRTLLM_QUANT = frozenset({"fp8", "modelopt_fp8", "modelopt_fp4", None})


def _unfused(spec: ModelSpec, gpu: GPU, ep: int) -> bool:
    """Whether SGLang keeps `spec`'s shared experts out of its fused MoE on `gpu` at EP `ep`
    (module docstring)."""
    moe = spec.moe
    if moe is None or not moe.n_shared_experts:
        return False
    if spec.model_type not in _V3 or moe.n_routed_experts != 256 or moe.n_shared_experts != 1:
        return True
    if ep > 1:
        return True
    cap = gpu.compute_capability
    qc = spec.quantization_config
    return (cap is not None and cap[0] == 10
            and (sglang_method(qc) if qc else None) in _SM100_TRTLLM_QUANT)


SGLANG_SHARED_EXPERT_STREAM = SharedExpertStream(
    model_types=frozenset({"deepseek_v2"}) | _V3, since="0.5.6", unfused=_unfused,
    source="sglang 0.5.9 models/deepseek_v2.py:560-622, :2853-2895; server_args.py:1288-1310, "
           ":2147-2158 (0.5.6 deepseek_v2.py:755-789, server_args.py:1040-1060, :1520-1530)")
