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
    # 0.33.0 against 0.32.0 (issue 26, read in both wheels). Unchanged: requested memory =
    # ceil(total x gpu_memory_utilization) (v1/worker/utils.py:716-725 in both), the profile's
    # accounting (utils/mem_utils.py:230-321 memory_profiling, identical files: non-KV memory =
    # free memory at the snapshot - free after the profile + the transient torch peak), the
    # budget = requested - non-KV - CUDA-graph estimate (gpu_worker.py:753; 0.32.0 :740), the
    # estimate's capture pass (v1/worker/gpu/cudagraph_utils.py:922 profile_cudagraph_memory),
    # the default capture sizes (config/vllm.py:2398 _set_cudagraph_sizes, identical), the
    # default utilization 0.92 (config/cache.py:215) and the batch defaults but GB10's
    # (modelled: kvplan.engines.vllm.alloc). What moved, all of it on CUDA and ROCm:
    # 1. Model runner V2 (the default runner, config/vllm.py:731 use_v2_model_runner):
    #    _dummy_sampler_run (v1/worker/gpu/model_runner.py:993-1014; 0.32.0 :972-983, one
    #    greedy pass) runs the sampler a second time with SamplingParams.for_sampler_warmup()
    #    on every dummy row (sampling_params.py:1477-1493: temperature, top-p, top-k 50, min-p,
    #    three penalties, min_tokens, logit bias, bad words, logprobs 5, prompt_logprobs 1,
    #    watermarking). That pass copies the [rows x vocab] logits to fp32
    #    (v1/worker/gpu/sample/sampler.py:242, 4 B a logit beside the model-dtype logits), runs
    #    top-k/top-p (FlashInfer's fused sampler or apply_top_k_top_p's sort) and
    #    compute_topk_scores (:177); kvplan's V2 rule (budget.VLLM_V2_SAMPLER) holds the logits
    #    alone. The CPU platform returns before the second pass (model_runner.py:1004-1007).
    # 2. gpu_worker.py:519-529 creates the cuBLAS and cuBLASLt handles (a 16 x 16 torch.mm and
    #    linear with a bias) before the snapshot (:541), so their memory (workspaces, the
    #    kernels loaded with them) is no longer in the profile's free-memory delta; in 0.32 the
    #    handles came after the snapshot, inside what kvplan's constants fitted on 0.19 logs
    #    absorb (budget._VLLM_0_19_NON_TORCH; a torch-allocated workspace, the profile peak).
    #    Its size is the driver's, cuBLAS's and the GPU's, not in vLLM's source. Model runner V1
    #    (where V2 declines a feature) differs from 0.32 by this alone in the profile run
    #    (gpu_model_runner.py profile_run unchanged; _dummy_sampler_run only adds the 'fly'
    #    rejection method of speculative decoding).
    # 3. gpu_worker.py:708-717: the CUDA-graph estimate also runs with cudagraph_mode NONE when
    #    model runner V2 captures multimodal encoder graphs (cudagraph_mm_encoder, not eager).
    # One public measurement of 1 (vllm-project/vllm PR #57926, the change as proposed on
    # 2026-09-21; a build between releases, not a 0.33 start-up log: recorded, fits nothing):
    # L4, Qwen2.5-0.5B-Instruct, 256 sequences, max_model_len 2,048, utilization 0.98, runner
    # V2: 1,733,440 -> 1,710,928 tokens (-22,512 x 12,288 B = 0.258 GiB, -1.30 %; 1.78 x the
    # 256 x 151,936 fp32 logits). kvplan's 0.29-0.32 rules there (tests/data/configs/
    # qwen2.5-0.5b.json, its own weights; evaluated once on 2026-12-04, no bench row: the build
    # is no release): 1,746,672 tokens, +0.76 % of the before, +2.09 % (0.41 GiB) of the after,
    # outside max(2 %, 0.25 GiB). No public 0.33 or 0.34 start-up log was found (2026-12-04:
    # the version banners, 'V1 LLM engine (v0.33' / '(v0.34', the 0.33.0 / 0.34.0 line numbers
    # 'gpu_worker.py:772]' / ':795]', 'kv_cache_utils.py:1147]' / ':1168]', 'Memory after
    # warmup:', image tags and pins, in the code, issues and pages corpora; the newest logs
    # found are 0.31.0's).
    ((0, 33), "its profile run adds a sampler warm-up pass with every sampling feature "
              "(v1/worker/gpu/model_runner.py _dummy_sampler_run: an fp32 copy of the logits, "
              "top-k/top-p, penalties, logprobs; kvplan's model runner V2 rule holds the "
              "logits alone) and creates the cuBLAS handles before the memory snapshot "
              "(v1/worker/gpu_worker.py: their memory no longer comes off the budget, "
              "where kvplan's constants fitted on 0.19 logs count it), and no public 0.33 "
              "start-up log sizes either",
     "'Available KV cache memory'"),
    # 0.34.0 config/vllm.py:3180 _resolve_extensible_kv_cache: the extensible KV cache is on by
    # default on CUDA and ROCm (unless --kv-cache-memory, num_gpu_blocks_override, elastic EP or
    # some KV connectors); config/cache.py:495 resolved_gpu_memory_utilization: 1.0 then; the
    # final block count is measured after warm-up and CUDA-graph capture
    # (v1/worker/extensible_kv_cache.py:592 measure_kv_cache_bytes: min(requested - non-KV
    # memory in use, free + committed - max(1 GiB, 0.75 x transient peak)) - max(transient
    # peak, torch reservation growth); v1/core/kv_cache_planning.py:1864
    # finalize_extensible_kv_cache), from memory the device reports at start-up. Where it is
    # off, the profile budget is 0.33's (both passes of _dummy_sampler_run, model_runner.py
    # :1039-1062; the cuBLAS handles, gpu_worker.py:526-536) with: the CUDA-graph estimate run
    # only where it is applied (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, gpu_worker.py:743-747,
    # the same budget), the requested memory from resolved_gpu_memory_utilization (0.92; v1/
    # worker/utils.py:734-743), a model state's own dummy sampler run (model_runner.py:1041)
    # and free memory read through device_memory_info (utils/mem_utils.py:105: unified-memory
    # GPUs under WSL keep cudaMemGetInfo's figure).
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
