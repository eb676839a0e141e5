"""Thin wrappers around the official SDK clients: send a Prompt, record the trace, keep cache statistics.

::

    import anthropic, promptcache

    client = promptcache.wrap(anthropic.Anthropic(), trace="trace.jsonl", session="sup-001")
    response = client.send(prompt, model="claude-sonnet-4-6", max_tokens=1024)
    client.stats.summary()["total"]["hit_rate"]

:func:`wrap` picks the class for the client (:class:`AnthropicClient`,
:class:`AsyncAnthropicClient`, :class:`OpenAIClient`, :class:`AsyncOpenAIClient`;
construct them directly if you prefer). ``send`` does, per request:

1. renders the prompt (``to_anthropic`` / ``to_openai_chat``);
2. runs the runtime prefix guard (:class:`promptcache.misses.guard.PrefixGuard`, the
   one miss-cause classifier) against the earlier requests of this client:
   an unexpected divergence (a changed system prompt, a rewritten history, a
   volatile value, reordered tools) issues a
   :class:`~promptcache.errors.PrefixStabilityWarning` (``guard="warn"``,
   the default) or raises :class:`~promptcache.errors.PrefixStabilityError`
   before anything is sent (``guard="raise"``); a chunk truncation of the
   prompt's own :class:`~promptcache.prompt.conversation.Conversation` is expected and not reported.
   Only a request the provider accepted becomes a reference for later
   comparisons: a refused (or failed) request does not, so sending it again
   is refused again;
3. sends it through the SDK's ``with_raw_response`` call, which hands back the
   ``httpx`` request that went on the wire: its body bytes are recorded
   verbatim (key order is content; headers and API keys never are) as one
   trace line (``shared/traces/README.md`` format, with the provider's
   ``usage``), after the optional ``redact(body) -> body`` hook;
4. adds the response's usage to :attr:`stats` (a
   :class:`promptcache.providers.usage.UsageStats`: cache read / write / uncached
   tokens, hit rate and cost against the no-cache price, per session);
5. appends the turn and the reply to the prompt's conversation, if it has one
   (``thinking`` blocks of the reply included, verbatim).

``send(..., stream=True)`` returns the SDK's own ``Stream`` / ``AsyncStream``
(guard and request body as above); steps 3 to 5 then happen when the caller
has read the stream to its end (or closes, breaks off or drops it), from the
events the caller read: see :mod:`promptcache.clients.streams`.

The response was paid for once it came back: if a recording step fails, the
response is still returned and a :class:`~promptcache.errors.RecordingWarning`
says what was not recorded. A response that cannot be read (a body that is not
JSON, or JSON without the ``usage`` and ``content`` / ``choices`` every
response of the API carries) is raised as the SDK's own
``APIResponseValidationError`` (an ``anthropic.APIError`` / ``openai.APIError``,
the JSON error chained as its cause), before anything is recorded: the SDKs
would hand back the raw text, a bare list or an empty model without a word.

Every other attribute (``client.messages.create(...)``, ``client.responses.stream(...)``,
``client.models.list()``, ...) is the SDK's own, on a copy of the client
whose HTTP client records the API calls the app already makes
(:mod:`promptcache.recording.http_client`): the exact body bytes, the
provider's usage, the guard (per call site: each line of the app that calls
the SDK is compared with its own earlier requests) and :attr:`stats`.
:meth:`_Wrapper.call_options` sets the session or the guard mode of the calls
inside a ``with`` block. The SDKs are imported by the application, never by
this module at import time.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, OPENAI_CHAT
from promptcache.clients.streams import record_stream
from promptcache.errors import PrefixStabilityError, PrefixStabilityWarning, RecordingWarning
from promptcache.misses.guard import Divergence, PrefixGuard
from promptcache.prompt.model import Prompt
from promptcache.trace.records import Redactor
from promptcache.trace.recorder import TraceClock
from promptcache.providers.usage import UsageStats
from promptcache.recording.exchange import GUARD_MODES, ExchangeRecorder
from promptcache.recording.http_client import CALL_OPTIONS
from promptcache.recording.sdk_copy import recording_copy

__all__ = ["AnthropicClient", "AsyncAnthropicClient", "AsyncOpenAIClient", "OpenAIClient", "wrap"]



class _Wrapper:
    """The provider-independent part: guard, trace recording, statistics.

    The provider mixins supply ``_render(prompt, model, params) -> body`` and
    ``_create() -> the SDK's with_raw_response create method``.
    """

    api = ""
    provider = ""

    def __init__(self, client: Any, *, trace: str | os.PathLike[str] | None = None, session: str = "default",
                 redact: Redactor | None = None, guard: str = "warn", stats: UsageStats | None = None,
                 clock: Callable[[], float] | None = None, guard_max_requests: int = 256) -> None:
        """
        Args:
            client: the SDK client to wrap.
            trace: JSONL file to append one record per request to (None: no trace); created on the first
                request, in a folder that must exist. A leading ``~`` is the home folder
                (:func:`os.path.expanduser`); :attr:`trace` holds the expanded path. An existing file is
                appended to, never replaced (several processes may record into one trace), its ``t``
                continued.
            session: the default trace / statistics session (of :meth:`send` and of the SDK's own methods;
                :meth:`call_options` sets another for a block).
            redact: ``redact(body) -> body`` applied to a copy of each body before it is written.
            guard: ``"warn"`` (default), ``"raise"`` or ``"off"``.
            stats: share a :class:`~promptcache.providers.usage.UsageStats` between clients (default: a new one).
            clock: monotonic seconds for the trace's ``t`` (default :func:`time.monotonic`;
                see :class:`promptcache.trace.recorder.TraceClock`: a trace file that already holds
                records is continued after its last ``t``).
            guard_max_requests: how many sent requests the guard keeps to compare
                with (oldest dropped); each takes ~5 bytes per prompt token
                (~0.25 MB for a 30k-token request, ``bench/guard_speed.py``).

        Raises:
            ValueError: an unknown guard mode, or ``guard_max_requests`` below 1.
            OSError: ``trace`` cannot be appended to: its folder does not exist or is not
                writable, or it names a folder (:func:`promptcache.trace.recorder.check_trace_path`;
                nothing is created, and the check is made here, before any request is sent).
        """
        if guard not in GUARD_MODES:
            raise ValueError(f"guard must be one of {', '.join(GUARD_MODES)}, not {guard!r}")
        if isinstance(guard_max_requests, bool) or not isinstance(guard_max_requests, int) or guard_max_requests < 1:
            raise ValueError(f"guard_max_requests must be a whole number >= 1, not {guard_max_requests!r}")
        self.client, self.session, self.redact, self.guard_mode = client, session, redact, guard
        self.trace = _expand_home(trace)
        self.stats = stats if stats is not None else UsageStats()
        self.guard = PrefixGuard(self.api, max_requests=guard_max_requests)
        self.last_divergence: Divergence | None = None
        self._clock = clock or time.monotonic
        self._trace_clock = TraceClock(trace, self._clock) if trace is not None else None
        self._truncations: dict[int, int] = {}
        self.recorder = ExchangeRecorder(trace=self._trace_clock, guard=self.guard, stats=self.stats,
                                         guard_mode=guard, redact=redact, clock=self._clock)
        self.recording_client = recording_copy(client, self.recorder, session, self.provider)

    def __getattr__(self, name: str) -> Any:
        if name in ("client", "recording_client"):  # not set yet (during __init__)
            raise AttributeError(name)
        return getattr(self.recording_client, name)

    @contextlib.contextmanager
    def call_options(self, *, session: str | None = None, guard: str | None = None) -> Iterator[Any]:
        """Within the ``with`` block, the SDK calls of this thread or task get ``session`` (trace, statistics,
        and the guard's comparisons) and ``guard`` (``"warn"``, ``"raise"``, ``"off"``) instead of the defaults.

        Raises:
            ValueError: an unknown guard mode.
        """
        if guard is not None and guard not in GUARD_MODES:
            raise ValueError(f"guard must be one of {', '.join(GUARD_MODES)}, not {guard!r}")
        given = {key: value for key, value in (("session", session), ("guard", guard)) if value is not None}
        token = CALL_OPTIONS.set({**CALL_OPTIONS.get(), **given})
        try:
            yield self
        finally:
            CALL_OPTIONS.reset(token)

    def _check(self, prompt: Prompt, body: dict[str, Any], session: str) -> None:
        """Classify ``body`` (of ``session``) against the requests sent so far; nothing is remembered here
        (see :meth:`_sent`). The session tells another prompt or model of the app from a broken prefix
        (:mod:`promptcache.misses.guard`, "Sessions")."""
        if self.guard_mode == "off":
            return
        divergence = self.guard.compare(body, self.api, layers=prompt.layer_hints(self.api), record=False,
                                        session=session)
        self.last_divergence = divergence
        conversation = prompt.conversation
        if conversation is not None:
            seen = self._truncations.get(id(conversation))
            if divergence.layer == "history" and seen is not None and conversation.truncations > seen:
                return  # the conversation's own chunk truncation: expected
        if divergence.expected:
            return
        if self.guard_mode == "raise":
            raise PrefixStabilityError(divergence.layer or "prompt", divergence.problem(), divergence.hint,
                                       path=divergence.path or "", divergence=divergence)
        warnings.warn(PrefixStabilityWarning(divergence.summary()), stacklevel=4)

    def _t(self) -> float:
        """The clock reading at a request's start (stamped into the trace's ``t`` when it is written)."""
        return self._clock()

    def _sent(self, prompt: Prompt, body: dict[str, Any], session: str) -> None:
        """The provider accepted ``body``: remember it as a reference for the guard (a refused or failed
        request never is, so retrying a refused request is refused again)."""
        if self.guard_mode == "off":
            return
        self.guard.remember(body, self.api, layers=prompt.layer_hints(self.api), session=session)
        if prompt.conversation is not None:
            self._truncations[id(prompt.conversation)] = prompt.conversation.truncations

    def _after(self, t: float, session: str, model: str, request: Any, response: Any, prompt: Prompt,
               record_reply: bool) -> None:
        """Record a response the provider returned (and billed): trace line, statistics, conversation.

        Each step runs on its own; one that fails (an unwritable trace file, a
        redaction hook that raises, an unknown usage shape, a reply the
        conversation cannot hold) issues a :class:`~promptcache.errors.RecordingWarning`
        and the others still run, so ``send`` always returns the response.
        """
        usage = getattr(response, "usage", None)
        usage_dict = usage.model_dump(exclude_none=True) if usage is not None else None
        exchange = self.recorder.open(self.api, request.content, session=session)  # guarded by send itself
        exchange.t = t
        problems = self.recorder.finish(exchange, 200, usage_dict)  # the trace line and the statistics
        if record_reply and prompt.conversation is not None:
            try:
                prompt.conversation.record(prompt, response)
            except Exception as exc:  # noqa: BLE001 - the paid response must reach the caller whatever fails here
                problems.append(f"appending the turn and the reply to the conversation failed: "
                                f"{type(exc).__name__}: {exc}")
        for problem in problems:
            warnings.warn(RecordingWarning(f"the response was returned but {problem}"), stacklevel=4)

    def _streamed(self, response: Any) -> bool:
        """``response`` is the SDK's ``Stream`` / ``AsyncStream`` (the request had ``stream=True``)."""
        sdk = importlib.import_module(self.provider)
        return isinstance(response, sdk.Stream | sdk.AsyncStream)

    def _record_stream(self, t: float, session: str, model: str, request: Any, stream: Any, prompt: Prompt,
                       record_reply: bool) -> Any:
        """``stream``, recorded by :meth:`_after` when it ends (the reply only when it came whole)."""
        def finish(snapshot: Any, complete: bool) -> None:
            self._after(t, session, model, request, snapshot, prompt, record_reply and complete)

        try:
            return record_stream(stream, self.provider, finish)
        except Exception as exc:  # noqa: BLE001 - an SDK without the accumulators: the stream still reaches the caller
            warnings.warn(RecordingWarning(f"the stream was returned but its usage and reply cannot be collected: "
                                           f"{type(exc).__name__}: {exc}"), stacklevel=4)
            finish(None, False)
            return stream

    def _readable(self, raw: Any, response: Any) -> Any:
        """``response`` when it is a response of this API; else the SDK's ``APIResponseValidationError``.

        ``raw.parse()`` raises ``json.JSONDecodeError`` on a body that is not JSON
        (``application/json`` content type), returns the text for another content
        type, and builds a model with ``None`` fields from JSON that is not a response.
        """
        fields = ("content",) if self.provider == "anthropic" else ("choices",)
        http = raw.http_response
        if isinstance(response, Exception):
            problem = f"the body is not JSON ({response})"
        elif isinstance(response, str | bytes | list | dict) or getattr(response, "usage", None) is None \
                or not all(isinstance(getattr(response, field, None), list) for field in fields):
            what = "message" if self.provider == "anthropic" else "chat completion"
            problem = f"the body is not a {what} (it needs usage and {' and '.join(fields)})"
        else:
            return response
        sdk = importlib.import_module(self.provider)
        error = sdk.APIResponseValidationError(http, http.text, message=f"{problem}: {http.text[:120]!r}")
        if isinstance(response, Exception):
            raise error from response
        raise error

    def _deliver(self, t: float, session: str, model: str, raw: Any, response: Any, prompt: Prompt,
                 record_reply: bool) -> Any:
        """The parsed ``response`` to hand back: a stream wrapped to record when it ends, else the checked
        response, recorded now (trace line, statistics, conversation)."""
        if self._streamed(response):
            return self._record_stream(t, session, model, raw.http_request, response, prompt, record_reply)
        response = self._readable(raw, response)
        self._after(t, session, model, raw.http_request, response, prompt, record_reply)
        return response

    def _prepare(self, prompt: Prompt, model: str, session: str, params: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(prompt, Prompt):
            raise TypeError(f"send() takes a promptcache Prompt (PromptBuilder().build()), not {type(prompt).__name__}")
        body = self._render(prompt, model, params)  # type: ignore[attr-defined]
        self._check(prompt, body, session)
        return body


class _SyncSend(_Wrapper):
    def send(self, prompt: Prompt, *, model: str, session: str | None = None, record_reply: bool = True,
             **params: Any) -> Any:
        """Send ``prompt`` and return the SDK's parsed response (see the module docstring for the steps).

        With ``stream=True`` the SDK's ``Stream`` is returned as the SDK returns it; the trace line,
        statistics and conversation are updated when the stream ends (:mod:`promptcache.clients.streams`).

        Args:
            prompt: a built :class:`~promptcache.prompt.model.Prompt`.
            model: the model id.
            session: trace / statistics session (default: the client's).
            record_reply: append the turn and the reply to the prompt's conversation.
            params: further parameters of the SDK call (``max_tokens``, ``tool_choice``, ...).

        Raises:
            PrefixStabilityError: ``guard="raise"`` and an unexpected divergence (nothing is sent).
            The SDK's errors (``anthropic.APIError``, ``openai.APIError``) unchanged, and its
            ``APIResponseValidationError`` for a response that cannot be read (see the module docstring).
        """
        session = session or self.session
        body = self._prepare(prompt, model, session, params)
        t = self._t()
        raw = self._create()(**body)  # type: ignore[attr-defined]
        self._sent(prompt, body, session)
        try:
            response = raw.parse()
        except ValueError as exc:  # json.JSONDecodeError, or pydantic's ValidationError under strict validation
            self._readable(raw, exc)
        return self._deliver(t, session, model, raw, response, prompt, record_reply)


class _AsyncSend(_Wrapper):
    async def send(self, prompt: Prompt, *, model: str, session: str | None = None, record_reply: bool = True,
                   **params: Any) -> Any:
        """Async :meth:`_SyncSend.send`: the same steps, awaiting the SDK call."""
        session = session or self.session
        body = self._prepare(prompt, model, session, params)
        t = self._t()
        raw = await self._create()(**body)  # type: ignore[attr-defined]
        self._sent(prompt, body, session)
        try:
            response = raw.parse()
            if inspect.isawaitable(response):
                response = await response
        except ValueError as exc:  # see _SyncSend.send
            self._readable(raw, exc)
        return self._deliver(t, session, model, raw, response, prompt, record_reply)


class _AnthropicMixin:
    api, provider = ANTHROPIC_MESSAGES, "anthropic"

    def _render(self, prompt: Prompt, model: str, params: dict[str, Any]) -> dict[str, Any]:
        return prompt.to_anthropic(model, **params)

    def _create(self) -> Callable[..., Any]:
        return self.client.messages.with_raw_response.create  # type: ignore[attr-defined]


class _OpenAIMixin:
    api, provider = OPENAI_CHAT, "openai"

    def _render(self, prompt: Prompt, model: str, params: dict[str, Any]) -> dict[str, Any]:
        return prompt.to_openai_chat(model, **params)

    def _create(self) -> Callable[..., Any]:
        return self.client.chat.completions.with_raw_response.create  # type: ignore[attr-defined]


class AnthropicClient(_AnthropicMixin, _SyncSend):
    """Wraps ``anthropic.Anthropic``; :meth:`send` calls ``messages.create`` (``max_tokens`` defaults to 1024)."""


class AsyncAnthropicClient(_AnthropicMixin, _AsyncSend):
    """Wraps ``anthropic.AsyncAnthropic``; ``await client.send(prompt, model=...)``."""


class OpenAIClient(_OpenAIMixin, _SyncSend):
    """Wraps ``openai.OpenAI``; :meth:`send` calls ``chat.completions.create`` (pass ``prompt_cache_key=``)."""


class AsyncOpenAIClient(_OpenAIMixin, _AsyncSend):
    """Wraps ``openai.AsyncOpenAI``; ``await client.send(prompt, model=...)``."""


def _expand_home(trace: str | os.PathLike[str] | None) -> str | os.PathLike[str] | None:
    """``trace`` with a leading ``~`` expanded, of the type given (a ``Path`` stays a ``Path``)."""
    if trace is None:
        return None
    expanded = os.path.expanduser(os.fspath(trace))
    return Path(expanded) if isinstance(trace, Path) else expanded


_CLASSES = {
    ("anthropic", "Anthropic"): AnthropicClient, ("anthropic", "AsyncAnthropic"): AsyncAnthropicClient,
    ("openai", "OpenAI"): OpenAIClient, ("openai", "AsyncOpenAI"): AsyncOpenAIClient,
}


def wrap(client: Any, **options: Any) -> AnthropicClient | AsyncAnthropicClient | OpenAIClient | AsyncOpenAIClient:
    """Wrap an ``anthropic.Anthropic`` / ``AsyncAnthropic`` or ``openai.OpenAI`` / ``AsyncOpenAI`` client (or subclass).

    ``options`` are those of the wrapper classes: ``trace``, ``session``,
    ``redact``, ``guard``, ``stats``, ``clock``, ``guard_max_requests``.

    Raises:
        TypeError: any other object.
        ValueError / OSError: a bad option; a ``trace`` path whose folder is missing or not writable.
    """
    for cls in type(client).__mro__:
        wrapper = _CLASSES.get((cls.__module__.split(".")[0], cls.__name__))
        if wrapper is not None:
            return wrapper(client, **options)
    raise TypeError(f"wrap() takes an anthropic.Anthropic / AsyncAnthropic or openai.OpenAI / AsyncOpenAI client, "
                    f"not {type(client).__module__}.{type(client).__name__}")
