"""``promptcache convert``: a trace's request bodies moved to another API (Anthropic Messages, OpenAI Chat,
OpenAI Responses)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import click

from promptcache.commands.options import STRICT_ADVICE, warn_then_exit_on_error
from promptcache.commands.tables import stdout_console
from promptcache.providers.apis import APIS
from promptcache.trace.output_path import check_writable_file
from promptcache.trace.records import SkippedLines, TraceFormatError, read_trace, write_trace


@click.command("convert")
@click.argument("trace", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--to", "target", type=click.Choice(APIS), required=True, help="The API to convert the bodies to.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the converted trace here [default: standard output].")
@click.option("--strict", is_flag=True, help="Fail on a line or body that cannot be converted instead of skipping it.")
def convert(trace, target, output, strict):
    """Convert the request bodies of TRACE (JSON Lines) to another API, keeping t, session and key order.

    \b
    promptcache convert chat.jsonl --to openai.responses -o responses.jsonl
    promptcache convert responses.jsonl --to anthropic.messages > messages.jsonl

    Records already of the target API are copied unchanged. OpenAI Responses
    bodies go through their Chat Completions view; a chained Responses request
    (previous_response_id) becomes the whole request the API assembled (the
    earlier input and output inlined), or is skipped with a warning when the
    earlier response is not in the trace.

    \b
    Dropped (counted on standard error), since the target has no counterpart:
    - usage and response of converted records (they describe the original request);
    - Anthropic cache_control markers, thinking blocks, metadata, top_k;
    - OpenAI prompt_cache_key, prompt_cache_options and other OpenAI-only parameters
      when converting to Anthropic;
    - Responses reasoning items, built-in tools (web_search, ...), include, truncation,
      reasoning.summary; item ids and statuses (not prompt content);
    - Chat stop, seed, n, penalties, logit_bias when converting to Responses.
    Not converted (the record is skipped): built-in tool calls and their outputs,
    item_reference items, images by file_id, Anthropic server tools.

    Exit codes: 0 done, 2 a usage error, a trace with no record left, or (with
    --strict) a line or body that cannot be converted.
    """
    from promptcache.convert.traces import convert_records

    err = stdout_console(stderr=True)  # wrapped at a terminal's width, whole lines in a pipe
    if output is not None:
        try:
            check_writable_file(output)
        except OSError as exc:
            raise click.UsageError(f"cannot write {output}: {exc}") from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        skip = SkippedLines()
        try:
            records = read_trace(trace, strict=strict, on_problem=skip)
            result = convert_records(records, target, strict=strict, on_problem=skip, source=os.path.basename(trace))
        except TraceFormatError as exc:
            error = f"{exc} {STRICT_ADVICE}"
        except ValueError as exc:  # EmptyTraceError: nothing left to write
            error = str(exc)
        else:
            error = None
    warn_then_exit_on_error(caught, err, error)
    if output is None:
        for record in result.records:
            click.echo(record.to_json())
    else:
        write_trace(output, result.records)
    kept = len(result.records) - result.converted
    err.print(f"converted {result.converted} record{'' if result.converted == 1 else 's'} to {target}"
              + (f" ({kept} already {target}, copied)" if kept else "")
              + (f"; {skip.count} skipped" if skip.count else ""), markup=False)
    if result.dropped:
        err.print("dropped (records): " + ", ".join(f"{label} ({n})" for label, n in sorted(result.dropped.items())),
                  markup=False)
    for note, n in sorted(result.notes.items()):
        err.print(f"note: {note}" + (f" ({n} records)" if n > 1 else ""), markup=False)
