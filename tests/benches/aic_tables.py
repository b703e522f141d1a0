"""Reading aiconfigurator's measured op tables (parquet, in its git history) and writing the rows
kept as a committed csv.gz: shared by the op benches' extraction scripts (moe_op_extract,
attention_op_extract, dense_op_extract), run by hand with pyarrow on the path; the project itself
never imports pyarrow.
"""

from __future__ import annotations

import csv
import gzip
import io
import subprocess
from collections.abc import Iterable
from pathlib import Path

COMMIT = "095f58a51"  # github.com/ai-dynamo/aiconfigurator, every extraction's tables


def read_table(git_dir: str, path: str) -> list[dict]:
    """One table at COMMIT of the bare mirror `git_dir`, as rows."""
    import pyarrow.parquet as pq  # only here: the project does not depend on pyarrow

    blob = subprocess.run(["git", "--git-dir", git_dir, "show", f"{COMMIT}:{path}"],
                          capture_output=True, check=True).stdout
    return pq.read_table(io.BytesIO(blob)).to_pylist()


def write_rows(path: Path, columns: tuple[str, ...], rows: Iterable[dict]) -> None:
    """The rows' `columns` as csv, gzip without a timestamp (byte-stable); `latency` by repr,
    every digit kept."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(path, "wb", mtime=0) as raw:
        with io.TextIOWrapper(raw, encoding="utf-8", newline="") as text:
            w = csv.writer(text, lineterminator="\n")
            w.writerow(columns)
            for r in rows:
                w.writerow([repr(r[c]) if c == "latency" else r[c] for c in columns])
