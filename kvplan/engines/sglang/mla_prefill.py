"""The attention kernel SGLang runs an MLA model's prefill with on SM 10.x, in the KV cache's
dtype (kvplan.engines.attention_kernel.KvDtypeAttention, priced by
kvplan.perf.attention_kernel.attention_math).

Which backend: server_args.py:1104-1210 (0.5.8.post1) sets --attention-backend trtllm_mla on
`is_sm100_supported()` (utils/common.py:247-251: compute-capability major 10, i.e. B200, GB200,
B300, GB300) for DeepseekV3ForCausalLM, MistralLarge3ForCausalLM and
PixtralForConditionalGeneration when no attention backend is given and the model has no sparse
indexer (DeepSeek-V3.2 gets `nsa` instead). Its prefill
(models/deepseek_common/attention_backend_handler.py:124-134: an extend batch runs
MHA_CHUNKED_KV) is layers/attention/trtllm_mla_backend.py `forward_extend`: with
`self.data_type = model_runner.kv_cache_dtype` (:288) float8_e4m3fn, q, k and v are cast to FP8
(:1133-1134, `_quantize_fp8_qkv` :199-226: three `.to(torch.float8_e4m3fn)`, or
`scaled_fp8_quant` where the layer has a k / v scale other than 1) and
flashinfer.prefill.trtllm_ragged_attention_deepseek computes in FP8 (:1166-1196, both the new
tokens and the chunked prefix). fp8_e5m2 and fp4_e2m1 caches are not cast (bf16 attention);
kvplan's "fp8" cache stands for e4m3, the dtype a checkpoint's FP8 kv_cache_scheme gives.
Releases: 0.5.7 (trtllm_mla_backend.py:1073-1074) and 0.5.8 (:1133-1134) do the same;
0.5.6.post2 (:1048, :1069), 0.5.5.post2 (:1052, :1073) and 0.5.4 (:1019, :1040) pass the bf16
q, k, v to the same kernel (their only FP8 extend path is target_verify's, e.g. 0.5.6.post2 :933).
Not in FP8 either: SGLang's flashinfer_mla backend (flashinfer_mla_backend.py:81-82: data_type
and q_data_type are the model dtype) and vLLM 0.32's MLA prefill by default
(model_executor/layers/attention/mla_attention.py:2323-2360: FP8 prefill queries only with
--attention-config use_prefill_query_quantization, default False, config/attention.py:85).
Not declared: trtllm_mla's decode, which with an fp8 cache casts its query to FP8 too (:843) and
runs trtllm_batch_decode_with_kv_cache_mla on FP8 operands (no FP8 MLA decode measurement read).
"""

from __future__ import annotations

from kvplan.engines.attention_kernel import KvDtypeAttention

TRTLLM_MLA_FP8_PREFILL = KvDtypeAttention(
    name="FlashInfer trtllm_ragged_attention_deepseek (SGLang trtllm_mla, FP8 q/k/v)",
    phases=("prefill",),
    architectures=("DeepseekV3ForCausalLM", "MistralLarge3ForCausalLM",
                   "PixtralForConditionalGeneration"),
    compute_capability_majors=(10,),
    kv_dtypes=("fp8",),
    since="0.5.7",
    casts=("q", "k", "v"),  # _quantize_fp8_qkv: q.to, k.to, v.to (or scaled_fp8_quant)
    source="sglang 0.5.8.post1 layers/attention/trtllm_mla_backend.py:199-226, :288, "
           ":1133-1134, :1166-1196; server_args.py:1104-1210",
)

SGLANG_KV_DTYPE_ATTENTION = (TRTLLM_MLA_FP8_PREFILL,)
