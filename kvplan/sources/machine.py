"""What this machine can give a command: the memory it may still take, for the bounds set before
work starts (`kvplan sweep`'s points, issue 32). Read once per command; never raises."""

from __future__ import annotations

import os
import resource
from pathlib import Path


def meminfo_bytes() -> dict[str, int]:
    """/proc/meminfo's numeric fields in bytes (MemTotal, MemAvailable, ...; it counts in kB);
    empty where it cannot be read."""
    values: dict[str, int] = {}
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    values[key] = int(parts[0]) * 1024  # kB
    except OSError:
        pass
    return values


def _meminfo_available() -> int | None:
    """MemAvailable of /proc/meminfo, in bytes (the kernel's estimate of what can be allocated
    without swapping); os.sysconf's free pages where /proc is missing."""
    available = meminfo_bytes().get("MemAvailable")
    if available is not None:
        return available
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def _address_space_left() -> int | None:
    """RLIMIT_AS (ulimit -v, a container's or a test's cap) less this process's address space."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    size = 0
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return max(0, soft - size)


def _cgroup_left() -> int | None:
    """A cgroup v2 memory limit (a container's) less what the group uses already."""
    base = Path("/sys/fs/cgroup")
    try:
        limit = (base / "memory.max").read_text(encoding="ascii").strip()
        if limit == "max":
            return None
        used = int((base / "memory.current").read_text(encoding="ascii").strip())
        return max(0, int(limit) - used)
    except (OSError, ValueError):
        return None


def available_memory_bytes() -> int | None:
    """The memory this process may still take: the least of the kernel's MemAvailable, the
    address-space limit left and the cgroup's limit left; None when none can be read."""
    known = [v for v in (_meminfo_available(), _address_space_left(), _cgroup_left())
             if v is not None]
    return min(known) if known else None


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, which a container's cpuset
    narrows), at least 1: the default `--jobs` of a search."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
