"""Whole traces from one API to another: ``promptcache convert TRACE --to API`` without the command line.

Each record's body goes through :func:`promptcache.convert.convert_body`
(Anthropic <-> Chat directly, OpenAI Responses through its Chat view). A record
already of the target API is copied unchanged (its ``usage``, ``response`` and
wire text kept). A converted record keeps ``t`` and ``session`` and loses
``usage`` and ``response``: they describe the request as it was sent, not the
converted one.

``openai.responses`` records converted to another API are read with their
chains resolved first (:mod:`promptcache.trace.chain`): the other APIs keep no
server-side state, so a chained request becomes the whole request the API
assembled. A chained record whose earlier response is not in the trace, a body
that is not a request body of its API, or one the converter refuses is
reported (``FILE:LINE: ...; line skipped``) and left out, or raises under ``strict``.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable

from promptcache.convert import convert_body
from promptcache.providers.apis import check_api
from promptcache.trace.chain import ChainResolver, UnknownPrefixError
from promptcache.trace.records import EmptyTraceError, SkippedLines, TraceFormatError, TraceRecord
from promptcache.trace.shape import check_body

__all__ = ["TraceConversion", "convert_records"]


@dataclasses.dataclass
class TraceConversion:
    """A converted trace.

    Attributes:
        target: the API of every record.
        records: the records in trace order (those that could not be converted left out).
        converted: how many records were converted (the rest were already of ``target``).
        dropped: what the conversion dropped, label (``reasoning items``, ``cache_control``, ``usage``) ->
            records it was dropped from.
        notes: the converters' notes (bytes changed but nothing essential lost) -> records.
    """

    target: str
    records: list[TraceRecord]
    converted: int = 0
    dropped: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    notes: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)


def convert_records(records: Iterable[TraceRecord], target: str, *, strict: bool = False,
                    on_problem: Callable[[TraceFormatError], None] | None = None,
                    source: str = "<trace>") -> TraceConversion:
    """Convert every record of a trace to ``target`` (see the module docstring).

    Args:
        records: trace records in time order.
        target: ``anthropic.messages``, ``openai.chat`` or ``openai.responses``.
        strict: raise the first problem instead of reporting it and leaving the record out.
        on_problem: where problems are reported (a :class:`~promptcache.trace.records.SkippedLines` counts
            them; default: a ``TraceFormatWarning`` each).
        source: the trace's file name in reports.

    Raises:
        ValueError: an unknown ``target``.
        TraceFormatError: with ``strict``, the first record that cannot be converted.
        EmptyTraceError: no record was left.
    """
    check_api(target)
    skip = SkippedLines.of(on_problem)
    before = skip.count
    chains = ChainResolver()
    out = TraceConversion(target, [])
    for record in records:
        try:
            check_body(record.api, record.body, model_given=True)
            if record.api == target:
                out.records.append(record)
                continue
            read = chains.resolve(record)
            result = convert_body(read.body, read.api, target)
        except (UnknownPrefixError, ValueError) as exc:
            reason = str(exc) if isinstance(exc, UnknownPrefixError) else f"cannot convert to {target}: {exc}"
            problem = TraceFormatError(reason, source=source, line=record.line)
            if strict:
                raise problem from None
            skip(problem)
            continue
        out.converted += 1
        labels = result.dropped_labels() + [key for key in ("usage", "response") if getattr(record, key) is not None]
        out.dropped.update(set(labels))
        out.notes.update(set(result.notes))
        out.records.append(TraceRecord(record.t, target, record.session, result.body, line=record.line))
    if not out.records:
        raise EmptyTraceError(source, skip.count - before)
    return out

