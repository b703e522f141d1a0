"""`kvplan plan --disagg`: the options of a disaggregated plan (issue 29), each defined once here,
and the one call plan makes for them.

No ``from __future__ import annotations`` (typer reads the annotations at run time).
"""

from typing import Annotated, Any

import typer

from kvplan._util.errors import InputError
from kvplan.cli.vocab import COST_RULES_PANEL
from kvplan.engines.kv_dtype import ENGINE_AUTO

DisaggOpt = Annotated[bool, typer.Option(
    "--disagg", help="Plan a disaggregated deployment: prefill workers handing each request's "
                     "KV to decode workers (--prefill-tp / --decode-tp, --input-len, "
                     "--output-len, --link; with --concurrency or --rate, the xPyD ratio).")]
PrefillTpOpt = Annotated[int, typer.Option("--prefill-tp", min=1,
                                           help="--disagg: TP of one prefill worker.")]
DecodeTpOpt = Annotated[int, typer.Option("--decode-tp", min=1,
                                          help="--disagg: TP of one decode worker.")]
PrefillPpOpt = Annotated[int, typer.Option("--prefill-pp", min=1, help="--disagg.")]
DecodePpOpt = Annotated[int, typer.Option("--decode-pp", min=1, help="--disagg.")]
PrefillDpOpt = Annotated[int, typer.Option(
    "--prefill-dp", min=1, help="--disagg: data-parallel replicas of a prefill worker (with "
                                "--prefill-dp-attention: its attention-DP ranks).")]
DecodeDpOpt = Annotated[int, typer.Option(
    "--decode-dp", min=1, help="--disagg: as --prefill-dp, for a decode worker.")]
PrefillEpOpt = Annotated[int, typer.Option("--prefill-ep", min=1,
                                           help="--disagg: expert-parallel ranks (MoE).")]
DecodeEpOpt = Annotated[int, typer.Option("--decode-ep", min=1,
                                          help="--disagg: expert-parallel ranks (MoE).")]
PrefillDpAttnOpt = Annotated[bool, typer.Option(
    "--prefill-dp-attention", help="--disagg: attention DP on the prefill worker (MLA + MoE: "
                                   "--prefill-dp ranks inside its --prefill-tp GPUs).")]
DecodeDpAttnOpt = Annotated[bool, typer.Option(
    "--decode-dp-attention", help="--disagg: attention DP on the decode worker.")]
LinkOpt = Annotated[str, typer.Option(
    "--link", help="--disagg: the link KV crosses: ib-ndr, ib-hdr, roce-400, roce-200, "
                   "efa-p5, efa-p5en, nvlink4, nvlink5, pcie4, pcie5 (kvplan/hardware/"
                   "kv_links.json, each number with its source). --rate: the fabric between "
                   "nodes (ib-ndr, ib-hdr, roce-400, roce-200).")]
RailsOpt = Annotated[int | None, typer.Option(
    "--rails", min=1, help="--disagg, --rate: NICs (rails) per GPU, over the link preset's.")]
ConnectorOpt = Annotated[str | None, typer.Option(
    "--connector", help="--disagg: the engine's KV connector or transfer backend (vLLM: "
                        "nixl or mooncake; SGLang: mooncake or nixl; TensorRT-LLM: default, ucx, "
                        "nixl or mpi; the first is the default).")]
DisaggBlockOpt = Annotated[int | None, typer.Option(
    "--block-size", min=1, help="--disagg: tokens per KV block on both roles (they must "
                                "match); default the engine's.")]

# SGLang's decode-side flag (kvplan.engines.sglang.decode_admission, "Taking requests in"),
# folded with SGLang's other rare flags (the DeepEP ones) to keep `plan --help` short.
SchedulerRecvIntervalOpt = Annotated[int, typer.Option(
    "--scheduler-recv-interval", min=1, rich_help_panel=COST_RULES_PANEL,
    help="--disagg --engine sglang: the decode workers' --scheduler-recv-interval N (default "
         "1): while decoding, they take newly sent requests in every N decode steps, so a "
         "prompt waits for them before its prefill (SGLang refuses N > 1 with "
         "--decode-dp-attention).")]


def check_disagg_flags(disagg: bool, plan_only: dict[str, Any],
                       disagg_only: dict[str, Any]) -> None:
    """One line for an option the other mode would silently ignore: `plan_only` holds plan's
    options --disagg does not take, `disagg_only` the --disagg options (name -> given value,
    None or False when not given)."""
    given = [name for name, value in (plan_only if disagg else disagg_only).items()
             if value not in (None, False, (), [])]
    if given:
        raise InputError(f"{', '.join(given)}: " + (
            "not taken with --disagg (each role is sized from its own --prefill-* / "
            "--decode-* layout)" if disagg else "needs --disagg"))


def _layout(role: str, tp: int, pp: int, dp: int, ep: int, dp_attention: bool,
            gpus_per_node: int) -> Any:
    from kvplan.analysis.plan_types import Layout

    if dp_attention and (dp < 2 or tp % dp):
        raise InputError(f"--{role}-dp-attention: needs --{role}-dp > 1 dividing --{role}-tp "
                         f"(got tp {tp}, dp {dp})")
    return Layout(tp=tp, pp=pp, dp=dp, ep=ep, dp_attention=dp_attention,
                  gpus_per_node=gpus_per_node)


def disagg_plan_view(opts: dict[str, Any]) -> Any:
    """The disaggregated plan's view from plan's parsed options (one library call)."""
    from kvplan.analysis.disagg import DisaggRequest, plan_disagg
    from kvplan.cli.common import load_spec
    from kvplan.hardware.gpus import get_gpu
    from kvplan.hardware.kv_links import get_kv_link
    from kvplan.present.cost_rules_view import with_cost_rules
    from kvplan.present.disagg_view import disagg_view

    if opts.get("concurrency") is not None and opts.get("rate") is not None:
        raise InputError("--concurrency and --rate: give one target, not both")
    gpu_name = opts.get("gpu") or "H100-80GB"
    if "," in gpu_name:
        raise InputError("--disagg: one --gpu type for both roles")
    gpn = opts.get("gpus_per_node") or 8
    layouts = {role: _layout(role, opts[f"{role}_tp"], opts[f"{role}_pp"], opts[f"{role}_dp"],
                             opts[f"{role}_ep"], opts[f"{role}_dp_attention"], gpn)
               for role in ("prefill", "decode")}
    extra: dict[str, Any] = {}
    if opts.get("block_size") is not None:
        extra["block_size"] = opts["block_size"]
    spec = load_spec(opts["model"])
    gpu = get_gpu(gpu_name)
    req = DisaggRequest(
        prefill=layouts["prefill"], decode=layouts["decode"], input_len=opts["input_len"],
        output_len=opts["output_len"], gpu=gpu,
        link=get_kv_link(opts["link"]).with_rails(opts.get("rails")),
        engine=opts["engine"], engine_version=opts.get("engine_version"),
        connector=opts.get("connector"), kv_dtype=opts.get("kv_dtype") or ENGINE_AUTO,
        mem_fraction=opts.get("mem_fraction"), extra=extra,
        concurrency=opts.get("concurrency"), rate=opts.get("rate"),
        slo_ttft_ms=opts.get("slo_ttft_ms"), slo_tpot_ms=opts.get("slo_tpot_ms"),
        prices=opts.get("prices") or {},
        allow_long_context=bool(opts.get("allow_long_context")),
        cost_rules=rules if (rules := opts.get("cost_rules")) is not None and rules.on else None,
        scheduler_recv_interval=opts.get("scheduler_recv_interval") or 1)
    view = disagg_view(spec, plan_disagg(spec, req))
    from kvplan.perf.cost_rules import NO_COST_RULES

    # The cost rules asked for, and the experts' default table where it prices this model.
    return with_cost_rules(view, (rules or NO_COST_RULES).records(
        (gpu,), moe=spec.moe is not None))
