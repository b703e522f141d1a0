"""Each engine answers its own scheduler questions (STYLE.md): its scheduler type
(EngineRules.scheduler, which kvplan.analysis.simulate.run maps to a simulator set-up) and the
prefill step it batches prompts into by default (EngineRules.prefill_step_defaults, which
kvplan.analysis.disagg.prefill_batching asks); no call site compares scheduler names."""

from __future__ import annotations

from pathlib import Path

from kvplan.engines.base import Engine, Scheduler
from kvplan.hardware.gpus import get_gpu


def test_each_engine_names_its_scheduler() -> None:
    assert Engine.vllm.rules.scheduler is Scheduler.mixed_token_budget
    assert Engine.sglang.rules.scheduler is Scheduler.prefill_first
    assert Engine.trtllm.rules.scheduler is Scheduler.capacity_micro_batch
    # The names the JSON and docs used stay (a str Enum).
    assert Scheduler.prefill_first == "prefill-first"


def test_prefill_step_defaults() -> None:
    h100, b200 = get_gpu("H100-80GB"), get_gpu("B200")
    # vLLM EngineArgs.get_batch_defaults (kvplan.engines.vllm.alloc.vllm_batch_defaults):
    # >= 70 GiB, not an A100: 8,192 tokens / 1,024 seqs; >= 160 GiB from 0.28: 16,384 / 1,024.
    assert Engine.vllm.rules.prefill_step_defaults(h100, "0.32.0") == (8192, 1024)
    assert Engine.vllm.rules.prefill_step_defaults(b200, "0.32.0") == (16384, 1024)
    # SGLang server_args.py chunked_prefill_size by GPU memory: < 160 GiB 8,192, else 16,384;
    # no cap on prompts per step but the KV.
    assert Engine.sglang.rules.prefill_step_defaults(h100, None) == (8192, 1 << 30)
    assert Engine.sglang.rules.prefill_step_defaults(b200, None) == (16384, 1 << 30)
    # TensorRT-LLM llm_args.py: max_num_tokens 8192, max_batch_size 2048, whatever the GPU.
    assert Engine.trtllm.rules.prefill_step_defaults(h100, None) == (8192, 2048)
    assert Engine.trtllm.rules.prefill_step_defaults(b200, "1.2.0") == (8192, 2048)


def test_no_call_site_compares_scheduler_names() -> None:
    root = Path(__file__).parents[1] / "kvplan"
    hits = [str(p.relative_to(root)) for p in root.rglob("*.py")
            if '== "prefill-first"' in p.read_text() or '== "mixed-token-budget"' in p.read_text()]
    assert hits == []
