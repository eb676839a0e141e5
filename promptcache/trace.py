"""Request traces: JSON Lines of ``{"t", "api", "session", "body"[, "usage"]}`` records.

Format (``shared/traces/README.md``): one request a line, UTF-8, keys in the
order ``t, api, session, body`` plus the optional ``usage`` (the provider's
usage object from the response). ``t`` is the request start in seconds since
the start of the trace; ``api`` is ``anthropic.messages`` or ``openai.chat``;
``body`` is the exact JSON body the official SDK sent. Key order inside the
body is content (it changes the cached tokens), so records keep it: reading
preserves it (``json`` keeps object order) and writing emits the compact JSON
the SDKs put on the wire (``separators=(",", ":")``, non-ASCII kept), or the
recorded wire text verbatim when the record carries it (``body_json``).

Reading never loses the rest of a file to one bad line: :func:`read_trace`
reports a malformed line with its line number and skips it (``strict=True``
raises instead). :func:`validate_trace` implements the README's validator
list (record keys and order, ``t`` strictly increasing, known body keys in SDK
order, roles, tool ids answered in the next turn, unique tool names, tool
inputs against their schemas, well-formed ``cache_control`` with at most 4
breakpoints) for any API body, not only the sample files.

The body checks themselves live in :mod:`promptcache.trace_checks`; this
module owns the record format.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from promptcache.apis import ANTHROPIC_MESSAGES, APIS, OPENAI_CHAT
from promptcache.trace_checks import TraceIssue, validate_body

__all__ = [
    "ANTHROPIC_MESSAGES", "OPENAI_CHAT", "APIS", "RECORD_KEYS", "Redactor", "TraceClock", "TraceFormatError",
    "TraceFormatWarning", "TraceIssue", "TraceRecord", "append_record", "last_t", "parse_record", "read_trace",
    "validate_body", "validate_record", "validate_trace", "write_trace",
]

RECORD_KEYS = ("t", "api", "session", "body", "usage")
"""Record keys in their required order; ``usage`` is optional."""

Redactor = Callable[[dict[str, Any]], dict[str, Any]]
"""A hook that returns a redacted copy of a request body (it must not add or reorder keys needlessly)."""


class TraceFormatError(ValueError):
    """A trace line that cannot be read as a record.

    Attributes:
        source: the file name (or ``"<records>"``).
        line: the 1-based line number, or ``None``.
        reason: what is wrong, without the location.
    """

    def __init__(self, reason: str, *, source: str = "<trace>", line: int | None = None) -> None:
        self.reason, self.source, self.line = reason, source, line
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}")


class TraceFormatWarning(UserWarning):
    """A malformed trace line was skipped (``read_trace(strict=False)``)."""


@dataclasses.dataclass
class TraceRecord:
    """One request of a trace.

    Attributes:
        t: request start, seconds since the start of the trace (float, >= 0).
        api: ``anthropic.messages`` or ``openai.chat``.
        session: conversation id.
        body: the request body as sent (key order preserved).
        usage: the provider's usage object from the response, if recorded.
        body_json: the body's JSON text exactly as it went on the wire, if
            known (set by :meth:`from_wire`); written verbatim.
        line: the 1-based line this record was read from (not compared).
    """

    t: float
    api: str
    session: str
    body: dict[str, Any]
    usage: dict[str, Any] | None = None
    body_json: str | None = dataclasses.field(default=None, repr=False, compare=False)
    line: int | None = dataclasses.field(default=None, compare=False)

    @classmethod
    def from_wire(cls, t: float, api: str, session: str, content: bytes | str,
                  usage: Mapping[str, Any] | None = None) -> TraceRecord:
        """A record from the request bytes that went on the wire (kept verbatim on write).

        Raises:
            TraceFormatError: ``content`` is not a JSON object.
        """
        text = content.decode("utf-8") if isinstance(content, bytes) else content
        try:
            body = json.loads(text)
        except ValueError as exc:
            raise TraceFormatError(f"request body is not JSON ({exc})") from exc
        if not isinstance(body, dict):
            raise TraceFormatError("request body is not a JSON object")
        return cls(float(t), api, session, body, dict(usage) if usage is not None else None, body_json=text)

    def to_json(self) -> str:
        """The record as one JSON line (without the newline), keys in format order."""
        head = json.dumps({"t": float(self.t), "api": self.api, "session": self.session},
                          ensure_ascii=False, separators=(",", ":"))[:-1]
        body = self.body_json
        if body is None or "\n" in body or "\r" in body:
            body = json.dumps(self.body, ensure_ascii=False, separators=(",", ":"))
        line = f'{head},"body":{body}'
        if self.usage is not None:
            line += ',"usage":' + json.dumps(self.usage, ensure_ascii=False, separators=(",", ":"))
        return line + "}"


def _record_problem(obj: Any, line: int | None, source: str) -> str | None:
    """Why a parsed line is not a usable record (``None`` when it is)."""
    if not isinstance(obj, dict):
        return f"a record must be a JSON object, not {type(obj).__name__}"
    keys = list(obj)
    unknown = [k for k in keys if k not in RECORD_KEYS]
    if unknown:
        return f"unknown record key(s) {unknown}; records have {', '.join(RECORD_KEYS[:4])} and optional usage"
    missing = [k for k in RECORD_KEYS[:4] if k not in obj]
    if missing:
        return f"missing record key(s) {missing}"
    t = obj["t"]
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        return f"t must be a number of seconds >= 0, got {t!r}"
    if obj["api"] not in APIS:
        return f"api must be one of {list(APIS)}, got {obj['api']!r}"
    if not isinstance(obj["session"], str) or not obj["session"]:
        return "session must be a non-empty string"
    if not isinstance(obj["body"], dict):
        return "body must be a JSON object"
    if obj.get("usage") is not None and not isinstance(obj["usage"], dict):
        return "usage must be a JSON object or null"
    return None


def parse_record(text: str, *, line: int | None = None, source: str = "<trace>") -> TraceRecord:
    """Parse one trace line.

    Raises:
        TraceFormatError: not JSON, or not a record (names the line and what to fix).
    """
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise TraceFormatError(f"not JSON ({exc})", source=source, line=line) from exc
    problem = _record_problem(obj, line, source)
    if problem:
        raise TraceFormatError(problem, source=source, line=line)
    return TraceRecord(float(obj["t"]), obj["api"], obj["session"], obj["body"], obj.get("usage"), line=line)


def read_trace(path: str | os.PathLike[str], *, strict: bool = False,
               on_problem: Callable[[TraceFormatError], None] | None = None) -> list[TraceRecord]:
    """Read a JSONL trace; a malformed line is reported with its line number and skipped.

    Args:
        path: the trace file (UTF-8). Blank lines are ignored.
        strict: raise the first :class:`TraceFormatError` instead of skipping.
        on_problem: called with each skipped line's error; by default each
            one is issued as a :class:`TraceFormatWarning`.

    Returns:
        The records in file order (``record.line`` holds the line number).

    Raises:
        TraceFormatError: with ``strict=True``, on the first malformed line.
        OSError: the file cannot be read.
    """
    source = os.path.basename(os.fspath(path))
    records: list[TraceRecord] = []
    with open(path, encoding="utf-8") as fh:
        for number, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                records.append(parse_record(text, line=number, source=source))
            except TraceFormatError as exc:
                if strict:
                    raise
                if on_problem is not None:
                    on_problem(exc)
                else:
                    warnings.warn(f"{exc}; line skipped", TraceFormatWarning, stacklevel=2)
    return records


def _lines_backwards(path: str | os.PathLike[str], block: int = 1 << 16):
    """The lines of a file from the last to the first (bytes, without the newline), reading blocks from the end."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        position, tail = fh.tell(), b""
        while position > 0:
            step = min(block, position)
            position -= step
            fh.seek(position)
            parts = (fh.read(step) + tail).split(b"\n")
            tail = parts[0]
            yield from reversed(parts[1:])
        yield tail


def last_t(path: str | os.PathLike[str]) -> float | None:
    """The ``t`` of the last readable record of a trace file, reading from its end.

    Used to continue a trace: a process that appends to an existing file must
    keep ``t`` increasing (traces README). Blank and malformed trailing lines
    (an interrupted write) are passed over.

    Returns:
        The last record's ``t``, or None when the file is missing or holds no readable record.
    """
    try:
        for raw in _lines_backwards(path):
            if raw.strip():
                try:
                    return parse_record(raw.decode("utf-8")).t
                except (TraceFormatError, UnicodeDecodeError):
                    continue
    except FileNotFoundError:
        return None
    return None


def _redacted(record: TraceRecord, redact: Redactor | None) -> TraceRecord:
    if redact is None:
        return record
    body = redact(json.loads(json.dumps(record.body)))  # the hook gets a copy it may edit
    if not isinstance(body, dict):
        raise TypeError(f"the redaction hook must return a dict body, got {type(body).__name__}")
    return dataclasses.replace(record, body=body, body_json=None)


def write_trace(path: str | os.PathLike[str], records: Iterable[TraceRecord], *,
                redact: Redactor | None = None) -> None:
    """Write ``records`` to ``path`` (replacing it), one line each, ``\\n``-terminated.

    Reading the shared traces and writing them back gives byte-identical files.
    ``redact`` is applied to each body first (the wire text is then re-serialised).
    """
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for record in records:
            fh.write(_redacted(record, redact).to_json() + "\n")


_append_lock = threading.Lock()


def append_record(path: str | os.PathLike[str], record: TraceRecord, *, redact: Redactor | None = None) -> None:
    """Append one record to ``path`` (created if missing) as a single write; thread-safe within a process."""
    line = _redacted(record, redact).to_json() + "\n"
    with _append_lock, open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(line)


class TraceClock:
    """Stamps and appends the records a process adds to one trace file, with ``t`` strictly increasing.

    ``t`` is the request start in seconds since the start of the trace
    (traces README). A new file starts at ``0.0``; a file that already holds
    records continues after its last ``t`` (:func:`last_t`) plus the wall-clock
    time since the file was last written, so a trace appended to across runs
    stays valid and keeps a realistic idle gap for TTL simulations. Every clock
    of this class in the process shares, per file, the last ``t`` written, and
    stamps and appends under one lock, so records of several clients (or
    concurrent requests that finish out of order) still get increasing ``t``.

    Example::

        clock = TraceClock("trace.jsonl")
        start = clock.now()                      # when the request starts
        ...                                      # send it
        clock.append(start, lambda t: TraceRecord.from_wire(t, api, session, wire_bytes))
    """

    _last: dict[str, float] = {}
    _lock = threading.Lock()

    def __init__(self, path: str | os.PathLike[str], clock: Callable[[], float] | None = None) -> None:
        """
        Args:
            path: the trace file.
            clock: monotonic seconds (default :func:`time.monotonic`); a test or an
                offline provider may pass a virtual clock.
        """
        self.path = os.path.abspath(os.fspath(path))
        self.clock = clock or time.monotonic
        self._offset: float | None = None

    def now(self) -> float:
        """The clock reading to pass to :meth:`append` for a request starting now."""
        return self.clock()

    def _stamp(self, start: float) -> float:
        if self._offset is None:
            last = self._last.get(self.path)
            if last is None:
                last = last_t(self.path)
            if last is None:
                self._offset = -start
            else:
                idle = max(time.time() - os.path.getmtime(self.path), 0.0) if os.path.exists(self.path) else 0.0
                self._offset = last + max(idle, 0.001) - start
        t = round(start + self._offset, 3)
        previous = self._last.get(self.path)
        if previous is not None and t <= previous:
            t = round(previous + 0.001, 3)
        self._last[self.path] = t
        return t

    def append(self, start: float, make: Callable[[float], TraceRecord], *, redact: Redactor | None = None) -> float:
        """Append ``make(t)`` to the file, ``t`` stamped from the clock reading ``start``; returns ``t``.

        Raises:
            OSError: the file cannot be written; TypeError: see :func:`append_record`.
        """
        with self._lock:
            t = self._stamp(start)
            append_record(self.path, make(t), redact=redact)
            return t


def validate_record(record: TraceRecord | Mapping[str, Any], *, line: int | None = None) -> list[TraceIssue]:
    """Check one record (a :class:`TraceRecord` or a parsed line, whose key order is checked too).

    Returns:
        The issues found (empty when the record is valid); never raises for bad input.
    """
    if isinstance(record, TraceRecord):
        obj: Mapping[str, Any] = {"t": record.t, "api": record.api, "session": record.session,
                                  "body": record.body, "usage": record.usage}
        line = record.line if line is None else line
    else:
        obj = record
        problem = _record_problem(obj, line, "")
        if problem:
            return [TraceIssue(problem, line=line)]
        keys = list(obj)
        if keys != [k for k in RECORD_KEYS if k in obj]:
            return [TraceIssue(f"record keys out of order {keys}; write t, api, session, body, usage", line=line)]
    if isinstance(obj["t"], int):
        return [TraceIssue(f"t must be a float, got the integer {obj['t']}", line=line)]
    return [dataclasses.replace(issue, line=line) for issue in validate_body(obj["api"], obj["body"])]


def validate_trace(source: str | os.PathLike[str] | Iterable[TraceRecord]) -> list[TraceIssue]:
    """Check a trace file (or records) against the traces README's validator list.

    File level: every line JSON with the record keys in order, ``t`` strictly
    increasing. Record level: see :func:`promptcache.trace_checks.validate_body`.

    Returns:
        All issues, in line order (empty for a valid trace).
    """
    issues: list[TraceIssue] = []
    entries: list[tuple[int | None, Any]] = []
    if isinstance(source, str | os.PathLike):
        with open(source, encoding="utf-8") as fh:
            for number, text in enumerate(fh, 1):
                if not text.strip():
                    continue
                try:
                    entries.append((number, json.loads(text)))
                except ValueError as exc:
                    issues.append(TraceIssue(f"not JSON ({exc})", line=number))
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
    return issues

