"""The TensorRT-LLM settings `kvplan simulate --engine trtllm --engine-arg` takes, as its llm_args
YAML spells them (`trtllm-serve --extra_llm_api_options FILE` / `--config`: top-level keys and
`section.key` for nested ones; tensorrt_llm/llmapi/llm_args.py, the 1.2 line as GitHub stores
it: the class and field named in each `source`; kvplan.engines.engine_args parses them).

The three attention_dp_config keys make one setting (`TrtllmFlags.settings`): the balance of
context requests (kvplan.engines.trtllm.dp_balance.AdpBalance) where enable_balance is true,
with the iteration counts given or AttentionDpConfig's defaults; without enable_balance: true
the engine reads neither count (py_executor.py `_balance_adp_requests` runs only under
attention_dp_enable_balance), so neither is simulated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kvplan.engines.engine_args import EngineArg, EngineFlag, EngineFlags, Kind
from kvplan.engines.trtllm.dp_balance import AdpBalance

_LA = "tensorrt_llm/llmapi/llm_args.py"
_ADP = "trtllm.adp_balance"
_ENABLE = "attention_dp_config.enable_balance"


@dataclass(frozen=True)
class TrtllmFlags(EngineFlags):
    def settings(self, args: Sequence[EngineArg]) -> list[tuple[EngineArg, str, Any]]:
        out = [(a, a.flag.sets, a.value) for a in args if a.flag.sets != _ADP]
        adp = {a.flag.flag.rsplit(".", 1)[1]: a for a in args if a.flag.sets == _ADP}
        enable = adp.pop("enable_balance", None)
        if enable is not None:
            balance = (AdpBalance(**{k: a.value for k, a in adp.items()}) if enable.value
                       else None)
            out.append((enable, _ADP, balance))
        return out


FLAGS = TrtllmFlags("TensorRT-LLM", (
    EngineFlag(flag="max_batch_size", kind=Kind.int, minimum=1, sets="max_num_seqs",
               kvplan_option="--max-num-seqs", source=f"{_LA} BaseLlmArgs.max_batch_size",
               help="Running requests at most (default 2048)."),
    EngineFlag(flag="max_num_tokens", kind=Kind.int, minimum=1, sets="max_num_batched_tokens",
               kvplan_option="--max-num-batched-tokens",
               source=f"{_LA} BaseLlmArgs.max_num_tokens",
               help="Tokens per step at most (default 8192)."),
    EngineFlag(flag="enable_chunked_prefill", kind=Kind.bool, sets="trtllm.chunked_prefill",
               kvplan_option="--enable-chunked-prefill",
               source=f"{_LA} BaseLlmArgs.enable_chunked_prefill",
               help="Chunked prefill (default false)."),
    EngineFlag(flag="disable_overlap_scheduler", kind=Kind.bool, value="not",
               sets="async_scheduling", kvplan_option="--no-async-scheduling",
               source=f"{_LA} TorchLlmArgs.disable_overlap_scheduler",
               help="The overlap scheduler off (default false)."),
    EngineFlag(flag="scheduler_config.capacity_scheduler_policy", kind=Kind.choice,
               choices=("GUARANTEED_NO_EVICT", "MAX_UTILIZATION"), sets="trtllm.policy",
               kvplan_option="--capacity-scheduler-policy",
               source=f"{_LA} SchedulerConfig.capacity_scheduler_policy",
               help="Admission policy (STATIC_BATCH is not simulated)."),
    EngineFlag(flag="kv_cache_config.enable_block_reuse", kind=Kind.bool,
               sets="prefix_caching", kvplan_option="--enable-prefix-caching",
               source=f"{_LA} KvCacheConfig.enable_block_reuse",
               help="KV block reuse (prefix caching; default true)."),
    EngineFlag(flag=_ENABLE, kind=Kind.bool, sets=_ADP,
               source=f"{_LA} AttentionDpConfig.enable_balance",
               help="Hold context requests to balance attention-DP ranks (default false; "
                    "needs --dp-attention)."),
    EngineFlag(flag="attention_dp_config.timeout_iters", kind=Kind.int, minimum=0, sets=_ADP,
               source=f"{_LA} AttentionDpConfig.timeout_iters (>= 0, its validator)",
               help="With enable_balance: iterations before held requests run (default 50)."),
    EngineFlag(flag="attention_dp_config.batching_wait_iters", kind=Kind.int, minimum=0,
               sets=_ADP,
               source=f"{_LA} AttentionDpConfig.batching_wait_iters (>= 0, its validator)",
               help="With enable_balance: iterations to batch context requests (default 10)."),
))
