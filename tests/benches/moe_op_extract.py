"""Extract the rows tests/benches/moe_op_bench.py compares from aiconfigurator's measured MoE
tables into tests/data/moe_op/moe_perf_rows.csv.gz (run by hand; the project never needs
pyarrow: the committed CSV is what the bench and its tests read).

    pip install --target /tmp/pa pyarrow==25.0.1
    git clone https://github.com/ai-dynamo/aiconfigurator  # any clone holding commit 095f58a51
    PYTHONPATH=/tmp/pa:. python -m tests.benches.moe_op_extract /path/to/clone/.git

The source tables (commit 095f58a51 of github.com/ai-dynamo/aiconfigurator), each
aic-core/src/aiconfigurator_core/systems/data/<gpu>/moe/<backend>/<version>/moe_perf.parquet, are
`TABLES` below; what their columns mean and how the latency was measured:
tests/data/moe_op/SOURCES.md. The rows kept (`keep`): balanced routing, bf16 or block-FP8
experts, the expert shapes of checkpoints kvplan has (`SHAPES`), MoE TP x EP layouts of up to
8 ranks that a serving row uses (`LAYOUTS`), and the token counts of `TOKENS`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from tests.benches.aic_tables import read_table, write_rows

DATA = "aic-core/src/aiconfigurator_core/systems/data"
# (gpu, backend, version): the release of each engine with a balanced-routing table on all
# three cards (vLLM 0.19.0, SGLang 0.5.9, TensorRT-LLM 1.2.0rc5).
TABLES = tuple((gpu, backend, version)
               for gpu in ("h100_sxm", "h200_sxm", "b200_sxm")
               for backend, version in (("vllm", "0.19.0"), ("sglang", "0.5.9"),
                                        ("trtllm", "1.2.0rc5")))
# (hidden_size, inter_size, num_experts, topk): the routed experts of Qwen3-30B-A3B,
# Qwen3-235B-A22B, MiniMax-M2, DeepSeek-V3 / R1, Kimi-K2 and Mixtral-8x7B.
SHAPES = ((2048, 768, 128, 8), (4096, 1536, 128, 8), (3072, 1536, 256, 8),
          (7168, 2048, 256, 8), (7168, 2048, 384, 8), (4096, 14336, 8, 2))
LAYOUTS = ((1, 1), (2, 1), (4, 1), (8, 1), (1, 2), (1, 4), (1, 8))  # (moe_tp, moe_ep)
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
DTYPES = ("bfloat16", "fp8_block")
COLUMNS = ("framework", "version", "device", "op_name", "kernel_source", "moe_dtype",
           "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size",
           "moe_ep_size", "distribution", "latency")
OUT = Path(__file__).resolve().parents[1] / "data" / "moe_op" / "moe_perf_rows.csv.gz"


def table_path(gpu: str, backend: str, version: str) -> str:
    return f"{DATA}/{gpu}/moe/{backend}/{version}/moe_perf.parquet"


def keep(row: dict) -> bool:
    return (row["distribution"] == "balanced" and row["moe_dtype"] in DTYPES
            and (row["hidden_size"], row["inter_size"], row["num_experts"], row["topk"]) in SHAPES
            and (row["moe_tp_size"], row["moe_ep_size"]) in LAYOUTS
            and row["num_tokens"] in TOKENS)


def extract(git_dir: str, tables: tuple[tuple[str, str, str], ...],
            keep: Callable[[dict], bool], out: Path) -> None:
    """The rows `keep` takes of each (gpu, backend, version) MoE table, sorted, into `out`."""
    rows = []
    for gpu, backend, version in tables:
        table = read_table(git_dir, table_path(gpu, backend, version))
        kept = sorted((r for r in table if keep(r)),
                      key=lambda r: tuple(str(r[c]) if isinstance(r[c], str) else r[c]
                                          for c in COLUMNS[:-1]))
        print(f"{gpu} {backend} {version}: {len(kept)} of {len(table)} rows", file=sys.stderr)
        rows.extend(kept)
    write_rows(out, COLUMNS, rows)


def main(git_dir: str) -> None:
    extract(git_dir, TABLES, keep, OUT)


if __name__ == "__main__":
    main(sys.argv[1])
