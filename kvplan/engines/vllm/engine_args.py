"""The vLLM launch flags `kvplan simulate --engine-arg` takes, as `vllm serve` spells them
(vllm/engine/arg_utils.py EngineArgs, vLLM 0.32.0 as installed for the CPU oracle: the field's
line; its bool | None fields are argparse BooleanOptionalAction, --X and --no-X; kvplan.engines.
engine_args parses them)."""

from __future__ import annotations

from kvplan.engines.engine_args import EngineFlag, EngineFlags, Kind

_EA = "vllm/engine/arg_utils.py"

FLAGS = EngineFlags("vLLM", (
    EngineFlag(flag="--max-num-seqs", kind=Kind.int, minimum=1, sets="max_num_seqs",
               kvplan_option="--max-num-seqs", source=f"{_EA}:604 (0.32.0)",
               help="Running requests at most."),
    EngineFlag(flag="--max-num-batched-tokens", kind=Kind.int, minimum=1,
               sets="max_num_batched_tokens", kvplan_option="--max-num-batched-tokens",
               source=f"{_EA}:598 (0.32.0)", help="Token budget per step."),
    EngineFlag(flag="--async-scheduling", kind=Kind.switch, value=True, sets="async_scheduling",
               kvplan_option="--async-scheduling", source=f"{_EA}:824 (0.32.0)",
               help="Async scheduling on."),
    EngineFlag(flag="--no-async-scheduling", kind=Kind.switch, value=False,
               sets="async_scheduling", kvplan_option="--no-async-scheduling",
               source=f"{_EA}:824 (0.32.0)", help="Async scheduling off."),
    EngineFlag(flag="--enable-prefix-caching", kind=Kind.switch, value=True,
               sets="prefix_caching", kvplan_option="--enable-prefix-caching",
               source=f"{_EA}:580 (0.32.0)", help="Prefix caching on."),
    EngineFlag(flag="--no-enable-prefix-caching", kind=Kind.switch, value=False,
               sets="prefix_caching", kvplan_option="--no-enable-prefix-caching",
               source=f"{_EA}:580 (0.32.0)", help="Prefix caching off."),
    # SchedulerConfig.scheduler_reserve_full_isl (0.19.0 config/scheduler.py:139, default
    # True; 0.32.0 :190), a bool field, so --X / --no-X (0.32.0 arg_utils.py:378-380); none
    # before 0.19.0 (kvplan.engines.vllm.admission).
    EngineFlag(flag="--scheduler-reserve-full-isl", kind=Kind.switch, value=True,
               sets="reserve_full_isl", source=f"{_EA}:698 (0.32.0)", since="0.19.0",
               help="Admit a waiting request only when its whole prompt fits (the default)."),
    EngineFlag(flag="--no-scheduler-reserve-full-isl", kind=Kind.switch, value=False,
               sets="reserve_full_isl", source=f"{_EA}:698 (0.32.0)", since="0.19.0",
               help="Admit a waiting request when its first chunk fits, as 0.18 did."),
))
