"""One recorded request/response exchange: guard before sending, trace line and statistics after.

Shared by the SDK wrappers' HTTP client (:mod:`promptcache.recording.http_client`)
and ``promptcache proxy``: both see the request body bytes before they go
upstream and the response's status and usage after.

::

    recorder = ExchangeRecorder(trace=clock, guard=PrefixGuard(), stats=UsageStats(), guard_mode="warn")
    exchange = recorder.start(api, body_bytes, session="s1")   # may raise PrefixStabilityError
    ...                                                         # forward it, read the response
    recorder.finish(exchange, status=200, usage=usage_dict)

A Responses request that names ``previous_response_id`` is guarded as the API
reads it: the earlier request's input and reply before its own
(:class:`~promptcache.trace.chain.ChainResolver`, fed by the replies recorded
here), and compared with the request whose reply it names; one that chains
onto a reply not seen here is not guarded. The guard
compares a request with the earlier ones of its guard session (a
call site of the app, or a session of the proxy): the first request of a guard
session is never reported, whatever other sessions sent. Only a request the
provider accepted (2xx) becomes a reference for the guard and a trace line; a refused or failed one is neither (as
:mod:`promptcache.clients.wrappers`' ``send``). The guard is not thread-safe,
so its steps run under one lock; the trace clock has its own
(:class:`promptcache.trace.recorder.TraceClock`).
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
import threading
import time
from collections.abc import Callable
from typing import Any

from promptcache.errors import PrefixStabilityError
from promptcache.misses.guard import Divergence, PrefixGuard
from promptcache.misses.rendering import decompose
from promptcache.providers.apis import OPENAI_RESPONSES
from promptcache.providers.profiles import model_profile
from promptcache.providers.usage import UsageStats
from promptcache.recording.endpoints import PROVIDER_OF
from promptcache.trace.chain import ChainResolver, UnknownPrefixError
from promptcache.trace.recorder import TraceClock
from promptcache.trace.records import Redactor, TraceRecord

__all__ = ["GUARD_MODES", "Exchange", "ExchangeRecorder"]

GUARD_MODES = ("warn", "raise", "off")


@dataclasses.dataclass
class Exchange:
    """A request on its way: its API, wire bytes, parsed body, session, the guard's reading and start time.

    ``divergence`` is None when the guard was off or could not read the body; ``warning`` is the
    one-line summary to report when the divergence is unexpected (None otherwise).
    """

    api: str
    content: bytes
    body: dict[str, Any] | None
    session: str
    t: float
    guard_key: str | None = None
    divergence: Divergence | None = None
    warning: str | None = None
    site: tuple[str, int] | None = None  # the app's line that made the call (the SDK wrappers)
    read_as: dict[str, Any] | None = None  # the body as the API reads it (a Responses chain resolved)


class ExchangeRecorder:
    """Guard, trace and statistics for requests seen on the wire.

    Args:
        trace: the :class:`~promptcache.trace.recorder.TraceClock` of the trace file, or None (no trace).
        guard: the :class:`~promptcache.misses.guard.PrefixGuard` (shared with ``send`` in the wrappers).
        stats: where usage is added.
        guard_mode: ``"warn"``, ``"raise"`` or ``"off"``.
        redact: ``redact(body) -> body`` applied to a copy of each body before it is written.
        clock: monotonic seconds, read at each request's start.

    Raises:
        ValueError: an unknown guard mode.
    """

    def __init__(self, *, trace: TraceClock | None, guard: PrefixGuard, stats: UsageStats, guard_mode: str = "warn",
                 redact: Redactor | None = None, clock: Callable[[], float] | None = None) -> None:
        if guard_mode not in GUARD_MODES:
            raise ValueError(f"guard must be one of {', '.join(GUARD_MODES)}, not {guard_mode!r}")
        self.trace, self.guard, self.stats, self.guard_mode = trace, guard, stats, guard_mode
        self.redact = redact
        self.clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._answered: set[str | None] = set()  # guard sessions with an accepted request
        self.chains = ChainResolver(max_responses=1024)  # Responses replies, for previous_response_id
        self._replied: OrderedDict[str, dict[str, Any]] = OrderedDict()  # reply id -> its request as read

    def start(self, api: str, content: bytes, *, session: str, guard_key: str | None = None,
              guard_mode: str | None = None) -> Exchange:
        """Read the request and run the guard on it (against the requests of the same ``guard_key``'s session).

        Args:
            api: the request's API (:func:`promptcache.recording.endpoints.api_of`).
            content: the body bytes as they go on the wire.
            session: the trace session of the request.
            guard_key: the session the guard compares within (default: ``session``).
            guard_mode: this request's mode (default: the recorder's).

        Raises:
            PrefixStabilityError: the mode is ``"raise"`` and the guard found an unexpected divergence.
        """
        exchange = self.open(api, content, session=session, guard_key=guard_key)
        self.check(exchange, guard_mode)
        return exchange

    def open(self, api: str, content: bytes, *, session: str, guard_key: str | None = None) -> Exchange:
        """The :class:`Exchange` of a request (its body parsed, its start time read), not yet guarded."""
        try:
            body = json.loads(content)
        except ValueError:
            body = None
        return Exchange(api, content, body if isinstance(body, dict) else None, session, self.clock(),
                        guard_key=guard_key or session)

    def check(self, exchange: Exchange, guard_mode: str | None = None) -> None:
        """Run the guard on an opened ``exchange`` (sets its ``divergence`` and ``warning``); thread-safe.

        Raises:
            PrefixStabilityError: the mode is ``"raise"`` and the guard found an unexpected divergence.
        """
        mode = guard_mode or self.guard_mode
        if mode == "off" or exchange.body is None:
            return
        with self._lock:
            try:
                exchange.read_as = self.chains.expanded(exchange.body) if exchange.api == OPENAI_RESPONSES \
                    else exchange.body
                parent = self._replied.get(exchange.body.get("previous_response_id"))  # type: ignore[arg-type]
                if parent is not None:  # a chain continues the request it names: that one is the reference
                    divergence = self.guard.classifier.classify(decompose(exchange.read_as, exchange.api),
                                                                decompose(parent, exchange.api), continues=True)
                else:
                    divergence = self.guard.compare(exchange.read_as, exchange.api, record=False,
                                                    session=exchange.guard_key)
            except Exception:  # noqa: BLE001 - a body the guard cannot read: the provider will say what is wrong
                return
        exchange.divergence = divergence
        if divergence.expected or (exchange.guard_key not in self._answered and parent is None):
            return  # the first request of its guard session (call site): nothing of its own to compare with
        if mode == "raise":
            raise PrefixStabilityError(divergence.layer or "prompt", divergence.problem(), divergence.hint,
                                       path=divergence.path or "", divergence=divergence)
        exchange.warning = divergence.summary()

    def finish(self, exchange: Exchange, status: int, usage: dict[str, Any] | None,
               response: dict[str, Any] | None = None) -> list[str]:
        """Record the answered ``exchange``: a 2xx becomes a guard reference, a trace line and statistics.

        ``response``: an ``openai.responses`` reply's ``{"id", "output"}``, kept in the trace line for
        ``previous_response_id`` chains (:attr:`UsageCollector.response
        <promptcache.recording.response_usage.UsageCollector.response>`).

        Returns:
            What could not be recorded (one sentence each; empty when all went well). Nothing
            here raises: the response has already been paid for.
        """
        if not 200 <= status < 300:
            return []
        problems: list[str] = []

        def step(name: str, action: Callable[[], object]) -> None:
            try:
                action()
            except Exception as exc:  # noqa: BLE001 - one failed step must not stop the others
                problems.append(f"{name} failed: {type(exc).__name__}: {exc}")

        if exchange.divergence is not None and exchange.read_as is not None:
            def remember() -> None:
                with self._lock:
                    self.guard.remember(exchange.read_as, exchange.api, session=exchange.guard_key)
                    self._answered.add(exchange.guard_key)
            step("remembering the request for the guard", remember)
        if response is not None and exchange.api == OPENAI_RESPONSES and exchange.body is not None:
            def chain() -> None:
                with self._lock:
                    try:
                        read_as = exchange.read_as or self.chains.expanded(exchange.body)
                    except UnknownPrefixError:  # chained onto a reply not seen here: its input is unknown too
                        return
                    self.chains.remember(response["id"], read_as, list(response.get("output") or []))
                    self._replied[response["id"]] = read_as
                    while len(self._replied) > 256:
                        self._replied.popitem(last=False)
            step("remembering the response for previous_response_id", chain)
        extra = {"response": response} if response is not None and exchange.api == OPENAI_RESPONSES else {}
        if self.trace is not None:
            step("writing the trace line", lambda: self.trace.append(exchange.t, lambda stamp: TraceRecord.from_wire(
                stamp, exchange.api, exchange.session, exchange.content, usage=usage, **extra), redact=self.redact))
        if usage is not None:
            provider = PROVIDER_OF[exchange.api]
            model = exchange.body.get("model") if exchange.body is not None else None
            profile = model_profile(provider, model) if isinstance(model, str) else None
            step("adding the usage to the statistics", lambda: self.stats.add(
                usage, session=exchange.session, profile=profile, provider=provider))
        return problems
