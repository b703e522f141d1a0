"""Device work: allocate the real paged KV cache on a device and hold kvplan's predictions against
what the device reports. The only package that imports torch, and only inside functions, so that
importing kvplan (or running `kvplan estimate`) never loads it.

Modules, by responsibility:

- ``probe``: one `Device` type per backend (CPU, CUDA): probe, meter, peak, budget;
- ``formats``: storage formats and each cache kind's page layout in bytes;
- ``alloc``: the pool from vLLM's KV-cache config, and the search for the real maximum;
- ``decode``: attention and state-update maths, chunked to a workspace;
- ``step``: one decode step through the pool's block tables;
- ``verify``: one rank, end to end; ``ranks``: T x P ranks on torch.distributed;

The entry point is ``kvplan.analysis.device.ranks.verify_ranks`` (one rank:
``kvplan.analysis.device.verify.verify``, not re-exported here: the name would shadow the
module). The result's view is kvplan.present.verify_view.
"""

from __future__ import annotations

from kvplan.analysis.device.probe import (
    CPU_DEFAULT_CAP_BYTES,
    CpuDevice,
    CudaDevice,
    Device,
    DeviceMemory,
    probe_device,
    resolve_budget,
    resolve_device,
)
from kvplan.analysis.device.verify import VerifyResult

__all__ = [
    "CPU_DEFAULT_CAP_BYTES", "CpuDevice", "CudaDevice", "Device", "DeviceMemory", "VerifyResult",
    "probe_device", "resolve_budget", "resolve_device",
]
