"""kvplan's one vocabulary across commands (issue 28 item 2): the request count is --concurrency
(-n; --requests, --batch and -b are the same option), the context is --context (-c; vLLM's
--max-model-len and SGLang's --context-length too), and every token count takes k/m suffixes.
Also the engines' KV dtype spellings."""

from __future__ import annotations

import re

from kvplan._util.dtypes import KV_DTYPE_ALIASES
from kvplan._util.errors import InputError, unknown_choice
from kvplan.engines.kv_dtype import ENGINE_AUTO, asked_kv_dtype

__all__ = ["CONCURRENCY_FLAGS", "CONTEXT_FLAGS", "COST_RULES_PANEL", "ENGINE_AUTO",
           "ENGINE_PANELS", "HOST_STAGES_PANEL", "KV_DTYPE_ALIASES", "LENGTH_SPREAD_PANEL",
           "SGLANG_PANEL", "SPEC_DECODE_PANEL", "TRTLLM_PANEL", "VLLM_PANEL", "kv_dtype_option",
           "kv_dtype_or_auto_option", "parse_kv_dtype", "parse_kv_dtype_or_auto", "parse_tokens",
           "tokens_option", "tokens_or_zero_option"]

# The spellings of the request count and of the context, in every command that takes them (the
# first is the name used in messages and JSON; an error names the spelling the user wrote).
CONCURRENCY_FLAGS = ("--concurrency", "-n", "--requests", "--batch", "-b")
CONTEXT_FLAGS = ("--context", "-c", "--max-model-len", "--context-length")

# Help panels of engine-specific options (rich_help_panel=...), titled with each engine's
# display name (EngineRules.display_name; tests/test_vocab.py holds them equal): each command's
# --help lists them apart, one line each; `kvplan help engines` prints them in full.
VLLM_PANEL, SGLANG_PANEL, TRTLLM_PANEL = "vLLM", "SGLang", "TensorRT-LLM"
ENGINE_PANELS = (VLLM_PANEL, SGLANG_PANEL, TRTLLM_PANEL)
# `simulate`'s opt-in host stages of vLLM (the API server, the engine core, the sampler, MoE
# compiles): folded to one line in --help (kvplan.cli.help_cmd.FOLDED_PANELS), in full in
# `kvplan help simulate`.
HOST_STAGES_PANEL = "vLLM host stages"
# The time model's opt-in rules (kvplan.cli.cost_opts) and SGLang's MoE all-to-all
# (kvplan.cli.moe_a2a_opts, off by default too): folded as the host stages are.
COST_RULES_PANEL = "Opt-in cost rules, SGLang DeepEP"
# A benchmark client's random length spread (simulate --random-range-ratio, its convention):
# folded as the host stages are.
LENGTH_SPREAD_PANEL = "Length spread"
# The layouts `plan --rate` searches (--no-dp-attention): folded as the host stages are.
RATE_LAYOUTS_PANEL = "Rate search layouts"
# `simulate`'s speculative decoding (the drafter, its acceptance): folded as the host stages are.
SPEC_DECODE_PANEL = "Speculative decoding"
# `simulate --link`: the fabric between nodes a layout over several NVLink domains crosses
# (kvplan.hardware.kv_links.scale_out_link): folded as the host stages are.
FABRIC_PANEL = "Inter-node fabric"


def parse_tokens(option: str, text: str, *, minimum: int = 1) -> int:
    """4096, 32k (x1024), 1m (x1024^2); 0 too when `minimum` is 0."""
    from kvplan.analysis.sweep import parse_size  # pure Python; pandas/numpy load only for a sweep

    if minimum == 0 and re.fullmatch(r"0+(\.0*)?[km]?", text.strip(), re.IGNORECASE):
        return 0
    try:
        return parse_size(option, text)
    except InputError:
        raise InputError(f"{option}: bad value {text.strip()!r} (expected a token count like "
                         "4096, 32k (x1024) or 1m (x1024^2))") from None


def parse_kv_dtype(option: str, text: str) -> str:
    try:
        return KV_DTYPE_ALIASES[text.strip().lower()]
    except KeyError:
        raise unknown_choice(option, KV_DTYPE_ALIASES, text) from None


def _tokens(value: str | int, minimum: int) -> int:
    import typer

    if isinstance(value, int):
        return value
    try:
        return parse_tokens("value", value, minimum=minimum)
    except InputError as exc:
        raise typer.BadParameter(str(exc).removeprefix("value: ")) from None


def tokens_option(value: str | int) -> int:
    """typer parser for token-count options: 4096, 32k, 1m (one clear usage error otherwise)."""
    return _tokens(value, 1)


def tokens_or_zero_option(value: str | int) -> int:
    """typer parser for token counts that may be 0 (a shared prefix, draft tokens)."""
    return _tokens(value, 0)


def tokens_or_off_option(value: str | int) -> int:
    """typer parser for a token budget where -1 means off (SGLang --chunked-prefill-size)."""
    return -1 if str(value).strip() == "-1" else _tokens(value, 1)


def kv_dtype_option(value: str) -> str:
    import typer

    try:
        return parse_kv_dtype("value", value)
    except InputError as exc:
        raise typer.BadParameter(str(exc).removeprefix("value: ")) from None


def parse_kv_dtype_or_auto(option: str, text: str) -> str:
    """A --kv-dtype whose `auto` is the engine's own (vLLM: the KV dtype the checkpoint
    declares, else the model's; kvplan.engines.kv_dtype.run_kv_dtype): `auto` stays ENGINE_AUTO,
    the rest as parse_kv_dtype (kvplan.engines.kv_dtype.asked_kv_dtype)."""
    asked = asked_kv_dtype(text)
    return parse_kv_dtype(option, text) if asked is None else asked


def kv_dtype_or_auto_option(value: str) -> str:
    """typer parser for parse_kv_dtype_or_auto (one clear usage error otherwise)."""
    import typer

    try:
        return parse_kv_dtype_or_auto("value", value)
    except InputError as exc:
        raise typer.BadParameter(str(exc).removeprefix("value: ")) from None
