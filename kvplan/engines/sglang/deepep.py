"""SGLang's MoE layers under `--moe-a2a-backend deepep` (issue 29, sgldeepep59): the all-to-all
they run, the weights they keep whole, and the launches kvplan refuses.

Read in SGLang 0.5.8.post1 (the wheel; 0.5.8's srt-slurm recipes run the same flags) and
DeepEP V1 at deepseek-ai/DeepEP 29d31c0 (2026-01, the release line SGLang 0.5.8 imports as
`deep_ep.Buffer`).

Which kernels a step runs. `--deepep-mode` (server_args.py:476, default "auto") resolves per
step (layers/moe/utils.py:106-113 `DeepEPMode.resolve`, token_dispatcher/deepep.py:830-838
`_get_impl`): normal and low_latency as given; auto takes normal for a step with an extend
(prefill) in the batch and low_latency otherwise (decode). `deepep-mode normal` turns the CUDA
graphs off (server_args.py:1985-1989); `--moe-a2a-backend deepep` sets ep_size = tp_size
(:1990).

What a token sends (`bytes_per_token`, expected over routing):
- Normal mode (token_dispatcher/deepep.py:380-401 and :426-470; DeepEP csrc/kernels/
  intranode.cu:262-277 dispatch, :752-762 combine): a token goes once to each rank holding at
  least one of its top-k experts (`is_token_in_rank` from `get_dispatch_layout`), with its
  hidden state in FP8 (`sglang_per_token_group_quant_fp8`, 128-wide groups: DeepGEMM's JIT on
  and a runner that is not cutlass, SGLANG_DEEPEP_BF16_DISPATCH unset), its fp32 scales
  (hidden / 128), its int32 source index and its top-k int64 ids and fp32 weights; the combine
  sends one bf16 hidden state per (token, rank), with the source index and top-k fp32 weights.
  DeepSeek-R1 (hidden 7,168, top-8): dispatch 7,168 + 224 + 4 + 64 + 32 = 7,492 B, combine
  14,336 + 4 + 32 = 14,372 B a (token, rank) pair.
- Low-latency mode (token_dispatcher/deepep.py:603-637 `_dispatch_core`, :664-706
  `_combine_core`; DeepEP csrc/kernels/internode_ll.cu:174-181 `num_bytes_per_msg`): one message
  per (token, selected expert), no deduplication by rank: an int4 header (16 B) and the hidden
  state in FP8 with fp32 scales per 128 channels (hidden + hidden / 128 x 4 B), or in NVFP4
  where SGLang hands the dispatcher an input global scale (layers/quantization/
  modelopt_quant.py:1482-1490: a ModelOpt NVFP4 checkpoint with SGLANG_MOE_NVFP4_DISPATCH set:
  hidden / 2 B of values and one FP8 scale per 16 values, NVFP4's format; the kernel of the
  DeepEP build that takes `use_nvfp4` is not in DeepEP's V1 tree, so its header is taken as
  V1's 16 B); the combine sends each expert's bf16 output back (hidden x 2 B; LogFMT off:
  SGLang passes no use_logfmt).
- The share that leaves the rank: an expert's rank is one of the `ep` ranks, the sender's own
  with probability 1 / ep, by symmetry. Normal mode's distinct ranks: routing taken uniform over
  the `n` routed experts spread evenly, `n / ep` a rank (the k experts distinct), so a given
  other rank holds none of a token's experts with probability C(n - n/ep, k) / C(n, k). Not
  modelled: DeepSeek's group-limited routing (top-4 of 8 groups) and where redundant experts
  send a token (--ep-num-redundant-experts: under SGLang's default trivial placement,
  eplb/expert_location.py:88-112, physical experts n..n+r-1 copy logical 0..r-1, and
  --ep-dispatch-algorithm picks a copy per rank, static, or at random per token, dynamic,
  expert_location_dispatch.py:76-106), which both move a token's experts between ranks; uneven
  loads (what EPLB's rebalancing, --enable-eplb, evens out: kvplan assumes them even). The
  redundant experts' weights are counted (kvplan.capacity.weights.redundant_experts_held, out
  of the KV pool); the time model still streams n / ep experts a rank, not (n + r) / ep.
  Normal mode above 8 ranks runs DeepEP's internode kernels (a token
  once per node, forwarded over NVLink inside it): priced with the same per-rank count (the
  srt-slurm recipes' normal-mode roles are EP 8). Not checked: the low-latency batch bound
  SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK (deepep.py:320-325, at most 1,024).

Time (`DeepEp.seconds`, asked by kvplan.perf.roofline): dispatch and combine, each its
measured fixed time per call plus its bytes at its measured bandwidth, from DeepEP's own
benchmarks on the GPU at the launch's EP size as aiconfigurator's tables record them
(kvplan.engines.sglang.deepep_speed: GB200 / GB300 at EP 4, deepepbw59; B200 / B300 / H100 /
H200 at EP 8 and H100 at EP 16 / 32 / 64 across nodes, deepepx60), or a stand-in the plan's
notes name (`DeepEp.notes`); a GPU and EP size with neither is refused. Before deepepbw59
(97d4ed27): the EP link's latency (8 us on NVLink 5, an estimate) and the bytes at the link's
bandwidth (NVLink 5: 720 GB/s then, 588 GB/s measured since b200vllm63); until deepepx60 still
the rule on a GPU with no measurement.

Weights (`dp_attention_weights`): under DeepEP the shared experts are built whole on every rank
(models/deepseek_v2.py:455-473, `tp_rank=0, tp_size=1` when `is_deepep()`); --moe-dense-tp-size
1 builds the dense MLP layers whole too (:2291-2294 `enable_moe_dense_fully_dp`) and runs them
on each rank's own tokens (layers/communicator.py:282-297 `_compute_mlp_mode`: SCATTERED for a
sparse layer under any a2a backend, for a dense one under moe_dense_tp_size 1);
--enable-dp-lm-head builds the lm_head on the attention-TP group (:2798-2803,
`use_attn_tp_group`), whole on every rank under DP attention, with no logits gather. kvplan holds
the dense MLPs and the shared experts in one group (WeightBreakdown.dense_mlp), so it prices
DeepEP with --moe-dense-tp-size 1 (every srt-slurm DeepEP recipe sets both) and refuses one
without the other.

Buffers: SGLang builds DeepEP's buffer at the first dispatch (deepep.py:521-531 and :711-720
`_get_buffer`), in the CUDA-graph capture or the first step, after the KV pool is sized
(model_executor/model_runner.py:555 `init_memory_pool` before :575 `init_device_graphs`): its
NVLink / RDMA buffers come out of the memory --mem-fraction-static leaves, not the pool, so
kvplan's pool is unchanged by them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import comb
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError, UnmodelledError
from kvplan.engines.sglang.deepep_speed import deepep_speed
from kvplan.model.quant_config import quant_method
from kvplan.model.spec import ModelSpec, MoESpec
from kvplan.weights.base import DpAttentionWeights

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.base import EngineOptions, PlanInputs
    from kvplan.hardware.interconnect import Interconnect

DEEPEP_MODES = ("auto", "normal", "low_latency")
A2A_BACKENDS = ("none", "deepep")  # read; mooncake / ascend_fuseep are refused
SCALE_GROUP = 128  # FP8 per-token group quantization: one fp32 scale per 128 channels
NVFP4_BLOCK = 16  # NVFP4: one FP8 scale per 16 values
LL_HEADER_BYTES = 16  # internode_ll.cu:181 sizeof(int4)
TOPK_ID_BYTES = 8  # topk_idx_t: int64
FP32 = 4
BF16 = 2


def resolve_mode(mode: str, phase: str) -> str:
    """`--deepep-mode` as a `phase` step runs it (utils.py:106-113): auto -> normal for an
    extend (prefill) step, low_latency for a decode step."""
    if mode != "auto":
        return mode
    return "normal" if phase == "prefill" else "low_latency"


def remote_rank_probability(moe: MoESpec, ep: int) -> float:
    """The probability that a given other rank holds at least one of a token's top-k experts
    (module docstring: uniform routing, n / ep experts a rank)."""
    n, k = moe.n_routed_experts, moe.num_experts_per_tok
    return 1 - comb(n - n // ep, k) / comb(n, k)


def normal_pair_bytes(hidden: int, top_k: int) -> tuple[int, int]:
    """(dispatch, combine) bytes of one (token, rank) pair in normal mode (module docstring)."""
    dispatch = hidden + hidden // SCALE_GROUP * FP32 + 4 + top_k * (TOPK_ID_BYTES + FP32)
    combine = hidden * BF16 + 4 + top_k * FP32
    return dispatch, combine


def low_latency_message_bytes(hidden: int, *, nvfp4: bool) -> tuple[int, int]:
    """(dispatch, combine) bytes of one (token, expert) message in low-latency mode."""
    if nvfp4:
        dispatch = LL_HEADER_BYTES + hidden // 2 + hidden // NVFP4_BLOCK
    else:
        dispatch = LL_HEADER_BYTES + hidden + hidden // SCALE_GROUP * FP32
    return dispatch, hidden * BF16


@dataclass(frozen=True, kw_only=True)
class DeepEp:
    """SGLang's DeepEP all-to-all (kvplan.engines.moe_comm.MoeAllToAll) at a launch's
    --deepep-mode; `nvfp4_dispatch`: low-latency dispatch in NVFP4 (module docstring)."""

    mode: str = "auto"
    nvfp4_dispatch: bool = False
    name: str = "deepep"

    def remote_bytes(self, moe: MoESpec, hidden: int, ep: int, phase: str) -> tuple[float, float]:
        """(dispatch, combine) bytes one rank sends to the other ranks per token it holds."""
        k = moe.num_experts_per_tok
        if resolve_mode(self.mode, phase) == "normal":
            dispatch, combine = normal_pair_bytes(hidden, k)
            pairs = (ep - 1) * remote_rank_probability(moe, ep)
            return pairs * dispatch, pairs * combine
        dispatch, combine = low_latency_message_bytes(hidden, nvfp4=self.nvfp4_dispatch)
        return k * (ep - 1) / ep * dispatch, k * (ep - 1) / ep * combine

    def bytes_per_token(self, moe: MoESpec, hidden: int, ep: int, phase: str) -> float:
        return sum(self.remote_bytes(moe, hidden, ep, phase))

    def seconds(self, tokens: float, moe: MoESpec, hidden: int, ep: int, phase: str,
                gpu_name: str, link: Interconnect) -> float:
        """One MoE layer's dispatch + combine for `tokens` tokens a rank: each call's measured
        fixed time, then its logical bytes (the remote ones x ep / (ep - 1)) at the measured
        bandwidth (kvplan.engines.sglang.deepep_speed.deepep_speed, which refuses a GPU and EP
        size with no measurement or stand-in). `link` is not read: the kernels' own speeds are
        measured on the fabric."""
        dispatch, combine = self.remote_bytes(moe, hidden, ep, phase)
        speed = deepep_speed(gpu_name, resolve_mode(self.mode, phase), ep)
        d, c = speed.dispatch, speed.combine
        logical = tokens * ep / (ep - 1)
        return (d.latency_s + logical * dispatch / d.bytes_per_s
                + c.latency_s + logical * combine / c.bytes_per_s)


    def notes(self, gpu_name: str, ep: int, phase: str) -> tuple[str, ...]:
        """What stands in for a measurement when a `phase` step runs at `ep` ranks on
        `gpu_name` (deepep_speed's note; () where measured as launched)."""
        note = deepep_speed(gpu_name, resolve_mode(self.mode, phase), ep).note
        return () if note is None else (note,)


def _options(options: EngineOptions | None) -> tuple[str, str, int | None, bool, bool]:
    a2a = getattr(options, "moe_a2a_backend", "none")
    return (a2a, getattr(options, "deepep_mode", "auto"),
            getattr(options, "moe_dense_tp_size", None),
            bool(getattr(options, "enable_dp_lm_head", False)),
            bool(getattr(options, "moe_nvfp4_dispatch", False)))


def sglang_moe_all_to_all(options: EngineOptions | None, spec: ModelSpec) -> DeepEp | None:
    """The all-to-all a launch's options select (kvplan.engines.moe_comm.MoeAllToAllRule):
    DeepEP under --moe-a2a-backend deepep, else None (SGLang's gathers, kvplan.perf.roofline)."""
    a2a, mode, _, _, nvfp4 = _options(options)
    if a2a != "deepep":
        return None
    qc = spec.quantization_config
    modelopt_fp4 = qc is not None and quant_method(qc) == "modelopt_fp4"
    return DeepEp(mode=mode, nvfp4_dispatch=nvfp4 and modelopt_fp4)


def sglang_dp_attention_weights(options: EngineOptions | None) -> DpAttentionWeights:
    """Where SGLang keeps the dense MLPs with the shared experts and the lm_head under DP
    attention (kvplan.engines.sglang.engine `dp_attention_weights`; module docstring): split
    over the TP group by default; whole under DeepEP with --moe-dense-tp-size 1 (the shared
    experts and the dense layers), the lm_head whole under --enable-dp-lm-head."""
    a2a, _, dense_tp, dp_lm_head, _ = _options(options)
    return DpAttentionWeights(mlp_split=not (a2a == "deepep" and dense_tp == 1),
                              lm_head_split=not dp_lm_head)


def check_moe_a2a(inputs: PlanInputs, spec: ModelSpec | None = None) -> None:
    """Refuse, in one line, the MoE communication settings kvplan does not price. Two of them
    SGLang itself starts with (0.5.9 server_args.py:2177-2185 `_handle_a2a_moe` only sets
    ep_size = tp_size; no check refuses them): DeepEP on a model with no routed experts (no
    MoE layer dispatches; `spec`) and on one rank (EP 1: no other rank to send to). A refusal
    of the layout (DP attention, EP) is an InputError, so that `plan` searches the layouts
    that take the settings; one of the settings themselves, an UnmodelledError."""
    a2a, mode, dense_tp, dp_lm_head, _ = _options(inputs.options)
    if a2a not in A2A_BACKENDS:
        raise UnmodelledError(f"--moe-a2a-backend {a2a}: not read (kvplan prices none and "
                              "deepep)")
    if mode not in DEEPEP_MODES:
        raise UnmodelledError(f"--deepep-mode {mode}: expected one of {', '.join(DEEPEP_MODES)}")
    if dense_tp not in (None, 1):
        raise UnmodelledError(f"--moe-dense-tp-size {dense_tp}: SGLang takes only 1 or unset "
                              "(server_args.py:4823-4826)")
    if dp_lm_head and not inputs.dp_attention:
        raise InputError("--enable-dp-lm-head: SGLang needs --enable-dp-attention with it "
                              "(server_args.py:1942-1945)")
    if a2a == "none" and dense_tp is None:
        return
    if (a2a == "deepep") != (dense_tp == 1):
        raise UnmodelledError(
            "--moe-a2a-backend deepep and --moe-dense-tp-size 1: kvplan prices them together "
            "only (it holds the shared experts, whole under DeepEP, in one group with the dense "
            "MLP layers, whole under --moe-dense-tp-size 1)")
    if not inputs.dp_attention:
        raise InputError("--moe-a2a-backend deepep: priced under --enable-dp-attention "
                              "only (with TP attention SGLang scatters the tokens over the TP "
                              "ranks before the dispatch, not read)")
    if inputs.ep != inputs.tp:
        raise InputError(f"--moe-a2a-backend deepep: SGLang sets --ep-size to --tp-size "
                              f"(server_args.py:1990), not {inputs.ep} with TP {inputs.tp}")
    if inputs.ep < 2:
        raise InputError(f"--moe-a2a-backend deepep: EP {inputs.ep} (SGLang's --ep-size is "
                              "--tp-size, server_args.py:1990 0.5.8.post1): one rank sends "
                              "nothing, no all-to-all to price; use EP >= 2 or "
                              "--moe-a2a-backend none")
    if spec is not None and spec.moe is None:
        raise UnmodelledError(f"--moe-a2a-backend deepep: {spec.id} has no routed experts (no "
                              "MoE layer dispatches; SGLang starts with it all the same, "
                              "server_args.py 0.5.9:2177-2185): kvplan prices DeepEP on MoE "
                              "models only")


def moe_a2a_launch_groups(settings: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
    """The launch line's flags for the MoE all-to-all settings a plan was given (PlanInputs
    fields, as SglangOptions names them; none given: none), as SGLang spells them
    (server_args.py 0.5.9:4086 --moe-a2a-backend, :4112 --deepep-mode, :4189
    --moe-dense-tp-size, :4575 --enable-dp-lm-head)."""
    groups: list[tuple[str, ...]] = []
    a2a = settings.get("moe_a2a_backend")
    if a2a not in (None, "none"):
        mode = settings.get("deepep_mode")
        groups.append(("--moe-a2a-backend", str(a2a))
                      + (("--deepep-mode", str(mode)) if mode not in (None, "auto") else ()))
    if settings.get("moe_dense_tp_size") is not None:
        groups.append(("--moe-dense-tp-size", str(settings["moe_dense_tp_size"])))
    if settings.get("enable_dp_lm_head"):
        groups.append(("--enable-dp-lm-head",))
    return tuple(groups)
