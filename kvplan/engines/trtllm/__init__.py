"""TensorRT-LLM: every rule kvplan models of it (engine, budget, pool, options)."""
