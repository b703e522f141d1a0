"""The vLLM oracle's stand-in for `triton.set_allocator` on vLLM's CPU build, where `triton` is
vLLM's TritonPlaceholder (vllm/triton_utils/importing.py) without that function. OLMo Hybrid's
Gated DeltaNet layer (vLLM 0.32 layers/mamba/gdn/olmo_gdn_linear_attn.py) calls it once in its
__init__ to hand its GPU (FLA) kernels a scratch allocator; nothing of the KV cache depends on
it. The stand-in only lets the model be built; with it, vLLM 0.32's CPU build sizes the KV cache
and starts the engine (profile, KV cache, warm-up; recorded in
tests/data/oracle/olmo-hybrid-7b). Put on the oracle's PYTHONPATH
(`--env PYTHONPATH=tests/oracle/triton_allocator`)."""

from vllm.triton_utils import importing

if not hasattr(importing.TritonPlaceholder, "set_allocator"):
    importing.TritonPlaceholder.set_allocator = staticmethod(lambda alloc_fn: None)
