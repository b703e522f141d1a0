"""The SGLang launch flags `kvplan simulate --engine sglang --engine-arg` takes, as SGLang spells
them (python/sglang/srt/server_args.py: the ServerArgs field, then its argparse line, in the
sglang 0.5.9 and 0.5.10.post1 sdists; kvplan.engines.engine_args parses them).

The releases that have them, read in the sdists / wheels of PyPI: --scheduler-recv-interval is
in none of 0.4.0 - 0.4.10.post2 and from 0.5.1 (server_args.py:273; 0.5.0 has no sdist); the
piecewise CUDA-graph switches as kvplan.engines.sglang.prefill_graph reads them, and
--enable-piecewise-cuda-graph is gone from 0.5.14's server_args.py (its --disable-... kept,
:6390). The others are in every release read, 0.4.0 to 0.5.14 (0.5.23 builds its flags from
field names, sglang/srt/arg_groups: scheduler_recv_interval in field_order.py:69), but the MoE
all-to-all's: --moe-a2a-backend from 0.4.10.post2 (none in 0.4.0 - 0.4.10, which had
--enable-deepep-moe), --deepep-mode and --moe-dense-tp-size from 0.4.6.post1 (none in 0.4.0,
0.4.4), --enable-dp-lm-head from 0.4.8 (none in 0.4.6.post1); all four in 0.5.14's
server_args.py and 0.5.23's field_order.py (:97, :308, :313, :328)."""

from __future__ import annotations

from kvplan.engines.engine_args import EngineFlag, EngineFlags, Kind

_SA = "python/sglang/srt/server_args.py"

FLAGS = EngineFlags("SGLang", (
    EngineFlag(flag="--max-running-requests", kind=Kind.int, minimum=1, sets="max_num_seqs",
               kvplan_option="--max-num-seqs",
               source=f"{_SA}:325,3145 (0.5.9), :344,3922 (0.5.10.post1)",
               help="Running requests at most."),
    EngineFlag(flag="--chunked-prefill-size", kind=Kind.int,
               sets="sglang.chunked_prefill_size", kvplan_option="--chunked-prefill-size",
               source=f"{_SA}:328,3164 (0.5.9), :347,3942 (0.5.10.post1)",
               help="Prefill chunk per step (-1, any value <= 0: off, managers/scheduler.py:765 "
                    "0.5.9)."),
    EngineFlag(flag="--max-prefill-tokens", kind=Kind.int, minimum=1,
               sets="sglang.max_prefill_tokens",
               source=f"{_SA}:330,3182 (0.5.9), :349,3960 (0.5.10.post1)",
               help="Input tokens a prefill step takes at most (default 16384)."),
    EngineFlag(flag="--schedule-policy", kind=Kind.choice, choices=("fcfs", "lpm"),
               sets="sglang.schedule_policy", kvplan_option="--schedule-policy",
               source=f"{_SA}:332,3188 (0.5.9), :351,3967 (0.5.10.post1)",
               help="Queue order (SGLang's random, dfs-weight, lof, priority and routing-key "
                    "are not simulated)."),
    EngineFlag(flag="--schedule-conservativeness", kind=Kind.float, minimum=0.0,
               sets="sglang.schedule_conservativeness",
               kvplan_option="--schedule-conservativeness",
               source=f"{_SA}:337,3227 (0.5.9), :358,4018 (0.5.10.post1)",
               help="Scales the new-token ratio of admission."),
    EngineFlag(flag="--disable-overlap-schedule", kind=Kind.switch, value=False,
               sets="async_scheduling", kvplan_option="--no-async-scheduling",
               source=f"{_SA}:596,4560 (0.5.9), :629,5428 (0.5.10.post1)",
               help="The overlap scheduler off."),
    EngineFlag(flag="--disable-radix-cache", kind=Kind.switch, value=False,
               sets="prefix_caching", kvplan_option="--no-enable-prefix-caching",
               source=f"{_SA}:579,4473 (0.5.9), :609,5336 (0.5.10.post1)",
               help="No prefix reuse."),
    EngineFlag(flag="--enable-piecewise-cuda-graph", kind=Kind.switch, value=True,
               sets="sglang.piecewise_cuda_graph",
               source=f"{_SA}:604,4606 (0.5.9; deprecated at :5479 in 0.5.10.post1, on there)",
               since="0.5.4", before="0.5.14",
               help="Piecewise CUDA graphs for prefill steps (opt-in to 0.5.9)."),
    EngineFlag(flag="--disable-piecewise-cuda-graph", kind=Kind.switch, value=False,
               sets="sglang.piecewise_cuda_graph",
               source=f"{_SA}:637,5474 (0.5.10.post1)", since="0.5.10",
               help="Prefill steps eager (piecewise graphs on by default from 0.5.10)."),
    EngineFlag(flag="--scheduler-recv-interval", kind=Kind.int, minimum=1,
               sets="sglang.scheduler_recv_interval",
               source=f"{_SA}:630,4743 (0.5.9), :664,5621 (0.5.10.post1)", since="0.5.1",
               help="New requests taken every N decode steps (not with DP attention)."),
    # The MoE layers' all-to-all (kvplan.engines.sglang.deepep, read in 0.5.8.post1): sizing
    # and step-time settings, the estimate inputs SglangOptions holds (`kvplan estimate
    # --moe-a2a-backend` sets the same).
    EngineFlag(flag="--moe-a2a-backend", kind=Kind.choice, choices=("none", "deepep"),
               sets="moe_a2a_backend", kvplan_option="--moe-a2a-backend",
               source=f"{_SA}:495,4086 (0.5.9), :519,4909 (0.5.10.post1)",
               since="0.4.10.post2",
               help="The MoE all-to-all: deepep, DeepEP's dispatch and combine (SGLang sets "
                    "--ep-size to --tp-size, :2182 0.5.9); needs --moe-dense-tp-size 1 and "
                    "DP attention (mooncake, mori, flashinfer, ascend_fuseep not read)."),
    EngineFlag(flag="--deepep-mode", kind=Kind.choice, choices=("auto", "normal", "low_latency"),
               sets="deepep_mode", kvplan_option="--deepep-mode",
               source=f"{_SA}:501,4112 (0.5.9), :527,4945 (0.5.10.post1)",
               since="0.4.6.post1",
               help="DeepEP's kernels: auto (normal for a prefill step, low_latency for "
                    "decode), normal or low_latency."),
    EngineFlag(flag="--moe-dense-tp-size", kind=Kind.int, minimum=1,
               sets="moe_dense_tp_size", kvplan_option="--moe-dense-tp-size",
               source=f"{_SA}:516,4189 (0.5.9), :542,5022 (0.5.10.post1)",
               since="0.4.6.post1",
               help="1: the dense MLP layers whole on every rank (SGLang takes only 1 or "
                    "unset)."),
    EngineFlag(flag="--enable-dp-lm-head", kind=Kind.switch, value=True,
               sets="enable_dp_lm_head", kvplan_option="--enable-dp-lm-head",
               source=f"{_SA}:599,4575 (0.5.9), :632,5443 (0.5.10.post1)", since="0.4.8",
               help="The lm_head whole on every DP-attention rank, no logits gather."),
))
