"""vLLM's CUDA-graph capture sizes with k draft tokens, by release
(kvplan.engines.vllm.spec_graph_sizes), worked out by hand from the sdists' code."""

from dataclasses import replace

import pytest

from kvplan._util.errors import InputError
from kvplan._util.units import GiB, MiB
from kvplan.engines.vllm.spec_graph_sizes import (
    request_counts,
    vllm_cuda_graph_count,
    vllm_cuda_graph_sizes,
    vllm_default_ceiling,
)

# The token grid below 256: 1, 2, 4 and every 8; from 256 every 16.
GRID_512 = (1, 2, 4, *range(8, 256, 8), *range(256, 513, 16))  # 3 + 31 + 17 = 51 sizes
ROUNDED_4 = (4, *range(8, 256, 8), *range(256, 513, 16))  # 1, 2, 4 -> 4: 49 sizes


def sizes(seqs: int, k: int, version: str | None, tokens: int = 8192,
          model: int | None = None) -> tuple[int, ...]:
    return vllm_cuda_graph_sizes(max_num_seqs=seqs, max_num_batched_tokens=tokens,
                                 model_max_capture=model, num_speculative_tokens=k,
                                 version=version)


def test_llama_8b_eagle_k3_256_seqs_by_release() -> None:
    # Llama-3.1-8B, EAGLE k = 3 (a decode step of q = 4 tokens a request), max_num_seqs 256,
    # max_num_batched_tokens 8192. Ceiling: min(256 x 2, 512) = 512 up to 0.12; from 0.13
    # min(256 x 4 x 2, 512) = 512 as well.
    # 0.11.0: no rounding, k unused: the 51 sizes of the plain grid. FULL decode graphs are the
    # sizes 4 <= s <= 4 x 256 = 1024 (cudagraph_dispatcher.py 0.11.0:82-88): 51 - 2 (1, 2).
    assert sizes(256, 3, "0.11.0") == GRID_512
    assert vllm_cuda_graph_count(max_num_seqs=256, max_num_batched_tokens=8192,
                                 num_speculative_tokens=3, version="0.11.0") == (51, 49)
    # 0.11.1 on: round_up(s, 4): 1, 2, 4 -> 4; 8..248 and 256..512 are multiples of 4 already:
    # 1 + 31 + 17 = 49 sizes, all FULL (4 <= s <= 1024). 0.29's request grid: n x 4 for n in
    # 1, 2, 4, 8, ..., 128 (<= 512): 4, 8, 16, 32, ..., 512, every one already in the grid.
    for v in ("0.11.1", "0.12.0", "0.13.0", "0.19.0", "0.20.1", "0.29.0", "0.32.0", None):
        assert sizes(256, 3, v) == ROUNDED_4, v
        assert vllm_cuda_graph_count(max_num_seqs=256, max_num_batched_tokens=8192,
                                     num_speculative_tokens=3, version=v) == (49, 49)
    # Without drafts: 51 sizes, FULL the 35 up to 256 (tests/test_vllm_graph_sizes.py).
    assert sizes(256, 0, "0.19.0") == GRID_512
    assert vllm_cuda_graph_count(max_num_seqs=256, max_num_batched_tokens=8192,
                                 version="0.19.0") == (51, 35)


def test_ceiling_scaled_from_0_13() -> None:
    # max_num_seqs 16, k = 3. Up to 0.12: ceiling min(32, 512) = 32; from 0.13: min(16 x 4 x 2,
    # 512) = 128 (config/vllm.py 0.13.0:1067-1074; 0.12.0:1039 without q).
    assert vllm_default_ceiling(16, 3, "0.12.0") == 32
    assert vllm_default_ceiling(16, 3, "0.13.0") == 128
    assert vllm_default_ceiling(16, 0, "0.13.0") == 32
    # 0.11.0: 1, 2, 4, 8, 16, 24, 32 as they are; FULL 4 <= s <= 64: 4, 8, 16, 24, 32.
    assert sizes(16, 3, "0.11.0") == (1, 2, 4, 8, 16, 24, 32)
    assert vllm_cuda_graph_count(max_num_seqs=16, max_num_batched_tokens=8192,
                                 num_speculative_tokens=3, version="0.11.0") == (7, 5)
    # 0.12.0: rounded to 4: 4, 8, 16, 24, 32 (5), all FULL.
    assert sizes(16, 3, "0.12.0") == (4, 8, 16, 24, 32)
    # 0.13.0: 1, 2, 4 + 8..128 by 8 (16) -> 4, 8..128: 17 sizes; FULL 4..64: 4 + 8 = 9.
    assert sizes(16, 3, "0.13.0") == (4, *range(8, 129, 8))
    assert vllm_cuda_graph_count(max_num_seqs=16, max_num_batched_tokens=8192,
                                 num_speculative_tokens=3, version="0.13.0") == (17, 9)
    # max_num_batched_tokens still caps it: 64 -> 4, 8..64 (9).
    assert sizes(16, 3, "0.13.0", tokens=64) == (4, *range(8, 65, 8))


def test_request_grid_from_0_29() -> None:
    # max_num_seqs 16, k = 2 (q = 3): ceiling min(16 x 3 x 2, 512) = 96; grid 1, 2, 4, 8..96
    # by 8 (15). 0.28.0 rounds it up to multiples of 3: 1, 2 -> 3; 4 -> 6; 8 -> 9; 16 -> 18;
    # 24; 32 -> 33; 40 -> 42; 48; 56 -> 57; 64 -> 66; 72; 80 -> 81; 88 -> 90; 96: 14 sizes.
    before = (3, 6, 9, 18, 24, 33, 42, 48, 57, 66, 72, 81, 90, 96)
    assert sizes(16, 2, "0.28.0") == before
    # 0.29.0 adds request_counts(16) x 3 = 3, 6, 12, 24, 48: 12 is new (15 sizes).
    assert request_counts(16) == [1, 2, 4, 8, 16]
    assert sizes(16, 2, "0.29.0") == tuple(sorted((*before, 12)))
    # FULL decode: 3 <= s <= 48: 3, 6, 9, 12, 18, 24, 33, 42, 48.
    assert vllm_cuda_graph_count(max_num_seqs=16, max_num_batched_tokens=8192,
                                 num_speculative_tokens=2, version="0.29.0") == (15, 9)
    # request_counts: 1, 2, 4, 8..248 by 8, 256..n by 16, and n itself, n <= 512.
    assert request_counts(300) == [1, 2, 4, *range(8, 256, 8), 256, 272, 288, 300]
    assert request_counts(1024)[-1] == 512


def test_model_ceiling_keeps_its_own() -> None:
    # gpt-oss's 1,024 (graph_sizes) replaces the default: k scales nothing, no request grid;
    # from 0.11.1 the 83 sizes rounded to 4: 1, 2, 4 -> 4: 81.
    got = sizes(256, 3, "0.19.0", model=1024)
    assert len(got) == 81 and got[:2] == (4, 8) and got[-1] == 1024
    assert len(sizes(256, 3, "0.11.0", model=1024)) == 83


def test_no_size_left_refuses() -> None:
    # max_num_batched_tokens 4 with k = 7 (q = 8): the grid 1, 2, 4 rounds to 8 > 4: vLLM
    # raises "No valid cudagraph sizes after rounding" (config/compilation.py 0.19.0:1271-1272).
    with pytest.raises(InputError, match="multiple of 8"):
        sizes(256, 7, "0.19.0", tokens=4)
    # One valid but rounding down: q = 4 with sizes 1, 2, 4 -> 4 kept.
    assert sizes(256, 3, "0.19.0", tokens=4) == (4,)


def test_reserve_counts_the_spec_sizes() -> None:
    # Llama-3.1-8B (32 layers) on an H100, vLLM 0.20.1, 256 seqs, 8192 tokens. Without drafts
    # (51 - 1) + (35 - 1) = 84 further graphs: 0.35 GiB + 84 x 32 x 0.157 MiB = 422.016 MiB;
    # EAGLE k = 3: (49 - 1) + (49 - 1) = 96: 0.35 GiB + 96 x 32 x 0.157 MiB = 482.304 MiB.
    from kvplan.capacity.plan import plan_capacity
    from kvplan.engines.base import plan_inputs
    from kvplan.hardware.gpus import get_gpu
    from kvplan.sources.resolve import load_spec

    spec = load_spec("meta-llama/Llama-3.1-8B")
    base = replace(plan_inputs(context=8192, total_bytes=get_gpu("H100-80GB").total_bytes),
                   engine_version="0.20.1", max_num_seqs=256, max_num_batched_tokens=8192)
    plain = plan_capacity(spec, base).reserve_breakdown["cuda_graphs"]["bytes"]
    eagle = replace(base, speculative_method="eagle", num_speculative_tokens=3)
    drafted = plan_capacity(spec, eagle).reserve_breakdown["cuda_graphs"]["bytes"]
    assert plain == int(0.35 * GiB + 422.016 * MiB)
    assert drafted == int(0.35 * GiB + 482.304 * MiB)
    # The step padding `simulate` and plan's disaggregated roles use: the same list.
    assert eagle.engine.rules.decode_graph_sizes(spec, eagle) == ROUNDED_4
