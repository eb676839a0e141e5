"""``promptcache proxy``: a recording reverse proxy in front of an OpenAI- or Anthropic-compatible API.

An app in any language points its base URL at the proxy; each request is
forwarded upstream with its method, path, query, headers and body unchanged
(only the hop-by-hop headers of RFC 9110 section 7.6.1 and ``host`` are
replaced, and ``x-promptcache-session``, the proxy's own, is taken off). The
response comes back as it came, status and headers included, streamed chunk by
chunk (``httpx.AsyncClient.stream`` / ``aiter_raw`` into a Starlette
``StreamingResponse``: nothing is buffered before the client sees it, and a
compressed body stays compressed).

For a ``POST`` to a cached-prompt endpoint (:mod:`promptcache.recording.endpoints`)
the request goes through :class:`~promptcache.recording.exchange.ExchangeRecorder`
(the guard while the request is upstream, the trace line and statistics just
after the response body has ended; neither holds the response back, and within
a session each request is compared with the one before it: :class:`_Bookkeeping`),
and :class:`ProxyLog` prints one line: cached / written / uncached prompt tokens
and, for an unexpected divergence, the guard's cause.
Headers, API keys included, are never written to the trace. An upstream that
cannot be reached is answered with a 502 in the API's error shape, naming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import warnings
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.to_thread
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from promptcache.errors import DEVELOPER_WARNINGS
from promptcache.providers.apis import ANTHROPIC_MESSAGES
from promptcache.providers.usage import normalize_usage
from promptcache.recording.endpoints import PROVIDER_OF, SESSION_HEADER, api_of
from promptcache.recording.exchange import Exchange, ExchangeRecorder
from promptcache.recording.response_usage import UsageCollector
from promptcache.tokens.chatml import chatml_encoding

__all__ = ["ProxyLog", "create_proxy_app"]


_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                         "transfer-encoding", "upgrade", "host", "content-length", SESSION_HEADER})
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


@dataclasses.dataclass
class ProxyLog:
    """Prints one line per recorded request (``print`` takes a string; default: nothing)."""

    print: Callable[[str], None] = lambda line: None
    counter: Any = dataclasses.field(default_factory=lambda: itertools.count(1))
    noted: set[str] = dataclasses.field(default_factory=set)

    def note(self, message: str) -> None:
        """``   note: MESSAGE``, the first time only."""
        if message not in self.noted:
            self.noted.add(message)
            self.print(f"   note: {message}")

    def unreachable(self, exchange: Exchange, message: str) -> None:
        """``#3 502 openai.chat gpt-4.1-mini: upstream http://... cannot be reached (ConnectError: ...)``."""
        model = exchange.body.get("model", "?") if exchange.body is not None else "?"
        self.print(f"#{next(self.counter)} 502 {exchange.api} {model}: {message}")

    def request(self, exchange: Exchange, status: int, usage: dict[str, Any] | None) -> None:
        """``#3 200 anthropic.messages claude-sonnet-4-6: cached 1,200 written 0 uncached 12`` and, on a
        second line, the guard's cause of an unexpected divergence."""
        model = exchange.body.get("model", "?") if exchange.body is not None else "?"
        line = f"#{next(self.counter)} {status} {exchange.api} {model}"
        if usage is not None:
            try:
                tokens = normalize_usage(usage, PROVIDER_OF[exchange.api])
                line += (f": cached {tokens.cache_read:,} written {tokens.cache_write:,} "
                         f"uncached {tokens.uncached:,}")
            except ValueError as exc:
                line += f": usage not read ({exc})"
        elif 200 <= status < 300:
            line += ": no usage in the response"
        self.print(line)
        if exchange.warning is not None:
            self.print(f"   miss: {exchange.warning}")


def _error(api: str | None, status: int, message: str) -> JSONResponse:
    """An error body in the shape the client's SDK reads (Anthropic's or OpenAI's)."""
    if api == ANTHROPIC_MESSAGES:
        return JSONResponse({"type": "error", "error": {"type": "api_error", "message": message}}, status)
    return JSONResponse({"error": {"message": message, "type": "proxy_error", "param": None, "code": None}}, status)


class _Bookkeeping:
    """The guard and the recording of each request, off the response's path and in order per guard session.

    A request's guard check waits until the previous request of its guard session has been recorded (so it is
    compared with it) and runs in a worker thread while the request is upstream; the recording (guard
    reference, trace line, statistics, live line) runs in the background once the response has ended, so no
    response waits for either. :meth:`drain` waits for what is still running (at shutdown).
    """

    def __init__(self, recorder: ExchangeRecorder, log: ProxyLog) -> None:
        self.recorder, self.log = recorder, log
        self._latest: dict[str | None, asyncio.Future[None]] = {}  # guard session -> its latest recording
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, exchange: Exchange) -> tuple[asyncio.Task[None], asyncio.Future[None]]:
        """The guard's task of ``exchange`` and the future its recording resolves."""
        before = self._latest.get(exchange.guard_key)
        recorded: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._latest[exchange.guard_key] = recorded

        async def guard() -> None:
            if before is not None:
                await asyncio.shield(before)
            await anyio.to_thread.run_sync(self.recorder.check, exchange)
        return self._keep(guard()), recorded

    def finish(self, exchange: Exchange, guarded: asyncio.Task[None], recorded: asyncio.Future[None],
               status: int, collector: UsageCollector | None, unreachable: str | None = None) -> None:
        """Record ``exchange`` in the background once its guard check is done."""
        async def record() -> None:
            try:
                await guarded
                if unreachable is not None:
                    self.log.unreachable(exchange, unreachable)
                    return
                usage = collector.finish() if collector is not None else None
                response = collector.response if collector is not None else None

                def step() -> tuple[list[str], list[warnings.WarningMessage]]:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        return self.recorder.finish(exchange, status, usage, response), caught
                problems, caught = await anyio.to_thread.run_sync(step)
                for problem in problems:
                    self.log.print(f"   not recorded: {problem}")
                for warning in caught:  # e.g. a model the providers data does not list: once per message
                    if not issubclass(warning.category, DEVELOPER_WARNINGS):  # not a socket another task left open
                        self.log.note(str(warning.message))
                self.log.request(exchange, status, usage)
            finally:
                recorded.set_result(None)
                if self._latest.get(exchange.guard_key) is recorded:
                    del self._latest[exchange.guard_key]
        self._keep(record())

    def _keep(self, coroutine: Any) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def create_proxy_app(upstream: str, recorder: ExchangeRecorder, *, log: ProxyLog | None = None,
                     session: str = "default", timeout: float | None = 600.0) -> Any:
    """The proxy as an ASGI app (a Starlette app behind :class:`_QuietAtShutdown`).

    Args:
        upstream: the base URL requests are forwarded to (``https://api.anthropic.com``; a path prefix is
            kept: ``http://host:8000/v1`` + ``/chat/completions``).
        recorder: the guard / trace / statistics step.
        log: where the per-request lines go.
        session: the trace session of requests without an ``x-promptcache-session`` header.
        timeout: seconds to wait for upstream to connect or send the next bytes (None: no limit).
    """
    base = upstream.rstrip("/")
    books = _Bookkeeping(recorder, log or ProxyLog())
    client = httpx.AsyncClient(timeout=httpx.Timeout(timeout), limits=httpx.Limits(max_connections=None),
                               follow_redirects=False, trust_env=False)

    async def forward(request: Request) -> Response:
        path = request.url.path
        api = api_of(request.method, path)
        content = await request.body()
        headers = [(k, v) for k, v in request.headers.raw if k.decode("latin-1").lower() not in _HOP_BY_HOP]
        exchange = None
        if api is not None:
            named = request.headers.get(SESSION_HEADER) or session
            exchange = recorder.open(api, content, session=named, guard_key=f"{named} {api}")
            guarded, recorded = books.start(exchange)
        url = base + path + (f"?{request.url.query}" if request.url.query else "")
        outgoing = client.build_request(request.method, url, headers=headers, content=content)
        try:
            upstream_response = await client.send(outgoing, stream=True)
        except httpx.HTTPError as exc:
            message = f"upstream {base} cannot be reached ({type(exc).__name__}: {exc or 'no detail'})"
            if exchange is not None:
                books.finish(exchange, guarded, recorded, 502, None, unreachable=message)
            return _error(api, 502, f"promptcache proxy: {message}")
        response_headers = [(k, v) for k, v in upstream_response.headers.raw
                            if k.decode("latin-1").lower() not in _HOP_BY_HOP - {"content-length"}]
        collector = UsageCollector(upstream_response.headers.get("content-type", ""),
                                   upstream_response.headers.get("content-encoding", ""))

        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in upstream_response.aiter_raw():
                    if exchange is not None:
                        collector.feed(chunk)
                    yield chunk
            finally:  # read to its end, or the client went away, or shutdown cancelled it: record it first
                if exchange is not None:  # (scheduled, no await: a cancelled task may not get to a second await)
                    books.finish(exchange, guarded, recorded, upstream_response.status_code, collector)
                with anyio.CancelScope(shield=True):
                    await upstream_response.aclose()

        streamed = StreamingResponse(body(), status_code=upstream_response.status_code)
        streamed.raw_headers = [(k.lower(), v) for k, v in response_headers]
        return streamed

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if recorder.guard_mode != "off":  # the guard's tokenizer loads once, not on the first request
            await anyio.to_thread.run_sync(chatml_encoding)
        yield
        await books.drain()
        await client.aclose()

    return _QuietAtShutdown(Starlette(routes=[Route("/{path:path}", forward, methods=_METHODS)], lifespan=lifespan))


class _QuietAtShutdown:
    """The ASGI app, but a request cancelled from outside (uvicorn ending a stream still open when its graceful
    shutdown times out, after Ctrl-C) ends quietly instead of as an "Exception in ASGI application" traceback;
    its trace line is still written (the recording is shielded)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            if scope.get("type") != "http":
                raise

