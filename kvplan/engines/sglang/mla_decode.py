"""SGLang's absorbed-MLA decode on gfx942 (MI300X, MI325X): the kernels its DeepSeek-V2/V3 model
code launches per decoder layer beyond kvplan's count (kvplan.engines.attention_kernel.
MlaDecodeLaunches; priced by kvplan.perf.attention_kernel.mla_decode_extra_kernels).

Read in the sglang 0.5.7 sdist (PyPI, python/sglang/srt/), and the same code in 0.5.9 and
0.5.10.post1, for the launch SGLang's ROCm image runs (SGLANG_USE_AITER=1: docker/rocm.Dockerfile
of v0.5.5.post3 and v0.5.10.post1 both set it; the v0.5.7 file was not read):

- The attention backend: on HIP an MLA model whose rank holds 16 or 128 KV heads gets aiter
  (server_args.py 0.5.7 lines 1554-1561: `head_num = model_config.get_num_kv_heads(self.tp_size)`
  ... "current aiter only support head number 16 or 128"), else triton. DeepSeek-V3's
  num_key_value_heads equals its 128 query heads (16 a rank at TP 8); kvplan reads the query
  heads. With aiter a decode layer runs AttnForwardMethod.MLA (models/deepseek_v2.py:421-425),
  forward_absorb_prepare / forward_absorb_core (:1858-2200).
- RoPE, 14 more: DeepseekScalingRotaryEmbedding (the model sets rope_type "deepseek_yarn"
  wherever rope_scaling is given, deepseek_v2.py:1324) re-dispatches to forward_native on HIP
  (layers/rotary_embedding.py:823-824; 0.5.9 :1044-1045; 0.5.10.post1 rotary_embedding/
  rope_variant.py:376-377), PyTorch ops inside the CUDA graph, each one kernel: the gather of
  cos_sin_cache rows (fp32, :854-869), cos and sin each repeat_interleave'd (GPT-J style,
  is_neox_style=False at deepseek_v2.py:1411), per q and k a multiply by cos, the negation and
  the stack of _rotate_gptj (:56-60), a multiply by sin and the add (5 each), and the two casts
  back to bf16 (forward_native :898-938): 1 + 2 + 10 + 2 = 15 where kvplan counts 1 RoPE
  kernel. It runs on gfx942: the condition skipping it holds only on gfx95 with aiter
  (deepseek_v2.py:2011-2016, `not _use_aiter or not _is_gfx95_supported or self.use_nsa`).
- W_UK / W_UV, 2 more: the absorbed bmm's FP8 weight is cast to bf16 and multiplied by its
  per-tensor scale at every step, then a bf16 torch.bmm (deepseek_v2.py:1953-1991 and
  2142-2176, "TODO(haishaw): add bmm_fp8 to ROCm"; the weights are per-tensor FP8 on HIP,
  block_quant_to_tensor_quant at :3547-3551): 3 kernels each where kvplan counts 2 (an FP8
  activation quantize and the bmm, the CUDA path's per_tensor_quant_mla_fp8 + bmm_fp8). The
  extra bytes (the weight's bf16 copy written and read, 2.1 M elements a rank at TP 8) stay
  under the kernels' floors and are not charged.
- q and k, 2 more: aiter is not in FORWARD_ABSORB_CORE_ATTENTION_BACKENDS (:248-255) and the
  fused rope + cat + cache kernel is taken on gfx95 only (:2079), so q = torch.cat(q_nope_out,
  q_pe) and k = torch.cat(k_nope, k_pe) run apart (:2105-2107).

18 kernels per layer. Not counted: aiter's MLA decode runs a stage-1 and a reduce kernel
(ROCm/aiter e4048607a5 aiter/mla.py mla_decode_fwd) where kvplan counts one attention kernel,
as it does for every split-KV decode kernel on CUDA too; the triton backend (a rank with other
head counts, e.g. Kimi-K2's 8 at TP 8) and SGLANG_ROCM_FUSED_DECODE_MLA's fused path (taken
only under it, `_dispatch_mla_subtype` :295-300) are not read here. gfx950 (MI355X) takes the
fused kernels (`_use_aiter_gfx95`). Releases before 0.5.7 were not read: not charged.
Written after prospective59's DeepSeek-V3.1 MI300X rows came out 20-54 % fast
(tests/benches/mi300x_forensic.py; those rows shaped it: tests/benches/fitted_rows.py)."""

from __future__ import annotations

from kvplan.engines.attention_kernel import MlaDecodeLaunches

# 15 - 1 (RoPE) + 3 - 2 (each of the two absorb bmm) + 2 (q, k cat): module docstring.
ROCM_ROPE_EXTRA, ROCM_ABSORB_EXTRA, ROCM_CAT_EXTRA = 14, 2, 2

SGLANG_GFX942_MLA_DECODE = MlaDecodeLaunches(
    name="SGLang aiter MLA decode on gfx942 (native RoPE, FP8 absorb dequantized, q/k cat)",
    platform="rocm", compute_capabilities=((9, 4),),
    architectures=("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"),
    heads_per_rank=(16, 128), since="0.5.7",
    extra_kernels=ROCM_ROPE_EXTRA + ROCM_ABSORB_EXTRA + ROCM_CAT_EXTRA,
    source="sglang 0.5.7 models/deepseek_v2.py:1858-2104, layers/rotary_embedding.py:823-933, "
           "server_args.py:1554-1561")
SGLANG_MLA_DECODE_LAUNCHES = (SGLANG_GFX942_MLA_DECODE,)
