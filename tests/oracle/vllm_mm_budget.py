"""Run under vLLM's own python (VLLM_ORACLE_PYTHON): what vLLM's encoder profile would push
through a multimodal model's tower, read from vLLM's own ``multimodal/encoder_budget.py:
MultiModalBudget`` (the object ``v1/worker/gpu_model_runner.py: profile_run`` asks before it
logs "Encoder cache will be initialized with a budget of B tokens, and profiled with N
<modality> items of the maximum feature size").

The CPU build never runs profile_run when the KV size is given and the model is eager
(v1/worker/cpu_worker.py: _should_warm_up_model, determine_available_memory), so that log line
never appears in the oracle's runs; this builds the same VllmConfig and budget and prints one
JSON object: tokens per item of each modality (ProcessingInfo.get_mm_max_tokens_per_item at
seq_len = max_model_len, one item of each modality), the profiled modality, the encoder budget
and the item count.

    VLLM_CPU_KVCACHE_SPACE=1 PYTHONPATH=../shared/tools/vllm-oracle-stubs \\
        $VLLM_ORACLE_PYTHON tests/oracle/vllm_mm_budget.py DIR MAX_NUM_BATCHED_TOKENS MAX_MODEL_LEN

DIR needs what the processor reads: a tokenizer and the checkpoint's preprocessor_config.json
(Qwen2-VL / Qwen2.5-VL: tests/oracle/vllm_weight_bytes.py's WEIGHT_BYTES_TOKENIZER note). Run it
under ``flock /tmp/oracle.lock``. The dummy items themselves (the HF processor's output) are not
built: the image and video processors need the real torchvision, which the stub refuses."""

import json
import os
import sys


def main() -> None:
    from vllm.engine.arg_utils import EngineArgs
    from vllm.multimodal import MULTIMODAL_REGISTRY
    from vllm.multimodal.encoder_budget import MultiModalBudget

    folder, batched, model_len = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    config = EngineArgs(model=os.path.abspath(folder), load_format="dummy",
                        max_model_len=model_len, enforce_eager=True,
                        max_num_batched_tokens=batched).create_engine_config()
    budget = MultiModalBudget(config, MULTIMODAL_REGISTRY)
    modality = budget.get_modality_with_max_tokens()
    print(json.dumps({"max_num_batched_tokens": batched, "max_model_len": model_len,
                      "max_num_seqs": config.scheduler_config.max_num_seqs,
                      "tokens_per_item": dict(budget.mm_max_toks_per_item),
                      "modality": modality, "budget_tokens": budget.get_encoder_budget(),
                      "items": budget.mm_max_items_per_batch[modality]}), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    main()
    os._exit(0)
