"""``promptcache diff``: the first divergence between two requests and why it breaks the cache."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from promptcache.commands.options import STRICT_ADVICE, warn_then_exit_on_error
from promptcache.commands.tables import stdout_console
from promptcache.providers.apis import APIS
from promptcache.providers.profiles import PROVIDERS
from promptcache.simulate.diff import DiffReport, char_diff, diff_files, diff_trace
from promptcache.trace.records import TraceFormatError

_EARLIER, _NEW = "  - earlier  ", "  + new      "
_STYLES = {"equal": "", "delete": "bold red reverse", "insert": "bold green reverse"}


def _visible(text: str, changed: bool) -> str:
    text = text.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return text.replace(" ", "\u00b7") if changed else text


def _fit_runs(runs: list[tuple[str, str]], room: int) -> list[tuple[str, str]]:
    """``runs`` (visible text) with the shared context at both ends cut to ``…`` so that the longer of the two
    lines fits ``room`` cells; the changed runs are kept whole, and both lines keep their alignment."""
    runs = list(runs)
    longest = max(sum(len(t) for op, t in runs if op != "insert"), sum(len(t) for op, t in runs if op != "delete"))
    excess = longest - room
    for end in (-1, 0):  # the trailing context first, then the leading one
        if excess <= 0 or not runs or runs[end][0] != "equal":
            continue
        op, text = runs[end]
        keep = max(8, len(text) - excess - 1)
        if keep < len(text):
            excess -= len(text) - keep - 1
            runs[end] = (op, text[:keep] + "\u2026" if end == -1 else "\u2026" + text[len(text) - keep:])
    return runs


def print_report(report: DiffReport, console: Console) -> None:
    """The divergence as labelled lines (wrapped under their value on a terminal) plus a coloured character
    diff whose shared context is cut to the console's width."""
    d = report.divergence
    status = "expected" if d.expected else "unexpected"
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    grid.add_row("new", report.new_label)
    grid.add_row("earlier", report.earlier_label or "(none: the first request)")
    grid.add_row("cause", Text.assemble((d.cause, "bold red" if not d.expected else "bold green"), f" ({status})"))
    if report.miss_cause != d.cause:
        grid.add_row("miss", report.miss_cause or "none: a prefix hit")
    if d.layer:
        grid.add_row("layer", d.layer)
    if d.path:
        where = d.path + (f" (earlier: {d.earlier_path})" if d.earlier_path and d.earlier_path != d.path else "")
        grid.add_row("block", where)
    grid.add_row("token", f"offset {d.token_offset:,} of {d.prompt_tokens:,} "
                          f"({d.common_prefix_tokens:,} token{'s' * (d.common_prefix_tokens != 1)} shared)")
    if d.static_after_divergence:
        grid.add_row("after", f"{d.static_after_divergence:,} identical tokens follow the divergence")
    if d.detail:
        grid.add_row("detail", d.detail)
    if d.hint:
        grid.add_row("hint", d.hint)
    console.print(grid)
    runs = [(op, _visible(text, op != "equal")) for op, text in char_diff(d)]
    if runs:
        runs = _fit_runs(runs, console.width - len(_EARLIER))
        earlier = Text(_EARLIER, style="red")
        new = Text(_NEW, style="green")
        for op, text in runs:
            if op in ("equal", "delete"):
                earlier.append(text, style=_STYLES[op])
            if op in ("equal", "insert"):
                new.append(text, style=_STYLES[op])
        console.print(earlier, soft_wrap=True)
        console.print(new, soft_wrap=True)


@click.command("diff")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--at", type=int, help="With one TRACE.jsonl: the request to explain (0-based, as in simulate's output).")
@click.option("--api", type=click.Choice(APIS), help="API of bare request bodies [default: inferred from their shape].")
@click.option("--provider", type=click.Choice(PROVIDERS), help="Trace mode: whose cache rules name runtime causes.")
@click.option("--model", help="Trace mode: simulate the requests as this model.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Trace mode: fail on a malformed line instead of skipping it.")
def diff(paths, at, api, provider, model, output_format, strict):
    """Explain where a request stops sharing its prefix with an earlier one.

    \b
    promptcache diff A.json B.json          B (new) against A (earlier): two bodies or trace records
    promptcache diff TRACE.jsonl --at N     request N against the earlier request with the longest
                                            common prefix

    Prints the layer, block, token offset, a coloured character diff and the
    cause class. Exit codes: 0 done, 2 a usage error or unreadable input (a trace with no
    usable request included).
    """
    err = stdout_console(stderr=True)  # wrapped at a terminal's width, whole lines in a pipe
    if not ((len(paths) == 1 and at is not None) or (len(paths) == 2 and at is None)):
        raise click.UsageError("give two request files (A.json B.json) or one trace with --at N")
    with warnings.catch_warnings(record=True) as caught:  # reported once each, as `simulate` does
        warnings.simplefilter("always")
        try:
            if len(paths) == 1:
                report = diff_trace(paths[0], at, strict=strict, provider=provider, model=model)
            else:
                report = diff_files(paths[0], paths[1], api=api)
        except TraceFormatError as exc:  # a malformed line or body under --strict
            error = f"{exc} {STRICT_ADVICE}"
        except (ValueError, IndexError) as exc:
            error = str(exc)
        else:
            error = None
    warn_then_exit_on_error(caught, err, error)
    if output_format == "json":
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        print_report(report, stdout_console())
