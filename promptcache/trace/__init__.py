"""Traces: the requests an application sent, one JSON line each (format: ``docs/traces.md``).

- ``records.py``: :class:`TraceRecord`, reading (:func:`read_trace`) and writing a trace, redaction;
- ``shape/``: whether a body is a request body of its API (the one body-shape validator, three levels);
- ``validate.py``: a whole trace checked against the README's validator list;
- ``requests.py``: the usable requests of a trace, as ``simulate``, ``diff`` and ``verify`` read them;
- ``chain.py``: ``previous_response_id`` resolved: a chained Responses request with its whole input;
- ``recorder.py``: appending records while an application runs (:class:`TraceClock`);
- ``output_path.py``: whether a report or trace file can be written before any work starts.
"""

from __future__ import annotations

from promptcache.trace.records import (RECORD_KEYS, EmptyTraceError, Redactor, SkippedLines, TraceFormatError,
                                       TraceFormatWarning, TraceRecord, parse_record, read_trace, redacted,
                                       write_trace)
from promptcache.trace.recorder import TraceClock, append_record, check_trace_path
from promptcache.trace.requests import read_requests, usable_records
from promptcache.trace.shape import Level, MalformedBody, TraceIssue, body_issues, check_body, validate_body
from promptcache.trace.validate import validate_record, validate_trace

__all__ = ["RECORD_KEYS", "EmptyTraceError", "MalformedBody", "Redactor", "SkippedLines", "TraceClock",
           "TraceFormatError", "TraceFormatWarning", "TraceIssue", "TraceRecord", "Level", "append_record", "body_issues",
           "check_body",
           "check_trace_path", "parse_record", "read_requests", "read_trace", "redacted", "usable_records",
           "validate_body", "validate_record", "validate_trace", "write_trace"]
