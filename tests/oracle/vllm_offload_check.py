"""Run under vLLM's own python (VLLM_ORACLE_PYTHON): vLLM's CPUOffloadingSpec (vllm/v1/kv_offload/
cpu/spec.py) sizes the native CPU tier from the OffloadingConfig its connector builds; prints
{case: num_chunks} as JSON for the cases given as JSON on argv: [name, worker_kv_bytes_per_block,
world_size, replicated_layout, kv_offloading_size GiB]. The shared /dev/shm region (and so the
one-copy MLA layout) is CUDA's: a CPU build is told it has one, as on CUDA (not ROCm)."""

import json
import sys

from vllm.v1.kv_offload.config import (
    OffloadingCacheConfig,
    OffloadingConfig,
    OffloadingGroupConfig,
    OffloadingModelConfig,
    OffloadingParallelConfig,
)
from vllm.v1.kv_offload.cpu.spec import CPUOffloadingSpec

CPUOffloadingSpec._uses_shared_region = lambda self: True  # type: ignore[method-assign]

out = {}
for name, worker_block, world, replicated, gib in json.loads(sys.argv[1]):
    config = OffloadingConfig(
        groups=(OffloadingGroupConfig(tokens_per_block=16, layer_names=("l",), group_id=0),),
        worker_kv_bytes_per_block=worker_block, enable_kv_cache_events=False,
        # vllm/config/vllm.py: kv_offloading_size * (1 << 30)
        extra_config={"cpu_bytes_to_use": gib * (1 << 30)}, engine_id="kvplan",
        model=OffloadingModelConfig(name="m", dtype="bfloat16"),
        cache=OffloadingCacheConfig(tokens_per_hash=16, blocks_per_chunk=1),
        parallel=OffloadingParallelConfig(
            rank=0, world_size=world, tp_size=world, pp_size=1, pcp_size=1, dcp_size=1,
            data_parallel_index=0, data_parallel_size=1, data_parallel_rank_local=None,
            is_parallelism_agnostic=False),
        replicated_layout=replicated)
    out[name] = CPUOffloadingSpec(config).num_chunks
print(json.dumps(out))
