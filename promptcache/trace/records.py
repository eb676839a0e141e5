"""Request traces: JSON Lines of ``{"t", "api", "session", "body"[, "usage"][, "response"]}`` records.

Format (``shared/traces/README.md``): one request a line, UTF-8, keys in the
order ``t, api, session, body`` plus the optional ``usage`` (the provider's
usage object from the response). ``t`` is the request start in seconds since
the start of the trace; ``api`` is ``anthropic.messages``, ``openai.chat`` or
``openai.responses`` (POST /v1/responses; promptcache's addition to the
README's two, ``docs/traces.md``). An ``openai.responses`` record may also
carry ``response``: ``{"id": "resp_...", "output": [items]}``, the id and output
items of the Response the request got back, so that a later request naming it
in ``previous_response_id`` can be read with its whole chained input
(:mod:`promptcache.trace.chain`);
``body`` is the exact JSON body the official SDK sent. Key order inside the
body is content (it changes the cached tokens), so records keep it: reading
preserves it (``json`` keeps object order) and writing emits the compact JSON
the SDKs put on the wire (``separators=(",", ":")``, non-ASCII kept), or the
recorded wire text verbatim when the record carries it (``body_json``).

Reading never loses the rest of a file to one bad line: :func:`read_trace`
reports a malformed line (not UTF-8, not JSON, not a record) with its line
number and skips it (``strict=True`` raises instead), counting what it skipped
(:class:`SkippedLines`); a trace left with no usable request raises
:class:`EmptyTraceError` where the caller needs requests (``verify``,
``simulate``, ``diff``) instead of reporting zero requests as a result.
:func:`validate_trace` implements the README's validator list (record keys and order, ``t`` strictly increasing, known body keys in SDK
order, roles, tool ids answered in the next turn, unique tool names, tool
inputs against their schemas, well-formed ``cache_control`` with at most 4
breakpoints) for any API body, not only the sample files.

The body checks themselves live in :mod:`promptcache.trace.shape`, and
appending while requests are sent (the ``t`` clock, the path checked up
front) in :mod:`promptcache.trace.recorder`; this module owns the record format.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, APIS, OPENAI_CHAT, OPENAI_RESPONSES, TRACE_APIS

__all__ = [
    "ANTHROPIC_MESSAGES", "OPENAI_CHAT", "OPENAI_RESPONSES", "APIS", "RECORD_KEYS", "EmptyTraceError", "Redactor", "SkippedLines",
    "TraceFormatError", "TraceFormatWarning", "TraceRecord", "parse_record", "read_trace", "redacted", "write_trace",
]

RECORD_KEYS = ("t", "api", "session", "body", "usage", "response")
"""Record keys in their required order; ``usage`` and ``response`` (``openai.responses`` records only) are optional."""

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
        # a problem of the whole file names it itself ("t.jsonl.gz is gzip-compressed; ...")
        super().__init__(reason if line is None and reason.startswith(f"{source} ") else f"{where}: {reason}")


class TraceFormatWarning(UserWarning):
    """A malformed trace line was skipped (``read_trace(strict=False)``)."""


class EmptyTraceError(ValueError):
    """A trace holds no usable request: the file is empty or blank, or every line was skipped as malformed.

    Raised where requests are needed (``read_trace(require_records=True)``,
    :func:`promptcache.verify.report.verify_trace`,
    :func:`promptcache.simulate.simulate_records`): a replay or a simulation
    of nothing is not a result ("0 requests, hit rate 0%, verdict good").

    Attributes:
        source: the trace's name as given (a path, or ``"<records>"``).
        skipped: how many lines (or records) were skipped as malformed.
    """

    def __init__(self, source: str, skipped: int) -> None:
        self.source, self.skipped = source, skipped
        super().__init__(f"no usable requests in {source} ({skipped} line{'' if skipped == 1 else 's'} skipped)")


class SkippedLines:
    """Where the trace readers report malformed lines: counts the lines skipped and passes each problem on.

    Each problem goes to ``on_problem`` when one is given, else it is issued
    as a :class:`TraceFormatWarning` ``"FILE:LINE: reason; line skipped"``.
    Pass one instance to :func:`read_trace` and then to
    :func:`promptcache.simulate.simulate_records` to count the lines and the
    record bodies skipped together (:class:`EmptyTraceError` reports the sum).

    Attributes:
        count: problems passed to :meth:`__call__` so far (lines or records skipped).
    """

    def __init__(self, on_problem: Callable[[TraceFormatError], None] | None = None) -> None:
        self.on_problem = on_problem
        self.count = 0

    @classmethod
    def of(cls, on_problem: Callable[[TraceFormatError], None] | None) -> SkippedLines:
        """``on_problem`` itself when it is a :class:`SkippedLines` (counts accumulate), else a new one around it."""
        return on_problem if isinstance(on_problem, SkippedLines) else cls(on_problem)

    def __call__(self, problem: TraceFormatError) -> None:
        """Report ``problem`` as a skipped line (counted)."""
        self.count += 1
        self.report(problem, "line skipped")

    def skip_many(self, problem: TraceFormatError, lines: int) -> None:
        """Report one ``problem`` that makes ``lines`` lines unusable (a gzip file, one JSON document), counting
        them all as skipped."""
        self.count += lines
        self.report(problem, f"{lines} line{'' if lines == 1 else 's'} skipped")

    def report(self, problem: TraceFormatError, consequence: str) -> None:
        """Report ``problem`` without counting it as skipped (``consequence`` says what was done instead)."""
        if self.on_problem is not None:
            self.on_problem(problem)
        else:
            warnings.warn(f"{problem}; {consequence}", TraceFormatWarning, stacklevel=4)


@dataclasses.dataclass
class TraceRecord:
    """One request of a trace.

    Attributes:
        t: request start, seconds since the start of the trace (float, >= 0).
        api: ``anthropic.messages``, ``openai.chat`` or ``openai.responses``.
        session: conversation id.
        body: the request body as sent (key order preserved).
        usage: the provider's usage object from the response, if recorded.
        body_json: the body's JSON text exactly as it went on the wire, if
            known (set by :meth:`from_wire`); written verbatim.
        line: the 1-based line this record was read from (not compared).
        response: ``openai.responses`` only: ``{"id": "resp_...", "output": [items]}`` of the Response it got,
            if recorded (what a later ``previous_response_id`` chains onto).
    """

    t: float
    api: str
    session: str
    body: dict[str, Any]
    usage: dict[str, Any] | None = None
    body_json: str | None = dataclasses.field(default=None, repr=False, compare=False)
    line: int | None = dataclasses.field(default=None, compare=False)
    response: dict[str, Any] | None = None
    continues: str | None = dataclasses.field(default=None, repr=False, compare=False)
    """Set on a record read through :class:`promptcache.trace.chain.ChainResolver`: the
    ``previous_response_id`` it chained onto (its body then holds the whole input); not written."""

    @classmethod
    def from_wire(cls, t: float, api: str, session: str, content: bytes | str,
                  usage: Mapping[str, Any] | None = None, response: Mapping[str, Any] | None = None) -> TraceRecord:
        """A record from the request bytes that went on the wire (kept verbatim on write); ``response``:
        an ``openai.responses`` reply's ``{"id", "output"}`` (see :class:`TraceRecord`).

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
        return cls(float(t), api, session, body, dict(usage) if usage is not None else None, body_json=text,
                   response=dict(response) if response is not None else None)

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
        if self.response is not None:
            line += ',"response":' + json.dumps(self.response, ensure_ascii=False, separators=(",", ":"))
        return line + "}"


def json_problem(exc: ValueError) -> str:
    """Why a line is not JSON: the decoder's message and the character offset in the line
    (``not JSON (Expecting ',' delimiter at char 37)``; the line number is the trace's, not the decoder's)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg} at char {exc.pos})"
    return f"not JSON ({exc})"


def record_problem(obj: Any, line: int | None, source: str) -> str | None:
    """Why a parsed line is not a usable record (``None`` when it is)."""
    if not isinstance(obj, dict):
        return f"a record must be a JSON object, not {type(obj).__name__}"
    keys = list(obj)
    unknown = [k for k in keys if k not in RECORD_KEYS]
    if unknown:
        return (f"unknown record key(s) {unknown}; records have {', '.join(RECORD_KEYS[:4])} and optional usage "
                f"(and response, for {OPENAI_RESPONSES})")
    missing = [k for k in RECORD_KEYS[:4] if k not in obj]
    if missing:
        return f"missing record key(s) {missing}"
    t = obj["t"]
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        return f"t must be a number of seconds >= 0, got {t!r}"
    if obj["api"] not in TRACE_APIS:
        return f"api must be one of {list(TRACE_APIS)}, got {obj['api']!r}"
    if not isinstance(obj["session"], str) or not obj["session"]:
        return "session must be a non-empty string"
    if not isinstance(obj["body"], dict):
        return "body must be a JSON object"
    if obj.get("usage") is not None and not isinstance(obj["usage"], dict):
        return "usage must be a JSON object or null"
    response = obj.get("response")
    if response is not None:
        if obj["api"] != OPENAI_RESPONSES:
            return f"response is recorded for {OPENAI_RESPONSES} requests only (the Response's id and output)"
        if not isinstance(response, dict) or not isinstance(response.get("id"), str) \
                or not isinstance(response.get("output"), list):
            return 'response must be {"id": "resp_...", "output": [output items]} or null'
    return None


def parse_record(text: str, *, line: int | None = None, source: str = "<trace>") -> TraceRecord:
    """Parse one trace line.

    Raises:
        TraceFormatError: not JSON, or not a record (names the line and what to fix).
    """
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise TraceFormatError(json_problem(exc), source=source, line=line) from exc
    problem = record_problem(obj, line, source)
    if problem:
        raise TraceFormatError(problem, source=source, line=line)
    return TraceRecord(float(obj["t"]), obj["api"], obj["session"], obj["body"], obj.get("usage"), line=line,
                       response=obj.get("response"))


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark some Windows editors write at the start of a file: accepted there, and ignored."""
GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of a gzip file (RFC 1952)."""


def file_problem(data: bytes, source: str) -> TraceFormatError | None:
    """A problem of the whole file that would otherwise be reported on every line: gzip-compressed data, or
    one JSON document over several lines (a pretty-printed request body) instead of JSON Lines."""
    if data.startswith(GZIP_MAGIC):
        return TraceFormatError(f"{source} is gzip-compressed; decompress it first (gunzip)", source=source)
    text = data.removeprefix(BOM)
    first = text.lstrip().split(b"\n", 1)
    if len(first) < 2 or not first[1].strip():
        return None  # one line at most: its own problem says it
    try:
        json.loads(first[0])
        return None  # the first line is JSON: JSON Lines, whatever the other lines hold
    except ValueError:
        pass
    try:
        json.loads(text)
    except ValueError:
        return None
    return TraceFormatError(f"{source} is one JSON document, not JSON Lines: pass it as a request body "
                            "(promptcache diff A.json B.json) or write one request per line", source=source)


def text_lines(data: bytes, source: str) -> Iterator[tuple[int, str | TraceFormatError]]:
    """``(line number, text)`` for each non-blank line of a trace file's bytes, or ``(number, error)`` for a
    line that is not valid UTF-8 (the byte and its offset in the file named, the rest of the file still
    read). A UTF-8 byte order mark at the start of the file is ignored; lines end in ``\n`` (a ``\r`` before
    it is whitespace to JSON, so CRLF files read too)."""
    offset = 0
    for number, raw in enumerate(io.BytesIO(data), 1):
        start = len(BOM) if number == 1 and raw.startswith(BOM) else 0
        try:
            text = raw[start:].decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, TraceFormatError(
                f"not valid UTF-8 (byte 0x{raw[start + exc.start]:02x} at offset {offset + start + exc.start}): "
                "traces are UTF-8 JSON Lines; re-save it as UTF-8", source=source, line=number)
        else:
            if text.strip():
                yield number, text
        offset += len(raw)


def read_trace(path: str | os.PathLike[str], *, strict: bool = False,
               on_problem: Callable[[TraceFormatError], None] | None = None,
               require_records: bool = False) -> list[TraceRecord]:
    """Read a JSONL trace; a malformed line is reported with its line number and skipped.

    A line is malformed when it is not valid UTF-8 (``FILE:LINE: not valid
    UTF-8 (byte 0xff at offset K): ...``, K counted in bytes from the start of
    the file), not JSON (``not JSON (Expecting ',' delimiter at char 37)``, the
    offset in the line), or not a record (see :func:`parse_record`). Lenient
    where editors differ: a UTF-8 BOM at the start of the file is ignored and
    CRLF line ends are read. A gzip file (magic bytes ``1f 8b``) or one JSON
    document over several lines is reported once, naming the file and what to
    do, with every line counted as skipped.

    Args:
        path: the trace file (UTF-8). Blank lines are ignored.
        strict: raise the first :class:`TraceFormatError` instead of skipping.
        on_problem: called with each skipped line's error; by default each
            one is issued as a :class:`TraceFormatWarning`. A
            :class:`SkippedLines` passed here counts them.
        require_records: raise :class:`EmptyTraceError` when no record is left
            (an empty file, or every line skipped).

    Returns:
        The records in file order (``record.line`` holds the line number).

    Raises:
        TraceFormatError: with ``strict=True``, on the first malformed line.
        EmptyTraceError: with ``require_records=True``, when no line is a usable record.
        OSError: the file cannot be read.
    """
    source = os.path.basename(os.fspath(path))
    skip = SkippedLines.of(on_problem)
    skipped_before = skip.count
    records: list[TraceRecord] = []
    with open(path, "rb") as fh:
        data = fh.read()
    whole = file_problem(data, source)
    if whole is not None:
        if strict:
            raise whole
        skip.skip_many(whole, sum(1 for _ in text_lines(data, source)))  # what line by line would skip
        if require_records:
            raise EmptyTraceError(os.fspath(path), skip.count - skipped_before)
        return records
    for number, text in text_lines(data, source):
        try:
            if isinstance(text, TraceFormatError):
                raise text
            records.append(parse_record(text, line=number, source=source))
        except TraceFormatError as exc:
            if strict:
                raise
            skip(exc)
    if require_records and not records:
        raise EmptyTraceError(os.fspath(path), skip.count - skipped_before)
    return records


def redacted(record: TraceRecord, redact: Redactor | None) -> TraceRecord:
    """``record`` with ``redact`` applied to a copy of its body (the wire text is then re-serialised).

    Raises:
        TypeError: the hook returned something other than a dict.
    """
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
            fh.write(redacted(record, redact).to_json() + "\n")
