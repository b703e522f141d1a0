"""gpt-oss's CUDA-graph capture ceiling in vLLM (kvplan.engines.vllm.graph_sizes), by hand."""

from kvplan._util.units import GiB, MiB
from kvplan.engines.vllm.budget import (
    vllm_cuda_graph_count,
    vllm_cuda_graph_estimate_bytes,
    vllm_cuda_graph_sizes,
)
from kvplan.engines.vllm.graph_sizes import vllm_model_max_capture_size

GPT_OSS = ("GptOssForCausalLM",)


def test_ceiling_by_release() -> None:
    # models/config.py GptOssForCausalLMConfig: range(256, 1025, 16) in 0.10.1, range(256, 993,
    # 16) in 0.11.0, max_cudagraph_capture_size = 1024 from 0.11.1 (0.19.0:130, 0.32.0:481).
    assert vllm_model_max_capture_size(GPT_OSS, "0.10.1.1") == 1024
    assert vllm_model_max_capture_size(GPT_OSS, "0.10.2") == 1024  # models/config.py:277-282
    assert vllm_model_max_capture_size(GPT_OSS, "0.11.0") == 992
    for v in ("0.11.1", "0.16.0", "0.17.0", "0.18.0", "0.19.0", "0.25.0", "0.32.0", None):
        assert vllm_model_max_capture_size(GPT_OSS, v) == 1024
    # Only the architecture vLLM resolves (the first) and only gpt-oss.
    assert vllm_model_max_capture_size(("LlamaForCausalLM",), "0.19.0") is None
    assert vllm_model_max_capture_size(("LlamaForCausalLM", "GptOssForCausalLM"), "0.19.0") is None
    assert vllm_model_max_capture_size((), "0.19.0") is None


def test_gpt_oss_120b_capture_list() -> None:
    # max_num_seqs 256, max_num_batched_tokens 8192: default ceiling min(512, 512) = 512:
    # 1, 2, 4 (3) + 8..248 by 8 (31) + 256..512 by 16 (17) = 51 sizes, FULL <= 256: 3 + 31 + 1
    # = 35. gpt-oss: ceiling min(1024, 8192) = 1024: 3 + 31 + 256..1024 by 16 (49) = 83 (vLLM's
    # own note: "from 67 to 83"), FULL still 35.
    sizes = vllm_cuda_graph_sizes(max_num_seqs=256, max_num_batched_tokens=8192,
                                  model_max_capture=1024)
    assert len(sizes) == 83 and sizes[-3:] == (992, 1008, 1024) and sizes[:4] == (1, 2, 4, 8)
    assert vllm_cuda_graph_count(max_num_seqs=256, max_num_batched_tokens=8192) == (51, 35)
    assert vllm_cuda_graph_count(max_num_seqs=256, max_num_batched_tokens=8192,
                                 model_max_capture=1024) == (83, 35)
    # max_num_seqs 1024: default min(2048, 512) = 512 -> 51, every size <= 1024 FULL: 51;
    # gpt-oss 83 and 83.
    assert vllm_cuda_graph_count(max_num_seqs=1024, max_num_batched_tokens=8192) == (51, 51)
    assert vllm_cuda_graph_count(max_num_seqs=1024, max_num_batched_tokens=8192,
                                 model_max_capture=1024) == (83, 83)
    # 0.11.0's 992: 256..992 by 16 is 47 sizes -> 81 ("from 67 to 81" in that release).
    assert vllm_cuda_graph_count(max_num_seqs=1024, max_num_batched_tokens=8192,
                                 model_max_capture=992) == (81, 81)
    # max_num_batched_tokens still caps it: 2048 -> 1024; 512 -> 51 sizes, as the default.
    assert vllm_cuda_graph_count(max_num_seqs=256, max_num_batched_tokens=512,
                                 model_max_capture=1024) == (51, 35)
    # The ceiling does not depend on max_num_seqs: 8 requests still capture 83 PIECEWISE sizes
    # (default min(16, 512) = 16: 1, 2, 4, 8, 16 = 5), FULL 1, 2, 4, 8 = 4.
    assert vllm_cuda_graph_count(max_num_seqs=8, max_num_batched_tokens=8192,
                                 model_max_capture=1024) == (83, 4)


def test_gpt_oss_120b_graph_estimate() -> None:
    # 36 layers, one stage, max_num_seqs 256: default (51 - 1) + (35 - 1) = 84 further graphs,
    # gpt-oss (83 - 1) + (35 - 1) = 116: 0.35 GiB + 116 x 36 x 0.157 MiB = 0.35 GiB + 655.632
    # MiB, 180.864 MiB (32 x 36 x 0.157) more than the default's 474.768 MiB.
    est = vllm_cuda_graph_estimate_bytes(piecewise=83, full=35, layers_per_stage=36)
    assert est == int(0.35 * GiB + 655.632 * MiB)
    base = vllm_cuda_graph_estimate_bytes(piecewise=51, full=35, layers_per_stage=36)
    assert round((est - base) / MiB, 2) == 180.86


def test_gpt_oss_120b_budget_subtracts_the_larger_capture_list() -> None:
    # vLLM 0.20 on an H100 (defaults 1,024 requests / 8,192 tokens, vllm_batch_defaults):
    # gpt-oss-120b's 36 layers at 83 + 83 graphs, 164 further: 0.35 GiB + 164 x 36 x 0.157 MiB
    # = 0.35 GiB + 926.928 MiB; the default list's 51 + 51 (100 further) would be 565.2 MiB.
    from dataclasses import replace

    from kvplan.capacity.plan import plan_capacity
    from kvplan.engines.base import plan_inputs
    from kvplan.hardware.gpus import get_gpu
    from kvplan.sources.resolve import load_spec

    spec = load_spec("gpt-oss-120b")
    h100 = get_gpu("H100-80GB")
    base = plan_inputs(context=8192, total_bytes=h100.total_bytes)
    parts = plan_capacity(spec, replace(base, engine_version="0.20.0")).reserve_breakdown
    assert parts["cuda_graphs"]["bytes"] == int(0.35 * GiB + 926.928 * MiB)
    assert "cuda_graphs" not in plan_capacity(
        spec, replace(base, engine_version="0.19.0")).reserve_breakdown
