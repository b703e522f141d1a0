"""vLLM's logged KV token count vs kvplan's, on runs whose start-up log is public only as that
count (tests/data/engine_logs/vllm_kv_token_runs.json: inference-sim's vLLM 0.15.1 H100 runs,
`total_kv_blocks` = the logged "GPU KV cache size" // 16).

No "Model loading took" line is public for these runs, so unlike the engine bench's vLLM table
the weights are not pinned: each run is replayed with kvplan's own weights, as a user would run
`kvplan estimate CONFIG --gpu H100 --tp T --engine-version 0.15.1 --max-num-seqs 128
--max-num-batched-tokens M --context 4096 --mem-fraction 0.9`; the miss is kvplan's
`reported_kv_cache_tokens` less 16 x the logged blocks, in bytes at kvplan's bytes per token, and
*within* is the engine bench's max(2 %, 0.25 GiB) of the logged KV.

Printed by tests/benches/engine_bench.py (examples/engine-bench.md). The honest split
(tests/benches/honest.py) holds: no fitted constant names these runs; the Llama-4-Scout run shaped
the Llama-4 vision and wrapper-prefix rules (SHAPED_BY); the dense runs were looked at before
that rule change (`seen_before_rule_change`: they showed vLLM 0.15.1's TP 2 non-torch memory is
the pre-0.19 figure, and no rule was written from them), so they are held out but not counted
as prospective.
"""

from __future__ import annotations

import json
import statistics
from typing import Any

from tests.benches import honest
from tests.benches.replay import ENGINE_LOGS, TOLERANCE_GIB, GiB, model_arg, row, run_kvplan

RUNS = ENGINE_LOGS / "vllm_kv_token_runs.json"
BLOCK_TOKENS = 16  # inference-sim's BLOCK_SIZE: total_kv_blocks = logged tokens // 16


def load_runs() -> list[dict[str, Any]]:
    return json.loads(RUNS.read_text())


def cli_args(run: dict[str, Any]) -> list[str]:
    return ["estimate", model_arg(run), "--gpu", run["gpu"], "--tp", str(run["tp"]),
            "--engine-version", run["vllm_version"], "--max-num-seqs", str(run["max_num_seqs"]),
            "--max-num-batched-tokens", str(run["max_num_batched_tokens"]),
            "--context", str(run["max_model_len"]), "--mem-fraction",
            str(run["gpu_memory_utilization"]), "--format", "json"]


def compare(run: dict[str, Any]) -> dict[str, Any]:
    out = run_kvplan(cli_args(run), run["id"])
    per_token = out["per_gpu_bytes_per_token"]
    predicted = out["reported_kv_cache_tokens"]
    logged = run["logged_kv_blocks"] * BLOCK_TOKENS
    miss = (predicted - logged) * per_token
    logged_bytes = logged * per_token
    parts = out["reserve_breakdown"]
    return {"run": run, "predicted_tokens": predicted, "logged_tokens": logged,
            "error": predicted / logged - 1, "miss_gib": miss / GiB,
            "within": abs(miss) <= max(0.02 * logged_bytes, TOLERANCE_GIB * GiB),
            "weights_gib": out["weights_bytes"] / GiB,
            "reserve_gib": sum(p["bytes"] for p in parts.values()) / GiB}


def rows() -> list[dict[str, Any]]:
    return [compare(run) for run in load_runs()]


def split(compared: list[dict[str, Any]]) -> honest.Split:
    return honest.split((row(r["run"], ep=r["run"]["ep"]) for r in compared), "engine")


def _line(subset: list[dict[str, Any]]) -> str:
    if not subset:
        return "0 runs"
    within = sum(r["within"] for r in subset)
    median = statistics.median(abs(r["error"]) for r in subset)
    return (f"{len(subset)} runs, median |error| {median:.2%}, {within} of {len(subset)} within "
            f"max(2 %, {TOLERANCE_GIB} GiB)")


def print_runs(compared: list[dict[str, Any]]) -> None:
    print("\n## vLLM KV tokens with kvplan's own weights (inference-sim's vLLM 0.15.1 runs)\n")
    print("Each row replays one run of tests/data/engine_logs/vllm_kv_token_runs.json (vLLM "
          "0.15.1, H100 80GB, max_model_len 4,096, max_num_seqs 128, gpu_memory_utilization "
          "0.9) through `kvplan estimate CONFIG --gpu H100 --tp T --engine-version 0.15.1 "
          "--max-num-seqs 128 --max-num-batched-tokens M --context 4096 --mem-fraction 0.9`; "
          "*logged* is 16 x inference-sim's `total_kv_blocks` (vLLM's \"GPU KV cache size\" "
          "// 16). No weights line is public: kvplan's weights are in the prediction "
          "(tests/benches/kv_token_runs.py).\n")
    print("| model | TP | batched tokens | kvplan weights / reserve (GiB) | predicted tokens "
          "| logged tokens | error | miss (GiB) | within | source |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|---|---|")
    for r in compared:
        run = r["run"]
        print(f"| {run['model']} | {run['tp']} | {run['max_num_batched_tokens']:,} | "
              f"{r['weights_gib']:.2f} / {r['reserve_gib']:.2f} | {r['predicted_tokens']:,} | "
              f"{r['logged_tokens']:,} | {r['error']:+.1%} | {r['miss_gib']:+.2f} | "
              f"{'yes' if r['within'] else 'no'} | {run['url']} ({run['id']}) |")
    s = split(compared)
    held = set(s.held_out)
    seen = set(s.seen_before)
    unshaped = set(s.unshaped)
    prospective = set(s.prospective)
    print()
    print(f"- {honest.HELD_OUT}: {_line([r for r in compared if r['run']['id'] in held])}.")
    print("- held out, less the runs a rule was later written for: "
          f"{_line([r for r in compared if r['run']['id'] in unshaped])}.")
    print(f"- prospective (held out, added after the last rule change "
          f"{s.rule_change.commit[:7]} and not looked at before it): "
          f"{_line([r for r in compared if r['run']['id'] in prospective])}; "
          f"{len(seen)} held-out runs were looked at before that change "
          "(`seen_before_rule_change`).")
    lines = honest.shaped_lines(s)
    if lines:
        print("\nHeld-out runs a rule was written for (tests/benches/fitted_rows.py SHAPED_BY):\n")
        print("\n".join(lines))
