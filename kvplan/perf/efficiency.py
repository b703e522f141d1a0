"""The achievable fractions of the datasheet peaks and the fitted constants of the time model
(`Efficiency`), with the presets per device (`device_efficiency`). kvplan.perf.roofline
charges each operation of a step with them.

Defaults and where they come from (all overridable with `Efficiency`):

- hbm 0.90: FlashMLA reaches 3,000 GB/s of the H800's 3.35 TB/s in its memory-bound
  configuration (https://github.com/deepseek-ai/FlashMLA, README);
- attention 0.60: the same kernel's compute-bound 580 TFLOPS (660 in the 2025-04 release) of the
  H800's 989 dense bf16 TFLOPS (0.59-0.67);
- gemm 0.70: DeepGEMM's FP8 GEMMs reach up to 1,550 of 1,979 TFLOPS on H800 at the best shapes
  and 0.5-0.75 of it at serving shapes (https://github.com/deepseek-ai/DeepGEMM, README);
  the same fraction is used for bf16 GEMMs;
- fp8_gemm_hbm 0.69: FP8 (block-scaled, w8a8) GEMMs at decode sizes stream their weights more
  slowly than a plain copy: DeepGEMM's README table (H800, the twelve DeepSeek-V3 shapes at
  M = 64 and 128) gives 1,509-2,668 GB/s, median 2,299 GB/s of the 3.35 TB/s HBM (0.69) -
  activation quantization, scale loads and the fp32 promotion of every 128-wide K block cost
  bandwidth. bf16 and weight-only GEMMs use `hbm`;
- kernel floor 4 us: the per-kernel time of short kernels launched from a CUDA graph (NVIDIA,
  "Getting Started with CUDA Graphs": 3.4 us per kernel,
  https://developer.nvidia.com/blog/cuda-graphs/), rounded up. It is a floor per *kernel*
  (kvplan.perf.roofline counts the kernels of each operation).
- prefill launch 63.2 us per launched op: FITTED. Engines replay decode steps from CUDA graphs,
  but SGLang runs every prefill (extend) batch eagerly (model_executor/cuda_graph_runner.py
  captures decode batch sizes only; server_args.py 0.5.x: enable_piecewise_cuda_graph = False,
  enable_mixed_chunk = False, so a prefill batch also runs apart from decode): each op is
  launched from Python (module call, PyTorch dispatch, custom-op wrapper). The step's CPU
  time is the ops SGLang's model code launches (kvplan.perf.op_counts.eager_prefill_ops,
  counted per architecture from its model files) x `prefill_launch_s`, and it is ADDED to the
  step's GPU time at the graph floor. The sum, not the max, because the fit data say so:
  charging max(GPU, CPU) needs 79-93 us per op for the three short DeepSeek prefills and
  137 us for the GPU-heavy 16 x 512 one; the sum needs 57-77 us for all four. 63.2 us is the
  median, over the 4 engine-timed prefills of examples/cost-bench.md (SGLang
  `bench_one_batch` "Prefill. latency", DeepSeek-V3/R1 on 8x H200, Feb / Apr / Dec 2025:
  1 x 128, 1 x 1000 twice, 16 x 512 tokens), of the value that makes each exact
  (`PREFILL_LAUNCH_FIT`; 70 us until MLA's replicated q_a / kv_a projections were charged
  whole on every TP rank, mlaproj62: refitted on the same 4 rows; 67 us until the norms' and
  the input quantization's bytes were charged on every rank, hopperops65: refitted on the same
  4 rows, the 16 x 512 one 69.9 -> 62.8 us; NOT refitted when
  moedefault63 made the experts' shape table the CUDA default, with which the same 4 rows give
  60.5 us: tests.benches.cost_bench.AS_FITTED keeps the fit's model). How the launch joins the
  GPU time is `prefill_launch_model`: "sum" here; "op_max" and "stream"
  (kvplan.perf.launch_model) are counterfactuals, refitted on the same 4 rows by
  tests/benches/launch_models.py (88 / 89 us). No other prefill or TTFT is in
  this fit; the benches' split holds out the Qwen3 / Llama ones, less the Qwen3-8B H100 TTFTs
  (the layer overhead's configuration), but not the DeepSeek-V3/R1 TP-8 H200 cases (these
  prefills' configuration). vLLM replays
  batches of up to max_cudagraph_capture_size tokens (default min(2 x max_num_seqs, 512):
  vllm/config/vllm.py `_set_cudagraph_sizes`) from piecewise CUDA graphs:
  `Efficiency(prefill_launch_s=0)`. TensorRT-LLM's PyTorch backend runs every step with a
  context request eagerly (CUDA graphs for generation-only batches only): it pays the same
  63.2 us per op, its ops counted from its own model code (kvplan.perf.trtllm_ops; not
  refitted). From SGLang 0.5.10 on, prefill steps
  replay piecewise CUDA graphs by default (server_args.py:637 `disable_piecewise_cuda_graph =
  False`; kvplan.engines.sglang.prefill_graph, `Efficiency.prefill_graph`): a captured step
  pays the same 63.2 us only for the ops launched outside its graphs
  (kvplan.perf.op_counts.graph_prefill_ops); the fit's rows ran earlier releases (both set
  by kvplan.perf.engine_traits.engine_efficiency). vLLM's longer prefills run its torch.compile'd
  code outside graphs, with fused ops; no measurement here times their launches, so they get
  none.
- layer overhead 35 us per decoder layer per step: FITTED, not read from a kernel table. It is
  the median, over the 8 dense single-GPU cases of examples/cost-bench.md (Qwen3-8B on an H100
  under vLLM 0.11, SGLang 0.5.3 and TensorRT-LLM 1.2.0rc1, Llama-2-7B under gpt-fast on an
  A100), of (measured TPOT - prediction without it) / layers: 29-43 us, median 35 us. It stands
  for per-layer work the operation list does not itemise (the router GEMM, q/k norms and
  residual adds counted as no kernel of their own, each GEMM's ramp-up and tail below its
  streaming rate, CPU gaps between graph replays; `LAYER_OVERHEAD_FIT`). No TP, MoE or EP case
  is in this fit, but the Qwen3-8B H100 TTFTs share its configuration and the DeepSeek TP-8
  H200 cases the prefill fit's: cost-bench.md's held-out split leaves both out.
  `Efficiency(layer_overhead_s=0)` removes it.

The fractions above are NVIDIA kernels' (FlashMLA, DeepGEMM, CUDA graphs) and are the defaults of
every CUDA preset but B200 / GB200's FP8 GEMMs (below). AMD Instinct presets get their own
(`device_efficiency`, `DEVICE_EFFICIENCY`), from ROCm kernel measurements; nothing in them is
fitted to the bench, whose MI300X rows stay held out. MI300X (CDNA 3, 304 CUs):

- hbm 0.80: STREAM on Azure ND MI300X v5 reaches Copy 4.11, Mul 4.26, Add 4.14, Triad 4.09 TB/s
  of 5.3 (0.78-0.80; the same harness on ND H100 v5: 2.90-2.97 of 3.35, 0.87-0.89), index file
  id 17849256347 (github.com/samuel-bohman/AI-benchmarking-guide, a fork of
  Azure/AI-benchmarking-guide, Azure_Results/ND_MI300X_v5_results.md); "MI300X achieves 81% of
  its theoretical peak memory bandwidth" with BabelStream (arXiv 2510.27583,
  https://arxiv.org/abs/2510.27583);
- gemm 0.54, fp8_gemm 0.49: AMD's Max-Achievable FLOPs, hipBLASLt at the best shape, MI300X
  "708 TFLOPs (1207 MHz)" bf16 and "1273 TFLOPs (1230 MHz)" FP8 of the 1,307.4 / 2,614.9 dense
  peaks (https://rocm.blogs.amd.com/software-tools-optimization/measuring-max-achievable-flops-
  part2/README.html, Table 1; the clock under dense GEMM load is 1.2 of the 2.1 GHz the peak
  assumes). A best-shape maximum, so at least as optimistic as NVIDIA's 0.70;
- fp8_gemm_hbm 0.77: aiter's fused block-FP8 MoE (the kernel that streams the FP8 expert weights
  on ROCm SGLang) in its own tuned table, ROCm/aiter
  aiter/configs/model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv at e4048607 (cu_num 304,
  model_dim 7168, inter_dim 2048, 33 experts, top-9): 4,102.9 / 4,091.9 / 4,002.3 GB/s at 16 /
  32 / 64 tokens, where every expert is touched (the table's `bw` counts all 33), median
  4,092 GB/s of 5.3 TB/s. aiter's dense block-FP8 GEMMs at DeepSeek-V3's TP-8 decode shapes
  (a8w8_blockscale_tuned_gemm_ds_v3.csv, gfx942, M = 64 and 128, 24 rows) are latency-bound
  instead: 3.9-31 us each, median 765 GB/s, 10-31 us at K = 7168 (not modelled: kvplan charges a
  w8a8 GEMM at least two 4 us floors). Its large dense ones stream more slowly than the MoE too
  (the gfx942 rows of all its block-FP8 GEMM tables with >= 40 MB of weights at M <= 128: median
  1,537 GB/s, best 3,258), so a dense FP8 model's decode on an MI300X is likely predicted faster
  than it runs: one fraction serves every w8a8 GEMM here, and the MoE's is the one the bench's
  MI300X rows stream most bytes through;
- moe floor 67.4 us: the least time of aiter's fused block-FP8 MoE (stage 1 + stage 2, the
  table's `us`) in its gfx942 tables, a8w8_blockscale_tuned_fmoe_glm5_1.csv (257 experts,
  inter_dim 256, top-9, the many-small-experts TP-8 shape: 67.4 / 71.1 us at 1 / 2 tokens) and
  _ds_v3.csv (33 experts, inter_dim 2048: 99.2 us at 1 token, bandwidth-bound); kvplan would
  otherwise charge the two grouped GEMMs and their quantizations 4 floors, 16 us. CUDA presets
  keep the floors (no NVIDIA fused-MoE table was read);
- attention 0.60 and the kernel floor 4 us are NVIDIA's: no ROCm measurement of an MLA decode
  kernel's compute fraction or of HIP-graph kernel spacing was found (aiter's smallest tuned
  GEMM kernels take 3.0-3.5 us, which a 4 us floor does not contradict).

MI325X (the MI300X die, HBM3E): gemm 0.645 / fp8_gemm 0.581 from the same AMD table ("843
TFLOPs", "1519 TFLOPs"); the rest carried over from the MI300X (aiter's cu_num-304 tables do not
say which of the two ran them). MI355X (CDNA 4): fp8_gemm_hbm 0.74 from the same aiter file's
gfx950 rows (cu_num 256, 257 experts, top-9, 128 tokens: 5,844 GB/s at inter_dim 256 and 6,001 at
512, of 8 TB/s) and the moe floor 56.8 us, the least `us` of those rows (inter_dim 512, 1 token;
77.5 us at inter_dim 256); no MI355X STREAM or MAF figure was found, so hbm and gemm are the
MI300X's.
Blackwell B200 / GB200 (SM 10.0): fp8_gemm 0.55, the FP8 block-scaled GEMM SGLang runs there
measured on a GB200 by SGLang itself. SGLang 0.5.8.post1 picks DeepGEMM first for a w8a8 block-FP8
linear layer (layers/quantization/fp8_utils.py:239-253 `_dispatch_auto_backend`; on Blackwell with
the weights' scales requantized to UE8M0, layers/deep_gemm_wrapper/configurer.py:24-25), and its
benchmark/kernels/deepseek/benchmark_deepgemm_fp8_gemm_blackwell.py times that call
(`w8a8_block_fp8_matmul_deepgemm`), run on GB200 at --tp-size 4 in
https://github.com/sgl-project/sglang/pull/13528 (merged): N 24,576, K 7,168, 146.03 us at M 1,024
and 260.38 us at M 2,048, i.e. 2 x M x N x K / t = 2,471 and 2,771 TFLOPS of the GB200's 5,000
dense FP8 (0.494, 0.554). The best is kept, as 0.70 is DeepGEMM's best on H800. The same table's
FlashInfer trtllm groupwise GEMM (not SGLang's default there) took 1,632.54 us at M 2,048 (442
TFLOPS). What this rests on: the stored copy of the PR's table (the issues index) holds its first
17 rows and is cut off at row 17 (M 4,096 of N 24,576) in every excerpt, so no row above M 2,048
was read and a prefill's larger GEMMs may run faster. Rows 0-8 are the other shape read, N 576,
K 7,168, M 8 to 4,096: 58.3-65.1 us throughout (M 4,096: 62.21 us, 2 x 4096 x 576 x 7168 / t =
544 TFLOPS, 0.11), the ~60 us floor of the benchmark's eager launches, like N 24,576's rows up
to M 256: they measure no FLOPs. The other Blackwell block-FP8 tables are cut off as early there:
vllm PR 31185's "Performance Blackwell" table holds one row (Out 2,048, In 1,024, batch 128:
FlashInfer TRT-LLM 5.09 us, 105 TFLOPS), CUTLASS issue 2923's reproduction of FlashInfer issue
2146 (B200) rows of Out 2,048 x In 1,024, batch 8 to 1,024, all under 10 us (launch-bound). None
reaches an M above 2,048 or a compute-bound shape besides the two rows above: 0.55 stands.
B200 (the same die at 1,000 W, its own 4,500 TFLOPS peak) carries the GB200's fraction: no B200
measurement of DeepGEMM was found. The fused FP8 MoE SGLang runs on SM 10.0
(--moe-runner-backend flashinfer_trtllm, server_args.py:1225-1234, flashinfer's
`trtllm_fp8_block_scale_moe`) has no published measurement that was found: the dense fraction
stands for it, as for every w8a8 GEMM. The rest are the CUDA defaults; B300 / GB300 (SM 10.3) keep
them all (no measurement) but the FP8 attention fraction. Nothing in it is fitted to a bench row.
FP8 attention on SM 10.x (B200, GB200, B300, GB300): fp8_attention 0.45 of the FP8 peak, the
fraction attention runs at where it computes in FP8 (SGLang's trtllm_mla prefill with an fp8
cache, kvplan.engines.sglang.mla_prefill; --fp8-attention). vLLM PR 31195 ("[SM100] Resubmit
FMHA FP8 prefill for MLA", https://github.com/vllm-project/vllm/pull/31195, merged Dec 2025;
the same FlashInfer trtllm_ragged_attention_deepseek kernel SGLang calls): the FP8 path's
"kernel level performance is about ~1.5x better" than its BF16 one on SM100 (its serving runs
were a little slower end to end, from the casts and quantizations around it, which kvplan
charges apart). kvplan charges that BF16 kernel `attention` 0.60 of the bf16 peak, so FP8 runs
at 1.5 x 0.60 of it, 0.90 of the bf16 peak, i.e. 0.45 of the FP8 peak (twice the bf16 one on
every SM 10.x preset). The ~1.5x is a rounded kernel-level figure, not a table; it is carried
to B300 / GB300 (SM 10.3: the same FP8 tensor-core rate as SM 10.0 in gpus.json), and to vLLM's
FP8-query GQA attention (TRT-LLM's FMHA on FP8 q/k/v, kvplan.engines.vllm.fp8_query: no GQA
FP8 measurement read; aiconfigurator's B200 vLLM 0.19.0 fp8-cache rows asked bf16 queries).
Other presets
keep `attention` for FP8 attention (None).
The engine and fitted constants (prefill launch, layer overhead) are the same for every device.
- moe_gemm 0.33 / fp8_moe_gemm 0.20: FITTED, the routed experts' grouped GEMMs where they are
  compute-bound (a prefill's thousands of tokens a rank), of the bf16 and the FP8 peak. The
  engines' fused MoE kernels reach far less than a dense GEMM's 0.70 there (the measured op
  scales linearly with the tokens at 4k-16k a rank: examples/moe-op-bench.md), and block-FP8
  experts gain far less than the FP8 peak's 2x over bf16 ones. Fitted on aiconfigurator's
  measured fused-MoE tables (github.com/ai-dynamo/aiconfigurator at 095f58a51, tests/data/moe_op/
  SOURCES.md), the H100 ones only (vLLM 0.19.0 Triton fused_moe, SGLang 0.5.9 Triton, TensorRT-LLM
  1.2.0rc5 CUTLASS; balanced routing, six checkpoints' expert shapes, MoE TP or EP <= 8):
  every case of 4,096-16,384 tokens a rank with bf16 (369) or block-FP8 (351) experts, the
  fraction at which the median of kvplan's price over the measured latency is 1
  (tests.benches.moe_op_bench.fit_moe_gemm: 0.333 / 0.203, kept to two places). The H200 and
  B200 tables are held out (moe-op-bench.md gives both columns). One fraction per format, for
  every engine: the engines' medians differ (at 0.70, H100 4k-16k bf16: SGLang 0.32, vLLM 0.67,
  TensorRT-LLM 0.70; FP8: 0.52 / 0.33 / 0.32), which one constant per format leaves as spread.
  Weight-only formats (experts dequantized to bf16 in the GEMM) take the bf16 one, unmeasured;
  FP4 (w4a4) experts keep `gemm`. The memory-bound regime (decode) is unchanged: only a step
  whose experts' FLOPs outlast their bytes at the lower fraction moves. OPT-IN (default None):
  judged after the constants were committed, on MoE serving rows (tests/benches/
  moe_gemm_bench.py, its docstring's figures), it brings TTFT closer on every set (the other
  publishers' prospective MoE runs' median |error| 66.7 -> 44.6 %, aiconfigurator's held-out
  aggregated MoE rows 36.5 -> 32.4 %, TPOT 14.5 -> 14.9 %) but makes the sim-to-real study's
  Mixtral stages' ITL worse (1.7 -> 7.8 %): the kernel tables say why, the fraction
  rises with the rows each expert computes, and Mixtral's 8 wide experts run near the dense
  0.70 (examples/moe-op-bench.md, "rows per expert"). A rule by the experts' GEMM shape is
  what the tables point at; one fraction per format is not made the default.
- moe_gemm_shape (MOE_GEMM_SHAPE; moeshape59): FITTED, the same experts' fraction by the rows
  each expert computes (T x top-k / experts, the grouped GEMM's M), a table per format in log2
  of the rows (kvplan.perf.moe_gemm_shape, its docstring: the fit cases, compute-bound by the
  measured latency's growth with the tokens, and the points): bf16 0.34 / 0.44 / 0.59 at 512 /
  1,024 / 2,048+ rows, block FP8 0.18 / 0.22 / 0.23 / 0.35 at 256 / 512 / 1,024 / 2,048+, the
  first point's below it. Fitted on the same H100 tables (H200 and B200 held out), every engine
  together. When set, it replaces `moe_gemm` / `fp8_moe_gemm`; never above the dense fraction.
  Judged after the tables were committed (tests/benches/moe_gemm_bench.py --compare shape),
  TTFT comes closer on the other publishers' prospective MoE runs (66.5 -> 52.3 %) but the
  sim-to-real Mixtral stages' ITL gets worse (1.7 -> 7.2 %), five of them saturating: Mixtral's
  wide experts run faster than the table pooled over narrower ones; it stayed opt-in. Judged
  again on held-out serving rows with a decision rule stated before the replay (moeshape62,
  tests/benches/moe_shape62.py): pooled held-out median |error| TTFT 45.2 -> 38.2 %, TPOT 18.2
  -> 15.2 %, the rule met, though the aggregated held-out rows alone get worse on TTFT (39.0 ->
  41.5 %; vLLM on Hopper 24.5 -> 42.3 %). THE DEFAULT of every CUDA device since moedefault63
  (CUDA_EFFICIENCY, the one place it is set; `--no-moe-gemm-by-rows` or
  `Efficiency(moe_gemm_shape=None)` turns it off). AMD presets keep None: the tables are H100
  kernels' (Triton / CUTLASS fused MoE), and no ROCm fused-MoE kernel was read for it.
- moe_gemm_by_engine (moeeng64): each engine's own experts' table in place of the pooled one
  (kvplan.engines.moe_shape: the same rule on that engine's H100 kernel rows alone, a point it
  has too few compute-bound cases for taken from the pooled table), chosen by the engine
  (CostTraits.experts_shape, applied by kvplan.perf.engine_traits.engine_efficiency). OPT-IN
  (default False); judged on held-out serving rows by tests/benches/moe_engine64.py, its
  decision rule stated before the replay, NOT met: pooled held-out Hopper agg + prospective
  TTFT median |error| 37.2 -> 38.6 %, both inside 35 -> 26, TPOT 18.9 -> 20.9 % (the agg held
  rows alone TTFT 51.5 -> 33.6 %; vLLM's gpt-oss H100 TTFT ratio 1.64 -> 1.31).
- mxfp4_experts_shape (MXFP4_EXPERTS_SHAPE; mxfp4tab65): FITTED, gpt-oss's MXFP4 (w4a16)
  experts' fraction by rows per expert AND per-rank width 2,880 / MoE TP (kvplan.perf.
  mxfp4_experts), on aiconfigurator's H100 w4a16_mxfp4 kernel rows, which fall less than 1 / TP;
  outside Marlin only. OPT-IN (default None): judged on held-out gpt-oss serving rows by
  tests/benches/mxfp4tab65.py, its rule stated before the replay, NOT met (pooled TTFT 49.9 ->
  50.3 %, TPOT 7.9 -> 8.3 %), though aggfaith64's paired TP trend mostly goes (H200 TP 1 -> 8
  slope 1.65 -> 2.51 becomes 1.91 -> 2.13).
- fp8_dense_gemm 0.48: FITTED, the dense (non-expert) w8a8 FP8 GEMMs' fraction of the FP8
  peak where they are compute-bound, on aiconfigurator's measured GEMM tables (095f58a51,
  tests/data/dense_op/SOURCES.md: the engines' own linear layer, its activation quantization
  included), the H100 ones only: vLLM 0.19.0, SGLang 0.5.9 and TensorRT-LLM 1.2.0rc5, per-tensor
  and block FP8 together, every row of M 4,096-16,384 (522: 29 weight shapes x 3 M x 2 formats x
  3 engines; every one compute-bound in kvplan's price at the fitted fraction), the fraction at
  which the median kvplan / measured is 1 (tests.benches.fp8_gemm_fit.fit_fp8_dense_gemm:
  0.483). One constant for both formats: the H100 tables' own (0.520 per-tensor, 0.468 block)
  differ by vLLM's block-FP8 kernel only (SGLang 0.54 / 0.57, TensorRT-LLM 0.40 / 0.44, vLLM
  0.59 / 0.44, medians of the achieved fraction), an engine x format spread no format rule
  removes. The H200 and B200 tables are held out (tests.benches.fp8_gemm_fit; the H200 alone
  would give 0.512); B200 keeps its preset's 0.55 (its tables' 0.31: no held-out card to fit
  it on). The routed experts keep `fp8_moe_gemm` / `fp8_gemm`. OPT-IN (default None: `fp8_gemm`,
  or `gemm`): judged on FP8 serving rows after it was committed (tests/benches/fp8_gemm_bench.py,
  on every SM 9.0 preset): the other publishers' prospective FP8 runs (46) TTFT |error| 44.6 ->
  43.0 %, TPOT 17.1 -> 17.1 %; aiconfigurator's aggregated FP8 rows (249, every 4th) TTFT 38.0 ->
  37.3 %, TPOT 15.2 -> 15.7 % (worse; its 147 held-out rows 13.1 -> 13.1 %): not the default.
`Efficiency.sm100_tables` (default None; b200rule65) is an OPT-IN rule for a B200 under vLLM:
block-FP8 dense GEMMs by shape, the eager TP all-reduce and the prefill attention's floor read
from aiconfigurator's vLLM 0.19.0 B200 kernel tables (kvplan.perf.sm100_tables, its docstring).
`Efficiency.gemm_shape` (default None) is an OPT-IN counterfactual: the bf16 weight GEMMs'
fraction by shape, from OpenXLA's measured H100 table (kvplan.perf.gemm_shape), in place of
`gemm`. No preset sets it; the layer overhead above was fitted with `gemm` 0.70.
An explicit `Efficiency` replaces the device's whole; `replace(device_efficiency(gpu), ...)`
changes one field.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kvplan._util.dtypes import GemmMath
from kvplan._util.errors import InputError
from kvplan._util.fitted import Fitted
from kvplan.engines.attention_kernel import (
    KvDtypeAttention,
    MlaDecodeLaunches,
    SharedExpertFusion,
    SparseMlaKernel,
    VarlenAttentionKernel,
)
from kvplan.engines.base import AllReduceNormFusion, PrefillOpCount
from kvplan.engines.moe_kernel import MoeKernels
from kvplan.engines.prefill_graph import PrefillGraph
from kvplan.engines.router_gemm import RouterGemmRule
from kvplan.engines.shared_stream import SharedExpertStream
from kvplan.hardware.gpus import GPU
from kvplan.perf.gemm_shape import GemmShapeEfficiency
from kvplan.perf.moe_gemm_shape import ExpertsShapeFraction, MoeGemmShape
from kvplan.perf.mxfp4_experts import Mxfp4ExpertsShape
from kvplan.perf.sm100_tables import Sm100KernelRates

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.moe_comm import MoeAllToAll
    from kvplan.weights.base import DpAttentionWeights

US = 1e-6

# The two fitted defaults of `Efficiency` (module docstring), each with the cost-bench cases it
# was fitted on (their labels, examples/cost-bench.md).
_COST_LAYER_OVERHEAD = (
    "Qwen3-8B bf16, vLLM 0.11, conc. 1",
    "Qwen3-8B bf16, vLLM 0.11, conc. 2",
    "Qwen3-8B bf16, vLLM 0.11, conc. 4",
    "Qwen3-8B bf16, vLLM 0.11, conc. 8",
    "Qwen3-8B bf16, SGLang 0.5.3, conc. 4",
    "Qwen3-8B bf16, TensorRT-LLM 1.2.0rc1, conc. 4",
    "Qwen3-8B-FP8, SGLang 0.5.3, conc. 4",
    "Llama-2-7B fp16, gpt-fast, batch 1",
)
_COST_PREFILL_LAUNCH = (
    "DeepSeek-R1 FP8 TP8, SGLang (Feb 2025, --enable-torch-compile), 1 x 128",
    "DeepSeek-V3 FP8 TP8, SGLang (Apr 2025), 1 x 1000",
    "DeepSeek-V3 FP8 TP8, SGLang (Apr 2025, DeepGEMM bmm), 1 x 1000",
    "DeepSeek-V3.1 FP8 TP8, SGLang (Dec 2025), 16 x 512",
)
LAYER_OVERHEAD_FIT = Fitted(
    value=35 * US,
    source="median per-layer residual of the dense 1-GPU decode cases "
           "(cost_bench.fitted_layer_overhead_s); commit 4927b82",
    fitted_on=_COST_LAYER_OVERHEAD)
PREFILL_LAUNCH_FIT = Fitted(
    value=63.2 * US,
    source="median launch time that makes each engine-timed SGLang prefill marked fit exact "
           "(cost_bench.fitted_prefill_launch_s); commit 458205f at 70 us, refitted on the same "
           "rows after MLA's q_a / kv_a projections were charged whole on every TP rank "
           "(mlaproj62: 69.58 -> 67.04 us) and after the norms' and input quantization's bytes "
           "were charged on every rank (kvplan.perf.norm_traffic, hopperops65: 67.04 -> "
           "63.19 us)",
    fitted_on=_COST_PREFILL_LAUNCH)

# The routed experts' compute-bound fractions (module docstring), fitted on kernel tables that
# are no bench row: fitted_on=(), the tables named in the source.
MOE_GEMM = 0.33
FP8_MOE_GEMM = 0.20
_MOE_TABLES = ("aiconfigurator 095f58a51 systems/data/h100_sxm/moe/{vllm/0.19.0, sglang/0.5.9, "
               "trtllm/1.2.0rc5}/moe_perf.parquet, balanced, 4,096-16,384 tokens a rank")
MOE_GEMM_FIT = Fitted(
    value=MOE_GEMM,
    source=f"bf16 experts, 369 cases of {_MOE_TABLES}: the fraction at which the median "
           "kvplan / measured is 1 (tests.benches.moe_op_bench.fit_moe_gemm: 0.333); H200 and "
           "B200 tables held out; commit 025ca10b",
    fitted_on=())
FP8_MOE_GEMM_FIT = Fitted(
    value=FP8_MOE_GEMM,
    source=f"block-FP8 experts, 351 cases of {_MOE_TABLES}: the fraction at which the median "
           "kvplan / measured is 1 (tests.benches.moe_op_bench.fit_moe_gemm: 0.203); H200 and "
           "B200 tables held out; commit 025ca10b",
    fitted_on=())

# The routed experts' fraction by rows per expert (kvplan.perf.moe_gemm_shape, its docstring):
# (rows per expert, fraction of the bf16 / FP8 peak) per point, fitted on the same H100 tables'
# compute-bound cases (tests.benches.moe_shape_fit), kept to two places. The default of every
# CUDA device (CUDA_EFFICIENCY, moedefault63; module docstring); `Efficiency()` has none.
MOE_GEMM_SHAPE_BF16 = ((512, 0.34), (1024, 0.44), (2048, 0.59), (4096, 0.59))
MOE_GEMM_SHAPE_FP8 = ((256, 0.18), (512, 0.22), (1024, 0.23), (2048, 0.35), (4096, 0.35))
_MOE_SHAPE_TABLES = ("aiconfigurator 095f58a51 systems/data/h100_sxm/moe/{vllm/0.19.0, "
                     "sglang/0.5.9, trtllm/1.2.0rc5}/moe_perf.parquet, balanced, the cases "
                     "compute-bound by the measured latency's growth with the tokens")
MOE_GEMM_SHAPE_BF16_FIT = Fitted(
    value=MOE_GEMM_SHAPE_BF16,
    source=f"bf16 experts, 183 cases of {_MOE_SHAPE_TABLES}: per power of two of rows per "
           "expert the median fraction at which kvplan's price is the measured latency "
           "(tests.benches.moe_shape_fit.fit_table: 0.339, 0.436, 0.589, 0.589); H200 and B200 "
           "tables held out",
    fitted_on=())
MOE_GEMM_SHAPE_FP8_FIT = Fitted(
    value=MOE_GEMM_SHAPE_FP8,
    source=f"block-FP8 experts, 266 cases of {_MOE_SHAPE_TABLES}: per power of two of rows "
           "per expert the median fraction at which kvplan's price is the measured latency "
           "(tests.benches.moe_shape_fit.fit_table: 0.184, 0.218, 0.231, 0.346, 0.346, the "
           "last two pooled); H200 and B200 tables held out",
    fitted_on=())
MOE_GEMM_SHAPE = MoeGemmShape(
    bf16=ExpertsShapeFraction(rows=tuple(m for m, _ in MOE_GEMM_SHAPE_BF16),
                              fractions=tuple(f for _, f in MOE_GEMM_SHAPE_BF16)),
    fp8=ExpertsShapeFraction(rows=tuple(m for m, _ in MOE_GEMM_SHAPE_FP8),
                             fractions=tuple(f for _, f in MOE_GEMM_SHAPE_FP8)))
# gpt-oss's MXFP4 experts by per-rank width (kvplan.perf.mxfp4_experts; OPT-IN, mxfp4tab65):
# (width, ((rows per expert, fraction of the bf16 peak), ...)), fitted per width 2,880 / MoE TP
# on the H100 w4a16_mxfp4 kernel rows (tests.benches.mxfp4tab65 `fit`), kept to two places.
MXFP4_EXPERTS_SHAPE_POINTS = (
    (360, ((256, 0.25), (512, 0.26), (1024, 0.26), (2048, 0.26))),
    (720, ((256, 0.32), (512, 0.33), (1024, 0.33), (2048, 0.33))),
    (1440, ((256, 0.36), (512, 0.36), (1024, 0.36), (2048, 0.37))),
    (2880, ((256, 0.41), (512, 0.41), (1024, 0.42), (2048, 0.42))))
MXFP4_EXPERTS_SHAPE = Mxfp4ExpertsShape.of(MXFP4_EXPERTS_SHAPE_POINTS)
MXFP4_EXPERTS_SHAPE_POINTS_FIT = Fitted(
    value=MXFP4_EXPERTS_SHAPE_POINTS,
    source="w4a16_mxfp4 experts of gpt-oss-120b / -20b, MoE TP 1 / 2 / 4 / 8, aiconfigurator "
           "095f58a51 systems/data/h100_sxm/moe/{vllm/0.24.0, sglang/0.5.14, trtllm/1.2.0rc5}/"
           "moe_perf.parquet, balanced (tests/data/moe_mxfp4): per width and power of two of "
           "rows per expert the median fraction at which kvplan's price is the measured latency "
           "over the compute-bound cases (tests.benches.mxfp4tab65.fit, moe_shape_fit's rule); "
           "H200 and B200 rows held out",
    fitted_on=())
# The dense FP8 GEMMs' compute-bound fraction (module docstring): kernel tables, no bench row.
FP8_DENSE_GEMM = 0.48
FP8_DENSE_GEMM_FIT = Fitted(
    value=FP8_DENSE_GEMM,
    source="per-tensor and block FP8 dense GEMMs, 522 rows of M 4,096-16,384 of aiconfigurator "
           "095f58a51 systems/data/h100_sxm/gemm/{vllm/0.19.0, sglang/0.5.9, trtllm/1.2.0rc5}/"
           "gemm_perf.parquet (tests/data/dense_op): the fraction at which the median kvplan / "
           "measured is 1 (tests.benches.fp8_gemm_fit.fit_fp8_dense_gemm: 0.483); H200 and "
           "B200 tables held out",
    fitted_on=())


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """Achievable fractions of the datasheet peaks (see the module docstring for sources)."""

    hbm: float = 0.90
    fp8_gemm_hbm: float = 0.69
    gemm: float = 0.70
    fp8_gemm: float | None = None  # FP8 (w8a8) GEMMs' fraction of the FP8 peak; None: `gemm`
    attention: float = 0.60
    # FP8 attention's fraction of the FP8 peak (an FP8 KV-dtype kernel, --fp8-attention);
    # None: `attention`.
    fp8_attention: float | None = None
    kernel_floor_s: float = 4 * US
    # Least time of one fused-MoE call at decode sizes, measured; None: its kernels' floors.
    moe_floor_s: float | None = None
    # CPU time per op of a prefill step launched from Python (SGLang): FITTED (docstring).
    prefill_launch_s: float = PREFILL_LAUNCH_FIT.value
    # How that launch time joins the step's GPU time (kvplan.perf.launch_model.LAUNCH_MODELS):
    # "sum", the fitted rule; the others are counterfactuals for tests/benches/launch_models.py.
    prefill_launch_model: str = "sum"
    # The engine replays prefill steps from piecewise CUDA graphs (SGLang 0.5.10 on by default,
    # kvplan.engines.sglang.prefill_graph): a step it captures launches only the ops
    # kvplan.perf.op_counts.graph_prefill_ops counts. None: every prefill op is launched.
    prefill_graph: PrefillGraph | None = None
    # Whose model code counts an eager prefill step's ops (kvplan.engines.base.PrefillOpCount;
    # set by kvplan.perf.engine_traits.engine_efficiency).
    prefill_op_count: PrefillOpCount = PrefillOpCount.sglang
    # Host time per kernel of a vLLM step above its largest CUDA graph (the compiled model run
    # with no graph: kvplan.perf.vllm_ungraphed); 0, off (the default: opt-in, not a default
    # rule until serving rows held out say so; VLLM_UNGRAPHED_LAUNCH_S is the derived price).
    ungraphed_launch_s: float = 0.0
    layer_overhead_s: float = LAYER_OVERHEAD_FIT.value  # fitted on the dense 1-GPU bench cases
    step_overhead_s: float = 0.0  # engine time per step outside the GPU (scheduling, sampling)
    # The engine's fused all-reduce + RMSNorm, where it has one
    # (kvplan.perf.engine_traits.engine_efficiency); None: none.
    allreduce_norm_fusion: AllReduceNormFusion | None = None
    # The engine runs EP's all-to-all only under data-parallel attention
    # (kvplan.engines.base.CostTraits.ep_all_to_all_needs_dp); False: always.
    ep_all_to_all_needs_dp: bool = False
    # The engine's shared experts on a second stream in a captured decode step
    # (kvplan.perf.engine_traits.shared_expert_overlap); None: in series.
    shared_expert_stream: SharedExpertStream | None = None
    # A prefill step's MLP layers gather by all-reduce, with no all-to-all
    # (kvplan.engines.base.CostTraits.prefill_mlp_all_reduce; kvplan.perf.roofline).
    prefill_mlp_all_reduce: bool = False
    # A decode step's MLP layers gather by all-gather + reduce-scatter, with no all-to-all
    # (kvplan.engines.base.CostTraits.decode_mlp_gather; kvplan.perf.roofline).
    decode_mlp_gather: bool = False
    # The engine's varlen attention kernels by GPU (kvplan.engines.base.CostTraits.
    # attention_kernels, priced by kvplan.perf.attention_kernel); (): exact pairs.
    attention_kernels: tuple[VarlenAttentionKernel | SparseMlaKernel, ...] = ()
    # The engine's attention kernels that compute in the KV cache's dtype, for its version
    # (kvplan.engines.base.CostTraits.kv_dtype_attention, kvplan.perf.attention_kernel.
    # attention_math); (): bf16 attention.
    kv_dtype_attention: tuple[KvDtypeAttention, ...] = ()
    # The kernels the engine's absorbed-MLA decode launches per layer beyond kvplan's count, by
    # GPU, architecture and heads per rank, for its version (kvplan.engines.base.CostTraits.
    # mla_decode_launches, kvplan.perf.attention_kernel.mla_decode_extra_kernels); (): none.
    mla_decode_launches: tuple[MlaDecodeLaunches, ...] = ()
    # Where the engine runs a shared expert inside its fused MoE, by GPU and architecture, for
    # its version (CostTraits.shared_expert_fusion, kvplan.perf.shared_fusion); (): nowhere.
    shared_expert_fusion: tuple[SharedExpertFusion, ...] = ()
    # The engine's choice of fused MoE by experts' format, release, GPU and layout
    # (kvplan.engines.base.CostTraits.moe_kernel, priced by kvplan.perf.moe_kernel) and the
    # release it answers for (None: the newest); None: the experts' GEMM FLOPs and weights only.
    moe_kernel: MoeKernels | None = None
    engine_version: str | None = None
    # The engine's float32 MoE routers by architecture and release (kvplan.engines.router_gemm,
    # priced by kvplan.perf.router_cost at the card's FP32 peak); None: the router's bytes only.
    router_gemm: RouterGemmRule | None = None
    # Where the engine keeps its dense MLPs (with the shared experts) and lm_head under DP
    # attention (kvplan.engines.base.EngineRules.dp_attention_weights, priced by
    # kvplan.perf.roofline); None: whole on every rank, as DpAttentionWeights().
    dp_attention_weights: DpAttentionWeights | None = None
    # The MoE all-to-all the engine's launch selects (kvplan.engines.moe_comm; SGLang's DeepEP),
    # priced on the MoE layers in place of the engine's default (kvplan.perf.roofline).
    moe_a2a: MoeAllToAll | None = None
    # OPT-IN counterfactual (issue 30): the bf16 weight GEMMs' fraction by shape, in place of
    # `gemm` (kvplan.perf.gemm_shape; a preset's in DEVICE_GEMM_SHAPE). None: `gemm`, today's.
    gemm_shape: GemmShapeEfficiency | None = None
    # The routed experts' grouped GEMMs' fraction of the peak where they compute at bf16
    # (`moe_gemm`) or FP8 (`fp8_moe_gemm`, w8a8 block-FP8 experts), FITTED on measured fused-MoE
    # kernel tables (MOE_GEMM_FIT / FP8_MOE_GEMM_FIT, module docstring). None: `gemm` /
    # `fp8_gemm`, the dense GEMMs' fractions. FP4 experts keep `gemm`.
    moe_gemm: float | None = None
    fp8_moe_gemm: float | None = None
    # The routed experts' fraction by rows per expert (kvplan.perf.moe_gemm_shape; MOE_GEMM_SHAPE,
    # FITTED on kernel tables), in place of `moe_gemm` / `fp8_moe_gemm`. None: those (this
    # class's default; every CUDA device's preset sets it, CUDA_EFFICIENCY).
    moe_gemm_shape: MoeGemmShape | None = None
    # Each engine's own table (kvplan.engines.moe_shape, CostTraits.experts_shape) in place of
    # `moe_gemm_shape` where that is set (kvplan.perf.engine_traits.engine_efficiency; moeeng64,
    # module docstring). False: the pooled table (OPT-IN).
    moe_gemm_by_engine: bool = False
    # OPT-IN (mxfp4tab65): MXFP4 experts' fraction by rows per expert and per-rank width
    # (kvplan.perf.mxfp4_experts; MXFP4_EXPERTS_SHAPE, FITTED on kernel rows) in place of the
    # bf16 table for w4a16 experts outside Marlin. None: the bf16 table (today's).
    mxfp4_experts_shape: Mxfp4ExpertsShape | None = None
    # OPT-IN (issue 30): the dense (non-expert) FP8 GEMMs' fraction of the FP8 peak, FITTED on
    # measured GEMM tables (FP8_DENSE_GEMM_FIT, module docstring). None: `fp8_gemm`, today's.
    fp8_dense_gemm: float | None = None
    # OPT-IN (issue 30, b200rule65): B200 rates read from vLLM 0.19.0's kernel tables for the
    # dense FP8 GEMMs by shape, the TP all-reduce of an eager step and the prefill attention's
    # floor (kvplan.perf.sm100_tables). None: today's pricing.
    sm100_tables: Sm100KernelRates | None = None

    def __post_init__(self) -> None:
        for name in ("hbm", "fp8_gemm_hbm", "gemm", "attention"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise InputError(f"{name} efficiency must be in (0, 1], got {value}")
        for name in ("fp8_gemm", "fp8_attention", "moe_gemm", "fp8_moe_gemm",
                     "fp8_dense_gemm"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= 1:
                raise InputError(f"{name} efficiency must be in (0, 1], got {value}")
        if self.moe_floor_s is not None and self.moe_floor_s < 0:
            raise InputError(f"moe_floor_s must be >= 0, got {self.moe_floor_s}")
        if self.prefill_launch_model not in ("sum", "op_max", "stream"):
            raise InputError(f"prefill_launch_model must be sum, op_max or stream, got "
                             f"{self.prefill_launch_model!r}")
        for name in ("kernel_floor_s", "prefill_launch_s", "layer_overhead_s",
                     "step_overhead_s", "ungraphed_launch_s"):
            value = getattr(self, name)
            if value < 0:
                raise InputError(f"{name} must be >= 0, got {value}")

    def experts_fraction(self, ran: GemmMath, rows: float, dense: float,
                         fitted_fp8: bool = False, mxfp4_width: int = 0) -> float:
        """The fraction the routed experts' grouped GEMMs run at, computing in `ran` with
        `rows` rows per expert, where a dense GEMM would run at `dense`: the shape table
        (`moe_gemm_shape`, never above `dense`) where set, else the one fraction per format
        (`moe_gemm` / `fp8_moe_gemm`) where set, else FP8_MOE_GEMM for FP8 math in a kernel
        that runs at it (`fitted_fp8`: kvplan.perf.moe_kernel.fitted_fp8_experts), else
        `dense`. FP4 experts: `dense`. `mxfp4_width`: MXFP4 experts computing at bf16 outside
        Marlin, their per-rank width (0: not them), priced by `mxfp4_experts_shape` where set."""
        if mxfp4_width and ran is GemmMath.bf16 and self.mxfp4_experts_shape is not None:
            return min(dense, self.mxfp4_experts_shape.fraction(rows, mxfp4_width))
        shape = self.moe_gemm_shape
        if shape is not None and ran in (GemmMath.bf16, GemmMath.fp8):
            return min(dense, (shape.bf16 if ran is GemmMath.bf16 else shape.fp8).fraction(rows))
        if ran is GemmMath.bf16 and self.moe_gemm is not None:
            return self.moe_gemm
        if ran is GemmMath.fp8 and self.fp8_moe_gemm is not None:
            return self.fp8_moe_gemm
        if ran is GemmMath.fp8 and fitted_fp8:
            return FP8_MOE_GEMM
        return dense


DEFAULT_EFFICIENCY = Efficiency()
# Every CUDA device's base (the CUDA presets' and a CUDA GPU given by its size): the defaults
# with the routed experts' fraction by rows per expert (MOE_GEMM_SHAPE), the default since
# moedefault63 (moeshape62's held-out rule met: module docstring). The one place it is set;
# the Blackwell presets below are built on it. AMD presets keep None: the table was fitted on
# NVIDIA H100 fused-MoE kernels only (aiconfigurator's h100_sxm tables), none of ROCm's.
CUDA_EFFICIENCY = Efficiency(moe_gemm_shape=MOE_GEMM_SHAPE)

# AMD Instinct presets: achievable fractions from ROCm kernel measurements, and Blackwell SM 10.0
# ones from SGLang's GB200 DeepGEMM benchmark (module docstring: sources, and which values are
# carried over). Every other CUDA preset gets CUDA_EFFICIENCY.
MI300X_EFFICIENCY = Efficiency(hbm=0.80, fp8_gemm_hbm=0.77, gemm=0.54, fp8_gemm=0.49,
                               moe_floor_s=67.4 * US)
# FP8 attention on SM 10.x: TRT-LLM's FP8 FMHA ~1.5x its BF16 one (vllm PR 31195), over the
# FP8 peak (2x bf16): 0.60 x 1.5 / 2.
SM100_FP8_ATTENTION = 0.45
# GB200 DeepGEMM: 2,771 of 5,000 dense FP8 TFLOPS (sglang PR 13528), carried to the B200.
BLACKWELL_EFFICIENCY = replace(CUDA_EFFICIENCY, fp8_gemm=0.55, fp8_attention=SM100_FP8_ATTENTION)
BLACKWELL_ULTRA_EFFICIENCY = replace(CUDA_EFFICIENCY, fp8_attention=SM100_FP8_ATTENTION)
DEVICE_EFFICIENCY: dict[str, Efficiency] = {
    "MI300X": MI300X_EFFICIENCY,
    "MI325X": replace(MI300X_EFFICIENCY, gemm=0.645, fp8_gemm=0.581),
    "MI355X": replace(MI300X_EFFICIENCY, fp8_gemm_hbm=0.74, moe_floor_s=56.8 * US),
    "B200": BLACKWELL_EFFICIENCY,
    "GB200": BLACKWELL_EFFICIENCY,
    "B300": BLACKWELL_ULTRA_EFFICIENCY,
    "GB300": BLACKWELL_ULTRA_EFFICIENCY,
}


def device_efficiency(gpu: GPU) -> Efficiency:
    """The achievable fractions kvplan assumes on `gpu`: its preset's in DEVICE_EFFICIENCY,
    else CUDA_EFFICIENCY on a CUDA device, else DEFAULT_EFFICIENCY (no experts' shape table)."""
    preset = DEVICE_EFFICIENCY.get(gpu.name)
    if preset is not None:
        return preset
    return CUDA_EFFICIENCY if gpu.platform == "cuda" else DEFAULT_EFFICIENCY
