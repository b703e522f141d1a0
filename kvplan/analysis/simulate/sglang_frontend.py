"""SGLang's TokenizerManager stage added to a simulation (`kvplan simulate --frontend` with
SGLang; kvplan.engines.sglang.frontend): its serial tokenizing as the ingestion of
kvplan.analysis.simulate.frontend.ServerQueue, and every step's outputs after the loop's earlier
work, on one replica."""

from __future__ import annotations

from dataclasses import replace

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.sim_types import SchedulerConfig
from kvplan.engines.sglang.frontend import SGLANG_TOKENIZER_MANAGER


def with_tokenizer_manager(sched: SchedulerConfig, notes: list[str], *, frontend: bool,
                           dp: int) -> tuple[SchedulerConfig, list[str]]:
    """`sched` with SGLang's TokenizerManager stage when `frontend` (else as it is)."""
    if not frontend:
        return sched, notes
    if dp > 1:
        raise InputError("simulate --frontend: one SGLang TokenizerManager over --dp replicas "
                         "is not modelled (give --dp 1)")
    stage = SGLANG_TOKENIZER_MANAGER
    return (replace(sched, api_server=stage.ingestion(), api_output=stage.output()),
            [*notes, stage.note()])
