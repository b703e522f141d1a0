"""The device check vllm200u63's forensic asks for (tests/benches/vllm200u63.py, FINDING 1): on
one GPU, time the kernels vLLM 0.15.0's native top-k / top-p sampler runs over a step's
[rows, vocabulary] logits, to set against kvplan's HBM-rate price of them
(kvplan.engines.vllm.sampler, kvplan.perf.sampler_cost). NOT RUN YET: no GPU was lent to the
session that wrote it; nothing in kvplan reads its output.

What it times, per (rows, vocabulary), with CUDA events, the median of REPEATS after WARMUP:
- `sort`: torch.sort of float32 logits along the vocabulary (the kernel PyTorch picks by row
  count: a full radix sort up to 127 rows, CUB's segmented radix sort from 128);
- `sampler`: the whole sequence the reading lists, written here from that reading
  (topk_topp_sampler.py :243-283 and :311-332, sampler.py :90 and `apply_temperature`): the
  bf16 -> float32 cast, the temperature divide, the sort, the top-k threshold and mask, the
  softmax, cumsum and top-p mask of the sorted row, the scatter back, the softmax, the
  exponential noise, the divide and the argmax.

Run (GPU machine, torch with CUDA): python -m tests.benches.vllm200u63_device [OUT.json]
(about a minute on one H100). The shapes: the April rows' vocabularies at 10-256 rows.
"""

from __future__ import annotations

import json
import statistics
import sys

ROWS = (10, 64, 127, 128, 160, 200, 256)
VOCABS = (128256, 151936, 201088)  # Llama-3.1, Qwen3, gpt-oss-120b
TEMPERATURE, TOP_P, TOP_K = 0.6, 0.95, 20  # Qwen3's generation_config
WARMUP, REPEATS = 3, 20


def _sampler(logits, torch):  # type: ignore[no-untyped-def]
    x = logits.to(torch.float32)
    x.div_(TEMPERATURE)
    s, idx = x.sort(dim=-1)
    kth = s.gather(1, torch.full((s.shape[0], 1), s.shape[1] - TOP_K, device=s.device))
    s.masked_fill_(s < kth, float("-inf"))
    c = s.softmax(dim=-1).cumsum(dim=-1)
    mask = c <= 1 - TOP_P
    mask[:, -1] = False
    s.masked_fill_(mask, float("-inf"))
    x = s.scatter(dim=-1, index=idx, src=s)
    p = x.softmax(dim=-1)
    q = torch.empty_like(p).exponential_()
    return p.div_(q).argmax(dim=-1)


def _time_ms(fn, torch) -> float:  # type: ignore[no-untyped-def]
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> None:
    import torch

    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
    for vocab in VOCABS:
        for rows in ROWS:
            logits = torch.randn(rows, vocab, device="cuda", dtype=torch.bfloat16)
            f32 = logits.float()
            row = {"rows": rows, "vocab": vocab,
                   "sort_ms": _time_ms(lambda t=f32: t.sort(dim=-1), torch),
                   "sampler_ms": _time_ms(lambda t=logits: _sampler(t, torch), torch)}
            out["rows"].append(row)
            print(json.dumps(row), flush=True)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
