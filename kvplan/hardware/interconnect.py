"""Interconnect presets for the cost model's collectives (TP all-reduce, EP all-to-all).

Units are in the names: ``bytes_per_s`` is the *achievable* one-direction bandwidth of one GPU's
link (decimal bytes per second), ``latency_s`` the fixed time of one small NCCL-style collective
(the EP all-to-all, and all-reduces the custom kernels do not take), and
``custom_all_reduce_latency_s`` the fixed time of one one-shot custom all-reduce replayed in a
CUDA graph (NVLink presets only). Datasheet figures are quoted next to each preset with where the
achievable figure comes from; nothing here is fitted to a serving benchmark.

TP all-reduce at decode sizes (`Interconnect.all_reduce_s`). vLLM and SGLang (and, through its
own one-shot / two-shot kernels, TensorRT-LLM) do not call NCCL for the few-kB-to-few-MB
all-reduces of a decode step on NVLink: they run a custom all-reduce in which every rank loads
its peers' buffers over NVLink. The dispatch, the same in vLLM csrc/custom_all_reduce.cuh and
SGLang sgl-kernel/csrc/allreduce/custom_all_reduce.cuh (`REDUCE_CASE`):

    if world_size == 2: cross_device_reduce_1stage
    elif (world_size <= 4 and bytes < 512 KiB) or (world_size <= 8 and bytes < 256 KiB): 1stage
    else: cross_device_reduce_2stage

for world sizes 2, 4, 6, 8 (`_SUPPORTED_WORLD_SIZES`) and, in SGLang, buffers up to 8 MiB
(`_MAX_CAR_SIZE = 8192 * 1024`, SGLang python/sglang/srt/distributed/device_communicators/
custom_all_reduce.py, index file id 69341442); anything else goes to NCCL. This follows SGLang,
the engine of most bench rows. vLLM since PR 20759 caps the custom kernel per GPU and world size
(vllm/distributed/device_communicators/all_reduce_utils.py `CUSTOM_ALL_REDUCE_MAX_SIZES`, index
file id 183845377: SM 9.0 64 / 32 MiB at 2 / 4 ranks, 512 / 256 KiB at 6 / 8) and hands larger
buffers to torch symmetric-memory (multimem / two-shot) kernels, not modelled here; TensorRT-LLM
picks its own one-shot / two-shot kernels (AllReduceStrategy AUTO), charged by the same rule.
kvplan charges

- one-shot (1stage): each rank reads the whole buffer from each of the n - 1 peers and reduces
  it, between two barriers: ``t1 + (n - 1) x bytes / bytes_per_s``;
- two-shot (2stage): a reduce-scatter then an all-gather, each an exchange of 1/n of the buffer
  with the n - 1 peers, with a barrier between: ``t2 + 2 (n - 1) / n x bytes / bytes_per_s``,
  t2 measured where a table gives it, else two one-shot rounds, 2 t1;
- NCCL (no custom kernel on the link, other world sizes, larger buffers): ring,
  ``latency_s + 2 (n - 1) / n x bytes / bytes_per_s``.

``t1`` and ``t2`` are measured, not fitted: the median, over the published timings in CUDA
graphs of messages up to 1 MiB (`H100_ONE_SHOT_TIMINGS` ..., `custom_ar_fixed_s`), of the time
left after the bytes term. The rank count enters through the bytes a rank reads: on H100 the
fixed part shows no trend from 2 to 6 ranks (one-shot 5.5-6.4 us, two-shot 12.2-14.8 us), so it
is one number per link (no 8-rank in-graph table was found). The two-shot fixed part is 2.3 x
the one-shot's on H100 and 2.7 x on B300, more than the 2 x of two rounds (a third barrier);
at 2-4 MiB the rule runs 12-29 % faster than the H100 two-shot rows (their slopes give
200-320 GB/s of peer reads, not 360).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from enum import Enum

from kvplan._util.errors import InputError
from kvplan._util.units import GB, KiB, MiB

US = 1e-6  # seconds per microsecond


@dataclass(frozen=True, kw_only=True)
class CustomArTiming:
    """One published custom all-reduce timing (CUDA graph replay, bf16)."""

    ranks: int
    nbytes: int
    seconds: float


# vLLM benchmarks/kernels/benchmark_device_communicators.py (each op captured 10 times in one
# CUDA graph, the replay timed; hidden 8192, bf16), column ca_1stage, 8x H100 SXM: vLLM PR 24111
# (https://github.com/vllm-project/vllm/pull/24111, "Isolated primitives benchmark results ...
# H100"; ms per allreduce): "TP=2 ... (32, 8192) 0.50 MB 0.007"; "TP=4 ... (32, 8192) 0.50 MB
# 0.010 ... (64, 8192) 1.00 MB 0.015"; "TP=6 ... (32, 8192) 0.50 MB 0.013 ... (64, 8192) 1.00 MB
# 0.021". (Larger rows of the same tables: TP4 1.5 / 2 / 3 / 4 MB 0.019 / 0.022 / 0.030 /
# 0.038, TP6 0.030 / 0.038 / 0.053 / 0.070: the slopes, 393 and 322 GB/s of peer reads, bracket
# the preset's 360 GB/s.) Cross-check, not in the median: TensorRT-LLM's one-shot all-reduce
# fused with RMSNorm (through vLLM / FlashInfer) on 2 H100s in a CUDA graph, 6 x 6144 bf16 rows
# (72 KiB): 6.98 us (https://github.com/flagos-ai/FlagGems-vllm/pull/773, "| 2 | TRT-LLM / peer
# | one-shot | 6 | 6.9826"); this rule gives 5.9 us for the all-reduce alone.
H100_ONE_SHOT_TIMINGS = (
    CustomArTiming(ranks=2, nbytes=512 * KiB, seconds=7 * US),
    CustomArTiming(ranks=4, nbytes=512 * KiB, seconds=10 * US),
    CustomArTiming(ranks=4, nbytes=1 * MiB, seconds=15 * US),
    CustomArTiming(ranks=6, nbytes=512 * KiB, seconds=13 * US),
    CustomArTiming(ranks=6, nbytes=1 * MiB, seconds=21 * US),
)
# The same benchmark on B300 (SM 10.3, NVLink 5), vLLM PR 37756
# (https://github.com/vllm-project/vllm/pull/37756, "| 16 KiB | **0.007** | 0.019 | 0.029 ...
# | ca_1stage |"): 7 us at 16 KiB. The excerpt read here does not name the table's world size;
# at 16 KiB the bytes term is under 0.2 us for any of 2-8 ranks, so the point is taken at 2
# ranks (the smallest bytes term). Larger rows of that table (32 KiB-1 MiB: 8, 8, 8, 9, 11,
# 17 us) are left out for the same reason.
B300_ONE_SHOT_TIMINGS = (
    CustomArTiming(ranks=2, nbytes=16 * KiB, seconds=7 * US),
)
# Column ca_2stage of the same tables (the benchmark forces 2stage with
# VLLM_CUSTOM_ALLREDUCE_ALGO): H100, PR 24111 "TP=4 ... 0.50 MB ... 0.017 ... 1.00 MB ... 0.018",
# "TP=6 ... 0.50 MB ... 0.015 ... 1.00 MB ... 0.017" (the "ca_2stage" value follows ca_1stage in
# each row); B300, PR 37756 "| 16 KiB | **0.007** | 0.019 |" (taken at 2 ranks, as above).
H100_TWO_SHOT_TIMINGS = (
    CustomArTiming(ranks=4, nbytes=512 * KiB, seconds=17 * US),
    CustomArTiming(ranks=4, nbytes=1 * MiB, seconds=18 * US),
    CustomArTiming(ranks=6, nbytes=512 * KiB, seconds=15 * US),
    CustomArTiming(ranks=6, nbytes=1 * MiB, seconds=17 * US),
)
B300_TWO_SHOT_TIMINGS = (
    CustomArTiming(ranks=2, nbytes=16 * KiB, seconds=19 * US),
)


def custom_ar_fixed_s(timings: tuple[CustomArTiming, ...], bytes_per_s: float, *,
                      two_shot: bool = False) -> float:
    """The fixed part of a custom all-reduce: the median over `timings` of the measured time
    less the bytes a rank reads from its peers at `bytes_per_s`: (n - 1) x the buffer one-shot,
    2 (n - 1) / n x it two-shot."""
    def peer_bytes(t: CustomArTiming) -> float:
        return (2 * (t.ranks - 1) / t.ranks if two_shot else t.ranks - 1) * t.nbytes
    return statistics.median(t.seconds - peer_bytes(t) / bytes_per_s for t in timings)


# Custom all-reduce dispatch of vLLM / SGLang (module docstring).
CUSTOM_AR_WORLD_SIZES = (2, 4, 6, 8)
CUSTOM_AR_MAX_BYTES = 8 * MiB


@dataclass(frozen=True, kw_only=True)
class Interconnect:
    name: str
    description: str
    bytes_per_s: float
    """Achievable one-direction bandwidth per GPU (B/s, decimal)."""
    latency_s: float
    """Fixed cost of one NCCL-style collective call (launch + first byte), seconds."""
    source: str
    custom_all_reduce_latency_s: float | None = None
    """Fixed time of one one-shot custom all-reduce in a CUDA graph (NVLink); None: the link
    runs every all-reduce through NCCL."""
    two_shot_latency_s: float | None = None
    """Fixed time of one two-shot custom all-reduce; None: two one-shot rounds."""

    def all_reduce_s(self, ranks: int, nbytes: float) -> float:
        """Seconds of one all-reduce of `nbytes` over `ranks` GPUs (module docstring)."""
        if ranks <= 1:
            return 0.0
        ring = 2 * (ranks - 1) / ranks * nbytes / self.bytes_per_s
        t1 = self.custom_all_reduce_latency_s
        if t1 is None or ranks not in CUSTOM_AR_WORLD_SIZES or nbytes > CUSTOM_AR_MAX_BYTES:
            return self.latency_s + ring
        if ranks == 2 or (ranks <= 4 and nbytes < 512 * KiB) or nbytes < 256 * KiB:
            return t1 + (ranks - 1) * nbytes / self.bytes_per_s  # one-shot
        t2 = self.two_shot_latency_s
        return (2 * t1 if t2 is None else t2) + ring  # two-shot


_NVLINK4_BYTES_PER_S = 360 * GB
_NVLINK5_BYTES_PER_S = 720 * GB

_PRESETS: tuple[Interconnect, ...] = (
    # H100/H200/H800 SXM on NVSwitch: 900 GB/s bidirectional = 450 GB/s each way (datasheet;
    # H800: 400 GB/s). NCCL's maintainer: "450GB/s is the line rate. With the protocol overhead
    # (~20%) NCCL can get an effective NVLink bandwidth of 370GB/s"
    # (https://github.com/NVIDIA/nccl-tests/issues/212); nccl-tests all-reduce bus bandwidth on
    # 4x H100 "~366 GB/s" (https://waynehacking8.github.io/blog/nccl-nvlink-bandwidth/);
    # DeepEP's normal kernels reach ~155 GB/s of NVLink in all-to-all on H800. 360 GB/s is used;
    # the one-shot slopes of vLLM PR 24111 (393 / 322 GB/s at 4 / 6 ranks) agree. Custom
    # all-reduce: one-shot 5.7 us fixed, two-shot 13.1 us (H100_ONE_SHOT_TIMINGS,
    # H100_TWO_SHOT_TIMINGS). `latency_s` (NCCL-style collectives: EP all-to-all, all-reduces
    # above 8 MiB) is unchanged at 10 us.
    Interconnect(name="nvlink4", description="NVLink 4 / NVSwitch (H100, H200, H800 SXM)",
                 bytes_per_s=_NVLINK4_BYTES_PER_S, latency_s=10 * US,
                 custom_all_reduce_latency_s=custom_ar_fixed_s(H100_ONE_SHOT_TIMINGS,
                                                               _NVLINK4_BYTES_PER_S),
                 two_shot_latency_s=custom_ar_fixed_s(H100_TWO_SHOT_TIMINGS,
                                                      _NVLINK4_BYTES_PER_S, two_shot=True),
                 source="https://www.nvidia.com/en-us/data-center/h100/ ; "
                        "https://github.com/NVIDIA/nccl-tests/issues/212 (~370 GB/s) ; "
                        "https://github.com/vllm-project/vllm/pull/24111 (one-shot in graphs)"),
    # A100 SXM: 600 GB/s bidirectional = 300 GB/s each way; ~240 GB/s achieved (80 %).
    # One-shot custom all-reduce: NOT measured in a CUDA graph by any source found. SGLang PR
    # 2688 (https://github.com/sgl-project/sglang/pull/2688) times vLLM's kernel out of a graph
    # on A100 at 11.3-14.2 us for 512 B-32 KiB over 2-8 ranks ("test_size = 4096, world_size =
    # 8, vllm time = 0.0142ms"), where the same script on H100 (PR 2904) gives 8.5-11.8 us
    # against 5.5-6.4 us in graphs (PR 24111): launch and copy time, not the kernel's. The
    # previous 10 us is kept for it, between the two (two-shot: two rounds, 20 us); an A100
    # in-graph table would replace it.
    Interconnect(name="nvlink3", description="NVLink 3 / NVSwitch (A100 SXM)",
                 bytes_per_s=240 * GB, latency_s=10 * US, custom_all_reduce_latency_s=10 * US,
                 source="https://www.nvidia.com/en-us/data-center/a100/"),
    # B200/GB200: 1.8 TB/s bidirectional = 900 GB/s each way; 80 % achieved. One-shot custom
    # all-reduce: 7.0 us fixed, two-shot 19.0 us, measured on B300 (same NVLink 5;
    # B300_ONE_SHOT_TIMINGS, B300_TWO_SHOT_TIMINGS).
    Interconnect(name="nvlink5", description="NVLink 5 / NVSwitch (B200, GB200, B300)",
                 bytes_per_s=_NVLINK5_BYTES_PER_S, latency_s=8 * US,
                 custom_all_reduce_latency_s=custom_ar_fixed_s(B300_ONE_SHOT_TIMINGS,
                                                               _NVLINK5_BYTES_PER_S),
                 two_shot_latency_s=custom_ar_fixed_s(B300_TWO_SHOT_TIMINGS,
                                                      _NVLINK5_BYTES_PER_S, two_shot=True),
                 source="https://www.nvidia.com/en-us/data-center/dgx-b200/ ; "
                        "https://github.com/vllm-project/vllm/pull/37756 (one-shot in graphs)"),
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
    # PR 39080, "vllm/us"); 8 us, rounded up, for the one-shot custom all-reduce and for
    # `latency_s` (no two-shot timing on ROCm was found: two one-shot rounds,
    # Interconnect.all_reduce_s).
    Interconnect(name="xgmi3",
                 description="AMD Infinity Fabric / xGMI, 8-GPU mesh (MI300X, MI325X)",
                 bytes_per_s=314 * GB, latency_s=8 * US,
                 custom_all_reduce_latency_s=8 * US,
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
                 custom_all_reduce_latency_s=8 * US,
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
