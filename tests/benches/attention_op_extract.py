"""Extract the rows tests/benches/attention_op_bench.py compares from aiconfigurator's measured
attention tables into tests/data/attention_op/attention_perf_rows.csv.gz and
mla_perf_rows.csv.gz (run by hand; the project never needs pyarrow: the committed CSVs are what
the bench and its tests read).

    pip install --target /tmp/pa pyarrow==25.0.1
    git clone https://github.com/ai-dynamo/aiconfigurator  # any clone holding commit 095f58a51
    PYTHONPATH=/tmp/pa:. python -m tests.benches.attention_op_extract /path/to/clone/.git

The source tables (commit 095f58a51 of github.com/ai-dynamo/aiconfigurator), each
aic-core/src/aiconfigurator_core/systems/data/<gpu>/attention/<backend>/<version>/
{context,generation}_attention_perf.parquet and .../mla/<backend>/<version>/
{context,generation}_mla_perf.parquet, are `TABLES` / `MLA_TABLES` below; what their columns
mean and how the latency was measured: tests/data/attention_op/SOURCES.md. The rows kept
(`keep`, `keep_mla`): full attention (no window), 128-wide heads, bf16 queries and a bf16 or
fp8 KV cache, the GQA groups of the checkpoints kvplan prices (4, 6 or 8 query heads a KV
head); MLA: DeepSeek-V3's 128 heads over TP 1 to 8, bf16.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.benches.aic_tables import read_table, write_rows

DATA = "aic-core/src/aiconfigurator_core/systems/data"
GPUS = ("h100_sxm", "h200_sxm", "b200_sxm")
# The releases of the MoE op page (tests/benches/moe_op_extract.py): each engine's release with
# tables on all three cards.
RELEASES = (("vllm", "0.19.0"), ("sglang", "0.5.9"), ("trtllm", "1.2.0rc5"))
PHASES = ("context", "generation")
TABLES = tuple((gpu, backend, version, phase) for gpu in GPUS
               for backend, version in RELEASES for phase in PHASES)
# vLLM 0.19.0's MLA tables time the whole MLA module (projections included): not kept.
MLA_TABLES = tuple((gpu, backend, version, phase) for gpu in GPUS
                   for backend, version in RELEASES[1:] for phase in PHASES)
GROUPS = (4, 6, 8)  # query heads per KV head: Llama-3 / Qwen3 (8), MiniMax-M2 (6), Qwen2.5 (4..)
COLUMNS = ("framework", "version", "device", "op_name", "kernel_source", "batch_size", "isl",
           "num_heads", "num_key_value_heads", "head_dim", "attn_dtype", "kv_cache_dtype",
           "step", "latency")
MLA_COLUMNS = ("framework", "version", "device", "op_name", "kernel_source", "mla_dtype",
               "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step", "latency")
MLA_TP = (1, 2, 4, 8)
KV_DTYPES = ("bfloat16", "fp8")  # GQA rows; MLA rows: bf16 only
OUT = Path(__file__).resolve().parents[1] / "data" / "attention_op"


def table_path(gpu: str, backend: str, version: str, phase: str) -> str:
    return f"{DATA}/{gpu}/attention/{backend}/{version}/{phase}_attention_perf.parquet"


def mla_table_path(gpu: str, backend: str, version: str, phase: str) -> str:
    return f"{DATA}/{gpu}/mla/{backend}/{version}/{phase}_mla_perf.parquet"


def keep(row: dict) -> bool:
    n, kv = row["num_heads"], row["num_key_value_heads"]
    return (row.get("window_size", 0) == 0 and row.get("beam_width", 1) == 1
            and row["head_dim"] == 128 and row["attn_dtype"] == "bfloat16"
            and row["kv_cache_dtype"] in KV_DTYPES and n % kv == 0 and n // kv in GROUPS)


def keep_mla(row: dict) -> bool:
    return (row["num_heads"] == 128 and row["tp_size"] in MLA_TP
            and row["mla_dtype"] == "bfloat16" and row["kv_cache_dtype"] == "bfloat16")


def _extract(git_dir: str, tables, path_of, kept, columns) -> list[dict]:
    rows = []
    for gpu, backend, version, phase in tables:
        table = read_table(git_dir, path_of(gpu, backend, version, phase))
        keep_rows = sorted((r for r in table if kept(r)),
                           key=lambda r: tuple(r[c] for c in columns[:-1]) + (r["latency"],))
        print(f"{gpu} {backend} {version} {phase}: {len(keep_rows)} of {len(table)} rows",
              file=sys.stderr)
        rows.extend(keep_rows)
    return rows


def main(git_dir: str) -> None:
    write_rows(OUT / "attention_perf_rows.csv.gz", COLUMNS,
           _extract(git_dir, TABLES, table_path, keep, COLUMNS))
    write_rows(OUT / "mla_perf_rows.csv.gz", MLA_COLUMNS,
           _extract(git_dir, MLA_TABLES, mla_table_path, keep_mla, MLA_COLUMNS))


if __name__ == "__main__":
    main(sys.argv[1])
