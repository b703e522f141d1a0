"""`python -m sglang.launch_server` lines for a plan, by layout and version (flags as
python/sglang/srt/server_args.py declares them; tests/data/launch_flags holds each version's).
kvplan writes the full flag names (`--tp-size`, `--dp-size`: `--tp` / `--dp` work only as
argparse abbreviations).

- TP and PP (`--pp-size`, from 0.4.8) in one server; over nodes the same line on every node with
  `--nnodes`, `--node-rank` and the head's `--dist-init-addr` (SGLang splits TP x PP over them:
  managers/scheduler launch, `tp_size_per_node = tp_size // nnodes`).
- DP attention: `--tp-size` is the whole engine (attention DP runs inside the TP group),
  `--dp-size` the attention ranks, `--enable-dp-attention`; experts over the TP group with
  `--ep-size` (0.5+; before, `--enable-ep-moe`, which sets ep_size = tp_size and is refused
  from 0.5.3 by DeprecatedAction).
- Replicas without DP attention: `--dp-size` replicas of TP x PP GPUs on one node (the data
  parallel controller places them from GPU 0 on its own node); over several nodes each node's
  (or, for a replica wider than a node, each replica's) server is independent, behind a load
  balancer such as sglang-router.
- KV dtype: `--kv-cache-dtype fp8_e4m3` for fp8; for a checkpoint that declares an fp8 KV cache,
  and for DeepSeek's sparse attention on SM10+ (where auto is fp8), a bf16 plan names
  `bfloat16` (kvplan.engines.sglang.kv_dtype.sglang_kv_dtype_flag).
- `--quantization modelopt_fp4` for a ModelOpt NVFP4 checkpoint on the releases that start it
  only so (kvplan.engines.sglang.quant_methods.sglang_quantization_flag); plan's load-time
  `--quantization bitsandbytes` as `--quantization bitsandbytes --load-format bitsandbytes`
  (sglang_load_quantization_flags).
- Several servers on one node (plan --rate's copies of an engine smaller than a node):
  `--base-gpu-id` (server_args.py:364, "Useful when running multiple instances on the same
  machine": each rank's GPU is base_gpu_id + its offset, managers/data_parallel_controller.py:
  445-449) and `--port` far apart (sglang_copy_on_node).
"""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key
from kvplan.engines.launch import (
    DRAFT_MODEL,
    MAX_PORT,
    Command,
    LaunchLayout,
    LaunchPlan,
    LaunchSettings,
    draft_note,
    multi_node_note,
    node_ip,
    nodes_per_replica,
    pack_replicas,
)
from kvplan.engines.sglang.config_class import sglang_remote_config_reason
from kvplan.engines.sglang.kv_dtype import sglang_kv_dtype_flag
from kvplan.engines.sglang.quant_methods import (
    sglang_load_quantization_flags,
    sglang_quantization_flag,
)

PP_SINCE = (0, 4, 8)  # --pp-size / --pipeline-parallel-size
EP_SIZE_ALONE_SINCE = (0, 5)  # --ep-size alone; --enable-ep-moe "(Deprecated)" from 0.5.0rc0
DIST_PORT = "5000"  # the docs' --dist-init-addr port; any free port on the head
# The API port's default (server_args.py:302 of 0.5.9, `port: int = 30000`), and how far apart the
# servers on one node put theirs: a DP-attention server on one node also binds --port + 13 (the
# ranks' handshake, DP_ATTENTION_HANDSHAKE_PORT_DELTA, server_args.py:5596, used at
# data_parallel_controller.py:302) and --port + 233 to + 238 (ZMQ_TCP_PORT_DELTA :5595: its
# dist-init port, then port_base and the detokenizer, rpc, metrics and scheduler-input ports,
# PortArgs.init_new :5652-5668); NCCL takes a free port (:5626-5627). 1,000 apart clears 238.
PORT = 30000
COPY_PORT_STEP = 1000
# --speculative-algorithm's choices in every release kvplan models (server_args.py, 0.4.5 to
# 0.5.14: EAGLE, EAGLE3, NEXTN, ...; NEXTN is EAGLE over the model's own MTP layers).
ALGORITHMS = {"mtp": "NEXTN", "eagle": "EAGLE", "eagle3": "EAGLE3"}


def _speculative(s: LaunchSettings) -> tuple[tuple[str, ...], ...]:
    """The speculative flags as plan sized them: the tree spelled out (topk 1 and
    num_steps + 1 draft tokens, what server_args.py sets for a chain; kvplan.engines.sglang.
    pools.sglang_draft), so SGLang does not choose other ones."""
    if s.speculative_method is None:
        return ()
    steps = s.num_speculative_tokens
    topk = s.speculative_eagle_topk or 1
    tokens = steps + 1 if topk == 1 else s.speculative_num_draft_tokens
    group = ("--speculative-algorithm", ALGORITHMS[s.speculative_method])
    if s.speculative_method != "mtp":
        group += ("--speculative-draft-model-path", DRAFT_MODEL)
    return (group, ("--speculative-num-steps", str(steps), "--speculative-eagle-topk",
                    str(topk), "--speculative-num-draft-tokens", str(tokens)))


def _settings(s: LaunchSettings) -> tuple[tuple[str, ...], ...]:
    quant = (sglang_load_quantization_flags(s.load_quantization)  # the weights plan sized
             or sglang_quantization_flag(s.quantization_json, s.quantization_file, s.version))
    groups = [quant] if quant else []
    groups.append(("--context-length", str(s.context), "--mem-fraction-static",
                   f"{s.fraction:g}"))
    flag = sglang_kv_dtype_flag(s.kv_dtype, s.declared_kv_dtype, s.version,
                                s.auto_kv_dtype)
    if flag:
        groups.append(flag)
    groups.append(("--max-running-requests", str(s.running_cap or s.concurrency)))
    if _config_reason(s):
        groups.append(("--trust-remote-code",))  # kvplan.engines.sglang.config_class
    return tuple(groups) + _speculative(s) + s.extra_groups


def _ep(ep: int, tp: int, version: tuple[int, ...]) -> tuple[str, ...]:
    """The EP flag: --ep-size, the TP degree (EP within the TP group; a layout's EP over
    replicas too, vLLM's, is the TP group's here), or below it (MoE TP x EP,
    kvplan.engines.moe_layout); before 0.5 --enable-ep-moe, which sets ep_size = tp_size:
    refused for an EP below the TP."""
    if version >= EP_SIZE_ALONE_SINCE:
        return ("--ep-size", str(min(ep, tp)))
    if ep < tp:
        raise InputError(f"--ep {ep} under --tp {tp}: SGLang before 0.5 sets EP to the TP "
                         "(--enable-ep-moe)")
    return ("--enable-ep-moe",)


def sglang_launch(ref: str, lay: LaunchLayout, s: LaunchSettings) -> LaunchPlan:
    plan = _launch(ref, lay, s)
    reason = _config_reason(s)
    return replace(plan, notes=plan.notes + draft_note(s) + ((reason,) if reason else ()))


def _config_reason(s: LaunchSettings) -> str | None:
    return sglang_remote_config_reason(s.remote_config, s.config_model_type)


def _launch(ref: str, lay: LaunchLayout, s: LaunchSettings) -> LaunchPlan:
    version = version_key(s.version)
    if lay.pp > 1 and version < PP_SINCE:
        raise InputError(f"--engine sglang {s.version}: no pipeline parallelism before 0.4.8 "
                         "(--pp-size); plan on one node or with a newer --engine-version")
    server = (("python", "-m", "sglang.launch_server", "--model-path", ref),)
    size = ("--tp-size", str(lay.tp)) + (("--pp-size", str(lay.pp)) if lay.pp > 1 else ())
    ep = (_ep(lay.ep, lay.tp, version),) if lay.ep > 1 else ()
    tail = _settings(s)
    gpn = lay.gpus_per_node

    def spanning(first: int, nodes: int, groups: tuple[tuple[str, ...], ...]
                 ) -> list[Command]:
        addr = f"{node_ip(first)}:{DIST_PORT}"
        return [Command(node=first + k, groups=groups + (
            ("--nnodes", str(nodes), "--node-rank", str(k), "--dist-init-addr", addr),) + tail,
            gpus=gpn) for k in range(nodes)]

    if lay.dp_attention:
        groups = server + (size + ("--dp-size", str(lay.dp)), ("--enable-dp-attention",)) + ep
        if lay.nodes == 1:
            return LaunchPlan(commands=(Command(node=0, groups=groups + tail, gpus=lay.gpus),))
        nodes = nodes_per_replica(lay.gpus, gpn)
        return LaunchPlan(commands=tuple(spanning(0, nodes, groups)),
                          notes=multi_node_note(nodes))
    replica = lay.tp * lay.pp
    if replica <= gpn:
        local = pack_replicas(lay.dp, replica, gpn)
        cmds = tuple(Command(node=n, groups=server + (
            size + (("--dp-size", str(count)) if count > 1 else ()),) + ep + tail,
            gpus=count * replica) for n, count in enumerate(local))
        notes = multi_node_note(len(local), addresses=False)
        if len(local) > 1:
            notes += ("Each node runs its own server (SGLang's --dp-size places replicas on "
                      "its own node): put a load balancer such as sglang-router in front.",)
        return LaunchPlan(commands=cmds, notes=notes)
    span = nodes_per_replica(replica, gpn)
    cmds = [c for r in range(lay.dp) for c in spanning(r * span, span, server + (size,) + ep)]
    notes = multi_node_note(span * lay.dp)
    if lay.dp > 1:
        notes += (f"The {lay.dp} replicas are independent servers of {span} nodes each: put a "
                  "load balancer such as sglang-router in front.",)
    return LaunchPlan(commands=tuple(cmds), notes=notes)


def sglang_copy_on_node(command: Command, slot: int, gpus: int) -> Command:
    """`command` (one server on one node) as server `slot` of several on the node, each of
    `gpus` GPUs: `--base-gpu-id slot x gpus` and `--port` PORT + slot x COPY_PORT_STEP, after
    the server's first line (kvplan.engines.launch.copies_on_nodes)."""
    port = PORT + slot * COPY_PORT_STEP
    if port > MAX_PORT:
        raise InputError(f"{slot + 1} SGLang servers on one node: server {slot + 1}'s --port "
                         f"{port} is above {MAX_PORT}; give fewer GPUs per node "
                         "(--gpus-per-node)")
    first, *rest = command.groups
    return replace(command, groups=(first, ("--base-gpu-id", str(slot * gpus), "--port",
                                            str(port)), *rest))
