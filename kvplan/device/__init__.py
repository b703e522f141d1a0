"""Device work: allocate the real paged KV cache on a device and hold kvplan's predictions against
what the device reports. The only package that imports torch, and only inside functions, so that
importing kvplan (or running `kvplan estimate`) never loads it."""

from __future__ import annotations

from .verify import (
    CPU_DEFAULT_CAP_BYTES,
    DeviceMemory,
    VerifyResult,
    probe_device,
    resolve_budget,
    resolve_device,
    verify,
)

__all__ = [
    "CPU_DEFAULT_CAP_BYTES", "DeviceMemory", "VerifyResult", "probe_device", "resolve_budget",
    "resolve_device", "verify",
]
