"""/proc/meminfo read once (kvplan.sources.machine.meminfo_bytes) for both its readers: the
sweep's memory bound (machine._meminfo_available) and the CPU verify's device probe
(kvplan.analysis.device.probe._meminfo). The kernel counts in kB (proc(5): "kB" = 1,024 B)."""

from __future__ import annotations

import io
import os

import pytest

from kvplan.analysis.device import probe
from kvplan.sources import machine

MEMINFO = """MemTotal:       24682816 kB
MemFree:         1048576 kB
MemAvailable:   23441148 kB
HugePages_Total:       0
"""


def _fake_open(text: str | None):  # type: ignore[no-untyped-def]
    def fake(path: str, *args: object, **kwargs: object) -> io.StringIO:
        assert path == "/proc/meminfo"
        if text is None:
            raise FileNotFoundError(path)
        return io.StringIO(text)
    return fake


def test_meminfo_fields_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("builtins.open", _fake_open(MEMINFO))
    values = machine.meminfo_bytes()
    # 24,682,816 kB x 1,024 = 25,275,203,584 B; 23,441,148 kB x 1,024 = 24,003,735,552 B.
    assert values["MemTotal"] == 25_275_203_584
    assert values["MemAvailable"] == 24_003_735_552
    assert values["HugePages_Total"] == 0
    assert machine._meminfo_available() == 24_003_735_552
    assert probe._meminfo() == (25_275_203_584, 24_003_735_552)


def test_meminfo_missing_falls_back_to_sysconf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("builtins.open", _fake_open(None))
    assert machine.meminfo_bytes() == {}
    page = os.sysconf("SC_PAGE_SIZE")
    monkeypatch.setattr(os, "sysconf", lambda name: {"SC_PAGE_SIZE": page,
                                                     "SC_PHYS_PAGES": 1_000,
                                                     "SC_AVPHYS_PAGES": 400}[name])
    assert machine._meminfo_available() == 400 * page
    assert probe._meminfo() == (1_000 * page, 400 * page)
