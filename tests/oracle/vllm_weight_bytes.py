"""Run under vLLM's own python (VLLM_ORACLE_PYTHON): start vLLM's CPU build on a config folder
with dummy weights, as ../shared/tools/vllm-oracle does, and print, as one JSON object, the bytes
of what the loaded model holds: parameters (each tensor once), buffers (the rotary cos/sin
tables), and the part of the parameters in router / gate / score-bias tensors, with their dtypes.
What vLLM's KV budget subtracts on a GPU is these bytes ("Model loading took X GiB").

    flock /tmp/oracle.lock env VLLM_CPU_KVCACHE_SPACE=1 VLLM_ENABLE_V1_MULTIPROCESSING=0 \\
        $VLLM_ORACLE_PYTHON tests/oracle/vllm_weight_bytes.py DIR [PYTHONPATH-extra]

A shrink whose config names remote code (MiMo-V2.5-Pro) needs
PYTHONPATH=tests/oracle/remote_configs; one whose max_position_embeddings is under 8,192 needs
VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (the rotary tables keep max_position_embeddings rows either way).
A multimodal wrapper whose processor needs a tokenizer (Gemma-4) starts without one only with every
modality's prompt limit 0: WEIGHT_BYTES_LIMIT_MM=1 passes limit_mm_per_prompt image=0, video=0,
audio=0, as vllm-oracle's --limit-mm does (vLLM then builds no tower: interfaces.py
_mark_tower_model). To measure the towers (Qwen2-VL, Qwen2.5-VL, Gemma-4: the probe runs with
skip_tokenizer_init, and --limit-mm-per-prompt 0 would leave the tower unbuilt), make a copy of
the folder with a tokenizer and a preprocessor / processor config in it (Gemma-4:
tests/oracle/gemma4_processor_files.py) and run with WEIGHT_BYTES_TOKENIZER=1 and
PYTHONPATH=../shared/tools/vllm-oracle-stubs (torchvision); weight-bytes.json's cases say which.
WEIGHT_BYTES_PP=N (with VLLM_CPU_OMP_THREADS_BIND="0|1"...): N pipeline stages, one JSON line a
stage (its `pp_rank`, the parameters it holds outside the decoder layers as `outer`).
WEIGHT_BYTES_TP=N (with VLLM_CPU_OMP_THREADS_BIND=nobind on a one-NUMA-node machine): N
tensor-parallel ranks, with WEIGHT_BYTES_EP=1 --enable-expert-parallel, one JSON line a rank (its
`tp_rank`, and the bytes of its routed experts' tensors, `experts`, and of its shared experts',
`shared_experts`): tests/data/oracle/ep-weights/.
"""

import json
import os
import re
import sys

# An MoE router's tensors: the gate (mlp.gate, block_sparse_moe.gate, LongCat's
# router.classifier, Llama-4's router), its score-correction bias, Qwen's shared_expert_gate.
ROUTER = re.compile(r"(\.gate\.weight|expert_bias|e_score_correction_bias"
                    r"|shared_expert_gate\.weight|\.classifier\.weight)$|\.router\.")


def measure(model) -> dict:
    seen = set()
    params = buffers = router = 0
    router_dtypes: dict[str, int] = {}
    sinks = 0
    for name, p in model.named_parameters(remove_duplicate=False):
        if p.data_ptr() in seen:
            continue
        seen.add(p.data_ptr())
        n = p.numel() * p.element_size()
        params += n
        if ROUTER.search(name):
            router += n
            key = f"{name.split('.')[-2]}.{name.split('.')[-1]}:{str(p.dtype)[6:]}"
            router_dtypes[key] = router_dtypes.get(key, 0) + n
        if name.endswith("sinks"):
            sinks += n
    for _, b in model.named_buffers():
        if b.data_ptr() not in seen:
            seen.add(b.data_ptr())
            buffers += b.numel() * b.element_size()
    out = {"params": params, "buffers": buffers, "router": router, "sinks": sinks,
           "router_by_dtype": router_dtypes}
    if os.environ.get("WEIGHT_BYTES_LIST"):
        # Every tensor by name, shape and dtype (parameters, then buffers), to find what a
        # family builds that kvplan does not count: WEIGHT_BYTES_LIST=1.
        out["tensors"] = [[name, list(t.shape), str(t.dtype)[6:]] for name, t in
                          [*model.named_parameters(), *model.named_buffers()]]
    return out


def install_spy() -> None:
    """Print `measure` of the model once loaded, before process_weights_after_loading: the CPU
    backend then repacks linears and experts into kernel-specific tensors that are no longer
    parameters; a GPU keeps the bytes. Under pipeline parallelism each stage's worker prints
    its own, with its rank (`pp_rank`) and its parameters outside the decoder layers
    (`outer`)."""
    import vllm.model_executor.model_loader.base_loader as base_loader

    after = base_loader.process_weights_after_loading

    def spy(model, *args, **kwargs):
        out = measure(model)
        if os.environ.get("WEIGHT_BYTES_TP"):
            from vllm.distributed import get_tensor_model_parallel_rank

            out["tp_rank"] = get_tensor_model_parallel_rank()
            out.update(_expert_bytes(model))
        if os.environ.get("WEIGHT_BYTES_PP"):
            from vllm.distributed import get_pp_group

            out["pp_rank"] = get_pp_group().rank_in_group
            out["outer"] = sorted({n for n, _ in model.named_parameters() if ".layers." not in n})
        print("WEIGHT-BYTES " + json.dumps(out), flush=True)
        return after(model, *args, **kwargs)

    base_loader.process_weights_after_loading = spy


def _expert_bytes(model) -> dict:
    """One rank's bytes of routed-expert tensors (FusedMoE's w13 / w2 weights and biases and its
    expert map, `.experts.` in the name) and of shared-expert tensors (their gate excluded)."""
    out = {"experts": 0, "shared_experts": 0}
    for name, p in model.named_parameters():
        n = p.numel() * p.element_size()
        if ".experts." in name:
            out["experts"] += n
        elif "shared_expert" in name and "shared_expert_gate" not in name:
            out["shared_experts"] += n
    for name, b in model.named_buffers():
        if ".experts." in name:
            out["experts"] += b.numel() * b.element_size()
    return out


def main() -> None:
    from vllm import LLM

    install_spy()
    limits = ({"limit_mm_per_prompt": {"image": 0, "video": 0, "audio": 0}}
              if os.environ.get("WEIGHT_BYTES_LIMIT_MM") else {})
    # WEIGHT_BYTES_TOKENIZER=1: a multimodal wrapper whose processor needs a tokenizer (Qwen2-VL,
    # Qwen2.5-VL: --limit-mm-per-prompt 0 would leave the tower unbuilt) reads the folder's own.
    skip = not os.environ.get("WEIGHT_BYTES_TOKENIZER")
    # WEIGHT_BYTES_PP=N: N pipeline stages, one worker process each (vLLM spawns them), which
    # install the spy at start-up through weight_bytes_pp/sitecustomize.py, put on their
    # PYTHONPATH here. vLLM's CPU build binds each worker's threads to a core:
    # VLLM_CPU_OMP_THREADS_BIND="0|1" on a one-NUMA-node machine.
    pp = int(os.environ.get("WEIGHT_BYTES_PP") or 1)
    tp = int(os.environ.get("WEIGHT_BYTES_TP") or 1)
    if tp > 1:
        limits.update(tensor_parallel_size=tp, distributed_executor_backend="mp",
                      enable_expert_parallel=bool(os.environ.get("WEIGHT_BYTES_EP")))
    if pp > 1:
        limits.update(pipeline_parallel_size=pp, distributed_executor_backend="mp")
    if pp > 1 or tp > 1:
        here = os.path.dirname(os.path.abspath(__file__))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [os.path.join(here, "weight_bytes_pp"), here]
            + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    llm = LLM(model=os.path.abspath(sys.argv[1]), load_format="dummy", skip_tokenizer_init=skip,
              max_model_len=8192, enforce_eager=True, max_num_batched_tokens=2048, **limits)
    del llm


if __name__ == "__main__":
    main()
    os._exit(0)
