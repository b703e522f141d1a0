# ruff: noqa: E501  (the guide's Markdown table rows are long lines)
"""The guide to KV offload tiers and prefix reuse (issue 29), with every table printed by the
commands themselves and the public logs replayed.

Run:  python -m tests.benches.offload_guide > examples/offload.md
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.engines.sglang.offload import hicache_host_tokens, hicache_log

LOGS = Path(__file__).resolve().parent.parent / "data" / "engine_logs" / "offload_logs.json"

INTRO = """# KV beyond HBM: offload tiers and prefix reuse

`kvplan estimate` and `kvplan plan` (and `kvplan report`) size the second pool each engine keeps
beside HBM, in the engine's own unit, with each engine's own flags:

| engine | flags | the tier, per GPU | unit | its log |
|---|---|---|---|---|
| vLLM | `--kv-offloading-size GIB --kv-offloading-backend native` | `GiB x 2^30 // round_up(block slot x TP x PP, 4 KiB)` chunks of one GPU block; the GiB is over ALL ranks (one copy for MLA at TP > 1) | GPU blocks (16 tokens) | `Created mmap file /dev/shm/vllm_offload_<engine>.mmap (X GB)` |
| vLLM + LMCache | `--kv-offloading-backend lmcache` (`--lmcache-cpu-gib`, `--lmcache-disk-gib`, `--lmcache-chunk-size`) | `int(GiB x 1024^3) // (256 x bytes per token)` chunks per rank; LMCacheConnectorV1 gives each rank `size / (TP x PP)` | chunks (256 tokens) | its config (`'max_local_cpu_size': 5.0`) |
| SGLang | `--enable-hierarchical-cache --hicache-ratio R` or `--hicache-size GB` | `(device tokens x R, or GB x 1e9 // cell) // page + 1` pages per rank | pages | `Allocating X GB host memory for hierarchical KV cache.` |
| TensorRT-LLM | `--host-cache-size GIB` (`kv_cache_config.host_cache_size`) | `int(bytes / bytes per token / tokens per block)` | blocks (32 tokens) | `Number of blocks in KV cache secondary pool: N` |

The rules, with the engine file each follows: `kvplan/engines/vllm/offload.py`,
`kvplan/engines/sglang/offload.py`, `kvplan/engines/trtllm/offload.py`. No engine takes its tier
out of the GPU's KV budget: the HBM capacity is the same with or without one (a hypothesis
property in `tests/test_offload.py`). The host memory the tiers take is summed over the GPUs of a
node and checked against the node's DRAM: the GPU presets' reference nodes
(`kvplan/hardware/hosts.json`: DGX A100 1-2 TiB, DGX H100 / H200 / B200 2 TiB, a GB200 / GB300
NVL72 compute tray 960 GiB for 4 GPUs), or `--host-mem-gib`. A plan whose tiers do not fit the
node is DOES NOT FIT (the engines refuse to pin it).

Per request: with `--prefix-hit-rate H` (and `--shared-prefix-tokens S`, an alias of
`--shared-prefix`) the prompt splits into the shared prefix's full blocks (resident in HBM, held
once: max concurrency counts them once), the rest of the block-aligned hit (reloaded from the
tiers over the GPU's host link: PCIe Gen4 31.5 GB/s, Gen5 63.0 GB/s, NVLink-C2C 225 GB/s per
GPU), and the tokens computed. `reload_ms` is that reload, `recompute_ms` the time model's prefill
of the same tokens, and `reload_wins_above_tokens` the shortest whole-block prefix from which
reloading is faster for every longer one (a disk tier: give `--disk-read-gbps`). The time model's
prefill of a short prompt on its own is bound by reading the weights, so on these GPUs a reload
wins from the first block. Within a prompt the rest is prefilled anyway and the weights are read
either way, so the table also gives the prefill a hit saves in the prompt (`prefill_saved_ms`:
the time model's step for the whole prompt less its step for the part after the hit) and
`reload_wins_in_prompt_above_tokens` against that; on the GPUs and models tried here a reload
still wins from the first block (even Llama-2-7B's 512 KiB a token over an L4's PCIe Gen4),
so the figure matters for a slow disk tier.
"""

LIMITS = """## What kvplan does not model

- vLLM's offloading with `--pp` or `--dp-attention`, LMCache's with a hybrid model (several
  KV-cache groups); SGLang's HiCache over its sliding-window, recurrent-state or speculative
  draft pools. Each is refused in one line.
- vLLM 0.32's `lmcache` backend starts `LMCacheMPConnector` and leaves the size to the LMCache
  server: give `--lmcache-cpu-gib` (its L1 size per rank); without it kvplan uses the older
  LMCacheConnectorV1 mapping (`--kv-offloading-size / (TP x PP)` per rank).
- Storage tiers (SGLang's `--hicache-storage-backend`, LMCache's remote backends) are bounded by
  the backend, not the engine: shown, not sized. SGLang's `file` backend (HiCacheFile: one file
  per page in `SGLANG_HICACHE_FILE_BACKEND_STORAGE_DIR`, no size limit) is the rank's own disk:
  a disk tier whose reload runs at `--disk-read-gbps`, like LMCache's `--lmcache-disk-gib`.
- The reload time is bytes over the link's signalling rate, no fixed latency and no measured
  efficiency (none was measured).
- `kvplan plan` appends vLLM's and SGLang's tier flags to its launch command; TensorRT-LLM's
  `host_cache_size` is an extra-options key, listed under the tiers for you to add.
"""


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    if result.exit_code not in (0, 3):
        raise SystemExit(f"kvplan {' '.join(args)} failed: {result.output}")
    return result.stdout


def offload_table(*args: str) -> str:
    """The offload table of `kvplan estimate ...` (the part after the capacity table)."""
    out = cli("estimate", *args)
    return out[out.index("KV offload tiers"):].rstrip()


def vllm_log_tier(log: dict) -> dict:
    """kvplan's vLLM tier for a logged start-up (`kvplan estimate <kvplan_args> --format json`)."""
    out = json.loads(cli("estimate", *log["kvplan_args"], "--format", "json"))
    (tier,) = out["offload"]["tiers"]
    return tier


def _gb_suffix(line: str) -> str:
    """The `(X GB)` that ends vLLM's 'Created mmap file' line."""
    return line[line.rindex("("):]


def logs_section() -> list[str]:
    logs = json.loads(LOGS.read_text())
    lines = ["## Public logs (held out)", "",
             "| engine | model, flags | logged | kvplan | source |", "|---|---|---|---|---|"]
    matched = {"sglang": 0, "vllm": 0}
    found = {"sglang": 0, "vllm": 0}
    for log in logs["logs"]:
        found[log["engine"]] += 1
        if log.get("matched") is False:
            lines.append(f"| {log['engine']} | {log['model']} | `{log['line']}` | not matchable: "
                         f"{log['why_not']} | {log.get('where', '')} |")
            continue
        source = log["url"] or log["where"]
        if log["engine"] == "vllm":
            tier = vllm_log_tier(log)
            ok = _gb_suffix(tier["log"]) == _gb_suffix(log["line"])
            matched["vllm"] += ok
            lines.append(f"| vllm | {log['model']}: TP {log['tp']}, vLLM {log['engine_version']}, "
                         f"`kvplan estimate {' '.join(log['kvplan_args'])}` | `{log['line']}` | "
                         f"{tier['offload_blocks']:,} blocks ({tier['offload_tokens']:,} tokens), "
                         f"{tier['host_bytes_per_rank']:,} B: `{_gb_suffix(tier['log'])}` "
                         f"{'(equal)' if ok else '(DIFFERS)'} | {source} |")
            continue
        if log["model"] == "llama-3.1-8b":
            cell = 32 * 2 * 128 * 2 * 2  # 32 layers x 2 KV heads a rank (8 / TP 4) x 128 x K,V x 2 B
            tokens = hicache_host_tokens(1, cell, 1, size_gb=log["hicache_size_gb"])
            flags = f"TP {log['tp']}, --hicache-size {log['hicache_size_gb']}"
        else:
            cell = 28 * 8 * 128 * 2 * 2
            tokens = hicache_host_tokens(log["device_tokens"], cell, 1, ratio=log["hicache_ratio"])
            flags = f"ratio {log['hicache_ratio']}, device pool {log['device_tokens']:,}"
        predicted = hicache_log(tokens * cell)
        ok = log["line"].endswith(predicted)
        matched["sglang"] += ok
        lines.append(f"| {log['engine']} | {log['model']}: {flags} | `{log['line']}` | "
                     f"{tokens:,} tokens: `{predicted}` {'(equal)' if ok else '(DIFFERS)'} | "
                     f"{source} |")
    lines += ["", f"{matched['sglang']} of the {found['sglang']} HiCache lines found match to "
              "the print's rounding (the others lack their device pool, model or config: the "
              "table says which). "
              f"{matched['vllm']} of the {found['vllm']} vLLM native 'Created mmap file' lines "
              "found match to the print's rounding (GB = bytes / 1e9, 2 decimals: "
              "vllm/v1/kv_offload/cpu/shared_offload_region.py); the others are DeepSeek-V4's "
              "(whose tier kvplan refuses), hybrid Gated DeltaNet models' whose config or byte "
              "count is not given, or not named (the table says which). That print "
              "rounds to 10 MB, so it checks the GiB-over-all-ranks rule, not the chunk "
              "rounding (a chunk is a few MB). LMCache prints its configured size (not a chunk "
              "count), and the TensorRT-LLM logs found print a secondary pool of 0 "
              "(host_cache_size unset, which the rule also gives): no log of those two sizes a "
              "tier kvplan could compare, so their rules rest on the engines' source (golden "
              "tests in `tests/test_offload.py`). No vLLM tier could be measured on this project's "
              "machine: vLLM 0.32.0's CPU build refuses `--kv-offloading-size` at start-up "
              "(`Exception: CPU Offloading is currently only supported on CUDA-alike and XPU "
              "GPUs`, vllm/v1/kv_offload/cpu/spec.py get_worker, tried 2026-12-03 on the "
              "qwen3-8b shrink); vLLM's own CPUOffloadingSpec sizing is run directly by "
              "tests/oracle/vllm_offload_check.py.", ""]
    if logs.get("searched"):
        lines += [f"Searched: {logs['searched']}", ""]
    return lines


def main() -> None:
    out = [INTRO]
    out += ["## vLLM native: 64 GiB on one H100", "",
            "`kvplan estimate llama-3.1-8b --gpu H100 -c 8192 --kv-offloading-size 64 "
            "--prefix-hit-rate 0.5 --shared-prefix-tokens 1000`", "", "```",
            offload_table("llama-3.1-8b", "--gpu", "H100", "-c", "8192", "--kv-offloading-size",
                          "64", "--prefix-hit-rate", "0.5", "--shared-prefix-tokens", "1000"),
            "```", ""]
    out += ["## vLLM + LMCache, CPU and local disk, MLA", "",
            "`kvplan estimate deepseek-v2-lite --gpu H100 --kv-offloading-size 10 "
            "--kv-offloading-backend lmcache --lmcache-disk-gib 100`", "", "```",
            offload_table("deepseek-v2-lite", "--gpu", "H100", "--kv-offloading-size", "10",
                          "--kv-offloading-backend", "lmcache", "--lmcache-disk-gib", "100"),
            "```", ""]
    out += ["## SGLang HiCache at TP 4", "",
            "`kvplan estimate llama-3.1-70b --engine sglang --gpu H100 --tp 4 "
            "--enable-hierarchical-cache --hicache-ratio 3`", "", "```",
            offload_table("llama-3.1-70b", "--engine", "sglang", "--gpu", "H100", "--tp", "4",
                          "--enable-hierarchical-cache", "--hicache-ratio", "3"),
            "```", ""]
    out += ["## TensorRT-LLM host cache", "",
            "`kvplan estimate qwen3-8b --engine trtllm --gpu L40S --host-cache-size 100 "
            "--host-mem-gib 512`", "", "```",
            offload_table("qwen3-8b", "--engine", "trtllm", "--gpu", "L40S", "--host-cache-size",
                          "100", "--host-mem-gib", "512"),
            "```", ""]
    plan = cli("plan", "llama-3.1-70b", "-n", "32", "-c", "32k", "--gpu", "H100",
               "--kv-offloading-size", "5000")
    lines = plan.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("DOES NOT FIT"))
    verdict = "\n".join(lines[start:start + 2])
    out += ["## The plan verdict", "",
            "`kvplan plan llama-3.1-70b -n 32 -c 32k --gpu H100 --kv-offloading-size 5000` "
            "(5,000 GiB over the 8 GPUs of a 2 TiB DGX H100) exits 3:", "", "```", verdict,
            "```", "", "With `--kv-offloading-size 500` the plan FITS and its reason names the "
            "tier (`beyond HBM: 1,638,400 tokens in vLLM native CPU`), its launch command ends "
            "with `--kv-offloading-size 500 --kv-offloading-backend native`, and `kvplan "
            "report` draws the host tier under the GPU's memory bar.", ""]
    out += logs_section()
    out.append(LIMITS)
    print("\n".join(out).rstrip())


if __name__ == "__main__":
    main()
