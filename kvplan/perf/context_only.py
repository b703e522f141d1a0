"""TensorRT-LLM's context-only kernels in a simulated mixed step (trtsim67): the kernels MLA's
context path runs on a step's prefill tokens alone (kvplan.perf.trtllm_bytes
`attention_layer_kernels`: kv_b's input quantization, the k_nope copy, the qkv concat, the
attention op's RoPE and FP8 copies), each beyond its kernel floor as `roofline.step_time`
charges it (`_Step.over_floor`), in the span's attention layers. The whole-batch kernels stay
in `step_time` (kvplan.perf.mixed_step). Pure."""

from __future__ import annotations

from kvplan.engines.cost_traits import PrefillOpCount
from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import Efficiency
from kvplan.perf.step_ops import _Step
from kvplan.perf.trtllm_bytes import attention_layer_kernels
from kvplan.perf.weight_bytes import bytes_per_param

MEMO = 1 << 16  # step sizes remembered (cleared when full): speed only


class ContextOnlyCost:
    """The context-only kernels' seconds for a step's prefill tokens; `byte_rows` (bytes a token
    of one attention layer, one per kernel) None where the engine charges none."""

    def __init__(self, spec: ModelSpec, gpu: GPU, eff: Efficiency, *, att_tp: int,
                 quantization: str | None, kv_dtype: str, span: range) -> None:
        self.gpu, self.eff = gpu, eff
        self.byte_rows: tuple[float, ...] | None = None
        if eff.prefill_op_count is PrefillOpCount.trtllm:
            att_math = bytes_per_param(spec, att_tp, quantization)[1]["attention"]
            self.byte_rows = tuple(b for b, only in attention_layer_kernels(
                spec, gpu, att_tp=att_tp, math=gpu.runs(att_math), norm=False,
                kv_dtype=kv_dtype, version=eff.engine_version) if only)
        self.att_layers = sum(map(spec.has_attention, span))
        self._memo: dict[int, float] = {}

    def seconds(self, tokens: int) -> float:
        """The kernels over `tokens` prefill tokens in the span's attention layers; 0 where the
        engine charges none."""
        if not self.byte_rows or not tokens:
            return 0.0
        hit = self._memo.get(tokens)
        if hit is None:
            if len(self._memo) >= MEMO:
                self._memo.clear()
            s = _Step(self.gpu, self.eff, self.eff.kernel_floor_s)
            for b in self.byte_rows:
                s.over_floor("small_kernels", tokens * b)
            hit = self._memo[tokens] = self.att_layers * sum(s.result().by_op.values())
        return hit
