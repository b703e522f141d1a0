"""One step's operations priced on one GPU: `_Step` accumulates each operation's time, max(FLOPs
/ (peak x efficiency), bytes / (HBM x efficiency), kernel floors) (`op`), the small kernels at
the floor (`kernels`, `over_floor`), fixed time and collectives, into a `StepTime`; with the
kernels of one layer's attention projections (`_projection_kernels`) and the lightning
indexer's ops (`_indexer_ops`). The rules are kvplan.perf.roofline's docstring's; its
`step_time` walks the layers. Split from kvplan.perf.roofline, which re-exports each name."""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.dtypes import GemmMath
from kvplan.hardware.gpus import GPU
from kvplan.perf.attention_cost import LOGIT_BYTES, IndexerCost
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.flops import (
    MLAForm,
)


@dataclass(frozen=True, kw_only=True)
class OpTime:
    name: str
    seconds: float
    bound: str  # "compute", "memory", "comm" or "latency"


@dataclass(frozen=True, kw_only=True)
class StepTime:
    """One step on one GPU: total seconds and the time by operation kind (summed over layers)."""

    seconds: float
    by_op: dict[str, float]
    flops: float
    bytes: float
    comm_seconds: float


class _Step:
    """Accumulates operation times for one step. `floor_s` is the least time of one kernel
    (the CUDA-graph floor); an eager prefill's launch time is added apart (`prefill_launch`)."""

    def __init__(self, gpu: GPU, eff: Efficiency, floor_s: float) -> None:
        self.gpu, self.eff, self.floor_s = gpu, eff, floor_s
        self.by_op: dict[str, float] = {}
        self.flops = self.bytes = self.comm = 0.0
        self.events: list[tuple[float, int]] = []  # (seconds, kernels) in order: launch_model
        # Asked of the GPU at every op and small kernel, the same answers all step (simspeed67).
        self._peaks: dict[tuple[GemmMath, bool], tuple[GemmMath, int]] = {}
        self._hbm_rate = gpu.hbm_bytes_per_s * eff.hbm

    def op(self, name: str, *, flops: float, nbytes: float, math: GemmMath = GemmMath.bf16,
           attention: bool = False, kernels: int = 1, least_s: float | None = None, rows: int = 0,
           expert_rows: float = 0.0, mma_sync: bool = False, fp8_fit: bool = False,
           mxfp4_width: int = 0) -> None:
        """`math`: the type the checkpoint asks its GEMMs to run at (the device's answer:
        GPU.runs; `mma_sync`: a kernel of Ampere's mma.sync only, GPU.peak_flops). `least_s`:
        the measured least time, in place of its kernels' floors. `rows`: a weight GEMM's M, for
        `Efficiency.gemm_shape` (0: not one). `expert_rows`: the routed experts' grouped GEMMs,
        that many rows an expert (Efficiency.experts_fraction, with `fp8_fit` and
        `mxfp4_width`: MXFP4 experts' per-rank width outside Marlin, 0: not them)."""
        got = self._peaks.get((math, mma_sync))
        if got is None:
            got = self._peaks[math, mma_sync] = (self.gpu.runs(math),
                                                 self.gpu.peak_flops(math, mma_sync=mma_sync))
        ran, peak = got
        frac = self.eff.attention if attention else self.eff.gemm
        if attention and ran is GemmMath.fp8 and self.eff.fp8_attention is not None:
            frac = self.eff.fp8_attention
        if self.eff.gemm_shape is not None and rows and flops and ran is GemmMath.bf16:
            # Opt-in (kvplan.perf.gemm_shape): the fraction of its mean kernel's shape, N x K =
            # the weight elements (flops / 2 M) / kernels.
            frac = self.eff.gemm_shape.fraction(rows, flops / (2 * rows) / kernels)
        if ran is GemmMath.fp8 and not attention and self.eff.fp8_gemm is not None:
            frac = self.eff.fp8_gemm
        if ran is GemmMath.fp8 and not (attention or expert_rows) and self.eff.fp8_dense_gemm:
            frac = self.eff.fp8_dense_gemm  # opt-in: dense FP8 GEMMs' fitted fraction
        tables = self.eff.sm100_tables
        if tables is not None and ran is GemmMath.fp8 and rows and flops and not (
                attention or expert_rows):
            # Opt-in (kvplan.perf.sm100_tables): B200 vLLM's table by M and N x K per kernel.
            frac = tables.gemm_fraction(rows, flops / (2 * rows) / kernels) or frac
        if expert_rows:
            frac = self.eff.experts_fraction(ran, expert_rows, frac, fp8_fit,
                                             0 if mma_sync else mxfp4_width)
        hbm = self._hbm(ran, attention)
        if ran is not GemmMath.bf16 and not attention:
            kernels *= 2  # each w8a8 / w4a4 GEMM quantizes its activations (roofline docstring)
        floor = kernels * self.floor_s if least_s is None else least_s
        t = max(flops / (peak * frac), nbytes / (self.gpu.hbm_bytes_per_s * hbm), floor)
        self.flops += flops
        self.bytes += nbytes
        self.by_op[name] = self.by_op.get(name, 0.0) + t
        self.events.append((t, kernels))

    def _hbm(self, ran: GemmMath, attention: bool) -> float:
        """The fraction of HBM bandwidth an op streams at (`op`)."""
        return self.eff.fp8_gemm_hbm if ran is GemmMath.fp8 and not attention else self.eff.hbm

    def stream_seconds(self, nbytes: float, math: GemmMath) -> float:
        """The time a weight GEMM of `math` streams `nbytes` in, as `op` charges it."""
        return nbytes / (self.gpu.hbm_bytes_per_s * self._hbm(self.gpu.runs(math), False))

    def overlap(self, name: str, seconds: float) -> None:
        """Time of `name` already charged that another stream's work hides."""
        if seconds > 0:
            self.by_op[name] = self.by_op.get(name, 0.0) - seconds
            self.events.append((-seconds, 0))

    def kernels(self, name: str, n: int) -> None:
        self.by_op[name] = self.by_op.get(name, 0.0) + n * self.floor_s
        self.events.append((n * self.floor_s, n))

    def over_floor(self, name: str, nbytes: float) -> None:
        """A small kernel already counted at the floor moves `nbytes`: the time beyond it."""
        t = nbytes / self._hbm_rate
        self.bytes += nbytes
        if t > self.floor_s:
            self.by_op[name] = self.by_op.get(name, 0.0) + (t - self.floor_s)
            self.events.append((t - self.floor_s, 0))

    def fixed(self, name: str, seconds: float) -> None:
        """Time that depends on neither FLOPs nor bytes (the per-layer overhead)."""
        self.by_op[name] = self.by_op.get(name, 0.0) + seconds
        self.events.append((seconds, 0))

    def collective(self, name: str, seconds: float) -> None:
        if seconds > 0:  # a collective is a kernel too: at least one floor
            seconds = max(seconds, self.floor_s)
        self.comm += seconds
        self.by_op[name] = self.by_op.get(name, 0.0) + seconds
        self.events.append((seconds, 1))

    def result(self) -> StepTime:
        total = sum(self.by_op.values()) + self.eff.step_overhead_s
        return StepTime(seconds=total, by_op=dict(self.by_op), flops=self.flops,
                        bytes=self.bytes, comm_seconds=self.comm)


def _projection_kernels(latent: bool, form: MLAForm, absorb: int) -> int:
    """GEMM kernels of one layer's attention projections (kvplan.perf.roofline's docstring)."""
    if not latent:
        return 2  # fused qkv_proj, o_proj
    extra = 2 if absorb else 1 if form is MLAForm.decompressed else 0
    return 3 + extra  # fused q_a + kv_a, q_b, o_proj (+ W_UK / W_UV bmm, or kv_b)


def _indexer_ops(s: _Step, ind: IndexerCost, *, span: int, tokens: int, requests: int,
                 phase: str, bpp: float, math: GemmMath) -> None:
    """One layer's lightning indexer on a rank (kvplan.perf.attention_cost, steps 1-4), whole
    on every rank: its projections (`bpp`: the whole model's bytes per parameter); the FP8
    logits of every token over every key it sees (decode: `span` per request, each request's
    keys read; prefill: one causal prompt of `tokens`, its keys gathered once), fp32 logits
    written; the top-k reading them back."""
    s.op("indexer_proj", flops=tokens * 2 * ind.proj_params, nbytes=ind.proj_params * bpp,
         math=math, kernels=ind.proj_kernels, rows=tokens)
    if phase == "decode":
        pairs = tokens * span
        keys = requests * span
    else:
        pairs = tokens * (span + 1) / 2
        keys = tokens
    logits = pairs * LOGIT_BYTES
    s.op("indexer", flops=pairs * ind.pair_flops, nbytes=keys * ind.key_bytes + logits,
         attention=True, math=GemmMath.fp8)
    s.op("indexer_topk", flops=0.0, nbytes=logits)
