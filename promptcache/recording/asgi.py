"""An ASGI middleware that records the API calls an app serves (``promptcache serve --trace FILE``).

For each ``POST`` to a cached-prompt endpoint (:mod:`promptcache.recording.endpoints`)
it keeps the request body as it is received and reads the usage from the
response body as it is sent (:class:`~promptcache.recording.response_usage.UsageCollector`),
then hands both to :meth:`ExchangeRecorder.finish <promptcache.recording.exchange.ExchangeRecorder.finish>`
once the last body chunk is out: the same trace line ``wrap()`` and
``promptcache proxy`` write. Nothing is delayed or buffered on the way: the
messages pass through as they come.
"""

from __future__ import annotations

import warnings
from typing import Any

from promptcache.errors import RecordingWarning
from promptcache.recording.endpoints import SESSION_HEADER, api_of
from promptcache.recording.exchange import ExchangeRecorder
from promptcache.recording.response_usage import UsageCollector

__all__ = ["RecordingMiddleware"]


class RecordingMiddleware:
    """Wrap the ASGI ``app``; ``recorder`` records. ``session`` is the trace session of a request without an
    ``x-promptcache-session`` header (:data:`promptcache.recording.endpoints.SESSION_HEADER`)."""

    def __init__(self, app: Any, recorder: ExchangeRecorder, *, session: str = "default") -> None:
        self.app, self.recorder, self.session = app, recorder, session

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        api = api_of(scope.get("method", ""), scope.get("path", "")) if scope["type"] == "http" else None
        if api is None:
            await self.app(scope, receive, send)
            return
        named = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.decode("latin-1").lower() == SESSION_HEADER),
                     self.session)
        body = bytearray()
        state: dict[str, Any] = {"exchange": None, "status": 0, "collector": None, "done": False}

        async def receiving() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False) and state["exchange"] is None:
                    state["exchange"] = self.recorder.start(api, bytes(body), session=named, guard_mode="off")
            return message

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message.get("headers", [])}
                state["status"] = message["status"]
                state["collector"] = UsageCollector(headers.get("content-type", ""),
                                                    headers.get("content-encoding", ""))
            elif message["type"] == "http.response.body" and state["collector"] is not None:
                state["collector"].feed(message.get("body", b""))
                if not message.get("more_body", False):
                    self._finish(state)
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        finally:
            self._finish(state)  # a client that went away mid-stream: recorded with the usage sent so far

    def _finish(self, state: dict[str, Any]) -> None:
        if state["done"] or state["exchange"] is None or state["collector"] is None:
            return
        state["done"] = True
        collector = state["collector"]
        for problem in self.recorder.finish(state["exchange"], state["status"], collector.finish(),
                                            collector.response):
            warnings.warn(RecordingWarning(f"the response was sent but {problem}"), stacklevel=2)
