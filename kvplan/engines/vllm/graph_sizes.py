"""vLLM's per-model ceiling on the CUDA-graph capture sizes: gpt-oss captures up to 1,024 tokens.

vLLM's default ceiling is min(2 x max_num_seqs, 512) (kvplan.engines.vllm.budget
.vllm_cuda_graph_sizes). Before that default is applied, `VllmConfig.try_verify_and_update_config`
runs the model class's `verify_and_update_config` (model_executor/models/config.py,
MODELS_CONFIG_MAP keyed by the resolved architecture), and `GptOssForCausalLMConfig` raises the
ceiling for gpt-oss whatever max_num_seqs is. Read in the sdists of every release below (0.15
was not read; it sits between 0.14.1 and 0.16.0, which agree):

- 0.10.1, 0.10.2: `scheduler_config.cuda_graph_sizes` (one value by default,
  min(2 x max_num_seqs, 512), config/scheduler.py 0.10.1:243-244) is below 1,024, so it is
  replaced with [1, 2, 4] + range(8, 256, 8) + range(256, 1025, 16) (models/config.py
  0.10.1:250-275, 0.10.2:261-286, "from 67 to 83" graphs); config/__init__.py 0.10.1:3767-3784
  then keeps the sizes <= max_num_batched_tokens.
- 0.11.0: the same with range(256, 993, 16) ("When using full cuda graph with FA3, the max
  supported size is 992", models/config.py:248-273): a ceiling of 992.
- 0.11.1-0.32.0: `compilation_config.max_cudagraph_capture_size = 1024` unless the user set
  cudagraph_capture_sizes or max_cudagraph_capture_size (models/config.py 0.11.1:254-273,
  0.12.0:273, 0.13.0:270, 0.14.1:313, 0.16.0:313, 0.17.0:357, 0.18.0:77, 0.19.0:130,
  0.20.0:169, 0.22.0:168, 0.24.0:235, 0.25.0:376, 0.27.0:409, 0.29.0:419, 0.31.0:436,
  0.32.0:481); config/vllm.py `_set_cudagraph_sizes` (0.19.0:1343-1440, 0.32.0:2292-2480)
  then takes min(max_num_batched_tokens, 1024) and lays the same grid up to it.

No other class in models/config.py touches cuda_graph_sizes, cudagraph_capture_sizes or
max_cudagraph_capture_size in any release read (0.10.1, 0.10.2, 0.11.0, 0.11.1, 0.12.0,
0.13.0, 0.14.1, 0.16.0-0.32.0).
kvplan has no option for vLLM's --max-cudagraph-capture-size / cudagraph_capture_sizes, so the
override always applies to a CUDA-graphed gpt-oss plan.

Not modelled (found here, not this module's rule): from 0.28.0 vLLM's own default ceiling is
min(2 x max_num_seqs, 1024) on SM 10.x GPUs for every model (config/vllm.py 0.28.0:1938
`1024 if current_platform.is_device_capability_family(100) else 512`, 0.32.0:2357); kvplan's
default stays 512 on every GPU. 0.10.x's default list for other models (range(8, N + 1, 8),
config/__init__.py 0.10.1:3769-3772) is not kvplan's default grid either.

The graph count follows the list (v1/cudagraph_dispatcher.py 0.19.0:189-223: a PIECEWISE graph
per capture size, a FULL decode graph per size <= max_num_seqs), and so does the CUDA-graph
estimate subtracted from the KV budget (gpu_model_runner.py 0.19.0:5868-5870
profile_cudagraph_memory sums over cudagraph_dispatcher.get_capture_descs()).
"""

from __future__ import annotations

from collections.abc import Sequence

from kvplan._util.versions import version_key

GPT_OSS_ARCHITECTURE = "GptOssForCausalLM"
# (first release, ceiling): 1,024 in 0.10.1-0.10.2, 992 in 0.11.0, 1,024 again from 0.11.1.
_GPT_OSS_CEILINGS = (((0, 10), 1024), ((0, 11, 0), 992), ((0, 11, 1), 1024))


def vllm_model_max_capture_size(architectures: Sequence[str], version: str | None) -> int | None:
    """The capture ceiling the model class sets before vLLM's default applies (None: the
    default, min(2 x max_num_seqs, 512)). vLLM keys MODELS_CONFIG_MAP by the architecture it
    resolved, the first of config.json's `architectures` it serves."""
    if not architectures or architectures[0] != GPT_OSS_ARCHITECTURE:
        return None
    key = version_key(version)
    ceiling = None
    for since, value in _GPT_OSS_CEILINGS:
        if key >= since:
            ceiling = value
    return ceiling
