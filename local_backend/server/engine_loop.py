"""The engine-loop thread: the one thread that drives :class:`~local_backend.engine.LocalEngine`.

The engine is not thread-safe, so every engine call (``add_request``,
``abort_request``, ``finish_request``, ``step``, ``reset_prefix_cache``,
``stats``) runs on this thread. HTTP handlers talk to it from asyncio:

* :meth:`EngineLoop.submit` queues a request and returns a
  :class:`RequestStream`; after each engine step the thread turns the
  request's :class:`~local_backend.outputs.StepOutput` into a
  :class:`StreamOutput` (the new text, stop strings applied by the request's
  :class:`~local_backend.server.detokenizer.IncrementalDetokenizer`) and hands
  it to the handler's event loop with ``call_soon_threadsafe``; the handler
  reads it with ``await stream.next()``. A stop string ends the request right
  there, before the next step, with ``engine.finish_request`` (finished, reason
  ``stop``; vLLM's output processor does the same), so the engine's counters
  hold exactly the tokens the response reports;
* :meth:`EngineLoop.abort` (a client went away) and :meth:`EngineLoop.call`
  (run any function on the engine thread, e.g. ``engine.stats``) go through
  the same command queue, so they happen between two engine steps.

The thread sleeps on the command queue while no request is unfinished and
runs ``engine.step()`` back to back otherwise (vLLM's engine-core busy loop).
A failing command or output hook is logged and fails only its own request; a
failing ``step`` fails the requests in flight. Should the thread still die,
everything waiting on it (streams, queued commands) gets an error, and
:meth:`~EngineLoop.submit` / :meth:`~EngineLoop.call` answer 503 from then on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from local_backend.engine import LocalEngine
from local_backend.outputs import StepOutput
from local_backend.sampling_params import SamplingParams
from local_backend.server.detokenizer import IncrementalDetokenizer
from local_backend.server.errors import APIError

logger = logging.getLogger("promptcache.server")

IDLE_WAIT_S = 0.5
"""How long the idle thread blocks on the command queue before checking for shutdown (seconds)."""

Failure = Callable[[BaseException], None]


class EngineFailure(RuntimeError):
    """The engine failed the request: a ``step`` raised (the requests in flight are aborted) or the loop died."""


@dataclass(frozen=True)
class StreamOutput:
    """One engine step of one request, as its handler reads it.

    Attributes:
        output: the engine's step output (``new_token_ids``, ``num_cached_tokens``, ``error``, ...).
        text: the text that became final with this step (stop strings applied; may be empty).
        finished: True on the request's last item (the engine finished it, or a stop string matched).
        finish_reason: ``"stop"``, ``"length"`` or ``"error"`` when finished, else None.
        stop_string: the stop string that ended the request, if one did.
    """

    output: StepOutput
    text: str
    finished: bool
    finish_reason: str | None = None
    stop_string: str | None = None


class RequestStream:
    """The outputs of one engine request, produced on the engine thread, read from the submitting event loop.

    Args:
        request_id: the engine request id.
        loop: the event loop that reads the stream.
        detokenizer: turns the request's output ids into text and matches its
            stop strings (None: items carry no text).
    """

    def __init__(self, request_id: str, loop: asyncio.AbstractEventLoop,
                 detokenizer: IncrementalDetokenizer | None = None) -> None:
        self.request_id = request_id
        self.detokenizer = detokenizer
        self._loop = loop
        self._queue: asyncio.Queue[StreamOutput | BaseException] = asyncio.Queue()
        self.finished = False

    def process(self, output: StepOutput) -> StreamOutput:
        """Called on the engine thread: detokenize ``output`` and apply the stop strings."""
        detok = self.detokenizer
        if detok is None:
            return StreamOutput(output, "", output.finished, output.finish_reason)
        text = detok.add(output.new_token_ids) if output.new_token_ids else ""
        if detok.stop_string is not None:
            return StreamOutput(output, text, True, "stop", detok.stop_string)
        if output.finished:
            return StreamOutput(output, text + detok.flush(), True, output.finish_reason or "stop")
        return StreamOutput(output, text, False)

    def put(self, item: StreamOutput | BaseException) -> None:
        """Called on the engine thread: hand ``item`` to the event loop."""
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed (server shutting down)
            pass

    async def next(self, timeout: float | None = None) -> StreamOutput:
        """The next output of the request.

        Raises:
            asyncio.TimeoutError: nothing arrived within ``timeout`` seconds.
            InvalidRequestError: the engine refused the request (bad prompt or parameters).
            EngineFailure: the engine failed while running it, or the engine loop died.
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
        self._commands: queue.SimpleQueue[tuple[Callable[[], None], Failure | None]] = queue.SimpleQueue()
        self._streams: dict[str, RequestStream] = {}
        self._stop = threading.Event()
        self._exited = threading.Event()
        self._thread = threading.Thread(target=self._run, name="promptcache-engine", daemon=True)
        self.last_error: str | None = None

    # --- lifecycle ------------------------------------------------------------------
    def start(self) -> None:
        """Start the engine thread (once; the app's lifespan calls it). From then on only it calls the engine.

        Raises:
            RuntimeError: the loop was started before.
        """
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to finish its current step and exit; wait for it up to ``timeout`` seconds.

        Requests still in flight get an :class:`EngineFailure` ("shutting down").
        """
        self._stop.set()
        self._commands.put((lambda: None, None))
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """True from :meth:`start` until the thread exits (stopped, or died: then ``last_error`` says why)."""
        return self._thread.is_alive() and not self._exited.is_set()

    def unavailable(self) -> APIError:
        """The 503 for a request arriving while the loop is not running."""
        reason = self.last_error or "it is not running"
        return APIError(503, f"the engine loop is not running ({reason}); check the server log and restart "
                             "promptcache serve")

    # --- called from the event loop -----------------------------------------------------
    def submit(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams, *,
               cache_salt: str | None = None, detokenizer: IncrementalDetokenizer | None = None) -> RequestStream:
        """Queue a request on the engine thread; read its outputs from the returned stream.

        Args:
            request_id: unique among unfinished requests.
            prompt_token_ids: the prompt.
            params: sampling parameters.
            cache_salt: isolates the request's cached blocks.
            detokenizer: applied on the engine thread to each output (text, stop strings).

        Returns:
            The request's stream. A refusal by the engine (``InvalidRequestError``)
            arrives as its first item; so does an :class:`EngineFailure` if the loop dies first.

        Raises:
            APIError: 503 when the loop is not running.
        """
        if not self.alive:
            raise self.unavailable()
        stream = RequestStream(request_id, asyncio.get_running_loop(), detokenizer)

        def add() -> None:
            try:
                self.engine.add_request(request_id, prompt_token_ids, params, cache_salt=cache_salt)
            except Exception as exc:  # InvalidRequestError and its kin: refuse this request only
                stream.put(exc)
                return
            self._streams[request_id] = stream

        self._put(add, stream.put)
        return stream

    def abort(self, request_id: str) -> None:
        """Abort a request (its client went away); its blocks are freed before the next step."""

        def abort() -> None:
            self._streams.pop(request_id, None)
            self.engine.abort_request(request_id)

        self._put(abort)

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on the engine thread, between two steps, and return its result.

        Raises:
            APIError: 503 when the loop is not running (or dies before running ``fn``).
            Exception: whatever ``fn`` raised.
        """
        if not self.alive:
            raise self.unavailable()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to the awaiting coroutine
                future.set_exception(exc)

        def fail(_: BaseException) -> None:
            if future.set_running_or_notify_cancel():
                future.set_exception(self.unavailable())

        self._put(run, fail)
        return await asyncio.wrap_future(future)

    def _put(self, command: Callable[[], None], fail: Failure | None = None) -> None:
        self._commands.put((command, fail))
        if self._exited.is_set():  # the thread is gone (or going): nobody else will run or fail it
            self._fail_queued()

    # --- the thread ---------------------------------------------------------------------
    def _drain(self, block: bool) -> None:
        """Run the queued commands (waiting up to :data:`IDLE_WAIT_S` for one when ``block``); each is guarded."""
        try:
            command, _ = self._commands.get(timeout=IDLE_WAIT_S) if block else self._commands.get_nowait()
        except queue.Empty:
            return
        while True:
            try:
                command()
            except Exception:  # one bad command must not take the thread (and every request) down
                logger.exception("an engine-loop command failed")
            try:
                command, _ = self._commands.get_nowait()
            except queue.Empty:
                return

    def _run(self) -> None:
        failure = EngineFailure("the server is shutting down")
        try:
            self._serve()
        except BaseException as exc:  # noqa: BLE001 - whatever killed the loop is reported to every waiter
            logger.exception("the engine loop died")
            self.last_error = f"{type(exc).__name__}: {exc}"
            failure = EngineFailure(f"the engine loop died: {self.last_error}")
        finally:
            self._exited.set()
            self._fail_all(failure)
            self._fail_queued()

    def _serve(self) -> None:
        engine = self.engine
        while not self._stop.is_set():
            self._drain(block=not engine.has_unfinished_requests())
            if self._stop.is_set() or not engine.has_unfinished_requests():
                continue
            try:
                outputs = engine.step()
            except Exception as exc:  # a model or engine failure: fail the requests in flight, keep serving
                logger.exception("engine step failed")
                self.last_error = f"{type(exc).__name__}: {exc}"
                self._fail_all(EngineFailure(f"the engine failed: {self.last_error}"))
                continue
            for output in outputs:
                self._deliver(output)

    def _deliver(self, output: StepOutput) -> None:
        stream = self._streams.get(output.request_id)
        if stream is None:
            return
        try:
            item = stream.process(output)
        except Exception as exc:  # detokenizing failed: fail this request only
            logger.exception("processing the output of %s failed", output.request_id)
            del self._streams[output.request_id]
            self._abort_quietly(output.request_id)
            stream.put(EngineFailure(f"the output could not be processed: {type(exc).__name__}: {exc}"))
            return
        if item.finished:
            del self._streams[output.request_id]
            if not output.finished:  # a stop string: finished (not aborted), before another token is computed
                try:
                    self.engine.finish_request(output.request_id, item.stop_string)
                except Exception:  # keep the loop alive; the request's blocks must still be freed
                    logger.exception("finishing %s on its stop string failed", output.request_id)
                    self._abort_quietly(output.request_id)
        stream.put(item)

    def _fail_all(self, failure: EngineFailure) -> None:
        for request_id, stream in list(self._streams.items()):
            self._abort_quietly(request_id)
            stream.put(failure)
        self._streams.clear()

    def _fail_queued(self) -> None:
        """Fail every queued command (called once the thread is gone; thread-safe, idempotent)."""
        failure = EngineFailure(f"the engine loop is not running ({self.last_error or 'stopped'})")
        while True:
            try:
                _, fail = self._commands.get_nowait()
            except queue.Empty:
                return
            if fail is not None:
                fail(failure)

    def _abort_quietly(self, request_id: str) -> None:
        try:
            self.engine.abort_request(request_id)
        except Exception:  # the engine is in trouble already; the request's waiter gets the failure anyway
            logger.exception("aborting %s failed", request_id)
