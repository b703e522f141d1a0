"""mtprows67: the InferenceX configs that could have produced each aggregated row, and the
rows the replay refuses for it (tests.benches.aiconfig_agg_configs)."""

from __future__ import annotations

import pytest

from tests.benches import aiconfig_agg_configs as configs
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_agg_scripts as scripts
from tests.benches.aiconfig_agg_configs_extract import concurrencies, matches

PAIR = "2026_03_25_deepseek_r1_b200_sxm_sglang_fp8_agg_1024x1024_c4_tp8_0_ep1_0_"


def _row(suffix: str) -> dict[str, str]:
    return agg._by_id()[agg.PREFIX + suffix]


def test_concurrencies_by_hand() -> None:
    # generate_sweep_configs.py:203-221 at 12ba0ae07: doubled from conc-start, the last
    # clamped to conc-end; a conc-list as listed.
    assert concurrencies({"conc-start": 4, "conc-end": 64}) == [4, 8, 16, 32, 64]
    assert concurrencies({"conc-start": 4, "conc-end": 24}) == [4, 8, 16, 24]
    assert concurrencies({"conc-start": 4, "conc-end": 4}) == [4]
    assert concurrencies({"conc-list": [6, 666]}) == [6, 666]


def test_match_by_hand() -> None:
    # nvidia-master.yaml:1762-1781 at 12ba0ae07 (dsr1-fp8-b200-sglang), written out: its
    # 1,024 / 1,024 space is TP 8 C 4-64; the row (TP 8, C 4) is in it, C 128 is not.
    plain = {"model-prefix": "dsr1", "runner": "b200", "precision": "fp8",
             "framework": "sglang", "multinode": False,
             "seq-len-configs": [{"isl": 1024, "osl": 1024, "search-space": [
                 {"tp": 8, "ep": 1, "conc-start": 4, "conc-end": 64}]}]}
    row = _row(PAIR + "284")
    assert matches(row, plain) == "none"
    assert matches(row, {**plain, "framework": "trt"}) is None
    assert matches(row, {**plain, "runner": "h200"}) is None
    mtp = {**plain, "seq-len-configs": [{"isl": 1024, "osl": 1024, "search-space": [
        {"tp": 8, "ep": 1, "conc-start": 4, "conc-end": 512, "spec-decoding": "mtp"}]}]}
    assert matches(row, mtp) == "mtp"
    lone = _row("2026_03_25_deepseek_r1_b200_sxm_sglang_fp8_agg_1024x1024_c128_tp8_0_ep1_0_300")
    assert matches(lone, plain) is None and matches(lone, mtp) == "mtp"


def test_deepseek_b200_pairs_by_hand() -> None:
    # At 12ba0ae07 (nvidia-master.yaml:1762-1781, :1944-1960, read by hand): the plain config
    # ran 1,024 / 1,024 and 1,024 / 8,192 at TP 8 C 4-64, 8,192 / 1,024 at TP 8 C 4 and TP 4
    # C 4-32; the -mtp one TP 8 C 4-512 at all three; the same image. So a TP 8 point up to
    # C 64 (8,192 / 1,024: C 4) is ambiguous, a TP 8 point past it is MTP's alone, a TP 4
    # point the plain config's alone. The file's 27 replayable rows: 17 at points both ran
    # (8 pairs and row 250, alone at 8,192 / 1,024 C 4), 6 MTP alone, 4 TP 4.
    part = [r for r in scripts.replayable_inferencex()
            if r["id"].startswith("2026_03_25_deepseek_r1_b200_sxm_sglang_fp8_")
            and scripts.measured_at(r) == "2026-03-25T16:34:14Z"]
    assert len(part) == 27
    amb = {r["id"] for r in part if configs.why_ambiguous(r)}
    spec = {r["id"] for r in part if configs.why_speculative(r)}
    kept = {r["id"] for r in part if not configs.why_refused(r)}
    assert (len(amb), len(spec), len(kept)) == (17, 6, 4)
    assert all("_tp4_" in i for i in kept) and all("_tp8_" in i for i in amb | spec)
    assert {PAIR + "284", PAIR + "265"} <= amb
    # The file's one row of another run (2025-12-31, v0.5.6, d27433dff): the plain config's
    # alone, kept.
    old = _row("2026_03_25_deepseek_r1_b200_sxm_sglang_fp8_agg_8192x1024_c64_tp8_0_ep1_0_1288")
    assert [c.config for c in configs.candidates(old)] == ["dsr1-fp8-b200-sglang"]
    assert configs.why_refused(old) == ""
    assert {i.rsplit("_", 1)[1] for i in spec} == {"300", "281", "254", "272", "301", "280"}
    why = configs.why_refused(_row(PAIR + "284"))
    assert why.startswith("InferenceX configs dsr1-fp8-b200-sglang (spec-decoding none), "
                          "dsr1-fp8-b200-sglang-mtp (spec-decoding mtp) both ran this point")


def test_the_image_identifies_the_config() -> None:
    # dsr1-fp4-b200-trt (1.2.0rc6.post2) and -mtp (1.2.0rc6.post3) at the row's commit: the
    # row's image=...rc6.post3 names the MTP one (refused as speculative); ...rc6.post2 the
    # plain one (kept).
    mtp = _row("2026_03_25_deepseek_r1_b200_sxm_trtllm_fp4_agg_1024x1024_c4_tp8_0_ep1_0_975")
    assert len({c.config for c in configs.candidates(mtp)}) == 2
    assert [c.config for c in configs.identified(mtp)] == ["dsr1-fp4-b200-trt-mtp"]
    assert configs.why_speculative(mtp) and not configs.why_ambiguous(mtp)


def test_refused_in_the_replay_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    row = _row(PAIR + "284")
    replayed = agg.replay_on(row, lambda: pytest.fail("not run"), "c")
    assert not replayed.replayed and replayed.why_not.startswith("InferenceX configs ")
    monkeypatch.setattr(configs, "REFUSE_AMBIGUOUS", False)
    assert configs.why_refused(row) == ""
