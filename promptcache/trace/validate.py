"""The traces README's validator: a trace file (or records) checked line by line, record by record.

File level: every line JSON with the record keys in order, ``t`` strictly
increasing. Record level: ``t`` a float, then the body at the ``TRACE`` level
of :mod:`promptcache.trace.shape`.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from promptcache.trace.records import (RECORD_KEYS, TraceFormatError, TraceRecord, file_problem, json_problem,
                                       record_problem, text_lines)
from promptcache.trace.shape import TraceIssue, validate_body

__all__ = ["validate_record", "validate_trace"]


def validate_record(record: TraceRecord | Mapping[str, Any], *, line: int | None = None) -> list[TraceIssue]:
    """Check one record (a :class:`TraceRecord` or a parsed line, whose key order is checked too).

    Returns:
        The issues found (empty when the record is valid); never raises for bad input.
    """
    if isinstance(record, TraceRecord):
        obj: Mapping[str, Any] = {"t": record.t, "api": record.api, "session": record.session,
                                  "body": record.body, "usage": record.usage, "response": record.response}
        line = record.line if line is None else line
    else:
        obj = record
        problem = record_problem(obj, line, "")
        if problem:
            return [TraceIssue(problem, line=line)]
        keys = list(obj)
        if keys != [k for k in RECORD_KEYS if k in obj]:
            order = ", ".join(RECORD_KEYS[:5] + (("response",) if "response" in obj else ()))
            return [TraceIssue(f"record keys out of order {keys}; write {order}", line=line)]
    if isinstance(obj["t"], int):
        return [TraceIssue(f"t must be a float, got the integer {obj['t']}", line=line)]
    return [dataclasses.replace(issue, line=line) for issue in validate_body(obj["api"], obj["body"])]


def validate_trace(source: str | os.PathLike[str] | Iterable[TraceRecord]) -> list[TraceIssue]:
    """Check a trace file (or records) against the traces README's validator list.

    File level: every line JSON with the record keys in order, ``t`` strictly
    increasing. Record level: see :func:`promptcache.trace.shape.validate_body`.

    A gzip file or one JSON document over several lines is one issue without a
    line number. An empty or blank file is a valid trace with no records (``[]``;
    the commands, which need requests, refuse it). The reader is lenient as
    :func:`read_trace` is: a BOM at the start and CRLF line ends are accepted.

    Returns:
        All issues, in line order (empty for a valid trace); never raises for bad content.

    Raises:
        OSError: the file does not exist or cannot be read (a wrong path is not bad content).
    """
    issues: list[TraceIssue] = []
    entries: list[tuple[int | None, Any]] = []
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as fh:
            data = fh.read()
        name = os.path.basename(os.fspath(source))
        whole = file_problem(data, name)
        if whole is not None:
            return [TraceIssue(whole.reason)]
        for number, text in text_lines(data, name):
            if isinstance(text, TraceFormatError):
                issues.append(TraceIssue(text.reason, line=number))
                continue
            try:
                entries.append((number, json.loads(text)))
            except ValueError as exc:
                issues.append(TraceIssue(json_problem(exc), line=number))
    else:
        entries = [(r.line, r) for r in source]
    last_t: float | None = None
    for number, obj in entries:
        found = validate_record(obj, line=number)
        issues.extend(found)
        t = obj.t if isinstance(obj, TraceRecord) else obj.get("t") if isinstance(obj, dict) else None
        if isinstance(t, int | float) and not isinstance(t, bool):
            if last_t is not None and t <= last_t:
                issues.append(TraceIssue(f"t={t} is not after the previous request's t={last_t}; "
                                         f"t must be strictly increasing", line=number))
            last_t = t
    # Unreadable lines were found while reading, before the records were checked: one stable sort
    # puts every issue in line order (a record's own issues keep their order).
    issues.sort(key=lambda issue: issue.line if issue.line is not None else -1)
    return issues

