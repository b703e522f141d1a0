"""`trtllm-serve` lines for a plan (PyTorch backend; the click options of
tensorrt_llm/commands/serve.py: `--tp_size`, `--pp_size`, `--ep_size`, `--max_seq_len`,
`--max_batch_size`, `--kv_cache_free_gpu_memory_fraction`, `--extra_llm_api_options FILE`;
tests/data/launch_flags/trtllm-1.2.json).

- One server per replica: trtllm-serve has no data-parallel flag, so replicas on one node take
  their own GPUs (`CUDA_VISIBLE_DEVICES`) and ports. Attention DP (kvplan does not plan it for
  TensorRT-LLM, but launches it when asked) is `enable_attention_dp: true` in the options YAML
  over the TP group (llmapi/llm_args.py).
- Experts: `--ep_size` within the TP group (moe_tp x moe_ep = tp, tensorrt_llm/mapping.py).
- fp8 KV: `kv_cache_config.dtype: fp8` in the YAML the server reads (with the memory fraction:
  the YAML's kv_cache_config replaces the flag's). A checkpoint that declares a KV dtype runs
  only at it (kvplan.engines.trtllm.kv_dtype): another plan is refused.
- MTP speculative decoding: `speculative_config` in the YAML, `decoding_type: MTP` with
  `num_nextn_predict_layers` the draft tokens per step (llmapi/llm_args.py MTPDecodingConfig;
  the DeepSeek-R1 serving docs' example). EAGLE needs a draft checkpoint kvplan does not
  launch for TensorRT-LLM: refused.
- A server over several nodes: MPI starts its ranks, `mpirun -H HOST:GPUS,... -np WORLD
  trtllm-llmapi-launch trtllm-serve ...` on the head (docs: multi-node serving with
  trtllm-llmapi-launch; srun works the same under Slurm).
"""

from __future__ import annotations

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.engines.launch import (
    Command,
    LaunchLayout,
    LaunchPlan,
    LaunchSettings,
    multi_node_note,
    node_ip,
    nodes_per_replica,
    pack_replicas,
    visible_devices_copy,
)
from kvplan.engines.trtllm.kv_dtype import check_trtllm_kv_dtype

OPTIONS_FILE = "kvplan-trtllm.yaml"
PORT = 8000  # trtllm-serve's default; replica i listens on PORT + i


def check_trtllm_load_quantization(load_quantization: str | None) -> None:
    """Refuse, in one line, load-time quantization (--quantization) for TensorRT-LLM, in every
    command (estimate, plan: the engine's estimate_config and stage_pool, and the launch):
    trtllm-serve has no such flag (tensorrt_llm/commands/serve.py, tests/data/launch_flags/
    trtllm-1.2.json), its PyTorch backend takes the checkpoint's own quantization
    (_torch/model_config.py from_pretrained: hf_quant_config.json / quantization_config), and
    QuantAlgo (tensorrt_llm/quantization/mode.py) has no bitsandbytes method. A launch without
    it would load 16-bit weights that plan did not size."""
    if load_quantization is not None:
        raise UnmodelledError(
            f"--engine trtllm --quantization {load_quantization}: trtllm-serve has no "
            "--quantization and TensorRT-LLM no such method (quantization/mode.py QuantAlgo): "
            "it loads the checkpoint's own quantization; drop --quantization, or give a "
            "checkpoint quantized beforehand (ModelOpt)")


def _yaml(lay: LaunchLayout, s: LaunchSettings) -> str | None:
    # Its auto is the model's 16-bit dtype unless the checkpoint declares the KV dtype
    # (kv_dtype.py), also where only TensorRT-LLM reads that declaration (an hf_quant_config.json
    # with quant_algo null).
    checkpoint = s.auto_kv_dtype if s.auto_kv_dtype not in (None, "bf16", "fp16") else None
    check_trtllm_kv_dtype(s.kv_dtype, s.declared_kv_dtype or checkpoint, s.auto_kv_dtype)
    text = "enable_attention_dp: true\n" if lay.dp_attention else ""
    if s.kv_dtype == "fp8":
        text += ("kv_cache_config:\n"
                 f"  free_gpu_memory_fraction: {s.fraction:g}\n"
                 "  dtype: fp8\n")
    if s.speculative_method == "mtp":
        text += ("speculative_config:\n"
                 "  decoding_type: MTP\n"
                 f"  num_nextn_predict_layers: {s.num_speculative_tokens}\n")
    elif s.speculative_method is not None:
        raise InputError(f"--engine trtllm --speculative-method {s.speculative_method}: kvplan "
                         "launches only MTP speculative decoding for TensorRT-LLM")
    return _merge(text, s.extra_yaml) or None


def _merge(text: str, extra: str) -> str:
    """Two options texts of top-level keys with indented children as one: a key both give
    (kv_cache_config) once, with both sets of children."""
    blocks: dict[str, list[str]] = {}
    for part in (text, extra):
        key = ""
        for line in part.splitlines():
            if line and not line.startswith(" "):
                key = line
                blocks.setdefault(key, [])
            else:
                blocks[key].append(line)
    return "".join(key + "\n" + "".join(c + "\n" for c in children)
                   for key, children in blocks.items())


def trtllm_launch(ref: str, lay: LaunchLayout, s: LaunchSettings) -> LaunchPlan:
    check_trtllm_load_quantization(s.load_quantization)
    size = ("--tp_size", str(lay.tp), "--pp_size", str(lay.pp)) + (
        # EP within the TP group, or below it (MoE TP x EP, kvplan.engines.moe_layout)
        ("--ep_size", str(min(lay.ep, lay.tp))) if lay.ep > 1 else ())
    options = _yaml(lay, s)
    tail: tuple[tuple[str, ...], ...] = (
        ("--max_seq_len", str(s.context), "--max_batch_size",
         str(s.running_cap or s.concurrency)),
        ("--kv_cache_free_gpu_memory_fraction", f"{s.fraction:g}"),
    ) + ((("--extra_llm_api_options", OPTIONS_FILE),) if options else ())
    files = ((OPTIONS_FILE, options),) if options else ()
    gpn = lay.gpus_per_node
    replica = lay.tp * lay.pp
    replicas = 1 if lay.dp_attention else lay.dp
    serve = ("trtllm-serve", ref, "--backend", "pytorch")
    if replica <= gpn:
        local = pack_replicas(replicas, replica, gpn)
        cmds = []
        for node, count in enumerate(local):
            for k in range(count):
                one = Command(node=node, groups=(serve, size) + tail, gpus=replica)
                cmds.append(trtllm_copy_on_node(one, k, replica) if count > 1 else one)
        notes = multi_node_note(len(local), addresses=False)
        if replicas > 1:
            notes += (f"{replicas} independent servers (trtllm-serve has no data-parallel "
                      "flag), each on its own GPUs and port: put a load balancer in front.",)
        return LaunchPlan(commands=tuple(cmds), notes=notes, files=files)
    span = nodes_per_replica(replica, gpn)
    cmds = []
    for r in range(replicas):
        hosts = ",".join(f"{node_ip(r * span + k)}:{gpn}" for k in range(span))
        launch = ("mpirun", "-H", hosts, "-np", str(replica), "trtllm-llmapi-launch")
        port = (("--port", str(PORT + r)),) if replicas > 1 else ()
        cmds.append(Command(node=r * span, groups=(launch, serve, size) + port + tail,
                            gpus=replica))
    notes = multi_node_note(span * replicas) + (
        "mpirun starts the ranks on every node it lists (passwordless ssh between the nodes); "
        "run it on the head node only.",)
    return LaunchPlan(commands=tuple(cmds), notes=notes, files=files)


def trtllm_copy_on_node(command: Command, slot: int, gpus: int) -> Command:
    """`command` (one server on one node) as server `slot` of several on the node, each of
    `gpus` GPUs: trtllm-serve has no GPU-offset flag, so its own GPUs by CUDA_VISIBLE_DEVICES
    and its own `--port` (PORT + slot, after the size line), as its replicas on one node
    (kvplan.engines.launch.copies_on_nodes)."""
    return visible_devices_copy(command, slot, gpus, PORT, after=2)
