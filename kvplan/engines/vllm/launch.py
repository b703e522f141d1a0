"""`vllm serve` lines for a plan, by layout and version (flags as vllm/engine/arg_utils.py and
the serve command's cli_args.py declare them; tests/data/launch_flags holds each version's).

- One node: `--tensor-parallel-size`, `--pipeline-parallel-size`, `--data-parallel-size`.
- DP attention (MLA + MoE): each data-parallel engine owns its TP workers (the world is
  DP x TP x PP, vllm/config/parallel.py `world_size_across_dp`), so attention DP over 8 GPUs is
  `--data-parallel-size 8 --tensor-parallel-size 1`, never TP 8 x DP 8 (64 GPUs), with
  `--enable-expert-parallel` for the experts (EP over DP x TP ranks).
- Replicas over nodes, each replica inside a node: vLLM's multi-node data parallel
  (docs/serving/data_parallel_deployment.md): the head runs `--data-parallel-size-local` of them
  and serves the API; every other node runs `--headless` with its
  `--data-parallel-start-rank`, all with the head's `--data-parallel-address` and one
  `--data-parallel-rpc-port`.
- A replica over several nodes (PP or TP across nodes): from vLLM 0.11.1 its multiprocessing
  executor spans nodes (`--nnodes`, `--node-rank`, `--master-addr`; arg_utils.py of v0.11.1,
  absent from v0.11.0; `--headless` on the other nodes); before, a Ray cluster
  (`ray start --head` on the head, `ray start --address` on the others) and
  `--distributed-executor-backend ray` on the head. Ray placement keeps each data-parallel
  engine inside a node before 0.11.1, so several replicas that each span nodes run there as
  independent deployments (one Ray cluster each, behind a load balancer).
- Several servers on one node (plan --rate's copies of an engine smaller than a node): each its
  own GPUs by CUDA_VISIBLE_DEVICES (a data-parallel engine's GPUs are the visible ones from
  local_dp_rank x world_size, v1/engine/utils.py:433-470 of 0.32.0, mapped through the
  variable by platforms/interface.py:304-313) and its own `--port`
  (vllm_copy_on_node); the data-parallel master port is an open port found at start-up
  (config/parallel.py:991-995; `get_open_port()` in the releases before), and the RPC port is
  used only with remote data-parallel engines (engine/arg_utils.py:2516-2517), so neither clashes.
"""

from __future__ import annotations

import json
from dataclasses import replace

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key
from kvplan.engines.launch import (
    DRAFT_MODEL,
    HEAD_IP,
    Command,
    LaunchLayout,
    LaunchPlan,
    LaunchSettings,
    draft_note,
    multi_node_note,
    node_ip,
    nodes_per_replica,
    pack_replicas,
    visible_devices_copy,
)
from kvplan.engines.vllm.architectures import needs_trust_remote_code
from kvplan.engines.vllm.config_class import vllm_remote_config_reason
from kvplan.engines.vllm.quant_methods import vllm_quantization_flags

MP_MULTI_NODE_SINCE = (0, 11, 1)  # --nnodes / --node-rank / --master-addr (PR 23691)
DP_RPC_PORT = "13345"  # any free port, the same on every node (the docs' example)
RAY_PORT = "6379"  # Ray's default GCS port
# The API server's default --port (FrontendArgs, entrypoints/launchers/cli_args.py:285 of
# 0.32.0, `port: int = 8000`); the k-th server on a node listens on PORT + k.
PORT = 8000
# `--speculative-config` (a JSON object; in every release kvplan models) names MTP "mtp" from
# 0.11.0 (vllm/config/speculative.py SpeculativeMethod, the per-model names folded into it);
# 0.10's SpeculativeMethod has "deepseek_mtp" instead (vllm/config.py of v0.10.0), which it also
# uses for MiMo's and GLM-4.5's MTP layers.
GENERIC_MTP_SINCE = (0, 11)


def speculative_config(s: LaunchSettings) -> str:
    """The value of `--speculative-config` for the plan's speculative decoding."""
    method = s.speculative_method
    if method == "mtp" and version_key(s.version) < GENERIC_MTP_SINCE:
        method = "deepseek_mtp"
    config: dict[str, object] = {"method": method}
    if s.speculative_method in ("eagle", "eagle3"):
        config["model"] = DRAFT_MODEL
    config["num_speculative_tokens"] = s.num_speculative_tokens
    return json.dumps(config)


def vllm_running_cap(lay: LaunchLayout, concurrency: int) -> int:
    """`--max-num-seqs` for `concurrency` requests over the layout. It applies per
    data-parallel engine: each engine core's Scheduler takes max_num_running_reqs =
    scheduler_config.max_num_seqs (vllm/v1/core/sched/scheduler.py of 0.32.0), and
    vllm/config/scheduler.py of 0.32.0 says it "applies per data-parallel rank" (the API
    server's max_num_queued_reqs is the one counted across ranks). So each of the `dp` engines
    (replicas, or attention-DP ranks) gets its share, rounded up."""
    return -(-concurrency // lay.dp)


def vllm_running_flag(lay: LaunchLayout, per_engine: int) -> int:
    """`--max-num-seqs` for `per_engine` running requests in each data-parallel engine (a
    replica, or an attention-DP rank): the flag itself, as it applies per data-parallel rank
    (`vllm_running_cap`'s reading of vllm/config/scheduler.py and v1/core/sched/scheduler.py
    of 0.32.0); every engine of the layout gets the same `--max-num-seqs`, the layout is not
    read."""
    return per_engine


# config/cache.py CacheDType (vLLM 0.32): the 16-bit spellings; it has no float32.
CACHE_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


def _cache_dtype(kv_dtype: str) -> str:
    """`kv_dtype` as --kv-cache-dtype spells it, or refuse in one line where it has none."""
    if kv_dtype not in CACHE_DTYPES:
        raise InputError(f"--kv-dtype {kv_dtype}: vLLM's --kv-cache-dtype cannot name it "
                         "(config/cache.py CacheDType) and auto would run another dtype here: "
                         "give --kv-dtype auto, bf16, fp16 or fp8")
    return CACHE_DTYPES[kv_dtype]


def _settings(s: LaunchSettings, lay: LaunchLayout) -> tuple[tuple[str, ...], ...]:
    groups = [("--max-model-len", str(s.context), "--gpu-memory-utilization", f"{s.fraction:g}")]
    if s.kv_dtype == "fp8":
        groups.append(("--kv-cache-dtype", "fp8"))
    elif s.declared_kv_dtype not in (None, s.kv_dtype) or s.auto_kv_dtype not in (None,
                                                                            s.kv_dtype):
        # --kv-cache-dtype auto would take the checkpoint's declared dtype (engine/arg_utils.py
        # resolve_kv_cache_dtype_string), GLM-5's fp8 on SM 10.x or the model dtype when the
        # plan is the other 16-bit one (kvplan.engines.vllm.kv_dtype): a 16-bit plan names
        # its dtype as config/cache.py CacheDType spells it.
        groups.append(("--kv-cache-dtype", _cache_dtype(s.kv_dtype)))
    # The flags here exist in every V1 release kvplan models (tests/test_launch.py).
    groups.append(("--max-num-seqs", str(s.running_cap or vllm_running_cap(lay, s.concurrency))))
    groups.extend(_mm_flags(s))
    quant = vllm_quantization_flags(s.load_quantization)  # the weights plan sized
    if quant:
        groups.append(quant)
    if s.speculative_method is not None:
        groups.append(("--speculative-config", speculative_config(s)))
    if needs_trust_remote_code(s.architectures, s.remote_code, s.version) or _config_reason(s):
        # An architecture only the checkpoint's auto_map provides: the Transformers backend
        # loads it only with trust_remote_code (kvplan.engines.vllm.architectures); or a config
        # class only auto_map provides (kvplan.engines.vllm.config_class).
        groups.append(("--trust-remote-code",))
    return tuple(groups) + s.extra_groups


# --skip-mm-profiling: from 0.11.0 (engine/arg_utils.py; tests/data/launch_flags/vllm-0.11.0.json,
# absent from vllm-0.10.0.json); --limit-mm-per-prompt takes JSON in every release kvplan models.
SKIP_MM_PROFILING_SINCE = (0, 11)


def _mm_flags(s: LaunchSettings) -> tuple[tuple[str, ...], ...]:
    groups: list[tuple[str, ...]] = []
    if s.limit_mm_per_prompt:
        groups.append(("--limit-mm-per-prompt",
                       json.dumps(dict(s.limit_mm_per_prompt), separators=(",", ":"))))
    if s.skip_mm_profiling:
        if version_key(s.version) < SKIP_MM_PROFILING_SINCE:
            raise InputError(f"--skip-mm-profiling: vLLM {s.version} has no such flag (added in "
                             "0.11.0); give --engine-version 0.11 or later, or leave it out")
        groups.append(("--skip-mm-profiling",))
    return tuple(groups)


def _parallel(tp: int, pp: int, dp: int, ep: bool) -> tuple[tuple[str, ...], ...]:
    group = ["--tensor-parallel-size", str(tp)]
    if pp > 1:
        group += ["--pipeline-parallel-size", str(pp)]
    groups = [tuple(group)]
    if dp > 1:
        groups.append(("--data-parallel-size", str(dp)))
    if ep:
        groups.append(("--enable-expert-parallel",))
    return tuple(groups)


def vllm_launch(ref: str, lay: LaunchLayout, s: LaunchSettings) -> LaunchPlan:
    plan = _launch(ref, lay, s)
    reason = _config_reason(s)
    return replace(plan, notes=plan.notes + draft_note(s) + ((reason,) if reason else ()))


def _config_reason(s: LaunchSettings) -> str | None:
    return vllm_remote_config_reason(s.remote_config, s.config_model_type, s.architectures)


def _launch(ref: str, lay: LaunchLayout, s: LaunchSettings) -> LaunchPlan:
    # DP attention: dp engines of attention_tp GPUs; replicas: dp engines of tp GPUs.
    tp = lay.attention_tp
    engines = lay.dp
    engine_gpus = tp * lay.pp
    serve = (("vllm", "serve", ref),)
    parallel = _parallel(tp, lay.pp, engines, lay.ep > 1)
    tail = _settings(s, lay)
    gpn = lay.gpus_per_node
    if lay.nodes == 1:
        return LaunchPlan(commands=(Command(node=0, groups=serve + parallel + tail,
                                            gpus=lay.gpus),))
    if engine_gpus <= gpn:
        # Multi-node data parallel: whole engines per node.
        local = pack_replicas(engines, engine_gpus, gpn)
        cmds = []
        start = 0
        for node, count in enumerate(local):
            where = ("--data-parallel-size-local", str(count))
            if node:
                where += ("--data-parallel-start-rank", str(start))
            dp_net = ("--data-parallel-address", HEAD_IP, "--data-parallel-rpc-port", DP_RPC_PORT)
            head = () if node == 0 else (("--headless",),)
            cmds.append(Command(node=node, groups=serve + head + parallel + (where, dp_net) + tail,
                                gpus=count * engine_gpus))
            start += count
        return LaunchPlan(commands=tuple(cmds), notes=multi_node_note(len(local)) + (
            "The head node serves the API and runs the first data-parallel engines; the others "
            "run --headless (engines only) from their --data-parallel-start-rank.",))
    span = nodes_per_replica(engine_gpus, gpn)
    nodes = span * engines
    if version_key(s.version) >= MP_MULTI_NODE_SINCE:  # None: the newest
        cmds = tuple(
            Command(node=n, groups=serve + ((("--headless",),) if n else ()) + parallel + (
                ("--nnodes", str(nodes), "--node-rank", str(n), "--master-addr", HEAD_IP),)
                + tail, gpus=gpn)
            for n in range(nodes))
        return LaunchPlan(commands=cmds, notes=multi_node_note(nodes) + (
            "vLLM's multiprocessing executor spans the nodes (--nnodes, from vLLM 0.11.1): no "
            "Ray needed; the head node serves the API.",))
    # Before 0.11.1: a Ray cluster per replica.
    cmds = []
    for r in range(engines):
        head = r * span
        address = f"{node_ip(head)}:{RAY_PORT}"
        one = _parallel(tp, lay.pp, 1, lay.ep > 1)
        cmds.append(Command(node=head, groups=serve + one + (
            ("--distributed-executor-backend", "ray"),) + tail, gpus=gpn,
            setup=(("ray", "start", "--head", "--port", RAY_PORT),)))
        cmds += [Command(node=n, groups=(("ray", "start", "--block", "--address", address),),
                         gpus=gpn) for n in range(head + 1, head + span)]
    notes = multi_node_note(nodes) + (
        "vLLM before 0.11.1 runs an engine over several nodes on a Ray cluster: start Ray on "
        "the other nodes once the head's `ray start --head` is up, then run `vllm serve` on "
        "the head (it places the workers on every node of the cluster).",)
    if engines > 1:
        heads = ", ".join(node_ip(r * span) for r in range(engines))
        notes += (f"The {engines} replicas run as independent deployments (one Ray cluster "
                  f"of {span} nodes each, heads {heads}): put a load balancer in front.",)
    return LaunchPlan(commands=tuple(cmds), notes=notes)


def vllm_copy_on_node(command: Command, slot: int, gpus: int) -> Command:
    """`command` (one `vllm serve` on one node) as server `slot` of several on the node, each
    of `gpus` GPUs: CUDA_VISIBLE_DEVICES and `--port` PORT + slot, after `vllm serve MODEL`
    (kvplan.engines.launch.copies_on_nodes)."""
    return visible_devices_copy(command, slot, gpus, PORT)
