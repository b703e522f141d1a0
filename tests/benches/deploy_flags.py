"""A disaggregated row's own engine flags per role (dynpool67, issue 29): the launch flags a
public deployment states for its prefill and decode workers, as row fields the replay
(tests.benches.disagg_rows) passes to that role's sizing and steps, in place of kvplan's
defaults.

Row fields (each optional; empty or absent: the engine's default for that role, as before):
  {role}_gpu_memory_utilization  vLLM --gpu-memory-utilization: the role's memory fraction
  {role}_block_size              vLLM --block-size: tokens per KV block
  {role}_max_num_batched_tokens  vLLM --max-num-batched-tokens: the role's token budget a step
                                 (the prefill's step budget; the decode worker's own prefill
                                 steps without a connector, disagg_local)
  {role}_max_num_seqs            vLLM --max-num-seqs
  {role}_enable_prefix_caching   "false" for --no-enable-prefix-caching, "true" for --enable-...
  {role}_enforce_eager           "true" for --enforce-eager
where {role} is prefill or decode. Fields the replay does not take (e.g. max_model_len: the
replay's context is each request's I + O, as every other row's) are kept in the data file's
`engine_flags` record, with why, and not here.
"""

from __future__ import annotations

from typing import Any

ROLES = ("prefill", "decode")
def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low not in ("true", "false"):
        raise ValueError(f"expected true or false, got {text!r}")
    return low == "true"


# Field suffix -> (PlanInputs field, parser).
_FIELDS: dict[str, tuple[str, Any]] = {
    "gpu_memory_utilization": ("mem_fraction", float),
    "block_size": ("block_size", int),
    "max_num_batched_tokens": ("max_num_batched_tokens", int),
    "max_num_seqs": ("max_num_seqs", int),
    "enable_prefix_caching": ("prefix_caching", _bool),
    "enforce_eager": ("enforce_eager", _bool),
}
# Every row field this module reads (for the replay's setup key and the no-flags counterfactual).
FIELDS = tuple(f"{role}_{suffix}" for role in ROLES for suffix in _FIELDS)


def role_flags(row: dict[str, str], role: str) -> dict[str, Any]:
    """The PlanInputs fields (`mem_fraction`, `block_size`, `max_num_batched_tokens`,
    `max_num_seqs`, `prefix_caching`, `enforce_eager`) the row states for `role`, parsed;
    a field the row leaves empty or absent is not returned (the engine's default)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    out: dict[str, Any] = {}
    for suffix, (name, parse) in _FIELDS.items():
        text = (row.get(f"{role}_{suffix}") or "").strip()
        if text:
            try:
                out[name] = parse(text)
            except ValueError as e:
                raise ValueError(f"row field {role}_{suffix}: {e}") from None
    return out


def without_flags(row: dict[str, str]) -> dict[str, str]:
    """The row without any role flag field: every role at kvplan's defaults (the replay before
    dynpool67)."""
    return {k: v for k, v in row.items() if k not in FIELDS}
