"""What an engine is to kvplan: the `Engine` registry, the inputs every engine reads
(`PlanInputs`, a common core plus the selected engine's own `options`), and the protocols each
engine implements (`EngineRules`, its `Budget`), with the typed pool a stage gets (`StagePool`).

Each engine is one package, ``kvplan.engines.<name>``: ``engine.py`` defines ``ENGINE`` (its
`EngineRules`: dtypes, block size, state dtypes, refusals, pools, launch flags, cost traits,
view notes), ``budget.py`` defines ``BUDGET`` (its `Budget`: the KV budget, its inverse, the
reserve), ``options.py`` ``OPTIONS`` (its own settings) and ``engine_args.py`` ``FLAGS`` (its
launch flags the simulator reads). The registry loads each on first use, so `kvplan estimate`
without a device never builds a budget rule (examples/startup-bench.md). Adding an engine is one
package plus one line in `Engine`.

Its names live in four modules, each re-exported here so every caller may import them from
kvplan.engines.base: kvplan.engines.rules (`Engine`, `Scheduler`, `EngineOptions`,
`PlanInputs`, `plan_inputs`, the `EngineRules` and `Budget` protocols), kvplan.engines.
cost_traits (`CostTraits`, `PrefillOpCount`, `AllReduceNormFusion`, `Launch`, `LongContext`),
kvplan.engines.stage_pool (`StagePool`, `GridPages`, `PlanFacts`, `StageFacts`,
`block_pool_kv_bytes`) and this module (`EngineDefaults` and the helpers below).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError, UnmodelledError
from kvplan._util.versions import prerelease_key
from kvplan.engines.cost_traits import (
    AllReduceNormFusion,
    CostTraits,
    Launch,
    LongContext,
    PrefillOpCount,
)
from kvplan.engines.decode_graphs import NO_DECODE_GRAPHS, DecodeGraphs
from kvplan.engines.launch import LaunchLayout, tp_layout_text
from kvplan.engines.rules import (
    DEFAULT_ENGINE,
    Budget,
    Engine,
    EngineOptions,
    EngineRules,
    PlanInputs,
    Scheduler,
    plan_inputs,
)
from kvplan.engines.stage_pool import (
    GridPages,
    PlanFacts,
    StageFacts,
    StagePool,
    block_pool_kv_bytes,
)
from kvplan.model.spec import Assumption

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.hardware.gpus import GPU
    from kvplan.model.spec import ModelSpec

__all__ = [
    "DEFAULT_ENGINE", "AllReduceNormFusion", "Budget", "CostTraits", "Engine", "EngineDefaults",
    "EngineOptions", "EngineRules", "GridPages", "Launch", "LongContext", "PlanFacts",
    "PlanInputs", "PrefillOpCount", "Scheduler", "StageFacts", "StagePool",
    "block_pool_kv_bytes", "check_one_attention_per_layer", "default_max_num_batched_tokens",
    "flag_unread_version", "gpu_inputs", "options_of", "plan_inputs", "total_bytes_of",
]


class EngineDefaults:
    """Answers of `EngineRules` that SGLang and TensorRT-LLM give alike, written once: a base
    their rules classes extend, overriding what their code answers otherwise (vLLM answers each
    of these its own way and does not extend it). The version reported is the one asked (no
    table of profiles picks it); no rule depends on the platform; the layout is the TP size over
    its attention-DP ranks (`tp_layout_text`: SGLang's `--tp T --dp-size D
    --enable-dp-attention`, TensorRT-LLM's tp_size T with `enable_attention_dp: true`); the
    running-request flag is the concurrency served (each engine's note on why at its class);
    its log prints the pool in tokens, so the capacity view adds no max-concurrency line, no
    table of KV-cache groups and no rows of its own."""

    def reported_version(self, inputs: PlanInputs) -> str | None:
        return inputs.engine_version

    def reported_platform(self, inputs: PlanInputs) -> str | None:
        return None

    def layout_text(self, layout: LaunchLayout) -> str:
        return tp_layout_text(layout)

    def running_cap(self, layout: LaunchLayout, concurrency: int) -> int:
        return concurrency

    def view_rows(self, plan: PlanFacts) -> list[tuple[str, int, str]]:
        return []

    def prints_max_concurrency(self) -> bool:
        return False  # it prints the pool in tokens

    def shows_groups(self, plan: PlanFacts) -> bool:
        return False

    def decode_graphs(self, inputs: PlanInputs) -> DecodeGraphs:
        return NO_DECODE_GRAPHS  # no rule of TensorRT-LLM's reads a captured step (its padding:
        # graph sizes)


def gpu_inputs(gpu: GPU) -> dict[str, Any]:
    """The PlanInputs fields a GPU preset decides, in one place for estimate, plan and sweep."""
    from kvplan.hardware.interconnect import default_interconnect

    return {"total_bytes": gpu.total_bytes, "is_a100": gpu.is_a100,
            "smi_total_bytes": gpu.smi_total_bytes, "platform": gpu.platform,
            "nvlink": default_interconnect(gpu.name).name.startswith("nvlink"),
            "unified_memory": gpu.unified_memory, "compute_capability": gpu.compute_capability}


def default_max_num_batched_tokens(total_bytes: int | None, *, is_a100: bool = False,
                                   version: str | None = None, engine: Engine = DEFAULT_ENGINE,
                                   capability: tuple[int, int] | None = None) -> int:
    """The engine's default tokens per forward step (vLLM: by version and device)."""
    return engine.rules.default_max_num_batched_tokens(total_bytes, is_a100=is_a100,
                                                       version=version, capability=capability)


def options_of(inputs: PlanInputs, kind: type[Any], name: str) -> Any:
    """`inputs.options` as engine `name`'s options (its defaults where none are given)."""
    if inputs.options is None:
        return kind()
    if not isinstance(inputs.options, kind):
        raise TypeError(f"--engine {name}: options {type(inputs.options).__name__} are "
                        "another engine's")
    return inputs.options


def total_bytes_of(inputs: PlanInputs) -> int:
    if inputs.total_bytes is not None:
        return inputs.total_bytes
    raise InputError("give --gpu, --gpu-mem-gib or --kv-budget-gib to plan capacity")


def flag_unread_version(spec: ModelSpec, rules: EngineRules, version: str | None) -> ModelSpec:
    """`spec` as planned for `version` of the engine: a release newer than the newest whose
    sizing code kvplan has read (`EngineRules.newest_read`) is answered with that release's
    rules, `exact: false`, with an assumption on `engine_version` (its JSON and the table's
    assumptions say so; pre-releases in order: 1.3.0rc24 after 1.3.0rc10). None: the default."""
    if version is None or prerelease_key(version) <= prerelease_key(rules.newest_read):
        return spec
    if any(a.field == "engine_version" for a in spec.assumptions):
        return spec  # already flagged (served_spec runs more than once)
    return replace(spec, assumptions=spec.assumptions + (Assumption(
        field="engine_version", value=f"{rules.newest_read} rules",
        why=f"kvplan has read {rules.display_name}'s code up to {rules.newest_read}; "
            f"{version} is newer"),))


def check_one_attention_per_layer(spec: ModelSpec, engine_name: str) -> ModelSpec:
    """`spec`, refused in one line for an engine whose model code kvplan has not read for
    decoder layers of several attentions (ModelSpec.layers_per_block: LongCat-Flash's two MLA
    attentions per layer, read for vLLM in kvplan.engines.vllm.architectures)."""
    if spec.layers_per_block > 1:
        name = spec.architectures[0] if spec.architectures else spec.model_type
        raise UnmodelledError(
            f"{spec.path}: architectures: {name} holds {spec.layers_per_block} attentions in "
            f"every decoder layer; how {engine_name} lays out their caches is not modelled "
            "(plan it with --engine vllm)")
    return spec
