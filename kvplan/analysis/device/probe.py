"""The device: what it has, how much of it verify may take, and how its memory is metered.

One `Device` type per backend. `CpuDevice` reads /proc (MemAvailable, the process RSS and its
peak, VmHWM, reset through /proc/self/clear_refs); `CudaDevice` asks the driver
(``torch.cuda.mem_get_info``) and torch's caching allocator (``memory_allocated``,
``memory_reserved``, ``max_memory_reserved``). Everything above this module talks to a Device, so
that tests can hand the search a fake one (out-of-memory, overhead) on any machine.
torch is imported only inside functions.
"""

from __future__ import annotations

import ctypes
import gc
import os
import platform
from dataclasses import dataclass
from typing import Any

from kvplan._util.errors import InputError
from kvplan._util.units import GiB, MiB
from kvplan.sources.machine import meminfo_bytes

CPU_DEFAULT_CAP_BYTES = 1 * GiB
CPU_DEFAULT_AVAILABLE_SHARE = 0.25  # of MemAvailable, when --budget-gib is not given
CPU_MAX_AVAILABLE_SHARE = 0.9  # all ranks' budgets together may not exceed this share on CPU
DEFAULT_MEM_FRACTION = 0.9
# What "allocator granularity" means for the hard budget: the CPU heap hands memory to the OS
# in pages but keeps freed chunks under glibc's mmap threshold (up to 32 MiB, adaptive), and
# the CUDA caching allocator reserves 2 MiB segments for small tensors, 20 MiB for large ones.
CPU_GRANULARITY_BYTES = 4 * MiB
CUDA_GRANULARITY_BYTES = 20 * MiB


@dataclass(frozen=True, kw_only=True)
class DeviceMemory:
    device: str  # "cpu" or "cuda:N"
    device_name: str
    total_bytes: int
    free_bytes: int  # CUDA: driver free memory; CPU: MemAvailable

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")


class Device:
    """A backend: probe it, meter it relative to a baseline, settle it, recognise its OOM."""

    name: str = "device"
    granularity_bytes: int = CPU_GRANULARITY_BYTES
    is_cuda: bool = False

    def __init__(self) -> None:
        self.base_used = self.base_allocated = self.base_reserved = 0

    # -- what the device is
    def probe(self) -> DeviceMemory:
        raise NotImplementedError

    # -- its own accounting (absolute)
    def used(self) -> int:
        raise NotImplementedError

    def allocated(self) -> int:
        return 0

    def reserved(self) -> int:
        return 0

    def peak(self) -> int:
        """The high-water mark of `used()` (CPU) or of reserved memory (CUDA) since the last
        `reset_peak()`."""
        raise NotImplementedError

    def reset_peak(self) -> None:
        raise NotImplementedError

    def settle(self) -> None:
        gc.collect()

    def sync(self) -> None:
        return None

    def is_oom(self, exc: BaseException) -> bool:
        return isinstance(exc, MemoryError) or (
            isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower())

    def compute_dtype(self, kv_dtype: str) -> tuple[Any, str]:
        import torch

        return torch.float32, "fp32"

    # -- relative to the run's baseline
    def baseline(self) -> None:
        self.settle()
        self.base_used = self.used()
        self.base_allocated = self.allocated()
        self.base_reserved = self.reserved()
        self.reset_peak()

    def usage(self) -> int:
        return self.used() - self.base_used

    def peak_usage(self) -> int:
        return self.peak() - (self.base_reserved if self.is_cuda else self.base_used)

    def file_backed_growth(self) -> int:
        """Resident file-backed pages (library code) faulted in since the baseline (CPU)."""
        return 0

    @property
    def torch_device(self) -> str:
        return self.name


def _meminfo() -> tuple[int, int]:
    """(MemTotal, MemAvailable) in bytes; os.sysconf where /proc/meminfo is missing."""
    values = meminfo_bytes()
    page = os.sysconf("SC_PAGE_SIZE")
    total = values.get("MemTotal") or os.sysconf("SC_PHYS_PAGES") * page
    available = values.get("MemAvailable") or os.sysconf("SC_AVPHYS_PAGES") * page
    return total, available


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return f"{line.partition(':')[2].strip()} ({os.cpu_count()} CPUs)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} CPUs)"


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def trim_heap() -> None:
    """Give freed heap pages back to the OS (glibc keeps freed blocks under 32 MiB otherwise)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class CpuDevice(Device):
    """The host. Used: the process's *anonymous* resident memory, ``resident - shared`` of
    /proc/self/statm (RssAnon). File-backed resident pages (RssFile) are left out: they are the
    shared libraries' code and data, which the kernel faults in the first time a path runs
    (torch's kernels, gloo's), shared with every process mapping the file and dropped, not
    swapped, under pressure. They are not memory verify takes, yet a freshly spawned rank
    faulted in 7.4-7.9 MiB of them during its first decode step (measured with
    ``RssFile`` before and after, qwen3-next TP 2 and llama-3.1-8b PP 2 ranks), which pushed
    its RSS peak past budget + granularity.

    Peak: VmHWM, the high-water mark of the whole RSS (the kernel keeps no anonymous one),
    reset to the current RSS by writing 5 to /proc/self/clear_refs (Linux >= 4.0). The peak
    over the start is the HWM less the RSS at the baseline less the file-backed pages faulted
    in since (measured at the end: they are never given back while the libraries stay mapped),
    i.e. the anonymous memory at the moment of the HWM. verify also runs its whole path once
    on a one-request pool before the baseline, so that little is faulted in during the run."""

    name = "cpu"
    granularity_bytes = CPU_GRANULARITY_BYTES

    def __init__(self) -> None:
        super().__init__()
        self.page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        self._peak_resettable = True
        self.base_resident = self.base_file_backed = 0

    def probe(self) -> DeviceMemory:
        total, available = _meminfo()
        return DeviceMemory(device="cpu", device_name=_cpu_name(), total_bytes=total,
                            free_bytes=available)

    def _statm(self) -> tuple[int, int]:
        """(resident, shared) bytes: the whole RSS and its file-backed + shmem part."""
        try:
            with open("/proc/self/statm", encoding="ascii") as fh:
                fields = fh.read().split()
            return int(fields[1]) * self.page, int(fields[2]) * self.page
        except (OSError, IndexError, ValueError):
            import resource  # no /proc: the peak RSS is the best available (kB on Linux)

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, 0

    def used(self) -> int:
        resident, shared = self._statm()
        return resident - shared

    def resident(self) -> int:
        return self._statm()[0]

    def file_backed(self) -> int:
        return self._statm()[1]

    def peak(self) -> int:
        hwm = _status_kib("VmHWM")
        return max(hwm if hwm is not None else 0, self.resident())

    def reset_peak(self) -> None:
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                fh.write("5")
        except OSError:
            self._peak_resettable = False

    def baseline(self) -> None:
        super().baseline()
        self.base_resident, self.base_file_backed = self._statm()

    def file_backed_growth(self) -> int:
        return max(0, self.file_backed() - self.base_file_backed)

    def peak_usage(self) -> int:
        return self.peak() - self.base_resident - self.file_backed_growth()

    @property
    def peak_is_exact(self) -> bool:
        return self._peak_resettable and _status_kib("VmHWM") is not None

    def settle(self) -> None:
        gc.collect()
        trim_heap()


class CudaDevice(Device):
    """A CUDA GPU. Used: total - driver free memory; peak: torch's max_memory_reserved."""

    granularity_bytes = CUDA_GRANULARITY_BYTES
    is_cuda = True

    def __init__(self, index: int) -> None:
        super().__init__()
        import torch

        self.torch = torch
        self.index = index
        self.name = f"cuda:{index}"

    def probe(self) -> DeviceMemory:
        free, total = self.torch.cuda.mem_get_info(self.index)
        return DeviceMemory(device=self.name,
                            device_name=self.torch.cuda.get_device_name(self.index),
                            total_bytes=total, free_bytes=free)

    def used(self) -> int:
        self.sync()
        free, total = self.torch.cuda.mem_get_info(self.index)
        return total - free

    def allocated(self) -> int:
        return self.torch.cuda.memory_allocated(self.index)

    def reserved(self) -> int:
        return self.torch.cuda.memory_reserved(self.index)

    def peak(self) -> int:
        return self.torch.cuda.max_memory_reserved(self.index)

    def reset_peak(self) -> None:
        self.torch.cuda.reset_peak_memory_stats(self.index)

    def settle(self) -> None:
        gc.collect()
        self.sync()
        self.torch.cuda.empty_cache()

    def sync(self) -> None:
        self.torch.cuda.synchronize(self.index)

    def is_oom(self, exc: BaseException) -> bool:
        oom = getattr(self.torch.cuda, "OutOfMemoryError", None)
        return (oom is not None and isinstance(exc, oom)) or super().is_oom(exc)

    def compute_dtype(self, kv_dtype: str) -> tuple[Any, str]:
        """CUDA computes in the cache's own 16/32-bit type (bf16 for quantised caches)."""
        torch = self.torch
        name = kv_dtype if kv_dtype in ("fp32", "fp16") else "bf16"
        return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name], name


def resolve_device(device: str, *, local_rank: int = 0) -> str:
    """`--device` to a torch device string: "cpu" or "cuda:N". InputError if unknown or absent.
    Under torch.distributed a bare "cuda" means this rank's local GPU."""
    import torch

    name = device.strip().lower()
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return "cpu"
    if name == "cuda" or name.startswith("cuda:"):
        index_text = name.partition(":")[2] or str(local_rank)
        if not index_text.isdigit():
            raise InputError(f"--device: expected cuda:N with N a GPU index, got {device!r}")
        if not torch.cuda.is_available():
            build = (f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build")
            raise InputError(f"--device {device}: no CUDA device is available (torch "
                             f"{torch.__version__}, {build}); use --device cpu")
        count = torch.cuda.device_count()
        if int(index_text) >= count:
            raise InputError(f"--device {device}: only {count} CUDA device(s) (0..{count - 1})")
        return f"cuda:{int(index_text)}"
    raise InputError(f"--device: expected cuda, cuda:N, cpu or auto, got {device!r}")


def make_device(resolved: str) -> Device:
    if resolved == "cpu":
        return CpuDevice()
    return CudaDevice(int(resolved.partition(":")[2] or 0))


def probe_device(device: str) -> DeviceMemory:
    """Total and free memory of a resolved device ("cpu" or "cuda:N")."""
    return make_device(device).probe()


def resolve_budget(mem: DeviceMemory, *, budget_bytes: int | None,
                   mem_fraction: float = DEFAULT_MEM_FRACTION,
                   local_ranks: int = 1) -> tuple[int, str]:
    """The bytes verify may take on one rank, and how they were chosen. On CPU the
    `local_ranks` processes of this machine share its memory."""
    if not 0 < mem_fraction <= 1:
        raise InputError(f"--mem-fraction: must be in (0, 1], got {mem_fraction}")
    if budget_bytes is not None:
        if budget_bytes <= 0:
            raise InputError(f"--budget-gib: must be > 0, got {budget_bytes / GiB:g}")
        too_much = budget_bytes * local_ranks > CPU_MAX_AVAILABLE_SHARE * mem.free_bytes
        if not mem.is_cuda and too_much:
            ranks = f" x {local_ranks} ranks" if local_ranks > 1 else ""
            raise InputError(
                f"--budget-gib: {budget_bytes / GiB:.2f} GiB{ranks} exceeds "
                f"{CPU_MAX_AVAILABLE_SHARE:.0%} of this machine's available memory "
                f"({mem.free_bytes / GiB:.2f} GiB)")
        if mem.is_cuda and budget_bytes > mem.free_bytes:
            raise InputError(f"--budget-gib: {budget_bytes / GiB:.2f} GiB exceeds the free memory "
                             f"of {mem.device} ({mem.free_bytes / GiB:.2f} GiB)")
        return budget_bytes, "given (--budget-gib)"
    if not mem.is_cuda:
        share = CPU_DEFAULT_AVAILABLE_SHARE / local_ranks
        cap = min(CPU_DEFAULT_CAP_BYTES, int(mem.free_bytes * share))
        return cap, ("min(1 GiB, 25% of available memory" + (
            f" / {local_ranks} ranks" if local_ranks > 1 else "") + "): the CPU default cap")
    in_use = mem.total_bytes - mem.free_bytes
    budget = int(mem.total_bytes * mem_fraction) - in_use
    if budget <= 0:
        raise InputError(f"--mem-fraction {mem_fraction}: nothing is free within it on "
                         f"{mem.device} ({in_use / GiB:.2f} of {mem.total_bytes / GiB:.2f} GiB "
                         "already in use)")
    return budget, "total x mem_fraction - memory already in use"
