"""The seconds of an engine's sampler in one step (`SamplerCost`): each kernel of
kvplan.engines.vllm.sampler.VllmSampler charged as a memory-bound op, as roofline._Step.op
charges one with no FLOPs: max(bytes / (HBM bandwidth x the device's hbm efficiency), kernel
floor). Nothing fitted here: the bytes are read in the engine's and PyTorch's code, the
bandwidth and efficiency are the GPU preset's and kvplan.perf.efficiency's (the ones every
other memory-bound op uses). A lower bound where a kernel does not reach that bandwidth: CUB's
segmented sort gives each row one thread block, and one block per SM streams below the
device's rate (not measured here)."""

from __future__ import annotations

from kvplan.engines.vllm.sampler import VllmSampler
from kvplan.hardware.gpus import GPU
from kvplan.perf.efficiency import Efficiency


class SamplerCost:
    """Seconds of `sampler` over `rows` requests' logits of `vocab` tokens on `gpu`;
    memoised by rows."""

    def __init__(self, sampler: VllmSampler, *, vocab: int, gpu: GPU, eff: Efficiency) -> None:
        self.sampler, self.vocab = sampler, vocab
        self._byte_rate = gpu.hbm_bytes_per_s * eff.hbm
        self._floor = eff.kernel_floor_s
        self._memo: dict[int, float] = {}

    def seconds(self, rows: int) -> float:
        hit = self._memo.get(rows)
        if hit is None:
            hit = self._memo[rows] = sum(
                max(rows * self.vocab * p.bytes_per_element / self._byte_rate, self._floor)
                for p in self.sampler.passes(rows, self.vocab))
        return hit
