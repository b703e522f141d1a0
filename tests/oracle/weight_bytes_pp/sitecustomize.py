"""Put on the PYTHONPATH of the stage workers vLLM spawns when tests/oracle/vllm_weight_bytes.py
runs with WEIGHT_BYTES_PP=N or WEIGHT_BYTES_TP=N (it does so itself): each worker installs the
probe's spy at start-up, so that every pipeline stage (or TP rank) prints the bytes of the model
it loaded."""

import os

if os.environ.get("WEIGHT_BYTES_PP") or os.environ.get("WEIGHT_BYTES_TP"):
    from vllm_weight_bytes import install_spy

    install_spy()
