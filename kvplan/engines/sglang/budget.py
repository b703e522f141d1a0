"""SGLang's KV budget (``srt/server_args.py``: the default mem_fraction_static;
``model_executor/model_runner.py: profile_max_num_token``):

    rest = free_before_weights x mem_fraction_static - weights; tokens = rest // cell, floored
    to the page size. free_before_weights = total - memory in use before the weights load.

The memory in use before the weights load is an estimate from public start-up logs (below);
how ``rest`` splits between SGLang's pools is kvplan.engines.sglang.pools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvplan._util.fitted import Fitted
from kvplan._util.units import GiB, MiB
from kvplan._util.versions import version_key
from kvplan.engines.base import total_bytes_of
from kvplan.engines.reserve import Reserve, ReservePart, interpolate, trunc
from kvplan.engines.sglang.options import sglang_options

if TYPE_CHECKING:
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec


# Memory in use before the weights load, per GPU: the device total less "Load weight begin. avail
# mem" (SGLang's "GB" are GiB: the logged K sizes are #tokens x cell / 2^30). It is the CUDA
# context and torch init (0.4-0.7 GiB) plus what "Init torch distributed" adds: 0.09-0.19 GiB
# without NVSwitch, 1.25 GiB on 8 x H100 (NCCL's NVLink buffers). Public logs
# (tests/data/engine_logs/sglang_startup_logs.json):
# - TP1: 0.71 GiB, the median of the seven TP1 Linux logs on cards whose total a log line gives
#   (fitted in the sglang-logs session; the former 0.38 was the one early-2025 log): H100 0.38
#   (0.4.1.post7), 0.60 (0.4.4, sglang PR #4760), 0.71 (2026 main), 0.72 (0.5.18), 0.72 (0.5.19,
#   gVisor); B200 0.78 (2026 main); L40S 0.28 (0.5.7). Held out (not fitted): H100 0.70
#   (sglang-kt 0.7.0) and MI300X 0.65 (ROCm, a 2024-10 build): both within 0.06 of the point.
#   The ROCm TP1 point is the same value (no ROCm TP1 log was fitted).
# - TP8 on NVSwitch: 1.76 GiB (79.19 - 77.43, 8 x H100, v0.5.2rc2, grok-2 blog log) and 2.52
#   (139.81 - 137.29, 8 x H200, sglang PR #11716): their mean, 2.14, is the TP8 point.
# - AMD TP8: 4.5 GiB (288 - 283.50, MI355X, v0.5.8.post1, GLM-5 bring-up notes).
# - Cards under 60 GiB (GeForce, L4, L40S, A10G: PCIe, no NVSwitch) do not grow with TP: 0.72
#   GiB at TP2 (23.65 - 22.93, 2 x RTX 4090, 2026 build), 0.57 at TP4 (23.65 - 23.08, 4 x RTX
#   4090, 2026 build), 0.86 at TP4 (22.49 - 21.63, 4 x L4, 0.4.3.post4); from TP2 their median,
#   0.72 GiB, is used (the former TP1-TP8 line gave 0.69 at TP2 and 1.30 at TP4: 5-13 % fewer
#   tokens than logged at TP4).
# Memory is the proxy for the interconnect here: the planner is not told whether GPUs share an
# NVSwitch.
# Each fitted point with the logs it was fitted on (bench row ids, sglang_startup_logs.json):
SGLANG_PRELOAD_GIB_TP1_FIT = Fitted(
    value=0.71, source="median of the seven TP1 Linux logs on cards whose total a log line gives; "
                       "commit e7b6b40",
    fitted_on=("llama-3.1-8b-h100-docs-2025-01", "llama-3.1-8b-h100-pr4760",
               "qwen3-30b-a3b-fp8-h100-kt-smoke", "qwen3-reranker-0.6b-h100",
               "qwen3-32b-h100-gke-snapshot", "qwen3-8b-b200-sglang-skill",
               "llama-3.2-3b-l40s-hicache"))
SGLANG_PRELOAD_GIB_TP8_FIT = Fitted(
    value=2.14, source="mean of 8 x H100 (grok-2 log) and 8 x H200 (sglang PR #11716, no bench "
                       "row)", fitted_on=("grok-2-8xh100",))
SGLANG_PRELOAD_GIB_ROCM_TP8_FIT = Fitted(
    value=4.5, source="MI355X TP8, GLM-5 bring-up notes", fitted_on=("glm-5-fp8-8xmi355x",))
SGLANG_PRELOAD_GIB = {
    "cuda": ((1, SGLANG_PRELOAD_GIB_TP1_FIT.value), (8, SGLANG_PRELOAD_GIB_TP8_FIT.value)),
    "rocm": ((1, SGLANG_PRELOAD_GIB_TP1_FIT.value), (8, SGLANG_PRELOAD_GIB_ROCM_TP8_FIT.value)),
}
SGLANG_PCIE_PRELOAD_GIB = 0.72
SGLANG_PCIE_PRELOAD_GIB_FIT = Fitted(
    value=SGLANG_PCIE_PRELOAD_GIB,
    source="median of the three TP >= 2 logs on cards under 60 GiB",
    fitted_on=("qwen3.5-9b-2xrtx4090", "qwen3-14b-4xrtx4090", "qwq-32b-4xl4"))
SGLANG_PCIE_BELOW_BYTES = 60 * GiB


def sglang_preload_gib(*, tp: int, platform: str = "cuda", total_bytes: int | None = None
                       ) -> tuple[float, str]:
    """Memory in use before the weights load on each GPU (GiB) and the rule that set it."""
    if (platform == "cuda" and tp > 1 and total_bytes is not None
            and total_bytes < SGLANG_PCIE_BELOW_BYTES):
        return SGLANG_PCIE_PRELOAD_GIB, (
            f"in use before weights load at TP {tp} on a card under 60 GiB (no NVSwitch: "
            "flat from TP2, public logs)")
    points = SGLANG_PRELOAD_GIB.get(platform, SGLANG_PRELOAD_GIB["cuda"])
    return interpolate(points, tp), f"in use before weights load at TP {tp} (public logs)"


def sglang_graph_defaults(gpu_mem_mib: int, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) by GPU memory and TP (server_args.py 0.5.5+)."""
    gib = gpu_mem_mib / 1024
    if gib < 20:
        return 2048, 8
    if gib < 35:
        return 2048, 80 if tp >= 4 else 24
    if gib < 60:
        return 4096, 160 if tp >= 4 else 32
    if gib < 160:
        return 8192, 512 if tp >= 4 else 256
    return 16384, 512


def sglang_cuda_graph_max_bs(inputs: PlanInputs) -> int:
    """The largest decode batch SGLang captures in a CUDA graph by default (`sglang_graph_defaults`,
    by the GPU's nvidia-smi memory and TP); 0 where the GPU's memory is not known."""
    mem = inputs.smi_total_bytes or inputs.total_bytes
    return sglang_graph_defaults(mem // MiB, inputs.tp)[1] if mem else 0


# Multimodal checkpoints (server_args.py, the default fraction only; vision_config's
# num_hidden_layers / hidden_size, SGLang's defaults 24 / 1024 where absent): 0.4.9 multiplies it
# by 0.90; from 0.4.10 ``adjust_mem_fraction_for_vlm`` (``arg_groups/memory_hook.py`` from 0.5.19)
# by 0.95 x clamp(1 - 0.1 x (layers x hidden^2 / (24 x 1024^2) - 1), 0.8, 1.05), unrounded.
# Checked: Kimi-K2.5 (MoonViT, configs/kimi_k25.py KimiK25VisionConfig: 27 layers, 1152) on 8 x
# MI355X, 0.5.8.post1: 0.908 x 0.95 x 0.957617 = 0.8260405859375, the logged value to the digit.
SGLANG_VLM_SINCE = (0, 4, 9)
SGLANG_VLM_VIT_SINCE = (0, 4, 10)
SGLANG_VIT_BASELINE = (24, 1024)  # ViT-L/14


def sglang_vlm_factor(version: str | None, vision_tower: tuple[int, int] | None) -> float:
    """The factor SGLang applies to its default fraction for a multimodal checkpoint whose
    vision tower has (num_hidden_layers, hidden_size); 1.0 for a text model or an older
    release."""
    v = version_key(version)
    if vision_tower is None or v < SGLANG_VLM_SINCE:
        return 1.0
    if v < SGLANG_VLM_VIT_SINCE:
        return 0.90
    layers, hidden = vision_tower
    base_layers, base_hidden = SGLANG_VIT_BASELINE
    ratio = layers * hidden**2 / (base_layers * base_hidden**2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def sglang_default_fraction(*, version: str | None, gpu_mem_bytes: int, tp: int, pp: int = 1,
                            dp_attention: bool = False, speculative: bool = False,
                            is_mla: bool = False, vision_tower: tuple[int, int] | None = None,
                            dp_size: int | None = None) -> tuple[float, str]:
    """SGLang's default mem_fraction_static (srt/server_args.py), by version; a multimodal
    checkpoint's (`vision_tower`: its encoder's layers, hidden size) scaled by
    `sglang_vlm_factor`. `dp_size`: --dp-size under DP attention (None: --tp)."""
    f, rule = _sglang_text_fraction(version=version, gpu_mem_bytes=gpu_mem_bytes, tp=tp, pp=pp,
                                    dp_attention=dp_attention, speculative=speculative,
                                    is_mla=is_mla, dp_size=dp_size or tp)
    factor = sglang_vlm_factor(version, vision_tower)
    if factor != 1.0:
        return f * factor, (f"{rule}; x {factor:.6g} for the vision tower "
                            "(adjust_mem_fraction_for_vlm)")
    return f, rule


def _sglang_text_fraction(*, version: str | None, gpu_mem_bytes: int, tp: int, pp: int,
                          dp_attention: bool, speculative: bool, is_mla: bool, dp_size: int
                          ) -> tuple[float, str]:
    v = version_key(version)
    mem = gpu_mem_bytes // MiB  # nvidia-smi memory.total, MiB
    ranks = tp * pp
    if v <= (0, 4, 5) or (v < (0, 4, 8) and mem <= 81920):
        table = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
        f = next(frac for limit, frac in table if (ranks if v > (0, 4, 5) else tp) >= limit)
        return f, "TP table 0.88/0.87/0.85/0.81/0.79 (<= 0.4.7)"
    if v < (0, 4, 8):
        f = next(frac for limit, frac in ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87),
                                          (1, 0.88)) if ranks >= limit)
        if mem > 96 * 1024:
            f = min(f + 48 * 1024 * (1 - f) / mem, (mem - 18 * 1024) / mem)
        return round(f, 3), "0.4.6-0.4.7: TP table raised above 96 GiB"
    if v < (0, 5, 3):
        gib = mem / 1024
        if gib < 35:
            reserved = (2.8 + ranks / 10) * 1024
        elif gib < 90:
            reserved = (9.5 + ranks / 2) * 1024
        elif gib < 160:
            reserved = (12 + ranks / 2) * 1024
        else:
            reserved = 32 * 1024
        reserved += (2048 if speculative else 0) + (4096 if dp_attention else 0)
        return round((mem - reserved) / mem, 3), "0.4.8-0.5.2: (gpu_mem - reserved) / gpu_mem"
    chunked, bs = sglang_graph_defaults(mem, tp)
    reserved = 512 + 1.5 * max(chunked, 2048) + 2 * bs + ranks * 128
    if dp_attention:
        # cuda_graph_max_bs x dp_size x 3 (+ x 1.5 above 300): server_args.py 0.5.3 :650-658,
        # 0.5.6 :834-842, 0.5.9 :1033-1041 (dp_size, not tp_size: the attention-DP ranks)
        reserved += 3 * bs * dp_size + (1.5 * bs * dp_size if bs > 300 else 0)
    if v >= (0, 5, 10):
        reserved += 1536 if is_mla else 8 * 58  # prefill CUDA graphs, on by default
    if mem > 60 * 1024:
        reserved = max(reserved, 10240)
    if speculative and v < (0, 5, 14):
        reserved += 2048 if v < (0, 5, 10) else 4096
    return round((mem - reserved) / mem, 3), (
        "0.5.3+: (gpu_mem - reserved) / gpu_mem, reserved from chunked prefill and CUDA graphs")


@dataclass(frozen=True)
class SglangBudget:
    name: str = "sglang"

    def check_reserve_known(self, inputs: PlanInputs) -> None:
        """Every setting this engine runs is derivable (TRT-LLM refuses some)."""

    def reserve(self, spec: ModelSpec, inputs: PlanInputs) -> Reserve:
        gib, rule = sglang_preload_gib(tp=inputs.tp, platform=inputs.platform,
                                       total_bytes=inputs.total_bytes)
        return Reserve(parts=(ReservePart(name="preloaded", bytes=int(gib * GiB), rule=rule),))

    formula: str = "(total - preloaded) x mem_fraction_static - weights"

    @staticmethod
    def kv_bytes(total: int, fraction: Any, weights: int, reserve: int) -> Any:
        return trunc((total - reserve) * fraction) - weights

    def fraction_for(self, inputs: PlanInputs, need: int, weights: int, reserve: int) -> float:
        return (need + weights) / (total_bytes_of(inputs) - reserve)

    def default_fraction(self, inputs: PlanInputs) -> tuple[float, str]:
        opts = sglang_options(inputs)
        if opts.forced_mem_fraction is not None:
            return opts.forced_mem_fraction, (
                f"{opts.forced_mem_fraction} for DeepSeek NSA, whatever given (0.5.3 "
                "server_args.py:823)")
        mem = inputs.smi_total_bytes or inputs.total_bytes
        if mem is None:
            return 0.88, "SGLang default without a known GPU memory"
        return sglang_default_fraction(
            version=inputs.engine_version, gpu_mem_bytes=mem, tp=inputs.tp, pp=inputs.pp,
            # DP attention SGLang forced for DSA came after the fraction (sglang.dsa_settings).
            dp_attention=inputs.dp_attention and not opts.forced_dp_attention,
            speculative=inputs.speculative_method is not None,
            is_mla=inputs.is_mla, vision_tower=inputs.vision_tower,
            dp_size=inputs.attention_dp_ranks if inputs.dp_attention else None)


BUDGET = SglangBudget()
