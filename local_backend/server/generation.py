"""One generation as the HTTP handlers see it: submit, wait for the first token, stream text, clean up.

:class:`Generation` wraps an engine request on the :class:`EngineLoop`:

* :meth:`Generation.start` submits it and waits for its first step output
  (the prefill), so the handler knows the prefix hit (``cached_tokens``, the
  ``x-promptcache-cached-tokens`` header) and any refusal *before* it sends a
  status line; a client that disconnects meanwhile aborts the request;
* :meth:`Generation.deltas` yields text as it becomes final; the text and
  the stop strings are worked out on the engine thread (see
  :mod:`~local_backend.server.engine_loop`), which finishes the engine
  request as soon as a stop string matches, counted as finished;
* whether the client is still there is checked on a clock, every
  :data:`DISCONNECT_POLL_S`, while tokens flow as well as while none come
  (streaming or not, both APIs); a client that went away, or a stream that
  is cancelled, aborts the engine request, freeing its KV blocks, and the
  deltas just end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from starlette.responses import StreamingResponse

from local_backend.errors import InvalidRequestError, PromptTooLongError
from local_backend.sampling_params import SamplingParams
from local_backend.server.detokenizer import IncrementalDetokenizer
from local_backend.server.engine_loop import EngineFailure, StreamOutput
from local_backend.server.errors import APIError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import Receive, Scope, Send

    from local_backend.server.state import ServerState

CACHED_TOKENS_HEADER = "x-promptcache-cached-tokens"
"""Response header with the engine's raw prefix hit (tokens), on every generation endpoint."""

DISCONNECT_POLL_S = 0.25
"""How often a handler asks whether its client is still there while its request runs (seconds)."""


class ClientDisconnected(Exception):
    """The client closed the connection; the engine request was aborted (the app answers 499, unseen)."""


class Generation:
    """An engine request driven from a request handler.

    Args:
        state: the server state (engine loop, tokenizer, metrics).
        request_id: unique id (``chatcmpl-...``, ``msg_...``).
        prompt_token_ids: the prompt.
        params: sampling parameters.
        stop: stop strings.
        cache_salt: isolates this request's cached blocks (vLLM's ``cache_salt``).
        http_request: the Starlette request, to notice a client going away.

    After :meth:`start`: ``prompt_tokens``, ``cached_tokens`` (the engine's
    prefix hit, tokens) and ``ttft`` (seconds); after the deltas are consumed:
    ``output_tokens``, ``finish_reason`` (``"stop"``, ``"length"``) and
    ``stop_string`` (the stop string that ended it, if any); ``disconnected``
    is True when the client left.
    """

    def __init__(self, state: ServerState, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                 *, stop: Sequence[str] = (), cache_salt: str | None = None,
                 http_request: Request | None = None) -> None:
        self.state = state
        self.request_id = request_id
        self.prompt_token_ids = prompt_token_ids
        self.params = params
        self.cache_salt = cache_salt
        self.http_request = http_request
        self.stop = tuple(stop)
        self.prompt_tokens = len(prompt_token_ids)
        self.cached_tokens = 0
        self.output_tokens = 0
        self.ttft: float | None = None
        self.finish_reason: str | None = None
        self.stop_string: str | None = None
        self._first: StreamOutput | None = None
        self._stream = None
        self._done = False
        self._next_client_check = 0.0
        self.disconnected = False
        self._started = time.perf_counter()

    async def start(self) -> None:
        """Submit and wait for the first token.

        Raises:
            APIError: 400 when the engine refuses the prompt or parameters
                (``context_length_exceeded`` for a prompt that does not fit),
                500 when the engine fails, 503 when the engine loop is not running.
            ClientDisconnected: the client left while the prompt was being computed.
        """
        detokenizer = IncrementalDetokenizer(self.state.tokenizer, self.stop)
        self._stream = self.state.loop.submit(self.request_id, self.prompt_token_ids, self.params,
                                              cache_salt=self.cache_salt, detokenizer=detokenizer)
        try:
            first = await self._next()
        except PromptTooLongError as exc:
            self._done = True
            raise APIError(400, str(exc), param="messages", code="context_length_exceeded") from exc
        except InvalidRequestError as exc:
            self._done = True
            raise APIError(400, str(exc)) from exc
        except EngineFailure as exc:
            self._done = True
            raise APIError(500, str(exc)) from exc
        self._first = first
        self.cached_tokens = first.output.num_cached_tokens
        self.prompt_tokens = first.output.prompt_tokens
        ttft = first.output.ttft
        self.ttft = ttft if ttft is not None else time.perf_counter() - self._started
        self.state.metrics.observe_ttft(self.ttft)

    async def deltas(self) -> AsyncIterator[str]:
        """Text deltas until the request finishes (call after :meth:`start`).

        Raises:
            APIError: 500 when the engine fails mid-generation.
        """
        item = self._first
        try:
            while True:
                self.output_tokens += len(item.output.new_token_ids)
                if item.finished:
                    self._done = True
                    self.finish_reason = item.finish_reason
                    self.stop_string = item.stop_string
                    if item.text:
                        yield item.text
                    return
                if item.text:
                    yield item.text
                try:
                    item = await self._next()
                except ClientDisconnected:
                    return
                except EngineFailure as exc:
                    self._done = True
                    raise APIError(500, str(exc)) from exc
        finally:
            if not self._done:  # the consumer stopped early: client gone or stream cancelled
                self.abort()

    async def _next(self) -> StreamOutput:
        """The next output, asking every :data:`DISCONNECT_POLL_S` whether the client is still there.

        Raises:
            ClientDisconnected: the client left (the engine request is aborted).
            CancelledError: the handler was cancelled (the engine request is aborted).
            EngineFailure: the engine failed the request (an output with ``error`` set).
        """
        try:
            while True:
                await self._check_client()
                try:
                    item = await self._stream.next(timeout=DISCONNECT_POLL_S)
                except asyncio.TimeoutError:
                    continue
                if item.output.error:  # the engine failed this request alone
                    self._done = True
                    raise EngineFailure(f"the engine failed this request: {item.output.error}")
                return item
        except asyncio.CancelledError:
            self.abort()
            raise

    async def _check_client(self) -> None:
        """Raise :class:`ClientDisconnected` (aborting the request) if the client has left; asks the server at
        most every :data:`DISCONNECT_POLL_S`, so a request whose tokens flow is checked as often as an idle one."""
        if self.http_request is None:
            return
        now = time.monotonic()
        if now < self._next_client_check:
            return
        self._next_client_check = now + DISCONNECT_POLL_S
        if await self.http_request.is_disconnected():
            self.disconnected = True
            self.abort()
            raise ClientDisconnected(self.request_id)

    @property
    def headers(self) -> dict[str, str]:
        """Response headers known once started: ``x-promptcache-cached-tokens``."""
        return {CACHED_TOKENS_HEADER: str(self.cached_tokens)}

    async def text(self) -> str:
        """Run to the end and return the whole output text.

        Raises:
            ClientDisconnected: the client left meanwhile.
        """
        text = "".join([delta async for delta in self.deltas()])
        if self.disconnected:
            raise ClientDisconnected(self.request_id)
        return text

    def abort(self) -> None:
        """Abort the engine request (idempotent)."""
        if not self._done:
            self._done = True
            self.state.loop.abort(self.request_id)


class GenerationStream(StreamingResponse):
    """Server-Sent Events of one generation that always releases its engine request.

    Starlette cancels a streaming response when the client disconnects; the
    cancellation can land while the chunk generator is suspended at a
    ``yield``, and such a generator only runs its cleanup when it is garbage
    collected. So the response itself aborts the engine request (a no-op once
    it finished) and closes the generator when it ends, however it ends.
    """

    def __init__(self, generation: Generation, chunks: AsyncIterator[str]) -> None:
        super().__init__(chunks, media_type="text/event-stream", headers=generation.headers)
        self.generation = generation
        self._chunks = chunks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.generation.abort()
            await self._chunks.aclose()
