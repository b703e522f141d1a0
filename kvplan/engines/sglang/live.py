"""A running SGLang server, read (`kvplan check`): /get_server_info (/server_info in newer
releases, the old path kept as an alias), /v1/models and, with --enable-metrics, /metrics.

What it exposes (python/sglang/srt/entrypoints/http_server.py, get_server_info; the scheduler's
get_internal_state; python/sglang/srt/metrics/collector.py; tests/data/servers/ holds the
recorded answers with where they came from):

- /get_server_info: every ServerArgs field (``model_path``, ``tp_size``, ``kv_cache_dtype``,
  ``page_size`` (from 0.4.4), ``mem_fraction_static``, ``context_length``,
  ``max_running_requests``, ``max_total_tokens``, ``disable_radix_cache``,
  ``enable_dp_attention``), the scheduler's ``max_total_num_tokens`` (the KV pool in tokens,
  the start-up log's "max_total_num_tokens"), ``version``, and ``internal_states`` (one per
  data-parallel rank), whose ``memory_usage`` gives ``weight`` and ``kvcache`` in GiB (SGLang's
  ``GB`` is 2^30) to two decimals.
- /metrics (--enable-metrics): ``sglang:token_usage`` (KV pool in use, 0 to 1),
  ``sglang:num_running_reqs``, ``sglang:num_queue_reqs``, ``sglang:cache_hit_rate``, and in
  newer releases ``sglang:max_total_num_tokens``.

Not exposed: the GPU (its total memory): `kvplan check` takes --gpu or --gpu-mem-gib.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import InputError
from kvplan._util.units import GiB
from kvplan.engines.base import Engine
from kvplan.engines.kv_dtype import asked_kv_dtype
from kvplan.engines.live import (
    CapacityFacts,
    LiveDeployment,
    LiveLoad,
    MeasuredError,
    derived_budget_error,
)
from kvplan.sources.server import Sample, ServerError, ServerReplies, finite, parse_metrics

INFO_PATHS = ("/get_server_info", "/server_info")

def _gauge(samples: Mapping[str, list[Sample]], name: str, where: str,
           how: str = "sum") -> float | None:
    rows = samples.get(name)
    if not rows:
        return None
    values = [s.value for s in rows]
    return finite(max(values) if how == "max" else sum(values), f"{where}: {name}")


def _info(replies: ServerReplies) -> tuple[str, dict[str, Any]] | None:
    for path in INFO_PATHS:
        body = replies.json(path)
        if isinstance(body, dict) and ("max_total_num_tokens" in body or "model_path" in body):
            return path, body
    return None


class SglangLive:
    endpoints = ("/get_server_info", "/server_info", "/v1/models", "/metrics")

    def recognizes(self, replies: ServerReplies) -> bool:
        return _info(replies) is not None

    def read(self, replies: ServerReplies) -> LiveDeployment:
        found = _info(replies)
        if found is None:
            raise InputError(f"{replies.url}/get_server_info: no server info (not SGLang?)")
        path, info = found
        settings: dict[str, Any] = {}
        shown: dict[str, str] = {}
        sources: dict[str, str] = {}
        notes: list[str] = []

        def setting(key: str, value: Any, field: str) -> None:
            raw = info.get(field)
            if value is not None:
                settings[key] = value
            shown[key] = f"{field} {raw}"
            sources[key] = f"{path} {field}"

        def positive_int(field: str) -> int | None:
            value = info.get(field)
            return value if isinstance(value, int) and not isinstance(value, bool) and \
                value > 0 else None

        version = info.get("version")
        if isinstance(version, str):
            setting("engine_version", version, "version")
        models = replies.json("/v1/models")
        card = (models.get("data") or [None])[0] if isinstance(models, dict) else None
        card = card if isinstance(card, dict) else {}
        context = positive_int("context_length") or card.get("max_model_len")
        if isinstance(context, int) and context > 0:
            settings["context"] = context
            shown["context"] = f"context_length {info.get('context_length')}"
            sources["context"] = (f"{path} context_length" if positive_int("context_length")
                                  else "/v1/models max_model_len")
        dtype = info.get("kv_cache_dtype")
        if isinstance(dtype, str):
            kv = asked_kv_dtype(dtype)  # auto: the engine's own (run_kv_dtype), not bf16
            if kv is None:
                notes.append(f"kv_cache_dtype {dtype!r} is not one kvplan models: give "
                             "--kv-dtype")
            setting("kv_dtype", kv, "kv_cache_dtype")
        if "page_size" in info:
            setting("block_size", positive_int("page_size"), "page_size")
        fraction = info.get("mem_fraction_static")
        if isinstance(fraction, (int, float)) and not isinstance(fraction, bool):
            setting("mem_fraction", float(fraction), "mem_fraction_static")
        if "tp_size" in info:
            setting("tp", positive_int("tp_size"), "tp_size")
        if isinstance(info.get("enable_dp_attention"), bool):
            setting("dp_attention", info["enable_dp_attention"], "enable_dp_attention")
        if "max_running_requests" in info:
            setting("max_num_seqs", positive_int("max_running_requests"),
                    "max_running_requests")
        if "max_total_tokens" in info:
            setting("max_total_tokens", positive_int("max_total_tokens"), "max_total_tokens")
        if info.get("disable_radix_cache") is True:
            setting("disable_radix_cache", True, "disable_radix_cache")
        capacity: dict[str, float] = {}
        tokens = positive_int("max_total_num_tokens")
        if tokens is not None:
            capacity["kv_cache_tokens"] = tokens
            sources["kv_cache_tokens"] = f"{path} max_total_num_tokens"
        states = info.get("internal_states")
        usage = states[0].get("memory_usage") if isinstance(states, list) and states and \
            isinstance(states[0], dict) else None
        if isinstance(usage, dict):
            weight, kv = usage.get("weight"), usage.get("kvcache")
            if isinstance(weight, (int, float)) and weight > 0:
                # The deployment's own weights: kvplan sizes with them, as its bench does.
                settings["weights_gib"] = float(weight)
                shown["weights_gib"] = f"memory_usage.weight {weight} GiB"
                sources["weights_gib"] = f"{path} internal_states[0].memory_usage.weight"
            if isinstance(kv, (int, float)) and kv > 0:
                if not math.isfinite(kv * GiB):  # inf, or 1e308 GiB: round() raised (fuzz58)
                    raise ServerError(f"{replies.url}{path}: internal_states[0].memory_usage"
                                      f".kvcache: expected a size in GiB, got {kv!r}")
                capacity["kv_cache_memory_bytes"] = round(kv * GiB)
                sources["kv_cache_memory_bytes"] = (f"{path} internal_states[0].memory_usage"
                                                    ".kvcache (GiB, 2 decimals)")
        if positive_int("page_size") and "block_size" not in capacity:
            capacity["block_size"] = positive_int("page_size") or 1
            sources["block_size"] = f"{path} page_size"
        samples = {}
        text = replies.text("/metrics")
        if text is not None and "sglang:" in text:
            samples = parse_metrics(text, where=f"{replies.url}/metrics")
        else:
            notes.append("no sglang: metrics (start SGLang with --enable-metrics for the load)")
        page = f"{replies.url}/metrics"
        running, waiting = (_gauge(samples, "sglang:num_running_reqs", page),
                            _gauge(samples, "sglang:num_queue_reqs", page))
        load = LiveLoad(kv_usage=_gauge(samples, "sglang:token_usage", page, "max"),
                        running=None if running is None else int(running),
                        waiting=None if waiting is None else int(waiting),
                        prefix_hit_rate=_gauge(samples, "sglang:cache_hit_rate", page, "max"))
        model_id = info.get("model_path") if isinstance(info.get("model_path"), str) else (
            card.get("root") or card.get("id"))
        return LiveDeployment(engine=Engine.sglang, version=version if isinstance(
            version, str) else None, model_id=model_id, settings=settings, shown=shown,
            capacity=capacity, load=load, sources=sources, notes=tuple(notes))

    def predicted(self, plan: CapacityFacts) -> dict[str, float]:
        return {"kv_cache_tokens": plan.reported_kv_cache_tokens,
                "kv_cache_memory_bytes": plan.reported_kv_cache_tokens
                * plan.per_gpu_bytes_per_token,
                "block_size": plan.block_size}

    def resolution(self) -> Mapping[str, float]:
        # memory_usage.kvcache is rounded to 0.01 GiB.
        return {"kv_cache_memory_bytes": 0.005 * GiB}

    def measured_error(self, *, budget_given: bool) -> MeasuredError:
        # kvplan's measured error for SGLang, the figure plan quotes (kvplan.engines.accuracy).
        return derived_budget_error(Engine.sglang)


LIVE = SglangLive()
