"""Which Triton compiles of vLLM's fused-MoE GEMM a step triggers (issue 30): a pure rule, the
set of compiled kernels per replica and the keys a step's MoE call needs; the simulator
(kvplan.analysis.simulate.moe_jit) stalls a step that meets a key not compiled yet. Read in
the vLLM 0.15.1 wheel (vllm/model_executor/layers/fused_moe/) and the Triton it runs (torch
2.9.1 pins triton==3.5.1 on Linux x86_64):

- What a compile is keyed on. `fused_moe_kernel` (fused_moe.py:314-368) is `@triton.jit` with no
  do_not_specialize. Triton 3.5.1 keys a launch on its constexprs and on each plain int:
  `== 1` becomes the constant 1, else `i32` with "D" when `% 16 == 0` (runtime/jit.py:353-366,
  backends/compiler.py:82-90 get_arg_specialization), each pointer likewise on 16-byte
  alignment. invoke_fused_moe_triton_kernel (fused_moe.py:725-830) passes the config's
  BLOCK_SIZE_M / N / K, GROUP_SIZE_M, num_warps, num_stages as launch constants, and as ints
  N, K, the strides (fixed by the weights and the hidden size, not by the step), EM and
  num_valid_tokens: only the last two move with the step's tokens. The pointers are fresh
  allocations or workspace views from offset 0 (TritonExperts.apply, fused_moe.py:2053-2058):
  aligned always. So a kernel is compiled once per (GEMM, config, EM % 16 == 0,
  num_valid_tokens % 16 == 0), the first time that is met; the 32 layers share it.
- The two GEMMs (TritonExperts.apply, 2029-2122): w13 on the M tokens with top_k, w2 on the
  M x top_k rows of the activation with top_k 1, both under the one config
  try_get_optimal_moe_config picks for M: the tuned table for (E, N = the expert's
  intermediate size per rank, device) when one is shipped, its key nearest M
  (`min(configs.keys(), key=lambda x: abs(x - M))`, 1314: the smaller on a tie, the keys
  ascending). num_valid_tokens = M x top_k for both (M x top_k x 1 for w2). EM =
  sorted_token_ids.size(0) = M x top_k + E x (BLOCK_SIZE_M - 1) (moe_align_block_size.py:74),
  capped at M x top_k x BLOCK_SIZE_M when M x top_k < E (77-80), and again at A.size(0) x
  top_k x BLOCK_SIZE_M when the GEMM's own rows A.size(0) are fewer than BLOCK_SIZE_M
  (fused_moe.py:769-777).
- What start-up compiles (v1/worker/gpu_worker.py:414-452 compile_or_warm_up_model): the
  profile run at max_num_batched_tokens (gpu_model_runner.py profile_run), no extra warm-up
  size (the only compile range is [1, max_num_batched_tokens], config/vllm.py:1235-1276, and
  it holds a capture size), then the CUDA-graph capture at each capture size
  (kvplan.engines.vllm.budget.vllm_cuda_graph_sizes). A step of at most the largest capture
  size runs padded to the next one (compiled at start); a larger step runs eager at its own
  token count M, and compiles there what start-up did not.
- Every TP rank compiles the same kernel at once, each on its own CPU: the step waits one
  compile per new key, in the order the step meets them (w13 then w2). The compile time is
  not in the code (kvplan.analysis.simulate.moe_jit takes it as an input); a Triton cache left
  on disk by an earlier server would make it a load, which the rule does not know about.

The tables shipped for the shapes simulated here (configs/E=8,N=7168 / 3584 / 2048,
device_name=NVIDIA_H100_80GB_HBM3.json: Mixtral-8x7B at TP 2 / TP 4, Mixtral-8x22B at TP 8)
are copied below; another shape, device or vLLM version is refused, not guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvplan._util.errors import InputError

# (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M, num_warps, num_stages)
Config = tuple[int, int, int, int, int, int]

# vLLM 0.15.1 fused_moe/configs/E=8,N={N},device_name=NVIDIA_H100_80GB_HBM3.json, key -> config.
_H100: dict[int, tuple[tuple[int, Config], ...]] = {
    7168: ((1, (16, 64, 128, 64, 4, 4)), (2, (16, 128, 128, 32, 8, 4)),
           (4, (16, 32, 256, 16, 4, 4)), (8, (16, 128, 128, 32, 8, 4)),
           (16, (16, 128, 128, 1, 4, 4)), (24, (16, 128, 128, 1, 4, 4)),
           (32, (16, 128, 128, 1, 4, 4)), (48, (32, 128, 128, 1, 4, 4)),
           (64, (32, 128, 128, 1, 4, 4)), (96, (32, 128, 128, 64, 4, 4)),
           (128, (64, 128, 128, 1, 4, 4)), (256, (64, 128, 128, 64, 4, 4)),
           (512, (64, 256, 64, 32, 4, 4)), (1024, (128, 256, 64, 16, 8, 4)),
           (1536, (128, 256, 64, 64, 8, 4)), (2048, (128, 256, 64, 32, 8, 4)),
           (3072, (128, 256, 64, 64, 8, 4)), (4096, (128, 256, 64, 16, 8, 4))),
    3584: ((1, (16, 64, 256, 64, 4, 4)), (2, (16, 256, 64, 32, 4, 4)),
           (4, (16, 64, 256, 16, 4, 4)), (8, (16, 64, 128, 1, 4, 4)),
           (16, (16, 64, 128, 1, 4, 4)), (24, (16, 64, 128, 1, 4, 4)),
           (32, (16, 64, 128, 1, 4, 4)), (48, (32, 128, 128, 1, 4, 4)),
           (64, (32, 128, 128, 1, 4, 4)), (96, (32, 128, 128, 32, 4, 4)),
           (128, (64, 128, 128, 1, 4, 4)), (256, (128, 256, 64, 1, 8, 4)),
           (512, (64, 128, 64, 32, 4, 4)), (1024, (64, 256, 64, 64, 4, 4)),
           (1536, (128, 256, 64, 64, 8, 4)), (2048, (128, 256, 64, 64, 8, 4)),
           (3072, (128, 256, 64, 64, 8, 4)), (4096, (128, 256, 64, 1, 8, 4))),
    2048: ((1, (16, 128, 128, 32, 8, 4)), (2, (16, 64, 128, 64, 4, 4)),
           (4, (16, 32, 256, 16, 4, 4)), (8, (16, 32, 256, 16, 4, 4)),
           (16, (16, 256, 64, 64, 8, 4)), (24, (32, 64, 128, 1, 8, 4)),
           (32, (16, 128, 128, 1, 4, 4)), (48, (32, 128, 128, 1, 4, 4)),
           (64, (32, 256, 64, 1, 4, 4)), (96, (32, 128, 128, 1, 4, 4)),
           (128, (64, 128, 128, 1, 4, 4)), (256, (64, 64, 64, 32, 4, 4)),
           (512, (64, 256, 64, 64, 4, 4)), (1024, (128, 256, 64, 32, 8, 4)),
           (1536, (128, 256, 64, 64, 8, 4)), (2048, (128, 256, 64, 16, 8, 4)),
           (3072, (128, 256, 64, 32, 8, 4)), (4096, (128, 256, 64, 1, 8, 4))),
}
# The kvplan GPU preset of the device those tables name.
_TABLE_GPUS = {"H100-80GB": _H100}
_READ_IN = ("0.15.1",)


@dataclass(frozen=True, kw_only=True)
class CompileKey:
    """One compiled fused_moe_kernel: which GEMM, the launch constants, the two
    specializations that move with the step (module docstring)."""

    gemm: str  # "w13" or "w2"
    config: Config
    em: str  # Triton's key of EM: "1", "D" (% 16 == 0) or ""
    num_valid_tokens: str


def _int_key(value: int) -> str:
    """Triton 3.5.1's specialization of a plain int (runtime/jit.py:359-366)."""
    return "1" if value == 1 else "D" if value % 16 == 0 else ""


def nearest_config(table: tuple[tuple[int, Config], ...], tokens: int) -> Config:
    """try_get_optimal_moe_config's pick (fused_moe.py:1314): the key nearest `tokens`, the
    first (smaller) on a tie."""
    return min(table, key=lambda kv: abs(kv[0] - tokens))[1]


def call_keys(tokens: int, *, table: tuple[tuple[int, Config], ...], num_experts: int,
              top_k: int) -> tuple[CompileKey, CompileKey]:
    """The two kernels one MoE call on `tokens` tokens launches (module docstring)."""
    config = nearest_config(table, tokens)
    block_m = config[0]
    pairs = tokens * top_k
    sorted_ids = pairs + num_experts * (block_m - 1)
    if pairs < num_experts:
        sorted_ids = min(pairs * block_m, sorted_ids)
    out = []
    for gemm, rows, k in (("w13", tokens, top_k), ("w2", pairs, 1)):
        em = min(sorted_ids, rows * k * block_m) if rows < block_m else sorted_ids
        out.append(CompileKey(gemm=gemm, config=config, em=_int_key(em),
                              num_valid_tokens=_int_key(rows * k)))
    return out[0], out[1]


@dataclass(frozen=True, kw_only=True)
class TritonMoeJit:
    """The rule for one engine: the tuned table, the model's experts and top-k, the sizes
    start-up ran (the CUDA-graph capture sizes and max_num_batched_tokens)."""

    table: tuple[tuple[int, Config], ...]
    num_experts: int
    top_k: int
    graph_sizes: tuple[int, ...]
    max_num_batched_tokens: int

    def call_tokens(self, step_tokens: int) -> int:
        """The token count the MoE runs at: padded to the next capture size up to the largest,
        the step's own above it."""
        for size in self.graph_sizes:
            if size >= step_tokens:
                return size
        return step_tokens

    def keys(self, step_tokens: int) -> tuple[CompileKey, CompileKey]:
        return call_keys(self.call_tokens(step_tokens), table=self.table,
                         num_experts=self.num_experts, top_k=self.top_k)

    def warm(self) -> frozenset[CompileKey]:
        """What start-up compiled: the profile run and every capture size."""
        sizes = (*self.graph_sizes, self.max_num_batched_tokens)
        return frozenset(k for m in sizes for k in call_keys(
            m, table=self.table, num_experts=self.num_experts, top_k=self.top_k))


def vllm_triton_moe_jit(*, gpu: str, engine_version: str | None, num_experts: int, top_k: int,
                        intermediate_per_rank: int, graph_sizes: tuple[int, ...],
                        max_num_batched_tokens: int) -> TritonMoeJit:
    """The rule for a vLLM engine running 16-bit experts on the Triton fused MoE
    (kvplan.engines.vllm.moe_kernel); refused where its table or version was not read."""
    if engine_version not in _READ_IN:
        raise InputError(f"--moe-jit-compile-ms: read in vLLM {', '.join(_READ_IN)} only "
                         f"(--engine-version {engine_version or 'newest'})")
    tables = _TABLE_GPUS.get(gpu)
    table = None if tables is None or num_experts != 8 else tables.get(intermediate_per_rank)
    if table is None:
        raise InputError(f"--moe-jit-compile-ms: no tuned fused-MoE table read for E="
                         f"{num_experts}, N={intermediate_per_rank} on {gpu} (read: E=8, N="
                         f"{' / '.join(str(n) for n in _H100)} on H100-80GB)")
    return TritonMoeJit(table=table, num_experts=num_experts, top_k=top_k,
                        graph_sizes=graph_sizes, max_num_batched_tokens=max_num_batched_tokens)
