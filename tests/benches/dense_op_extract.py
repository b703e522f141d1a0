"""Extract the rows tests/benches/dense_op_bench.py compares from aiconfigurator's measured dense
GEMM and all-reduce tables into tests/data/dense_op/gemm_perf_rows.csv.gz and
allreduce_perf_rows.csv.gz (run by hand; the project never needs pyarrow: the committed CSVs are
what the bench and its tests read).

    pip install --target /tmp/pa pyarrow==25.0.1
    git clone https://github.com/ai-dynamo/aiconfigurator  # any clone holding commit 095f58a51
    PYTHONPATH=/tmp/pa:. python -m tests.benches.dense_op_extract /path/to/clone/.git

The source tables (commit 095f58a51 of github.com/ai-dynamo/aiconfigurator), under
aic-core/src/aiconfigurator_core/systems/data/<gpu>/: `gemm/<backend>/<version>/gemm_perf.parquet`
(`GEMM_TABLES`), `comm/<backend>/<version>/custom_allreduce_perf.parquet` (`CUSTOM_AR_TABLES`) and
`comm/nccl/<version>/nccl_perf.parquet` (`NCCL_TABLES`); what their columns mean and how the
latency was measured: tests/data/dense_op/SOURCES.md. The rows kept: GEMMs of M in `GEMM_M`
(powers of two, 1 to 16,384) over the weight shapes of `GEMM_SHAPES` in the dtypes of
`GEMM_DTYPES` (`keep_gemm`); every row of the custom all-reduce tables; NCCL's all-reduce in
half precision (`keep_nccl`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.benches.aic_tables import read_table, write_rows

DATA = "aic-core/src/aiconfigurator_core/systems/data"
GPUS = ("h100_sxm", "h200_sxm", "b200_sxm")
# The release of each engine with a table on all three cards (as tests/benches/moe_op_extract).
ENGINES = (("vllm", "0.19.0"), ("sglang", "0.5.9"), ("trtllm", "1.2.0rc5"))
GEMM_TABLES = tuple((gpu, backend, version) for gpu in GPUS for backend, version in ENGINES)
CUSTOM_AR_TABLES = GEMM_TABLES
NCCL_VERSION = "2.29.2"  # the one NCCL release collected on all three cards
NCCL_TABLES = tuple((gpu, "nccl", NCCL_VERSION) for gpu in GPUS)

GEMM_M = tuple(2 ** i for i in range(15))  # 1 .. 16,384 rows
# (n, k) = (output, input features): the 5 x 5 powers of two 1,024 .. 16,384, and the per-rank
# shapes of Llama-3.1-70B (hidden 8,192, intermediate 28,672, 64 query / 8 KV heads of 128) at
# TP 4 and 8 that the tables hold: qkv 2,560 x 8,192 (TP 4), o_proj 8,192 x 2,048 / 1,024,
# gate_up 7,168 x 8,192 (TP 8), down 8,192 x 7,168 / 3,584. (TP 4's gate_up, 14,336 x 8,192,
# and TP 8's qkv, 1,280 x 8,192, are not in the tables' grid.)
_POW2 = (1024, 2048, 4096, 8192, 16384)
GEMM_SHAPES = tuple(sorted({(n, k) for n in _POW2 for k in _POW2}
                           | {(2560, 8192), (7168, 8192), (8192, 7168), (8192, 3584)}))
GEMM_DTYPES = ("bfloat16", "fp8", "fp8_block", "nvfp4")

GEMM_COLUMNS = ("framework", "version", "device", "op_name", "kernel_source", "gemm_dtype",
                "m", "n", "k", "latency")
AR_COLUMNS = ("framework", "version", "device", "op_name", "kernel_source", "dtype",
              "num_gpus", "message_size", "latency")
OUT = Path(__file__).resolve().parents[1] / "data" / "dense_op"
GEMM_OUT = OUT / "gemm_perf_rows.csv.gz"
AR_OUT = OUT / "allreduce_perf_rows.csv.gz"


def table_path(gpu: str, op: str, backend: str, version: str, name: str) -> str:
    return f"{DATA}/{gpu}/{op}/{backend}/{version}/{name}.parquet"


def keep_gemm(row: dict) -> bool:
    return (row["gemm_dtype"] in GEMM_DTYPES and row["m"] in GEMM_M
            and (row["n"], row["k"]) in GEMM_SHAPES)


def keep_nccl(row: dict) -> bool:
    return row["op_name"] == "all_reduce" and row["nccl_dtype"] == "half"


def _sorted(rows: list[dict], columns: tuple[str, ...]) -> list[dict]:
    return sorted(rows, key=lambda r: tuple(r[c] for c in columns[:-1]))


def main(git_dir: str) -> None:
    gemm: list[dict] = []
    for gpu, backend, version in GEMM_TABLES:
        table = read_table(git_dir, table_path(gpu, "gemm", backend, version, "gemm_perf"))
        kept = _sorted([r for r in table if keep_gemm(r)], GEMM_COLUMNS)
        print(f"gemm {gpu} {backend} {version}: {len(kept)} of {len(table)} rows", file=sys.stderr)
        gemm.extend(kept)
    write_rows(GEMM_OUT, GEMM_COLUMNS, gemm)
    comm: list[dict] = []
    for gpu, backend, version in CUSTOM_AR_TABLES:
        table = read_table(git_dir,
                           table_path(gpu, "comm", backend, version, "custom_allreduce_perf"))
        kept = [dict(r, dtype=r["allreduce_dtype"]) for r in table]
        print(f"custom all-reduce {gpu} {backend} {version}: {len(kept)} of {len(table)} rows",
              file=sys.stderr)
        comm.extend(_sorted(kept, AR_COLUMNS))
    for gpu, backend, version in NCCL_TABLES:
        table = read_table(git_dir, table_path(gpu, "comm", backend, version, "nccl_perf"))
        kept = [dict(r, dtype=r["nccl_dtype"]) for r in table if keep_nccl(r)]
        print(f"nccl {gpu} {version}: {len(kept)} of {len(table)} rows", file=sys.stderr)
        comm.extend(_sorted(kept, AR_COLUMNS))
    write_rows(AR_OUT, AR_COLUMNS, comm)


if __name__ == "__main__":
    main(sys.argv[1])
