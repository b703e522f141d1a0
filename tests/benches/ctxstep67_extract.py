"""Extract the NVFP4 DeepSeek-V3 / R1 expert rows tests/benches/ctxstep67.py sets against
kvplan's context step from aiconfigurator's measured MoE tables into
tests/data/moe_op/moe_nvfp4_rows.csv.gz (run by hand, as tests/benches/moe_op_extract.py; the
project never needs pyarrow):

    PYTHONPATH=/tmp/pa:. python -m tests.benches.ctxstep67_extract /path/to/aiconfigurator/.git

The tables (commit 095f58a51, tests/benches/aic_tables.COMMIT): B200's SGLang 0.5.9 and
TensorRT-LLM 1.2.0rc5 and GB200's SGLang 0.5.9 moe_perf.parquet (GB200 has no TensorRT-LLM MoE
table at that commit). Kept: balanced routing, DeepSeek-V3 / R1's routed experts (7,168 hidden,
2,048 intermediate, 256 experts, top 8), `nvfp4` experts (GB200: also `fp8_block`, which the
committed moe_perf_rows.csv.gz lacks: it holds no GB200 table; B200's TensorRT-LLM table: also
`fp8`, per-tensor FP8, since its block-FP8 rows hold no DeepSeek shape: the nearest format),
MoE EP 1-8 without MoE TP, and moe_op_extract's token counts. What the columns mean:
tests/data/moe_op/SOURCES.md (the same collectors; the NVFP4 kernel sources are SGLang's
`sglang_flashinfer_cutedsl_moe` and TensorRT-LLM's `moe_torch_flow_cutlass` /
`moe_torch_flow_min_latency`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.benches.moe_op_extract import TOKENS, extract

TABLES = (("b200_sxm", "sglang", "0.5.9"), ("b200_sxm", "trtllm", "1.2.0rc5"),
          ("gb200", "sglang", "0.5.9"))
SHAPE = (7168, 2048, 256, 8)
LAYOUTS = ((1, 1), (1, 2), (1, 4), (1, 8))  # (moe_tp, moe_ep)
OUT = Path(__file__).resolve().parents[1] / "data" / "moe_op" / "moe_nvfp4_rows.csv.gz"


def keep(row: dict) -> bool:
    dtypes = {"NVIDIA GB200": ("nvfp4", "fp8_block"),
              "NVIDIA B200": ("nvfp4", "fp8") if row["framework"] == "TRTLLM" else ("nvfp4",)
              }[row["device"]]
    return (row["distribution"] == "balanced" and row["moe_dtype"] in dtypes
            and (row["hidden_size"], row["inter_size"], row["num_experts"], row["topk"]) == SHAPE
            and (row["moe_tp_size"], row["moe_ep_size"]) in LAYOUTS
            and row["num_tokens"] in TOKENS)


def main(git_dir: str) -> None:
    extract(git_dir, TABLES, keep, OUT)


if __name__ == "__main__":
    main(sys.argv[1])
