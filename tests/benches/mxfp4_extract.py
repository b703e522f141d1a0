"""Extract gpt-oss's MXFP4 fused-MoE kernel rows (w4a16_mxfp4) from aiconfigurator's measured MoE
tables into tests/data/moe_mxfp4/mxfp4_rows.csv.gz (mxfp4tab65, issue 30; run by hand, pyarrow
on the path: the project never needs it, the committed CSV is what tests/benches/mxfp4tab65.py
reads).

    PYTHONPATH=/path/to/pyarrow:. python -m tests.benches.mxfp4_extract /path/to/clone/.git

The tables (commit aic_tables.COMMIT, 095f58a51, of github.com/ai-dynamo/aiconfigurator): `TABLES`,
each aic-core/src/aiconfigurator_core/systems/data/<gpu>/moe/<backend>/<version>/moe_perf.parquet
with w4a16_mxfp4 rows of gpt-oss's expert shapes. Rows kept (`keep`): balanced routing,
w4a16_mxfp4 experts of gpt-oss-120b (2880, 2880, 128, 4) or gpt-oss-20b (2880, 2880, 32, 4),
MoE TP x EP layouts of up to 8 ranks (moe_op_extract.LAYOUTS), powers-of-two token counts
1 - 16,384 (moe_op_extract.TOKENS). What the columns mean: tests/data/moe_op/SOURCES.md (the same
collectors and columns).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.benches.moe_op_extract import LAYOUTS, TOKENS, extract

# (gpu, backend, version): every H100 / H200 / B200 table at the commit with w4a16_mxfp4 rows
# of gpt-oss's shapes (vLLM's and the other two engines' releases that have them).
TABLES = (("h100_sxm", "vllm", "0.24.0"), ("h200_sxm", "vllm", "0.18.0"),
          ("h200_sxm", "vllm", "0.19.0"), ("h200_sxm", "vllm", "0.24.0"),
          ("b200_sxm", "vllm", "0.19.0"), ("b200_sxm", "vllm", "0.24.0"),
          ("h100_sxm", "sglang", "0.5.14"), ("h200_sxm", "sglang", "0.5.14"),
          ("h100_sxm", "trtllm", "1.2.0rc5"), ("h200_sxm", "trtllm", "1.2.0rc5"))
SHAPES = ((2880, 2880, 128, 4), (2880, 2880, 32, 4))  # gpt-oss-120b, gpt-oss-20b
OUT = Path(__file__).resolve().parents[1] / "data" / "moe_mxfp4" / "mxfp4_rows.csv.gz"


def keep(row: dict) -> bool:
    return (row["distribution"] == "balanced" and row["moe_dtype"] == "w4a16_mxfp4"
            and (row["hidden_size"], row["inter_size"], row["num_experts"], row["topk"]) in SHAPES
            and (row["moe_tp_size"], row["moe_ep_size"]) in LAYOUTS
            and row["num_tokens"] in TOKENS)


def main(git_dir: str) -> None:
    extract(git_dir, TABLES, keep, OUT)


if __name__ == "__main__":
    main(sys.argv[1])
