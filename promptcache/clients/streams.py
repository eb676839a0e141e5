"""Streamed responses of the client wrappers: the SDK's own stream handed back, recorded when it ends.

``client.send(prompt, model=..., stream=True)`` returns the stream the SDK
returned (an ``anthropic.Stream`` / ``AsyncStream`` of message events, an
``openai.Stream`` / ``AsyncStream`` of chat completion chunks): the same
object, iterated, closed and used as a context manager exactly as without the
wrapper. Nothing is read ahead or buffered away from the caller: each event
the caller takes is also folded into a snapshot of the reply with the SDK's
own accumulators (Anthropic: ``accumulate_event`` of ``anthropic.lib.streaming``,
the one behind ``messages.stream()``; OpenAI: ``ChatCompletionStreamState``
of ``openai.lib.streaming.chat``).

The request is recorded once, when the stream ends: read to its end, closed,
broken off (``break``, an error mid-stream) or dropped unread (garbage
collected). Then the wrapper writes the trace line (with the usage seen so
far, none when no event was read), adds that usage to its statistics, and
appends the turn and the reply to the prompt's conversation only when the
reply is complete (Anthropic: ``message_stop`` read; OpenAI: every choice has
its ``finish_reason``). OpenAI sends usage in a stream only when asked:
pass ``stream_options={"include_usage": True}``.

The stream keeps its class's behaviour: its class becomes a subclass of the
SDK's class (same name, ``isinstance(stream, anthropic.Stream)`` still holds)
that observes ``__iter__`` / ``__next__`` / ``close`` (and their async forms).
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

__all__ = ["StreamRecording", "record_stream"]

Finish = Callable[[Any, bool], None]
"""``finish(snapshot, complete)``: ``snapshot`` is the reply collected so far (the SDK's Message /
ChatCompletion model with its ``usage``), None when no event was read; ``complete`` says the reply is whole."""


class StreamRecording:
    """Folds the events of one streamed response into a snapshot of the reply and calls ``finish`` once.

    Args:
        provider: ``"anthropic"`` (message stream events) or ``"openai"`` (chat completion chunks).
        finish: called once, at :meth:`end` (see :data:`Finish`).

    An event the accumulator cannot take (an SDK that changed its event shapes)
    stops the collecting, never the caller's iteration: the request is then
    recorded without usage and reply.
    """

    def __init__(self, provider: str, finish: Finish) -> None:
        self.provider, self._finish = provider, finish
        self.snapshot: Any = None
        self.error: Exception | None = None
        self.ended = False
        self._stopped = False  # anthropic: message_stop read
        if provider == "anthropic":
            from anthropic.lib.streaming._messages import accumulate_event

            json_buffers: dict[int, bytes] = {}
            self._fold = lambda event: accumulate_event(event=event, current_snapshot=self.snapshot,
                                                        json_bufs=json_buffers)
        else:
            from openai.lib.streaming.chat import ChatCompletionStreamState

            state = ChatCompletionStreamState()
            self._fold = lambda chunk: (state.handle_chunk(chunk), state.current_completion_snapshot)[1]

    def event(self, item: Any) -> None:
        """Fold one event the caller read into the snapshot (after an earlier failure: nothing)."""
        if self.error is not None or self.ended:
            return
        try:
            self.snapshot = self._fold(item)
            if getattr(item, "type", None) == "message_stop":
                self._stopped = True
        except Exception as exc:  # noqa: BLE001 - the caller's stream must go on whatever the accumulator thinks
            self.error, self.snapshot = exc, None

    @property
    def complete(self) -> bool:
        """The whole reply was read: Anthropic's ``message_stop``, or a ``finish_reason`` on every OpenAI choice."""
        if self.snapshot is None or self.error is not None:
            return False
        if self.provider == "anthropic":
            return self._stopped
        choices = getattr(self.snapshot, "choices", None) or []
        return bool(choices) and all(getattr(choice, "finish_reason", None) for choice in choices)

    def end(self) -> None:
        """The stream ended (read out, closed, broken off or collected): call ``finish`` (only the first time)."""
        if self.ended:
            return
        self.ended = True
        self._finish(self.snapshot if self.error is None else None, self.complete)


def _sync_observed(cls: type) -> type:
    """A subclass of the SDK's ``Stream`` class ``cls`` reporting each event, the end and ``close`` to the recording.

    (Made as a direct subclass: ``__class__`` assignment needs the same layout, which a mixin base would change.)
    """

    class Observed(cls):  # type: ignore[valid-type, misc]
        _promptcache_recording: StreamRecording

        def __next__(self) -> Any:
            try:
                item = super().__next__()
            except BaseException:
                self._promptcache_recording.end()
                raise
            self._promptcache_recording.event(item)
            return item

        def __iter__(self) -> Iterator[Any]:
            try:
                for item in super().__iter__():
                    self._promptcache_recording.event(item)
                    yield item
            finally:
                self._promptcache_recording.end()

        def close(self) -> None:
            try:
                super().close()
            finally:
                self._promptcache_recording.end()

    return Observed


def _async_observed(cls: type) -> type:
    """As :func:`_sync_observed`, for the SDK's ``AsyncStream`` class ``cls``."""

    class Observed(cls):  # type: ignore[valid-type, misc]
        _promptcache_recording: StreamRecording

        async def __anext__(self) -> Any:
            try:
                item = await super().__anext__()
            except BaseException:
                self._promptcache_recording.end()
                raise
            self._promptcache_recording.event(item)
            return item

        async def __aiter__(self) -> AsyncIterator[Any]:
            try:
                async for item in super().__aiter__():
                    self._promptcache_recording.event(item)
                    yield item
            finally:
                self._promptcache_recording.end()

        async def close(self) -> None:
            try:
                await super().close()
            finally:
                self._promptcache_recording.end()

    return Observed


_OBSERVED: dict[type, type] = {}


def record_stream(stream: Any, provider: str, finish: Finish) -> Any:
    """Make ``stream`` (an SDK ``Stream`` / ``AsyncStream``) report to a new :class:`StreamRecording`; return it.

    The same object is returned, its class swapped for a subclass of its own
    (made once per SDK class) that observes iteration and ``close``. A stream
    dropped without being read or closed is recorded when it is garbage collected.
    """
    cls = type(stream)
    observed = _OBSERVED.get(cls)
    if observed is None:
        observed = _OBSERVED[cls] = (_async_observed if hasattr(cls, "__anext__") else _sync_observed)(cls)
        observed.__name__, observed.__qualname__ = cls.__name__, cls.__qualname__
    recording = StreamRecording(provider, finish)
    stream._promptcache_recording = recording
    stream.__class__ = observed
    weakref.finalize(stream, recording.end)
    return stream
