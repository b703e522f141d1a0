"""The engines kvplan models, one package each (kvplan.engines.base: the Engine registry, the
inputs and the protocols every engine implements)."""
