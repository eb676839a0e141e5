"""The engine-loop thread: the one thread that drives :class:`~local_backend.engine.LocalEngine`.

The engine is not thread-safe, so every engine call (``add_request``,
``abort_request``, ``step``, ``reset_prefix_cache``, ``stats``) runs on this
thread. HTTP handlers talk to it from asyncio:

* :meth:`EngineLoop.submit` queues a request and returns a
  :class:`RequestStream`; each :class:`~local_backend.outputs.StepOutput` of
  that request is handed to the handler's event loop with
  ``call_soon_threadsafe`` and read with ``await stream.next()``;
* :meth:`EngineLoop.abort` (a client went away) and :meth:`EngineLoop.call`
  (run any function on the engine thread, e.g. ``engine.stats``) go through
  the same command queue, so they happen between two engine steps.

The thread sleeps on the command queue while no request is unfinished and
runs ``engine.step()`` back to back otherwise (vLLM's engine-core busy loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from local_backend.engine import LocalEngine
from local_backend.outputs import StepOutput
from local_backend.sampling_params import SamplingParams

logger = logging.getLogger("promptcache.server")

IDLE_WAIT_S = 0.5
"""How long the idle thread blocks on the command queue before checking for shutdown (seconds)."""


class EngineFailure(RuntimeError):
    """``engine.step()`` raised: the requests that were in flight are aborted and get this error."""


class RequestStream:
    """The step outputs of one engine request, readable from the event loop that submitted it."""

    def __init__(self, request_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self.request_id = request_id
        self._loop = loop
        self._queue: asyncio.Queue[StepOutput | BaseException] = asyncio.Queue()
        self.finished = False

    def put(self, item: StepOutput | BaseException) -> None:
        """Called on the engine thread: hand ``item`` to the event loop."""
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed (server shutting down)
            pass

    async def next(self, timeout: float | None = None) -> StepOutput:
        """The next step output.

        Raises:
            asyncio.TimeoutError: nothing arrived within ``timeout`` seconds.
            InvalidRequestError: the engine refused the request (bad prompt or parameters).
            EngineFailure: the engine failed while running it.
        """
        item = await asyncio.wait_for(self._queue.get(), timeout)
        if isinstance(item, BaseException):
            self.finished = True
            raise item
        if item.finished:
            self.finished = True
        return item


class EngineLoop:
    """Runs ``engine`` on its own daemon thread; see the module docstring.

    Args:
        engine: the engine to drive. Nothing else may call it while the loop runs.
    """

    def __init__(self, engine: LocalEngine) -> None:
        self.engine = engine
        self._commands: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._streams: dict[str, RequestStream] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="promptcache-engine", daemon=True)
        self.last_error: str | None = None

    # --- lifecycle ------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to finish its current step and exit."""
        self._stop.set()
        self._commands.put(lambda: None)
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # --- called from the event loop -----------------------------------------------------
    def submit(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams, *,
               cache_salt: str | None = None) -> RequestStream:
        """Queue a request on the engine thread; read its outputs from the returned stream.

        A refusal by the engine (``InvalidRequestError``) arrives as the stream's first item.
        """
        stream = RequestStream(request_id, asyncio.get_running_loop())

        def add() -> None:
            try:
                self.engine.add_request(request_id, prompt_token_ids, params, cache_salt=cache_salt)
            except Exception as exc:  # InvalidRequestError and its kin: refuse this request only
                stream.put(exc)
                return
            self._streams[request_id] = stream

        self._commands.put(add)
        return stream

    def abort(self, request_id: str) -> None:
        """Abort a request (its client went away); its blocks are freed before the next step."""

        def abort() -> None:
            self._streams.pop(request_id, None)
            self.engine.abort_request(request_id)

        self._commands.put(abort)

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on the engine thread, between two steps, and return its result."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to the awaiting coroutine
                future.set_exception(exc)

        self._commands.put(run)
        return await asyncio.wrap_future(future)

    # --- the thread ---------------------------------------------------------------------
    def _drain(self, block: bool) -> None:
        try:
            command = self._commands.get(timeout=IDLE_WAIT_S) if block else self._commands.get_nowait()
        except queue.Empty:
            return
        while True:
            command()
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                return

    def _run(self) -> None:
        engine = self.engine
        while not self._stop.is_set():
            self._drain(block=not engine.has_unfinished_requests())
            if self._stop.is_set() or not engine.has_unfinished_requests():
                continue
            try:
                outputs = engine.step()
            except Exception as exc:  # a model or engine failure: fail the requests in flight, keep serving
                logger.exception("engine step failed")
                self._fail_all(exc)
                continue
            for output in outputs:
                stream = self._streams.get(output.request_id)
                if stream is None:
                    continue
                if output.finished:
                    del self._streams[output.request_id]
                stream.put(output)
        self._fail_all(EngineFailure("the server is shutting down"))

    def _fail_all(self, exc: BaseException) -> None:
        self.last_error = f"{type(exc).__name__}: {exc}"
        failure = exc if isinstance(exc, EngineFailure) else EngineFailure(f"the engine failed: {self.last_error}")
        for request_id, stream in list(self._streams.items()):
            self.engine.abort_request(request_id)
            stream.put(failure)
        self._streams.clear()
