"""The recurrent mixer kinds as types (kvplan.model.recurrent): each kind the spec loader admits
answers its own questions, and a loaded spec carries its kind's type."""

import pytest

from kvplan import load_model
from kvplan.model.recurrent import RECURRENT_FIELDS, RECURRENT_KINDS, RecurrentSpec


@pytest.mark.parametrize("kind", sorted(RECURRENT_KINDS))
def test_every_kind_answers_its_own_questions(kind: str) -> None:
    cls = RECURRENT_KINDS[kind]
    assert cls.kind == kind and RECURRENT_FIELDS[kind] == cls.needs
    for method in ("params", "state_flops_per_token", "state_shapes"):
        assert getattr(cls, method) is not getattr(RecurrentSpec, method), (kind, method)


def test_loaded_spec_carries_its_kind_type() -> None:
    # Jamba-Mini: Mamba1 mixers beside attention (model_specs/jamba-mini.yaml).
    rec = load_model("jamba-mini").recurrent
    assert type(rec) is RECURRENT_KINDS["mamba1"] and rec.kind == "mamba1"
