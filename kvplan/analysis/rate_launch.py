"""The launch command of `kvplan plan --rate`'s answer (issues 29, 30): the winning layout as the
engine's own commands (kvplan.analysis.launch.launch_for, each engine's
kvplan.engines.<name>.launch: the code plan's static answer prints with, not a second copy),
set to what was simulated.

The running-request flag carries the cap each scheduler was simulated with (one replica's, one
attention-DP rank's: LayoutTrial.running_cap) in the engine's own unit
(EngineRules.running_flag): vLLM's --max-num-seqs and TensorRT-LLM's --max_batch_size per
engine / rank as they are, SGLang's --max-running-requests the server's total under DP
attention (each rank takes it // dp_size). The memory fraction is the one the simulated pool
was sized at (LayoutTrial.mem_fraction), the KV dtype the one simulated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kvplan.analysis.inputs import mm_fields
from kvplan.analysis.launch import launch_for
from kvplan.analysis.simulate.rate_search import LayoutTrial
from kvplan.engines.base import Engine
from kvplan.engines.context import long_context_env
from kvplan.engines.kv_dtype import known_auto_kv_dtype
from kvplan.engines.launch import (
    LaunchLayout,
    LaunchPlan,
    LaunchSettings,
    copies_on_nodes,
    declared_kv_dtype,
)
from kvplan.engines.sglang.deepep import moe_a2a_launch_groups
from kvplan.hardware.gpus import get_gpu
from kvplan.model.spec import ModelSpec


def trial_layout(trial: LayoutTrial, gpus_per_node: int) -> LaunchLayout:
    """The trial as the engine's launch command spells it (kvplan.engines.launch): `dp`
    replicas of `tp` GPUs, or one attention-DP engine of the trial's (each of its `engines`
    copies') GPUs, attention DP over its ranks and the experts over `ep` of them."""
    if not trial.dp_attention:
        return LaunchLayout(tp=trial.tp, pp=trial.pp, dp=trial.dp, ep=trial.ep,
                            gpus_per_node=gpus_per_node)
    return LaunchLayout(tp=trial.gpus // trial.engines, dp=trial.ranks, ep=trial.ep,
                        dp_attention=True, gpus_per_node=gpus_per_node)


def running_flag(engine: Engine, trial: LayoutTrial, gpus_per_node: int) -> int:
    """The running-request flag's value that gives each of the trial's schedulers the cap it
    was simulated with (EngineRules.running_flag)."""
    assert trial.running_cap is not None, "a trial that was not simulated has no launch"
    return engine.rules.running_flag(trial_layout(trial, gpus_per_node), trial.running_cap)


def rate_launch(spec: ModelSpec, trial: LayoutTrial, *, engine: Engine, gpu: str,
                context: int, kv_dtype: str, gpus_per_node: int,
                engine_version: str | None = None, limit_mm_per_prompt: str | None = None,
                skip_mm_profiling: bool = False, moe_a2a: Mapping[str, Any] | None = None,
                engine_args: Sequence[str] = (), max_num_batched_tokens: int | None = None,
                ref: str | None = None) -> LaunchPlan:
    """The engine's commands for the answer `trial`, at what it was simulated with.
    `moe_a2a`: SGLang's MoE all-to-all settings simulated (EngineSettings' fields of those
    names), written as plan writes them. The engine's own flags given with --engine-arg and
    kvplan's --max-num-batched-tokens are simulated but not written: a note names them."""
    assert trial.mem_fraction is not None, "a trial that was not simulated has no launch"
    flag = running_flag(engine, trial, gpus_per_node)
    mm = mm_fields(limit_mm_per_prompt, skip_mm_profiling)
    launch = launch_for(spec, engine, trial_layout(trial, gpus_per_node), LaunchSettings(
        context=context, fraction=trial.mem_fraction, kv_dtype=kv_dtype,
        concurrency=flag, running_cap=flag, version=engine_version,
        declared_kv_dtype=declared_kv_dtype(spec),
        auto_kv_dtype=known_auto_kv_dtype(engine, spec, engine_version, get_gpu(gpu)),
        quantization_json=spec.quantization_json, quantization_file=spec.quantization_file,
        limit_mm_per_prompt=mm.get("limit_mm_per_prompt", ()),
        skip_mm_profiling=bool(mm.get("skip_mm_profiling")),
        extra_groups=moe_a2a_launch_groups(moe_a2a or {})), ref=ref)
    if trial.engines > 1:  # copies of one attention-DP engine: on a node, or on whole nodes
        one = trial_layout(trial, gpus_per_node)
        launch = copies_on_nodes(launch, trial.engines, one.gpus, gpus_per_node,
                                 engine.rules.copy_on_node)
    env = long_context_env(spec, context, engine)
    unwritten = [f"--engine-arg {a}" for a in engine_args] + (
        [f"--max-num-batched-tokens {max_num_batched_tokens}"]
        if max_num_batched_tokens is not None else [])
    notes = ((f"Simulated with {', '.join(unwritten)}: the command writes only the running-"
              "request cap, the memory fraction, the KV dtype and SGLang's MoE all-to-all of "
              "those; add the others in the engine's own form.",) if unwritten else ())
    return replace(launch, env=launch.env + env, notes=launch.notes + notes)
