"""What section 3j's measured TTFT counts (tests.benches.disagg_ttft_def, ttftdef57): the implied
generated tokens and the measured-only comparison by frontend, worked by hand, and the
comparison over the frozen rows."""

from __future__ import annotations

import pytest

from tests.benches.disagg_rows import PREFIX, Replay
from tests.benches.disagg_ttft_def import (
    frontend_lines,
    implied_lines,
    implied_steps,
    measured_rows,
    model_run,
)


def _replay(name: str, conc: int, isl: int, osl: int, ttft: float, tpot: float,
            ours: float | None) -> Replay:
    return Replay(id=f"{PREFIX}dsr1_x_trtllm_fp8_disagg_{isl}x{osl}_c{conc}_{name}",
                  label="1P TP8 EP8 : 1D TP8 EP8, ...", measured_ttft_ms=ttft,
                  measured_tpot_ms=tpot, concurrency=conc, input_len=isl, output_len=osl,
                  ttft_ms=ours, tpot_ms=tpot)


def test_implied_steps_by_hand() -> None:
    # dsr1_gb200_trtllm_fp8_disagg_1024x8192_c4_cfg378 as section 3j prints it: measured TTFT
    # 38,597 ms at TPOT 7.53 ms, kvplan's TTFT 48 ms: (38,597 - 48) / 7.53 = 38,549 / 7.53
    # = 5,119.39 steps.
    r = _replay("cfg378", 4, 1024, 8192, 38597.0, 7.53, 48.0)
    assert implied_steps(r) == pytest.approx(5119.39, abs=0.01)
    assert implied_steps(_replay("cfg1", 4, 1024, 1024, 100.0, 10.0, None)) is None


def test_implied_lines_by_hand() -> None:
    rows = [_replay("a", 4, 1024, 1024, 500.0, 10.0, 100.0),     # k 40
            _replay("b", 8, 1024, 1024, 700.0, 10.0, 100.0),     # k 60
            _replay("c", 512, 1024, 1024, 2100.0, 20.0, 100.0),  # k 100, not light
            _replay("d", 4, 1024, 8192, 8100.0, 10.0, 100.0),    # k 800
            _replay("e", 4, 1024, 8192, 1100.0, 10.0, None)]     # no kvplan TTFT: left out
    text = "\n".join(implied_lines(rows))
    # 1,024 / 1,024: every row 40, 60, 100 -> median 60 = 5.9% of 1,024; light 40 and 60 ->
    # median 50 = 4.9%.
    assert ("ISL 1,024 / OSL 1,024: 3 rows, median k 60 (5.9% of O), at 64 or fewer users 2 "
            "rows, median 50 (4.9% of O), from 40 to 60") in text
    # 1,024 / 8,192: the one row with a kvplan TTFT, 800 = 9.8% of 8,192.
    assert ("ISL 1,024 / OSL 8,192: 1 rows, median k 800 (9.8% of O), at 64 or fewer users 1 "
            "rows, median 800 (9.8% of O), from 800 to 800") in text
    assert implied_lines([_replay("e", 4, 1024, 8192, 1100.0, 10.0, None)])[0].startswith(
        "No replayed row")


def _row(rid: str, model: str, source: str, conc: int, isl: int, osl: int, ttft: float,
         tpot: float, mode: str = "disagg", backend: str = "trtllm") -> dict[str, str]:
    return {"id": rid, "model_path": model, "mode": mode, "backend": backend,
            "silicon_data_source": f"x; silicon_concurrency={conc}; {source}", "isl": str(isl),
            "osl": str(osl), "silicon_ttft_ms": str(ttft), "silicon_tpot_ms": str(tpot)}


def test_frontend_lines_by_hand() -> None:
    dyn = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1.post2"
    serve = "image=nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3"
    rows = [
        # Dynamo, DeepSeek-R1 (a V3 label with a dsr1_ id counts as R1): steps 300 / 10 = 30,
        # 500 / 10 = 50 at 1,024 (median 40); 9,000 / 10 = 900 at 8,192: ratio 22.50.
        _row("dsr1_a", "deepseek-ai/DeepSeek-V3", dyn, 4, 1024, 1024, 300.0, 10.0),
        _row("r1_b", "deepseek-ai/DeepSeek-R1", dyn, 8, 1024, 1024, 500.0, 10.0),
        _row("r1_c", "deepseek-ai/DeepSeek-R1", dyn, 8, 1024, 8192, 9000.0, 10.0),
        # Left out: above 64 users, ISL 8,192.
        _row("r1_d", "deepseek-ai/DeepSeek-R1", dyn, 128, 1024, 8192, 1.0, 10.0),
        _row("r1_e", "deepseek-ai/DeepSeek-R1", dyn, 8, 8192, 1024, 1.0, 10.0),
        # trtllm-serve, aggregated: 200 / 10 = 20 and 220 / 10 = 22: ratio 1.10.
        _row("r1_f", "deepseek-ai/DeepSeek-R1", serve, 4, 1024, 1024, 200.0, 10.0, "agg"),
        _row("r1_g", "deepseek-ai/DeepSeek-R1", serve, 4, 1024, 8192, 220.0, 10.0, "agg"),
        # One OSL only: no line.
        _row("q_h", "Qwen/Qwen3-32B", serve, 4, 1024, 1024, 200.0, 10.0, "agg"),
    ]
    text = "\n".join(frontend_lines(rows))
    assert "| agg | trtllm | DeepSeek-R1 | trtllm-serve | 1 / 1 | 20 | 22 | 1.10 |" in text
    assert "| disagg | trtllm | DeepSeek-R1 | Dynamo | 2 / 1 | 40 | 900 | 22.50 |" in text
    assert "Qwen3-32B" not in text
    # The groups other than Dynamo's: trtllm-serve's alone, 1.10.
    assert "(8,192 over 1,024 from 1.10 to 1.10 x over 1 groups)" in text


def test_model_run() -> None:
    assert model_run({"id": "dsr1_gb200_x", "model_path": "deepseek-ai/DeepSeek-V3"}) == (
        "DeepSeek-R1")
    assert model_run({"id": "gptoss_x", "model_path": "openai/gpt-oss-120b"}) == "gpt-oss-120b"


def test_frozen_rows() -> None:
    """Over the frozen rows (as section 3j prints it): only the Dynamo + TensorRT-LLM
    disaggregated DeepSeek-R1 rows grow with the output length; every other group with both
    lengths keeps its TTFT in steps within 0.6 and 1.3 x."""
    rows = measured_rows()
    # A measurement stored twice (a DeepSeek-V3 label beside its DeepSeek-R1 row) counts once.
    keys = {(r["system"], r["mode"], r["isl"], r["osl"], f"{float(r['silicon_ttft_ms'] or 0):.2f}",
             f"{float(r['silicon_tpot_ms'] or 0):.2f}") for r in rows}
    assert len(keys) == len(rows)
    lines = [x for x in frontend_lines(rows) if x.startswith("| ") and "---" not in x][1:]
    assert "| disagg | trtllm | DeepSeek-R1 | Dynamo | 83 / 16 | 90 | 945 | 10.53 |" in lines
    others = [float(x.split("|")[-2]) for x in lines if "Dynamo" not in x]
    assert len(others) == 9
    assert all(0.6 <= x <= 1.3 for x in others)
