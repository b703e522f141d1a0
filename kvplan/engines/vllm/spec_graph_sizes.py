"""vLLM's CUDA-graph capture sizes under speculative decoding (k draft tokens, a decode step of
q = 1 + k tokens a request), by release (kvplan.engines.vllm.budget.vllm_cuda_graph_sizes
applies them; read in the sdists of 0.11.0, 0.11.1, 0.12.0, 0.13.0, 0.14.0, 0.19.0, 0.20.1,
0.26.0-0.29.0 and the 0.32.0 wheel). Three changes, each from the release named:

- 0.11.1: with FULL decode graphs in a separate routine (the default FULL_AND_PIECEWISE) every
  capture size is rounded up to a multiple of q, a rounded size above the largest size dropped
  (the temporary fix of vllm issue #28207: `CompilationConfig.adjust_cudagraph_sizes_for_spec_
  decode`, config/compilation.py 0.11.1:916-, 0.19.0:1235-1275, 0.20.1:1447-, 0.32.0:1530-1558;
  called from `_check_and_update_cudagraph_mode`, v1/worker/gpu_model_runner.py 0.11.1:4543-4557,
  0.12.0:4783, 0.13.0:4907, 0.19.0:6379-6392, from config/compilation.py in 0.20.1:1409-1418
  and 0.29.0:1493). Absent from 0.11.0, where the sizes ignore k. vLLM runs it while
  profiling the CUDA-graph memory too (profile_cudagraph_memory -> _init_minimal_kv_cache_for_
  profiling -> initialize_kv_cache -> initialize_attn_backend, 0.19.0:5862-5870), so the
  estimate subtracted from the KV budget counts the rounded list.
- 0.13.0: the default ceiling becomes min(max_num_seqs x q x 2, 512) (config/vllm.py
  `_set_cudagraph_sizes` 0.13.0:1067-1074, 0.19.0:1392-1401, 0.20.1:1477-1485; 0.12.0:1039 still
  min(max_num_seqs x 2, 512)). A model class's own ceiling (gpt-oss, kvplan.engines.vllm
  .graph_sizes) replaces it, k unused.
- 0.29.0: to the token grid it adds a request-count grid times q, `request_counts(min(max_num_seqs,
  512))` = [1, 2, 4] + range(8, 256, 8) + range(256, n + 1, 16) + [n], each n x q kept up to
  the ceiling and max_num_batched_tokens (config/vllm.py 0.29.0:2014-2090, :2143; 0.32.0:
  2365-2444, :2494-2497); absent from 0.28.0. The rounding above still runs on model runner V1
  (0.32.0 compilation.py:1496-1501, `not use_v2_model_runner`).

FULL decode graphs: a size s with q <= s <= q x max_num_seqs (v1/cudagraph_dispatcher.py
0.11.0:82-88, 0.19.0:205-220, 0.32.0:205-219); k = 0 gives s <= max_num_seqs.

Not modelled: an attention backend without FULL decode graphs for q > 1 tokens (vLLM then
downgrades the decode mode and rounds nothing; kvplan assumes FlashAttention / FlashMLA);
sequence parallelism at TP > 1 (0.11.1 rounds to max(q, tp) at every TP > 1, and refuses when
neither divides the other; 0.12.0 on only with pass_config.enable_sp); model runner V2 (the
default for every model from 0.29, kvplan.engines.vllm.runner), which captures its PIECEWISE
graphs at the unrounded sizes and rounds only its FULL decode ones (v1/worker/gpu/
cudagraph_utils.py 0.32.0:251-345): a verify step is padded to the same size, but a step
with a prompt chunk pads to the unrounded list and its PIECEWISE count is that list's, while
kvplan takes the rounded list for both (and V2's varlen decode graphs, by backend); dynamic
speculative decoding's tiers; the drafter's own graphs; the SM 10.x ceiling of 1,024 (0.28+,
as without drafts).
"""

from __future__ import annotations

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key

ROUNDED_SINCE = (0, 11, 1)  # sizes rounded up to multiples of 1 + k
SCALED_CEILING_SINCE = (0, 13)  # ceiling min(max_num_seqs x (1 + k) x 2, 512)
REQUEST_GRID_SINCE = (0, 29)  # request-count grid x (1 + k) added
DEFAULT_MAX_CAPTURE = 512  # the ceiling's cap (SM 10.x's 1,024 from 0.28 not modelled)


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def vllm_default_ceiling(max_num_seqs: int, num_speculative_tokens: int,
                         version: str | None) -> int:
    """_set_cudagraph_sizes's default max_cudagraph_capture_size before max_num_batched_tokens
    caps it: min(max_num_seqs x 2, 512), from 0.13.0 x (1 + k) (module docstring)."""
    query_len = 1 + num_speculative_tokens
    if version_key(version) < SCALED_CEILING_SINCE:
        query_len = 1
    return min(max_num_seqs * query_len * 2, DEFAULT_MAX_CAPTURE)


def request_counts(max_reqs: int) -> list[int]:
    """0.29's request-count grid (config/vllm.py 0.29.0:2030-2037): 1, 2, 4, every 8 below 256,
    every 16 from 256, and max_reqs itself, up to min(max_reqs, 512)."""
    n = min(max_reqs, DEFAULT_MAX_CAPTURE)
    counts = [c for c in (1, 2, 4) if c <= n] + list(range(8, min(n + 1, 256), 8))
    return sorted({*counts, *range(256, n + 1, 16), n})


def vllm_spec_capture_sizes(grid: tuple[int, ...], *, num_speculative_tokens: int,
                            max_num_seqs: int, max_num_batched_tokens: int,
                            ceiling: int, default_ceiling: bool,
                            version: str | None) -> tuple[int, ...]:
    """The capture sizes vLLM `version` ends with from the token grid `grid` (ascending, already
    cut at min(ceiling, max_num_batched_tokens)) with k = `num_speculative_tokens` draft tokens:
    0.29's request grid added where the ceiling is vLLM's default (`default_ceiling`), then every
    size rounded up to a multiple of 1 + k from 0.11.1 (module docstring). k = 0: `grid`."""
    query_len = 1 + num_speculative_tokens
    key = version_key(version)
    if query_len == 1 or key < ROUNDED_SINCE:
        return grid
    sizes = set(grid)
    if default_ceiling and key >= REQUEST_GRID_SINCE:
        sizes |= {n * query_len for n in request_counts(max_num_seqs)
                  if n * query_len <= min(ceiling, max_num_batched_tokens)}
    if not sizes:
        return ()
    largest = max(sizes)
    rounded = sorted({_round_up(s, query_len) for s in sizes
                      if _round_up(s, query_len) <= largest})
    if not rounded and query_len <= largest:
        rounded = [query_len]
    if not rounded:
        raise InputError(f"vLLM: no CUDA-graph size is a multiple of {query_len} "
                         f"(num_speculative_tokens + 1) up to {largest}; it refuses to start "
                         "(lower --num-speculative-tokens or use --enforce-eager)")
    return tuple(rounded)


def vllm_full_decode_sizes(sizes: tuple[int, ...], *, num_speculative_tokens: int,
                           max_num_seqs: int) -> int:
    """The FULL decode graphs of the default FULL_AND_PIECEWISE mode: the sizes s with
    1 + k <= s <= (1 + k) x max_num_seqs (v1/cudagraph_dispatcher.py, module docstring)."""
    query_len = 1 + num_speculative_tokens
    return sum(query_len <= s <= query_len * max_num_seqs for s in sizes)


def vllm_cuda_graph_sizes(*, max_num_seqs: int, max_num_batched_tokens: int,
                          model_max_capture: int | None = None, num_speculative_tokens: int = 0,
                          version: str | None = None) -> tuple[int, ...]:
    """The token counts vLLM captures CUDA graphs for (a step of up to the largest runs padded
    to the next one): config/vllm.py _set_cudagraph_sizes, [1, 2, 4] + range(8, 256, 8) +
    range(256, ceiling + 1, 16) up to min(ceiling, max_num_batched_tokens), the ceiling
    min(2 x max_num_seqs, 512) unless the model class sets one (`model_max_capture`:
    kvplan.engines.vllm.graph_sizes, gpt-oss 1,024); with k = `num_speculative_tokens` the
    release's spec-decode sizes (kvplan.engines.vllm.spec_graph_sizes)."""
    ceiling = model_max_capture
    if ceiling is None:
        ceiling = vllm_default_ceiling(max_num_seqs, num_speculative_tokens, version)
    largest = min(ceiling, max_num_batched_tokens)
    grid = tuple(s for s in (1, 2, 4, *range(8, 256, 8), *range(256, 1025, 16)) if s <= largest)
    return vllm_spec_capture_sizes(
        grid, num_speculative_tokens=num_speculative_tokens, max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens, ceiling=ceiling,
        default_ceiling=model_max_capture is None, version=version)


def vllm_cuda_graph_count(*, max_num_seqs: int, max_num_batched_tokens: int,
                          model_max_capture: int | None = None, num_speculative_tokens: int = 0,
                          version: str | None = None) -> tuple[int, int]:
    """(PIECEWISE, FULL) graphs of vLLM's default FULL_AND_PIECEWISE mode: a PIECEWISE graph
    for each capture size (`vllm_cuda_graph_sizes`); v1/cudagraph_dispatcher.py: a FULL decode
    graph for each size from 1 + k to (1 + k) x max_num_seqs (spec_graph_sizes)."""
    sizes = vllm_cuda_graph_sizes(max_num_seqs=max_num_seqs,
                                  max_num_batched_tokens=max_num_batched_tokens,
                                  model_max_capture=model_max_capture,
                                  num_speculative_tokens=num_speculative_tokens, version=version)
    return len(sizes), vllm_full_decode_sizes(sizes, num_speculative_tokens=num_speculative_tokens,
                                              max_num_seqs=max_num_seqs)
