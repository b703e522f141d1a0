"""The caches one rank of a pipeline stage holds, as the selected engine caches the model: its
served spec, its recurrent-state dtypes, and the draft layers speculative decoding adds."""

from __future__ import annotations

from kvplan._util.errors import InputError, unknown_choice
from kvplan.engines.base import PlanInputs
from kvplan.kv.cache import layer_caches
from kvplan.kv.kinds import LayerCaches
from kvplan.model.spec import ModelSpec

SPECULATIVE_METHODS = ("mtp", "eagle", "eagle3")


def draft_layers(spec: ModelSpec, inputs: PlanInputs) -> int:
    """KV layers a drafter adds (vLLM registers them like the target's): MTP, the model's
    num_nextn_predict_layers layers of its own kind; EAGLE / EAGLE-3, one full-attention layer."""
    method = inputs.speculative_method
    if method is None:
        if inputs.num_speculative_tokens:
            raise InputError("--num-speculative-tokens: needs --speculative-method")
        return 0
    if method not in SPECULATIVE_METHODS:
        raise unknown_choice("--speculative-method", SPECULATIVE_METHODS, method)
    if inputs.num_speculative_tokens < 1:
        raise InputError("--num-speculative-tokens: must be >= 1 with --speculative-method")
    if method == "mtp":
        if not spec.num_nextn_predict_layers:
            raise InputError(f"--speculative-method mtp: {spec.id} has no MTP layers "
                             "(num_nextn_predict_layers is 0)")
        return spec.num_nextn_predict_layers
    return 1


def stage_caches(spec: ModelSpec, inputs: PlanInputs, layers: range | None = None,
                 ) -> tuple[LayerCaches, ...]:
    """Every cache one rank of a pipeline stage holds (default: the whole model), as the
    engine's implementation of the model caches it (`served_spec`)."""
    rules = inputs.engine.rules
    spec = rules.served_spec(spec, inputs)
    conv, ssm = rules.state_dtypes(spec, inputs)
    return layer_caches(spec, kv_dtype=inputs.kv_dtype, tp=inputs.kv_tp, layer_range=layers,
                        ssm_dtype=ssm, conv_dtype=conv,
                        num_draft_layers=draft_layers(spec, inputs),
                        num_spec_tokens=inputs.num_speculative_tokens)
