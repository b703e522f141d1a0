"""vLLM releases whose KV budget kvplan has read but cannot size (``kvplan.engines.vllm.budget``
refuses them in one line unless the budget or the reserve is given)."""

from __future__ import annotations

from kvplan._util.errors import UnmodelledError
from kvplan._util.versions import version_key
from kvplan.engines.vllm.profiles import DEFAULT_VLLM_VERSION, vllm_profile

# The extensible KV cache (on by default on CUDA and ROCm) from this release.
VLLM_EXTENSIBLE_SINCE = (0, 34)

# Releases whose KV budget on CUDA and ROCm kvplan has read but cannot size from its constants,
# newest last (a release takes the last row at or below it; the CPU platform's budget is
# VLLM_CPU_KVCACHE_SPACE either way). Each row: since, what moved and where, the start-up line
# that gives the budget.
VLLM_UNSIZED_BUDGETS: tuple[tuple[tuple[int, ...], str, str], ...] = (
    # 0.33.0 v1/worker/gpu/model_runner.py:993 _dummy_sampler_run: the profile run's sampler
    # warm-up runs a second pass with SamplingParams.for_sampler_warmup (sampling_params.py:1477:
    # top-k, top-p, min-p, penalties, logit bias, bad words, logprobs, watermarking), "so the
    # profiled peak must" pay for the fp32 logits pipeline (0.32: the greedy pass alone,
    # VLLM_V2_SAMPLER); v1/worker/gpu_worker.py:519-530 creates the cuBLAS handles before the
    # memory snapshot, taking them out of the non-torch growth kvplan fitted on 0.19 logs.
    # Neither peak is in a 0.33 log kvplan has.
    ((0, 33), "its profile run adds a sampler warm-up pass with every sampling feature "
              "(v1/worker/gpu/model_runner.py _dummy_sampler_run: the fp32 logits pipeline, "
              "top-k/top-p, penalties, logprobs) and creates the cuBLAS handles before the "
              "memory snapshot (v1/worker/gpu_worker.py), and no 0.33 log sizes either",
     "'Available KV cache memory'"),
    # 0.34.0 config/vllm.py:3180 _resolve_extensible_kv_cache: the extensible KV cache is on by
    # default on CUDA and ROCm (unless --kv-cache-memory, num_gpu_blocks_override, elastic EP or
    # some KV connectors); config/cache.py:495 resolved_gpu_memory_utilization: 1.0 then; the
    # final block count is measured after warm-up and CUDA-graph capture
    # (v1/worker/extensible_kv_cache.py:592 measure_kv_cache_bytes: min(requested - non-KV
    # memory in use, free + committed - max(1 GiB, 0.75 x transient peak)) - max(transient
    # peak, torch reservation growth); v1/core/kv_cache_planning.py:1864
    # finalize_extensible_kv_cache), from memory the device reports at start-up.
    ((0, 34), "the extensible KV cache, on by default on CUDA and ROCm, sizes the cache "
              "from the memory measured after warm-up and CUDA-graph capture, less a margin of "
              "max(1 GiB, 0.75 x the measured transient peak) and that peak "
              "(v1/worker/extensible_kv_cache.py measure_kv_cache_bytes), which kvplan cannot "
              "derive",
     "'Memory after warmup: ... N KV cache blocks (X GiB) fit'"),
)


def vllm_unsized_budget(version: str | None, platform: str) -> tuple[str, str] | None:
    """Why kvplan cannot derive vLLM `version`'s KV budget on `platform`, and the start-up line
    that gives it (None: it can; no version: the default release,
    kvplan.engines.vllm.profiles.DEFAULT_VLLM_VERSION)."""
    if platform == "cpu":
        return None
    key = version_key(version or DEFAULT_VLLM_VERSION)
    rows = [(why, line) for since, why, line in VLLM_UNSIZED_BUDGETS if key >= since]
    return rows[-1] if rows else None


def refuse_unsized_budget(version: str | None, platform: str) -> None:
    """One line naming what moved, where the budget of `version` is not derivable."""
    found = vllm_unsized_budget(version, platform)
    if found is not None:
        why, line = found
        raise UnmodelledError(
            f"--engine-version {version}: vLLM {vllm_profile(version).version}'s KV budget on "
            f"{platform}: {why}; give --kv-budget-gib (its start-up log's {line}) or "
            f"--reserve-gib, or plan with --engine-version {DEFAULT_VLLM_VERSION}")


def vllm_extensible_kv_cache(version: str | None, platform: str) -> bool:
    """Whether `vllm serve` sizes the KV cache after warm-up by default (CUDA and ROCm from
    0.34: config/vllm.py:3180 _resolve_extensible_kv_cache; gpu_memory_utilization 1.0 then,
    config/cache.py:495 resolved_gpu_memory_utilization)."""
    return platform != "cpu" and version_key(version or DEFAULT_VLLM_VERSION) >= (
        VLLM_EXTENSIBLE_SINCE)
