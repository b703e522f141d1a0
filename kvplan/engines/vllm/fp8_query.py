"""vLLM's FP8 query on SM 10.x: with an fp8 KV cache, its FlashInfer backend quantizes the query
to the cache's dtype and runs TRT-LLM's attention kernels on FP8 operands, prefill and decode
(kvplan.engines.attention_kernel.KvDtypeAttention, priced by
kvplan.perf.attention_kernel.attention_math at Efficiency.fp8_attention of the FP8 peak).

Which backend: vllm/platforms/cuda.py `_get_backend_priorities` puts FLASHINFER first for
non-MLA attention on compute-capability major 10 (0.16.0 :71, 0.17.0 :86, 0.19.0 :100-106,
0.32.0 :161, the last unless the layer is non-causal), where FlashInferBackend takes head sizes
64, 128, 256 (flashinfer.py get_supported_head_sizes: 0.16.0 :351, 0.19.0 :388-390, 0.21.0
:406) and 512 from 0.22.0 (:405; 0.32.0 :568); any other head size goes to the next backend
(not declared: bf16 math).

The query's dtype (vllm 0.19.0 v1/attention/backends/flashinfer.py:614-625): `can_use_trtllm =
can_use_trtllm_attention(num_qo_heads, num_kv_heads)` (utils/flashinfer.py:312-317: SM 10.x
family, :283-295 `is_device_capability_family(100)`, i.e. B200 / GB200 (10.0) and B300 / GB300
(10.3), and q heads a multiple of KV heads) and, unless --attention-config
disable_flashinfer_q_quantization (default False, config/attention.py:43), `q_data_type =
self.kv_cache_dtype`, FP8 for an fp8 cache. With an FP8 query `use_trtllm_attention` returns True
for the prefill (utils/flashinfer.py:372-375, "Must use TRTLLM attention if query is FP8
quantized"; only DCP > 1 stops it first, :340-345) and the decode runs TRT-LLM whenever
can_use_trtllm (flashinfer.py:629, :887-889), so both phases compute on FP8 operands. The
Attention layer quantizes the query (model_executor/layers/attention/attention.py:383-396,
:420-430) with a plain torch op that torch.compile fuses into the ops before it (the comment at
:421-424): no cast kernel of its own is charged (`casts` empty; an --enforce-eager launch would
run one, not counted). Sinks (gpt-oss) and sliding windows run on the same TRT-LLM kernels
(:379-381, window_left), so they are not excluded.

Releases: 0.16.0 (flashinfer.py:575, :591-594; utils/flashinfer.py:277-289, :366-369), 0.17.0
(:575-582; :278-289, :367) and 0.19.0 (above) alike; 0.32.0 moved the choice into
`get_q_data_type` (flashinfer.py:991-1031: FP8 for an fp8 cache on SM 9.0 and the SM 10.x family)
with `supports_trtllm_attention(is_prefill)` SM 10.x for both phases (utils/flashinfer.py:
648-670) and the FP8-query rule at :751-753. Releases before 0.16.0 were not read: not declared
there (bf16). Not modelled: 0.16.0 drops the TRT-LLM path, and with it the FP8 query, when a KV
connector is configured (flashinfer.py:576-588, P/D disaggregation; 0.17.0 no longer does);
DCP > 1; VLLM_BATCH_INVARIANT. kvplan's "fp8" cache stands for fp8_e4m3 (an fp8_e5m2 cache's
query is e5m2, not current_platform.fp8_dtype(), and the prefill may run FlashInfer's own
kernels).
"""

from __future__ import annotations

from kvplan.engines.attention_kernel import KvDtypeAttention

_SOURCE = ("vllm 0.19.0 v1/attention/backends/flashinfer.py:388-390, :614-629, :887-889; "
           "utils/flashinfer.py:283-317, :372-375; platforms/cuda.py:100-106; 0.16.0 "
           "flashinfer.py:575-594; 0.32.0 flashinfer.py:568, :991-1031, utils/flashinfer.py:"
           "648-670, :751-753")

TRTLLM_FP8_QUERY = KvDtypeAttention(
    name="FlashInfer TRT-LLM attention (vLLM FLASHINFER, FP8 query on an fp8 cache)",
    phases=("prefill", "decode"),
    compute_capability_majors=(10,),
    kv_dtypes=("fp8",),
    since="0.16.0",
    casts=(),  # the query quant is fused by torch.compile (module docstring)
    latent=False,
    head_dims=(64, 128, 256),
    source=_SOURCE,
)

# 0.22.0 adds head size 512 to FlashInferBackend (flashinfer.py:405; 0.21.0 :406 has not).
TRTLLM_FP8_QUERY_512 = KvDtypeAttention(
    name="FlashInfer TRT-LLM attention (vLLM FLASHINFER, FP8 query on an fp8 cache)",
    phases=("prefill", "decode"),
    compute_capability_majors=(10,),
    kv_dtypes=("fp8",),
    since="0.22.0",
    casts=(),
    latent=False,
    head_dims=(512,),
    source="vllm 0.22.0 v1/attention/backends/flashinfer.py:405; " + _SOURCE,
)

VLLM_KV_DTYPE_ATTENTION = (TRTLLM_FP8_QUERY, TRTLLM_FP8_QUERY_512)
