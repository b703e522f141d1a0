"""The page size SGLang forces for DeepSeek's sparse attention (DSA, "NSA" before 0.5.8:
DeepSeek-V3.2, GLM-5; kvplan: a spec with an indexer), whatever --page-size says. Read from each
release's wheel (sglang==X from PyPI), python/sglang/srt/:

- 0.5.2 and older: no DSA model; --page-size as given (default 1).
- 0.5.3-0.5.7, server_args.py _handle_model_specific_adjustments, under ``is_deepseek_nsa
  (hf_config)`` and ``if not is_npu():`` (0.5.3 lines 806-821, 0.5.4 line 1024, 0.5.5 line 1076,
  0.5.6 lines 940-974, 0.5.7 lines 1029-1059): ``self.page_size = 64`` ("Setting page size to 64
  for DeepSeek NSA."), on CUDA and ROCm alike.
- 0.5.8-0.5.11 (0.5.8 lines 1110-1159, 0.5.9 lines 1205-1259, 0.5.11 lines 1745-1749): ``if
  is_hip(): self.page_size = 1`` ("... on ROCm"), else ``self.page_size = 64`` (CUDA).
- 0.5.12-0.5.14 (0.5.12 lines 1862-1874, 0.5.14 lines 3611-3623): ROCm takes 1 only ``if
  is_hip() and not aiter_can_use_preshuffle_paged_mqa()`` (layers/attention/nsa: aiter's gluon
  paged-MQA kernel, Triton >= 3.5 or AITER_ENABLE_AOT_GLUON_PA_MQA_LOGITS=1), else 64.
- 0.5.15-0.5.23: the same as declarations (``overrides["page_size"] = 64``; 0.5.15
  arg_groups/overrides.py lines 374-386, 0.5.20 arg_groups/model_overrides/deepseek_v2.py line
  144, 0.5.23 the same file lines 151-174, 0.5.22 lines 152-175), which win over the raw --page-size
  (model_override_base.py ResolvingConfig: the last declaration is read). 0.5.22+ make it
  ``64 * index_kpool`` (configs/model_config.py get_dsa_index_kpool, config.json's
  ``index_kpool``, default 1): DeepSeek-V3.2's and GLM-5's configs have none; a config with
  index_kpool > 1 is refused (kvplan.sources.hf_index_cache.check_index_kpool). XPU takes 128,
  NPU keeps its own: kvplan plans neither.
The later page-size checks (0.5.23 arg_groups/overrides.py _mla_backend_page_constraints:
flashmla 64; trtllm_mla, cutedsl_mla 32 or 64) keep 64. The pool is then floored to whole pages
of 64 tokens and a request holds whole pages (kvplan.engines.sglang.pools.SglangPool).

Where ROCm's page depends on the Triton and aiter found at start-up (0.5.12 on), kvplan takes
the --block-size given (1: the legacy path, 64: the preshuffle kernel) and refuses in one line
without one.

Applied to the pool (kvplan.engines.sglang.pools.sglang_pool: capacity, pages per request, the
inverse, the sweep's capacity, HiCache and the disaggregated hand-over, which read its page) and,
through SglangEngine.sequence_block_size (EngineRules'), to every command's per-sequence figures:
`kvplan estimate`'s block_size, bytes_per_block, blocks_per_sequence and bytes_per_sequence
(requested_block_size: the --block-size asked) and the sweep's block_size and bytes_per_sequence.
(`kvplan compare` takes no --engine: it pages by vLLM's rules.)
The other NSA settings of 0.5.3-0.5.7's server_args.py (``enable_dp_attention = True``, 0.5.3
lines 815-818 to 0.5.7 line 1036; ``mem_fraction_static = 0.8`` in 0.5.3, line 823) are
kvplan.engines.sglang.dsa_settings'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import PlanInputs
    from kvplan.model.spec import ModelSpec

DSA_PAGE_TOKENS = 64  # server_args.py: "Setting page size to 64 for DeepSeek NSA/DSA."
DSA_PAGE_SINCE = (0, 5, 3)  # the first release with DeepSeek's sparse attention
ROCM_PAGE_ONE_SINCE = (0, 5, 8)  # is_hip(): page_size 1
ROCM_BY_KERNEL_SINCE = (0, 5, 12)  # is_hip() and not aiter_can_use_preshuffle_paged_mqa(): 1


def sglang_page_size(spec: ModelSpec, inputs: PlanInputs) -> int:
    """The page size SGLang `inputs.engine_version` runs `spec` with (see the module): 64 for
    DeepSeek's sparse attention on CUDA from 0.5.3 whatever --block-size says, else the
    --block-size given (default 1)."""
    given = inputs.resolved_block_size
    key = version_key(inputs.engine_version)
    if spec.indexer is None or key < DSA_PAGE_SINCE:
        return given
    if inputs.platform != "rocm" or key < ROCM_PAGE_ONE_SINCE:
        return DSA_PAGE_TOKENS
    if key < ROCM_BY_KERNEL_SINCE:
        return 1
    if inputs.block_size in (1, DSA_PAGE_TOKENS):
        return inputs.block_size
    version = f" {inputs.engine_version}" if inputs.engine_version else ""
    raise InputError(
        f"--engine sglang{version}: on ROCm SGLang pages DeepSeek's sparse attention by 64 "
        "tokens where aiter's preshuffle paged-MQA kernel loads (Triton >= 3.5 or "
        "AITER_ENABLE_AOT_GLUON_PA_MQA_LOGITS=1), else by 1 (server_args.py, from 0.5.12): "
        "give --block-size 64 or 1")
