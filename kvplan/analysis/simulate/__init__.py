"""The serving simulator (issue 30): vLLM V1's scheduler over kvplan's KV pool, with the cost
model's step time."""
