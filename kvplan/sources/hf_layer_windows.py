"""Sliding windows given one per layer, as a list, read as vLLM's model code reads them (issue
26: "per-layer sliding windows from a list").

Two families hand each layer's Attention its own window from a list, None (or a full_attention
layer) meaning full attention:

- ExaoneMoE (K-EXAONE; vLLM 0.32 models/exaone_moe.py ExaoneMoeAttention, lines 228-246):
  a ``full_attention`` entry of ``layer_types`` gets no window; any other layer
  ``sliding_windows[layer_idx]`` when the config has that list, else ``config.sliding_window``.
  transformers 5.19's ExaoneMoeConfig defaults sliding_window 4096 and, without layer_types,
  builds them from an integer sliding_window_pattern (4): layer i slides unless (i + 1) % 4 == 0.
- PLaMo-3 (vLLM 0.32 models/plamo3.py Plamo3AttentionMixer, line 205):
  ``per_layer_sliding_window=config.interleaved_sliding_window[layer_idx]``, a list the remote
  Plamo3Config (the checkpoint's configuration_plamo3.py, loaded with --trust-remote-code)
  builds: None where (i + 1) % sliding_window_pattern == 0, else window_size.

`list_windows` turns such a list into the attention section's ``sliding_window`` and
``layer_types``, once for both; every family builds its list (`layer_window_list`). kvplan's
spec holds one window for all sliding layers (vLLM would make one KV cache group per distinct
window, kv_cache_utils.py), so sliding layers of different windows are refused in one line.
A full layer's Attention falls back to CacheConfig's window, which vLLM 0.32 sets only when
layer_types is absent or all sliding (engine/arg_utils.py create_engine_config): then every
layer slides and there is no full layer to misplace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kvplan._util.errors import SpecError
from kvplan._util.validate import checked_int
from kvplan.model.spec import FULL, SLIDING
from kvplan.sources.hf_reader import ConfigReader


def list_windows(c: ConfigReader, windows: Sequence[int | None], *, field: str,
                 source: str) -> dict:
    """The attention section's window fields from one window per layer (None: full
    attention): {} when no layer slides, ``sliding_window`` when all do, else also
    ``layer_types``. Sliding layers of different windows are refused (`field` names where the
    windows come from, `source` the vLLM file that reads them)."""
    sizes = sorted({w for w in windows if w is not None})
    if not sizes:
        return {}
    if len(sizes) > 1:
        raise SpecError(c.path, field, f"sliding windows of {', '.join(map(str, sizes))} tokens "
                                       f"on different layers ({source}): vLLM keeps one KV "
                                       "cache group per window, which kvplan does not size; "
                                       "refused")
    if all(w is not None for w in windows):
        return {"sliding_window": sizes[0]}
    return {"sliding_window": sizes[0],
            "layer_types": [FULL if w is None else SLIDING for w in windows]}


def _window(c: ConfigReader, value: object, field: str) -> int | None:
    """One layer's window: null is full attention; otherwise a positive whole number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SpecError(c.path, field, f"{value!r}: expected a positive whole number of tokens "
                                       "or null")
    return value


def _exaone_moe(c: ConfigReader, layers: int) -> tuple[list[int | None], str]:
    """ExaoneMoeAttention's windows (models/exaone_moe.py lines 228-246; MTP layers aside:
    they are a draft model's, not the target's)."""
    types = c.data.get("layer_types")
    window = c.data.get("sliding_window")  # ExaoneMoeConfig's 4096 filled when absent
    if types is None:
        # ExaoneMoeConfig.__post_init__: sliding unless (i + 1) % sliding_window_pattern == 0;
        # a null sliding_window sets the pattern to 0, which that modulo cannot take, and a
        # string pattern ("LLLG") fails it too: the class does not build.
        pattern = c.data.get("sliding_window_pattern")
        if window is None or isinstance(pattern, bool) or not isinstance(pattern, int) \
                or pattern <= 0:
            raise SpecError(c.path, "layer_types", "missing, and ExaoneMoeConfig cannot build it "
                                                   f"from sliding_window_pattern {pattern!r} "
                                                   f"and sliding_window {window!r}")
        types = [SLIDING if (i + 1) % pattern else FULL for i in range(layers)]
        c.warn(f"layer_types absent: built as ExaoneMoeConfig does (full attention where "
               f"(i + 1) % {pattern} == 0)")
    if not isinstance(types, list) or len(types) < layers:
        raise SpecError(c.path, "layer_types", f"expected a list of {layers} entries (one per "
                                               "layer)")
    bad = [t for t in types[:layers] if t not in (FULL, SLIDING)]
    if bad:
        raise SpecError(c.path, "layer_types", f"layer type {bad[0]!r} is not one kvplan models")
    listed = c.data.get("sliding_windows")
    if listed is not None:
        if not isinstance(listed, list) or len(listed) < layers:
            raise SpecError(c.path, "sliding_windows", f"expected a list of {layers} entries: "
                                                       "exaone_moe.py indexes one per layer")
        return ([None if t == FULL else _window(c, listed[i], "sliding_windows")
                 for i, t in enumerate(types[:layers])], "sliding_windows")
    one = _window(c, window, "sliding_window")
    if one is not None:
        one = checked_int(one, path=c.path, field="sliding_window")
    return [None if t == FULL else one for t in types[:layers]], "sliding_window"


def _plamo3(c: ConfigReader, layers: int) -> tuple[list[int | None], str]:
    """The remote Plamo3Config's interleaved_sliding_window. Its published versions differ in
    how they default window_size (128) and whether they take a config.json ``sliding_window``
    for it (the later one takes an integer, or a list whose non-null entries agree); kvplan
    reads window_size and refuses a ``sliding_window`` that would make the versions differ."""
    pattern = c.data.get("sliding_window_pattern")  # Plamo3Config's 8 filled when absent
    if isinstance(pattern, bool) or not isinstance(pattern, int) or pattern <= 0:
        raise SpecError(c.path, "sliding_window_pattern", f"{pattern!r}: expected a positive "
                                                          "whole number (Plamo3Config's "
                                                          "is_full_attn takes (i + 1) % it)")
    size = c.data.get("window_size")
    if size is None:
        raise SpecError(c.path, "window_size", "missing: the remote Plamo3Config versions "
                                               "default it differently (or take "
                                               "sliding_window instead); refused rather than "
                                               "guessed")
    size = _window(c, size, "window_size")
    windows = [None if (i + 1) % pattern == 0 else size for i in range(layers)]
    legacy = c.data.get("sliding_window")
    stated = [w for w in legacy if w is not None] if isinstance(legacy, list) else [legacy]
    if legacy is not None and any(w != size for w in stated):
        raise SpecError(c.path, "sliding_window", f"{legacy!r} beside window_size {size}: one "
                                                  "remote Plamo3Config version takes it for "
                                                  "window_size, another ignores it; refused")
    return windows, "window_size"


# model_type -> its builder of one window per layer (and the field the windows come from).
_BUILDERS: dict[str, tuple[Callable[[ConfigReader, int], tuple[list[int | None], str]], str]] = {
    "exaone_moe": (_exaone_moe, "models/exaone_moe.py ExaoneMoeAttention"),
    "plamo3": (_plamo3, "models/plamo3.py Plamo3AttentionMixer"),
}
LAYER_WINDOW_LISTS = frozenset(_BUILDERS)


def layer_window_list(c: ConfigReader, layers: int) -> dict:
    """The attention section's window fields of a family of `LAYER_WINDOW_LISTS`."""
    build, source = _BUILDERS[c.model_type]
    windows, field = build(c, layers)
    return list_windows(c, windows, field=field, source=source)
