"""The vLLM oracle's stand-in for `__dict__` on llvmlite's library handle (llvmlite.binding.ffi.lib,
a `_lib_wrapper` whose __getattr__ wraps ANY name, `__dict__` included, as a C function). vLLM
0.32's CPU build rebinds its Triton kernel overrides by scanning every loaded module
(vllm/triton_utils/dispatcher.py _rebind_kernels: `vars(value).get("kernel")` for each value
with a __dict__) and fails on that handle once numba is loaded -- Kimi-K2.5's processor imports
it (vllm/transformers_utils/processors/kimi_k25_vision_fused.py). Here the handle's __dict__ is
an empty dict (it holds no kernel), so the scan skips it; nothing of the KV cache depends on it.
Put on the oracle's PYTHONPATH (`--env PYTHONPATH=...`)."""

try:
    from llvmlite.binding import ffi

    _wrap = ffi._lib_wrapper.__getattr__

    def _getattr(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _wrap(self, name)

    ffi._lib_wrapper.__getattr__ = _getattr
except Exception:  # noqa: BLE001 - outside the vLLM venv: nothing to patch
    pass
