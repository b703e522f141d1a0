"""`kvplan estimate` start-up against a minimal typer app that imports yaml and rich (issue #11's
yardstick): wall time of whole processes, interleaved, median and best of N runs each.

Run: python examples/startup_bench.py [N] [--instructions]
     (N: runs of each, default 21; run it on an otherwise idle machine)

--instructions adds each command's instruction count under valgrind (callgrind), one run each:
deterministic, so it shows a change of kvplan's own work on a busy machine where times do not;
its ratios run higher than the time ratios (the interpreter's own start-up, file system and page
faults cost time but few instructions), so the yardstick stays the wall time.

Both sides run from compiled bytecode, as after `pip install` (which byte-compiles packages): a
warm-up run of each command writes kvplan's `__pycache__` even where PYTHONDONTWRITEBYTECODE is
set (an editable checkout would otherwise recompile every kvplan module on every start).
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MINI = '''
import typer, yaml, rich

app = typer.Typer()


@app.command()
def estimate(model: str, context: int = 4096) -> None:
    rich.print(model, context)


@app.command()
def other() -> None:
    pass


if __name__ == "__main__":
    app()
'''


def instructions(cmd: list[str], env: dict[str, str]) -> int:
    """Instructions one run executes (valgrind --tool=callgrind's "Collected")."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=True, env=env)
    return int(re.search(r"Collected : (\d+)", proc.stderr).group(1))


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--instructions"]
    count = "--instructions" in sys.argv[1:] and shutil.which("valgrind") is not None
    runs = int(args[0]) if args else 21
    script = Path(sys.executable).parent / "kvplan"  # the console script, as users run it
    kvplan = [str(script)] if script.exists() else [sys.executable, "-m", "kvplan"]
    with tempfile.TemporaryDirectory() as tmp:
        mini = Path(tmp) / "mini.py"
        mini.write_text(MINI)
        commands = {
            "minimal typer + yaml + rich app": [sys.executable, str(mini), "estimate", "x"],
            "kvplan estimate llama-3.1-8b --format json": [*kvplan, "estimate", "llama-3.1-8b",
                                                           "--format", "json"],
            "kvplan estimate llama-3.1-8b (table)": [*kvplan, "estimate", "llama-3.1-8b"],
            "kvplan estimate llama-3.1-8b --gpu H100 (table)": [*kvplan, "estimate",
                                                                "llama-3.1-8b", "--gpu", "H100"],
        }
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for cmd in commands.values():  # warm-up: bytecode written, file caches filled
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                           env=env)
        ir = {name: instructions(cmd, env) for name, cmd in commands.items()} if count else {}
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, cmd in commands.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=True, env=env)
                times[name].append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime + after.ru_stime
                                 - before.ru_utime - before.ru_stime)
    mini = "minimal typer + yaml + rich app"
    base, cpu_base = statistics.median(times[mini]), statistics.median(cpu[mini])
    best_base = min(times[mini])
    print(f"# Start-up: median and best of {runs} runs each (Python {sys.version.split()[0]})\n")
    print("Wall time is what a user waits; CPU time (user + system, from getrusage) moves less "
          "when other processes share the machine. The best run is the least disturbed one "
          "(timeit's rule): on a host whose other tenants add delays the median grows with them, "
          "the best does not.\n")
    extra = " instructions (M) | x minimal app |" if ir else ""
    print("| command | wall ms (median) | x minimal app | wall ms (best) | x minimal app "
          "| CPU ms (median) | x minimal app |" + extra)
    print("|---|--:|--:|--:|--:|--:|--:|" + ("--:|--:|" if ir else ""))
    for name, values in times.items():
        median, cpu_median, best = (statistics.median(values), statistics.median(cpu[name]),
                                    min(values))
        row = (f"| {name} | {median * 1000:.0f} | {median / base:.2f} | {best * 1000:.0f} "
               f"| {best / best_base:.2f} | {cpu_median * 1000:.0f} "
               f"| {cpu_median / cpu_base:.2f} |")
        if ir:
            row += f" {ir[name] / 1e6:.0f} | {ir[name] / ir[mini]:.2f} |"
        print(row)


if __name__ == "__main__":
    main()
