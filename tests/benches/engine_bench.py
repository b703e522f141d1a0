"""vLLM's KV budget, SGLang's KV token count and TensorRT-LLM's KV budget as kvplan predicts them
vs real start-up logs.

Run: python -m tests.benches.engine_bench > examples/engine-bench.md

Each log (tests/data/engine_logs/vllm_startup_logs.json, with its URL and the quoted lines) is
replayed through the CLI itself, given only what a user knows: the model, the GPU name, the
memory fraction, TP/PP, the engine version, the batch limits the user set, and the weights pinned
to the logged "Model loading took X GiB" (`--weights-gib`), so that only the engine's reserve is
judged. Logs marked `fitted` were used to derive the sampler rule of kvplan.engines.vllm.budget.
Runs whose log is public only as its KV token count (tests/data/engine_logs/vllm_kv_token_runs.json)
are replayed with kvplan's own weights in a table of their own (tests/benches/kv_token_runs.py).
Each table's "held out" line is the honest split of tests/benches/honest.py: logs in no fitted
constant's `fitted_on` (its `Fitted` record, collected by tests/benches/fitted_rows.py) and of no
fitted log's model, GPU, TP and EP; beside it the prospective logs (added after the last rule
change) and the rules written for held-out logs already in the bench ("shaped").

SGLang (tests/data/engine_logs/sglang_startup_logs.json): each log is replayed with only the
model, the GPU name, the fraction where the user set one, TP, the engine version and the weights
pinned to the logged "Load weight end ... mem usage"; kvplan's token count is compared with
"max_total_num_tokens" / the KV line's "#tokens", and the two rule outputs behind it with the log:
the memory in use before the weights load (the device total less "Load weight begin. avail mem";
SGLang's "GB" are GiB) and the default mem_fraction_static where the user set none. Logs of the
hybrid families also name their separate pool ("Mamba Cache is allocated. max_mamba_cache_size:
N", "full_layer_tokens / swa_layer_tokens") and SGLang's max_running_requests, which are put beside
kvplan's (kvplan.engines.sglang.pools).

TensorRT-LLM (tests/data/engine_logs/trtllm_budget_logs.json, PyTorch backend): each log is
replayed with the model, the GPU name, the fraction where the user set one, TP, the engine
version, the user's max_num_tokens and the weights pinned to the logged "Memory used after
loading model weights (inside torch)"; kvplan's `kv_budget_bytes` against "Estimated max memory
in KV cache" and its tokens against the pool's "Allocated X GiB for max tokens in paged KV cache
(N)" (the estimated max_tokens where that line is missing). Logs marked `fitted` set the
non-torch constants of kvplan.engines.trtllm.budget. Dense models at TP 1 / 2 / 4
(tests/data/engine_logs/trtllm_capacity_points.json: the max concurrency NVIDIA's aiconfigurator
measured with TRT-LLM for Llama-3.1-8B and Qwen3-32B-FP8 on H100 SXM) are replayed with the
benchmark's settings and kvplan's own weights, its max_requests (whole requests of max_seq_len
tokens in blocks of 32) against the measured one. Logs of NVIDIA's GB200 CI that lack the run's
max_num_tokens are compared on the non-torch part alone.
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

from typer.testing import CliRunner

from kvplan._util.versions import version_key
from tests.benches import honest, kv_token_runs, trtllm_bench
from tests.benches.replay import (
    ROOT,
    TOLERANCE_GIB,
    GiB,
    device_args,
    fmt,
    model_arg,
    print_shaped,
    row,
    run_kvplan,
)

LOGS = ROOT / "tests" / "data" / "engine_logs" / "vllm_startup_logs.json"
SGLANG_LOGS = ROOT / "tests" / "data" / "engine_logs" / "sglang_startup_logs.json"


def load_all_logs() -> list[dict[str, Any]]:
    return json.loads(LOGS.read_text())


def load_logs() -> list[dict[str, Any]]:
    """The logs replayed for a budget: all but those whose setting kvplan refuses."""
    return [log for log in load_all_logs() if not log.get("refused")]


def refused_logs() -> list[dict[str, Any]]:
    """Logs of a setting kvplan refuses to size (`refused`: why), kept to check the refusal."""
    return [log for log in load_all_logs() if log.get("refused")]


def refusal(log: dict[str, Any]) -> str:
    """kvplan's one-line refusal (exit 2) for a refused log; anything else is an error."""
    from kvplan.cli import app

    result = CliRunner().invoke(app, cli_args(log))
    if result.exit_code != 2:
        raise RuntimeError(f"{log['url']}: expected kvplan to refuse, got exit "
                           f"{result.exit_code}: {result.output}")
    return result.stderr.strip()


def cli_args(log: dict[str, Any]) -> list[str]:
    args = ["estimate", model_arg(log), *device_args(log), "--mem-fraction",
            str(log["gpu_memory_utilization"]), "--tp", str(log["tp"]), "--pp", str(log["pp"]),
            "--weights-gib", str(log["model_loading_gib"]), "--engine-version",
            log["vllm_version"], "--context", str(log["max_model_len"] or 4096),
            "--format", "json"]
    if log["max_num_seqs"]:
        args += ["--max-num-seqs", str(log["max_num_seqs"])]
    if log["max_num_batched_tokens"]:
        args += ["--max-num-batched-tokens", str(log["max_num_batched_tokens"])]
    if (log["kv_cache_dtype"] or "auto").startswith("fp8"):
        args += ["--kv-dtype", "fp8"]
    dtype = (log["dtype"] or "").split()[0]
    if dtype in ("float16", "float32"):  # set by the user (--dtype); bfloat16 is the auto here
        args += ["--dtype", dtype]
    if log.get("disable_custom_all_reduce"):
        args.append("--disable-custom-all-reduce")
    if log.get("ep", 1) > 1:  # --enable-expert-parallel (EP over the TP ranks)
        args.append("--enable-expert-parallel")
    if log["enforce_eager"]:
        args.append("--enforce-eager")
    if log.get("limit_mm_per_prompt"):  # the user's --limit-mm-per-prompt
        args += ["--limit-mm-per-prompt", log["limit_mm_per_prompt"]]
    if log.get("flashinfer_sampler") is not None:  # the log names the top-k/top-p path
        args.append("--flashinfer-sampler" if log["flashinfer_sampler"]
                    else "--no-flashinfer-sampler")
    return args


def predict(log: dict[str, Any]) -> dict[str, Any]:
    return run_kvplan(cli_args(log), log["url"])


def compare(log: dict[str, Any]) -> dict[str, Any]:
    out = predict(log)
    predicted = out["kv_budget_bytes"] / GiB
    logged = log["available_kv_cache_gib"]
    parts = out["reserve_breakdown"]
    return {
        "log": log, "predicted_gib": predicted, "logged_gib": logged,
        "error": predicted / logged - 1 if logged else float("inf"),
        "within": abs(predicted - logged) <= max(0.02 * abs(logged), TOLERANCE_GIB),
        "peak_gib": (parts["activation"]["bytes"] + parts["sampler"]["bytes"]
                     + parts.get("mm_encoder", {"bytes": 0})["bytes"]) / GiB,
        "mm_encoder_gib": parts.get("mm_encoder", {"bytes": 0})["bytes"] / GiB,
        "non_torch_gib": parts["non_torch"]["bytes"] / GiB,
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    errors = [abs(r["error"]) for r in rows]
    return {"logs": len(rows), "median_error": statistics.median(errors),
            "within_share": sum(r["within"] for r in rows) / len(rows)}


# --- SGLang ---------------------------------------------------------------------------------------


def load_sglang_logs() -> list[dict[str, Any]]:
    return json.loads(SGLANG_LOGS.read_text())


def sglang_cli_args(log: dict[str, Any]) -> list[str]:
    args = ["estimate", model_arg(log), "--engine", "sglang", "--gpu", log["gpu"], "--tp",
            str(log["tp"]), "--format", "json"]
    if log["weights_gib"] is not None:
        args += ["--weights-gib", str(log["weights_gib"])]
    if log["engine_version_arg"]:
        args += ["--engine-version", log["engine_version_arg"]]
    if log["fraction_set_by_user"]:
        args += ["--mem-fraction", str(log["mem_fraction_static"])]
    if (log["page_size"] or 1) > 1:
        args += ["--block-size", str(log["page_size"])]
    if log.get("context_len"):  # SGLang's max_running_requests default scales with it
        args += ["--context", str(log["context_len"])]
    if (log.get("kv_cache_dtype") or "auto").startswith("fp8"):  # the log's --kv-cache-dtype
        args += ["--kv-dtype", "fp8"]
    if log.get("vision_tower"):  # a multimodal checkpoint's encoder (SGLang's VLM fraction)
        args += ["--vision-tower", ",".join(map(str, log["vision_tower"]))]
    spec = log.get("speculative")
    if spec:  # the ServerArgs' speculative_* (kvplan.engines.sglang.draft.SglangDraft)
        args += ["--speculative-method", spec["method"], "--speculative-num-steps",
                 str(spec["num_steps"]), "--speculative-eagle-topk", str(spec["eagle_topk"]),
                 "--speculative-num-draft-tokens", str(spec["num_draft_tokens"])]
    return args


def sglang_predict(log: dict[str, Any]) -> dict[str, Any]:
    return run_kvplan(sglang_cli_args(log), log["id"])


def logged_begin_avail(log: dict[str, Any]) -> float | None:
    if log["load_weight_begin_avail_gib"] is not None:
        return log["load_weight_begin_avail_gib"]
    if log["load_weight_end_avail_gib"] is None or log["weights_gib"] is None:
        return None
    return round(log["load_weight_end_avail_gib"] + log["weights_gib"], 2)


def sglang_compare(log: dict[str, Any]) -> dict[str, Any]:
    out = sglang_predict(log)
    total_gib = out["total_bytes"] / GiB
    begin = logged_begin_avail(log)
    predicted = out["reported_kv_cache_tokens"]
    logged = log["max_total_num_tokens"]
    # The token pool's cell (the target's layers; a draft worker's pool is logged apart).
    cell = out["per_gpu_bytes_per_token"] - out["sglang_pool"].get("draft_cell_bytes", 0)
    row: dict[str, Any] = {
        "log": log, "predicted_tokens": predicted, "logged_tokens": logged,
        "predicted_fraction": out["mem_fraction"],
        "logged_fraction": None if log["fraction_set_by_user"] else log["mem_fraction_static"],
        "predicted_preload_gib": out["reserve_breakdown"]["preloaded"]["bytes"] / GiB,
        "logged_preload_gib": None if begin is None else total_gib - begin,
        "total_gib": total_gib, "cell_bytes": cell,
        "pool": out["sglang_pool"].get("kind", "token"),
        "predicted_mamba_slots": out["max_mamba_cache_size"],
        "predicted_swa_tokens": out["swa_max_total_num_tokens"],
        "predicted_running": out["max_running_requests"],
        "predicted_draft_kv_bytes": out["stages"][out["limiting_stage"]]["sglang_sizes"][
            "draft_kv_bytes"] if out["sglang_pool"].get("draft_cell_bytes") else None,
    }
    if logged:
        slack = max(0.02 * logged, TOLERANCE_GIB * GiB / cell)
        row["error"] = predicted / logged - 1
        row["within"] = abs(predicted - logged) <= slack
    return row


def sglang_rows() -> list[dict[str, Any]]:
    return [sglang_compare(log) for log in load_sglang_logs()]


def sglang_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    replayed = [r for r in rows if r["log"]["replay"]]
    errors = [abs(r["error"]) for r in replayed]
    return {"logs": len(replayed), "median_error": statistics.median(errors),
            "within_share": sum(r["within"] for r in replayed) / len(replayed)}


def _count(x: int | None) -> str:
    return "n/p" if x is None else f"{x:,}"


def _fraction(predicted: float, logged: float | None, log: dict[str, Any]) -> str:
    if log["fraction_set_by_user"]:
        return f"{log['mem_fraction_static']} (user)"
    return f"{predicted:.3f} / {'n/p' if logged is None else f'{logged:.3f}'}"


def print_sglang(rows: list[dict[str, Any]]) -> None:
    print("\n# SGLang KV tokens: kvplan vs start-up logs\n")
    print("Each row replays one log (tests/data/engine_logs/sglang_startup_logs.json) through "
          "`kvplan estimate MODEL --engine sglang --gpu G --tp T --weights-gib W "
          "--engine-version V` (plus `--mem-fraction F` where the user set one); *predicted* is "
          "`reported_kv_cache_tokens`, *logged* SGLang's \"max_total_num_tokens\" (the KV "
          "line's \"#tokens\"). W is the logged \"Load weight end ... mem usage\" (GiB). "
          "*preload*: memory in use before the weights load, kvplan's rule vs the device total "
          "less the logged \"Load weight begin. avail mem\" (end avail + mem usage where the "
          "begin line is missing). *fraction*: the default mem_fraction_static, kvplan vs the "
          "ServerArgs dump (n/p: not printed). *within*: max(2 %, 0.25 GiB of KV). `*`: a "
          "field is inferred (see `inferred` in the JSON); version `newest`: a source checkout "
          "without a release number.\n")
    print("| model | SGLang | GPU | TP | fraction kvplan / log | preload kvplan / log (GiB) "
          "| weights | predicted | logged | error | within | source |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|")
    replayed = [r for r in rows if r["log"]["replay"]]
    for r in replayed:
        log = r["log"]
        star = "*" if log["inferred"] else ""
        print(f"| {log['model']}{star} | {log['engine_version_arg'] or 'newest'} | {log['gpu']} "
              f"| {log['tp']} | {_fraction(r['predicted_fraction'], r['logged_fraction'], log)} "
              f"| {r['predicted_preload_gib']:.2f} / {fmt(r['logged_preload_gib'])} | "
              f"{log['weights_gib']} | {r['predicted_tokens']:,} | {r['logged_tokens']:,} | "
              f"{r['error']:+.1%} | {'yes' if r['within'] else 'no'} | "
              f"{log['url'] or 'index id ' + log['file_id']} |")
    print()
    s = sglang_summary(rows)
    print(f"- {s['logs']} logs, median |error| {s['median_error']:.2%}, "
          f"{s['within_share']:.0%} within max(2 %, {TOLERANCE_GIB} GiB of KV).")
    print_sglang_split(replayed)
    hybrid = [r for r in rows if r["pool"] != "token"]
    if hybrid:
        print("\nThe hybrid families' separate pools (Mamba: \"max_mamba_cache_size\"; sliding "
              "window: \"swa_layer_tokens\") and SGLang's max_running_requests, kvplan / log:\n")
        print("| model | pool | state slots or SWA tokens | max_running_requests |")
        print("|---|---|--:|--:|")
        for r in hybrid:
            log = r["log"]
            if r["pool"] == "mamba":
                mine, theirs = r["predicted_mamba_slots"], log.get("max_mamba_cache_size")
            else:
                mine, theirs = r["predicted_swa_tokens"], log.get("swa_max_total_num_tokens")
            print(f"| {log['model']} | {r['pool']} | {mine:,} / {_count(theirs)} | "
                  f"{r['predicted_running']:,} / {_count(log.get('max_running_requests'))} |")
    drafts = [r for r in rows if r["predicted_draft_kv_bytes"] is not None]
    if drafts:
        print("\nSpeculative decoding: the draft worker's own pool (its \"KV Cache is allocated\" "
              "line: K size, GiB), kvplan / log (kvplan.engines.sglang.pools.SglangDraft; more "
              "runs of SGLang's docs CI in tests/data/engine_logs/sglang_spec_docs_ci_logs.json, "
              "checked in tests/test_sglang_spec.py):\n")
        print("| model | SGLang | steps / topk / draft tokens | draft K size |")
        print("|---|---|---|--:|")
        for r in drafts:
            log, sp = r["log"], r["log"]["speculative"]
            print(f"| {log['model']} + {sp['method']} | {log['engine_version_arg']} | "
                  f"{sp['num_steps']} / {sp['eagle_topk']} / {sp['num_draft_tokens']} | "
                  f"{r['predicted_draft_kv_bytes'] / 2 / GiB:.2f} / "
                  f"{log['draft_k_size_gib']:.2f} |")
    print("\nLogs that check a rule but are not replayed for tokens (why: `notes` in the JSON):\n")
    print("| model | SGLang | GPU | TP | fraction kvplan / log | preload kvplan / log (GiB) "
          "| why not replayed | source |")
    print("|---|---|---|--:|--:|--:|---|---|")
    for r in rows:
        log = r["log"]
        if log["replay"]:
            continue
        print(f"| {log['model']} | {log['engine_version_arg'] or 'newest'} | {log['gpu']} | "
              f"{log['tp']} | {_fraction(r['predicted_fraction'], r['logged_fraction'], log)} | "
              f"{r['predicted_preload_gib']:.2f} / {fmt(r['logged_preload_gib'])} | "
              f"{log['why_not_replayed']} | {log['url'] or 'index id ' + log['file_id']} |")


# --- the honest split (tests/benches/honest.py) ----------------------------------------------


def vllm_split(rows: list[dict[str, Any]]) -> honest.Split:
    return honest.split((row(r["log"], ep=r["log"].get("ep", 1)) for r in rows), "engine")


def _within_text(subset: list[dict[str, Any]]) -> str:
    if not subset:
        return "0 logs"
    s = summary(subset)
    within = sum(r["within"] for r in subset)
    return (f"{s['logs']} logs, median |error| {s['median_error']:.2%}, {within} of {s['logs']} "
            f"({s['within_share']:.1%}) within max(2 %, {TOLERANCE_GIB} GiB)")


def print_vllm_split(rows: list[dict[str, Any]], split: honest.Split, held: set[str]) -> None:
    unshaped = set(split.unshaped)
    print(f"- {honest.HELD_OUT}: {_within_text([r for r in rows if r['log']['id'] in held])}; "
          f"{len(split.fitted)} logs are in a fitted constant's `fitted_on` (the non-torch "
          f"medians, the sampler and CUDA-graph fits), {len(split.same_config)} more share a "
          "fitted log's configuration.")
    print(f"- held out, less the logs a rule was later written for (below): "
          f"{_within_text([r for r in rows if r['log']['id'] in unshaped])}.")
    print_prospective(rows, split)
    print_shaped(split)


def print_prospective(rows: list[dict[str, Any]], split: honest.Split) -> None:
    """The prospective logs' figures, overall and by vLLM release, and the held-out logs whose
    source was read before the last rule change (`seen_before_rule_change`)."""
    mine = [r for r in rows if r["log"]["id"] in set(split.prospective)]
    print(f"- {honest.prospective_line(split, 'logs')}"
          + (f" ({_figures_text(mine)})." if mine else "."))
    for version in sorted({r["log"]["vllm_version"] for r in mine}, key=version_key):
        subset = [r for r in mine if r["log"]["vllm_version"] == version]
        print(f"  - vLLM {version}: {_within_text(subset)} "
              f"({'; '.join(r['log']['id'] for r in subset)}).")
    seen = [r for r in rows if r["log"]["id"] in set(split.seen_before)]
    if seen:
        print(f"- held out, added after that change, but read before it "
              f"(`seen_before_rule_change`, so not prospective): {_within_text(seen)}.")
    if mine:
        print(f"\n{PROSPECTIVE_FINDING}")


def _figures_text(subset: list[dict[str, Any]]) -> str:
    s = summary(subset)
    within = sum(r["within"] for r in subset)
    return (f"median |error| {s['median_error']:.2%}, {within} of {s['logs']} within max(2 %, "
            f"{TOLERANCE_GIB} GiB)")


# Read after the prospective logs (startup26, committed in c9999d3 and adf9a1b before any
# prediction for them) were first evaluated; no rule or constant was changed for them.
PROSPECTIVE_FINDING = (
    "The prospective misses, read after the first evaluation (no rule changed). "
    "index-29233847939 (GLM-4.7-NVFP4, TP 4, -30 %): the report's fraction 0.80 cannot have "
    "produced its lines, since vLLM's budget is fraction x total less weights, peak and "
    "non-torch memory (v1/worker/gpu_worker.py determine_available_memory) and 47.11 GiB of "
    "weights plus 31.99 GiB of KV exceed 0.80 x 94.97 GiB = 75.98 GiB; the report notes 0.90 "
    "ran out of memory at the sampler warm-up, which "
    "vLLM does after printing the KV line, so the quoted lines are most likely the 0.90 run's "
    "(kvplan at 0.90: 31.88 GiB, -0.3 %); the row keeps the report's 0.80. "
    "index-67592774702 (Qwen3-VL-30B-A3B on an H100 NVL, vLLM 0.13.0, +7.4 % as first "
    "evaluated, +1.44 GiB): kvplan's H100-NVL preset had no measured reported total, so the "
    "fraction was taken of the 94 GiB datasheet figure while vLLM takes it of the total its "
    "MemorySnapshot reads from the device (cudaMemGetInfo; vllm/utils/mem_utils.py). The "
    "preset now holds the 93.09 GiB public H100 NVL logs print (kvplan/hardware/gpus.json; "
    "looked for after this miss, so the row shaped it): +3.2 %, +0.62 GiB; the rest is the "
    "profile peak, kvplan's 5.40 GiB (sampler warm-up 4.71, encoder 0.25) against a log that "
    "does not print its own.")



def print_sglang_split(replayed: list[dict[str, Any]]) -> None:
    split = honest.split((row(r["log"], ep=1) for r in replayed), "engine")
    for name, ids in (("in the preload constants' `fitted_on`", set(split.fitted)),
                      (honest.HELD_OUT, set(split.held_out))):
        subset = [r for r in replayed if r["log"]["id"] in ids]
        if subset:
            s = sglang_summary(subset)
            within = sum(r["within"] for r in subset)
            text = (f"{s['logs']} logs, median |error| {s['median_error']:.2%}, {within} of "
                    f"{s['logs']} within")
        else:
            text = "0 logs"
        print(f"- {name}: {text}.")
    print_sglang_prospective(replayed, split)
    print_shaped(split)


def _sglang_figures(subset: list[dict[str, Any]]) -> str:
    s = sglang_summary(subset)
    within = sum(r["within"] for r in subset)
    return (f"median |error| {s['median_error']:.2%}, {within} of {s['logs']} within max(2 %, "
            f"{TOLERANCE_GIB} GiB of KV)")


def print_sglang_prospective(replayed: list[dict[str, Any]], split: honest.Split) -> None:
    """The prospective SGLang logs' figures, overall and by SGLang release ('newest': a source
    checkout or a build without a release number, replayed with kvplan's newest rules)."""
    mine = [r for r in replayed if r["log"]["id"] in set(split.prospective)]
    print(f"- {honest.prospective_line(split, 'logs')}"
          + (f" ({_sglang_figures(mine)})." if mine else "."))
    versions = {r["log"]["engine_version_arg"] for r in mine}
    for version in sorted(versions, key=lambda v: version_key(v)):
        subset = [r for r in mine if r["log"]["engine_version_arg"] == version]
        print(f"  - SGLang {version or 'newest'}: {_sglang_figures(subset)} "
              f"({'; '.join(r['log']['id'] for r in subset)}).")
    if mine:
        print(f"\n{SGLANG_PROSPECTIVE_FINDING}")


# Read after the startsgl logs (committed in cd15e16 and 610b696 before any prediction for
# them) were first evaluated; no rule or constant was changed for them.
SGLANG_PROSPECTIVE_FINDING = (
    "The prospective misses, read after the first evaluation (no rule changed). "
    "gemma-3-4b-it-h200-pr4826 (+5.6 %): SGLang of that date lowered the fraction for "
    "multimodal models inside the model runner, after ServerArgs printed 0.88 "
    "(model_executor/model_runner.py: `if self.is_multimodal: self.mem_fraction_static *= "
    "0.95`, 'Automatically reduce --mem-fraction-static ... because this is a multimodal "
    "model'; 0.90 in later releases, then replaced by server_args.py's "
    "adjust_mem_fraction_for_vlm); kvplan's 0.4.4 profile applies no VLM reduction. At 0.88 x "
    "0.95 = 0.836 the replay gives 833,907 tokens (-0.08 %). "
    "qwen2.5-7b-instruct-awq-16gb-workflow-aware-prompt-cache (-14.8 %): the fraction. "
    "ServerArgs print 0.82 and kvplan's newest default for a 16 GB card is 0.743 (its "
    "reserved-memory formula, server_args.py _handle_gpu_memory_settings, with the card's "
    "chunked_prefill_size 8192 and --disable-cuda-graph in this log); the repository has no "
    "command line, so 0.82 may be the user's. At 0.82 the replay gives 135,246 (+1.6 %). "
    "granite-4.0-h-micro-16gb-bench-one-batch (-7.2 %, inside the 0.25 GiB band of its "
    "small hybrid cell): bench_one_batch prints no ServerArgs, so its fraction is unknown; the "
    "16 GB GPU is inferred, not named. The B200 DeepSeek-R1-NVFP4 runs (SGLang 0.5.9; the "
    "repository's TensorRT-LLM logs were read for this bench before, its SGLang logs were in "
    "none, "
    "+0.75 % at TP 4, -0.33 % at TP 8) differ in the preload only: logged 1.79 GiB at both TP "
    "sizes, kvplan's TP-step constants 1.32 (TP 4) and 2.14 (TP 8).")


def main() -> None:
    rows = [compare(log) for log in load_logs()]
    print("# vLLM KV budget: kvplan vs start-up logs\n")
    print("Generated by `python -m tests.benches.engine_bench > examples/engine-bench.md`. "
          "Each row replays one log through "
          "`kvplan estimate MODEL --gpu G --mem-fraction F --tp T --pp P --weights-gib W "
          "--engine-version V` (plus the batch limits the user set); *predicted* is "
          "`kv_budget_bytes`, *logged* is vLLM's \"Available KV cache memory\" (GiB). The peak "
          "and non-torch columns put kvplan's reserve parts beside the log's \"PyTorch "
          "activation peak memory\" and \"non-torch memory\" where it prints them (the peak: "
          "activation + sampler + the multimodal encoder profile's excess, "
          "kvplan.engines.vllm.mm). `fit`: the "
          "log was used to derive the sampler rule (kvplan.engines.vllm.budget).\n")
    print("| model | vLLM | GPU | TP | PP | fraction | peak kvplan / log | non-torch kvplan / log "
          "| predicted | logged | error | within | fit | log |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|---|")
    for r in rows:
        log = r["log"]
        print(f"| {log['model']} | {log['vllm_version']} | {log['gpu']} | {log['tp']} | "
              f"{log['pp']} | {log['gpu_memory_utilization']} | {r['peak_gib']:.2f} / "
              f"{fmt(log['activation_peak_gib'])} | {r['non_torch_gib']:.2f} / "
              f"{fmt(log['non_torch_gib'])} | {r['predicted_gib']:.2f} | "
              f"{r['logged_gib']:.2f} | {r['error']:+.1%} | {'yes' if r['within'] else 'no'} | "
              f"{'fit' if log['fitted'] else ''} | {log['url']} |")
    print()
    split = vllm_split(rows)
    held = set(split.held_out)
    for name, subset in (("all", rows), ("not marked `fit` (the sampler rule's fit only)",
                                          [r for r in rows if not r["log"]["fitted"]]),
                         ("vLLM 0.20 and later (all held out)",
                          [r for r in rows if version_key(r["log"]["vllm_version"]) >= (0, 20)]),
                         ("from sources other than llm-d-planner PR #205 (held out: all but "
                          "the Qwen3-Next 0.10.2 log that fits the sort sampler rule)",
                          [r for r in rows if "llm-d-planner" not in r["log"]["url"]])):
        s = summary(subset)
        within = sum(r["within"] for r in subset)  # the count, so that 89.7 % never reads 90 %
        print(f"- {name}: {s['logs']} logs, median |error| {s['median_error']:.2%}, "
              f"{within} of {s['logs']} ({s['within_share']:.1%}) within max(2 %, "
              f"{TOLERANCE_GIB} GiB).")
    print_vllm_split(rows, split, held)
    refused = refused_logs()
    if refused:
        print("\nLogs of a setting kvplan refuses to size without --reserve-gib (not in the "
              "counts above; `refused` in the JSON says why):\n")
        print("| model | vLLM | GPU | TP | fraction | logged | kvplan says | log |")
        print("|---|---|---|--:|--:|--:|---|---|")
        for log in refused:
            message = refusal(log).removeprefix("kvplan: error: ").split(":")[0]
            print(f"| {log['model']} | {log['vllm_version']} | {log['gpu']} | {log['tp']} | "
                  f"{log['gpu_memory_utilization']} | {log['available_kv_cache_gib']:.2f} | "
                  f"{message}: refused | {log['url']} |")
    kv_token_runs.print_runs(kv_token_runs.rows())
    print_sglang(sglang_rows())
    trtllm_bench.print_trtllm(trtllm_bench.trtllm_rows())
    trtllm_bench.print_trtllm_ci(trtllm_bench.trtllm_ci_rows())
    trtllm_bench.print_trtllm_points(trtllm_bench.trtllm_point_rows())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
