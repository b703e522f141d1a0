"""GPU presets: memory capacity, what engines see as the device total, bandwidth and peak FLOPs.

Units are in the field names. Three memory figures are easy to confuse:

* ``memory_bytes`` -- the marketing capacity. HBM and GDDR capacities are binary: an "80GB" H100
  has 80 GiB = 85,899,345,920 B of DRAM (nvidia-smi shows 81,559 MiB of it), an "80GB" A100
  shows exactly 81,920 MiB, a "141GB" H200 has 141 GiB, an MI300X "192 GB" is 192 GiB.
* ``reported_total_bytes`` -- what ``torch.cuda.mem_get_info()[1]`` returns, i.e. the
  ``total_gpu_memory`` vLLM multiplies by ``gpu_memory_utilization`` and the "total capacity" in
  PyTorch's OOM message. It is below the capacity (the driver/firmware keep some; GDDR6 with ECC
  on, as on the L40S, also loses 1/16). It varies by a few hundredths of a GiB with the driver
  and CUDA version (H100 80GB logs show 79.11-79.22 GiB), so each figure is one observed log line.
* ``total_bytes`` -- the reported figure when known, else the capacity.

FLOPs are DENSE tensor-core peaks. Datasheets usually print the 2:4-sparsity figure in the same
row ("1,979 TFLOPS*"); that number is halved here. Bandwidth is decimal (TB/s = 10**12 B/s).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError
from .units import GB, TB, GiB

TFLOPS = 10**12  # FLOP/s


@dataclass(frozen=True, kw_only=True)
class GPU:
    name: str
    """Preset key, e.g. ``"H100-80GB"``."""
    full_name: str
    """Product name, e.g. ``"NVIDIA H100 80GB HBM3 (SXM5)"``."""
    memory_bytes: int
    """Marketing capacity in bytes (binary for HBM/GDDR: 80GB -> 80 GiB)."""
    reported_total_bytes: int | None
    """Device total as torch/vLLM report it, or None where no public log figure was found."""
    reported_total_source: str
    """Where ``reported_total_bytes`` was seen (log line gist, URL); "" when it is None."""
    hbm_bytes_per_s: int
    """Peak DRAM bandwidth in bytes/s (decimal)."""
    peak_bf16_flops_per_s: int
    """Dense (no sparsity) bf16 tensor-core peak."""
    peak_fp8_flops_per_s: int | None
    """Dense fp8 tensor-core peak; None where the card has no fp8 tensor cores (A100)."""
    source: str
    """Datasheet URL for memory, bandwidth and FLOPs."""
    is_a100: bool = False
    """vLLM treats A100 specially when choosing the default max_num_batched_tokens."""

    @property
    def total_bytes(self) -> int:
        """What engines see as the device total: the reported figure when known, else capacity."""
        if self.reported_total_bytes is not None:
            return self.reported_total_bytes
        return self.memory_bytes


_A100_DATASHEET = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
)
_H100_DATASHEET = "https://www.nvidia.com/en-us/data-center/h100/"

_PRESETS: tuple[GPU, ...] = (
    # A100 40GB (SXM4): 40 GiB HBM2 (nvidia-smi 40,960 MiB), 1,555 GB/s.
    # Dense bf16 312 TFLOPS (624 is the sparse figure). No fp8 tensor cores.
    # Reported: PyTorch OOM "(GPU 1; 39.39 GiB total capacity; 22.45 GiB already allocated ...)"
    # in a note about batch_size=20 OOMing "on A100 40GB"; vLLM logs on 40 GB cards also print
    # "total_gpu_memory (39.39GiB) x gpu_memory_utilization (0.90) = 35.45GiB" (other drivers /
    # PCIe boards: 39.49-39.56 GiB).
    GPU(
        name="A100-40GB",
        full_name="NVIDIA A100-SXM4-40GB",
        memory_bytes=40 * GiB,
        reported_total_bytes=int(39.39 * GiB),
        reported_total_source=(
            "PyTorch OOM on A100 40GB: '(GPU 1; 39.39 GiB total capacity; 22.45 GiB already "
            "allocated; 8.12 MiB free)'; vLLM: 'total_gpu_memory (39.39GiB) x "
            "gpu_memory_utilization (0.90) = 35.45GiB'"
        ),
        hbm_bytes_per_s=1_555 * GB,
        peak_bf16_flops_per_s=312 * TFLOPS,
        peak_fp8_flops_per_s=None,
        source=_A100_DATASHEET,
        is_a100=True,
    ),
    # A100 80GB (SXM4): 80 GiB HBM2e (nvidia-smi 81,920 MiB), 2,039 GB/s (PCIe: 1,935 GB/s).
    # Dense bf16 312 TFLOPS (624 sparse). No fp8.
    # Reported: PyTorch OOM "GPU 0 has a total capacity of 79.15 GiB" quoted for "80GB 的 A100";
    # vLLM "total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.90) = 71.23GiB". Other
    # drivers print 79.25-79.35 GiB.
    GPU(
        name="A100-80GB",
        full_name="NVIDIA A100-SXM4-80GB",
        memory_bytes=80 * GiB,
        reported_total_bytes=int(79.15 * GiB),
        reported_total_source=(
            "PyTorch OOM on an 80GB A100: 'GPU 0 has a total capacity of 79.15 GiB'; vLLM: "
            "'total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.90) = 71.23GiB'"
        ),
        hbm_bytes_per_s=2_039 * GB,
        peak_bf16_flops_per_s=312 * TFLOPS,
        peak_fp8_flops_per_s=None,
        source=_A100_DATASHEET,
        is_a100=True,
    ),
    # H100 SXM5 80GB: 80 GiB HBM3 (nvidia-smi 81,559 MiB), 3.35 TB/s.
    # Datasheet bf16 1,979 TFLOPS* and fp8 3,958 TFLOPS* are sparse: dense 989.5 and 1,979.
    # Reported: PyTorch OOM on an 8xH100 node "GPU 0 has a total capacity of 79.19 GiB of which
    # 14.75 MiB is free"; vLLM prints the same figure as "total_gpu_memory (79.19GiB) x
    # gpu_memory_utilization". Other drivers: 79.11 / 79.18 / 79.22 GiB (vLLM PR #12126 on
    # H100-80G: "total_gpu_memory (79.22GiB)").
    GPU(
        name="H100-80GB",
        full_name="NVIDIA H100 80GB HBM3 (SXM5)",
        memory_bytes=80 * GiB,
        reported_total_bytes=int(79.19 * GiB),
        reported_total_source=(
            "PyTorch OOM on 8xH100 80GB HBM3: 'GPU 0 has a total capacity of 79.19 GiB of which "
            "14.75 MiB is free'; vLLM 'total_gpu_memory (79.19GiB) x gpu_memory_utilization'; "
            "driver-dependent, cf. 79.22GiB in https://github.com/vllm-project/vllm/pull/12126"
        ),
        hbm_bytes_per_s=3_350 * GB,
        peak_bf16_flops_per_s=989_500 * 10**9,
        peak_fp8_flops_per_s=1_979 * TFLOPS,
        source=_H100_DATASHEET,
    ),
    # H100 PCIe 80GB: 80 GiB HBM2e, 2.0 TB/s.
    # Datasheet bf16 1,513 TFLOPS* and fp8 3,026 TFLOPS* are sparse: dense 756.5 and 1,513
    # (cf. https://github.com/qoofyk/LLM_Sizing_Guide/issues/3).
    # Reported: no public log line found that names the PCIe board.
    GPU(
        name="H100-PCIe",
        full_name="NVIDIA H100 PCIe 80GB",
        memory_bytes=80 * GiB,
        reported_total_bytes=None,
        reported_total_source="",
        hbm_bytes_per_s=2 * TB,
        peak_bf16_flops_per_s=756_500 * 10**9,
        peak_fp8_flops_per_s=1_513 * TFLOPS,
        source=_H100_DATASHEET,
    ),
    # H20 (China-market Hopper): 96 GiB HBM3 (6 x 16 GiB stacks), 4.0 TB/s.
    # Dense bf16 148 TFLOPS, dense fp8 296 TFLOPS. NVIDIA publishes no public datasheet; these
    # are the partner/press figures (e.g. https://willitrunai.com/es/gpus/h20-96gb).
    # Reported: no public log line found that names the H20.
    GPU(
        name="H20",
        full_name="NVIDIA H20 96GB HBM3",
        memory_bytes=96 * GiB,
        reported_total_bytes=None,
        reported_total_source="",
        hbm_bytes_per_s=4 * TB,
        peak_bf16_flops_per_s=148 * TFLOPS,
        peak_fp8_flops_per_s=296 * TFLOPS,
        source="https://willitrunai.com/es/gpus/h20-96gb (no official NVIDIA datasheet)",
    ),
    # H200 SXM 141GB: 141 GiB HBM3e (nvidia-smi 143,771 MiB), 4.8 TB/s.
    # Same tensor cores as H100 SXM: bf16 1,979* / fp8 3,958* sparse -> dense 989.5 / 1,979.
    # Reported: vLLM on an 8x NVIDIA H200 node (nvidia-smi "143771MiB") "the current vLLM
    # instance can use total_gpu_memory (139.81GiB) x gpu_memory_utilization (0.85) = 118.84GiB".
    # PyTorch OOMs on 8xH200 print 139.80 or 139.81 GiB depending on driver.
    GPU(
        name="H200",
        full_name="NVIDIA H200 141GB HBM3e (SXM)",
        memory_bytes=141 * GiB,
        reported_total_bytes=int(139.81 * GiB),
        reported_total_source=(
            "vLLM on 8x NVIDIA H200: 'total_gpu_memory (139.81GiB) x gpu_memory_utilization "
            "(0.85) = 118.84GiB'; PyTorch OOMs on H200: 'total capacity of 139.80 GiB'"
        ),
        hbm_bytes_per_s=4_800 * GB,
        peak_bf16_flops_per_s=989_500 * 10**9,
        peak_fp8_flops_per_s=1_979 * TFLOPS,
        source="https://www.nvidia.com/en-us/data-center/h200/",
    ),
    # B200 (HGX B200, 1,000 W): 180 GiB HBM3e enabled of 192 GiB physical (DGX B200: 1,440 GB
    # for 8 GPUs; nvidia-smi 183,359 MiB), 8 TB/s.
    # HGX B200 bf16 4.5 PFLOPS* / fp8 9 PFLOPS* are sparse: dense 2,250 and 4,500 TFLOPS.
    # Reported: PyTorch OOM on 8xB200 "GPU 2 has a total capacity of 178.36 GiB"; many logs
    # print 178.35 GiB; torch.cuda.mem_get_info on SM100 "free: 177.7 GiB / 178.4 GiB"
    # (https://github.com/sgl-project/sglang/issues/25225).
    GPU(
        name="B200",
        full_name="NVIDIA B200 (HGX, 180GB HBM3e)",
        memory_bytes=180 * GiB,
        reported_total_bytes=int(178.35 * GiB),
        reported_total_source=(
            "PyTorch OOM on B200: 'GPU 0 has a total capacity of 178.35 GiB'; mem_get_info on "
            "SM100 '177.7 GiB / 178.4 GiB' (https://github.com/sgl-project/sglang/issues/25225)"
        ),
        hbm_bytes_per_s=8 * TB,
        peak_bf16_flops_per_s=2_250 * TFLOPS,
        peak_fp8_flops_per_s=4_500 * TFLOPS,
        source="https://www.nvidia.com/en-us/data-center/hgx/",
    ),
    # L40S: 48 GiB GDDR6 with ECC (on by default, costs 1/16: nvidia-smi 46,068 MiB), 864 GB/s.
    # Datasheet "BF16 362.05 | 733 TFLOPS*", "FP8 733 | 1,466 TFLOPS*": dense 362.05 and 733.
    # Reported: vLLM on L40S "CUDA out of memory ... GPU 0 has a total capacity of 44.39 GiB"
    # (note: "44.4 GiB total per L40S"); vLLM "total_gpu_memory (44.39GiB) x
    # gpu_memory_utilization (0.92) = 40.84GiB". Other drivers: 44.31-44.40 GiB.
    GPU(
        name="L40S",
        full_name="NVIDIA L40S 48GB GDDR6",
        memory_bytes=48 * GiB,
        reported_total_bytes=int(44.39 * GiB),
        reported_total_source=(
            "vLLM on L40S: 'GPU 0 has a total capacity of 44.39 GiB of which 21.31 MiB is free'; "
            "'total_gpu_memory (44.39GiB) x gpu_memory_utilization (0.92) = 40.84GiB'"
        ),
        hbm_bytes_per_s=864 * GB,
        peak_bf16_flops_per_s=362_050 * 10**9,
        peak_fp8_flops_per_s=733 * TFLOPS,
        source="https://www.nvidia.com/en-us/data-center/l40s/",
    ),
    # GeForce RTX 4090: 24 GiB GDDR6X (nvidia-smi 24,564 MiB), 1,008 GB/s.
    # Ada whitepaper, GeForce rates with FP32 accumulate: bf16 165.2 (330.4 sparse), fp8 330.3
    # (660.6 sparse) TFLOPS.
    # Reported: PyTorch OOM "(GPU 0; 23.65 GiB total capacity; 11.70 GiB already allocated ...)"
    # (https://github.com/MotrixLab/AiOS/issues/29, also TRI-ML/packnet-sfm#250); newer
    # driver/torch prints "total capacity of 23.64 GiB" (ali-vilab/VGen#104).
    GPU(
        name="RTX-4090",
        full_name="NVIDIA GeForce RTX 4090 24GB GDDR6X",
        memory_bytes=24 * GiB,
        reported_total_bytes=int(23.65 * GiB),
        reported_total_source=(
            "PyTorch OOM on RTX 4090: '(GPU 0; 23.65 GiB total capacity; 11.70 GiB already "
            "allocated ...)' https://github.com/MotrixLab/AiOS/issues/29"
        ),
        hbm_bytes_per_s=1_008 * GB,
        peak_bf16_flops_per_s=165_200 * 10**9,
        peak_fp8_flops_per_s=330_300 * 10**9,
        source=(
            "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/"
            "nvidia-ada-gpu-architecture.pdf"
        ),
    ),
    # AMD Instinct MI300X: 192 GiB HBM3 (8 x 24 GiB), 5.3 TB/s.
    # Datasheet bf16 1,307.4 TFLOPS (2,614.9 with sparsity), fp8 2,614.9 (5,229.8 with sparsity).
    # Reported: PyTorch/ROCm "HIP out of memory ... GPU 0 has a total capacity of 191.98 GiB"
    # (vLLM on MI300X). Some ROCm versions report 191.69 GiB (= rocm-smi's 205,822,885,888 B).
    GPU(
        name="MI300X",
        full_name="AMD Instinct MI300X 192GB HBM3",
        memory_bytes=192 * GiB,
        reported_total_bytes=int(191.98 * GiB),
        reported_total_source=(
            "ROCm PyTorch OOM under vLLM on MI300X: 'HIP out of memory. Tried to allocate "
            "3.25 GiB. GPU 0 has a total capacity of 191.98 GiB of which 1.32 GiB is free'"
        ),
        hbm_bytes_per_s=5_300 * GB,
        peak_bf16_flops_per_s=1_307_400 * 10**9,
        peak_fp8_flops_per_s=2_614_900 * 10**9,
        source=(
            "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
            "amd-instinct-mi300x-data-sheet.pdf"
        ),
    ),
)

GPUS: dict[str, GPU] = {gpu.name: gpu for gpu in _PRESETS}
"""The presets, keyed by name."""

_BY_LOWER = {name.lower(): gpu for name, gpu in GPUS.items()}


def get_gpu(name: str) -> GPU:
    """Look up a preset by name, case-insensitively (``"h100-80gb"`` works)."""
    gpu = _BY_LOWER.get(name.strip().lower())
    if gpu is None:
        raise InputError(f"--gpu: unknown GPU {name!r} (known: {', '.join(GPUS)})")
    return gpu
