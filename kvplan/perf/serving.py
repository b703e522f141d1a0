"""Serving at fixed concurrency: how the prefills of arriving requests stall the decoding batch
(`serving_tpot_ms`) and how long a request waits for its own prefill (`serving_ttft_ms`), as
SGLang's scheduler batches waiting prompts (`sglang_chunked_prefill_tokens`); and the launch
part of an eager prefill step (`prefill_launch_ms`). The step times come from
kvplan.perf.roofline (through kvplan.perf.costmodel.predict)."""

from __future__ import annotations

import math

from kvplan._util.errors import InputError

# SGLang's default chunked prefill size is its own setting (kept with its options), named here
# too, where its prefill steps are counted.
from kvplan.engines.sglang.options import (
    sglang_chunked_prefill_tokens as sglang_chunked_prefill_tokens,
)
from kvplan.hardware.gpus import GPU
from kvplan.model.spec import ModelSpec
from kvplan.perf.efficiency import DEFAULT_EFFICIENCY, Efficiency
from kvplan.perf.engine_traits import eager_ops, fuses_allreduce_norm, prefill_launch_ops
from kvplan.perf.layout import ONE_GPU, Layout


def _poisson(mean: float) -> list[float]:
    """P(K = k) for k = 0, 1, ... until the tail is below 1e-12."""
    probs, p, k = [], math.exp(-mean), 0
    total = 0.0
    while total < 1 - 1e-12 and k < 10_000:
        probs.append(p)
        total += p
        k += 1
        p *= mean / k
    return probs


def _steps(prompts: float, prompt_len: int, chunk_tokens: int | None) -> int:
    """Prefill steps SGLang's scheduler needs for `prompts` waiting prompts: one step takes
    every waiting prompt until `chunk_tokens` (managers/scheduler.py get_new_batch_prefill
    fills one PrefillAdder from the whole waiting queue; schedule_policy.py PrefillAdder stops
    at rem_chunk_tokens and chunks the prompt that crosses it)."""
    if prompts <= 0:
        return 0
    if not chunk_tokens:
        return 1
    return max(1, -(-round(prompts * prompt_len) // chunk_tokens))


def serving_tpot_ms(tpot_ms: float, prefill_ms: float, *, concurrency: int,
                    output_len: int, prefill_launch_ms: float = 0.0, prompt_len: int = 0,
                    requests: int | None = None, chunk_tokens: int | None = None) -> float:
    """Mean TPOT as a serving benchmark at fixed concurrency measures it (bench_serving /
    vllm bench serve --max-concurrency, request rate inf: the first `concurrency` requests
    start together, then each finished request is replaced until `requests` were sent).

    The scheduler runs the waiting prompts as prefill steps between decode steps (SGLang:
    scheduler.py get_next_batch_to_run tries get_new_batch_prefill first; mixed chunks are
    off by default), stopping the decoding batch meanwhile. `prefill_ms` is one prompt's
    prefill, of which `prefill_launch_ms` is launch time paid once per step however many
    prompts it holds (SGLang's eager launches, `prefill_launch_s`); the rest (GPU time) grows
    with the prompts of the step.

    Steady state: while a request decodes, each of the other `concurrency - 1` finishes with
    probability 1 / output_len per decode step and its replacement arrives before the next
    step, so the arrivals per decode step are Poisson with mean m = (concurrency - 1) /
    output_len, and one step takes all of them (`_steps`, up to `chunk_tokens` each). A decode
    step is followed on average by m prompts' GPU time and E[steps(K)] launches. With
    `requests`, only the (requests - concurrency) replacements run during others' decodes
    (the share of decode steps in the steady state), and the first wave (all `concurrency`
    prompts together, J = steps(concurrency) steps) stalls a first-wave request for
    (J - 1) / 2 of them after its first token on average. `requests=None`: steady state only.
    Not modelled: the clumping of finishes when output lengths barely vary (bench_serving
    --random-range-ratio near 1)."""
    if concurrency < 1 or output_len < 1:
        raise InputError("concurrency and output length must be >= 1")
    gpu_ms = max(0.0, prefill_ms - prefill_launch_ms)
    m = (concurrency - 1) / output_len
    launches = sum(p * _steps(k, prompt_len, chunk_tokens)
                   for k, p in enumerate(_poisson(m)))
    steady = m * gpu_ms + launches * prefill_launch_ms  # per decode step
    if requests is None:
        return tpot_ms + steady
    if requests < concurrency:
        raise InputError("requests must be >= concurrency")
    share = (requests - concurrency) / requests
    waves = _steps(concurrency, prompt_len, chunk_tokens)
    wave_step_ms = prefill_launch_ms + concurrency * gpu_ms / waves
    first = concurrency / requests * (waves - 1) / 2 * wave_step_ms / output_len
    return tpot_ms + share * steady + first


def serving_ttft_ms(prefill_ms: float, *, concurrency: int, output_len: int,
                    prefill_launch_ms: float = 0.0, prompt_len: int = 0,
                    requests: int | None = None, chunk_tokens: int | None = None) -> float:
    """Mean TTFT's prefill part in the run `serving_tpot_ms` describes: a first-wave request
    waits for the first-wave steps up to its own (on average (J + 1) / 2 of J steps of the
    `concurrency` prompts); a replacement shares its step with the Poisson((concurrency - 1)
    / output_len) others that arrive with it. Not included: the serving path (HTTP,
    tokenization, streaming) and the wait for the decode step running at arrival."""
    if concurrency < 1 or output_len < 1:
        raise InputError("concurrency and output length must be >= 1")
    gpu_ms = max(0.0, prefill_ms - prefill_launch_ms)
    waves = _steps(concurrency, prompt_len, chunk_tokens)
    first = (waves + 1) / 2 * (prefill_launch_ms + concurrency * gpu_ms / waves)
    m = (concurrency - 1) / output_len
    replaced = sum(p * (_steps(1 + k, prompt_len, chunk_tokens) * prefill_launch_ms
                        + (1 + k) * gpu_ms) for k, p in enumerate(_poisson(m)))
    if requests is None:
        return replaced
    if requests < concurrency:
        raise InputError("requests must be >= concurrency")
    return (concurrency * first + (requests - concurrency) * replaced) / requests


def prefill_launch_ms(spec: ModelSpec, layout: Layout = ONE_GPU,
                      eff: Efficiency = DEFAULT_EFFICIENCY,
                      quantization: str | None = None, *, platform: str = "cuda",
                      gpu: GPU | None = None, tokens: int = 0) -> float:
    """The launch part of one eager prefill step (SGLang) of `tokens` tokens on `gpu` (on
    `platform` when no `gpu` is given): ops x `prefill_launch_s`, as `step_time` adds it
    (`gpu` None: no fused all-reduce + norm)."""
    fused = gpu is not None and fuses_allreduce_norm(spec, gpu, layout, tokens, eff)
    if gpu is not None:
        return prefill_launch_ops(spec, gpu, layout, tokens, eff, quantization,
                                  fused_norms=fused) * eff.prefill_launch_s * 1e3
    return (eager_ops(spec, layout, eff, quantization, platform=platform, fused_norms=fused,
                      gpu=gpu) * eff.prefill_launch_s * 1e3)
