"""Run under vLLM's own python (VLLM_ORACLE_PYTHON), like ../shared/tools/vllm-oracle, but say
whether vLLM *finished* starting: the oracle reads "CPU KV cache size: N tokens", which vLLM
logs before the worker picks its kernel block (v1/worker/utils.py prepare_kernel_block_sizes)
and can still refuse, e.g. ``ValueError: No common block size for 16 (CPU_ATTN:
[MultipleOf(32)])``. Prints one JSON object: started (bool), the logged tokens and concurrency,
the block and kernel blocks vLLM ran, the backend lines and the error, if any.

    VLLM_CPU_KVCACHE_SPACE=1 $VLLM_ORACLE_PYTHON \\
        tests/oracle/vllm_block_check.py '{"model": DIR, "block_size": 16, "max_model_len": 8192}'

(The other LLM(...) settings are vllm-oracle's: dummy weights, no tokenizer, eager, 2048
batched tokens.)"""

import json
import os
import re
import subprocess
import sys

PATTERNS = {"kv_cache_tokens": r"KV cache size: ([\d,]+) tokens",
            "max_concurrency": r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x"}


def child(settings: str) -> None:
    import vllm.v1.worker.gpu_model_runner as runner

    prepare = runner.prepare_kernel_block_sizes

    def spy(config, groups):  # the groups' blocks as the worker gets them, then its kernels
        seen = {"blocks": [g.kv_cache_spec.block_size for g in config.kv_cache_groups],
                "backends": sorted({a.backend.get_name() for gs in groups for a in gs})}
        print("BLOCK-CHECK-SEEN " + json.dumps(seen), flush=True)
        kernels = prepare(config, groups)
        print("BLOCK-CHECK-KERNELS " + json.dumps(kernels), flush=True)
        return kernels

    runner.prepare_kernel_block_sizes = spy
    from vllm import LLM

    LLM(**json.loads(settings))
    print("BLOCK-CHECK-STARTED", flush=True)


def main() -> None:
    kw = {"load_format": "dummy", "skip_tokenizer_init": True, "enforce_eager": True,
          "max_num_batched_tokens": 2048, **json.loads(sys.argv[1])}
    env = dict(os.environ, VLLM_ENABLE_V1_MULTIPROCESSING="0")
    run = subprocess.run([sys.executable, __file__, "--child", json.dumps(kw)], env=env,
                         capture_output=True, text=True, timeout=600, check=False)
    log = run.stdout + run.stderr
    out: dict = {"settings": kw, "started": "BLOCK-CHECK-STARTED" in log}
    for key, pat in PATTERNS.items():
        if m := re.findall(pat, log):
            out[key] = float(m[-1]) if "." in m[-1] else int(m[-1].replace(",", ""))
    if m := re.findall(r"BLOCK-CHECK-SEEN (.*)", log):
        out.update(json.loads(m[-1]))
    if m := re.findall(r"BLOCK-CHECK-KERNELS (.*)", log):
        out["kernel_blocks"] = json.loads(m[-1])
    if not out["started"]:
        errors = [line for line in log.splitlines() if "Error" in line]
        out["error"] = (errors or ["no output"])[-1].strip()[-300:]
    out["log_lines"] = [line.strip()[-200:] for line in log.splitlines() if re.search(
        r"block_size|block size|backend\.|KV cache size|overriding", line)][-8:]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(sys.argv[2])
        os._exit(0)
    main()
