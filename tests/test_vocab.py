"""Issue 28 item 2: one vocabulary across commands.

The request count is --concurrency (-n) everywhere, with --requests and --batch/-b the same
option where they meant the same; the context is --context (-c, --max-model-len,
--context-length); every token-count option takes 8k / 1m; the JSON says `concurrency` and
`context`. Item 3's help: every command's --help fits one screen.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.cli.app import COMMANDS
from kvplan.cli.help_cmd import FOLDED_PANELS
from kvplan.cli.vocab import CONCURRENCY_FLAGS, CONTEXT_FLAGS, ENGINE_PANELS

runner = CliRunner()
GROUP = typer.main.get_command(app)


def _command(name: str):
    return GROUP.commands[name]


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    return result.stdout


# Each command that takes the request count: its arguments and how the count is spelled there.
# simulate: --concurrency is the closed loop's cap, also vLLM bench's --max-concurrency; there
# --requests would read as --num-requests (the requests to send), so it is not an alias.
SIMULATE_CONCURRENCY = ("--concurrency", "-n", "--max-concurrency")
RUNS = {
    "estimate": (["llama-3-8b", "--gpu", "H100", "-f", "json"], CONCURRENCY_FLAGS),
    "compare": (["llama-3-8b", "--gpu", "H100", "-f", "json"], CONCURRENCY_FLAGS),
    "plan": (["llama-3-8b", "-f", "json"], CONCURRENCY_FLAGS),
    "sweep": (["llama-3-8b", "--gpu", "H100", "-f", "json"], CONCURRENCY_FLAGS),
    "simulate": (["llama-3-8b", "--gpu", "H100", "--num-requests", "12", "--input-len", "1k",
                  "--output-len", "16", "-f", "json"], SIMULATE_CONCURRENCY),
}


@pytest.mark.parametrize(("command", "flag"),
                         [(c, f) for c, (_, flags) in RUNS.items() for f in flags[1:]])
def test_every_request_count_alias_gives_the_same_result(command: str, flag: str) -> None:
    args, flags = RUNS[command]
    canonical = _run(command, *args, flags[0], "4", "--context", "8k")
    assert _run(command, *args, flag, "4", "--context", "8k") == canonical
    data = json.loads(canonical)
    for record in data if isinstance(data, list) else [data]:
        assert record["concurrency"] == 4 and record["context"] == 8192


@pytest.mark.parametrize(("command", "flag"),
                         [(c, f) for c in RUNS for f in CONTEXT_FLAGS[1:]])
def test_every_context_alias_gives_the_same_result(command: str, flag: str) -> None:
    args, flags = RUNS[command]
    canonical = _run(command, *args, flags[0], "2", "--context", "8192")
    assert _run(command, *args, flags[0], "2", flag, "8k") == canonical


def test_report_aliases_write_the_same_file(tmp_path: Path) -> None:
    texts = set()
    for i, (n, c) in enumerate([("--concurrency", "--context"), ("-n", "-c"),
                                ("--requests", "--max-model-len"), ("-b", "--context-length"),
                                ("--batch", "--context")]):
        out = tmp_path / f"r{i}.md"
        _run("report", "llama-3-8b", n, "4", c, "8k", "-f", "markdown", "-o", str(out))
        texts.add(out.read_text())
    assert len(texts) == 1


@pytest.mark.parametrize("command", ["verify", "check"])
def test_context_aliases_parse_alike_where_a_run_needs_a_device_or_server(command: str) -> None:
    # verify allocates memory and check reads a server: their options are held equal parsed.
    cmd = _command(command)
    seen = []
    for flag in CONTEXT_FLAGS:
        ctx = cmd.make_context(command, ["x", flag, "8k"], resilient_parsing=True)
        seen.append(ctx.params["context"])
    assert seen == [8192] * len(CONTEXT_FLAGS)


def test_estimate_concurrency_sizes_the_batch_and_asks_the_reverse_question() -> None:
    # --requests N and --batch N were two halves of one question; now each spelling asks both:
    # the KV for N requests, and with a GPU the longest context for N and the fraction.
    data = json.loads(_run("estimate", "llama-3-8b", "--gpu", "H100", "-n", "8", "-f", "json"))
    assert data["batch"] == data["concurrency"] == data["requests"] == 8
    assert data["bytes_per_batch"] == 8 * data["bytes_per_sequence"]
    assert data["longest_context_for_requests"] is not None
    # Without a GPU: the KV for N requests, no error.
    alone = json.loads(_run("estimate", "llama-3-8b", "--requests", "8", "-f", "json"))
    assert alone["bytes_per_batch"] == 8 * alone["bytes_per_sequence"]


def test_an_error_names_the_spelling_the_user_wrote() -> None:
    for written, shown in (("--concurrency", "--concurrency"), ("-n", "--concurrency"),
                           ("--requests", "--requests"), ("-b", "--batch"),
                           ("--batch", "--batch")):
        result = runner.invoke(app, ["estimate", "llama-3-8b", written, "0"])
        assert result.exit_code == 2
        assert result.stderr == f"kvplan: error: {shown}: must be >= 1, got 0\n"


# --- every token-count option takes 8k ------------------------------------------------------

# A long option whose name says it counts tokens. Every one must take 8k (a new one too).
TOKEN_NAME = re.compile(r"context|max-model-len|-len$|tokens|prefix")
# Not token counts although the name says so, each with why.
NOT_TOKEN_COUNTS = {
    "--input-len-dist": "a distribution (uniform:LO:HI), not one count",
    "--output-len-dist": "a distribution (uniform:LO:HI), not one count",
    "--swa-full-tokens-ratio": "a ratio of two pools' tokens",
    "--prefix-hit-rate": "a share of each prompt (0-1), not a count",
    "--spec-mean-accept-len": "a mean over steps (1 + accepted drafts), fractional",
}
# Lists of counts: their values are parsed by the command (`8k,32k`, `1k..128k:x2`).
TOKEN_LISTS = {("sweep", "context")}


def _token_options():
    for name in COMMANDS:
        for param in _command(name).params:
            longs = [o for o in param.opts if o.startswith("--")]
            if getattr(param, "is_flag", False) or param.param_type_name != "option":
                continue
            if any(TOKEN_NAME.search(o) for o in longs) and longs[0] not in NOT_TOKEN_COUNTS:
                yield name, param


def test_token_options_are_found() -> None:
    found = {(c, p.opts[0]) for c, p in _token_options()}
    # The ones issue 28 names, so that the search cannot quietly find nothing.
    for case in [("estimate", "--context"), ("compare", "--context"), ("verify", "--context"),
                 ("compare", "--mtp-tokens"), ("simulate", "--input-len"),
                 ("plan", "--output-len"), ("estimate", "--max-num-batched-tokens"),
                 ("estimate", "--shared-prefix"), ("simulate", "--prefix-len"),
                 ("check", "--context"), ("report", "--context"), ("sweep", "--context")]:
        assert case in found


@pytest.mark.parametrize(("command", "option"),
                         [(c, p.opts[0]) for c, p in _token_options()])
@pytest.mark.parametrize(("text", "value"), [("8k", 8192), ("1m", 1 << 20), ("4096", 4096)])
def test_every_token_option_takes_k_and_m(command: str, option: str, text: str,
                                          value: int) -> None:
    cmd = _command(command)
    param = next(p for p in cmd.params if p.opts and p.opts[0] == option)
    ctx = cmd.make_context(command, ["x", option, text], resilient_parsing=True)
    got = ctx.params[param.name]
    if (command, param.name) in TOKEN_LISTS:
        from kvplan.analysis.sweep import parse_int_list

        assert parse_int_list(option, got) == (value,)
    else:
        assert got == value


@pytest.mark.parametrize(("args", "message"), [
    (["compare", "llama-3-8b", "--context", "8q"], "--context: bad value '8q'"),
    (["verify", "llama-3-8b", "--max-model-len", "x"], "--max-model-len: bad value 'x'"),
    (["estimate", "llama-3-8b", "--shared-prefix", "-1"], "--shared-prefix: bad value '-1'"),
    (["compare", "llama-3-8b", "--mtp-tokens", "1.5"], "--mtp-tokens: bad value '1.5'"),
])
def test_a_bad_token_count_is_one_line(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"kvplan: error: {message}")
    assert result.stderr.count("\n") == 1


def test_zero_stays_allowed_where_it_was() -> None:
    data = json.loads(_run("estimate", "llama-3-8b", "--shared-prefix", "0", "-f", "json"))
    assert data["bytes_per_token"] == 131_072
    assert json.loads(_run("compare", "llama-3-8b", "--mtp-tokens", "0", "-f", "json"))


# --- --help in one screen (item 3) -----------------------------------------------------------

@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_every_help_fits_80_lines_of_80_columns(command: str) -> None:
    result = runner.invoke(app, [command, "--help"] if command else ["--help"],
                           env={"COLUMNS": "80"})
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) <= 80, (command, len(lines))
    assert max(len(line) for line in lines) <= 80
    if not command:
        return
    # Every option is listed (one line each), engine ones in their own panel; a folded panel's
    # (the offload tiers') in one line that sends to `kvplan help COMMAND`, which lists them.
    cmd = _command(command)
    folded = [p for p in cmd.params if getattr(p, "rich_help_panel", None) in FOLDED_PANELS]
    if folded:
        assert f"{len(folded)} options" in result.stdout
        assert f"kvplan help {command}" in result.stdout
        full = runner.invoke(app, ["help", command], env={"COLUMNS": "200"}).stdout
        assert all(p.opts[0] in full for p in folded)
    for param in cmd.params:
        longs = [o for o in param.opts if o.startswith("--")]
        if longs and not param.hidden and param not in folded:
            name = longs[0] if not param.secondary_opts else "--[no-]" + longs[0][2:]
            assert name[:29] in result.stdout, (command, name)


def test_engine_options_have_their_own_panels_and_help_engines_lists_them() -> None:
    text = runner.invoke(app, ["estimate", "--help"], env={"COLUMNS": "80"}).stdout
    for panel in ENGINE_PANELS:
        assert f"─ {panel} options ─" in text
    full = _run("help", "engines")
    engine_opts = {(p.opts[0], p.rich_help_panel) for name in COMMANDS
                   for p in _command(name).params if p.rich_help_panel in ENGINE_PANELS}
    assert len(engine_opts) >= 20
    for opt, _ in engine_opts:
        assert opt in full
    only = _run("help", "engines", "sglang")
    assert "--disable-radix-cache" in only and "--enforce-eager" not in only


def test_engine_panels_are_the_engines_display_names() -> None:
    from kvplan.engines.base import Engine

    assert tuple(e.rules.display_name for e in Engine) == ENGINE_PANELS


def test_help_engines_and_help_lines_fit_80_columns() -> None:
    for args in (["help"], ["help", "engines"], ["help", "estimate"]):
        text = runner.invoke(app, args, env={"COLUMNS": "80"}).stdout
        assert max(len(line) for line in text.splitlines()) <= 80, args


def test_help_command_prints_every_alias() -> None:
    full = _run("help", "estimate")
    for alias in (*CONCURRENCY_FLAGS, *CONTEXT_FLAGS, "--page-size", "--kv-cache-dtype"):
        assert alias in full
    result = runner.invoke(app, ["help", "nope"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
