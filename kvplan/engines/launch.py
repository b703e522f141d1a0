"""How a plan is launched, whatever the engine: the layout a command spells out, the settings it
sets, and the launch itself -- the commands to run (head node first), what each node runs
before (a Ray cluster's `ray start`), the files the commands read (TensorRT-LLM's options
YAML) and notes that say what the placeholders stand for. Each engine builds its own
(`EngineRules.launch_plan`, in kvplan.engines.<name>.launch); placing whole replicas on nodes
is shared here. Pure: commands are argv lists, never run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.model.spec import ModelSpec

# The head node's address: every multi-node command names it by this placeholder.
HEAD_IP = "$HEAD_IP"


def node_ip(node: int) -> str:
    """The placeholder for node `node`'s address (node 0 is the head)."""
    return HEAD_IP if node == 0 else f"$NODE{node}_IP"


@dataclass(frozen=True, kw_only=True)
class LaunchLayout:
    """The parallel layout a launch command spells out. Without `dp_attention`, `dp` replicas
    of `tp` x `pp` GPUs each; with it, one engine of `tp` x `pp` GPUs whose attention runs as
    `dp` data-parallel ranks of `tp // dp` GPUs (MLA models: each rank its own requests). `ep`:
    expert-parallel ranks of a MoE model (1: experts split by TP)."""

    tp: int
    pp: int = 1
    dp: int = 1
    ep: int = 1
    dp_attention: bool = False
    gpus_per_node: int = 8

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * (1 if self.dp_attention else self.dp)

    @property
    def nodes(self) -> int:
        return -(-self.gpus // self.gpus_per_node)

    @property
    def attention_tp(self) -> int:
        """GPUs per attention data-parallel rank (dp_attention), else the TP size."""
        return self.tp // self.dp if self.dp_attention else self.tp

    @property
    def replicas(self) -> int:
        """Schedulers that split the requests: DP replicas, or attention-DP ranks."""
        return self.tp if self.dp_attention else self.dp

    def to_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "ep": self.ep, "gpus": self.gpus,
                "nodes": self.nodes}


def layout_text(tp: int, pp: int, dp: int, ep: int, dp_word: str) -> str:
    """A layout in words, as a launch command sets it: "tp 8, pp 2, dp 2, ep 8" (`dp_word`
    names the data-parallel flag's meaning: "dp" or "dp-attention"; sizes of 1 left out but
    tp's)."""
    parts = [f"tp {tp}"] + ([f"pp {pp}"] if pp > 1 else []) + (
        [f"{dp_word} {dp}"] if dp > 1 or dp_word != "dp" else []) + (
        [f"ep {ep}"] if ep > 1 else [])
    return ", ".join(parts)


def tp_layout_text(layout: LaunchLayout) -> str:
    """`layout_text` for an engine whose TP size spans its attention-DP ranks (SGLang's `--tp T
    --dp-size D --enable-dp-attention`, TensorRT-LLM's tp_size T with `enable_attention_dp:
    true`): T GPUs, D attention ranks, "tp 8, dp-attention 8"."""
    return layout_text(layout.tp, layout.pp, layout.dp, layout.ep,
                       "dp-attention" if layout.dp_attention else "dp")


@dataclass(frozen=True, kw_only=True)
class LaunchSettings:
    """What a launch line sets besides the layout."""

    context: int
    fraction: float
    kv_dtype: str
    concurrency: int
    version: str | None = None  # the engine version (None: the newest kvplan models)
    # Speculative decoding as plan sized it (kvplan.engines.caches.SPECULATIVE_METHODS).
    speculative_method: str | None = None  # mtp | eagle | eagle3
    num_speculative_tokens: int = 0
    speculative_eagle_topk: int | None = None  # SGLang's tree (None: a chain, topk 1)
    speculative_num_draft_tokens: int | None = None
    # Flags a role of a disaggregated deployment adds (its KV connector), after the settings.
    extra_groups: tuple[tuple[str, ...], ...] = ()
    # Lines a role adds to an engine's options file (TensorRT-LLM's cache transceiver).
    extra_yaml: str = ""
    # The KV dtype the checkpoint's quantization_config declares (None: none), which an engine's
    # default may take (vLLM's --kv-cache-dtype auto): a 16-bit plan then says so.
    declared_kv_dtype: str | None = None
    # What the engine's --kv-cache-dtype auto runs for the model on the plan's GPU (None: not
    # known; kvplan.engines.kv_dtype.known_auto_kv_dtype): a plan at another dtype names its own.
    auto_kv_dtype: str | None = None
    # The config's model classes and whether its auto_map names remote code (ModelSpec.
    # architectures, .remote_code; kvplan.analysis.launch.launch_for fills them): whether the
    # engine must be told to trust remote code is its rule.
    architectures: tuple[str, ...] = ()
    remote_code: bool = False
    # ModelSpec.remote_config and .config_model_type: whether the config class is remote code.
    remote_config: str | None = None
    config_model_type: str | None = None
    # The checkpoint's quantization as kvplan.model.spec.ModelSpec holds it (quantization_json,
    # quantization_file: where it was read from), for an engine that must be told the method.
    quantization_json: str | None = None
    quantization_file: str | None = None
    # --quantization as plan was given it (load-time quantization, bitsandbytes: the weights
    # plan sized), which each engine's line must carry or refuse (issue 26).
    load_quantization: str | None = None
    # --max-num-seqs as plan was given it (the engine's running-request cap, which plan sized
    # with); None: the cap the line derives from the target concurrency.
    running_cap: int | None = None
    # vLLM's --limit-mm-per-prompt (modality, count) pairs and --skip-mm-profiling as plan was
    # given them (they change which towers load and what the profile reserves).
    limit_mm_per_prompt: tuple[tuple[str, int], ...] = ()
    skip_mm_profiling: bool = False


def declared_kv_cache(spec: ModelSpec) -> tuple[str, str] | None:
    """(field, KV dtype) `spec`'s quantization_config declares for the KV cache
    (kvplan.model.quant_config.declared_kv_cache_dtype), None where it declares none."""
    if spec.quantization_json is None:  # (quant_config not imported: estimate's start-up)
        return None
    from kvplan.model.quant_config import declared_kv_cache_dtype

    declared = declared_kv_cache_dtype(spec.quantization_config)
    if declared is None or spec.quantization_file is None:
        return declared
    # Read from hf_quant_config.json: its field named in that file ("quantization.kv_...").
    field, dtype = declared
    return f"{spec.quantization_file} {field.removeprefix('quantization_config.')}", dtype


def declared_kv_dtype(spec: ModelSpec) -> str | None:
    """The KV dtype of `declared_kv_cache`, None where none is declared."""
    declared = declared_kv_cache(spec)
    return None if declared is None else declared[1]


# An EAGLE / EAGLE-3 drafter is a separate checkpoint kvplan does not know: the commands name it
# by this placeholder and a note says so (MTP drafts from the model's own layers).
DRAFT_MODEL = "DRAFT_MODEL"


def draft_note(s: LaunchSettings) -> tuple[str, ...]:
    """The note a launch with a separate drafter carries."""
    if s.speculative_method not in ("eagle", "eagle3"):
        return ()
    return (f"{DRAFT_MODEL} stands for the {s.speculative_method.upper()} draft model's Hugging "
            "Face id or path: replace it before running.",)


@dataclass(frozen=True, kw_only=True)
class Command:
    """One process to start: on which node (0 = head), the command as option groups (one group a
    printed line), and the GPUs it takes there. `setup` runs on that node before any other
    node's command, and the command itself after them (a cluster head: `ray start --head`, then
    `vllm serve` once the workers have joined)."""

    node: int
    groups: tuple[tuple[str, ...], ...]
    gpus: int
    setup: tuple[tuple[str, ...], ...] = ()

    @property
    def argv(self) -> list[str]:
        return [arg for group in self.groups for arg in group]


@dataclass(frozen=True, kw_only=True)
class LaunchPlan:
    """The commands, head first (several may share a node: independent replicas)."""

    commands: tuple[Command, ...]
    notes: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (name, text)
    # Environment every command runs with: (name, value); the engine's long-context override
    # when the plan's context is above the model's maximum (kvplan.engines.context).
    env: tuple[tuple[str, str], ...] = ()

    @property
    def head(self) -> Command:
        return self.commands[0]

    @property
    def nodes(self) -> int:
        return len({c.node for c in self.commands})

    def to_dict(self) -> dict[str, Any]:
        return {"commands": [{"node": c.node, "argv": c.argv, "gpus": c.gpus,
                              "setup": [list(s) for s in c.setup]} for c in self.commands],
                "notes": list(self.notes), "files": dict(self.files),
                **({"env": dict(self.env)} if self.env else {})}


def pack_replicas(replicas: int, replica_gpus: int, gpus_per_node: int) -> list[int]:
    """Replicas per node when each replica fits in one node: as many as a node holds, the last
    node what is left (kvplan's planner asks for at most the GPUs given)."""
    if replica_gpus > gpus_per_node:
        raise InputError(f"a replica of {replica_gpus} GPUs does not fit a node of "
                         f"{gpus_per_node}")
    per = gpus_per_node // replica_gpus
    out = []
    left = replicas
    while left > 0:
        out.append(min(per, left))
        left -= per
    return out


def nodes_per_replica(replica_gpus: int, gpus_per_node: int) -> int:
    """Whole nodes a replica spans when it does not fit one (its GPUs fill them)."""
    if replica_gpus % gpus_per_node:
        raise InputError(f"a replica of {replica_gpus} GPUs does not fill whole nodes of "
                         f"{gpus_per_node}: kvplan launches replicas that span nodes only on "
                         "whole nodes")
    return replica_gpus // gpus_per_node


def multi_node_note(plan_nodes: int, *, addresses: bool = True) -> tuple[str, ...]:
    """What every multi-node launch says once (`addresses`: its commands name other nodes)."""
    if plan_nodes <= 1:
        return ()
    if not addresses:
        return (f"Run each node's commands on that node ({plan_nodes} nodes). The model must "
                "be at the same path on every node.",)
    others = (f"{node_ip(1)} names the other node" if plan_nodes == 2 else
              f"{node_ip(1)}, {node_ip(2)}{', ...' if plan_nodes > 3 else ''} the others")
    return (f"Run each node's commands on that node ({plan_nodes} nodes), in the order shown. "
            f"{HEAD_IP} is the head node's address as the other nodes reach it: set HEAD_IP "
            f"in each node's shell first ({others}). The model must be at the same path on "
            "every node.",)


_NODE_REF = re.compile(r"\$(?:HEAD_IP|NODE(\d+)_IP)\b")


def _shift_refs(arg: str, offset: int) -> str:
    """`arg` with every node placeholder naming the node `offset` further on."""
    return _NODE_REF.sub(lambda m: node_ip(int(m.group(1) or 0) + offset), arg)


def replicate_on_nodes(plan: LaunchPlan, copies: int, nodes_each: int) -> LaunchPlan:
    """`copies` independent copies of the server `plan` starts on its `nodes_each` whole nodes
    (an attention-DP engine: its ranks exchange tokens only among themselves), copy k on nodes
    k x nodes_each on: its commands and their node placeholders moved there, its head's address
    the first of them. A load balancer in front deals the requests to the copies."""
    if copies <= 1:
        return plan

    def moved(c: Command, k: int) -> Command:
        off = k * nodes_each
        return Command(node=c.node + off, gpus=c.gpus,
                       groups=tuple(tuple(_shift_refs(a, off) for a in g) for g in c.groups),
                       setup=tuple(tuple(_shift_refs(a, off) for a in g) for g in c.setup))

    heads = ", ".join(node_ip(k * nodes_each) for k in range(copies))
    # One node each: the engine's plan says nothing of nodes; over nodes it says it for one.
    nodes = multi_node_note(copies, addresses=False) if nodes_each == 1 else ()
    where = ("on its own node" if nodes_each == 1
             else f"on its own {nodes_each} nodes, written as the first's with its own head's "
                  "address")
    return replace(plan, commands=tuple(moved(c, k) for k in range(copies)
                                        for c in plan.commands),
                   notes=plan.notes + nodes + (
                       f"{copies} independent servers, each {where} (heads {heads}): put a "
                       "load balancer in front that deals the requests round-robin, as "
                       "simulated.",))


# The highest TCP port: a copy whose ports would pass it cannot be written.
MAX_PORT = 65535


def visible_devices_copy(command: Command, slot: int, gpus: int, port: int, *, after: int = 1
                         ) -> Command:
    """`command` as server `slot` of several on one node, each of `gpus` GPUs, for an engine
    that takes its GPUs from CUDA_VISIBLE_DEVICES (GPUs slot x gpus on, `env NAME=...` before
    the command) and its API port from `--port` (`port` + slot, a group after the command's
    first `after` groups)."""
    chosen = port + slot
    if chosen > MAX_PORT:
        raise InputError(f"{slot + 1} servers on one node: server {slot + 1}'s --port {chosen} "
                         f"is above {MAX_PORT}; give fewer GPUs per node (--gpus-per-node)")
    devices = ",".join(str(g) for g in range(slot * gpus, (slot + 1) * gpus))
    first, *rest = command.groups
    groups = (("env", f"CUDA_VISIBLE_DEVICES={devices}") + first, *rest)
    return replace(command, groups=groups[:after] + (("--port", str(chosen)),) + groups[after:])


def copies_on_nodes(plan: LaunchPlan, copies: int, copy_gpus: int, gpus_per_node: int,
                    place: Callable[[Command, int, int], Command]) -> LaunchPlan:
    """`copies` independent copies of the one-node server `plan` starts on `copy_gpus` GPUs,
    as many on a node as it holds (gpus_per_node // copy_gpus), the last node what is left:
    copy c on node c // per as that node's server c % per, written by the engine's own
    `place(command, slot, copy_gpus)` (EngineRules.copy_on_node: its GPUs and ports). One
    copy a node: `replicate_on_nodes`, the commands as they are. A load balancer in front
    deals the requests to the copies."""
    if copies <= 1:
        return plan
    per = gpus_per_node // copy_gpus if copy_gpus <= gpus_per_node else 0
    if per <= 1:  # a node each (the rest of a node idle), or whole nodes each
        return replicate_on_nodes(plan, copies, 1 if per else nodes_per_replica(
            copy_gpus, gpus_per_node))
    if len(plan.commands) != 1 or plan.head.node != 0:
        raise InputError("copies on one node: the server must be one command on one node")
    local = pack_replicas(copies, copy_gpus, gpus_per_node)
    commands = tuple(replace(place(plan.head, slot, copy_gpus), node=node)
                     for node, count in enumerate(local) for slot in range(count))
    return replace(plan, commands=commands, notes=plan.notes + multi_node_note(
        len(local), addresses=False) + (
        f"{copies} independent servers of {copy_gpus} GPUs, up to {per} on a node, each on its "
        "own GPUs and ports: put a load balancer in front that deals the requests "
        "round-robin, as simulated.",))
