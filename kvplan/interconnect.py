"""Interconnect presets for the cost model's collectives (TP all-reduce, EP all-to-all).

Units are in the names: ``bytes_per_s`` is the *achievable* one-direction bandwidth of one GPU's
link (decimal bytes per second), ``latency_s`` the fixed time of one small collective. Datasheet
figures are quoted next to each preset with where the achievable figure comes from; nothing here
is fitted to a serving benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .errors import InputError
from .units import GB

US = 1e-6  # seconds per microsecond


@dataclass(frozen=True, kw_only=True)
class Interconnect:
    name: str
    description: str
    bytes_per_s: float
    """Achievable one-direction bandwidth per GPU (B/s, decimal)."""
    latency_s: float
    """Fixed cost of one collective call (launch + first byte), seconds."""
    source: str


_PRESETS: tuple[Interconnect, ...] = (
    # H100/H200/H800 SXM on NVSwitch: 900 GB/s bidirectional = 450 GB/s each way (datasheet;
    # H800: 400 GB/s). DeepEP's normal kernels reach ~155 GB/s of NVLink in all-to-all on H800 and
    # nccl-tests all-reduce bus bandwidth on 8 x H100 is ~360-480 GB/s; 360 GB/s is used. The
    # latency is a one-shot custom all-reduce of a few kB (vLLM/SGLang custom_all_reduce: ~10 us).
    Interconnect(name="nvlink4", description="NVLink 4 / NVSwitch (H100, H200, H800 SXM)",
                 bytes_per_s=360 * GB, latency_s=10 * US,
                 source="https://www.nvidia.com/en-us/data-center/h100/ ; "
                        "https://github.com/deepseek-ai/DeepEP (intranode ~155 GB/s all-to-all)"),
    # A100 SXM: 600 GB/s bidirectional = 300 GB/s each way; ~240 GB/s achieved (80 %).
    Interconnect(name="nvlink3", description="NVLink 3 / NVSwitch (A100 SXM)",
                 bytes_per_s=240 * GB, latency_s=10 * US,
                 source="https://www.nvidia.com/en-us/data-center/a100/"),
    # B200/GB200: 1.8 TB/s bidirectional = 900 GB/s each way; 80 % achieved.
    Interconnect(name="nvlink5", description="NVLink 5 / NVSwitch (B200, GB200, B300)",
                 bytes_per_s=720 * GB, latency_s=8 * US,
                 source="https://www.nvidia.com/en-us/data-center/dgx-b200/"),
    # AMD Infinity Fabric (xGMI) on an 8-GPU MI300X / MI325X platform: every GPU has 7 links to
    # its 7 peers, 128 GB/s bidirectional = 64 GB/s each way per link, 448 GB/s each way in all
    # (AMD MI300X data sheet). Measured: RCCL all-reduce bus bandwidth on 8x MI300X (Azure ND
    # MI300X v5, "RCCL AllReduce ... in-place", 1KB-8GB) reaches 313.92 GB/s at 1 GB and
    # 316.82 GB/s at 8 GB; the same harness on 8x H100 reads 466.35 GB/s at 1 GB. The ring
    # all-reduce below charges bytes at `bytes_per_s` as a bus bandwidth: 314 GB/s. Latency: the
    # custom all-reduce SGLang and vLLM run for small decode messages on ROCm (not RCCL, whose
    # 1 KB all-reduce on the same Azure run takes ~45 us: 0.04 GB/s bus bandwidth): vLLM's
    # custom all-reduce on MI300 takes 7.07-7.66 us for 4-64 KB at TP 2 (ROCm/aiter PR 801,
    # "tp2(us) | size | vllm cr"), on MI355X 6.3-7.6 us for 24-96 KB at TP 8 (vllm-project/vllm
    # PR 39080, "vllm/us"); 8 us, rounded up as the NVLink presets' 10 us is.
    Interconnect(name="xgmi3",
                 description="AMD Infinity Fabric / xGMI, 8-GPU mesh (MI300X, MI325X)",
                 bytes_per_s=314 * GB, latency_s=8 * US,
                 source="https://github.com/samuel-bohman/AI-benchmarking-guide/blob/main/"
                        "Azure_Results/ND_MI300X_v5_results.md (a fork of Azure/AI-benchmarking-"
                        "guide, index file id 17849256347: RCCL all-reduce busbw 313.92 GB/s at "
                        "1 GB); "
                        "https://github.com/ROCm/aiter/pull/801 (custom all-reduce 7.07-7.66 us, "
                        "4-64 KB)"),
    # MI355X (CDNA 4): 7 xGMI links of 76.8 GB/s each way, 537.6 GB/s in all ("Peak busbw =
    # (N-1) x 76.8 GB/s: ... TP8=537.6 GB/s", vllm-project/vllm PR 39080). No all-reduce bus
    # bandwidth at large sizes was found for it: the MI300X's measured fraction of its link
    # total (314 / 448 = 0.70) is carried over: 537.6 x 314 / 448 = 377 GB/s. Latency as above
    # (6.3-7.6 us: 8 us).
    Interconnect(name="xgmi4", description="AMD Infinity Fabric / xGMI, 8-GPU mesh (MI355X)",
                 bytes_per_s=377 * GB, latency_s=8 * US,
                 source="https://github.com/vllm-project/vllm/pull/39080 (7 x 76.8 GB/s; "
                        "custom all-reduce 6.3-7.6 us at 24-96 KB, TP 8); bandwidth fraction "
                        "carried over from xgmi3"),
    # PCIe Gen4 x16: 32 GB/s each way (31.5 raw); ~25 GB/s achieved through host bridges.
    Interconnect(name="pcie4", description="PCIe Gen4 x16 (no NVLink)",
                 bytes_per_s=25 * GB, latency_s=20 * US,
                 source="https://pcisig.com/specifications (16 GT/s x16)"),
    # PCIe Gen5 x16: 64 GB/s each way; ~50 GB/s achieved.
    Interconnect(name="pcie5", description="PCIe Gen5 x16 (no NVLink: H100 PCIe, L40S)",
                 bytes_per_s=50 * GB, latency_s=20 * US,
                 source="https://pcisig.com/specifications (32 GT/s x16)"),
    # One ConnectX-7 400 Gb/s NIC per GPU = 50 GB/s; DeepEP's internode kernels reach 43-58 GB/s
    # of RDMA bandwidth and its low-latency dispatch of 128 tokens takes ~160-190 us at EP 16-256.
    Interconnect(name="ib-ndr", description="InfiniBand NDR 400 Gb/s, one NIC per GPU",
                 bytes_per_s=45 * GB, latency_s=25 * US,
                 source="https://github.com/deepseek-ai/DeepEP (internode RDMA 43-58 GB/s)"),
    # RoCE v2 at 400 GbE: the same line rate; congestion control costs some of it (~40 GB/s).
    Interconnect(name="roce-400g", description="RoCE v2 400 GbE, one NIC per GPU",
                 bytes_per_s=40 * GB, latency_s=30 * US,
                 source="https://docs.nvidia.com/networking/display/rdmaawareprogrammingv17 "
                        "(400 Gb/s line rate)"),
)

INTERCONNECTS: dict[str, Interconnect] = {i.name: i for i in _PRESETS}

# GPUs in one NVLink domain of an HGX/DGX node: collectives over more ranks cross the network.
GPUS_PER_NODE = 8
# A GB200 / GB300 NVL72 rack joins 72 GPUs in one NVLink domain (18 compute trays of 4 GPUs on
# NVLink switch trays, https://www.nvidia.com/en-us/data-center/gb200-nvl72/); SGLang's GB200
# decode runs EP 48 over it (MNNVL, NCCL_MNNVL_ENABLE=1: https://github.com/sgl-project/sglang/
# issues/10903).
NVL72_GPUS = 72


def scale_up_gpus(gpu_name: str) -> int:
    """GPUs that one NVLink (or xGMI) domain holds for this preset: beyond it, collectives use the
    scale-out network. Grace-Blackwell superchip presets (GB200, GB300) ship in NVL72 racks."""
    return NVL72_GPUS if gpu_name.upper().startswith(("GB200", "GB300")) else GPUS_PER_NODE


def get_interconnect(name: str) -> Interconnect:
    try:
        return INTERCONNECTS[name.lower()]
    except KeyError:
        raise InputError(f"unknown interconnect {name!r}; choose from "
                         + ", ".join(INTERCONNECTS)) from None


def default_interconnect(gpu_name: str) -> Interconnect:
    """The scale-up link a GPU preset ships with in its usual 8-GPU server."""
    key = gpu_name.upper()
    if key.startswith(("B2", "B3", "GB2", "GB3")):
        return INTERCONNECTS["nvlink5"]
    if key.startswith("A100"):
        return INTERCONNECTS["nvlink3"]
    if key.startswith(("H100-80", "H200", "H800", "H20")) and "PCIE" not in key:
        return INTERCONNECTS["nvlink4"]
    if key.startswith("MI355"):
        return INTERCONNECTS["xgmi4"]
    if key.startswith(("MI300", "MI325")):
        return INTERCONNECTS["xgmi3"]
    if key.startswith(("RTX-3", "A10")):
        return INTERCONNECTS["pcie4"]
    return INTERCONNECTS["pcie5"]


class InterconnectName(str, Enum):
    """The preset names, as a choice for the CLI."""

    nvlink4 = "nvlink4"
    nvlink3 = "nvlink3"
    nvlink5 = "nvlink5"
    xgmi3 = "xgmi3"
    xgmi4 = "xgmi4"
    pcie4 = "pcie4"
    pcie5 = "pcie5"
    ib_ndr = "ib-ndr"
    roce_400g = "roce-400g"
