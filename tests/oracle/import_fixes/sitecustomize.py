"""The vLLM oracle's import fixes for multimodal wrappers whose modules the import-only torchvision
stand-in (../shared/tools/vllm-oracle-stubs) or vLLM's CPU build cannot load as they stand; nothing
of the KV cache depends on either. Put on the oracle's PYTHONPATH before the stubs
(`--env PYTHONPATH=tests/oracle/import_fixes:../shared/tools/vllm-oracle-stubs`).

- llvmlite's library handle (llvmlite.binding.ffi.lib, a `_lib_wrapper` whose __getattr__ wraps
  ANY name, `__dict__` included, as a C function): vLLM 0.32's CPU build rebinds its Triton
  kernel overrides by scanning every loaded module (vllm/triton_utils/dispatcher.py
  _rebind_kernels: `vars(value).get("kernel")` for each value with a __dict__) and fails on
  that handle once numba is loaded -- Kimi-K2.5's processor imports it
  (vllm/transformers_utils/processors/kimi_k25_vision_fused.py). Dunder names are refused
  here, so the scan skips the handle (it holds no kernel).
- `from torchvision.transforms.v2 import functional` (transformers' Gemma-4 image processor)
  finds the stub package's __getattr__ before the submodule; importing the submodule first
  binds it on the package.
"""

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

try:
    import torchvision

    if torchvision.__version__.endswith("+oracle-stub"):
        import torchvision.transforms.functional  # noqa: F401
        import torchvision.transforms.v2.functional  # noqa: F401
except Exception:  # noqa: BLE001 - no torchvision stand-in on the path
    pass
