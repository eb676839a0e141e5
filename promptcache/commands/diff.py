"""``promptcache diff``: the first divergence between two requests and why it breaks the cache."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from promptcache.providers.apis import APIS
from promptcache.commands.options import STRICT_ADVICE, warn_then_exit_on_error
from promptcache.providers.profiles import PROVIDERS
from promptcache.simulate.diff import DiffReport, char_diff, diff_files, diff_trace
from promptcache.trace.records import TraceFormatError

_STYLES = {"equal": "", "delete": "bold red reverse", "insert": "bold green reverse"}


def _visible(text: str, changed: bool) -> str:
    text = text.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return text.replace(" ", "\u00b7") if changed else text


def print_report(report: DiffReport, console: Console) -> None:
    """The divergence as labelled lines plus a coloured character diff."""
    d = report.divergence
    status = "expected" if d.expected else "unexpected"
    console.print(Text.assemble(("new      ", "bold"), report.new_label))
    console.print(Text.assemble(("earlier  ", "bold"), report.earlier_label or "(none: the first request)"))
    console.print(Text.assemble(("cause    ", "bold"), (d.cause, "bold red" if not d.expected else "bold green"),
                                f" ({status})"))
    if report.miss_cause != d.cause:
        console.print(Text.assemble(("miss     ", "bold"), report.miss_cause or "none: a prefix hit"))
    if d.layer:
        console.print(Text.assemble(("layer    ", "bold"), d.layer))
    if d.path:
        where = d.path + (f" (earlier: {d.earlier_path})" if d.earlier_path and d.earlier_path != d.path else "")
        console.print(Text.assemble(("block    ", "bold"), where))
    console.print(Text.assemble(("token    ", "bold"), f"offset {d.token_offset:,} of {d.prompt_tokens:,} "
                                f"({d.common_prefix_tokens:,} token{'s' * (d.common_prefix_tokens != 1)} shared)"))
    if d.static_after_divergence:
        console.print(Text.assemble(("after    ", "bold"), f"{d.static_after_divergence:,} identical tokens follow "
                                    "the divergence"))
    if d.detail:
        console.print(Text.assemble(("detail   ", "bold"), d.detail))
    if d.hint:
        console.print(Text.assemble(("hint     ", "bold"), d.hint))
    runs = char_diff(d)
    if runs:
        earlier = Text("  - earlier  ", style="red")
        new = Text("  + new      ", style="green")
        for op, text in runs:
            if op in ("equal", "delete"):
                earlier.append(_visible(text, op != "equal"), style=_STYLES[op])
            if op in ("equal", "insert"):
                new.append(_visible(text, op != "equal"), style=_STYLES[op])
        console.print(earlier)
        console.print(new)


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
    err = Console(stderr=True, highlight=False, soft_wrap=True)
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
        print_report(report, Console(highlight=False, soft_wrap=True))
