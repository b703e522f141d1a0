"""The `Engine` registry, the inputs every engine reads (`PlanInputs`, a common core plus the
selected engine's own `options`, built from flat keywords by `plan_inputs`) and the protocols
each engine implements (`EngineRules`, its `Budget`): one module, as the registry answers with
the protocols and the protocols read the inputs. Split from kvplan.engines.base (its docstring
says how an engine package is laid out), which re-exports each name."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, fields
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.engines.cost_traits import CostTraits, Launch, LongContext
    from kvplan.engines.decode_graphs import DecodeGraphs
    from kvplan.engines.engine_args import EngineFlags
    from kvplan.engines.handover import KvConnector
    from kvplan.engines.launch import Command, LaunchLayout, LaunchPlan, LaunchSettings
    from kvplan.engines.moe_kernel import MoeKernels
    from kvplan.engines.offload import OffloadRule
    from kvplan.engines.reserve import Reserve
    from kvplan.engines.stage_pool import GridPages, PlanFacts, StageFacts, StagePool
    from kvplan.hardware.gpus import GPU
    from kvplan.kv.kinds import LayerCaches
    from kvplan.model.context_limit import ContextLimit
    from kvplan.model.spec import ModelSpec
    from kvplan.weights.base import DpAttentionWeights, StageOuter


class Engine(str, Enum):
    """The engines kvplan models (each value names its package, loaded on first use)."""

    vllm = "vllm"
    sglang = "sglang"
    trtllm = "trtllm"

    @property
    def rules(self) -> EngineRules:
        """The engine's rules (``kvplan.engines.<name>.engine.ENGINE``)."""
        rules: EngineRules = importlib.import_module(f"kvplan.engines.{self.value}.engine").ENGINE
        return rules

    @property
    def budget(self) -> Budget:
        """The engine's budget rule (``kvplan.engines.<name>.budget.BUDGET``)."""
        budget: Budget = importlib.import_module(f"kvplan.engines.{self.value}.budget").BUDGET
        return budget

    @property
    def offload(self) -> OffloadRule:
        """The engine's KV offload tiers (``kvplan.engines.<name>.offload.OFFLOAD``)."""
        rule: OffloadRule = importlib.import_module(f"kvplan.engines.{self.value}.offload").OFFLOAD
        return rule

    @property
    def options_type(self) -> type[EngineOptions]:
        """The engine's own settings (``kvplan.engines.<name>.options.OPTIONS``)."""
        kind: type[EngineOptions] = importlib.import_module(
            f"kvplan.engines.{self.value}.options").OPTIONS
        return kind

    @property
    def engine_flags(self) -> EngineFlags:
        """The engine's own flags the simulator reads, by its spelling (``kvplan.engines.
        <name>.engine_args.FLAGS``: `simulate --engine-arg`)."""
        flags: EngineFlags = importlib.import_module(
            f"kvplan.engines.{self.value}.engine_args").FLAGS
        return flags


DEFAULT_ENGINE = Engine.vllm


class Scheduler(str, Enum):
    """The scheduler `kvplan simulate` runs for an engine (kvplan.analysis.simulate.run maps each
    to its set-up); the engine answers its batch questions (EngineRules.prefill_step_defaults)."""

    # vLLM V1 (vllm/v1/core/sched/scheduler.py): prefill chunks and decodes in one token budget.
    mixed_token_budget = "mixed-token-budget"
    # SGLang (python/sglang/srt/managers/scheduler.py): prefill batches before decode batches.
    prefill_first = "prefill-first"
    capacity_micro_batch = "capacity-micro-batch"  # TensorRT-LLM: pyexecutor/scheduler.py


@dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """Settings one engine alone reads (each engine subclasses it with its flags)."""


@dataclass(frozen=True, kw_only=True)
class PlanInputs:
    """What a plan is asked: the settings every engine reads, and in `options` the selected
    engine's own (None: its defaults; `plan_inputs` builds both from flat keywords)."""

    context: int
    kv_dtype: str = "bf16"
    block_size: int | None = None  # None: the engine's default
    tp: int = 1
    pp: int = 1
    engine: Engine = DEFAULT_ENGINE
    mem_fraction: float | None = None  # None: the engine's default
    total_bytes: int | None = None  # device total; required unless kv_budget_bytes is given
    weights_bytes: int | None = None  # per GPU override
    reserve_bytes: int | None = None  # override of the activation/runtime (or preload) estimate
    kv_budget_bytes: int | None = None  # per GPU; skips the derivation
    max_num_batched_tokens: int = 8192
    shared_prefix: int = 0
    dp_attention: bool = False
    # SGLang's --dp-size with --enable-dp-attention: the attention-DP ranks over the --tp GPUs,
    # each an attention-TP group of tp / dp_size GPUs (layers/dp_attention.py
    # compute_dp_attention_world_info: attn_tp_size = tp_size // dp_size; 0.5.3 :191-199, 0.5.6
    # :227-235, 0.5.9 :230-244). None: --tp ranks of attention TP 1.
    attention_dp_size: int | None = None
    # expert-parallel ranks: ceil(E / ep) routed experts per rank, whole, or below the TP group
    # each split over tp / ep ranks (MoE TP x EP, kvplan.weights.expert_layout)
    ep: int = 1
    engine_version: str | None = None  # None: the newest modelled
    platform: str = "cuda"  # cuda | rocm | cpu
    cpu_amx: bool | None = None  # --platform cpu host has AMX (None: unknown; vllm.block_size)
    # the GPU's torch.cuda.get_device_capability() (None: unknown); vLLM's sparse MLA backend
    compute_capability: tuple[int, int] | None = None
    prefix_caching: bool | None = None  # None: that version's default (SGLang: radix cache)
    ssm_dtype: str = "auto"  # vLLM --mamba-ssm-cache-dtype, SGLang --mamba-ssm-dtype
    speculative_method: str | None = None  # mtp | eagle | eagle3
    num_speculative_tokens: int = 0  # SGLang: --speculative-num-steps
    dtype: str | None = None  # compute dtype of unquantized weights (None: the engines' auto)
    max_num_seqs: int | None = None  # the engine's cap on running requests
    enforce_eager: bool = False  # vLLM / TRT-LLM: no CUDA graphs (nothing reserved for them)
    is_a100: bool = False  # vLLM's batch defaults treat A100s apart
    smi_total_bytes: int | None = None  # nvidia-smi's total (SGLang sizes defaults from it)
    nvlink: bool = True  # NVLink between the GPUs: vLLM's custom all-reduce runs (not on PCIe)
    unified_memory: bool = False  # GB10: the OS's memory counts as used (TRT-LLM refuses)
    is_mla: bool = False  # SGLang reserves more for MLA's prefill CUDA graphs (set from spec)
    # A multimodal checkpoint's vision encoder (num_hidden_layers, hidden_size): SGLang lowers its
    # default fraction for it (sglang.budget.sglang_vlm_factor); from the spec, or --vision-tower.
    vision_tower: tuple[int, int] | None = None
    quantization: str | None = None  # load-time quantization (bitsandbytes)
    options: EngineOptions | None = None  # the selected engine's own settings

    @property
    def resolved_block_size(self) -> int:
        """The block size asked for (vLLM may raise it for recurrent state: see the plan)."""
        return self.block_size or self.engine.rules.default_block_size(self)

    @property
    def resolved_mem_fraction(self) -> float:
        if self.mem_fraction is not None:
            return self.mem_fraction
        return self.engine.budget.default_fraction(self)[0]

    @property
    def mem_fraction_rule(self) -> str:
        if self.mem_fraction is not None:
            return "given"
        return self.engine.budget.default_fraction(self)[1]

    @property
    def attention_dp_ranks(self) -> int:
        """The attention data-parallel ranks (each its own requests and KV pool): --tp, or the
        given `attention_dp_size`, with data-parallel attention; else 1."""
        return (self.attention_dp_size or self.tp) if self.dp_attention else 1

    @property
    def attention_tp(self) -> int:
        """GPUs per attention group: tp / the attention-DP ranks (1 with one rank a GPU)."""
        return self.tp // self.attention_dp_ranks

    @property
    def kv_tp(self) -> int:
        """TP degree the KV heads are split over: the attention-TP group (1 with data-parallel
        attention of one rank a GPU; SGLang's pool splits the KV heads over
        get_attention_tp_size(), model_runner.py, MLA's latent is whole on each)."""
        return self.attention_tp


_CORE = frozenset(f.name for f in fields(PlanInputs)) - {"options"}


def plan_inputs(**kw: Any) -> PlanInputs:
    """`PlanInputs` from flat keywords: the common ones as given, the selected engine's own into
    its options; another engine's settings are left out (as its flags are ignored)."""
    engine = Engine(kw.get("engine", DEFAULT_ENGINE))
    core = {k: v for k, v in kw.items() if k in _CORE}
    rest = {k: v for k, v in kw.items() if k not in _CORE}
    own = engine.options_type
    names = {f.name for f in fields(own)}
    known = names.union(*({f.name for f in fields(e.options_type)} for e in Engine))
    unknown = sorted(set(rest) - known)
    if unknown:
        raise TypeError(f"plan_inputs: unknown settings {', '.join(unknown)}")
    return PlanInputs(**core, options=own(**{k: v for k, v in rest.items() if k in names}))


class Budget(Protocol):
    """An engine's KV budget: the memory it leaves for the KV cache, the inverse (the fraction a
    KV need takes), the reserve it holds back, and its default fraction."""

    name: str
    formula: str

    def check_reserve_known(self, inputs: PlanInputs) -> None:
        """Refuse, in one line, a budget kvplan cannot derive without a given reserve."""

    def reserve(self, spec: ModelSpec, inputs: PlanInputs) -> Reserve:
        """What the engine holds back besides weights and KV, by part."""

    def kv_bytes(self, total: int, fraction: Any, weights: int, reserve: int) -> Any:
        """The KV budget; `fraction` may be a numpy array (the sweep)."""

    def fraction_for(self, inputs: PlanInputs, need: int, weights: int, reserve: int) -> float:
        """The memory fraction at which `need` KV bytes fit."""

    def default_fraction(self, inputs: PlanInputs) -> tuple[float, str]:
        """The engine's default fraction and the rule that set it."""


class EngineRules(Protocol):
    """Everything kvplan asks of one engine; callers ask, never test the engine's name."""

    name: str  # the --engine value
    display_name: str  # as people write it: vLLM, SGLang, TensorRT-LLM
    # The newest release whose sizing code kvplan has read (`flag_unread_version`).
    newest_read: str
    fraction_name: str  # the engine's name for its memory fraction
    kv_dtypes: tuple[str, ...]  # KV dtypes it runs, best quality first
    launch: Launch
    cost_traits: CostTraits
    # The scheduler `kvplan simulate` runs for it (kvplan.analysis.simulate); None: not modelled.
    scheduler: Scheduler | None
    long_context: LongContext  # what it does with a context above `max_context`

    def max_context(self, spec: ModelSpec) -> ContextLimit | None:
        """The model's maximum context as this engine derives it (vLLM's: the spec's
        max_context; the others: their own rule over spec.position_fields,
        kvplan.engines.<name>.context); None: it checks none."""

    def options(self, inputs: PlanInputs) -> EngineOptions:
        """The engine's own settings in `inputs` (its defaults where none are given)."""

    def default_block_size(self, inputs: PlanInputs) -> int:
        """Block (page) size in tokens when none is given."""

    def default_max_num_batched_tokens(self, total_bytes: int | None, *, is_a100: bool,
                                       version: str | None,
                                       capability: tuple[int, int] | None = None) -> int:
        """The engine's default tokens per forward step (the profile run's size)."""

    def prefill_step_defaults(self, gpu: GPU, version: str | None, *,
                              dp_attention: int = 1) -> tuple[int, int]:
        """(tokens, requests) one prefill step of its scheduler takes at most by default, on one
        scheduler of a layout whose attention is data-parallel over `dp_attention` ranks (or
        refuse, in one line, where its scheduler is not modelled)."""

    def decode_graph_sizes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[int, ...]:
        """The CUDA-graph sizes (ascending) the engine pads a decode step's tokens to under
        `inputs` (kvplan.perf.graph_padding), as `kvplan simulate` steps it; () none."""

    def decode_graphs(self, inputs: PlanInputs) -> DecodeGraphs:
        """The decode-phase forwards the engine replays from CUDA graphs it captured under
        `inputs`, in its own unit (kvplan.engines.decode_graphs: SGLang's requests), which
        step_time prices as captured (its `captured`: SGLang's shared experts' second stream,
        kvplan.engines.shared_stream); NO_DECODE_GRAPHS: none priced so. One source for
        `kvplan simulate` (MixedStepCost) and the cost model (CostInputs)."""

    def served_spec(self, spec: ModelSpec, inputs: PlanInputs | None = None) -> ModelSpec:
        """The model as the engine's implementation caches it (weights unchanged); with
        `inputs`, as it caches it on that device at that KV dtype (vLLM's sparse MLA row)."""

    def served_inputs(self, spec: ModelSpec, inputs: PlanInputs) -> PlanInputs:
        """`inputs` with the settings the engine forces for `spec` (SGLang's for DSA)."""

    def served_architecture(self, spec: ModelSpec, version: str | None) -> ModelSpec:
        """The model as the engine's model registry builds it from the config's `architectures`
        (vLLM: refused, or with an assumption, where its registry lists none of them)."""

    def state_dtypes(self, spec: ModelSpec, inputs: PlanInputs) -> tuple[str | None, str]:
        """(conv, SSM) dtypes of the recurrent state (conv None: the model's compute dtype)."""

    def refuse_unmodelled(self, spec: ModelSpec, inputs: PlanInputs) -> None:
        """Refuse, in one line, caches the engine's pools are not modelled for."""

    def model_dtype(self, spec: ModelSpec) -> str:
        """The 16-bit dtype (bf16, fp16) the engine computes `spec` in under its --dtype auto,
        which its --kv-cache-dtype auto takes where neither the checkpoint nor a rule of the
        engine decides (fp16 for a float16 checkpoint)."""

    def auto_kv_dtype(self, spec: ModelSpec, version: str | None = None,
                      gpu: GPU | None = None) -> tuple[str, str | None]:
        """The KV dtype the engine (`version`; None: the newest modelled) runs on `gpu` (None:
        not named) when none is given (its --kv-cache-dtype auto) and, when the checkpoint's
        quantization_config or the engine's own rule for the model and GPU decides it, the
        line that says so (or refuse, in one line, to guess it)."""

    def given_kv_dtype(self, spec: ModelSpec, kv_dtype: str, version: str | None = None,
                       gpu: GPU | None = None) -> tuple[str, str | None]:
        """The KV dtype the engine runs `spec` at on `gpu` when told `kv_dtype` (where its own
        rule overrides what it is told, the line that says so; else `kv_dtype`, None)."""

    def runnable_kv_dtypes(self, spec: ModelSpec, version: str | None = None,
                           gpu: GPU | None = None) -> tuple[str, ...] | None:
        """The KV dtypes the engine (`version`) can run `spec` at on `gpu` where the checkpoint or
        its rule narrows them (None: all `kv_dtypes`); `plan` searches only these."""

    def default_speculative_tokens(self) -> int:
        """Draft tokens per step for a speculative method given without a count (or refused)."""

    def loads_draft_weights(self, inputs: PlanInputs) -> bool:
        """Whether the target model's weights include the MTP layers with MTP speculation."""

    def stage_outer(self, spec: ModelSpec) -> StageOuter:
        """Outer weights (embeddings, head) it builds on stages not the first / last too."""

    def dp_attention_weights(self, options: EngineOptions | None = None) -> DpAttentionWeights:
        """Which weights it keeps split over the TP group under DP attention, at `options`."""

    def expert_map_entry_bytes(self) -> int:
        """Bytes per routed expert of each MoE layer it holds, with the weights, to map global
        to local experts under EP (0: none; kvplan.capacity.weights.expert_map_bytes)."""

    def mxfp4_backend(self, inputs: PlanInputs) -> tuple[str, str] | None:
        """The MXFP4 MoE kernel on the inputs' GPU and release, and why; None: Marlin's."""

    def moe_kernels(self, options: EngineOptions | None = None) -> MoeKernels | None:
        """Its fused-MoE kernels (CostTraits.moe_kernel) as `options` pick them (a kernel the
        user forces); None: none priced apart."""

    def attention_scale_bytes(self, spec: ModelSpec) -> int:
        """Scale-buffer bytes per attention layer, with the weights (0: none; weights.py)."""

    def estimate_config(self, spec: ModelSpec, inputs: PlanInputs) -> object | None:
        """What `estimate` shows of the engine's own allocator for the whole model (vLLM: its
        KV-cache groups), after refusing what the engine's pools do not model."""

    def stage_pool(self, spec: ModelSpec, inputs: PlanInputs, layers: range, context: int,
                   budget: int, caches: tuple[LayerCaches, ...]) -> StagePool | None:
        """The stage's pool sized from its KV budget (None: the stage caches nothing)."""

    def kv_bytes_needed(self, stage: StageFacts, requests: int, context: int,
                        shared_prefix: int) -> int:
        """KV bytes `requests` requests of `context` tokens need on the stage."""

    def grid_pages(self, spec: ModelSpec, inputs: PlanInputs, stage: StageFacts,
                   contexts: Any) -> GridPages:
        """The stage's pool over many contexts at once (the sweep)."""

    def sequence_block_size(self, spec: ModelSpec, inputs: PlanInputs) -> int:
        """The page (tokens) a sequence is held in as the engine runs `spec` (estimate's and the
        sweep's per sequence): the block asked (`resolved_block_size`) or the engine's own
        (vLLM's raised for recurrent state or MLA; SGLang's 64 for DeepSeek's sparse attention)."""

    def request_cap(self, stage: StageFacts, budgets: Any, contexts: Any) -> Any:
        """The engine's own cap on running requests over the sweep's budgets x contexts."""

    def reported_version(self, inputs: PlanInputs) -> str | None:
        """The engine version the plan reports (None: the newest, unnamed)."""

    def reported_platform(self, inputs: PlanInputs) -> str | None:
        """The platform the plan reports, where the engine's rules depend on it."""

    def launch_plan(self, ref: str, layout: LaunchLayout, settings: LaunchSettings
                    ) -> LaunchPlan:
        """The plan's commands, head node first, in this version's flags (engines.launch)."""

    def copy_on_node(self, command: Command, slot: int, gpus: int) -> Command:
        """`command`, one server on one node, as server `slot` of several of `gpus` GPUs each on
        that node: its own GPUs and ports as the engine takes them (plan --rate's copies of an
        engine smaller than a node; kvplan.engines.launch.copies_on_nodes)."""

    def layout_text(self, layout: LaunchLayout) -> str:
        """The layout as the launch command runs it ("tp 8, dp-attention 8, ep 8")."""

    def kv_connector(self, name: str | None) -> KvConnector:
        """The connector `kvplan plan --disagg` sizes the handover with (None: the engine's
        default), or an InputError where kvplan does not model it (kvplan.engines.handover)."""

    def running_cap(self, layout: LaunchLayout, concurrency: int) -> int:
        """The running-request flag serving `concurrency` over the layout (per scheduler/server)."""

    def running_flag(self, layout: LaunchLayout, per_scheduler: int) -> int:
        """The running-request flag's value (vLLM --max-num-seqs, SGLang
        --max-running-requests, TensorRT-LLM --max_batch_size) that gives each of the layout's
        schedulers (a replica's, an attention-DP rank's) `per_scheduler` running requests, in
        the flag's own unit: `running_cap`'s inverse for one scheduler (plan --rate)."""

    def page_row(self, plan: PlanFacts, page_bytes: int, group_size: int,
                 num_groups: int) -> tuple[str, str]:
        """The capacity view's page row: (label, how)."""

    def view_rows(self, plan: PlanFacts) -> list[tuple[str, int, str]]:
        """Rows of the capacity view only this engine has: (label, count, how)."""

    def capacity_notes(self, spec: ModelSpec, plan: PlanFacts) -> list[str]:
        """The capacity view's notes on this engine's accounting."""

    def prints_max_concurrency(self) -> bool:
        """Whether the engine logs the max concurrency kvplan reports."""

    def shows_groups(self, plan: PlanFacts) -> bool:
        """Whether the view adds the table of KV-cache groups."""

    def profile_view(self) -> tuple[list[list[str]], list[dict[str, object]], list[str]]:
        """`kvplan engines`: a row and a record per modelled version, and notes on the rules."""
