"""The provider's ``usage`` object, read from a response body as its bytes go past.

A body is JSON (the whole response) or a server-sent event stream
(``text/event-stream``). :class:`UsageCollector` takes the bytes chunk by
chunk, as they reach the caller, and keeps only what it needs: for JSON the
body (it is needed whole to parse), for a stream the current event and the
usage seen so far. Where each API puts its usage (the SDKs' type definitions,
anthropic 2.15 / openai 3.57):

- Anthropic Messages: the response's ``usage``; streamed, ``message_start``'s
  ``message.usage``, updated by each ``message_delta``'s ``usage`` (its
  non-null fields, ``output_tokens`` at least: ``MessageDeltaUsage``);
- OpenAI Chat: the response's ``usage``; streamed, the chunk that carries a
  non-null ``usage`` (sent only with ``stream_options={"include_usage": true}``);
- OpenAI Responses: the response's ``usage``; streamed, ``response.completed``
  (or ``response.incomplete`` / ``response.failed``) ``response.usage``.

A Responses API reply's ``{"id", "output"}`` is kept too (:attr:`UsageCollector.response`): the trace
line carries it, so a later request that names it in ``previous_response_id`` can be read with its whole
chained input (:mod:`promptcache.trace.chain`). A compressed body (``content-encoding`` ``gzip`` or
``deflate``, the ones the standard library decodes) is kept whole and decoded at the end; another
encoding (``br``, ``zstd``) gives no usage.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

__all__ = ["UsageCollector"]

_FINAL_RESPONSE_EVENTS = ("response.completed", "response.incomplete", "response.failed")


class UsageCollector:
    """Feed the body's bytes with :meth:`feed`; :meth:`finish` returns the usage dict (None when there is none).

    Args:
        content_type: the response's ``content-type`` header.
        content_encoding: its ``content-encoding`` header (``""`` or ``identity``: none).
    """

    def __init__(self, content_type: str = "", content_encoding: str = "") -> None:
        self.stream = "text/event-stream" in content_type.lower()
        self.encoding = content_encoding.strip().lower()
        self._raw = bytearray()  # a JSON body, or a compressed body of either kind
        self._line = bytearray()  # a stream: the line being read
        self._data: list[bytes] = []  # a stream: the data lines of the event being read
        self.usage: dict[str, Any] | None = None
        self.response: dict[str, Any] | None = None  # a Responses reply: {"id", "output"}
        self.events = 0

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the body (as they came; decoded when the body is not compressed)."""
        if not self.stream or self.encoding not in ("", "identity"):
            self._raw += chunk
            return
        self._lines(chunk)

    def finish(self) -> dict[str, Any] | None:
        """The usage read from the whole body (a stream: from the events read so far)."""
        if self._raw and self.encoding not in ("", "identity"):
            raw, self._raw = bytes(self._raw), bytearray()
            decoded = _decoded(raw, self.encoding)
            if decoded is None:
                return None
            if self.stream:
                self._lines(decoded)
            else:
                self._raw = bytearray(decoded)
        if self.stream:
            self._lines(b"\n\n")  # an event the server did not end with a blank line
            return self.usage
        try:
            body = json.loads(bytes(self._raw))
        except ValueError:
            return None
        if not isinstance(body, dict):
            return None
        self._keep_response(body)
        usage = body.get("usage")
        return dict(usage) if isinstance(usage, dict) else None

    def _keep_response(self, response: dict[str, Any]) -> None:
        if response.get("object") == "response" and isinstance(response.get("id"), str) \
                and isinstance(response.get("output"), list):
            self.response = {"id": response["id"], "output": response["output"]}

    def _lines(self, chunk: bytes) -> None:
        self._line += chunk
        *lines, rest = self._line.split(b"\n")
        self._line = bytearray(rest)
        for line in lines:
            line = line.rstrip(b"\r")
            if not line:
                self._event()
            elif line.startswith(b"data:"):
                self._data.append(line[5:].removeprefix(b" "))

    def _event(self) -> None:
        if not self._data:
            return
        data, self._data = b"\n".join(self._data), []
        self.events += 1
        try:
            event = json.loads(data)
        except ValueError:  # "[DONE]", or a comment-like payload
            return
        if isinstance(event, dict):
            self._take(event)

    def _take(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            usage = event["message"].get("usage")
            if isinstance(usage, dict):
                self.usage = dict(usage)
        elif kind == "message_delta" and isinstance(event.get("usage"), dict):
            self.usage = {**(self.usage or {}), **{k: v for k, v in event["usage"].items() if v is not None}}
        elif kind in _FINAL_RESPONSE_EVENTS and isinstance(event.get("response"), dict):
            self._keep_response(event["response"])
            usage = event["response"].get("usage")
            if isinstance(usage, dict):
                self.usage = dict(usage)
        elif kind is None and isinstance(event.get("usage"), dict):  # a chat completion chunk
            self.usage = dict(event["usage"])


def _decoded(raw: bytes, encoding: str) -> bytes | None:
    """``raw`` decoded (``gzip``, ``x-gzip`` or ``deflate``, zlib-wrapped or raw); None for another encoding or
    a body that does not decode."""
    if encoding not in ("gzip", "x-gzip", "deflate"):
        return None
    for wbits in ((zlib.MAX_WBITS | 32,) if encoding != "deflate" else (zlib.MAX_WBITS, -zlib.MAX_WBITS)):
        try:
            return zlib.decompressobj(wbits).decompress(raw)
        except zlib.error:
            continue
    return None
