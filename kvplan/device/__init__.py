"""Device work: allocate the real paged KV cache on a device and hold kvplan's predictions against
what the device reports. The only package that imports torch, and only inside functions, so that
importing kvplan (or running `kvplan estimate`) never loads it.

The entry point is ``kvplan.device.verify.verify`` (not re-exported here: the name would shadow
the ``kvplan.device.verify`` module).
"""

from __future__ import annotations

from kvplan.device.verify import (
    CPU_DEFAULT_CAP_BYTES,
    DeviceMemory,
    VerifyResult,
    probe_device,
    resolve_budget,
    resolve_device,
)

__all__ = [
    "CPU_DEFAULT_CAP_BYTES", "DeviceMemory", "VerifyResult", "probe_device", "resolve_budget",
    "resolve_device",
]
