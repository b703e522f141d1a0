"""A running vLLM server, read (`kvplan check`): /version, /v1/models and the Prometheus page.

What each release exposes (read in vLLM's source: vllm/engine/metrics.py for V0,
vllm/v1/metrics/loggers.py and vllm/config/cache.py for V1; tests/data/servers/ holds the
recorded pages, each with where it came from):

- ``vllm:cache_config_info``: a gauge set to 1 whose labels are the CacheConfig's fields,
  ``str()``-ed (``CacheConfig.metrics_info``), one sample per engine (``engine`` label, data
  parallel). So its labels grow with the config: ``block_size``, ``cache_dtype``,
  ``gpu_memory_utilization``, ``enable_prefix_caching``, ``num_gpu_blocks`` always;
  ``num_gpu_blocks="None"`` in early V1 (0.8, vllm#16560, fixed by vllm#15755);
  ``kv_cache_memory_bytes`` (--kv-cache-memory; on CPU the KV space) from 0.11;
  ``kv_cache_size_tokens``, ``kv_cache_max_concurrency`` (group-aware capacity, the start-up
  log's figures), ``effective_attention_block_size`` and ``user_specified_block_size`` in the
  newest (0.32 recorded). ``block_size`` is the configured size: for hybrid models it stayed
  at 16 while the workers raised it (vllm#42966); ``effective_attention_block_size`` is the
  resolved one.
- Newer builds may also print ``vllm:vllm_config_info`` with ``cache_config_``-prefixed labels
  (vllm#44691): read when ``cache_config_info`` is absent.
- KV usage: ``vllm:gpu_cache_usage_perc`` (V0, V1 to 0.10), ``vllm:kv_cache_usage_perc``
  (from 0.10, vllm#18354; the old name hidden from 0.11, then removed).
- Prefix cache: ``vllm:gpu_prefix_cache_queries/hits`` counters (V1 to 0.10, deprecated in
  0.10), ``vllm:prefix_cache_queries/hits`` (from 0.10); V0: ``vllm:gpu_prefix_cache_hit_rate``.
- ``vllm:num_requests_running`` / ``vllm:num_requests_waiting`` in every release.

Not exposed anywhere: the platform, the GPU, tensor parallelism, max_num_batched_tokens and
the weights: `kvplan check` takes them as options.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import InputError
from kvplan.engines.base import Engine
from kvplan.engines.kv_dtype import asked_kv_dtype
from kvplan.engines.live import (
    CapacityFacts,
    LiveDeployment,
    LiveLoad,
    MeasuredError,
    derived_budget_error,
    given_budget_error,
)
from kvplan.sources.server import Sample, ServerReplies, finite, parse_metrics

PREFIX = "vllm:"
CACHE_INFO = "vllm:cache_config_info"
VLLM_CONFIG_INFO = "vllm:vllm_config_info"
# Each quantity's names, newest first (the first one present is read).
USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
PREFIX_QUERIES = ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total")
PREFIX_HITS = ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total")
PREFIX_HIT_RATE = ("vllm:gpu_prefix_cache_hit_rate",)  # V0
RUNNING = ("vllm:num_requests_running",)
WAITING = ("vllm:num_requests_waiting",)

def _label_int(labels: Mapping[str, str], key: str, where: str) -> int | None:
    value = _label_float(labels, key, where)
    return None if value is None else int(value)


def _label_float(labels: Mapping[str, str], key: str, where: str) -> float | None:
    """The label as a number; None where absent or not a number ("None"); NaN or an infinity
    refused naming the metric and label (`where`)."""
    text = labels.get(key)
    try:
        value = None if text is None else float(text)
    except ValueError:  # "None"
        return None
    return finite(value, f"{where} {key}")


def _label_bool(labels: Mapping[str, str], key: str) -> bool | None:
    return {"True": True, "False": False}.get(labels.get(key, ""))


def _first(samples: Mapping[str, list[Sample]], names: tuple[str, ...]
           ) -> tuple[str, list[Sample]] | None:
    for name in names:
        if samples.get(name):
            return name, samples[name]
    return None


def _cache_labels(samples: Mapping[str, list[Sample]]) -> tuple[str, dict[str, str], int]:
    """The cache config's labels for engine 0 (or the first), the metric they came from, and
    the number of engines (data-parallel ranks) reporting."""
    if samples.get(CACHE_INFO):
        rows = samples[CACHE_INFO]
        rows = sorted(rows, key=lambda s: s.labels.get("engine", ""))
        return CACHE_INFO, dict(rows[0].labels), len(rows)
    if samples.get(VLLM_CONFIG_INFO):
        rows = samples[VLLM_CONFIG_INFO]
        head = "cache_config_"
        labels = {k[len(head):]: v for k, v in rows[0].labels.items() if k.startswith(head)}
        return VLLM_CONFIG_INFO, labels, len(rows)
    return "", {}, 0


class VllmLive:
    endpoints = ("/version", "/v1/models", "/metrics")

    def recognizes(self, replies: ServerReplies) -> bool:
        text = replies.text("/metrics")
        if text is not None and f"\n{PREFIX}" in "\n" + text:
            return True
        version = replies.json("/version")
        return isinstance(version, dict) and "version" in version and replies.json(
            "/get_server_info") is None

    def read(self, replies: ServerReplies) -> LiveDeployment:
        url = replies.url
        text = replies.text("/metrics")
        if text is None:
            raise InputError(f"{url}/metrics: no metrics page (vLLM started with "
                             "--disable-log-stats exports none)")
        samples = parse_metrics(text, where=f"{url}/metrics")
        where, labels, engines = _cache_labels(samples)
        at = f"{url}/metrics: {where}"
        if not labels:
            raise InputError(f"{url}/metrics: no {CACHE_INFO} (a vLLM server before 0.4?)")
        version = replies.json("/version")
        version = version.get("version") if isinstance(version, dict) else None
        models = replies.json("/v1/models")
        card = (models.get("data") or [None])[0] if isinstance(models, dict) else None
        card = card if isinstance(card, dict) else {}
        model_id = card.get("root") or card.get("id")
        settings: dict[str, Any] = {}
        shown: dict[str, str] = {}
        sources: dict[str, str] = {}
        notes: list[str] = []

        def setting(key: str, value: Any, spelled: str, source: str) -> None:
            if value is not None:
                settings[key] = value
            shown[key] = spelled
            sources[key] = source

        if version is not None:
            setting("engine_version", str(version), str(version), "/version")
        max_len = card.get("max_model_len")
        if isinstance(max_len, int) and max_len > 0:
            setting("context", max_len, str(max_len), "/v1/models max_model_len")
        dtype = labels.get("cache_dtype")
        if dtype is not None:
            # auto: the engine's own, resolved for the model (kvplan.engines.kv_dtype.run_kv_dtype:
            # the checkpoint's declared dtype, else the model dtype), not bf16.
            kv = asked_kv_dtype(dtype)
            if kv is None:
                notes.append(f"cache_dtype {dtype!r} is not one kvplan models: give --kv-dtype")
            setting("kv_dtype", kv, f"cache_dtype {dtype}", f"{where} cache_dtype")
        fraction = _label_float(labels, "gpu_memory_utilization", at)
        setting("mem_fraction", fraction,
                f"gpu_memory_utilization {labels.get('gpu_memory_utilization')}",
                f"{where} gpu_memory_utilization")
        budget = _label_int(labels, "kv_cache_memory_bytes", at)
        if budget is not None:
            setting("kv_cache_memory", budget, f"kv_cache_memory_bytes {budget}",
                    f"{where} kv_cache_memory_bytes")
        # The CPU worker's KV budget is cpu_kvcache_space_bytes (VLLM_CPU_KVCACHE_SPACE):
        # CPUWorker.determine_available_memory returns it (vllm/v1/worker/cpu_worker.py,
        # 0.11.2, 0.13.0, 0.15.1); releases that leave kv_cache_memory_bytes None export only it.
        space = _label_int(labels, "cpu_kvcache_space_bytes", at)
        if budget is None and space is not None:
            setting("kv_cache_memory", space, f"cpu_kvcache_space_bytes {space}",
                    f"{where} cpu_kvcache_space_bytes")
        caching = _label_bool(labels, "enable_prefix_caching")
        if caching is not None:
            setting("prefix_caching", caching, f"enable_prefix_caching {caching}",
                    f"{where} enable_prefix_caching")
        ssm = labels.get("mamba_ssm_cache_dtype")
        if ssm not in (None, "auto", "None"):
            setting("ssm_dtype", ssm, f"mamba_ssm_cache_dtype {ssm}",
                    f"{where} mamba_ssm_cache_dtype")
        # The configured block size fixes kvplan's input only when the user chose it: vLLM's
        # own default (and its raise for recurrent state) kvplan derives. Releases without
        # user_specified_block_size: a block other than the CUDA default 16 was the user's.
        # With _block_size_resolved (and no user_specified_block_size) the label is already
        # the resolved size, whoever chose it.
        configured = _label_int(labels, "block_size", at)
        resolved = _label_int(labels, "effective_attention_block_size", at)
        chosen = _label_bool(labels, "user_specified_block_size")
        if chosen is None and _label_bool(labels, "_block_size_resolved"):
            chosen, resolved = False, resolved or configured
        elif chosen is None:
            chosen = configured is not None and configured != 16
        if configured is not None:
            setting("block_size", configured if chosen else None,
                    f"block_size {configured}" + ("" if chosen else " (vLLM's default)"),
                    f"{where} block_size")
        capacity: dict[str, float] = {}
        for key, label in (("num_gpu_blocks", "num_gpu_blocks"),
                           ("kv_cache_tokens", "kv_cache_size_tokens"),
                           ("max_concurrency", "kv_cache_max_concurrency"),
                           ("kv_cache_memory_bytes", "kv_cache_memory_bytes")):
            value = _label_float(labels, label, at)
            if value is not None:
                capacity[key] = int(value) if label != "kv_cache_max_concurrency" else value
                sources[key] = f"{where} {label}"
        if resolved is not None:
            capacity["block_size"] = resolved
            sources["block_size"] = f"{where} effective_attention_block_size"
        if "num_gpu_blocks" not in capacity:
            notes.append(f"{where} num_gpu_blocks is None (early V1 releases, vllm#16560)")
        if engines > 1:
            notes.append(f"{engines} engines (data parallel) report: engine 0 read")
        return LiveDeployment(engine=Engine.vllm, version=None if version is None
                              else str(version), model_id=model_id, settings=settings,
                              shown=shown, capacity=capacity, load=self._load(samples, url),
                              sources=sources, notes=tuple(notes))

    @staticmethod
    def _load(samples: Mapping[str, list[Sample]], url: str) -> LiveLoad:
        def total(names: tuple[str, ...]) -> float | None:
            found = _first(samples, names)
            return None if found is None else finite(sum(s.value for s in found[1]),
                                                     f"{url}/metrics: {found[0]}")

        usage = _first(samples, USAGE)
        rate = _first(samples, PREFIX_HIT_RATE)
        running, waiting = total(RUNNING), total(WAITING)
        return LiveLoad(
            kv_usage=None if usage is None else finite(max(s.value for s in usage[1]),
                                                        f"{url}/metrics: {usage[0]}"),
            running=None if running is None else int(running),
            waiting=None if waiting is None else int(waiting),
            prefix_cache_hits=total(PREFIX_HITS), prefix_cache_queries=total(PREFIX_QUERIES),
            prefix_hit_rate=None if rate is None else max(s.value for s in rate[1]))

    def predicted(self, plan: CapacityFacts) -> dict[str, float]:
        return {"num_gpu_blocks": plan.num_blocks,
                "kv_cache_tokens": plan.reported_kv_cache_tokens,
                "max_concurrency": plan.max_concurrency,
                "kv_cache_memory_bytes": plan.kv_budget_bytes,
                "block_size": plan.block_size}

    def resolution(self) -> Mapping[str, float]:
        # Every label is str() of the exact value (the concurrency a full-precision float).
        return {}

    def measured_error(self, *, budget_given: bool) -> MeasuredError:
        # The bands come from kvplan's generated bench data (kvplan.engines.accuracy): exact
        # with the budget given where the recorded oracle runs all match, else plan's figure.
        exact = given_budget_error(Engine.vllm) if budget_given else None
        return exact or derived_budget_error(Engine.vllm)


LIVE = VllmLive()
