"""The GEMMs an EAGLE head runs beyond its decoder layers (kvplan.engines.vllm.eagle_head
`extra_gemms`), priced as kvplan.perf.step_ops' `_Step.op` prices a weight GEMM: max(FLOPs /
(peak x GEMM efficiency), weight bytes / (HBM x efficiency), its kernel floor).

- the fc (EAGLE-1's 2h -> h every pass, EAGLE-3's 3h -> h once a step) is its own kernel, one
  floor, and whole on every TP rank (0.10.0 torch.nn.Linear, 0.32.0 ReplicatedLinear);
- EAGLE-3's qkv_proj takes K = 2h where a target-shaped layer takes h: its embeds half is
  priced as the extra weights and FLOPs of the same kernel (no floor of its own), split over
  the attention TP ranks as QKVParallelLinear is.

Weight bytes per parameter are the head's attention group's (kvplan.perf.weight_bytes), the
activations' bytes are not charged (as roofline.step_time charges a projection)."""

from __future__ import annotations

from kvplan.engines.vllm.eagle_head import VllmEagleHead
from kvplan.hardware.gpus import GPU
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.step_ops import _Step
from kvplan.perf.weight_bytes import bytes_per_param


class DraftHeadCost:
    """Seconds of `head`'s extra GEMMs over `tokens` tokens in a first or later draft pass,
    on one rank of `att_tp` attention-TP ranks (memoised)."""

    def __init__(self, head: VllmEagleHead, gpu: GPU, eff: Efficiency, *, att_tp: int = 1,
                 quantization: str | None = None) -> None:
        self.head, self.gpu, self.eff, self.att_tp = head, gpu, eff, att_tp
        bpp, math = bytes_per_param(head.layers, 1, quantization)
        self.bpp, self.math = bpp["attention"], math["attention"]
        self._memo: dict[tuple[int, bool], float] = {}

    def seconds(self, tokens: int, *, first: bool) -> float:
        key = (tokens, first)
        hit = self._memo.get(key)
        if hit is None:
            s = _Step(self.gpu, self.eff, self.eff.kernel_floor_s)
            for g in self.head.extra_gemms(first=first):
                whole = g is self.head.fc
                split = 1 if whole else self.att_tp
                s.op(g.name, flops=g.flops(tokens) / split, nbytes=g.params / split * self.bpp,
                     math=self.math, rows=tokens, least_s=None if whole else 0.0)
            hit = self._memo[key] = sum(s.by_op.values())
        return hit
