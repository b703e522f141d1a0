"""Issue 28 items 6 and 7: `kvplan report` (HTML opened in a real headless browser, Markdown),
and `--plot` for `plan` and `compare`."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli.app import app

pytest.importorskip("matplotlib")
runner = CliRunner()


def _invoke(*args: str):  # noqa: ANN202
    return runner.invoke(app, list(args), env={"COLUMNS": "100"})


def _plan_json(*args: str) -> dict:
    return json.loads(_invoke("plan", *args, "--format", "json").stdout)


# ---- HTML: self-contained, from the plan's own numbers ---------------------------------------

@pytest.fixture(scope="module")
def plan_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "r.html"
    result = _invoke("report", "llama-3.1-8b", "-n", "64", "-c", "32k", "--gpu", "h100",
                     "-o", str(out))
    assert result.exit_code == 0, result.output
    return out


def test_report_html_is_self_contained(plan_report: Path) -> None:
    text = plan_report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    # Nothing fetched at view time: no script, no stylesheet link, no URL in src/href/url().
    assert "<script" not in text and "<link" not in text and "<img" not in text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    # url() only to the SVGs' own clip paths (#fragment), never to a file or a server.
    assert re.findall(r"url\((?!#)", text) == [] and "@import" not in text
    assert text.count("<svg") >= 2  # the memory picture and the capacity curves


def test_report_html_says_the_plans_numbers(plan_report: Path) -> None:
    text = plan_report.read_text(encoding="utf-8")
    plan = _plan_json("llama-3.1-8b", "-n", "64", "-c", "32k", "--gpu", "h100")
    assert plan["verdict"] == "FITS"
    # The answer line is plan's own first line (kvplan.present.answers.plan_answer), word for
    # word: "FITS: 64 requests of 32,768 tokens on 3 x H100-80GB, tp 1, dp 3 (83.14x)".
    answer = _invoke("plan", "llama-3.1-8b", "-n", "64", "-c", "32k", "--gpu", "h100"
                     ).stdout.splitlines()[0].strip()
    assert answer.startswith(f"FITS: 64 requests of 32,768 tokens on {plan['layout']['gpus']} x "
                             "H100-80GB") and answer in text
    for line in plan["command"].split(" --"):  # every flag of the launch command
        assert line.split()[0] in text
    # The commands' own JSON, embedded: every key of the plan's to_dict() with its value.
    embedded = json.loads(re.search(r"<details>.*?<pre>(.*?)</pre>", text, re.S)
                          .group(1).replace("&quot;", '"').replace("&#x27;", "'")
                          .replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert set(embedded) == {"plan", "estimate", "capacity"}
    for key, value in plan.items():
        assert embedded["plan"][key] == value, key
    # The memory picture's parts sum to the device total (per GPU).
    from kvplan.analysis.report import build_report
    from kvplan.hardware.gpus import get_gpu
    from kvplan.present.report_view import memory_rows
    from kvplan.sources.resolve import load_spec

    data = build_report(load_spec("llama-3.1-8b"), context=32768, gpu=get_gpu("h100"),
                        concurrency=64, curves=False)
    [(label, parts)] = memory_rows(data)
    assert sum(b for _, b, _ in parts) == get_gpu("h100").total_bytes
    kv = {name: b for name, b, _ in parts}["KV cache"]
    assert kv == plan["kv_budget_bytes"]
    assert "Provenance" in text and "huggingface.co/meta-llama/Llama-3.1-8B" in text


def test_report_estimate_markdown_and_refusals(tmp_path: Path) -> None:
    md = tmp_path / "e.md"
    result = _invoke("report", "deepseek-v3", "-c", "32k", "--gpu", "h200", "--tp", "8",
                     "--format", "markdown", "-o", str(md))
    assert result.exit_code == 0, result.output
    text = md.read_text(encoding="utf-8")
    est = json.loads(_invoke("estimate", "deepseek-v3", "-c", "32k", "--gpu", "h200", "--tp",
                             "8", "--format", "json").stdout)
    assert f"**{est['max_requests']:,} requests of 32,768 tokens fit" in text
    assert "<svg" not in text and "## Memory per GPU" in text and "## Provenance" in text
    # Refuses to overwrite, before any work, and leaves the file as it was.
    again = _invoke("report", "deepseek-v3", "-c", "32k", "--format", "markdown", "-o", str(md))
    assert again.exit_code == 2 and "--force" in again.output
    assert md.read_text(encoding="utf-8") == text
    forced = _invoke("report", "deepseek-v3", "-c", "32k", "--format", "markdown", "-o",
                     str(md), "--force")
    assert forced.exit_code == 0, forced.output
    bad = _invoke("report", "deepseek-v3", "-c", "lots", "-o", str(tmp_path / "x.html"))
    assert bad.exit_code == 2 and not (tmp_path / "x.html").exists()


def test_report_when_the_plan_does_not_fit(tmp_path: Path) -> None:
    out = tmp_path / "n.html"
    result = _invoke("report", "llama-3.1-70b", "-n", "4096", "-c", "128k", "--gpus-per-node",
                     "1", "-o", str(out))
    assert result.exit_code == 3, result.output  # as `kvplan plan` (issue 32); file written
    assert "DOES NOT FIT" in out.read_text(encoding="utf-8")
    assert "DOES NOT FIT" in result.output


# ---- a real browser ------------------------------------------------------------------------

def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _png_colours(data: bytes) -> set[bytes]:
    """The distinct pixel colours of an 8-bit RGB/RGBA PNG (what Chromium writes): a tiny
    decoder (zlib + the five PNG filters), so the test needs no imaging library."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours: set[bytes] = set()
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 8 == 0:  # every 8th row is plenty to tell a blank page from a drawn one
            colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 4))
        prev = line
    return colours


@pytest.mark.skipif(_chromium() is None, reason="no chromium on PATH (Debian: apt-get install "
                    "chromium; .ci/run installs it)")
def test_report_renders_in_headless_chromium(plan_report: Path, tmp_path: Path) -> None:
    browser = _chromium()
    assert browser is not None
    shot = tmp_path / "shot.png"
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
              "--disable-extensions", f"--user-data-dir={tmp_path / 'profile'}",
              "--window-size=1100,1600", "--enable-logging=stderr", "--v=0"]
    env = {**os.environ, "HOME": str(tmp_path)}
    url = plan_report.absolute().as_uri()
    run = subprocess.run([*common, f"--screenshot={shot}", url], capture_output=True,
                         text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    # The page's console: Chromium logs each message as "CONSOLE(...)" / ":CONSOLE" on stderr.
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    assert console == []
    colours = _png_colours(shot.read_bytes())
    assert len(colours) > 20, len(colours)  # text, the verdict's green, the charts' colours
    assert bytes.fromhex("dafbe1") in colours  # the FITS box's background: the CSS applied
    dom = subprocess.run([*common, "--dump-dom", url], capture_output=True, text=True,
                         timeout=120, env=env)
    assert dom.returncode == 0
    assert "FITS: 64 requests" in dom.stdout and dom.stdout.count("<svg") >= 2


# ---- --plot for plan and compare -----------------------------------------------------------

def test_plan_and_compare_plot(tmp_path: Path) -> None:
    png, svg = tmp_path / "p.png", tmp_path / "c.svg"
    result = _invoke("plan", "llama-3.1-8b", "-n", "64", "-c", "32k", "--plot", str(png))
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(_png_colours(png.read_bytes())) > 5
    result = _invoke("compare", "llama-3-8b", "--gpu", "h100", "--plot", str(svg))
    assert result.exit_code == 0, result.output
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text
    for label in ("mha", "gqa-8", "mqa", "mla"):  # one line per scheme, labelled
        assert f"<!-- {label} -->" in text, label
    again = _invoke("compare", "llama-3-8b", "--plot", str(svg))
    assert again.exit_code == 2 and "--force" in again.output
    bad = _invoke("plan", "llama-3.1-8b", "--plot", str(tmp_path / "p.gif"))
    assert bad.exit_code == 2 and "unknown extension" in bad.output


def test_plan_curves_are_the_plans_numbers() -> None:
    # The curve at the plan's own context and TP is the sweep's figure for that layout: the
    # plan's per-replica capacity, less what vLLM's sampler warm-up takes at its default
    # --max-num-seqs 1024 rather than the plan's --max-num-seqs 100 (the sweep has no such axis):
    # a little lower, never higher.
    from kvplan.analysis.curves import context_axis, plan_curves
    from kvplan.sources.resolve import load_spec

    plan = _plan_json("qwen3-8b", "-n", "100", "-c", "16k", "--gpu", "a100-80gb")
    df = plan_curves(load_spec("qwen3-8b"), plan, gpus=8)
    tp = plan["layout"]["tp"]
    row = df[(df["context"] == 16384) & (df["tp"] == tp)].iloc[0]
    per_replica = plan["max_concurrency"] / plan["layout"]["dp"]
    curve = float(row["max_concurrency"])
    assert curve <= per_replica and curve == pytest.approx(per_replica, rel=0.01)
    assert context_axis(3000, 40960) == (1024, 2048, 3000, 4096, 8192, 16384, 32768, 40960)
