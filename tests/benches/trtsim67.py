"""`python -m tests.benches.trtsim67`: what trtsim67's rule moves in a simulated TensorRT-LLM step
(kvplan.perf.mixed_step.MixedStepCost: a step holding a prefill chunk charges the context-step
kernels of kvplan.perf.trtllm_bytes, whole-batch kernels over every token, MLA's context path
over the prefill tokens alone). For DeepSeek-V3 FP8 on H200 (TP 8 EP 8, FP8 cache,
1.2.0rc6.post1) and Qwen3-32B-FP8 on H100 (TP 1, 1.2.0rc1): each step's dense part priced as
before (the decode phase's, `context_tokens` 0) and with the rule, and the whole step. Opt-in,
on no page; evaluation: tests.benches.trtctx66_eval (3j, agg).

Evaluated once after the freeze (bfae25ad), ratios predicted / measured:
- disagg-bench 3j (123 rows, all shaped): 62 / 68 / 97 inside, medians 0.93 / 1.06, as the page
  at 0808e98a: the disaggregated replay has no mixed step (its context server's steps are
  kvplan.analysis.disagg prefill_step_ms, the static context step, trtctx66's already).
- aggregated TensorRT-LLM rows (held out; sampled: every replayed H200 row, 12, and the first
  12 replayed of b200 fp4, b200 fp8, h100 fp8): all 48 move, TTFT up 1-10 %. H200 both 1 -> 1,
  TTFT 5 -> 5, TPOT 3 -> 3, median TTFT 0.92 -> 0.98, TPOT 1.42; the 36: both 13 -> 12, TTFT
  17 -> 15, TPOT 25 -> 25, medians 1.27 -> 1.33 / 1.16 -> 1.17 (h100 fp8 TTFT 1.66 -> 1.77).
- prospective60's 8 TensorRT-LLM rows (held out), mean TTFT error: Qwen3-32B A100 -10.5 /
  -2.2 / +3.8 / +9.2 -> -9.7 / -1.2 / +5.2 / +11.2 %; Qwen3-32B-FP8 H100 -49.1 / -53.3 / -57.7
  / -62.9 -> -46.8 / -50.6 / -54.4 / -59.0 %; mean TPOT A100 -8.8 / +7.3 / +12.8 / +12.9 ->
  -8.8 / +8.4 / +14.3 / +14.9 %, H100 -44.3 / -49.6 / -53.9 / -55.7 -> -41.9 / -46.8 / -50.5 /
  -51.2 % (32000/100, 4000/200, 2000/100, 128/4).
- vLLM / SGLang: no row moves (no context-step kernels: tests/test_trtsim67.py)."""

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
            before = cost.dense_seconds(tokens, requests, context_tokens=0)
            after = cost.dense_seconds(tokens, requests, context_tokens=p)
            step = cost.seconds(decode_contexts=[2048] * d, chunks=[(0, p)] if p else [])
            print(f"  {p:>5} prefill + {d:>3} decodes: dense part {before * 1e3:7.2f} -> "
                  f"{after * 1e3:7.2f} ms (context path alone "
                  f"{cost.context_only_seconds(p) * 1e3:5.2f}); step {step * 1e3:7.2f} ms")


if __name__ == "__main__":
    main()
