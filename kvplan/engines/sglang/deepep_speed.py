"""DeepEP's measured kernel speeds (issue 29; deepepbw59, extended to more GPUs and EP sizes by
deepepx60): a fixed time per call and a bandwidth for DeepEP's dispatch and combine kernels,
per GPU, mode and EP size, read from published measurements (deepep_speeds.json beside this
module, each entry with its table); kvplan.engines.sglang.deepep prices SGLang's
--moe-a2a-backend deepep with them (`DeepEp.seconds`). Kernel benchmarks, not a fit to any
serving row.

The measurements. aiconfigurator (ai-dynamo/aiconfigurator 095f58a51) ships DeepEP's own
benchmarks run by its collectors on each system, systems/data/<system>/comm/sglang/<version>/
wideep_deepep_{ll,normal}_perf.parquet:
- SGLang 0.5.12's image (collection_meta.yaml: lmsysorg/sglang:v0.5.12-cu130, collected
  2026-07-31), one node (`node_num` 1, "the full node: 4 on GB200, 8 on B200/H200",
  collect_deepep_normal.py:7-8): GB200 and GB300 at EP 4 over one NVL72 tray's NVLink 5; B200,
  B300 at EP 8 over an HGX node's NVLink 5; H100 SXM and H200 at EP 8 over NVLink 4. Low
  latency: collect_deepep_ll.py wrapping DeepEP's test_low_latency.py (`dispatch_avg_t_us`,
  `combine_avg_t_us`, 1 to 1,024 tokens a rank); normal: collect_deepep_normal.py wrapping
  test_intranode.py (`*_transmit_us`, 1 to 131,072 tokens, per SM count). H100's and H200's
  normal tables are marked `status: partial`; their R1-shape rows at 20 SMs are all there.
- The legacy SGLang 0.5.6.post2 tables (collection_meta.yaml `provenance: legacy`; the rows
  say version "0.5.0", device "NVIDIA H100"), the only rows above one node: `node_num` 2 / 4 /
  8, DeepEP's test_internode.py (collector/wideep/sglang/deepep/README.md; normal and, with
  --test-ll-compatibility, low latency) on 8-GPU nodes (test_internode.py:51 asserts 8 local
  ranks; aiconfigurator's adapter reads them as `ep_size = node_num * 8`, collector/README.md
  "MoE table units and caveats"), so EP 16 / 32 / 64 over NVLink inside a node and RDMA
  between. The internode normal kernels' call is the notify kernel and the transfer
  (test_internode.py:274 times both, `*_notify_us` and `*_transmit_us`): kvplan takes their
  sum. h200_sxm's legacy tables hold the same numbers as h100_sxm's, row for row (its normal
  table even says "NVIDIA H100" in part): one measurement, H100's, not two.
kvplan reads the rows of DeepSeek-V3/R1's shape (hidden 7,168, 256 experts, top-8) and, for
normal mode, 20 SMs (DeepEP's default, deep_ep/buffers/legacy.py:31 `num_sms: int = 20` at
dd758ca, which SGLang keeps without --deepep-config; the srt-slurm recipes pass a
--deepep-config file whose SM counts kvplan does not read, so the 20-SM rows stand in).

What an entry gives kvplan: the time at its fewest tokens a rank (1; 2 in the legacy
low-latency rows, which start there) is the call's fixed cost (`latency_s`); the bytes between
that and its last row (low latency: 1,024 tokens, or 256 in the legacy rows, their largest;
normal: 16,384, above any srt-slurm prefill chunk a rank) over the time between them is the
bandwidth. The bytes are the "logical" ones DeepEP's tests count, the rank's own share among
them (test_low_latency.py:218-224 at dd758ca: every selected expert's message; test_intranode
.py:188-201: recv_x, the rank's own tokens included), in kvplan's per-message / per-pair sizes
(kvplan.engines.sglang.deepep): LL a token 8 messages; normal a token ep x p (token, rank)
pairs, p = 1 - C(256 - 256 / ep, 8) / C(256, 8) at the measured EP (the module's uniform
routing). The rank's own share is 1 / ep of those bytes by symmetry, so a call's time is
`latency_s + remote bytes x ep / (ep - 1) / bytes_per_s`: at the measured EP, the table's own
times back.

Which measurement prices a launch (`deepep_speed`): the GPU's entry at the launch's mode and
EP. Where none is, only two stand-ins, each named in the plan's notes (`DeepEpSpeed.note`),
else kvplan refuses the launch:
(1) GB200 / GB300 at EP 8 to 72, one NVL72 rack, whose NVLink reaches every GPU (the recipes
set NCCL_MNNVL_ENABLE / MC_FORCE_MNNVL): the one-tray EP 4 rows; no node_num > 1 row exists
for them (the normal collector is single-node only, collect_deepep_normal.py:14-21), and the
per-token line of the EP 4 rows is the rack's fabric, not RDMA.
(2) H200 at EP 16 / 32 / 64: H100's internode rows, which the H200 tables repeat; the RDMA
NICs between the nodes, not the GPU, bound those kernels.
Also said plainly: SGLang 0.5.8's recipes ran the DeepEP their image carried, not 0.5.12's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from math import comb
from pathlib import Path

from kvplan._util.errors import UnmodelledError

US = 1e-6  # seconds a microsecond
DATA_FILE = Path(__file__).with_name("deepep_speeds.json")

# The measured rows' shape (module docstring): DeepSeek-V3/R1.
HIDDEN, EXPERTS, TOP_K = 7168, 256, 8
LL_DISPATCH_MSG = 16 + HIDDEN + HIDDEN // 128 * 4  # 7,408 B: header, FP8 values, fp32 scales
LL_COMBINE_MSG = HIDDEN * 2  # 14,336 B: bf16
NORMAL_DISPATCH_PAIR = HIDDEN + HIDDEN // 128 * 4 + 4 + TOP_K * 12  # 7,492 B
NORMAL_COMBINE_PAIR = HIDDEN * 2 + 4 + TOP_K * 4  # 14,372 B
RACK_GPUS = 72  # an NVL72 rack: stand-in (1)'s reach
RACK_GPUS_NAMES = ("GB200", "GB300")


def measured_pairs(ep: int) -> float:
    """(token, rank) pairs a token makes in normal mode at `ep` ranks, its own rank among
    them: ep x (1 - C(256 - 256 / ep, 8) / C(256, 8)) (module docstring)."""
    return ep * (1 - comb(EXPERTS - EXPERTS // ep, TOP_K) / comb(EXPERTS, TOP_K))


MEASURED_PAIRS = measured_pairs(4)  # GB200 / GB300's EP 4 (deepepbw59's constant)


@dataclass(frozen=True, kw_only=True)
class KernelSpeed:
    """A DeepEP kernel's fixed time per call and its bandwidth in logical bytes."""

    latency_s: float
    bytes_per_s: float

    @classmethod
    def read(cls, tokens: tuple[int, int], us: tuple[float, float],
             logical_bytes_per_token: float) -> KernelSpeed:
        """The speed two measured rows give (module docstring): `us` at `tokens`."""
        moved = (tokens[1] - tokens[0]) * logical_bytes_per_token
        return cls(latency_s=us[0] * US, bytes_per_s=moved / ((us[1] - us[0]) * US))


@dataclass(frozen=True, kw_only=True)
class Measurement:
    """One entry of deepep_speeds.json: a GPU's DeepEP kernels at one mode and EP size."""

    gpu: str
    mode: str  # SGLang's resolved --deepep-mode: "low_latency" or "normal"
    ep: int
    nodes: int
    fabric: str
    table: str
    tokens: tuple[int, int]
    dispatch_us: tuple[float, float]
    combine_us: tuple[float, float]

    def speeds(self) -> tuple[KernelSpeed, KernelSpeed]:
        """(dispatch, combine) in logical bytes (module docstring)."""
        if self.mode == "low_latency":
            per = (TOP_K * LL_DISPATCH_MSG, TOP_K * LL_COMBINE_MSG)
        else:
            pairs = measured_pairs(self.ep)
            per = (pairs * NORMAL_DISPATCH_PAIR, pairs * NORMAL_COMBINE_PAIR)
        return (KernelSpeed.read(self.tokens, self.dispatch_us, per[0]),
                KernelSpeed.read(self.tokens, self.combine_us, per[1]))


@dataclass(frozen=True, kw_only=True)
class DeepEpSpeed:
    """The speeds that price a launch: `measurement`'s, and `note` where it stands in for an
    EP size or GPU it was not taken at (module docstring; None: measured as launched)."""

    dispatch: KernelSpeed
    combine: KernelSpeed
    measurement: Measurement
    note: str | None = None


@cache
def measurements() -> tuple[Measurement, ...]:
    """deepep_speeds.json's entries, read once."""
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return tuple(Measurement(gpu=m["gpu"], mode=m["mode"], ep=m["ep"], nodes=m["nodes"],
                             fabric=m["fabric"], table=m["table"], tokens=tuple(m["tokens"]),
                             dispatch_us=tuple(m["dispatch_us"]),
                             combine_us=tuple(m["combine_us"]))
                 for m in data["measurements"])


def _entry(gpu: str, mode: str, ep: int) -> Measurement | None:
    return next((m for m in measurements() if (m.gpu, m.mode, m.ep) == (gpu, mode, ep)), None)


def _stand_in(gpu: str, mode: str, ep: int) -> tuple[Measurement, str] | None:
    """The two stand-ins of the module docstring, with the note that says so."""
    if gpu in RACK_GPUS_NAMES and 4 < ep <= RACK_GPUS:
        m = _entry(gpu, mode, 4)
        if m is not None:
            return m, (f"DeepEP {mode} at EP {ep} on {gpu}: priced by its one-tray EP 4 "
                       "measurement (aiconfigurator's tables hold no multi-tray row; the rack's "
                       "NVLink reaches all its GPUs)")
    if gpu == "H200" and ep > 8:
        m = _entry("H100-80GB", mode, ep)
        if m is not None:
            return m, (f"DeepEP {mode} at EP {ep} on H200: priced by H100's {m.nodes}-node "
                       "measurement (the legacy H200 table repeats H100's rows; RDMA between "
                       "the nodes bounds these kernels)")
    return None


def deepep_speed(gpu: str, mode: str, ep: int) -> DeepEpSpeed:
    """The speeds that price DeepEP's `mode` kernels at `ep` ranks on `gpu` (module docstring):
    its measurement, else a named stand-in, else refused."""
    found = _entry(gpu, mode, ep)
    note = None
    if found is None:
        stood = _stand_in(gpu, mode, ep)
        if stood is None:
            have = ", ".join(f"{g} EP {e}" for g, e in sorted(
                {(m.gpu, m.ep) for m in measurements() if m.mode == mode}))
            raise UnmodelledError(
                f"--moe-a2a-backend deepep: no measurement of DeepEP's {mode} kernels on "
                f"{gpu} at EP {ep} (measured: {have}; "
                "kvplan/engines/sglang/deepep_speeds.json)")
        found, note = stood
    dispatch, combine = found.speeds()
    return DeepEpSpeed(dispatch=dispatch, combine=combine, measurement=found, note=note)


def measured_speed(gpu_name: str, mode: str, ep: int = 4
                   ) -> tuple[KernelSpeed, KernelSpeed] | None:
    """(dispatch, combine) measured for DeepEP's `mode` kernels on `gpu_name` at exactly `ep`
    ranks; None where no entry was read (no stand-in)."""
    m = _entry(gpu_name, mode, ep)
    return None if m is None else m.speeds()
