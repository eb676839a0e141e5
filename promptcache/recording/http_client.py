"""The HTTP client the wrapped SDK clients send through: the app's own client, with each API call recorded.

``promptcache.wrap(client)`` makes ``client.copy(http_client=RecordingHTTPClient(...))``:
the SDK's public way to choose its HTTP client. :class:`RecordingHTTPClient`
is an ``httpx2.Client`` that builds and sends every request with the client
the SDK already had (its transport, proxies, timeouts, default headers, event
hooks: the app's settings), and for a ``POST`` to a cached-prompt endpoint
(:mod:`promptcache.recording.endpoints`):

1. runs the guard on the body bytes before they go out
   (:meth:`ExchangeRecorder.start`): a warning is issued at the application's
   line that made the call (:mod:`promptcache.recording.call_site`), or
   :class:`~promptcache.errors.PrefixStabilityError` is raised and nothing is sent;
2. sends the request unchanged;
3. reads the usage from the response's bytes as the SDK reads them
   (:class:`~promptcache.recording.response_usage.UsageCollector`; a stream
   is observed, never read ahead or buffered), and when the body is done
   (read, closed, broken off) records the exchange: trace line, statistics,
   guard reference (:meth:`ExchangeRecorder.finish`).

Every SDK method that reaches those endpoints is covered the same way:
``create``, ``stream``, ``parse``, ``with_raw_response`` and
``with_streaming_response``, sync and async. The SDK module is never patched and
the app's own client object is left as it was. The SDKs take an ``httpx2`` client
or a legacy ``httpx`` one (FastAPI's ``TestClient`` is one): the recording client
is of the same package as the client it sends with.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import types
import warnings
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from promptcache.errors import PrefixStabilityWarning, RecordingWarning
from promptcache.recording.call_site import call_site
from promptcache.recording.endpoints import PROVIDER_OF, api_of
from promptcache.recording.exchange import Exchange, ExchangeRecorder
from promptcache.recording.response_usage import UsageCollector

__all__ = ["CALL_OPTIONS", "recording_http_client"]

CALL_OPTIONS: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "promptcache_call_options", default=types.MappingProxyType({}))
"""``session`` / ``guard`` for the calls made inside ``wrapped.call_options(...)`` (a context manager)."""


class _Calls:
    """What both clients do around a send: start the exchange, observe the response, finish once."""

    def __init__(self, recorder: ExchangeRecorder, session: str | None, provider: str | None) -> None:
        self.recorder, self.session, self.provider = recorder, session, provider
        self._registry: dict[Any, Any] = {}

    def start(self, request: Any) -> Exchange | None:
        api = api_of(request.method, request.url.path)
        if api is None or (self.provider is not None and PROVIDER_OF[api] != self.provider):
            return None
        site = call_site()
        where = f"{site[0]}:{site[1]}" if site is not None else "sdk"
        options = CALL_OPTIONS.get()
        session = options.get("session") or self.session or "default"
        exchange = self.recorder.start(api, bytes(request.content), session=session, guard_key=f"{session} {where}",
                                       guard_mode=options.get("guard"))
        exchange.site = site
        if exchange.warning is not None:  # every divergence is an event: no once-per-line registry
            _warn_at(site, PrefixStabilityWarning(exchange.warning), PrefixStabilityWarning, stacklevel=4)
        return exchange

    def finish(self, exchange: Exchange, status: int, collector: UsageCollector) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            problems = self.recorder.finish(exchange, status, collector.finish(), collector.response)
        issued = [(warning.message, warning.category) for warning in caught]
        issued += [(RecordingWarning(f"the response was returned but {problem}"), RecordingWarning)
                   for problem in problems]
        for message, category in issued:  # "default" filter: once per message and line
            _warn_at(exchange.site, message, category, self._registry, stacklevel=2)

    def observe(self, exchange: Exchange, response: Any, streamed: bool) -> None:
        """Record ``response`` now (read already) or when its body ends (``streamed``)."""
        collector = UsageCollector(response.headers.get("content-type", ""), response.headers.get("content-encoding", ""))
        if not streamed or response.is_closed:  # read already (httpx2 reads a body given as bytes at once)
            collector.encoding = ""  # httpx2 has decoded a read body
            collector.feed(response.content)
            self.finish(exchange, response.status_code, collector)
            return
        status = response.status_code  # the finaliser below must not hold the response
        done = _Once(lambda: self.finish(exchange, status, collector))
        inner = response.stream
        if hasattr(inner, "__aiter__"):
            response.stream = _classes(type(response))[3](inner, collector, done)
        else:
            response.stream = _classes(type(response))[2](inner, collector, done)
        weakref.finalize(response, done)  # dropped unread


def _warn_at(site: tuple[str, int] | None, message: Warning, category: type[Warning],
             registry: dict[Any, Any] | None = None, *, stacklevel: int) -> None:
    """Issue ``message`` at the application's line that made the call (``site``); without one, ``stacklevel``
    frames above the caller."""
    if site is not None:
        warnings.warn_explicit(message, category, site[0], site[1], registry=registry)
    else:
        warnings.warn(message, category, stacklevel=stacklevel + 1)


class _Once:
    def __init__(self, action: Callable[[], None]) -> None:
        self.action: Callable[[], None] | None = action

    def __call__(self) -> None:
        action, self.action = self.action, None
        if action is not None:
            action()


def _observed(base: type) -> type:
    class ObservedStream(base):  # type: ignore[misc, valid-type]
        def __init__(self, inner: Any, collector: UsageCollector, done: _Once) -> None:
            self.inner, self.collector, self.done = inner, collector, done

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self.inner:
                self.collector.feed(chunk)
                yield chunk

        def close(self) -> None:
            try:
                self.inner.close()
            finally:
                self.done()
    return ObservedStream


def _async_observed(base: type) -> type:
    class AsyncObservedStream(base):  # type: ignore[misc, valid-type]
        def __init__(self, inner: Any, collector: UsageCollector, done: _Once) -> None:
            self.inner, self.collector, self.done = inner, collector, done

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.inner:
                self.collector.feed(chunk)
                yield chunk

        async def aclose(self) -> None:
            try:
                await self.inner.aclose()
            finally:
                self.done()
    return AsyncObservedStream


def _sync_client(base: type, transport: type) -> type:
    class RecordingHTTPClient(base):  # type: ignore[misc, valid-type]
        """An HTTP client that builds and sends with ``inner`` and records the API calls (module docstring);
        ``inner`` is not closed by :meth:`close`."""

        def __init__(self, inner: Any, recorder: ExchangeRecorder, session: str | None = None,
                     provider: str | None = None) -> None:
            super().__init__(trust_env=False, transport=transport())  # sends nothing itself: no pool, no SSL
            self._inner, self._calls = inner, _Calls(recorder, session, provider)

        def build_request(self, *args: Any, **kwargs: Any) -> Any:
            return self._inner.build_request(*args, **kwargs)

        def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            exchange = self._calls.start(request)
            response = self._inner.send(request, stream=stream, **kwargs)
            if exchange is not None:
                self._calls.observe(exchange, response, stream)
            return response
    return RecordingHTTPClient


def _async_client(base: type, transport: type) -> type:
    class AsyncRecordingHTTPClient(base):  # type: ignore[misc, valid-type]
        """The async recording client, around the SDK's async HTTP client."""

        def __init__(self, inner: Any, recorder: ExchangeRecorder, session: str | None = None,
                     provider: str | None = None) -> None:
            super().__init__(trust_env=False, transport=transport())  # sends nothing itself: no pool, no SSL
            self._inner, self._calls = inner, _Calls(recorder, session, provider)

        def build_request(self, *args: Any, **kwargs: Any) -> Any:
            return self._inner.build_request(*args, **kwargs)

        async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            exchange = self._calls.start(request)
            response = await self._inner.send(request, stream=stream, **kwargs)
            if exchange is not None:
                self._calls.observe(exchange, response, stream)
            return response
    return AsyncRecordingHTTPClient


def _package(of: type) -> str | None:
    """``httpx2`` or ``httpx``: the package that defines ``of`` or a class it derives from (the SDKs' own
    default client is a subclass defined in the SDK)."""
    for cls in of.__mro__:
        root = cls.__module__.split(".", 1)[0]
        if root in ("httpx2", "httpx"):
            return root
    return None


@functools.cache
def _classes(of: type) -> tuple[type, type, type, type]:
    """The recording client, async client, stream and async stream classes of the package ``of`` belongs to."""
    module = importlib.import_module(_package(of) or "httpx2")

    class Unused(module.BaseTransport):  # type: ignore[misc, name-defined]
        def handle_request(self, request: Any) -> Any:
            raise RuntimeError("the recording client sends with the SDK client's own HTTP client")

    class AsyncUnused(module.AsyncBaseTransport):  # type: ignore[misc, name-defined]
        async def handle_async_request(self, request: Any) -> Any:
            raise RuntimeError("the recording client sends with the SDK client's own HTTP client")

    return (_sync_client(module.Client, Unused), _async_client(module.AsyncClient, AsyncUnused),
            _observed(module.SyncByteStream), _async_observed(module.AsyncByteStream))


def recording_http_client(inner: Any, recorder: ExchangeRecorder, session: str | None = None,
                          provider: str | None = None) -> Any | None:
    """A recording client around ``inner`` (an ``httpx2`` / ``httpx`` ``Client`` or ``AsyncClient``); None for
    any other object.

    Args:
        inner: the SDK client's own HTTP client (``client._client``).
        recorder: the guard / trace / statistics step.
        session: the trace session of every call (None: ``"default"``); the guard compares each call site
            (``file.py:LINE``) within its session.
        provider: record only the APIs of this provider (``anthropic`` / ``openai``; None: any).
    """
    root = _package(type(inner))
    if root is None:
        return None
    module = importlib.import_module(root)
    sync, async_, _, _ = _classes(type(inner))
    if isinstance(inner, module.AsyncClient):
        return async_(inner, recorder, session, provider)
    if isinstance(inner, module.Client):
        return sync(inner, recorder, session, provider)
    return None
