"""The usable requests of a trace: the one way ``simulate``, ``diff`` and ``verify`` read one.

A trace line can parse as a record and still hold no request: ``{"messages":
5}``, a message that is a number, a content block without a ``type``. Such a
body is *malformed input*: :func:`usable_records` checks each body at the
``STRUCTURE`` level (:func:`promptcache.trace.shape.check_body`), reports the
others (``FILE:LINE: malformed request body: ...; line skipped``) and skips
them, or raises under ``--strict``.

``openai.responses`` records that chain onto an earlier response
(``previous_response_id``) are read as the API reads them, with the earlier
input and output before their own (:class:`promptcache.trace.chain.ChainResolver`);
one whose earlier response is not in the trace is reported (``FILE:LINE:
previous_response_id 'resp_...' names a response that is not in the trace ...:
the chained prefix ... is unknown ...; line skipped``) and skipped: its prefix
is not guessed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from promptcache.trace.chain import ChainResolver, UnknownPrefixError
from promptcache.trace.records import EmptyTraceError, SkippedLines, TraceFormatError, TraceRecord, read_trace
from promptcache.trace.shape import check_body

__all__ = ["read_requests", "usable_records"]


def usable_records(records: Iterable[TraceRecord], *, strict: bool = False,
                   on_problem: Callable[[TraceFormatError], None] | None = None, source: str = "<trace>",
                   model_given: bool = False) -> Iterator[TraceRecord]:
    """The records whose body is a request body of their API (:func:`check_body`), in order.

    The one way ``simulate``, ``diff`` and ``verify`` pick the usable records of
    a trace: a record whose body is not a request body (no ``messages``, an
    OpenAI body labelled ``anthropic.messages``, ...) is reported as
    ``FILE:LINE: malformed request body: body.PATH: problem`` and skipped, as a
    malformed line is by :func:`~promptcache.trace.records.read_trace`. Lazy: a record
    is checked when it is reached. A chained ``openai.responses`` record comes out
    with its whole input (:mod:`promptcache.trace.chain`), or is reported and skipped
    when its earlier response is not in the trace.

    Args:
        records: trace records (``record.line`` names the line in reports).
        strict: raise the problem instead of skipping the record.
        on_problem: where skipped records are reported; a
            :class:`~promptcache.trace.records.SkippedLines` shared with ``read_trace``
            counts lines and records together (default: a ``TraceFormatWarning`` each).
        source: the trace's file name in reports.
        model_given: a model comes from elsewhere (``--model``, ``verify``'s backend), so a body needs none.

    Raises:
        TraceFormatError: with ``strict``, the first malformed body or unknown chained prefix.
    """
    skip = SkippedLines.of(on_problem)
    chains = ChainResolver()
    for record in records:
        try:
            check_body(record.api, record.body, model_given=model_given)
        except ValueError as exc:  # MalformedBody, or an api that is not one of APIS
            problem = TraceFormatError(f"malformed request body: {exc}", source=source, line=record.line)
        else:
            try:
                resolved = chains.resolve(record)
            except UnknownPrefixError as exc:
                problem = TraceFormatError(str(exc), source=source, line=record.line)
            else:
                yield resolved
                continue
        if strict:
            raise problem from None
        skip(problem)


def read_requests(path: str | os.PathLike[str], *, strict: bool = False,
                  on_problem: Callable[[TraceFormatError], None] | None = None,
                  model_given: bool = False) -> list[TraceRecord]:
    """A trace file's usable records: :func:`~promptcache.trace.records.read_trace`, then :func:`usable_records`.

    Raises:
        TraceFormatError: with ``strict``, the first malformed line or body.
        EmptyTraceError: no usable record (an empty file, or every line or body skipped), naming ``path``
            and the lines skipped.
        OSError: the file cannot be read.
    """
    skip = SkippedLines.of(on_problem)
    skipped_before = skip.count
    records = read_trace(path, strict=strict, on_problem=skip)
    usable = list(usable_records(records, strict=strict, on_problem=skip,
                                 source=os.path.basename(os.fspath(path)), model_given=model_given))
    if not usable:
        raise EmptyTraceError(os.fspath(path), skip.count - skipped_before)
    return usable
