"""The notes printed at the end of examples/cost-bench.md (tests/benches/cost_bench.py)."""

NOTES = """
## Notes

The FP8 GEMM weight-streaming fraction (0.69) is the median of DeepGEMM's published decode-size
measurements (README, H800), not fitted to these cases. The kernel floor (4 us, NVIDIA's CUDA
Graphs post) applies per GEMM kernel, as the engines launch them (kvplan/perf/roofline.py): at TP 8
DeepSeek's projections are five kernels of 2-15 MB per rank, each under a floor, and a block-FP8
(w8a8) GEMM is two kernels, the activation quantization and the GEMM (SGLang
`apply_w8a8_block_fp8_linear`). Dense bf16 models are unchanged by these rules (their GEMMs
move more than a floor's worth of bytes). DeepSeek's attention projections are FP8 GEMMs:
kvplan judges a group's format on the whole model, so the q_a / kv_a projections that SGLang
replicates on every TP rank (1.75 x an even 1/8 share of the bytes) no longer read as bf16.
That moved DeepSeek-R1 TP8 decode at concurrency 4-64 from 0.79-0.94 to 0.75-0.85 (the
quantization kernels and the FP8 streaming fraction now apply to attention too) and the
Feb / Apr 2025 batch-1 decode timers from 2.22 / 1.82 to 1.97 / 1.61.

**Two fitted constants.** The layer overhead (35 us per layer per step) is fitted on the 8 dense
single-GPU decode cases; without it the held-out cases read 69 of 114 in band, with it 100 of
114 (25 / 34 of the first 44) (Qwen3-235B-A22B on 8x B200 at concurrency 1: 1.53-1.56 ->
1.02-1.04; Llama-3.1-70B TP8 at concurrency 1: 1.39-1.40 -> 1.15-1.16). With the serving rule
below its median residual is 35.9 us; the default stays 35 us (within the 1 us the drift test
allows). The eager prefill launch time (70 us per launched op) is fitted on the 4 engine-timed
SGLang prefills of DeepSeek-V3/R1 on 8x H200 (three sources, Feb / Apr / Dec 2025); left out one
at a time, each reads 0.83-1.15 with the other three's fit.
Every client TTFT, every Qwen3 / Llama prefill and every decode row is held out from it. Two
vLLM `benchmark_latency` runs of Llama-3-8B (vLLM's torch.compile guide, Dec 2024: one H100,
one L4) are held out under a kind of their own and read 1.08 / 1.06.

**Why prefill needed a launch time, and why per op.** SGLang's `bench_one_batch` times one
prefill step: DeepSeek-V3 on 8x H200 takes 196 ms for 128 tokens, 167-180 ms for 1,000 and
289 ms for 16 x 512, nearly flat in the prompt; at the 4 us graph floor kvplan predicts
34-43 ms for the short ones (3.9-5.7x too fast). SGLang captures CUDA graphs for decode batches
only (cuda_graph_runner.py; piecewise prefill graphs are opt-in), so a prefill's ops are
launched one by one from Python and a short prompt's step is the CPU's. kvplan counts the ops
SGLang's model code launches per layer (`eager_prefill_ops`: DeepSeek-V3 TP 8 FP8 2,107 per
step, Qwen3-235B TP 8 1,791, Llama-3.1-70B TP 8 965, Qwen3-8B 435) and adds ops x 70 us to the
GPU time. The previous rule, max(GPU time, 119 us) per itemised kernel, charged every model the
DeepSeek ratio of launched ops to itemised kernels; the implied launch time per op was 105-147
us on DeepSeek (fit) against 64-91 us on Qwen3 (held out). With the counted ops it is 59-77 us
on DeepSeek and at most 43-56 us on Qwen3-235B and 47 us on Qwen3-8B (client TTFTs, serving
path included): the gap narrowed from about 1.6x to about 1.3x but did not close (the table
above). What remains is the CPU time of an op itself, which differs by host CPU (the Qwen3 runs
are on B200 hosts and SGLang 0.5.3-0.5.6, the DeepSeek ones on H200 hosts, three of four on
early-2025 SGLang) and by op (a block-FP8 quantization wrapper is not a fused norm); kvplan
does not know the host, and `--prefill-launch-us` sets it. The release is not what separates
them on the evidence here: the one fit row from a 0.5.x-era SGLang (DeepSeek-V3.1, Dec 2025,
PR 14764) implies 74 us, inside the early-2025 rows' 59-77 us, so the launch time stays one
constant, not a table by release. A search of sgl-project/sglang PRs and issues for more
`bench_one_batch` "Prefill. latency" lines from 0.4.6 on found none that name the model, the
GPU and the TP together (https://github.com/sgl-project/sglang/pull/12160's "forward
cost-82.6406478881836 ms" for a 1-new-token DeepSeek-V3 prefill, Oct 2025, is a private timer
on an unnamed GPU), so none were added. The same term moves the
high-concurrency decode rows, whose serving TPOT holds the prefills run between decode steps:
Llama-3.1-70B TP8 at concurrency 16 / 100 reads 1.25 / 1.16 (1.35 / 1.53 at the graph floor),
Qwen3-235B 8k/1k at 64 0.91 (1.35), 1k/8k at 64 1.13 (1.22). SGLang (`--enable-mixed-chunk`
off by default) runs each prefill batch alone, stopping the decoding batch for its whole
duration, which is what `serving_tpot_ms` charges.

**Prefill batching in a serving run (no new constant).** The benchmarks here start
`concurrency` requests together and replace each finished one until `--num-prompts` were sent.
SGLang's scheduler takes every waiting prompt into one prefill step, up to its chunk
(scheduler.py `get_new_batch_prefill`, schedule_policy.py `PrefillAdder`; 8,192 tokens on
A100 / H100 / H200 and 16,384 on B200 by server_args.py's defaults), and launches that step's
ops once. `serving_tpot_ms` now prices that: while a request decodes, the other
`concurrency - 1` finish at 1 / output length per decode step (Poisson arrivals), each decode
step is followed by their GPU time and by E[steps] launches (1 - e^-m for m arrivals per
step, m = 0.2 at concurrency 100 over 504 tokens); only the `requests - concurrency`
replacements fall inside others' decodes, and the first wave (all prompts together, in
chunk-sized steps) stalls the first-wave requests. At concurrency 1 no other prefill runs
during a request's decode (the old rule charged one). Before -> after: Qwen3-235B 1k/1k at
concurrency 100 0.71 -> 0.85 (now in band), 1k/1k at 16 0.86 -> 0.92, 8k/1k at 16 / 64
0.86 / 0.84 -> 0.91 / 0.94, DeepSeek-R1 at concurrency 8-64 0.75-0.79 -> 0.77-0.81, while
Llama-3.1-70B TP8 at concurrency 16 moves out (1.29 -> 1.35) and at 100 1.08 -> 1.22: its
measured TPOT is above the decode step plus the prefills in both rules. On the 47 rows the
bench held before this change decode stays 39 of 47 in band (held out 31 of 39: one in, one
out). `serving_ttft_ms` prices the TTFT the same
way: DeepSeek-R1 at concurrency 4 (40 requests: InferenceX runs `--num-prompts $((CONC *
10))`) reads 1.31 / 1.00 / 1.32 (was 1.40 / 1.07 / 1.52): its first four prompts share one
step (1k) or four chunk-sized steps (8k); TTFT in band 6 -> 8 of 12. The rows whose run size
is not published (NIM's AIPerf runs, SGLang 0.4.1.post2) use the steady state alone.

**Held-out cases added with it** (SGLang cookbook pages, not used for any fit): Qwen3-Next-80B-A3B
bf16 TP8 on 8x B200 (SGLang 0.5.6, ShareGPT) read 1.25 at concurrency 1 and 1.74 at 100, its
TTFT 2.13; Kimi-K2 FP8 TP8 on 8x MI300X (SGLang 0.5.7 ROCm, random 1000/1000) reads 3.37 / 1.72
/ 0.90 at concurrency 1 / 16 / 100 and its TTFT 0.69.

**AMD Instinct efficiencies (no new constant, nothing fitted).** The AMD rows were charged
NVIDIA's kernel fractions (FlashMLA's HBM 0.90, DeepGEMM's 0.69 / 0.70) and, as the MI300X had no
scale-up preset, PCIe 5 (50 GB/s, 20 us) for every all-reduce. They now get the fractions measured
on ROCm kernels (`kvplan.perf.efficiency.device_efficiency`, the table above) and the xGMI mesh
(`kvplan.hardware.interconnect`, xgmi3: RCCL bus bandwidth 314 GB/s, 8 us custom all-reduce). \
Before ->
after: Kimi-K2 TP8 3.37 / 1.72 / 0.90 -> 2.98 / 2.03 / 1.10 at concurrency 1 / 16 / 100,
DeepSeek-V3 TP8 2.78 -> 2.87, Llama-3-8B decode 1.84 -> 1.71 (STREAM's 0.80) and prefill 1.67 ->
1.34 (AMD's max-achievable bf16 GEMM, 0.54 of the peak), Kimi-K2's TTFT 0.69 -> 0.82 (now in
band: TTFT 9 of 14). No NVIDIA row moved. By term: the xGMI link alone makes every TP8 row faster
(Kimi-K2 3.37 / 1.72 / 0.90 -> 3.86 / 1.93 / 1.04, DeepSeek-V3 2.78 -> 3.16); aiter's fused MoE
streams FP8 experts at 0.77 of the HBM peak, above DeepGEMM's 0.69 (concurrency 16 / 100: 1.93 /
1.04 -> 2.03 / 1.10); its least time per call, 67 us at 1-2 tokens, where the kernel floors gave
16 us, slows the small-batch steps (Kimi-K2 at concurrency 1 3.86 -> 2.98, DeepSeek-V3 at batch 4
3.23 -> 2.87). The published ROCm kernel numbers explain the prefill / TTFT rows; on the decode
rows they move some closer and some further, and what remains is not the kernels' bandwidth,
FLOPs or least times (below).

**Recurrent layers counted from SGLang's code (no new constant).** Qwen3-Next's 36 Gated
DeltaNet layers were charged five placeholder launched ops each, without their norms, and its
gated attention and gated shared expert were charged as Qwen3's. Read at SGLang 0.5.6 (the
rows' release; kvplan/perf/op_counts.py `GatedDeltaNetOps`, `output_gate_ops`,
`_shared_expert_gate_ops` quote the code), an eager extend step launches 30 ops per GDN mixer
at TP 8 (in_proj_qkvz and in_proj_ba, six reshape copies of the split q / k / v / z / b / a and
their cat, the conv and its input copy, the gating kernel, the state gather and scatter, 13 in
fla's chunk_gated_delta_rule, the gated norm, out_proj), 33 with the layer's norms and
all-reduce; its attention layers add the q / gate split copies, the sigmoid and the product
(14 per layer) and its MoE layers the shared expert's MLP, gate, sigmoid, product and add (16):
2,129 ops per step instead of 749. Decode now reads and writes each request's recurrent state
every step (conv state bf16, the 4 x 128 x 128 GDN state per rank in SGLang's default float32:
0.54 MB per request per layer) and charges the state update and the two GEMM kernels of the
mixer; the attention gate's four kernels are charged in decode too, the shared expert's gate is
not (it runs beside the routed experts on SGLang's second stream). Before -> after, all held
out: TTFT 2.13 -> 0.81 (now in band; it implies at most 56 us per op, as Qwen3-235B's 44-56 on
the same B200 hosts and release, against 161 before), decode at concurrency 1 1.25 -> 1.14, at
concurrency 100 1.74 -> 0.79 (now in band). No other row moves. Decode 42 of 52 in band, held
out 34 of 44; TTFT 9 of 14.

**TP all-reduce from measured custom all-reduce timings (no new constant).** Every NVLink
all-reduce was one ring formula with a preset 10 us (8 us on NVLink 5) that no measurement set.
vLLM and SGLang run decode-size all-reduces as their custom kernel (the same dispatch in both:
one-shot for 2 ranks, for <= 4 ranks under 512 KiB and <= 8 ranks under 256 KiB, else two-shot;
in SGLang NCCL above 8 MiB), and kvplan now charges that (kvplan/interconnect.py): one-shot
t1 + (n - 1) x bytes / bandwidth (each rank reads every peer's buffer), two-shot t2 + 2 (n - 1)
/ n x bytes / bandwidth. t1 and t2 are read from published CUDA-graph timings, after the bytes
term: on H100 5.7 / 13.1 us (the medians of vLLM PR 24111's ca_1stage / ca_2stage rows up to
1 MB at 2-6 ranks; no trend with the rank count), on B300 for NVLink 5 7.0 / 19.0 us (vLLM PR
37756, 16 KiB); no A100 timing in a graph was found, so NVLink 3 keeps 10 us (two-shot: two
rounds, 20 us). The bandwidths stay (360 GB/s on H100 is what NCCL's maintainer and nccl-tests
give, and what the one-shot slopes give). Before -> after: dense TP2 (NIM, H100) 0.85-0.89 ->
0.88-0.90; dense TP8 (Llama-3.1-70B, 8x A100) 1.16 / 1.35 / 1.22 at concurrency 1 / 16 / 100
(1000 in) -> 1.15 / 1.25 / 1.16 and 1.17 / 1.27 / 1.03 (8000 in, 1 / 16 / 64) -> 1.16 / 1.21
/ 1.00, now 6 of 6 in band: from batch 16 on (256 KiB per all-reduce, not under the 256 KiB
threshold) the engine's two-shot pays 21.9 us against the ring's 11.9 (at batch 15, 240 KiB, it
would be one-shot, 17.6 us), so the concurrency-16 row rides on that threshold; TP8 MoE on H200
(DeepSeek-R1, SGLang 0.5.7) 0.77-0.87 -> 0.77-0.89, the batch-1 engine timers (Feb / Apr 2025)
1.97 / 1.61 -> 2.07 / 1.69 (further out); Qwen3-235B on 8x B200 1.00-1.02 -> 1.02-1.04 at
concurrency 1, 1k/8k at 64 1.19 -> 1.08, 8k/1k at 64 0.94 -> 0.89, 1k/1k at 100 0.85 -> 0.80
(worse: two-shot at 800 KiB, 21 us against 10); Qwen3-Next at 100 1.74 -> 1.69; large EP
unchanged (its all-to-all keeps `latency_s`). Decode 42 of 52 in band, held out 34 of 44 (TP8
MoE without the layer overhead 12 -> 13 of 21); the prefill fit (59, 65, 74, 77 us, median
69.6) and the 1-GPU layer-overhead fit do not move. Not modelled: SGLang's FlashInfer fused
all-reduce + residual + RMSNorm, which recent releases turn on by default for DeepSeek-V3 and
Qwen3-MoE on SM 90 / SM 100 single-node TP (server_args.py, index file id 271536807; for
DeepSeek on SM 100 earlier, id 8356329): the bench's SGLang 0.5.6 / 0.5.7 MoE rows may run it,
with its own one-shot / two-shot switch and without the separate norm kernels kvplan charges.

**Held-out dense rows from three more sources (no new constant, the fit unchanged).**
AccelMark's committed results (an in-process engine, so no HTTP path): its "interactive"
scenario (one request at a time) and its "sustained" scenario (8 or 32 requests kept in flight
for 30 minutes; TPOT derived from the per-minute throughput) for vLLM 0.20.1 on an A100-80GB,
SGLang 0.5.6 on an A100-40GB and vLLM 0.19.1 on an RTX 5090, on Llama-3-8B (236-token ShareGPT
prompts), Llama-3.1-8B at 28,650-token prompts and Qwen2.5-0.5B; the LMSYS DGX Spark review
(SGLang FP8 on GB10, batch 1: Llama-3.1-8B 1.10, 70B 0.98); Tenstorrent's GPU reference run of
Qwen2.5-72B TP2 on 2x H100 under vLLM (1.02-1.03 from 128 to 8,192 tokens of context, flat as
measured). 18 of the 20 are in band: the A100 rows read 0.81-1.08 (the 28k-context rows 1.02 /
1.08, so the attention term holds at long context), the RTX 5090 8B rows 0.90-0.94. Held out,
decode is 51 of 64 in band (40 of 64 without the layer overhead). Two patterns, neither fixed:

- **Qwen2.5-0.5B on the A100s at batch 1, 0.83 (vLLM) / 0.81 (SGLang)**, and 0.82 for SGLang
  at concurrency 32 (vLLM's concurrency-32 row reads 1.08): an 896-wide model whose step is
  almost all kernel floors (24 layers x 11 kernels x 4 us = 1.06 of the 1.35 ms predicted
  without the layer overhead); its batch-1 residual over that is 16-20 us per layer, against
  29-43 us on the 8B fit rows. Part of what the fitted 35 us stands for grows with the layer
  (each GEMM's ramp-up and tail), which one constant per layer cannot follow; no published
  per-kernel time separates the two, so it stays one constant.
- **Qwen2.5-0.5B on the RTX 5090 host, 2.26 (batch 1) and 2.89 (concurrency 32)**: 5.1 ms per
  token where the A100 hosts take 1.8 ms, while the same runner's 8B rows on that GPU read
  0.90-0.94: a per-step floor of about 5 ms on that host (vLLM 0.19.1rc1.dev339 on a PyTorch
  2.12 nightly, Xeon Gold 6530), not a GPU term. kvplan does not model the host.

Left out: Gemma-4-31B TP2 on 2x H200 (SGLang cookbook; kvplan parses no gemma4 config), the
gpustack throughput pages (1,000 requests released at once: a queue, not a decode step), NIM's
Llama-3.1-8B table (the stored copy of the page lost its GPU / precision / length headings),
AccelMark's H100 / H200 / 8-GPU runs (vLLM 0.7.3, before 0.8), and blog tables whose own
numbers are impossible (a 70B FP8 model at 8 ms per token on one H100).

**More held-out MoE rows on NVIDIA GPUs (2025 H2-2026 engines, none used for a fit)**, from
three independent publishers: the SGLang cookbook (DeepSeek-R1-0528 FP8 and GLM-4.6 bf16 on 8x
B200, SGLang 0.5.6.post1; gpt-oss-120b on 8x B200, 0.5.6; Qwen3-Coder-Next bf16 TP 2 on 2x B200,
0.5.8; MiniMax-M2.5 FP8 `--tp 8 --ep 8` on 8x B200, 0.5.8, and 8x H100, 0.5.9), SemiAnalysis
InferenceX issue 828 (gpt-oss-120b, vLLM 0.15.1 with Marlin MXFP4, TP 2 / 4 / 8 on H100) and
Vultr's HGX B200 cookbook (MiniMax-M2.5 FP8 TP 4, vLLM 0.12.0): 50 decode rows and 13
concurrency-1 TTFTs. When added (the moe25 merge) 39 of the 50 and 8 of the 13 were in band;
with the later rules (recurrent layers, custom all-reduce, device efficiencies) 44 of 50 and 10
of 13; with the GLM rule 47 of 50. By group, as now generated: DeepSeek-R1 on B200 0.85-1.04 (9
of 9; 0.83-0.98 before capest67 priced SGLang's captured decode step, its shared expert on a
second stream, as `simulate` does); gpt-oss-120b under vLLM on H100 0.96-1.02 (9 of 9, TP 2,
4 and 8; a harness fidelity fix,
gptossgraph62: the rows now run the script's VLLM_MXFP4_USE_MARLIN=1 kernel, Marlin, where
they carried no option and priced Triton's default: predicted +0.06 / +0.08 / +0.12 ms at
concurrency 64 on TP 8 / 4 / 2, at most +0.03 ms elsewhere, 9 of 9 in band either way);
MiniMax-M2.5 0.99-1.27 on B200 (SGLang and vLLM, 9 of 9) and 0.92 / 0.92 / 0.69 on H100 at
concurrency 1 / 16 / 100;
GLM-4.6 1.02-1.17 (9 of 9, since the GLM rule below; 1.05-1.45, 6 of 9, before it); Qwen3-Coder-
Next TP 2 0.98-1.22 (9 of 9); gpt-oss-120b under SGLang on B200 0.61 / 0.59 (0 of 2). TTFT:
GLM-4.6 1.03-1.07 (0.97-1.02 before the GLM rule), MiniMax-M2.5 0.97-1.07, DeepSeek-R1 on B200
0.72-0.88, gpt-oss-120b 0.69, Qwen3-Coder-Next 0.58-0.98. Decode 108 of 122 in band, held out
100 of 114 (TP8 MoE 51 of 57, TP4 MoE 4 of 4, TP2 MoE 10 of 10); TTFT 19 of 27.

**Audit of the 70 rows added in issue #17 (and their 13 TTFTs) against their sources.** Every
measured value, statistic, length, request count, concurrency, GPU, TP / EP layout, dtype,
engine release and speculative setting was re-read: the SGLang cookbook pages at sgl-cookbook
7b5bd9c (38 rows, 13 TTFTs), the AccelMark result.json files and suite.json / loadgen.py at
5797fc4 (15 rows; the sustained TPOTs recomputed), the LMSYS DGX Spark post (2), Tenstorrent's
issue 143 table (3), InferenceX issue 828 with its sweep workflow and harness (9) and Vultr's
concurrency-tuning and methodology pages (3). Two errors fixed: gpt-oss-120b on H100
(InferenceX 828) ran at `--random-range-ratio 0.8`, so its mean lengths are 922 / 922 and 922
/ 7,372, not 1024 / 1024 and 1024 / 8192 (ratios 0.96-1.03 -> 0.96-1.02, all 9 in band before
and after); AccelMark's sustained sums took the last warm-up minute, which the result's
is_warmup flag leaves unflagged (RTX 5090 suite F 7.99 -> 7.50 ms, 3.07 -> 2.89, still out of
band; the other five within 0.5 %, A100-40GB suite F 0.83 -> 0.82). Flagged, not pinned by
the source: the lengths of the LMSYS rows (assumed 2048 / 128) and the tool that timed them;
the form factor (SXM taken; an H100 NVL is not excluded) and vLLM release of Tenstorrent's 2x
H100 rows; whether InferenceX 828's "TPOT (ms)" is the mean or the median; AccelMark's
sustained rows repeat their prompts with the prefix cache on (their prefills mostly cache hits,
charged in full). The older InferenceX rows (issue 870, DeepSeek-R1 on H200) ran the same
harness at ratio 0.8 and now use its mean lengths too (922 / 7,372): decode unchanged in band
(0.76-0.90), the 8k/1k TTFT 1.32 -> 1.40 (out of band).

One rule came with them, read from the engines' model code and not fitted: MiniMax-M2 normalises
q and k with one RMSNorm weight over all heads (config "qk_norm_type": "per_layer"), so under
attention TP the sum of squares is all-reduced between two kernels (SGLang models/minimax_m2.py
MiniMaxM2QKRMSNorm._forward_naive: two `.contiguous()` copies, `rms_sumsq_serial`,
`attn_tp_all_reduce`, `rms_apply_serial`; vLLM's MiniMaxText01RMSNormTP all-reduces the variance
too). kvplan now charges those 4 kernels and the all-reduce per layer (decode) and the same ops
in an eager prefill. It moved the MiniMax rows from 7 of 12 in band to 11 of 12 (B200
1.22-1.46 -> 1.03-1.24, vLLM TP 4 1.31-1.49 -> 1.16-1.24) and the H100 rows down (1.02 / 1.02 /
0.80 -> 0.84 / 0.89 / 0.70: the concurrency-100 row left the band); its TTFTs 1.17-1.29 ->
0.97-1.07. SGLang's `--ep 8` without `--moe-a2a-backend` (default `none`) "Uses All-Reduce or
All-Gather for token dispatch" (docs/advanced_features/expert_parallelism.md), which is the TP
layout's all-reduce, not the all-to-all kvplan charges for `ep`: those rows run as TP 8.

**SGLang's fused all-reduce + residual + RMSNorm (read from SGLang 0.5.6, not fitted).** For
DeepseekV3ForCausalLM (also Kimi-K2's config) on SM 10.x and GptOssForCausalLM on Blackwell,
single node without DP attention, SGLang 0.5.6 turns on `enable_flashinfer_allreduce_fusion`
(server_args.py; no other architecture does in that release), and its LayerCommunicator then
runs each TP all-reduce of a step of at most 2,048 tokens as one FlashInfer kernel with the
residual add and the RMSNorm after it (the post-attention norm; the MLP output's all-reduce is
deferred into the next layer's input norm). kvplan now drops the norm's kernel floor (decode)
or eager op (prefill) after each fused all-reduce, 2 x layers - 1 per step, for those
architectures on the B200 / B300 presets up to TP 8 (`AllReduceNormFusion`, SGLang's engine
efficiency); the all-reduce keeps its time. SGLang PR 7621 measured the fused kernel on B200 at
8.7 us against 13.5 us for the all-reduce and the norm. Rows that moved, all held out: gpt-oss-
120b on B200 0.61 / 0.59 -> 0.66 / 0.65 (still out), its TTFT 0.69 -> 0.77 (into the band);
DeepSeek-R1 on B200 (0.5.6.post1) 0.78-0.95 -> 0.80-0.98 (9 of 9 before and after), TTFT
0.88 / 0.72 -> 0.93 / 0.76 at 1000 in (into the band), 8000 in unchanged (over 2,048 tokens). No
row left the band; the layer-overhead and prefill-launch fits (1-GPU and H200 rows) do not move.
Decode 105 of 122 in band either way; TTFT 20 -> 22 of 27. Not modelled: the two DeepSeek-V3.1
rows on 8x H200 run with `--enable-flashinfer-allreduce-fusion` set by hand (SM 90 takes it
too; one is a prefill-fit row), later releases that turn it on for more architectures (0.5.9,
server_args.py: DeepseekV3, GptOss, Glm4Moe, Glm4MoeLite, Qwen3Moe, KimiK25 on SM 90 or SM 100,
`moe_a2a_backend == "none"`; not MiniMaxM2, so it does not explain the MiniMax-M2.5 H100 row's
0.70 under 0.5.9), vLLM's
fuse_allreduce_rms pass, and the RoPE kernel's KV-cache write (models/utils.py
enable_fused_set_kv_buffer for gpt_oss and qwen3_moe on CUDA with a bf16 cache: one floor per
layer less, which would also move every Qwen3-MoE SGLang row).

Why the new misses miss:

- **gpt-oss-120b under SGLang on 8x B200: 0.66 / 0.65** (0.61 / 0.59 before the fused
  all-reduce + RMSNorm rule below; 2.31 ms for 36 layers, 64 us per layer, against kvplan's 98:
  35 us layer overhead, seven 4-us small-kernel floors, four GEMM floors and the attention's, two
  7-us all-reduces). The cookbook's runs are plain `--tp 8` servers (no speculative decoding,
  no backend flags; bench_serving's default ShareGPT). What SGLang 0.5.6 launches per decode
  layer there (models/gpt_oss.py, server_args.py, layers/quantization/mxfp4.py): the fused
  all-reduce + residual + input RMSNorm; qkv_proj; RoPE, which also writes K and V into the
  cache (models/utils.py enable_fused_set_kv_buffer: CUDA and a bf16 cache); trtllm_mha
  attention with sinks; o_proj; the fused all-reduce + post-attention RMSNorm; the router GEMM;
  FlashInfer's mxfp8_quantize of the activations and trtllm_fp4_block_scale_moe (the
  flashinfer_mxfp4 runner SGLang picks on Blackwell for mxfp4 checkpoints; top-k is BYPASSED
  into it, routing and the final reduction run inside). kvplan still charges a separate KV
  write, residual add, top-k, permute and unpermute (about one floor more than that list, with
  the MoE kernel's internals unread), and the 35 us fitted on 1-GPU rows: without the layer
  overhead the rows read 1.02 / 0.71. The same model under vLLM on H100 reads 0.89-1.06, so the
  rest of the miss is the B200 + SGLang path's per-layer fixed time, not the model's bytes. Not
  refitted.
- **GLM-4.6 on 8x B200 at concurrency 1: 1.15-1.17, was 1.43-1.45** (14.8-15.0 ms, 161 us per
  layer), while Qwen3-235B-A22B on the same GPUs and a near release (0.5.6; both `--tp 8` alone,
  bf16, default backends) reads 1.02-1.04 (10.1-10.3 ms, 108 us per layer). kvplan predicted both
  alike (113 / 105 us per layer). A second rule read from the engine's code, not fitted, explains
  most of it. SGLang 0.5.6 (pip wheel) routes GLM-4.5 / 4.6 with a biased grouped top-k over 160
  experts in one group, which `moe_fused_gate` does not serve (at most 32 experts per group, a
  power of two: layers/moe/topk.py biased_grouped_topk_gpu), so it runs the torch.compile'd
  `biased_grouped_topk_impl`: three aten topk calls (five CUDA kernels: gatherTopK, and
  sortKeyValueInplace when sorted) and about five Inductor kernels, ~10 kernels where Qwen3-MoE's
  topk_softmax is one (`kvplan.perf.op_counts.topk_kernels`; the Inductor count is read from its
  generated code for the function on the CPU backend, no GPU being at hand: an estimate, not a
  profile; SGLang's own profile of the same PyTorch path for DeepSeek-V3 on H200 read "Only one
  kernel now. 36us->8us." when moe_fused_gate replaced it,
  https://github.com/sgl-project/sglang/pull/5371, against 10 x 4 us here). And on CUDA without
  EP it folds GLM's one shared expert into fused_moe as a 161st expert every token picks
  (models/glm4_moe.py determine_num_fused_shared_experts; off only with
  --disable-shared-experts-fusion, which server_args.py sets for the flashinfer_trtllm runner
  alone), so the shared MLP launches no GEMMs of its own (`fused_shared_expert`). Decode per MoE
  layer: Qwen3-MoE top-k 1 kernel, GLM 10; shared expert Qwen3 none, GLM 0 (kvplan had charged 2
  GEMM floors). Both models: qkv_proj, q/k RMSNorm on two streams after the reshape copies, RoPE,
  attention, o_proj, the all-reduces, the same fused_moe (Triton runner for bf16 on SM100).
  Not counted: Qwen3-MoE writes the KV cache inside its RoPE kernel (enable_fused_set_kv_buffer
  with a bf16 cache), GLM in a separate index copy (one more kernel for GLM on the critical path;
  kvplan charges both one), and GLM's QKV bias at one row, where PyTorch's addmm skips the
  cuBLASLt bias epilogue (`mat1_sizes[0] > 1`, aten/src/ATen/native/cuda/Blas.cpp, index file id
  4587928413) and copies the bias first (one more kernel at concurrency 1). Net +7 kernels, +28
  us per MoE layer: predicted 12.87 ms (140 us per layer), 1.15-1.17; at concurrency 16-100 the
  rows went 1.05-1.30 -> 1.02-1.17. The dense fit rows have no such layers, so neither fitted
  constant moves. The same rules apply to the eager prefill: no shared-expert ops (-4 per MoE
  layer); the compiled top-k is one call from the model code, counted as one op; and GLM's
  q_norm / k_norm, which Glm4MoeAttention runs when the config's use_qk_norm is true (GLM-4.5 /
  4.6; not GLM-4.5-Air), were not counted before (+2 per layer; decode lumps them with RoPE for
  every model): 1,910 -> 1,738 ops, GLM's TTFTs 0.97-1.02 -> 1.03-1.07 (1.13-1.16 with the
  shared-expert rule alone).
- **Qwen3-Coder-Next TP 2 (the Qwen3-Next architecture): in band since the recurrent-layer
  rule** (1.23-1.59, 5 of 9, when added with the five placeholder ops per Gated DeltaNet layer;
  1.00-1.22, 9 of 9, with the ops counted from SGLang 0.5.6's qwen3_next.py and every request's
  recurrent state read and written per decode step). Its TTFTs read 0.98 / 0.58 / 0.82 (1000 /
  1000, 1000 / 8000, 8000 / 1000; 1.40-2.37 before): the 1000 / 8000 run's 0.58 against the
  same prompts' 0.98 in the 1000 / 1000 run (95.5 against 161.7 ms measured) is the run-to-run
  spread of a client TTFT, as DeepSeek-R1's below.
- **MiniMax-M2.5 on 8x H100 at concurrency 100: 0.70** (SGLang 0.5.9): the H100 run is faster
  than the B200 run of 0.5.8 at concurrency 1 (8.05 against 9.89 ms), which no GPU-side term can
  produce; the releases differ.
- **DeepSeek-R1 TTFT on 8x B200, 1000 in / 8000 out: 0.76** (0.72 before the fused all-reduce
  + RMSNorm rule): the same prompts read 0.93 in the 1000/1000 run of the same page (153 against
  126 ms measured): run-to-run spread of the serving path, inside what the launch-time fit can
  say.

Why the remaining misses miss, as far as the public numbers show:

- **Qwen3-235B's concurrency-1 TTFT at 610 tokens, 0.67**: the launch time fitted on
  DeepSeek still overstates Qwen3-MoE's on those hosts (above: at most 43-56 us per op), and
  Kimi-K2's on an MI300X host under SGLang 0.5.7 (0.82: at most 53 us per op). All three
  newer-SGLang rows sit below the early-2025-weighted fit; not refitted here (one release
  family, client TTFTs with the serving path inside).
- **Qwen3-Next-80B-A3B at concurrency 100: 0.79, TTFT 0.81** (in band, predicted slower than
  measured): the same over-statement of the launch time per op on the B200 hosts; its prefill
  term holds 2,129 ops x 70 us per step, and at the 56 us its TTFT implies they would read
  0.94 / 1.01 (not refitted: one held-out row would set it). Its concurrency-1 decode reads
  1.14: SGLang 0.5.6 turns the overlap scheduler off for Qwen3-Next while the radix cache is
  on (server_args.py: "Disabling overlap schedule since MambaRadixCache is not compatible"),
  so each decode step's CPU scheduling is not hidden, which kvplan does not model
  (`step_overhead_s` is 0).
- **Kimi-K2 on 8x MI300X (ROCm SGLang 0.5.7) at concurrency 1 / 16: 2.98 / 2.03**, like
  DeepSeek-V3 on the same GPUs (2.87). The measured step barely grows with the batch (40.4 ms
  at concurrency 1, 46.9 at 16): a fixed ~40 ms per step, ~660 us per layer, against 13.6 ms
  predicted. aiter's own tuned-kernel tables (ROCm/aiter at e4048607,
  aiter/configs/model_configs, gfx942, 304 CUs) do not hold the rest: its fused MoE's least
  time (67 us) is now charged; its dense block-FP8 GEMMs at DeepSeek-V3's TP-8 decode shapes
  take 3.9-31 us (a8w8_blockscale_tuned_gemm_ds_v3.csv; 10-31 us at K = 7168) where kvplan
  charges two 4 us floors (quantization + GEMM), under ~1 ms per step more. That leaves
  ~26 ms per step (~430 us per layer) that no published ROCm kernel time explains; the run's
  trace is not public (the one MI300X DeepSeek-R1 breakdown found, SemiAnalysisAI/InferenceX
  issue 863, is an estimate made while its MI300X runners were down), so it is not modelled.
  The concurrency-100 row (1.10) is in band through the prefill term.
- **Llama-3.1-70B TP8 on 8x A100 (in band since the all-reduce rule, 1.15-1.25 at 1000 in)**:
  the decode step at concurrency 1 still reads 1.15 on this host; its collectives use the
  unmeasured 10 us (no A100 timing in a CUDA graph was found), and the page does not say
  whether the GPUs are SXM (NVSwitch) or PCIe.
- **Llama-3-8B on MI300X (ROCm SGLang, Oct 2024), 32 x 256 prefill: 1.34** (1.67 with the CUDA
  GEMM fraction): GPU-bound (8,192 tokens); AMD's max-achievable bf16 GEMM (708 of 1,307 TFLOPS,
  the clock falling to 1.2 GHz under dense load) brings it to the band's edge; that ROCm 6.2
  nightly stack's GEMMs reached about 0.39 of the peak where hipBLASLt's best is 0.54. Its
  decode at batch 32 (1.71) is bandwidth-bound, well below STREAM's 0.80.
- **Qwen3-8B TTFT, vLLM 0.11 at concurrency 1: 8.02**: vLLM runs a 233-token prefill in its
  piecewise CUDA graphs (7.4 ms predicted); the other 52 ms are the serving path (chat template,
  tokenization, scheduling, detokenizing and streaming the first token). **SGLang 0.5.3 at
  concurrency 4: 0.71**, the same over-statement as Qwen3-235B's. **NIM (TensorRT-LLM) 500
  tokens: 1.38**, 13 ms of serving path. No engine publishes both a client TTFT and its own
  prefill timer for one model and GPU here, so the serving path is not modelled as a term:
  one vLLM row (52 ms) and two NIM rows (12 / 89 ms) cannot fit a constant and check it.
- **SGLang's own decode timer, DeepSeek-V3/R1 at batch 1 on 8x H200, Feb / Apr 2025: 2.07 /
  1.69** (21.0 / 17.2 ms per step against 10.2 predicted), while the same timer in Dec 2025
  (DeepSeek-V3.1, batch 16) reads 0.83 and the Dec-2025 serving runs at concurrency 8-64
  0.77-0.81: the early-2025 engine's batch-1 step was slower than its kernels' bytes and floors
  (the Apr-2025 PR itself profiles several-microsecond quant and bmm kernels per layer). kvplan
  models today's kernels. The ROCm rows (DeepSeek-V3 TP8 on MI300X, Feb 2025: 2.87; Llama-3-8B
  on one MI300X, Oct 2024: 1.71) are held out under their own kinds: of the MI300X rows only
  Kimi-K2's concurrency-100 TPOT and its TTFT are in band.
- **DeepSeek-R1 1k/1k at concurrency 4 (runner h200-nv_0)**: the same issue measures 12.8 ms
  at concurrency 8 on another runner; 22.7 ms at half the load is that runner, not the model.
- **SGLang 0.4.1.post2 (Dec 2024), 0.89-3.25**: the release notes say "Using CUDA Graph and
  FP8 GEMM Tuning", so CUDA graphs were on and launch overhead does not explain a batch-1 step
  of 33 ms. That engine ran DeepSeek's MoE on Triton fused_moe with block-FP8 Triton GEMMs,
  before FlashMLA, DeepGEMM and the rewritten `moe_align_block_size`
  (https://github.com/sgl-project/sglang/pull/2735, Jan 2025;
  https://github.com/vllm-project/vllm/pull/12036 says the kernel was not yet CUDA-graph
  capturable there). No per-kernel time of those kernels was published, so kvplan does not
  model them. Its batch-32 row enters the band through the prefill term (32 eager 128-token
  prefills over 256 output tokens), not through a better decode step.

The GB200 large-EP run (EP 48) sits in one NVL72 NVLink domain: its all-to-all runs over NVLink
5, not InfiniBand (kvplan.hardware.interconnect.scale_up_gpus). Charged at InfiniBand it \
would read 0.40;
over NVLink it reads 1.68, inside the large-EP band but slower than predicted: its
single-batch overlap is not modelled, and 768 requests per GPU at 2,050 tokens make it the most
attention-heavy case here. NVIDIA NIM's Llama-3.3-70B fp8 TP2 (0.88-0.90) runs per-tensor FP8
GEMMs, charged DeepGEMM's block-scaled weight-streaming fraction (0.69); at 0.90 they read
0.95-1.07, but no published per-tensor FP8 GEMM bandwidth was found, so the default stays.

Not modelled: two-batch overlap of communication with compute, the serving path of a request
(HTTP, tokenization, scheduling, streaming), chunked prefill of prompts longer than the chunk
(no prompt here is longer than 8,192 tokens), vLLM's mixing of prefill chunks into decode
steps (its prefills are charged as steps of their own), finishes clumped in time when output
lengths barely vary (InferenceX's `--random-range-ratio 0.8`: the arrivals are taken as
Poisson), load imbalance between experts or ranks, the host CPU's speed (the launch time per
op is one constant).
"""

