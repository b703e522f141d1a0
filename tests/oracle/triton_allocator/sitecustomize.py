"""The vLLM oracle's stand-in for `triton.set_allocator` on vLLM's CPU build, where `triton` is
vLLM's TritonPlaceholder (vllm/triton_utils/importing.py) without that function. OLMo Hybrid's
Gated DeltaNet layer (vLLM 0.32 layers/mamba/gdn/olmo_gdn_linear_attn.py) calls it once in its
__init__ to hand its GPU (FLA) kernels a scratch allocator; nothing of the KV cache depends on
it. The stand-in only lets the model be built so that vLLM sizes its KV cache and logs it; a
forward pass through the GDN kernels would still fail. Put on the oracle's PYTHONPATH
(`--env PYTHONPATH=tests/oracle/triton_allocator`)."""

from vllm.triton_utils import importing

if not hasattr(importing.TritonPlaceholder, "set_allocator"):
    importing.TritonPlaceholder.set_allocator = staticmethod(lambda alloc_fn: None)
