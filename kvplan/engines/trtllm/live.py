"""TensorRT-LLM's server (trtllm-serve) is not read by `kvplan check` yet: its /metrics carries
per-iteration JSON stats, not the KV pool's size (kvplan.engines.live)."""

LIVE = None
