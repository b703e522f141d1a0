"""Put on the PYTHONPATH of the stage workers vLLM spawns when tests/oracle/vllm_weight_bytes.py
runs with WEIGHT_BYTES_PP=N (it does so itself): each worker installs the probe's spy at start-up,
so that every pipeline stage prints the bytes of the model it loaded. Python imports one
sitecustomize only: where ../remote_configs is on the PYTHONPATH too (a config whose class is
remote code: Orion, InternLM2, ...), its stand-in config classes are registered here as well."""

import os
import sys

if os.environ.get("WEIGHT_BYTES_PP"):
    from vllm_weight_bytes import install_spy

    install_spy()
    _remote = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                           "remote_configs")
    if any(os.path.abspath(p) == os.path.abspath(_remote) for p in sys.path):
        import runpy

        runpy.run_path(os.path.join(_remote, "sitecustomize.py"))
