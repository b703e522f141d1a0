"""The vLLM oracle on a host with AMX, run as on one without: vLLM 0.32's CPU build picks its MLA
backend and block by the host (platforms/cpu.py check_and_update_config: with
`torch.cpu._is_amx_tile_supported()` the AMX_MLA backend and, with no --block-size, block 128;
without, the reference CPU_MLA and block 16). kvplan sizes CPU_MLA's 16 (it cannot tell the
host: kvplan.engines.vllm.block_size), so MLA cases recorded on an AMX host put this folder on
the oracle's PYTHONPATH (`--env PYTHONPATH=<abs path>/tests/oracle/no_amx`). Only the backend
choice changes; the latent row per token and the layer count are vLLM's own.
"""

try:
    import torch

    torch.cpu._is_amx_tile_supported = lambda: False
except Exception:  # noqa: BLE001 - outside the vLLM venv: nothing to patch
    pass
