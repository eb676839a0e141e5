"""A copy of an SDK client whose HTTP client records the API calls (``promptcache.wrap``'s passthrough).

The SDKs' public ``copy(http_client=...)`` makes it; the app's client is left
as it was. Anthropic's SDK wraps any error raised in its HTTP client as a
retried ``APIConnectionError``: its ``with_middleware`` (public since anthropic
2.x) adds an innermost middleware that hands the guard's
:class:`~promptcache.errors.PrefixStabilityError` back as it was raised, so a
refused prompt is neither sent nor retried. OpenAI's SDK passes such an error
through unchanged.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

from promptcache.errors import PrefixStabilityError, RecordingWarning
from promptcache.recording.exchange import ExchangeRecorder
from promptcache.recording.http_client import recording_http_client

__all__ = ["recording_copy"]


def recording_copy(client: Any, recorder: ExchangeRecorder, session: str | None, provider: str) -> Any:
    """``client.copy(http_client=...)`` with a recording HTTP client around the client's own
    (:mod:`promptcache.recording.http_client`); ``client`` itself, with a :class:`RecordingWarning`, when
    its HTTP client is neither an ``httpx2`` nor an ``httpx`` one: its calls then pass through unrecorded."""
    inner = getattr(client, "_client", None)
    http = recording_http_client(inner, recorder, session, provider)
    if http is None:
        warnings.warn(RecordingWarning(f"the client's HTTP client is a {type(inner).__module__}."
                                       f"{type(inner).__name__}, not an httpx2 / httpx client: only send() is "
                                       f"recorded, its own methods pass through unrecorded"), stacklevel=4)
        return client
    copy = client.copy(http_client=http)
    if provider == "anthropic" and hasattr(copy, "with_middleware"):
        # anthropic wraps an error raised in its HTTP client as a retried APIConnectionError; the
        # innermost middleware hands the guard's PrefixStabilityError to the caller as it was raised
        copy = copy.with_middleware(_async_unwrap if inspect.iscoroutinefunction(http.send) else _unwrap)
    return copy


def _unwrap(request: Any, call_next: Callable[[Any], Any]) -> Any:
    import anthropic

    try:
        return call_next(request)
    except anthropic.APIConnectionError as exc:
        if isinstance(exc.__cause__, PrefixStabilityError):
            raise exc.__cause__ from None
        raise


async def _async_unwrap(request: Any, call_next: Callable[[Any], Any]) -> Any:
    import anthropic

    try:
        return await call_next(request)
    except anthropic.APIConnectionError as exc:
        if isinstance(exc.__cause__, PrefixStabilityError):
            raise exc.__cause__ from None
        raise
