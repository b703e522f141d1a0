"""TensorRT-LLM's KV budget (PyTorch backend) as kvplan predicts it vs real start-up logs and
measured max concurrency: the TensorRT-LLM sections of examples/engine-bench.md (printed by
`python -m tests.benches.engine_bench`; the logs and what is replayed: engine_bench's docstring).
"""

from __future__ import annotations

import json
import statistics
from typing import Any

from tests.benches import honest
from tests.benches.replay import (
    ENGINE_LOGS,
    GiB,
    device_args,
    fmt,
    model_arg,
    print_shaped,
    row,
    run_kvplan,
)

TRTLLM_LOGS = ENGINE_LOGS / "trtllm_budget_logs.json"
TRTLLM_POINTS = ENGINE_LOGS / "trtllm_capacity_points.json"


def load_trtllm_logs() -> list[dict[str, Any]]:
    return json.loads(TRTLLM_LOGS.read_text())


def trtllm_cli_args(log: dict[str, Any]) -> list[str]:
    args = ["estimate", model_arg(log), *device_args(log, "gpu_mem_gib_arg"), "--engine",
            "trtllm", "--tp",
            str(log["tp"]), "--weights-gib", str(log["weights_gib"]), "--engine-version",
            log["engine_version_arg"], "--kv-dtype", log["kv_dtype"],
            "--max-num-batched-tokens", str(log["max_num_tokens"]),
            "--context", str(log["max_seq_len"] or 4096), "--format", "json"]
    if log["fraction_set_by_user"]:
        args += ["--mem-fraction", str(log["free_gpu_memory_fraction"])]
    # The decode CUDA graphs the log's cuda_graph_config captured (TRT-LLM's defaults where the
    # log does not print it).
    if log.get("cuda_graph_max_batch_size"):
        args += ["--cuda-graph-max-batch-size", str(log["cuda_graph_max_batch_size"])]
    if log.get("cuda_graph_padding"):
        args.append("--cuda-graph-padding")
    if (log.get("ep") or 1) > 1:  # every EP log here runs EP = TP
        assert log["ep"] == log["tp"], log["id"]
        args.append("--enable-expert-parallel")
    return args


def trtllm_compare(log: dict[str, Any]) -> dict[str, Any]:
    out = run_kvplan(trtllm_cli_args(log), log["id"])
    predicted = out["kv_budget_bytes"] / GiB
    logged = log["available_kv_gib"]
    total = out["total_bytes"] / GiB
    logged_tokens = log["allocated_tokens"] or log["estimated_max_tokens"]
    # The temporary KV pool (C++-allocated, so outside torch, and added back to the budget):
    # printed, else available / fraction - total + peak.
    before = log.get("non_torch_before_gib")
    outside = None
    if before is not None:
        tmp = log["tmp_kv_gib"] if log["tmp_kv_gib"] is not None else (
            logged / out["mem_fraction"] - (log["total_gib"] or total)
            + log["peak_profiling_gib"])
        outside = before - tmp
    return {
        "predicted_non_torch_gib": out["reserve_breakdown"]["non_torch"]["bytes"] / GiB,
        "logged_outside_torch_gib": outside,
        "log": log, "predicted_gib": predicted, "logged_gib": logged,
        "error": predicted / logged - 1,
        "predicted_reserve_gib": out["reserve_bytes"] / GiB,
        # What the log leaves for the reserve: total - available / fraction - weights (with the
        # device total TRT-LLM printed, else kvplan's preset).
        "logged_reserve_gib": (log["total_gib"] or total) - logged / out["mem_fraction"]
        - log["weights_gib"],
        "predicted_tokens": out["token_capacity"], "logged_tokens": logged_tokens,
    }


def trtllm_rows() -> list[dict[str, Any]]:
    return [trtllm_compare(log) for log in load_trtllm_logs() if log["replay"]]


def trtllm_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    errors = [abs(r["error"]) for r in rows]
    return {"logs": len(rows), "median_error": statistics.median(errors),
            "worst_error": max(errors), "within_3": sum(e <= 0.03 for e in errors) / len(rows)}


def print_trtllm(rows: list[dict[str, Any]]) -> None:
    print("\n# TensorRT-LLM KV budget (PyTorch backend): kvplan vs start-up logs\n")
    print("Each row replays one log (tests/data/engine_logs/trtllm_budget_logs.json) through "
          "`kvplan estimate MODEL --engine trtllm --gpu G --tp T --weights-gib W "
          "--engine-version V --kv-dtype fp8 --max-num-batched-tokens N` (plus "
          "`--mem-fraction F` where the user set one, and the log's `--cuda-graph-max-batch-size "
          "B --cuda-graph-padding`, `--enable-expert-parallel` where EP = TP); *predicted* is "
          "`kv_budget_bytes`, "
          "*logged* TRT-LLM's \"Estimated max memory in KV cache\" (GiB). W is the logged "
          "\"Memory used after loading model weights (inside torch)\". *reserve*: kvplan's "
          "activation + non-torch vs what the log leaves (total - logged / fraction - W). "
          "*tokens*: kvplan's pool (num_blocks x 32) vs the logged \"Allocated ... for max "
          "tokens in paged KV cache (N)\" (the estimated max_tokens where that line is not in "
          "the log). *outside torch*: kvplan's non_torch part vs the log's memory outside torch "
          "before the estimation run less the temporary KV pool (\"Memory used after loading "
          "model weights (outside torch)\" / \"Model weights (non-torch)\"; `-` where not "
          "printed). `fit`: the log set a non-torch point. `*`: a field is inferred (see "
          "`inferred` in the JSON).\n")
    print("| model | TRT-LLM | GPU | TP | EP | fraction | max_num_tokens | reserve kvplan / log "
          "| outside torch kvplan / log | predicted | logged | error | tokens kvplan / log | fit "
          "| source |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|")
    for r in rows:
        log = r["log"]
        star = "*" if log["inferred"] else ""
        print(f"| {log['model']}{star} | {log['trtllm_version']} | {log['gpu']} | {log['tp']} "
              f"| {log['ep']} | {log['free_gpu_memory_fraction']} | {log['max_num_tokens']:,} | "
              f"{r['predicted_reserve_gib']:.2f} / {r['logged_reserve_gib']:.2f} | "
              f"{r['predicted_non_torch_gib']:.2f} / {fmt(r['logged_outside_torch_gib'])} | "
              f"{r['predicted_gib']:.2f} | {r['logged_gib']:.2f} | {r['error']:+.1%} | "
              f"{r['predicted_tokens']:,} / {r['logged_tokens']:,} | "
              f"{'fit' if log['fitted'] else ''} | {log['url'] or 'index id ' + log['file_id']} |")
    print()
    for name, subset in (("all", rows), ("not marked `fit`",
                                          [r for r in rows if not r["log"]["fitted"]])):
        s = trtllm_summary(subset)
        print(f"- {name}: {s['logs']} logs, median |error| {s['median_error']:.2%}, worst "
              f"{s['worst_error']:.2%}, {s['within_3']:.0%} within 3 %.")
    print_trtllm_split(rows)
    print("\nLogs kept as checks but not replayed (why: `why_not_replayed` in the JSON):\n")
    print("| model | TRT-LLM | backend | GPU | why not replayed | source |")
    print("|---|---|---|---|---|---|")
    for log in load_trtllm_logs():
        if not log["replay"]:
            print(f"| {log['model'] or '-'} | {log['trtllm_version'] or '-'} | {log['backend']} | "
                  f"{log['gpu']} | {log['why_not_replayed']} | "
                  f"{log['url'] or 'index id ' + log['file_id']} |")


def trtllm_ci_rows() -> list[dict[str, Any]]:
    """Logs with the outside-torch line but no replay: what they leave outside torch (before the
    run, less the temporary pool) and to the whole reserve, beside kvplan's non-torch part."""
    from kvplan.engines.trtllm.budget import trtllm_cuda_graph_batch_sizes, trtllm_non_torch
    from kvplan.sources.resolve import load_spec

    rows = []
    for log in load_trtllm_logs():
        if not log.get("non_torch_check"):
            continue
        spec_arg = model_arg(log)
        spec = load_spec(spec_arg)
        # The CI's CUDA-graph settings are not in the parsed line: TRT-LLM's defaults.
        part = trtllm_non_torch(log["tp"], log["engine_version_arg"], moe=spec.moe is not None,
                                ep=log["ep"] or 1, layers=spec.num_hidden_layers,
                                cuda_graph_batch_sizes=trtllm_cuda_graph_batch_sizes(None, False))
        rows.append({"log": log, "predicted_non_torch_gib": part.total / GiB,
                     "logged_outside_torch_gib": log["non_torch_before_gib"] - log["tmp_kv_gib"],
                     "logged_reserve_gib": log["peak_profiling_gib"] - log["weights_gib"]
                     - log["tmp_kv_gib"]})
    return rows


def load_trtllm_points() -> list[dict[str, Any]]:
    return json.loads(TRTLLM_POINTS.read_text())


def trtllm_point_args(point: dict[str, Any]) -> list[str]:
    return ["estimate", model_arg(point), "--gpu", point["gpu"], "--engine", "trtllm", "--tp",
            str(point["tp"]), "--mem-fraction", str(point["free_gpu_memory_fraction"]),
            "--max-num-batched-tokens", str(point["max_num_tokens"]), "--context",
            str(point["max_seq_len"]), "--kv-dtype", point["kv_dtype"], "--engine-version",
            point["engine_version_arg"], "--format", "json"]


def trtllm_point_compare(point: dict[str, Any]) -> dict[str, Any]:
    out = run_kvplan(trtllm_point_args(point), point["id"])
    logged = point["bench_max_concurrency"]
    predicted = out["max_requests"]
    # The reserve the measured concurrency implies, at the middle of its one-request interval:
    # total - (concurrency + 0.5) x request bytes / fraction - kvplan's weights.
    request = out["blocks_per_request"] * point["tokens_per_block"] * out["bytes_per_token"]
    implied = (out["total_bytes"] - (logged + 0.5) * request / out["mem_fraction"]
               - out["weights_bytes"]) / GiB
    return {"log": point, "predicted": predicted, "logged": logged,
            "error": predicted / logged - 1, "within": abs(predicted / logged - 1) <= 0.03
            or abs(predicted - logged) <= 1,
            "weights_gib": out["weights_bytes"] / GiB,
            "predicted_reserve_gib": out["reserve_bytes"] / GiB,
            "implied_reserve_gib": implied,
            "half_request_gib": request / 2 / out["mem_fraction"] / GiB}


def trtllm_point_rows() -> list[dict[str, Any]]:
    return [trtllm_point_compare(p) for p in load_trtllm_points()]


def trtllm_point_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    errors = [abs(r["error"]) for r in rows]
    return {"points": len(rows), "median_error": statistics.median(errors),
            "worst_error": max(errors), "within_3": sum(e <= 0.03 for e in errors) / len(rows),
            "within": sum(r["within"] for r in rows) / len(rows)}


def print_trtllm_points(rows: list[dict[str, Any]]) -> None:
    print("\n# TensorRT-LLM, dense models at TP 1 / 2 / 4: kvplan vs measured max concurrency\n")
    print("Each row is one measurement of NVIDIA's aiconfigurator (tests/data/engine_logs/"
          "trtllm_capacity_points.json, with its URL): the most concurrent requests TRT-LLM holds "
          "with `--max_seq_len ISL+OSL+1000 --max_num_tokens 2xISL --free_gpu_memory_fraction F`, "
          "bf16 KV. kvplan: `kvplan estimate MODEL --engine trtllm --gpu G --tp T --mem-fraction F "
          "--max-num-batched-tokens 2xISL --context ISL+OSL+1000 --kv-dtype bf16` with its own "
          "weights (no logged figure); *predicted* is `max_requests`. *reserve*: kvplan's vs what "
          "the measured concurrency implies (total - (n + 0.5) x request / F - weights; +- half "
          "a request). The TRT-LLM version is not stated (aiconfigurator PR #652, March 2026: "
          "replayed as 1.3). `fit`: the point set the NCCL constant.\n")
    print("| model | GPU | TP | ISL / OSL | fraction | reserve kvplan / implied | predicted | "
          "measured | error | within | fit |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|")
    replayed = [r for r in rows if r["log"]["replay"]]
    for r in replayed:
        p = r["log"]
        print(f"| {p['model']} | {p['gpu']} | {p['tp']} | {p['isl']} / {p['osl']} | "
              f"{p['free_gpu_memory_fraction']} | {r['predicted_reserve_gib']:.2f} / "
              f"{r['implied_reserve_gib']:.2f} +- {r['half_request_gib']:.2f} | "
              f"{r['predicted']:,} | {r['logged']:,} | {r['error']:+.1%} | "
              f"{'yes' if r['within'] else 'no'} | {'fit' if p['fitted'] else ''} |")
    print()
    split = honest.split((row(r["log"], ep=1) for r in replayed), "engine")
    held = set(split.held_out)
    for name, subset in (("all H100 points", replayed),
                         ("not marked `fit`",
                          [r for r in replayed if not r["log"]["fitted"]]),
                         ("TP 2 and 4, not marked `fit`", [r for r in replayed if r["log"]["tp"] > 1
                                                           and not r["log"]["fitted"]]),
                         (f"{honest.HELD_OUT}, {len(split.fitted)} points fitted, "
                          f"{len(split.same_config)} of their configuration",
                          [r for r in replayed if r["log"]["id"] in held]),
                         ("TP 2 and 4, held out",
                          [r for r in replayed if r["log"]["tp"] > 1 and r["log"]["id"] in held])):
        s = trtllm_point_summary(subset)
        print(f"- {name}: {s['points']} points, median |error| {s['median_error']:.2%}, worst "
              f"{s['worst_error']:.2%}, {s['within_3']:.0%} within 3 %, {s['within']:.0%} within "
              "3 % or one request.")
    print(f"- {honest.prospective_line(split, 'points')}.")
    gb300 = [r for r in rows if not r["log"]["replay"]]
    s = trtllm_point_summary(gb300)
    print("\nGB300 points (kept apart from the splits above: GB300's device total was in no "
          "public log when they were added). At the total kvplan's GB300 preset holds since "
          "(276.50 GiB, read from public torchtitan logs on GB300, not from these points; "
          "as they were known to over-predict at 288 GiB, they are recorded as shaped by it, "
          "tests/benches/fitted_rows.py), "
          f"*predicted* against *measured* over the {s['points']} points: median |error| "
          f"{s['median_error']:.2%}, worst {s['worst_error']:.2%}, {s['within_3']:.0%} within "
          "3 %. The reserve's growth from TP 1, where the total cancels: implied (same "
          "ISL / OSL / fraction) vs kvplan's.\n")
    print("| model | TP | ISL / OSL | fraction | growth from TP 1, kvplan / implied |")
    print("|---|--:|--:|--:|--:|")
    gb = {(r["log"]["model"], r["log"]["tp"], r["log"]["isl"], r["log"]["osl"],
           r["log"]["free_gpu_memory_fraction"]): r for r in rows if not r["log"]["replay"]}
    for (model, tp, isl, osl, frac), r in gb.items():
        base = gb.get((model, 1, isl, osl, frac))
        if tp == 1 or base is None:
            continue
        print(f"| {model} | {tp} | {isl} / {osl} | {frac} | "
              f"{r['predicted_reserve_gib'] - base['predicted_reserve_gib']:+.2f} / "
              f"{r['implied_reserve_gib'] - base['implied_reserve_gib']:+.2f} +- "
              f"{r['half_request_gib'] + base['half_request_gib']:.2f} |")


def print_trtllm_ci(rows: list[dict[str, Any]]) -> None:
    print("\nLogs of NVIDIA's GB200 CI (not replayed: the run's max_num_tokens is not in them): "
          "the memory outside torch before the estimation run less the temporary pool, and all "
          "the log leaves to the reserve (peak - weights - temporary KV), beside kvplan's "
          "non-torch part (newest version).\n")
    print("| model | GPU | TP | EP | outside torch kvplan / log | reserve (log) | source |")
    print("|---|---|--:|--:|--:|--:|---|")
    for r in rows:
        log = r["log"]
        print(f"| {log['model']} | {log['gpu']} | {log['tp']} | {log['ep']} | "
              f"{r['predicted_non_torch_gib']:.2f} / {r['logged_outside_torch_gib']:.2f} | "
              f"{r['logged_reserve_gib']:.2f} | {log['url'] or 'index id ' + log['file_id']} |")


def print_trtllm_split(rows: list[dict[str, Any]]) -> None:
    split = honest.split((row(r["log"], ep=r["log"]["ep"]) for r in rows), "engine")
    held = set(split.held_out)
    unshaped = set(split.unshaped)
    for name, ids in ((f"{honest.HELD_OUT}; {len(split.fitted)} logs fitted, "
                       f"{len(split.same_config)} of their configuration", held),
                      ("held out, less the logs a rule was later written for", unshaped)):
        subset = [r for r in rows if r["log"]["id"] in ids]
        s = trtllm_summary(subset)
        print(f"- {name}: {s['logs']} logs, median |error| {s['median_error']:.2%}, worst "
              f"{s['worst_error']:.2%}, {s['within_3']:.0%} within 3 %.")
    mine = [r for r in rows if r["log"]["id"] in set(split.prospective)]
    print(f"- {honest.prospective_line(split, 'logs')}"
          + (f" ({_figures(mine)})." if mine else "."))
    for version in sorted({r["log"]["trtllm_version"] for r in mine}):
        subset = [r for r in mine if r["log"]["trtllm_version"] == version]
        print(f"  - TensorRT-LLM {version}: {_figures(subset)} "
              f"({'; '.join(r['log']['id'] for r in subset)}).")
    if mine:
        print(f"\n{PROSPECTIVE_FINDING}")
    print_shaped(split)


def _figures(subset: list[dict[str, Any]]) -> str:
    s = trtllm_summary(subset)
    within = sum(abs(r["error"]) <= 0.03 for r in subset)
    return f"median |error| {s['median_error']:.2%}, {within} of {s['logs']} within 3 %"


# Read after the startsgl log (committed in cd15e16 before any prediction for it) was first
# evaluated; no rule or constant was changed for it.
PROSPECTIVE_FINDING = (
    "The prospective miss, read after the first evaluation (no rule changed). "
    "lm7-smollm2-135m-instruct-rtx4070super-1.2.1 (-5.5 %, -0.50 GiB): the excerpt prints "
    "neither the device total nor the profiling lines, so the row replays on an inferred "
    "11.99 GiB (the card's nvidia-smi total; TRT-LLM takes cudaMemGetInfo's, which under "
    "WSL2 can differ) with the checkpoint's 0.25 GiB as weights. What the log leaves for the "
    "reserve (total - 9.06 / 0.9 - weights) is 1.67 GiB against kvplan's 2.23 (activation + "
    "non-torch, the latter the B200-fitted TP-1 point of kvplan.engines.trtllm.budget; the "
    "TinyLlama RTX 6000 Ada log measured 1.11 GiB outside torch). Whatever the total, "
    "kvplan's reserve is too large: to give 9.06 GiB its replay would need a 12.55 GiB device, "
    "more than the 12 GiB card. The likely cause is the "
    "non-torch part on a small consumer card (CUDA context, no NCCL at TP 1) read off "
    "tensorrt_llm/_torch/pyexecutor/_util.py's estimate (total - peak + temporary KV) x "
    "fraction, which charges whatever the profile saw outside torch.")
