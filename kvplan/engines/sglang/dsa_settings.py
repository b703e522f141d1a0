"""The settings besides the page (kvplan.engines.sglang.dsa_page) and the KV dtype
(kvplan.engines.sglang.kv_dtype) that SGLang forces for DeepSeek's sparse attention (DSA, "NSA"
before 0.5.8; kvplan: a spec with an indexer) and that move the KV pool. Read from each
release's wheel (sglang==X from PyPI), python/sglang/srt/server_args.py;
``_handle_model_specific_adjustments`` runs after ``_handle_gpu_memory_settings`` (the default
mem_fraction_static, the chunked prefill size) and before ``_handle_data_parallelism``
(0.5.3 lines 471 / 478 / 488, 0.5.5 582 / 589 / 605, 0.5.7 672 / 675 / 689):

- DP attention, 0.5.3-0.5.5, under ``is_deepseek_nsa(hf_config)`` and ``if not is_npu():``
  (CUDA, ROCm; 0.5.3 lines 815-818, 0.5.4 1018-1021, 0.5.5 1070-1073): ``enable_dp_attention =
  True; dp_size = tp_size`` ("DP attention is enabled for DeepSeek NSA."), whatever --dp-size
  says. ``_handle_data_parallelism`` (0.5.3 lines 949-960) turns it off again where dp_size is 1
  (TP 1), else divides the chunked prefill size by dp_size ("DP attention is enabled. The
  chunked prefill size is adjusted to N to avoid MoE kernel issues."). So at TP > 1 each rank
  is its own attention-DP rank holding its own requests: the MLA latent and the indexer keys are
  whole on every rank either way (not split by TP), so the bytes per token and the pool per rank
  do not move; what moves is who holds the requests (the engine's total is TP x one rank's),
  --max-running-requests (each rank takes it // dp_size, managers/tp_worker.py:144-151) and the
  chunked prefill. The default mem_fraction_static was computed before, from the flags given:
  without --enable-dp-attention it holds no DP-attention reserve (0.5.3 lines 650-658).
- 0.5.6-0.5.7 (0.5.6 lines 950-951, 0.5.7 lines 1035-1036): ``enable_dp_attention = True``
  without ``dp_size = tp_size``; with the default --dp-size 1 ``_handle_data_parallelism`` (0.5.6
  lines 1491-1494, 0.5.7 lines 1801-1804) turns it off again, though the line is still logged:
  TP attention, as kvplan plans it. (--dp-size D > 1 without --enable-dp-attention runs DP
  attention over D ranks; kvplan's --dp-attention is D = TP, the same as SGLang's with both flags.)
- 0.5.8 on: only under --enable-nsa-prefill-context-parallel, which
  kvplan has no option for (0.5.8 lines 1116-1141).
- mem_fraction_static 0.8, 0.5.3 only (lines 823-824, "Setting mem fraction static to 0.8 for
  DeepSeek NSA."), at any TP and whatever --mem-fraction-static says (0.5.4 dropped it).

The chunked prefill size, CUDA graph max bs and the rest of ``_handle_gpu_memory_settings`` are
not overridden for DSA in these releases. Applied through SglangEngine.served_inputs, which
kvplan.capacity.plan.plan_capacity calls: every command's pool, max_requests (per DP rank) and
total_max_requests; `kvplan plan` keeps only the launches that run as evaluated
(kvplan.analysis.plan_search.evaluate).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kvplan._util.versions import version_key
from kvplan.engines.sglang.options import sglang_options

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec

DSA_DP_ATTENTION = ((0, 5, 3), (0, 5, 6))  # [first, end): dp_size = tp_size forced
DSA_FRACTION = ((0, 5, 3), (0, 5, 4))  # [first, end): mem_fraction_static = 0.8 forced
DSA_FRACTION_VALUE = 0.8
DP_LOG = "DP attention is enabled for DeepSeek NSA."
FRACTION_LOG = "Setting mem fraction static to 0.8 for DeepSeek NSA."


def _within(version: str | None, span: tuple[tuple[int, ...], tuple[int, ...]]) -> bool:
    return span[0] <= version_key(version) < span[1]


def sglang_dsa_inputs(spec: ModelSpec, inputs: PlanInputs) -> PlanInputs:
    """`inputs` as SGLang `inputs.engine_version` runs `spec` (see the module): DP attention at
    TP > 1 in 0.5.3-0.5.5 and mem_fraction_static 0.8 in 0.5.3 for DeepSeek's sparse attention;
    the forcing is kept in the options (SglangOptions.forced_*) for the budget and the notes."""
    if spec.indexer is None:
        return inputs
    opts = sglang_options(inputs)
    version = inputs.engine_version
    if _within(version, DSA_DP_ATTENTION) and inputs.tp > 1 and not inputs.dp_attention:
        opts = replace(opts, forced_dp_attention=True)
        inputs = replace(inputs, dp_attention=True)
    if _within(version, DSA_FRACTION):
        opts = replace(opts, forced_mem_fraction=DSA_FRACTION_VALUE)
        inputs = replace(inputs, mem_fraction=None)
    return replace(inputs, options=opts) if opts != sglang_options(inputs) else inputs


def dsa_settings_notes(spec: ModelSpec, version: str | None) -> list[str]:
    """What the capacity view says of the settings SGLang `version` forces for `spec`."""
    if spec.indexer is None:
        return []
    notes = []
    if _within(version, DSA_DP_ATTENTION):
        notes.append(f"SGLang {version} runs DeepSeek's sparse attention with DP attention over "
                     f"the TP ranks at TP > 1, whatever --dp-attention says (\"{DP_LOG}\"): each "
                     "GPU holds its own requests" + ("" if _within(version, DSA_FRACTION) else
                                                    "; the default fraction holds no "
                                                    "DP-attention reserve unless "
                                                    "--dp-attention is given") + ".")
    if _within(version, DSA_FRACTION):
        notes.append(f"SGLang {version} sets mem_fraction_static {DSA_FRACTION_VALUE} for it, "
                     f"whatever --mem-fraction says (\"{FRACTION_LOG}\").")
    return notes
