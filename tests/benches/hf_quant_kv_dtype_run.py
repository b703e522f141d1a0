"""Ask vLLM 0.32 what it makes of each checkpoint folder under tests/data/hf_quant (config.json
without quantization_config, plus ModelOpt's hf_quant_config.json beside it), by running its own
start-up code on the folder, no GPU and no weights: EngineArgs.create_model_config (which calls
transformers_utils/config.py get_config, where hf_quant_config.json becomes
hf_config.quantization_config, and config/model.py _verify_quantization) and
utils/torch_utils.py resolve_kv_cache_dtype_string (the --kv-cache-dtype auto of
engine/arg_utils.py). Manual, in vLLM's venv:

    /root/vllm-cpu/bin/python tests/benches/hf_quant_kv_dtype_run.py > tests/data/hf_quant/vllm.json

Recorded per folder: the quantization method vLLM selects, its resolved KV-cache dtype string,
and the quant_algo / kv_cache_quant_algo its ModelOpt config class reads."""

import json
import sys
from pathlib import Path

from vllm.engine.arg_utils import EngineArgs
from vllm.utils.torch_utils import resolve_kv_cache_dtype_string

HF_QUANT = Path(__file__).resolve().parents[1] / "data" / "hf_quant"


def main() -> None:
    out = {}
    for folder in sorted(p for p in HF_QUANT.iterdir() if (p / "config.json").is_file()):
        args = EngineArgs(model=str(folder), skip_tokenizer_init=True, load_format="dummy",
                          kv_cache_dtype="auto", max_model_len=4096)
        try:
            mc = args.create_model_config()
        except Exception as exc:  # noqa: BLE001 - recorded as vLLM's own refusal
            out[folder.name] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            continue
        qc = getattr(mc.hf_config, "quantization_config", None) or {}
        inner = qc.get("quantization", {}) if isinstance(qc, dict) else {}
        out[folder.name] = {
            "quantization": mc.quantization,
            "quant_method": qc.get("quant_method") if isinstance(qc, dict) else None,
            "quant_algo": inner.get("quant_algo"),
            "kv_cache_quant_algo": inner.get("kv_cache_quant_algo"),
            "kv_cache_dtype_auto": resolve_kv_cache_dtype_string("auto", mc),
            "model_dtype": str(mc.dtype),
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
