"""Appending to a trace while requests are sent: the path checked up front, ``t`` stamped, one line a write.

The client wrappers (:mod:`promptcache.clients.wrappers`) record each request as it
goes on the wire. :class:`TraceClock` stamps the record's ``t`` (seconds
since the start of the trace, strictly increasing, continued across runs
after :func:`last_t`) and appends it with :func:`append_record`; the trace
path is checked when the clock is made (:func:`check_trace_path`), so a
mistyped folder fails at ``promptcache.wrap(...)``, not on every send. The
record format itself is :mod:`promptcache.trace.records`'s.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from promptcache.trace.output_path import check_writable_file
from promptcache.trace.records import Redactor, TraceFormatError, TraceRecord, parse_record, redacted

__all__ = ["TraceClock", "append_record", "check_trace_path", "last_t"]


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


def check_trace_path(path: str | os.PathLike[str]) -> str:
    """Check, before any request is sent, that records can be appended to the trace file ``path``.

    :func:`promptcache.trace.output_path.check_writable_file`, its messages prefixed
    with ``trace 'PATH'``: the folder must exist and be writable, and ``path``
    must not be a folder (when the file exists already, it must be writable).
    The file itself need not exist: the first append creates it. Nothing is
    created here. A leading ``~`` is the home folder
    (:func:`os.path.expanduser`), as a shell would expand it.

    Returns:
        The absolute path, ``~`` expanded.

    Raises:
        FileNotFoundError: the folder does not exist.
        NotADirectoryError: the folder path names a file.
        IsADirectoryError: ``path`` is a folder.
        PermissionError: the folder, or the existing file, is not writable.
    """
    given = os.fspath(path)
    full = os.path.abspath(os.path.expanduser(given))
    try:
        check_writable_file(full)
    except IsADirectoryError:
        raise IsADirectoryError(f"trace {given!r} is a folder; pass a file path inside it, e.g. "
                                f"{os.path.join(given, 'trace.jsonl')!r}") from None
    except OSError as exc:  # FileNotFoundError, NotADirectoryError, PermissionError: the same type, named
        raise type(exc)(f"trace {given!r}: {exc}") from None
    return full


_append_lock = threading.Lock()


def append_record(path: str | os.PathLike[str], record: TraceRecord, *, redact: Redactor | None = None) -> None:
    """Append one record to ``path`` (created if missing) as a single write; thread-safe within a process."""
    line = redacted(record, redact).to_json() + "\n"
    with _append_lock, open(path, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(line)


class TraceClock:
    """Stamps and appends the records a process adds to one trace file, with ``t`` strictly increasing.

    ``t`` is the request start in seconds since the start of the trace
    (traces README). A new file starts at ``0.0``; a file that already holds
    records continues after its last ``t`` (:func:`last_t`) plus the wall-clock
    time since the file was last written (a file removed and made anew, even
    within one process, starts at ``0.0`` again), so a trace appended to across runs
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
            path: the trace file; its folder must exist (:func:`check_trace_path`).
            clock: monotonic seconds (default :func:`time.monotonic`); a test or an
                offline provider may pass a virtual clock.

        Raises:
            OSError: what :func:`check_trace_path` raises (a missing folder, a folder
                given as the file, no write permission), here rather than on the first append.
        """
        self.path = check_trace_path(path)
        self.clock = clock or time.monotonic
        self._offset: float | None = None

    def now(self) -> float:
        """The clock reading to pass to :meth:`append` for a request starting now."""
        return self.clock()

    def _stamp(self, start: float) -> float:
        if self._offset is None:
            if not os.path.exists(self.path):  # a new file, or one removed since this process last wrote it
                self._last.pop(self.path, None)
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
