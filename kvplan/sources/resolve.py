"""Where a model comes from: bundled ids, spec files, config.json folders and Hugging Face ids
(`load_model`), each read through kvplan.sources.files' bounds. The top of kvplan.sources: it
uses the readers, none of them uses it."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from kvplan._util.errors import InputError, SpecError
from kvplan._util.search import close_names
from kvplan.model.spec import ModelSpec
from kvplan.sources.files import path_kind, read_text, shown_path
from kvplan.sources.spec_yaml import parse_spec


def bundled_specs_dir() -> Path:
    """Installed wheels carry the specs inside the package; a checkout has them at the top."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "model_specs", package.parent / "model_specs"):
        if candidate.is_dir():
            return candidate
    return package.parent / "model_specs"


def bundled_spec_ids() -> list[str]:
    return sorted(p.stem for p in bundled_specs_dir().glob("*.yaml"))


def bundled_id(model: str) -> str | None:
    """The bundled id MODEL names, ignoring case (``Qwen3-8B`` is ``qwen3-8b``), else None."""
    by_lower = {i.lower(): i for i in bundled_spec_ids()}
    return by_lower.get(model.lower())


# A bundled spec's `source:` line, the config.json it was written from on the Hub.
_HUB_SOURCE = re.compile(r"^source:\s*[\"']?https://huggingface\.co/([\w.-]+/[\w.-]+)/",
                         re.MULTILINE)


def bundled_id_of_hub_repo(repo_id: str) -> str | None:
    """The bundled spec whose `source` is Hub repo `repo_id` (ignoring case, as the Hub does),
    read from the specs' `source:` lines without parsing them; None if none is."""
    wanted = repo_id.lower()
    for path in sorted(bundled_specs_dir().glob("*.yaml")):
        try:
            match = _HUB_SOURCE.search(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if match is not None and match.group(1).lower() == wanted:
            return path.stem
    return None


def did_you_mean(model: str) -> str:
    """`` (did you mean qwen3-8b?)`` for a mistyped bundled id, else ``""``."""
    close = close_names(model.rsplit("/", 1)[-1], bundled_spec_ids())
    return f" (did you mean {', '.join(close)}?)" if close else ""


def read_yaml(path: Path) -> Any:
    """A YAML file's data (safe_load); any problem is one SpecError naming the file."""
    import yaml  # light, but only needed here

    shown = shown_path(path)
    text = read_text(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise SpecError(shown, None, f"malformed YAML{where}: {problem}") from None
    except (ValueError, RecursionError, OverflowError) as exc:
        # A 5,000-digit integer (Python's int-string limit), nesting too deep to walk.
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise SpecError(shown, None, f"malformed YAML: {reason.splitlines()[0][:200]}") from None
    if data is None:
        raise SpecError(shown, None, "file is empty")
    return data


def load_spec_file(path: Path, *, spec_id: str | None = None) -> ModelSpec:
    data = read_yaml(path)
    return parse_spec(data, path=shown_path(path), spec_id=spec_id or path.stem)


def looks_like_path(model: str) -> bool:
    """A MODEL argument that names a file or folder rather than a bundled id: it contains a path
    separator or ends in .yaml/.yml/.json. Anything else is looked up as a bundled id first, so a
    folder called ``llama-3-8b`` in the working directory never shadows the bundled spec."""
    seps = [os.sep] + ([os.altsep] if os.altsep else [])
    return any(sep in model for sep in seps) or model.lower().endswith((".yaml", ".yml",
                                                                         ".json"))


def load_model(model: str, *, hub_timeout_s: float | None = None,
               weights_from: str = "checkpoint") -> tuple[ModelSpec, list[str]]:
    """Resolve a MODEL argument, with any import warnings: a bundled id (``deepseek-v3``, any
    case), a spec YAML file, a HuggingFace ``config.json``, a folder holding a config.json, or
    a Hub id (``Qwen/Qwen3-8B``; the bundled spec when one was written from that repo).

    Bundled ids resolve first unless MODEL looks like a path (`looks_like_path`). The Hub's
    requests take `hub_timeout_s` in all (default kvplan.sources.hub_http.HUB_TIMEOUT_S).
    `weights_from`: "checkpoint" sizes weights from a checkpoint's files when there are (and
    refuses a checkpoint that is not whole), "config" from config.json's architecture always."""
    if not model or not model.strip():
        raise InputError("MODEL: empty (give a bundled id, a spec YAML or a config.json)")
    if not looks_like_path(model) and len(model) <= 255:
        spec_id = bundled_id(model)
        if spec_id is not None:
            return load_spec_file(bundled_specs_dir() / f"{spec_id}.yaml", spec_id=spec_id), []
    candidate = Path(model)
    kind = path_kind(candidate)
    if kind is None:
        # The config.json readers load for a Hub id or a config.json only (start-up).
        from kvplan.sources.hub import is_hub_id, load_hub_model

        if is_hub_id(model):
            spec_id = bundled_id_of_hub_repo(model)
            if spec_id is not None:
                note = (f"note: {model} is the bundled spec {spec_id} (read offline; weights "
                        "from its architecture)")
                return load_spec_file(bundled_specs_dir() / f"{spec_id}.yaml",
                                      spec_id=spec_id), [note]
            return load_hub_model(model, hint=did_you_mean(model), timeout_s=hub_timeout_s,
                                  weights_from=weights_from)
    if kind == "dir":
        if path_kind(candidate / "config.json") is None:
            raise SpecError(shown_path(candidate), None,
                            "a folder without a config.json (give a spec YAML, a config.json or "
                            "a folder holding one)")
        from kvplan.sources.checkpoint import FROM_CONFIG_NOTE, has_checkpoint, read_checkpoint
        from kvplan.sources.hf_config import load_config

        spec, warnings = load_config(candidate)
        if has_checkpoint(candidate) and weights_from == "config":
            warnings.append(FROM_CONFIG_NOTE)
        elif has_checkpoint(candidate):
            spec = replace(spec, checkpoint=read_checkpoint(
                candidate, num_hidden_layers=spec.num_hidden_layers))
        return spec, warnings
    if candidate.suffix.lower() == ".json":
        from kvplan.sources.hf_config import load_config

        return load_config(candidate)
    if kind is not None or candidate.suffix.lower() in (".yaml", ".yml"):
        return load_spec_file(candidate), []
    hint = did_you_mean(model)
    if hint:
        raise SpecError(shown_path(model), None, f"no such file or bundled spec{hint}")
    known = ", ".join(bundled_spec_ids())
    raise SpecError(shown_path(model), None, f"no such file or bundled spec (bundled: {known})")


def load_spec(model: str) -> ModelSpec:
    """Like `load_model`, without the import warnings."""
    return load_model(model)[0]


def load_bundled_specs() -> list[ModelSpec]:
    return [load_spec(spec_id) for spec_id in bundled_spec_ids()]


def generation_config_beside(model: str, *, hub_timeout_s: float | None = None) -> Path:
    """The generation_config.json MODEL's own config.json sits beside (`simulate
    --generation-config auto`): in a folder holding config.json, next to a config.json given
    by path, or in a Hub repo (kvplan.sources.hub.hub_generation_config: its cached snapshot,
    else downloaded). vLLM's `--generation-config` defaults to "auto" (config/model.py:261 at
    0.15.0, as kvplan.engines.vllm.sampler cites): ModelConfig.try_get_generation_config
    passes `self.hf_config_path or self.model` to transformers_utils/config.py
    try_get_generation_config, GenerationConfig.from_pretrained on the model's folder or repo;
    where the file is absent (OSError) it takes GenerationConfig.from_model_config of
    config.json, whose sampling keys are usually unset, i.e. the server's defaults (read in
    code-search excerpts of vllm-project/vllm's main, the tag's lines not pinned: the mirror
    was too large to fetch). Here `auto` is asked for, so a MODEL without the file (a bundled
    spec, a spec YAML, a folder without it) is a one-line InputError naming what was looked
    for."""
    def absent(where: str) -> InputError:
        return InputError(f"--generation-config auto: no generation_config.json {where} (give "
                          "the file's path, or leave the option out for the client's sampling)")

    candidate = Path(model)
    kind = path_kind(candidate) if looks_like_path(model) or bundled_id(model) is None else None
    if kind is None:
        from kvplan.sources.hub import is_hub_id

        if is_hub_id(model):
            from kvplan.sources.hub import hub_generation_config

            found = hub_generation_config(model, timeout_s=hub_timeout_s)
            if found is None:
                raise absent(f"in the Hub repo {model}")
            return found
        raise absent(f"for the bundled spec {model}" if bundled_id(model) is not None
                     else f"for {model}")
    folder = candidate if kind == "dir" else candidate.parent
    if kind != "dir" and candidate.suffix.lower() != ".json":
        raise absent(f"for the spec YAML {shown_path(candidate)} (it has no config.json)")
    path = folder / "generation_config.json"
    if path_kind(path) != "file":
        raise absent(f"in {shown_path(folder)}")
    return path
