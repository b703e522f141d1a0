"""GPU presets: memory capacity, what engines see as the device total, bandwidth and peak FLOPs.

Units are in the field names. Three memory figures are easy to confuse:

* ``memory_bytes`` -- the marketing capacity. HBM and GDDR capacities are binary: an "80GB" H100
  has 80 GiB = 85,899,345,920 B of DRAM (nvidia-smi shows 81,559 MiB of it), an "80GB" A100
  shows exactly 81,920 MiB, a "141GB" H200 has 141 GiB, an MI300X "192 GB" is 192 GiB. The
  check that settles it: a decimal reading (80 GB = 74.5 GiB) would sit *below* what the
  driver reports, which is impossible.
* ``reported_total_bytes`` -- the best driver-reported total a public log shows. Preferably
  ``torch.cuda.mem_get_info()[1]`` (``reported_total_kind == "mem_get_info"``): the
  ``total_gpu_memory`` vLLM multiplies by ``gpu_memory_utilization``, the "total capacity" in
  PyTorch's OOM message and the total SGLang's "avail mem" counts down from. Where no such line
  was found but an nvidia-smi table was, its ``MiB`` total (``"nvidia-smi"``), which on the
  cards where both are known is 0.3-0.85 GiB *above* mem_get_info (H100 80GB: 81,559 MiB =
  79.65 GiB vs 79.19 GiB; RTX 4090: 23.99 vs 23.65) -- still far closer than the capacity.
  Both are below the capacity: the driver/firmware keep some, and GDDR6 with ECC on (L4, A10G,
  L40S) also loses 1/16. They vary by a few hundredths of a GiB with driver and CUDA version
  (H100 80GB logs show 79.11-79.22 GiB), so each figure is one observed log line, quoted with
  its URL in ``reported_total_source``.
* ``total_bytes`` -- the reported figure when known, else the capacity.

``smi_total_bytes`` keeps the nvidia-smi figure separately where a log shows it: SGLang sizes
its defaults (``mem_fraction_static``, cuda-graph batch sizes) from ``nvidia-smi
--query-gpu=memory.total``, not from torch.

FLOPs are DENSE tensor-core peaks. Datasheets usually print the 2:4-sparsity figure in the same
row ("1,979 TFLOPS*"); that number is halved here. GeForce cards run bf16 and fp8 matmuls at the
"FP32 accumulate" rate of their whitepaper, half the "FP16 accumulate" headline. Bandwidth is
decimal (TB/s = 10**12 B/s).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from kvplan._util.errors import InputError
from kvplan._util.units import GB, TB, GiB, MiB

TFLOPS = 10**12  # FLOP/s
GFLOPS = 10**9  # FLOP/s, for datasheet figures with a fractional TFLOPS part (989.5)

NO_LOG = "no public start-up log found: total_bytes falls back to the nominal capacity"


@dataclass(frozen=True, kw_only=True)
class GPU:
    name: str
    """Preset key, e.g. ``"H100-80GB"``."""
    full_name: str
    """Product name, e.g. ``"NVIDIA H100 80GB HBM3 (SXM5)"``."""
    memory_bytes: int
    """Marketing capacity in bytes (binary for HBM/GDDR: 80GB -> 80 GiB)."""
    reported_total_bytes: int | None
    """Driver-reported device total from a public log, or None where none was found."""
    reported_total_source: str
    """The log line and its URL; where ``reported_total_bytes`` is None, why (``NO_LOG``)."""
    hbm_bytes_per_s: int
    """Peak DRAM bandwidth in bytes/s (decimal)."""
    peak_bf16_flops_per_s: int
    """Dense (no sparsity) bf16 tensor-core peak."""
    peak_fp8_flops_per_s: int | None
    """Dense fp8 tensor-core peak; None where the card has no fp8 tensor cores (Ampere)."""
    source: str
    """Datasheet URL for memory, bandwidth and FLOPs (and how a figure was derived from it)."""
    is_a100: bool = False
    """vLLM treats A100 specially when choosing the default max_num_batched_tokens."""
    reported_total_kind: str = ""
    """``"mem_get_info"`` (torch/vLLM/SGLang), ``"nvidia-smi"``, or "" when unknown."""
    smi_total_bytes: int | None = None
    """nvidia-smi's ``MiB`` total where a public log shows it (what SGLang sizes defaults by)."""
    smi_total_source: str = ""
    """URL of the nvidia-smi table; "" when ``smi_total_bytes`` is None."""
    platform: str = "cuda"
    """Software platform: ``"cuda"`` or ``"rocm"``."""
    unified_memory: bool = False
    """CPU and GPU share one DRAM pool (GB10 / DGX Spark): the OS's memory counts as used."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted by `get_gpu` (compared case- and separator-insensitively)."""

    @property
    def total_bytes(self) -> int:
        """What engines see as the device total: the reported figure when known, else capacity."""
        if self.reported_total_bytes is not None:
            return self.reported_total_bytes
        return self.memory_bytes


def _gib(text: str) -> int:
    """A GiB figure as a log prints it (``"79.19"``), in bytes, rounded down."""
    return int(float(text) * GiB)


_A100_DATASHEET = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
)
_H100_DATASHEET = "https://www.nvidia.com/en-us/data-center/h100/"
_GA102_WHITEPAPER = (
    "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
)
_ADA_WHITEPAPER = (
    "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
)
_RTX_BLACKWELL_WHITEPAPER = (
    "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/"
    "nvidia-rtx-blackwell-gpu-architecture.pdf"
)
# nvidia-smi totals of several cloud GPU types, listed in one place by Modal.
_MODAL_SMI = "https://github.com/modal-labs/modal-client/pull/2797"

_PRESETS: tuple[GPU, ...] = (
    # ---- Ampere ------------------------------------------------------------------------------
    # A100 40GB (SXM4): 40 GiB HBM2 (nvidia-smi 40,960 MiB), 1,555 GB/s.
    # Dense bf16 312 TFLOPS (624 is the sparse figure). No fp8 tensor cores.
    # Reported: PyTorch OOM "(GPU 1; 39.39 GiB total capacity; 22.45 GiB already allocated ...)"
    # in a note about batch_size=20 OOMing "on A100 40GB"; vLLM logs on 40 GB cards also print
    # "total_gpu_memory (39.39GiB) x gpu_memory_utilization (0.90) = 35.45GiB". Other drivers /
    # PCIe boards print 39.49-39.56 GiB, e.g. "GPU 0 has a total capacity of 39.50 GiB" on "one
    # A100" (https://github.com/TianheWu/CoSeR/issues/10).
    GPU(
        name="A100-40GB",
        full_name="NVIDIA A100-SXM4-40GB",
        memory_bytes=40 * GiB,
        reported_total_bytes=_gib("39.39"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "PyTorch OOM on A100 40GB: '(GPU 1; 39.39 GiB total capacity; 22.45 GiB already "
            "allocated; 8.12 MiB free)'; vLLM: 'total_gpu_memory (39.39GiB) x "
            "gpu_memory_utilization (0.90) = 35.45GiB'; another driver: 'total capacity of "
            "39.50 GiB' https://github.com/TianheWu/CoSeR/issues/10"
        ),
        smi_total_bytes=40_960 * MiB,
        smi_total_source=_MODAL_SMI,
        hbm_bytes_per_s=1_555 * GB,
        peak_bf16_flops_per_s=312 * TFLOPS,
        peak_fp8_flops_per_s=None,
        source=_A100_DATASHEET,
        is_a100=True,
        aliases=("A100-SXM4-40GB", "A100-40G", "A100-PCIE-40GB"),
    ),
    # A100 80GB (SXM4): 80 GiB HBM2e (nvidia-smi 81,920 MiB), 2,039 GB/s (PCIe: 1,935 GB/s).
    # Dense bf16 312 TFLOPS (624 sparse). No fp8.
    # Reported: PyTorch OOM "GPU 0 has a total capacity of 79.15 GiB" quoted for "80GB 的 A100";
    # vLLM "total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.90) = 71.23GiB". Other
    # drivers print 79.14-79.35 GiB ("total capacity of 79.14 GiB" on "a single NVIDIA A100 card
    # which has 80GB", https://github.com/lianqi1008/Control-GIC/issues/6).
    GPU(
        name="A100-80GB",
        full_name="NVIDIA A100-SXM4-80GB",
        memory_bytes=80 * GiB,
        reported_total_bytes=_gib("79.15"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "PyTorch OOM on an 80GB A100: 'GPU 0 has a total capacity of 79.15 GiB'; vLLM: "
            "'total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.90) = 71.23GiB'; another "
            "driver: 'total capacity of 79.14 GiB' https://github.com/lianqi1008/Control-GIC/issues/6"
        ),
        smi_total_bytes=81_920 * MiB,
        smi_total_source=_MODAL_SMI,
        hbm_bytes_per_s=2_039 * GB,
        peak_bf16_flops_per_s=312 * TFLOPS,
        peak_fp8_flops_per_s=None,
        source=_A100_DATASHEET,
        is_a100=True,
        # Bare "A100" means the 80GB part: it is what engines and clouds mostly run today.
        aliases=("A100", "A100-SXM4-80GB", "A100-80G", "A100-SXM", "A100-PCIE-80GB"),
    ),
    # A10G (AWS G5 only): 24 GiB GDDR6 with ECC (nvidia-smi 23,028 MiB), 600 GB/s.
    # NVIDIA publishes no A10G datasheet. Memory and bandwidth match the A10; the tensor rate is
    # lower: Baseten's A10 vs A10G comparison lists 70 TFLOPS bf16 tensor for the A10G (A10: 125
    # dense). This is the least certain figure in the file (no vendor page; the table was not
    # re-read when it was entered). Ampere: no fp8.
    # Reported: only nvidia-smi, "1MiB /  23028MiB" on a g5.12xlarge (vLLM issue #9373). (The
    # PCIe A10, same memory, shows "GPU 0 has a total capacity of 22.18 GiB" in
    # https://github.com/OpenBMB/MiniCPM-V/issues/640 -- a different card, so not used here.)
    GPU(
        name="A10G",
        full_name="NVIDIA A10G 24GB GDDR6 (AWS)",
        memory_bytes=24 * GiB,
        reported_total_bytes=23_028 * MiB,
        reported_total_kind="nvidia-smi",
        reported_total_source=(
            "nvidia-smi on a g5.12xlarge: 'NVIDIA A10G ... 1MiB /  23028MiB' "
            "https://github.com/vllm-project/vllm/issues/9373 (no mem_get_info line found)"
        ),
        smi_total_bytes=23_028 * MiB,
        smi_total_source="https://github.com/vllm-project/vllm/issues/9373",
        hbm_bytes_per_s=600 * GB,
        peak_bf16_flops_per_s=70 * TFLOPS,
        peak_fp8_flops_per_s=None,
        source=(
            "https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/ "
            "(no NVIDIA datasheet; memory/bandwidth as the A10's)"
        ),
        aliases=("A10-G",),
    ),
    # GeForce RTX 3090: 24 GiB GDDR6X (nvidia-smi 24,576 MiB), 936 GB/s.
    # GA102 whitepaper: peak bf16 tensor with FP32 accumulate 71 TFLOPS (142 sparse). No fp8.
    # Reported: PyTorch OOM "(GPU 0; 23.70 GiB total capacity; ...)" from a user with "two 3090"
    # (https://github.com/GaoLii/DSP/issues/10); nvidia-smi "22188MiB /  24576MiB" on RTX 3090s
    # (https://github.com/noonghunna/club-3090/pull/96).
    GPU(
        name="RTX-3090",
        full_name="NVIDIA GeForce RTX 3090 24GB GDDR6X",
        memory_bytes=24 * GiB,
        reported_total_bytes=_gib("23.70"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "PyTorch OOM on RTX 3090: '(GPU 0; 23.70 GiB total capacity; 1.38 GiB already "
            "allocated ...)' https://github.com/GaoLii/DSP/issues/10"
        ),
        smi_total_bytes=24_576 * MiB,
        smi_total_source="https://github.com/noonghunna/club-3090/pull/96",
        hbm_bytes_per_s=936 * GB,
        peak_bf16_flops_per_s=71 * TFLOPS,
        peak_fp8_flops_per_s=None,
        source=_GA102_WHITEPAPER,
        aliases=("3090", "RTX3090", "GeForce RTX 3090"),
    ),
    # ---- Ada ---------------------------------------------------------------------------------
    # L4: 24 GiB GDDR6 with ECC (nvidia-smi 23,034 MiB), 300 GB/s.
    # Datasheet "BF16 242 TFLOPS*", "FP8 485 TFLOPS*" (* = with sparsity): dense 121 and 242.5.
    # Reported: only nvidia-smi, "L4: 23034MiB" (Modal's table of nvidia-smi totals).
    GPU(
        name="L4",
        full_name="NVIDIA L4 24GB GDDR6",
        memory_bytes=24 * GiB,
        reported_total_bytes=23_034 * MiB,
        reported_total_kind="nvidia-smi",
        reported_total_source=(
            f"nvidia-smi totals listed by Modal: 'L4: 23034MiB (24.15 GB)' {_MODAL_SMI} "
            "(no mem_get_info line found)"
        ),
        smi_total_bytes=23_034 * MiB,
        smi_total_source=_MODAL_SMI,
        hbm_bytes_per_s=300 * GB,
        peak_bf16_flops_per_s=121 * TFLOPS,
        peak_fp8_flops_per_s=242_500 * GFLOPS,
        source="https://www.nvidia.com/en-us/data-center/l4/",
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
        reported_total_bytes=_gib("44.39"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "vLLM on L40S: 'GPU 0 has a total capacity of 44.39 GiB of which 21.31 MiB is free'; "
            "'total_gpu_memory (44.39GiB) x gpu_memory_utilization (0.92) = 40.84GiB'"
        ),
        smi_total_bytes=46_068 * MiB,
        smi_total_source=_MODAL_SMI,
        hbm_bytes_per_s=864 * GB,
        peak_bf16_flops_per_s=362_050 * GFLOPS,
        peak_fp8_flops_per_s=733 * TFLOPS,
        source="https://www.nvidia.com/en-us/data-center/l40s/",
        aliases=("L40-S",),
    ),
    # GeForce RTX 4090: 24 GiB GDDR6X (nvidia-smi 24,564 MiB), 1,008 GB/s.
    # Ada whitepaper, GeForce rates with FP32 accumulate: bf16 165.2 (330.4 sparse), fp8 330.3
    # (660.6 sparse) TFLOPS.
    # Reported: PyTorch OOM "(GPU 0; 23.65 GiB total capacity; 11.70 GiB already allocated ...)"
    # (https://github.com/MotrixLab/AiOS/issues/29, also TRI-ML/packnet-sfm#250); newer
    # driver/torch prints "total capacity of 23.64 GiB" (ali-vilab/VGen#104). nvidia-smi
    # "23859MiB / 24564MiB" (https://github.com/vllm-project/vllm/issues/7553).
    GPU(
        name="RTX-4090",
        full_name="NVIDIA GeForce RTX 4090 24GB GDDR6X",
        memory_bytes=24 * GiB,
        reported_total_bytes=_gib("23.65"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "PyTorch OOM on RTX 4090: '(GPU 0; 23.65 GiB total capacity; 11.70 GiB already "
            "allocated ...)' https://github.com/MotrixLab/AiOS/issues/29"
        ),
        smi_total_bytes=24_564 * MiB,
        smi_total_source="https://github.com/vllm-project/vllm/issues/7553",
        hbm_bytes_per_s=1_008 * GB,
        peak_bf16_flops_per_s=165_200 * GFLOPS,
        peak_fp8_flops_per_s=330_300 * GFLOPS,
        source=_ADA_WHITEPAPER,
        aliases=("4090", "RTX4090", "GeForce RTX 4090"),
    ),
    # ---- Blackwell GeForce / workstation (sm_120) --------------------------------------------
    # GeForce RTX 5080: 16 GiB GDDR7, 960 GB/s.
    # RTX Blackwell whitepaper, FP32-accumulate rates: bf16 112.6 (225.1 sparse), fp8 225.1
    # (450.2 sparse) TFLOPS. (= 84 SMs x 2.617 GHz x 512 dense bf16 FLOP/clk/SM.)
    # Reported: only nvidia-smi, "16303MiB" in an SGLang user's log of Qwen3-0.6B on a 5080 (a
    # GitHub file in the search index, id 47444754202; tests/data/engine_logs/
    # sglang_startup_logs.json).
    GPU(
        name="RTX-5080",
        full_name="NVIDIA GeForce RTX 5080 16GB GDDR7",
        memory_bytes=16 * GiB,
        reported_total_bytes=16_303 * MiB,
        reported_total_kind="nvidia-smi",
        reported_total_source=("nvidia-smi '16303MiB' in a public SGLang log (GitHub file, search "
                               "index id 47444754202; no mem_get_info line found)"),
        hbm_bytes_per_s=960 * GB,
        peak_bf16_flops_per_s=112_600 * GFLOPS,
        peak_fp8_flops_per_s=225_100 * GFLOPS,
        source=_RTX_BLACKWELL_WHITEPAPER,
        aliases=("5080", "RTX5080", "GeForce RTX 5080"),
    ),
    # GeForce RTX 5090: 32 GiB GDDR7 (nvidia-smi 32,607 MiB), 1,792 GB/s.
    # RTX Blackwell whitepaper, FP32-accumulate rates: bf16 209.5 (419 sparse), fp8 419 (838
    # sparse) TFLOPS. (The "838 TFLOPS FP16" of spec pages is FP16-accumulate with sparsity.)
    # Reported: vLLM on a 5090 "total_gpu_memory (31.37GiB) x gpu_memory_utilization (0.85) =
    # 26.66GiB" (https://github.com/vllm-project/vllm/issues/14452); nvidia-smi "29340MiB /
    # 32607MiB" (https://github.com/noonghunna/club-3090/issues/1322).
    GPU(
        name="RTX-5090",
        full_name="NVIDIA GeForce RTX 5090 32GB GDDR7",
        memory_bytes=32 * GiB,
        reported_total_bytes=_gib("31.37"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "vLLM on RTX 5090: 'the current vLLM instance can use total_gpu_memory (31.37GiB) x "
            "gpu_memory_utilization (0.85) = 26.66GiB' "
            "https://github.com/vllm-project/vllm/issues/14452"
        ),
        smi_total_bytes=32_607 * MiB,
        smi_total_source="https://github.com/noonghunna/club-3090/issues/1322",
        hbm_bytes_per_s=1_792 * GB,
        peak_bf16_flops_per_s=209_500 * GFLOPS,
        peak_fp8_flops_per_s=419 * TFLOPS,
        source=_RTX_BLACKWELL_WHITEPAPER,
        aliases=("5090", "RTX5090", "GeForce RTX 5090"),
    ),
    # RTX PRO 6000 Blackwell (Workstation / Server Edition): 96 GiB GDDR7 with ECC, 1,792 GB/s.
    # Unlike GeForce, the professional board runs FP32 accumulate at full rate: bf16 503.8
    # (1,007.6 sparse), fp8 1,007.6 (2,015.2 sparse) TFLOPS = 188 SMs x 2.617 GHz x 1,024 dense
    # bf16 FLOP/clk/SM; the datasheet's "4,000 AI TOPS" is FP4 with sparsity (4,000/8 ~ 500).
    # Public bf16 GEMM runs reach 368-417 TFLOPS (zzc0721/torch-performance-test-data#160/#161),
    # above any half-rate figure.
    # Reported: no public log line found with a total for this card.
    GPU(
        name="RTX-PRO-6000",
        full_name="NVIDIA RTX PRO 6000 Blackwell 96GB GDDR7",
        memory_bytes=96 * GiB,
        reported_total_bytes=_gib("95.01"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "vLLM 0.27.1 on RTX PRO 6000 Blackwell Server Edition: 'GPU 0: NVIDIA RTX PRO 6000 "
            "Blackwell Server Edition 95.01 GiB sm_120', and vLLM's 'Free memory on device "
            "(93.83/95.01 GiB) on startup' (search index ids 57905766703, 57388479769); another "
            "driver prints 94.97 GiB (index id 63441798540)"
        ),
        hbm_bytes_per_s=1_792 * GB,
        peak_bf16_flops_per_s=503_800 * GFLOPS,
        peak_fp8_flops_per_s=1_007_600 * GFLOPS,
        source=(
            "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/"
            f"rtx-pro-6000/ ; {_RTX_BLACKWELL_WHITEPAPER}"
        ),
        aliases=("RTX PRO 6000", "RTXPRO6000", "PRO6000", "RTX-PRO-6000-Blackwell",
                 "RTX PRO 6000 Blackwell Workstation Edition",
                 "RTX PRO 6000 Blackwell Server Edition"),
    ),
    # ---- Hopper ------------------------------------------------------------------------------
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
        reported_total_bytes=_gib("79.19"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "PyTorch OOM on 8xH100 80GB HBM3: 'GPU 0 has a total capacity of 79.19 GiB of which "
            "14.75 MiB is free'; vLLM 'total_gpu_memory (79.19GiB) x gpu_memory_utilization'; "
            "driver-dependent, cf. 79.22GiB in https://github.com/vllm-project/vllm/pull/12126"
        ),
        smi_total_bytes=81_559 * MiB,
        smi_total_source=_MODAL_SMI,
        hbm_bytes_per_s=3_350 * GB,
        peak_bf16_flops_per_s=989_500 * GFLOPS,
        peak_fp8_flops_per_s=1_979 * TFLOPS,
        source=_H100_DATASHEET,
        # Bare "H100" is the SXM 80GB part (the one in HGX/DGX nodes and most engine logs).
        aliases=("H100", "H100-SXM", "H100-SXM5", "H100-SXM5-80GB", "H100-80G",
                 "H100 80GB HBM3"),
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
        reported_total_source=NO_LOG,
        hbm_bytes_per_s=2 * TB,
        peak_bf16_flops_per_s=756_500 * GFLOPS,
        peak_fp8_flops_per_s=1_513 * TFLOPS,
        source=_H100_DATASHEET,
        aliases=("H100-PCIE-80GB", "H100 PCIe 80GB"),
    ),
    # H100 NVL: 94 GiB HBM3 enabled (of 6 x 16 GiB stacks), 3.9 TB/s. "94GB" must be binary:
    # MIG slices of the card add up to 89.5 GiB (NVIDIA/mig-parted#101), above 94 GB = 87.5 GiB.
    # Datasheet bf16 1,671 TFLOPS* and fp8 3,341 TFLOPS* are sparse: dense 835.5 and 1,670.5.
    # Reported: nvidia-smi shows "95830MiB" (93.58 GiB) in several public tables, none found in
    # a citable issue; no mem_get_info line found. Nominal used.
    GPU(
        name="H100-NVL",
        full_name="NVIDIA H100 NVL 94GB HBM3",
        memory_bytes=94 * GiB,
        reported_total_bytes=None,
        reported_total_source=NO_LOG,
        hbm_bytes_per_s=3_900 * GB,
        peak_bf16_flops_per_s=835_500 * GFLOPS,
        peak_fp8_flops_per_s=1_670_500 * GFLOPS,
        source=_H100_DATASHEET,
        aliases=("H100NVL", "H100-94GB", "H100 NVL 94GB"),
    ),
    # H800 SXM (China-market H100): same die, memory and clocks as H100 SXM -- 80 GiB HBM3,
    # 3.35 TB/s, dense bf16 989.5 / fp8 1,979 TFLOPS -- with NVLink cut to 400 GB/s. NVIDIA
    # publishes no H800 datasheet; the figures as stated in ai-dynamo/aiconfigurator PR #968.
    # Reported: no public log line found that names the H800.
    GPU(
        name="H800",
        full_name="NVIDIA H800 80GB HBM3 (SXM)",
        memory_bytes=80 * GiB,
        reported_total_bytes=None,
        reported_total_source=NO_LOG,
        hbm_bytes_per_s=3_350 * GB,
        peak_bf16_flops_per_s=989_500 * GFLOPS,
        peak_fp8_flops_per_s=1_979 * TFLOPS,
        source=(
            f"https://github.com/ai-dynamo/aiconfigurator/pull/968 (H100 SXM figures: "
            f"{_H100_DATASHEET})"
        ),
        aliases=("H800-SXM", "H800-80GB", "H800 80GB HBM3"),
    ),
    # H20 (China-market Hopper): 96 GiB HBM3 (6 x 16 GiB stacks), 4.0 TB/s.
    # Dense bf16 148 TFLOPS, dense fp8 296 TFLOPS. NVIDIA publishes no public datasheet; these
    # are the partner/press figures (e.g. https://willitrunai.com/es/gpus/h20-96gb).
    # Reported: no public log line found with a total for the H20.
    GPU(
        name="H20",
        full_name="NVIDIA H20 96GB HBM3",
        memory_bytes=96 * GiB,
        reported_total_bytes=None,
        reported_total_source=NO_LOG,
        hbm_bytes_per_s=4 * TB,
        peak_bf16_flops_per_s=148 * TFLOPS,
        peak_fp8_flops_per_s=296 * TFLOPS,
        source="https://willitrunai.com/es/gpus/h20-96gb (no official NVIDIA datasheet)",
        aliases=("H20-96GB",),
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
        reported_total_bytes=_gib("139.81"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "vLLM on 8x NVIDIA H200: 'total_gpu_memory (139.81GiB) x gpu_memory_utilization "
            "(0.85) = 118.84GiB'; PyTorch OOMs on H200: 'total capacity of 139.80 GiB'"
        ),
        hbm_bytes_per_s=4_800 * GB,
        peak_bf16_flops_per_s=989_500 * GFLOPS,
        peak_fp8_flops_per_s=1_979 * TFLOPS,
        source="https://www.nvidia.com/en-us/data-center/h200/",
        aliases=("H200-SXM", "H200-141GB", "H200 SXM 141GB"),
    ),
    # ---- Blackwell data centre (sm_100 / sm_103) ---------------------------------------------
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
        reported_total_bytes=_gib("178.35"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "PyTorch OOM on B200: 'GPU 0 has a total capacity of 178.35 GiB'; mem_get_info on "
            "SM100 '177.7 GiB / 178.4 GiB' (https://github.com/sgl-project/sglang/issues/25225)"
        ),
        hbm_bytes_per_s=8 * TB,
        peak_bf16_flops_per_s=2_250 * TFLOPS,
        peak_fp8_flops_per_s=4_500 * TFLOPS,
        source="https://www.nvidia.com/en-us/data-center/hgx/",
        aliases=("B200-SXM", "HGX-B200", "B200-180GB"),
    ),
    # B300 (HGX B300, Blackwell Ultra): 288 GiB HBM3e (8 x 36 GiB 12-high stacks; DGX B300
    # "2.3 TB" for 8 GPUs), 8 TB/s.
    # HGX B300 (8 GPUs) FP16/BF16 36 PFLOPS* and FP8 72 PFLOPS* are sparse: per GPU dense 2,250
    # and 4,500 TFLOPS (as NVIDIA/cosmos-framework PR #114 derives for 'NVIDIA B300 SXM6 AC').
    # Blackwell Ultra raises dense FP4, not bf16/fp8.
    # Reported: TensorRT-LLM 1.3.0rc10 on HGX B300 logs "Setting PyTorch memory fraction to
    # 0.3922430117721311 (104.99627685546875 GiB)", that is the fraction x the device total
    # (torch.cuda.mem_get_info): 104.99627685546875 / 0.3922430117721311 = 267.68 GiB; the same
    # ratio in a DeepSeek-R1 log on that node (202.66229248046875 / 0.7571017788050566) and, on a
    # B200, 76.70452880859375 / 0.43007606847668667 = 178.35 GiB, the B200's printed total.
    # (288 GB = 268.2 GiB.) An SGLang log on an unnamed SM100 device with 275.75 GiB free at
    # start is therefore not this B300 (tests/data/engine_logs/sglang_startup_logs.json), nor
    # TRT-LLM's 'Total GPU memory (GiB): 276.50' on an unnamed GPU in mlcommons/inference
    # issue #2501: a second 288 GB Blackwell (GB300?) reports about 276.5 GiB.
    GPU(
        name="B300",
        full_name="NVIDIA B300 SXM6 AC (HGX, 288GB HBM3e)",
        memory_bytes=288 * GiB,
        reported_total_bytes=_gib("267.68"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "TensorRT-LLM 1.3.0rc10 on B300: 'Setting PyTorch memory fraction to "
            "0.3922430117721311 (104.99627685546875 GiB)' = fraction x total -> 267.68 GiB "
            "(https://github.com/zufayu/ClaudeSkillsE2EPerf/blob/"
            "21f5ad4c5ad85ee22af973fcba24d600d2fe38f3/results/b300_gptoss120b_fp4/"
            "b300_gptoss120b_fp4_mtp0_ep1_tp1_rc10/server_fp4_throughput_chat_ep1_c64.trimmed.log)"
        ),
        hbm_bytes_per_s=8 * TB,
        peak_bf16_flops_per_s=2_250 * TFLOPS,
        peak_fp8_flops_per_s=4_500 * TFLOPS,
        source=(
            "https://www.nvidia.com/en-us/data-center/hgx/ ; per-GPU split: "
            "https://github.com/NVIDIA/cosmos-framework/pull/114"
        ),
        aliases=("B300-SXM", "HGX-B300", "B300 SXM6 AC", "B300-288GB"),
    ),
    # GB200 (one Blackwell GPU of a Grace-Blackwell superchip, NVL72 rack): 186 GiB HBM3e
    # ("up to 13.4 TB" / 72 GPUs), 8 TB/s (576 TB/s / 72).
    # GB200 NVL72 FP16/BF16 360 PFLOPS* and FP8 720 PFLOPS* are sparse, for 72 GPUs: per GPU
    # dense 2,500 and 5,000 TFLOPS (1,200 W parts, above the 1,000 W HGX B200).
    # (The early "384 GB per superchip" = 2 x 192 GB is the physical HBM; NVL72 enables 186.)
    # Reported: TensorRT-LLM's "device total memory 184.31 GiB" (torch.cuda.mem_get_info) on
    # every GB200 run of NVIDIA's perf-sanity CI (tests/data/engine_logs/trtllm_budget_logs.json).
    GPU(
        name="GB200",
        full_name="NVIDIA GB200 (Blackwell GPU of a GB200 superchip, 186GB HBM3e)",
        memory_bytes=186 * GiB,
        reported_total_bytes=_gib("184.31"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "TensorRT-LLM perf-sanity CI on GB200: 'device_total_memory=184.31 GiB' "
            "(https://github.com/HuiGao-NV/TensorRT-LLM/blob/"
            "31d1a1e79bd18d3f3cb854a23e6fd26cbb61564e/case_fraction_map.txt)"
        ),
        hbm_bytes_per_s=8 * TB,
        peak_bf16_flops_per_s=2_500 * TFLOPS,
        peak_fp8_flops_per_s=5_000 * TFLOPS,
        source="https://www.nvidia.com/en-us/data-center/gb200-nvl72/",
        aliases=("GB200-NVL72", "GB200 NVL72"),
    ),
    # GB300 (Blackwell Ultra GPU of a GB300 superchip, NVL72 rack): 288 GiB HBM3e ("up to
    # 20.7 TB" / 72), 8 TB/s (576 TB/s / 72).
    # GB300 NVL72 FP16/BF16 360 PFLOPS* and FP8 720 PFLOPS* are sparse, for 72 GPUs: per GPU
    # dense 2,500 and 5,000 TFLOPS.
    # Not the DGX Station GB300 (252 GB HBM3e; nvidia-smi 256,703 MiB in
    # https://github.com/NVIDIA/NemoClaw/issues/9901): give that one --gpu-mem-gib.
    # Reported: no public log line found with a total for the NVL72 GB300.
    GPU(
        name="GB300",
        full_name="NVIDIA GB300 (Blackwell Ultra GPU of a GB300 superchip, 288GB HBM3e)",
        memory_bytes=288 * GiB,
        reported_total_bytes=None,
        reported_total_source=NO_LOG,
        hbm_bytes_per_s=8 * TB,
        peak_bf16_flops_per_s=2_500 * TFLOPS,
        peak_fp8_flops_per_s=5_000 * TFLOPS,
        source="https://www.nvidia.com/en-us/data-center/gb300-nvl72/",
        aliases=("GB300-NVL72", "GB300 NVL72"),
    ),
    # GB10 (DGX Spark): 128 GiB LPDDR5X shared by CPU and GPU, 273 GB/s. nvidia-smi shows no
    # memory total on this device ("Not Supported"); the OS sees MemTotal 128,501,256,192 B
    # (leptonai/gpud#1170), and what the OS, page cache and other processes hold is *used* to
    # CUDA, so engines' free memory at start-up is well below the total.
    # FLOPs: NVIDIA states only "up to 1 PFLOP of FP4 with sparsity". Derived (not published):
    # dense FP4 500, fp8 250, bf16 125 TFLOPS, halving per doubling of width as on every other
    # Blackwell part; an upper bound if GB10 (sm_121, GeForce-class) halves FP32-accumulate.
    # Reported: "CUDA free caps at ~102/121.69 GiB" on DGX Spark (vLLM start-up check),
    # https://github.com/MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks/issues/47.
    GPU(
        name="GB10",
        full_name="NVIDIA GB10 (DGX Spark, 128GB unified LPDDR5X)",
        memory_bytes=128 * GiB,
        reported_total_bytes=_gib("121.69"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "vLLM on DGX Spark: 'Free memory on cuda:0 at boot caps at 101.3-102.2 GiB of "
            "121.69' https://github.com/MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks/issues/47"
        ),
        hbm_bytes_per_s=273 * GB,
        peak_bf16_flops_per_s=125 * TFLOPS,
        peak_fp8_flops_per_s=250 * TFLOPS,
        source=(
            "https://www.nvidia.com/en-us/products/workstations/dgx-spark/ (memory, bandwidth, "
            "'1 PFLOP FP4 sparse'; bf16/fp8 derived from it, see comment)"
        ),
        unified_memory=True,
        aliases=("DGX-Spark", "DGX Spark", "Spark", "NVIDIA-GB10"),
    ),
    # ---- AMD Instinct (ROCm) -----------------------------------------------------------------
    # MI300X: 192 GiB HBM3 (8 x 24 GiB), 5.3 TB/s.
    # Datasheet bf16 1,307.4 TFLOPS (2,614.9 with sparsity), fp8 2,614.9 (5,229.8 with sparsity)
    # (= 304 CUs x 2.1 GHz x 2,048 dense bf16 FLOP/clk/CU).
    # Reported: PyTorch/ROCm "HIP out of memory ... GPU 0 has a total capacity of 191.98 GiB"
    # (vLLM on MI300X). Some ROCm versions report 191.69 GiB. rocm-smi "VRAM Total Memory (B):
    # 206141652992" (= 191.98 GiB, https://github.com/ROCm/legacy-rocm-build/issues/4750).
    GPU(
        name="MI300X",
        full_name="AMD Instinct MI300X 192GB HBM3",
        memory_bytes=192 * GiB,
        reported_total_bytes=_gib("191.98"),
        reported_total_kind="mem_get_info",
        reported_total_source=(
            "ROCm PyTorch OOM under vLLM on MI300X: 'HIP out of memory. Tried to allocate "
            "3.25 GiB. GPU 0 has a total capacity of 191.98 GiB of which 1.32 GiB is free'; "
            "rocm-smi 'VRAM Total Memory (B): 206141652992' "
            "https://github.com/ROCm/legacy-rocm-build/issues/4750"
        ),
        hbm_bytes_per_s=5_300 * GB,
        peak_bf16_flops_per_s=1_307_400 * GFLOPS,
        peak_fp8_flops_per_s=2_614_900 * GFLOPS,
        source=(
            "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
            "amd-instinct-mi300x-data-sheet.pdf"
        ),
        platform="rocm",
        aliases=("MI300", "Instinct MI300X", "AMD Instinct MI300X"),
    ),
    # MI325X: the MI300X die with 256 GiB HBM3E (8 x 32 GiB), 6 TB/s; same clocks, so the same
    # dense bf16 1,307.4 / fp8 2,614.9 TFLOPS.
    # Reported: no public log line found with a total for the MI325X.
    GPU(
        name="MI325X",
        full_name="AMD Instinct MI325X 256GB HBM3E",
        memory_bytes=256 * GiB,
        reported_total_bytes=None,
        reported_total_source=NO_LOG,
        hbm_bytes_per_s=6 * TB,
        peak_bf16_flops_per_s=1_307_400 * GFLOPS,
        peak_fp8_flops_per_s=2_614_900 * GFLOPS,
        source="https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html",
        platform="rocm",
        aliases=("Instinct MI325X", "AMD Instinct MI325X"),
    ),
    # MI355X (CDNA 4, 1,400 W): 288 GiB HBM3E (8 x 36 GiB), 8 TB/s.
    # Dense fp8 5,033.2 TFLOPS = 256 CUs x 2.4 GHz x 8,192 FLOP/clk/CU (ISSCC 2026: per-CU fp8
    # doubled to 8,192); dense bf16 half of it, 2,516.6 ("2.5 PF", 5.0 with sparsity).
    # Reported: no public log line found with a total for the MI355X.
    GPU(
        name="MI355X",
        full_name="AMD Instinct MI355X 288GB HBM3E",
        memory_bytes=288 * GiB,
        reported_total_bytes=None,
        reported_total_source=NO_LOG,
        hbm_bytes_per_s=8 * TB,
        peak_bf16_flops_per_s=2_516_600 * GFLOPS,
        peak_fp8_flops_per_s=5_033_200 * GFLOPS,
        source="https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html",
        platform="rocm",
        aliases=("MI355", "Instinct MI355X", "AMD Instinct MI355X"),
    ),
)

GPUS: dict[str, GPU] = {gpu.name: gpu for gpu in _PRESETS}
"""The presets, keyed by name."""

# Vendor words that torch/nvidia-smi/rocm-smi put in front of a product name; dropped so that
# "NVIDIA GeForce RTX 4090" or "AMD Instinct MI300X" (torch.cuda.get_device_name) also resolve.
_VENDOR_WORDS = re.compile(r"\b(nvidia|geforce|amd|instinct)\b")


def _key(name: str) -> str:
    """Lookup key: lower case, without vendor words or separators ("RTX-4090" == "rtx 4090")."""
    return re.sub(r"[^a-z0-9]", "", _VENDOR_WORDS.sub("", name.lower()))


def _index(presets: tuple[GPU, ...]) -> dict[str, GPU]:
    index: dict[str, GPU] = {}
    for gpu in presets:
        for spelling in (gpu.name, *gpu.aliases):
            key = _key(spelling)
            other = index.setdefault(key, gpu)
            if other is not gpu:
                raise ValueError(f"GPU alias {spelling!r} names both {other.name} and {gpu.name}")
    return index


_BY_KEY = _index(_PRESETS)


def get_gpu(name: str) -> GPU:
    """Look up a preset by name or alias, ignoring case, separators and vendor words
    (``"h100"``, ``"H100-SXM"``, ``"NVIDIA GeForce RTX 4090"`` and ``"4090"`` all work)."""
    gpu = _BY_KEY.get(_key(name))
    if gpu is not None:
        return gpu
    close = difflib.get_close_matches(_key(name), list(_BY_KEY), n=8, cutoff=0.6)
    suggestions = list(dict.fromkeys(_BY_KEY[key].name for key in close))[:3]
    hint = f"did you mean {', '.join(suggestions)}? " if suggestions else ""
    raise InputError(f"--gpu: unknown GPU {name.strip()!r}; {hint}(known: {', '.join(GPUS)})")
