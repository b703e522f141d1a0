"""`python -m tests.benches.trtsim67`: what trtsim67's rule moves in a simulated TensorRT-LLM step
(kvplan.perf.mixed_step.MixedStepCost: a step holding a prefill chunk charges the context-step
kernels of kvplan.perf.trtllm_bytes, whole-batch kernels over every token, MLA's context path
over the prefill tokens alone). For DeepSeek-V3 FP8 on H200 (TP 8 EP 8, FP8 cache,
1.2.0rc6.post1) and Qwen3-32B-FP8 on H100 (TP 1, 1.2.0rc1): each step's dense part priced as
before (the decode phase's, `context_tokens` 0) and with the rule, and the whole step. Opt-in,
on no page; evaluation: tests.benches.trtctx66_eval (3j, agg)."""

from __future__ import annotations

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost

CASES = (
    ("deepseek-v3", "H200", Layout(tp=8, ep=8), "fp8", None, "1.2.0rc6.post1"),
    ("tests/data/configs/qwen3-32b-fp8.json", "H100-80GB", Layout(tp=1), "fp8", None, "1.2.0rc1"),
)
STEPS = ((8192, 0), (2048, 64), (512, 256), (0, 64))  # (prefill tokens, decodes)


def main() -> None:
    for model, gpu_name, layout, kv, quant, version in CASES:
        spec, gpu = load_spec(model), get_gpu(gpu_name)
        cost = MixedStepCost(spec, gpu, kv_dtype=kv, layout=layout, quantization=quant,
                             eff=engine_efficiency("trtllm", version=version),
                             eager_prefill=True)
        print(f"{model}, {gpu_name}, TP {layout.tp} EP {layout.ep}, TensorRT-LLM {version}")
        for p, d in STEPS:
            tokens, requests = p + d, d + (1 if p else 0)
            before = cost.dense_seconds(tokens, requests, 0)
            after = cost.dense_seconds(tokens, requests, p)
            step = cost.seconds(decode_contexts=[2048] * d, chunks=[(0, p)] if p else [])
            print(f"  {p:>5} prefill + {d:>3} decodes: dense part {before * 1e3:7.2f} -> "
                  f"{after * 1e3:7.2f} ms (context path alone "
                  f"{cost.context_only_seconds(p) * 1e3:5.2f}); step {step * 1e3:7.2f} ms")


if __name__ == "__main__":
    main()
