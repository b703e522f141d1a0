"""The launch of a plan: the model name a command takes, and the engine's own commands for a
layout (kvplan.engines.launch; each engine writes its flags in kvplan.engines.<name>.launch).
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import PurePath

from kvplan.engines.base import Engine
from kvplan.engines.launch import LaunchLayout, LaunchPlan, LaunchSettings
from kvplan.model.spec import ModelSpec


def model_ref(spec: ModelSpec) -> str:
    """The name a launch command takes: the Hugging Face id of the spec's source; for a model
    read from a local config.json, its folder (engines load a folder, not the config file);
    else the spec's path or id."""
    src = spec.source
    prefix = "https://huggingface.co/"
    if src.startswith(prefix):
        parts = src[len(prefix):].split("/")
        if len(parts) >= 2:
            return f"{parts[0]}/{parts[1]}"
    path = spec.path
    if path and PurePath(path).name == "config.json":
        return str(PurePath(path).parent)
    return path if path and not path.endswith(".yaml") else spec.id


def launch_for(spec: ModelSpec, engine: Engine, layout: LaunchLayout,
               settings: LaunchSettings, *, ref: str | None = None) -> LaunchPlan:
    """The commands that start `layout` on `engine` (head node first)."""
    settings = replace(settings, architectures=spec.architectures, remote_code=spec.remote_code,
                       remote_config=spec.remote_config,
                       config_model_type=spec.config_model_type)
    return engine.rules.launch_plan(ref or model_ref(spec), layout, settings)


def command_text(plan: LaunchPlan) -> str:
    """The head node's command as one shell line (the `command` of plan's JSON)."""
    return " ".join([f"{k}={shlex.quote(v)}" for k, v in plan.env] + [shlex.join(plan.head.argv)])
