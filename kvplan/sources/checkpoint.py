"""Exact weight sizes from a local safetensors checkpoint, read from the file headers only.

A safetensors file starts with an 8-byte little-endian header length N, then N bytes of JSON
mapping each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (plus an optional
``__metadata__``); the tensor data follows and is never read here
(https://github.com/huggingface/safetensors, "Format").

A folder is read through ``model.safetensors.index.json`` (its ``weight_map`` names the shard of
every tensor) when present, else every ``*.safetensors`` file in it. Tensors are put in groups by
name (`categorise`, first match wins):

==================== ========================================================================
group                name contains / ends with
==================== ========================================================================
quantization_scales  ends with a scale/zero/index suffix: ``weight_scale``, ``weight_scale_inv``,
                     ``weight_scale_2``, ``input_scale``, ``scales``, ``qzeros``, ``g_idx``,
                     ``weight_zero_point``, ``weight_g_idx``, ``weight_shape``, ``absmax``,
                     ``quant_map``, ``quant_state``, ``SCB``, ``_scales`` (gpt-oss), k/v scales
vision               ``visual``, ``vision``, ``multi_modal_projector``, ``mm_projector``,
                     ``image_newline``, ``audio``
mtp                  ``mtp``, ``nextn``, or ``model.layers.N`` with N >= num_hidden_layers
                     (DeepSeek-V3's layer 61) when config.json says how many layers there are
lm_head              ``lm_head``, ``embed_out``, a top-level ``output.weight``
embeddings           ``embed_tokens``, ``wte``, ``wpe``, ``word_embeddings``, ``tok_embeddings``
experts              ``.experts.`` (routed experts), the router: ``mlp.gate.``, ``router``
dense_mlp            ``shared_expert``, ``.mlp.``, ``feed_forward``, ``ffn``
attention            ``self_attn``, ``attention``, ``attn``, ``mixer``, ``linear_attn``
other                the rest: norms (a module named ``*norm``, even inside attention), ...
==================== ========================================================================
"""

from __future__ import annotations

import re
import stat
import struct
from pathlib import Path
from typing import Any

from kvplan._util.errors import SpecError
from kvplan.model.checkpoint import CheckpointWeights, TensorInfo
from kvplan.sources.files import parse_json, path_kind, shown_path

MAX_HEADER_BYTES = 100 * 1024 * 1024
MAX_TENSOR_BYTES = 1 << 50  # far above any real shard; a bound for offsets read off the network
INDEX_FILE = "model.safetensors.index.json"
# What a folder or Hub id read with --weights-from config says (kvplan.sources.resolve, hub).
FROM_CONFIG_NOTE = ("note: weights from config.json's architecture (--weights-from config), "
                    "not from the checkpoint's files")

# Element widths in bits of the safetensors dtypes (safetensors/src/tensor.rs, Dtype).
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16,
    "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "I64": 64, "U64": 64,
    "F64": 64, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "C64": 64,
}


_SCALE_SUFFIXES = (
    "weight_scale", "weight_scale_inv", "weight_scale_2", "input_scale", "scales", "qzeros",
    "g_idx", "weight_zero_point", "weight_g_idx", "weight_shape", "absmax", "quant_map",
    "nested_absmax", "nested_quant_map", "SCB", "k_scale", "v_scale", "q_scale",
    "weight_global_scale", "input_global_scale",
)
_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def categorise(name: str, num_hidden_layers: int | None = None) -> str:
    """The group of a tensor by its name (see the module docstring for the patterns)."""
    last = name.rsplit(".", 1)[-1]
    if (last in _SCALE_SUFFIXES or last.endswith("_scales") or last.endswith("_scale")
            or ".quant_state." in name or last.startswith("quant_state")):
        return "quantization_scales"
    lower = name.lower()
    if any(k in lower for k in ("visual", "vision", "multi_modal_projector", "mm_projector",
                                "image_newline", "audio")):
        return "vision"
    match = _LAYER.search(name)
    if ("mtp" in lower or "nextn" in lower or (
            match is not None and num_hidden_layers is not None
            and int(match.group(1)) >= num_hidden_layers)):
        return "mtp"
    if "lm_head" in lower or "embed_out" in lower or name == "output.weight":
        return "lm_head"
    if any(k in lower for k in ("embed_tokens", "wte.", "wpe.", "word_embeddings",
                                "tok_embeddings")):
        return "embeddings"
    module = name.split(".")[-2] if "." in name else name
    if module.lower().endswith("norm"):
        return "other"  # input_layernorm, post_attention_layernorm, q_norm, kv_a_layernorm
    if "shared_expert" in lower:
        return "dense_mlp"
    if ".experts." in lower or "mlp.gate." in lower or "router" in lower:
        return "experts"
    if any(k in lower for k in (".mlp.", "feed_forward", "ffn")):
        return "dense_mlp"
    if any(k in lower for k in ("self_attn", "attention", "attn", "mixer")):
        return "attention"
    return "other"


def _regular_file(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise SpecError(str(path), None, "file not found") from None
    except OSError as exc:
        raise SpecError(str(path), None, f"cannot read: {exc.__class__.__name__}") from None
    if not stat.S_ISREG(mode):
        raise SpecError(str(path), None, "not a regular file (FIFOs and devices are refused)")


def read_header(path: Path) -> dict[str, Any]:
    """The JSON header of one safetensors file, without its ``__metadata__``."""
    _regular_file(path)
    try:
        with path.open("rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise SpecError(str(path), None, "not a safetensors file (shorter than 8 bytes)")
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER_BYTES:
                raise SpecError(str(path), None, f"safetensors header of {length:,} bytes is "
                                                 f"over the {MAX_HEADER_BYTES:,}-byte limit")
            raw = f.read(length)
            size = path.stat().st_size
    except OSError as exc:
        raise SpecError(str(path), None, f"cannot read: {exc.__class__.__name__}") from None
    if len(raw) < length:
        raise SpecError(str(path), None, "truncated safetensors header")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError(str(path), None, "safetensors header is not valid JSON (not UTF-8)"
                        ) from None
    header = parse_json(text, shown_path(path), "safetensors header")
    if not isinstance(header, dict):
        raise SpecError(str(path), None, "safetensors header is not a JSON object")
    header.pop("__metadata__", None)
    data_bytes = size - 8 - length
    for name, entry in header.items():
        _check_entry(path, name, entry, data_bytes)
    return header


def _check_entry(path: Path, name: str, entry: Any, data_bytes: int) -> None:
    if not isinstance(entry, dict):
        raise SpecError(str(path), name, "tensor entry is not an object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in DTYPE_BITS:
        raise SpecError(str(path), name, f"unknown dtype {dtype!r}")
    if (not isinstance(shape, list)
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
        raise SpecError(str(path), name, f"shape must be a list of integers, got {shape!r}")
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1]):
        raise SpecError(str(path), name, f"bad data_offsets {offsets!r}")
    elements = 1
    for d in shape:
        elements *= d
    expected = -(-elements * DTYPE_BITS[dtype] // 8)
    if offsets[1] - offsets[0] != expected:
        raise SpecError(str(path), name, f"data_offsets span {offsets[1] - offsets[0]} bytes, "
                                         f"{dtype}{shape} needs {expected}")
    if offsets[1] > data_bytes:
        raise SpecError(str(path), name, "data_offsets run past the end of the file")


def _num_layers(folder: Path) -> int | None:
    config = folder / "config.json"
    try:
        if not config.is_file():
            return None
        data = parse_json(config.read_text(encoding="utf-8"), shown_path(config))
    except (OSError, UnicodeDecodeError, SpecError):
        return None  # config.json's own reader says what is wrong with it
    if not isinstance(data, dict):
        return None
    for section in (data, data.get("text_config"), data.get("llm_config")):
        if isinstance(section, dict) and isinstance(section.get("num_hidden_layers"), int):
            return section["num_hidden_layers"]
    return None


def _shards(folder: Path) -> tuple[list[Path], dict[str, str] | None]:
    index = folder / INDEX_FILE
    if index.exists():
        _regular_file(index)
        try:
            text = index.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            raise SpecError(str(index), None, "cannot read as UTF-8 text") from None
        data = parse_json(text, shown_path(index))
        weight_map = data.get("weight_map") if isinstance(data, dict) else None
        if not isinstance(weight_map, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()):
            raise SpecError(str(index), "weight_map", "missing or not a name -> file mapping")
        names = sorted(set(weight_map.values()))
        for n in names:
            if Path(n).name != n:
                raise SpecError(str(index), "weight_map", f"shard {n!r} is not a file name in "
                                                          "the checkpoint folder")
        if not names:
            raise SpecError(str(index), "weight_map", "names no tensor")
        _all_present(folder, [n for n in names if path_kind(folder / n) is None], len(names),
                     f"named by {INDEX_FILE}")
        return [folder / n for n in names], weight_map
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise SpecError(str(folder), None, f"no {INDEX_FILE} and no *.safetensors files")
    _numbered_shards_present(folder, [f.name for f in files])
    return files, None


# Hugging Face's shard names (transformers' modeling_utils, huggingface_hub's
# split_torch_state_dict_into_shards): model-00001-of-00030.safetensors.
_NUMBERED = re.compile(r"^(?P<stem>.*)-(?P<k>\d+)-of-(?P<n>\d+)\.safetensors$")
MISSING_SHOWN = 3


def _all_present(folder: Path, missing: list[str], total: int, how: str) -> None:
    """An interrupted download: refused, naming what is missing (sizing what is there would
    report a fraction of the weights as the whole)."""
    if not missing:
        return
    shown = ", ".join(missing[:MISSING_SHOWN]) + (
        f" and {len(missing) - MISSING_SHOWN:,} more" if len(missing) > MISSING_SHOWN else "")
    raise SpecError(str(folder), None, f"{len(missing):,} of the {total:,} shards {how} are "
                                       f"missing ({shown}): an incomplete download? "
                                       "(--weights-from config sizes weights from config.json)")


def _numbered_shards_present(folder: Path, names: list[str]) -> None:
    """Without an index, every ``-NNNNN-of-MMMMM`` set must be whole."""
    sets: dict[tuple[str, str], set[int]] = {}
    for name in names:
        m = _NUMBERED.match(name)
        if m is not None and len(m["n"]) <= 6 and len(m["k"]) <= 6:  # no checkpoint has more
            sets.setdefault((m["stem"], m["n"]), set()).add(int(m["k"]))
    for (stem, n_text), have in sorted(sets.items()):
        total, width = int(n_text), len(n_text)
        missing = [f"{stem}-{k:0{width}d}-of-{n_text}.safetensors"
                   for k in range(1, total + 1) if k not in have]
        _all_present(folder, missing, total, f"{stem}-*-of-{n_text}")


def has_checkpoint(folder: str | Path) -> bool:
    """Whether a folder holds safetensors weights (an index or any ``*.safetensors`` file)."""
    root = Path(folder)
    return (root / INDEX_FILE).exists() or next(root.glob("*.safetensors"), None) is not None


def read_checkpoint(folder: str | Path, *, num_hidden_layers: int | None = None
                    ) -> CheckpointWeights:
    """Every tensor's dtype, shape and bytes in a checkpoint folder, from the headers only.

    ``num_hidden_layers`` (default: from the folder's config.json) marks layers past the main
    stack as MTP. A file that is missing, unreadable, not a regular file, or malformed is a
    SpecError naming it, and so is a checkpoint that is not whole: a shard that its index or
    its ``-NNNNN-of-MMMMM`` names call for is missing, no tensor, a layer without tensors
    (`check_whole`)."""
    root = Path(folder)
    if not root.is_dir():
        raise SpecError(str(root), None, "not a checkpoint folder")
    layers = num_hidden_layers if num_hidden_layers is not None else _num_layers(root)
    files, weight_map = _shards(root)
    headers = {path.name: read_header(path) for path in files}
    return check_whole(from_headers(str(root), headers, weight_map, num_hidden_layers=layers),
                       layers)


def from_headers(source: str, headers: dict[str, dict[str, Any]],
                 weight_map: dict[str, str] | None, *, num_hidden_layers: int | None
                 ) -> CheckpointWeights:
    """A checkpoint from its files' headers (file name -> tensor name -> entry, each entry
    already checked), keeping each tensor in the shard ``weight_map`` names (when given)."""
    tensors: list[TensorInfo] = []
    seen: set[str] = set()
    for file, header in headers.items():
        for name, entry in header.items():
            if weight_map is not None and weight_map.get(name) != file:
                continue  # the index places this tensor in another shard
            seen.add(name)
            begin, end = entry["data_offsets"]
            tensors.append(TensorInfo(
                name=name, dtype=entry["dtype"], shape=tuple(entry["shape"]),
                nbytes=end - begin, file=file, category=categorise(name, num_hidden_layers)))
    if weight_map is not None:
        missing = sorted(set(weight_map) - seen)
        if missing:
            raise SpecError(f"{source}/{weight_map[missing[0]]}", missing[0],
                            f"listed in {INDEX_FILE} but not in this shard "
                            f"({len(missing)} tensor(s) missing)")
    return CheckpointWeights(folder=source, files=tuple(headers),
                             tensors=tuple(sorted(tensors, key=lambda t: t.name)))


def _ranges(numbers: list[int]) -> str:
    """[3, 4, 5, 9] -> "3-5, 9" (at most four runs shown)."""
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    parts = [f"{a}-{b}" if b > a else f"{a}" for a, b in runs[:4]]
    return ", ".join(parts) + (", ..." if len(runs) > 4 else "")


def check_whole(ckpt: CheckpointWeights, num_hidden_layers: int | None) -> CheckpointWeights:
    """`ckpt`, if whole: it must hold tensors, and, where its names number the layers
    (``model.layers.N.``), every layer config.json declares: what a file without a shard number
    (``model.safetensors``) can lose without an index to say so."""
    source, tensors = ckpt.folder, ckpt.tensors
    if not tensors:
        raise SpecError(source, None, "the checkpoint holds no tensor (an empty or truncated "
                                      "safetensors file?)")
    if not num_hidden_layers:
        return ckpt
    have = {int(m.group(1)) for t in tensors if t.category not in ("vision", "mtp")
            for m in [_LAYER.search(t.name)] if m is not None}
    if not have:
        return ckpt  # names without layer numbers: nothing to hold them to
    missing = [i for i in range(num_hidden_layers) if i not in have]
    if missing:
        raise SpecError(source, None, f"no tensor of layer(s) {_ranges(missing)} of the "
                                      f"{num_hidden_layers} that config.json declares: an "
                                      "incomplete checkpoint? (--weights-from config sizes "
                                      "weights from config.json)")
    return ckpt


def check_entry(source: str, name: str, entry: Any) -> None:
    """Validate one header entry that did not come from a local file (a Hub range request)."""
    _check_entry(Path(source), name, entry, MAX_TENSOR_BYTES)
