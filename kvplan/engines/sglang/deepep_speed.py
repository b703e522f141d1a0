"""DeepEP's measured kernel speeds (issue 29, deepepbw59): a fixed time per call and a
bandwidth for DeepEP's dispatch and combine kernels, per mode and GPU, read from published
measurements; kvplan.engines.sglang.deepep prices SGLang's --moe-a2a-backend deepep with them
(`DeepEp.seconds`). Measurements of DeepEP's kernels, not a fit to any serving row.

The measurements. aiconfigurator (ai-dynamo/aiconfigurator 095f58a51, PR 1314 f678dbe3b) ships
DeepEP's own benchmarks run by its collectors on each system:
aic-core/src/aiconfigurator_core/systems/data/{gb200,gb300}/comm/sglang/0.5.12/
wideep_deepep_ll_perf.parquet (collector/wideep/sglang/collect_deepep_ll.py wrapping DeepEP's
test_low_latency.py: `dispatch_avg_t_us`, `combine_avg_t_us` per `num_token` a rank, 1 to
1,024) and wideep_deepep_normal_perf.parquet (collect_deepep_normal.py wrapping
test_intranode.py: `dispatch_transmit_us`, `combine_transmit_us` per `num_token`, 1 to 131,072,
and per SM count). Both at `node_num` 1, "the full node: 4 on GB200" (collect_deepep_normal.py
:7-8), so EP 4 over one tray's NVLink 5; SGLang 0.5.12's image, DeepEP 1.2.1+d28bd67
(PR 1314's text). kvplan reads the rows of DeepSeek-V3/R1's shape (hidden 7,168, 256 experts,
top-8) and, for normal mode, 20 SMs (DeepEP's default, deep_ep/buffers/legacy.py:31
`num_sms: int = 20` at dd758ca, which SGLang keeps without --deepep-config; the srt-slurm
recipes pass a --deepep-config file whose SM counts kvplan does not read, so the 20-SM rows
stand in for them).

What a row gives kvplan: the time at 1 token a rank is the call's fixed cost (`latency_s`);
the bytes between 1 token and the table's last row kvplan uses (LL: 1,024, its largest;
normal: 16,384, above any srt-slurm prefill chunk a rank) over the time between them is the
bandwidth. The bytes are the "logical" ones DeepEP's tests count, the rank's own share among
them (test_low_latency.py:218-224 at dd758ca: every selected expert's message; test_intranode
.py:188-201: recv_x, the rank's own tokens included), in kvplan's per-message / per-pair sizes
(kvplan.engines.sglang.deepep): LL a token 8 messages; normal a token 4 x p pairs at EP 4, p =
1 - C(192, 8) / C(256, 8) = 0.903554 (the module's uniform routing). The rank's own share is
1 / ep of those bytes by symmetry, so a call's time is `latency_s + remote bytes x ep / (ep - 1)
/ bytes_per_s`.

GB200, R1's shape (the parquet rows, us):
- LL dispatch 16.570 at 1 token, 112.921 at 1,024: 1,023 x 8 x 7,408 B = 60,626,944 B in
  96.351 us = 629.23 GB/s; combine 18.129 and 168.290: 1,023 x 8 x 14,336 B = 117,325,824 B in
  150.161 us = 781.33 GB/s.
- Normal dispatch 34.092 at 1 token, 1,526.745 at 16,384; combine 48.010 and 2,585.740.
GB300: LL 16.677 / 112.878 and 18.335 / 166.644; normal 37.836 / 1,491.961 and
44.494 / 2,532.412.

Stand-ins, said plainly: (1) EP 8 / 16 / 32 over the NVL72's multi-node NVLink are priced by
the one-tray EP 4 measurement (no node_num > 1 row exists for GB200 / GB300: the normal
collector is single-node only, collect_deepep_normal.py:14-21); (2) SGLang 0.5.8's recipes ran
the DeepEP their 0.5.8 image carried, not 1.2.1; (3) any other GPU has no entry and is priced at
its EP link's bandwidth and latency, as the generic all-to-all (kvplan.perf.roofline).
(aiconfigurator also holds B200 / B300 / H100 / H200 tables; not read here.)"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

US = 1e-6  # seconds a microsecond

# The measured rows' shape (module docstring): DeepSeek-V3/R1.
HIDDEN, EXPERTS, TOP_K, MEASURED_EP = 7168, 256, 8, 4
LL_DISPATCH_MSG = 16 + HIDDEN + HIDDEN // 128 * 4  # 7,408 B: header, FP8 values, fp32 scales
LL_COMBINE_MSG = HIDDEN * 2  # 14,336 B: bf16
NORMAL_DISPATCH_PAIR = HIDDEN + HIDDEN // 128 * 4 + 4 + TOP_K * 12  # 7,492 B
NORMAL_COMBINE_PAIR = HIDDEN * 2 + 4 + TOP_K * 4  # 14,372 B
# Pairs a token at the measured EP 4: 4 x (1 - C(192, 8) / C(256, 8)).
MEASURED_PAIRS = MEASURED_EP * (1 - comb(EXPERTS - EXPERTS // MEASURED_EP, TOP_K)
                                / comb(EXPERTS, TOP_K))


@dataclass(frozen=True, kw_only=True)
class Measured:
    """One kernel's two table rows: `us_at_1` at 1 token a rank, `us_at_n` at `n` tokens."""

    n: int
    us_at_1: float
    us_at_n: float


@dataclass(frozen=True, kw_only=True)
class KernelSpeed:
    """A DeepEP kernel's fixed time per call and its bandwidth in logical bytes."""

    latency_s: float
    bytes_per_s: float

    @classmethod
    def read(cls, row: Measured, logical_bytes_per_token: float) -> KernelSpeed:
        """The speed two measured rows give (module docstring)."""
        moved = (row.n - 1) * logical_bytes_per_token
        return cls(latency_s=row.us_at_1 * US,
                   bytes_per_s=moved / ((row.us_at_n - row.us_at_1) * US))


def _speeds(ll: tuple[Measured, Measured],
            normal: tuple[Measured, Measured]) -> dict[str, tuple[KernelSpeed, KernelSpeed]]:
    return {
        "low_latency": (KernelSpeed.read(ll[0], TOP_K * LL_DISPATCH_MSG),
                        KernelSpeed.read(ll[1], TOP_K * LL_COMBINE_MSG)),
        "normal": (KernelSpeed.read(normal[0], MEASURED_PAIRS * NORMAL_DISPATCH_PAIR),
                   KernelSpeed.read(normal[1], MEASURED_PAIRS * NORMAL_COMBINE_PAIR)),
    }


# GPU name -> resolved --deepep-mode -> (dispatch, combine): the parquet rows of the module
# docstring.
DEEPEP_SPEEDS: dict[str, dict[str, tuple[KernelSpeed, KernelSpeed]]] = {
    "GB200": _speeds(
        ll=(Measured(n=1024, us_at_1=16.570, us_at_n=112.921),
            Measured(n=1024, us_at_1=18.129, us_at_n=168.290)),
        normal=(Measured(n=16384, us_at_1=34.092, us_at_n=1526.745),
                Measured(n=16384, us_at_1=48.010, us_at_n=2585.740))),
    "GB300": _speeds(
        ll=(Measured(n=1024, us_at_1=16.677, us_at_n=112.878),
            Measured(n=1024, us_at_1=18.335, us_at_n=166.644)),
        normal=(Measured(n=16384, us_at_1=37.836, us_at_n=1491.961),
                Measured(n=16384, us_at_1=44.494, us_at_n=2532.412))),
}


def measured_speed(gpu_name: str, mode: str) -> tuple[KernelSpeed, KernelSpeed] | None:
    """(dispatch, combine) measured for DeepEP's `mode` kernels on `gpu_name`; None where no
    measurement was read (module docstring)."""
    return DEEPEP_SPEEDS.get(gpu_name, {}).get(mode)
